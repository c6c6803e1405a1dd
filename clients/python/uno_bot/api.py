"""The user API of the SDK: :class:`Bot`, :func:`bot` (one decorated function) and the
per-seat :class:`MatchState`. (The module is ``api``, not ``bot``, so that ``uno_bot.bot`` stays
the decorator.)

Write a bot in one of two ways:

* subclass :class:`Bot` and implement ``decide(request, state) -> int`` (sync or ``async def``);
* decorate one function with :func:`bot`: ``@bot(name="alice")`` over
  ``def decide(request) -> int`` (or ``(request, state)``, sync or async).

Then run it with :meth:`Bot.main` / :meth:`Bot.run` (command line and environment, see
:mod:`uno_bot.cli`), or drive a :class:`~uno_bot.client.BotClient` yourself inside an existing
event loop. This module sits above the client: it imports :mod:`uno_bot.client` and
:mod:`uno_bot.cli` to run a bot, and they know a bot only by its methods.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeAlias

from .cli import main
from .client import ClientConfig, base_hook, run
from .proto import bot_pb2, game_pb2

__all__ = ["Bot", "DecideFn", "DecideResult", "DecisionRequest", "FunctionBot", "MatchState", "bot"]

DecisionRequest: TypeAlias = bot_pb2.DecisionRequest
DecideResult: TypeAlias = int | Awaitable[int | None] | None
"""What ``decide`` may return: an action id, ``None`` (no answer), or an awaitable of either."""


@dataclass(eq=False)
class MatchState:
    """What the client keeps for one seat of one match. Stash your own data in :attr:`data`
    (or set attributes on a subclass via :meth:`Bot.new_state`); it lives until the match ends.
    Never shared between seats, even two seats of one match."""

    match_id: str
    seat: int
    started: bot_pb2.MatchStarted | None = None
    """The MatchStarted message (players, rules, clock); None if the seat was first seen in a
    decision request."""
    data: dict[str, Any] = field(default_factory=dict)
    """Free for the bot's own use."""
    decisions: int = 0
    """Decision requests received for this seat."""
    hand_number: int = 0
    """Hand number of the latest request."""
    last_sequence: int = 0
    """Highest event sequence seen for this seat (sent as the resume cursor on reconnect)."""

    def key(self) -> tuple[str, int]:
        return (self.match_id, self.seat)


class Bot:
    """Base class of a bot. Override :meth:`decide`; the hooks are optional.

    Class attributes (override in the subclass or set on the instance):

    * ``name`` / ``version``: sent in Hello (the command line can override the name); the
      version is the bot's own, and the SDK adds its own name and version and the protocol
      after it (``"0.1.0 uno-bot-python/0.2.0 uno.v1"``);
    * ``threaded``: run a sync ``decide`` in a worker thread (default True), so that a slow or
      stuck decision blocks neither the stream nor other seats, and is answered for at its
      deadline. False runs it on the event loop: only for a ``decide`` that takes microseconds,
      since the client cannot then answer before it returns;
    * ``answer_optional``: call ``decide`` for optional requests too (UNO window, late UNO,
      jump-in); if False they are left unanswered, which the server takes as "no".

    The hooks run on the stream reader, in stream order: keep them quick.
    """

    name: str = "py-bot"
    version: str = "0.1.0"
    threaded: bool = True
    answer_optional: bool = True

    def decide(self, request: bot_pb2.DecisionRequest, state: MatchState) -> DecideResult:
        """Return one of ``request.legal_actions[i].id`` (or ``None`` to ignore an optional
        request). May be ``async def``. ``state`` is the per-(match, seat) state."""
        raise NotImplementedError

    def new_state(self, match_id: str, seat: int) -> MatchState:
        """Create the state of a new (match, seat); override to return a subclass."""
        return MatchState(match_id=match_id, seat=seat)

    def on_match_started(self, state: MatchState) -> Awaitable[None] | None:
        """Called on MatchStarted (``state.started`` is set)."""
        return None

    @base_hook
    def on_events(
        self, state: MatchState, events: Sequence[game_pb2.Event]
    ) -> Awaitable[None] | None:
        """Called with new events of a seat, before ``decide`` (from DecisionRequest.events,
        SeatEvents or MatchEnded.events), oldest first, duplicates (after a resume) removed."""
        return None

    def on_match_ended(
        self, state: MatchState, ended: bot_pb2.MatchEnded
    ) -> Awaitable[None] | None:
        """Called on MatchEnded, just before the state is dropped."""
        return None

    def on_action_result(self, result: bot_pb2.ActionResult, round_trip_s: float) -> None:
        """Called for each ActionResult received: the server rejected one of this bot's
        answers (accepted answers get no reply). ``round_trip_s`` is the time from sending the
        action to receiving the rejection, as this process saw it."""
        return None

    def is_async(self) -> bool:
        """True if :meth:`decide` is a coroutine function."""
        return inspect.iscoroutinefunction(self.decide)

    def run(self, **kwargs: Any) -> None:
        """Run until stopped; keyword arguments are :class:`ClientConfig` fields."""
        run(self, ClientConfig(**kwargs))

    def main(self, argv: Sequence[str] | None = None) -> int:
        """Command-line entry point: ``--addr``, ``--token``, ``--name`` (see :func:`main`)."""
        return main(self, argv)


DecideFn: TypeAlias = Callable[..., DecideResult]


class FunctionBot(Bot):
    """A bot made of one function ``fn(request)`` or ``fn(request, state)`` (see :func:`bot`)."""

    def __init__(
        self,
        fn: DecideFn,
        *,
        name: str | None = None,
        version: str = "0.1.0",
        threaded: bool = True,
        answer_optional: bool = True,
    ) -> None:
        self.fn = fn
        self.name = name or str(getattr(fn, "__name__", "py-bot"))
        self.version = version
        self.threaded = threaded
        self.answer_optional = answer_optional
        params = [
            p
            for p in inspect.signature(fn).parameters.values()
            if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
        ]
        self._wants_state = len(params) >= 2

    def decide(self, request: bot_pb2.DecisionRequest, state: MatchState) -> DecideResult:
        if self._wants_state:
            return self.fn(request, state)
        return self.fn(request)

    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.fn)

    def __call__(
        self, request: bot_pb2.DecisionRequest, state: MatchState | None = None
    ) -> DecideResult:
        """Call the wrapped function directly (handy in unit tests)."""
        st = state or MatchState(match_id=request.match_id, seat=request.seat)
        return self.decide(request, st)


def bot(
    *,
    name: str | None = None,
    version: str = "0.1.0",
    threaded: bool = True,
    answer_optional: bool = True,
) -> Callable[[DecideFn], FunctionBot]:
    """Decorator turning a decide function into a runnable :class:`FunctionBot`::

    @bot(name="alice")
    def decide(request: DecisionRequest) -> int:
        return request.legal_actions[0].id

    if __name__ == "__main__":
        raise SystemExit(decide.main())
    """

    def wrap(fn: DecideFn) -> FunctionBot:
        return FunctionBot(
            fn, name=name, version=version, threaded=threaded, answer_optional=answer_optional
        )

    return wrap
