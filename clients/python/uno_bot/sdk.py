"""The UNO Arena bot SDK: one stream, many matches, your ``decide`` function.

Write a bot in one of two ways:

* subclass :class:`Bot` and implement ``decide(request, state) -> int`` (sync or ``async def``);
* decorate one function with :func:`bot`: ``@bot(name="alice")`` over
  ``def decide(request) -> int`` (or ``(request, state)``, sync or async).

Then run it with :func:`run` / :meth:`Bot.main` (command line and environment), or drive a
:class:`BotClient` yourself inside an existing event loop.

What the client does for you (see ../README.md):

* opens ``BotService.Play`` with ``authorization: Bearer <token>``, sends ``Hello`` and waits for
  ``Welcome``;
* keeps one :class:`MatchState` per (match, seat), created on ``MatchStarted`` (or the seat's
  first request, e.g. after a reconnect) and dropped on ``MatchEnded``;
* runs every ``DecisionRequest`` in its own task, so any number of matches interleave on the one
  stream; a sync ``decide`` runs in a worker thread (``Bot.threaded``) so the stream keeps being
  read while you think;
* honours deadlines: ``decide`` gets ``time_left_ms`` minus a safety margin. If it raises, runs
  out of time, or returns an id that is not legal, the client logs it (with match and seat) and
  answers the request's ``default_action_id``, else its first legal id. Optional requests (UNO
  window, late UNO, jump-in) are never answered by the fallback except with NO_CATCH when that is
  legal; returning ``None`` from ``decide`` leaves any optional request unanswered;
* logs rejected actions (reason and message) and, if the request is still open, answers once
  more with the fallback id;
* reconnects when the stream drops, with capped exponential backoff and jitter, resuming the
  session (``Hello.resume`` with the last event sequence seen per seat);
* stops cleanly on SIGINT / SIGTERM (half-closes the stream, which tells the server it leaves).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import inspect
import logging
import os
import random
import signal
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, TypeAlias, cast

import grpc
import grpc.aio
import structlog
from structlog.typing import FilteringBoundLogger

from uno_server.gen.uno.v1 import bot_pb2, bot_pb2_grpc, errors_pb2, game_pb2

__all__ = [
    "PROTOCOL_VERSION",
    "Bot",
    "BotClient",
    "ClientConfig",
    "DecideResult",
    "FatalStreamError",
    "FunctionBot",
    "MatchState",
    "bot",
    "configure_logging",
    "fallback_action",
    "main",
    "parse_args",
    "run",
]

PROTOCOL_VERSION: Final = 1
"""The protocol version this SDK speaks (``Hello.protocol_version``)."""

DecisionRequest: TypeAlias = bot_pb2.DecisionRequest
DecideResult: TypeAlias = int | Awaitable[int | None] | None
"""What ``decide`` may return: an action id, ``None`` (no answer), or an awaitable of either."""

_log: FilteringBoundLogger = structlog.get_logger("uno_bot")

# Statuses after which reconnecting cannot help: wrong token, wrong name or protocol, or another
# process of the same bot took the session over (reconnecting would fight it forever).
_FATAL_CODES: Final = frozenset(
    {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.ABORTED,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.INVALID_ARGUMENT,
    }
)
_NO_CATCH: Final = 5


class FatalStreamError(RuntimeError):
    """The server ended the stream for a reason a reconnect cannot fix (bad token, bot name
    mismatch, unsupported protocol, session replaced by another process)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"{code.name}: {details}")
        self.code = code
        self.details = details


@dataclass(eq=False)
class MatchState:
    """What the client keeps for one seat of one match. Stash your own data in :attr:`data`
    (or set attributes on a subclass via :meth:`Bot.new_state`); it lives until the match ends."""

    match_id: str
    seat: int
    started: bot_pb2.MatchStarted | None = None
    """The MatchStarted message (players, rules, clock); None if the seat was first seen in a
    decision request (e.g. after a restart of the bot)."""
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


def fallback_action(request: bot_pb2.DecisionRequest) -> int | None:
    """The answer the client sends when ``decide`` fails: ``default_action_id`` if the server set
    one (required requests), else NO_CATCH if legal, else for a required request its first legal
    id; ``None`` (stay silent) for other optional requests."""
    if request.HasField("default_action_id"):
        return request.default_action_id
    ids = [a.id for a in request.legal_actions]
    if _NO_CATCH in ids:
        return _NO_CATCH
    if request.required and ids:
        return ids[0]
    return None


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value


class Bot:
    """Base class of a bot. Override :meth:`decide`; the hooks are optional.

    Class attributes (override in the subclass or set on the instance):

    * ``name`` / ``version``: sent in Hello (the command line can override the name);
    * ``threaded``: run a sync ``decide`` in a worker thread (default True) so a slow decision
      neither blocks the stream nor other matches and can be abandoned at its deadline. Set
      False for fast pure-Python bots to run inline on the event loop. Decisions of different
      seats may then still run concurrently in several threads;
    * ``answer_optional``: call ``decide`` for optional requests too (UNO window, late UNO,
      jump-in); if False they are left unanswered, which the server takes as "no".
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
        """Called for each ActionResult. ``round_trip_s`` is the time from sending the action
        to receiving its result, as this process saw it (network plus server time, no
        thinking); compare with ``result.response_ms``, the server's view including thinking."""
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


@dataclass
class ClientConfig:
    """How to reach the server. Durations in seconds unless the name says ``_ms``."""

    addr: str = "127.0.0.1:50051"
    token: str = ""
    name: str | None = None
    """Hello.bot_name; None takes ``Bot.name``."""
    version: str | None = None
    """Hello.bot_version; None takes ``Bot.version``."""
    tls: bool = False
    """Use TLS with the system roots (or ``ca_file``)."""
    ca_file: str | None = None
    """PEM file of the CA that signed the server certificate; implies TLS."""
    backoff_initial: float = 0.5
    backoff_max: float = 30.0
    safety_margin_ms: int = 50
    """Time kept back from ``time_left_ms`` for the answer to travel."""
    max_concurrent_matches: int = 0
    push_events: bool = False
    stop_grace: float = 2.0
    """How long to wait for the server to end the stream after we half-close it on stop."""
    max_reconnects: int | None = None
    """Give up after this many consecutive failed attempts; None retries forever."""


class BotClient:
    """Runs one :class:`Bot` on one Play stream, reconnecting until :meth:`stop`."""

    def __init__(self, bot: Bot, config: ClientConfig) -> None:
        self.bot = bot
        self.config = config
        self.states: dict[tuple[str, int], MatchState] = {}
        """Live per-(match, seat) states."""
        self.session_id = ""
        self.connections = 0
        """Streams that reached Welcome."""
        self._stop = asyncio.Event()
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._pending: dict[str, tuple[bot_pb2.DecisionRequest, int, bool]] = {}
        self._sent_at: dict[str, float] = {}
        self._outbox: asyncio.Queue[bot_pb2.PlayRequest | None] | None = None
        self._rng = random.Random()

    @property
    def name(self) -> str:
        return self.config.name if self.config.name is not None else self.bot.name

    def stop(self) -> None:
        """Ask the client to leave: half-close the stream and return from :meth:`run`."""
        self._stop.set()

    # ------------------------------------------------------------------ connection loop

    def _channel(self) -> grpc.aio.Channel:
        options = [
            ("grpc.keepalive_time_ms", 20_000),
            ("grpc.keepalive_timeout_ms", 10_000),
            ("grpc.keepalive_permit_without_calls", 1),
        ]
        cfg = self.config
        if cfg.tls or cfg.ca_file:
            root = None
            if cfg.ca_file:
                with open(cfg.ca_file, "rb") as f:
                    root = f.read()
            creds = grpc.ssl_channel_credentials(root_certificates=root)
            return grpc.aio.secure_channel(cfg.addr, creds, options=options)
        return grpc.aio.insecure_channel(cfg.addr, options=options)

    def backoff_delay(self, attempt: int) -> float:
        """Delay before reconnect attempt ``attempt`` (1-based): exponential, capped, jittered
        into the upper half so that many bots do not reconnect in lock step."""
        cfg = self.config
        ceiling = min(cfg.backoff_max, cfg.backoff_initial * 2 ** min(attempt - 1, 30))
        return float(ceiling / 2 + self._rng.random() * ceiling / 2)

    async def run(self) -> None:
        """Connect and play until :meth:`stop`; raises :class:`FatalStreamError` if the server
        refuses the bot (bad token, ...)."""
        attempt = 0
        async with self._channel() as channel:
            stub = bot_pb2_grpc.BotServiceStub(channel)
            while not self._stop.is_set():
                welcomed = False
                try:
                    welcomed = await self._session(stub)
                    reason = "stream ended by the server"
                except grpc.aio.AioRpcError as err:
                    code = err.code()
                    details = err.details() or ""
                    if code in _FATAL_CODES:
                        _log.error("stream refused", code=code.name, details=details)
                        raise FatalStreamError(code, details) from None
                    reason = f"{code.name}: {details}"
                finally:
                    self._drop_session()
                if self._stop.is_set():
                    break
                attempt = 1 if welcomed else attempt + 1
                if self.config.max_reconnects is not None and attempt > self.config.max_reconnects:
                    raise ConnectionError(f"giving up after {attempt - 1} attempts: {reason}")
                delay = self.backoff_delay(attempt)
                _log.warning("disconnected", reason=reason, retry_in_s=round(delay, 3))
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._stop.wait(), delay)
        _log.info("stopped", bot=self.name)

    def _hello(self) -> bot_pb2.PlayRequest:
        cfg = self.config
        hello = bot_pb2.Hello(
            bot_name=self.name,
            bot_version=cfg.version if cfg.version is not None else self.bot.version,
            protocol_version=PROTOCOL_VERSION,
            max_concurrent_matches=cfg.max_concurrent_matches,
            push_events=cfg.push_events,
        )
        if self.session_id:
            hello.resume.session_id = self.session_id
            for st in self.states.values():
                hello.resume.cursors.add(
                    match_id=st.match_id, seat=st.seat, last_sequence=st.last_sequence
                )
        return bot_pb2.PlayRequest(hello=hello)

    async def _session(self, stub: Any) -> bool:
        """One stream. Returns True if it got a Welcome; raises AioRpcError if it failed."""
        outbox: asyncio.Queue[bot_pb2.PlayRequest | None] = asyncio.Queue()
        self._outbox = outbox
        outbox.put_nowait(self._hello())

        async def requests() -> AsyncIterator[bot_pb2.PlayRequest]:
            while (msg := await outbox.get()) is not None:
                yield msg

        metadata = (("authorization", f"Bearer {self.config.token}"),)
        call = stub.Play(requests(), metadata=metadata)
        welcomed = asyncio.Event()
        reader = asyncio.create_task(self._read(call, welcomed))
        stopper = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if not reader.done():
                # leaving: half-close so the server knows, then give it a moment to end the call
                outbox.put_nowait(None)
                with contextlib.suppress(TimeoutError, grpc.aio.AioRpcError):
                    await asyncio.wait_for(asyncio.shield(reader), self.config.stop_grace)
                call.cancel()
                return welcomed.is_set()
            reader.result()  # re-raises AioRpcError
            return welcomed.is_set()
        finally:
            stopper.cancel()
            if not reader.done():
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                    await reader

    def _drop_session(self) -> None:
        for task in self._tasks.values():
            task.cancel()
        self._tasks.clear()
        self._pending.clear()
        self._sent_at.clear()
        if self._outbox is not None:
            self._outbox.put_nowait(None)
        self._outbox = None

    def _send(self, msg: bot_pb2.PlayRequest) -> None:
        if self._outbox is not None:
            self._outbox.put_nowait(msg)

    # ------------------------------------------------------------------ incoming messages

    async def _read(self, call: Any, welcomed: asyncio.Event) -> None:
        async for resp in call:
            kind = resp.WhichOneof("kind")
            if kind == "welcome":
                self._on_welcome(resp.welcome)
                welcomed.set()
            elif kind == "decision_request":
                req = resp.decision_request
                prev = self._tasks.pop(req.request_id, None)
                if prev is not None:  # re-sent while we were still thinking: restart
                    prev.cancel()
                task = asyncio.create_task(
                    self._handle_decision(req), name=_task_name(req.match_id, req.seat)
                )
                self._tasks[req.request_id] = task
                task.add_done_callback(functools.partial(self._task_done, req.request_id))
            elif kind == "action_result":
                self._on_action_result(resp.action_result)
            elif kind == "request_closed":
                self._on_request_closed(resp.request_closed)
            elif kind == "match_started":
                await self._on_match_started(resp.match_started)
            elif kind == "match_ended":
                await self._on_match_ended(resp.match_ended)
            elif kind == "seat_events":
                ev = resp.seat_events
                await self._deliver_events(self._state(ev.match_id, ev.seat), ev.events)
            elif kind == "error":
                err = resp.error
                _log.log(
                    logging.ERROR if err.fatal else logging.WARNING,
                    "stream error",
                    code=err.code,
                    reason=_reason_name(err.reason),
                    message=err.message,
                    fatal=err.fatal,
                )
            # pong and kinds unknown to this SDK are ignored

    def _task_done(self, request_id: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(request_id) is task:
            del self._tasks[request_id]

    def _on_welcome(self, welcome: bot_pb2.Welcome) -> None:
        self.session_id = welcome.session_id
        self.connections += 1
        held = {(s.match_id, s.seat) for s in welcome.seats}
        for key in [k for k in self.states if k not in held]:
            _log.info("match ended while disconnected", match_id=key[0], seat=key[1])
            del self.states[key]
        _log.info(
            "connected",
            bot=welcome.bot_name or self.name,
            session_id=welcome.session_id,
            resumed=welcome.resumed,
            server_version=welcome.server_version,
            seats=len(welcome.seats),
        )

    def _state(self, match_id: str, seat: int) -> MatchState:
        st = self.states.get((match_id, seat))
        if st is None:
            st = self.bot.new_state(match_id, seat)
            self.states[(match_id, seat)] = st
        return st

    async def _call_hook(self, hook: str, fn: Callable[[], Any], st: MatchState) -> None:
        try:
            await _maybe_await(fn())
        except Exception:
            _log.exception("bot hook failed", hook=hook, match_id=st.match_id, seat=st.seat)

    async def _deliver_events(self, st: MatchState, events: Sequence[game_pb2.Event]) -> None:
        fresh = [e for e in events if e.sequence > st.last_sequence]
        if not fresh:
            return
        st.last_sequence = max(e.sequence for e in fresh)
        await self._call_hook("on_events", lambda: self.bot.on_events(st, fresh), st)

    async def _on_match_started(self, msg: bot_pb2.MatchStarted) -> None:
        st = self._state(msg.match_id, msg.seat)
        st.started = msg
        _log.info("match started", match_id=msg.match_id, seat=msg.seat, seats=len(msg.seats))
        await self._call_hook("on_match_started", lambda: self.bot.on_match_started(st), st)

    async def _on_match_ended(self, msg: bot_pb2.MatchEnded) -> None:
        st = self._state(msg.match_id, msg.seat)
        await self._deliver_events(st, msg.events)
        for rid, (req, _, _) in list(self._pending.items()):
            if req.match_id == msg.match_id and req.seat == msg.seat:
                del self._pending[rid]
                self._sent_at.pop(rid, None)
        for rid in [r for r, t in self._tasks.items() if t.get_name() == _task_name(*st.key())]:
            self._tasks.pop(rid).cancel()
        _log.info(
            "match ended",
            match_id=msg.match_id,
            seat=msg.seat,
            won=msg.won,
            winners=list(msg.winners),
            totals=list(msg.totals),
            strikes=msg.strikes,
            cause=game_pb2.EndCause.Name(msg.cause),
        )
        await self._call_hook("on_match_ended", lambda: self.bot.on_match_ended(st, msg), st)
        self.states.pop(st.key(), None)

    def _on_request_closed(self, msg: bot_pb2.RequestClosed) -> None:
        self._pending.pop(msg.request_id, None)
        self._sent_at.pop(msg.request_id, None)
        task = self._tasks.pop(msg.request_id, None)
        if task is not None:
            task.cancel()
        reason = bot_pb2.CloseReason.Name(msg.reason)
        log = _log.bind(match_id=msg.match_id, seat=msg.seat, request_id=msg.request_id)
        if msg.reason == bot_pb2.CLOSE_REASON_TIMED_OUT:
            log.warning(
                "request timed out; server played the default",
                applied_action_id=msg.applied_action_id,
                strikes=msg.strikes,
            )
        else:
            log.debug("request closed", reason=reason)

    def _on_action_result(self, msg: bot_pb2.ActionResult) -> None:
        pending = self._pending.pop(msg.request_id, None)
        sent_at = self._sent_at.pop(msg.request_id, None)
        if sent_at is not None:
            self.bot.on_action_result(msg, time.monotonic() - sent_at)
        log = _log.bind(match_id=msg.match_id, seat=msg.seat, request_id=msg.request_id)
        if msg.accepted:
            log.debug("action accepted", action_id=msg.action_id, response_ms=msg.response_ms)
            return
        log.warning(
            "action rejected",
            action_id=msg.action_id,
            code=msg.code,
            reason=_reason_name(msg.reason),
            message=msg.message,
            request_open=msg.request_open,
        )
        if msg.request_open and pending is not None:
            req, sent, retried = pending
            alt = fallback_action(req)
            if not retried and alt is not None and alt != sent:
                log.info("answering again with the fallback", action_id=alt)
                self._answer(req, alt, retried=True)

    # ------------------------------------------------------------------ decisions

    def _answer(self, req: bot_pb2.DecisionRequest, action_id: int, *, retried: bool) -> None:
        self._pending[req.request_id] = (req, action_id, retried)
        self._sent_at[req.request_id] = time.monotonic()
        self._send(
            bot_pb2.PlayRequest(
                action=bot_pb2.Action(request_id=req.request_id, action_id=action_id)
            )
        )

    def budget(self, req: bot_pb2.DecisionRequest) -> float | None:
        """Seconds ``decide`` may take for ``req``; None when the request has no deadline."""
        left = req.time_left_ms
        if left <= 0:
            return 0.0 if req.required else None
        margin = min(self.config.safety_margin_ms, left // 4)
        return (left - margin) / 1000

    async def _handle_decision(self, req: bot_pb2.DecisionRequest) -> None:
        st = self._state(req.match_id, req.seat)
        st.decisions += 1
        st.hand_number = req.hand_number
        log = _log.bind(match_id=req.match_id, seat=req.seat, request_id=req.request_id)
        await self._deliver_events(st, req.events)
        if not req.required and not self.bot.answer_optional:
            return
        legal = {a.id for a in req.legal_actions}
        budget = self.budget(req)
        started = time.monotonic()
        choice: int | None
        problem = ""
        try:
            choice = await asyncio.wait_for(self._decide(req, st), budget)
            if choice is None:
                if not req.required:
                    return
                problem = "decide returned None for a required request"
            elif isinstance(choice, bool) or not isinstance(choice, int) or choice not in legal:
                problem = f"decide returned {choice!r}, not a legal action id"
        except TimeoutError:
            problem = f"decide took longer than {req.time_left_ms} ms"
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("decide raised", prompt=bot_pb2.Prompt.Name(req.prompt))
            problem = f"decide raised {type(exc).__name__}: {exc}"
        if problem:
            choice = fallback_action(req)
            log.warning(
                "falling back",
                problem=problem,
                fallback=choice,
                required=req.required,
                elapsed_ms=round((time.monotonic() - started) * 1000),
            )
            if choice is None:
                return
        assert choice is not None
        log.debug("answer", action_id=choice, elapsed_ms=round((time.monotonic() - started) * 1000))
        self._answer(req, choice, retried=False)

    async def _decide(self, req: bot_pb2.DecisionRequest, st: MatchState) -> int | None:
        b = self.bot
        if b.is_async() or not b.threaded:
            result = await _maybe_await(b.decide(req, st))
        else:
            result = await _maybe_await(await asyncio.to_thread(b.decide, req, st))
        return cast("int | None", result)


def _task_name(match_id: str, seat: int) -> str:
    return f"uno-bot:{match_id}:{seat}"


def _reason_name(reason: int) -> str:
    try:
        return errors_pb2.ErrorReason.Name(reason)
    except ValueError:
        return str(reason)


# ---------------------------------------------------------------------- running


def configure_logging(level: str = "info", *, json: bool = False) -> None:
    """structlog to stderr, human-readable (or JSON lines), filtered at ``level``."""
    renderer: Any = (
        structlog.processors.JSONRenderer() if json else structlog.dev.ConsoleRenderer(colors=False)
    )
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.processors.format_exc_info,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.getLevelNamesMapping()[level.upper()]
        ),
        logger_factory=structlog.PrintLoggerFactory(sys.stderr),
        cache_logger_on_first_use=False,
    )


async def run_async(bot: Bot, config: ClientConfig, *, handle_signals: bool = True) -> None:
    """Run ``bot`` until SIGINT/SIGTERM (if ``handle_signals``) or a fatal stream error."""
    client = BotClient(bot, config)
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    if handle_signals:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, client.stop)
                installed.append(sig)
    try:
        await client.run()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


def run(bot: Bot, config: ClientConfig) -> None:
    """Blocking: run ``bot`` until SIGINT/SIGTERM."""
    asyncio.run(run_async(bot, config))


def parse_args(
    argv: Sequence[str] | None = None,
    *,
    default_name: str = "py-bot",
    description: str | None = None,
    parser: argparse.ArgumentParser | None = None,
) -> tuple[argparse.Namespace, ClientConfig]:
    """The common command line; every flag falls back to an environment variable."""
    env = os.environ
    p = parser or argparse.ArgumentParser(description=description)
    p.add_argument(
        "--addr",
        default=env.get("UNO_ARENA_ADDR", "127.0.0.1:50051"),
        help="server host:port (env UNO_ARENA_ADDR, default 127.0.0.1:50051)",
    )
    p.add_argument(
        "--token", default=env.get("UNO_ARENA_TOKEN", ""), help="bot token (env UNO_ARENA_TOKEN)"
    )
    p.add_argument(
        "--name",
        default=env.get("UNO_ARENA_BOT_NAME", default_name),
        help=f"bot name (env UNO_ARENA_BOT_NAME, default {default_name})",
    )
    p.add_argument("--version", dest="bot_version", default=None, help="bot version string")
    p.add_argument(
        "--ca-file",
        default=env.get("UNO_ARENA_CA_FILE") or None,
        help="PEM CA file; enables TLS (env UNO_ARENA_CA_FILE)",
    )
    p.add_argument(
        "--tls",
        action="store_true",
        default=env.get("UNO_ARENA_TLS", "") not in ("", "0", "false"),
        help="TLS with the system roots (env UNO_ARENA_TLS=1)",
    )
    p.add_argument(
        "--log-level",
        default=env.get("UNO_ARENA_LOG_LEVEL", "info"),
        choices=["debug", "info", "warning", "error"],
    )
    p.add_argument("--log-json", action="store_true", help="log JSON lines")
    ns = p.parse_args(argv)
    if not ns.token:
        p.error("a token is required: --token or UNO_ARENA_TOKEN")
    cfg = ClientConfig(
        addr=ns.addr,
        token=ns.token,
        name=ns.name,
        version=ns.bot_version,
        tls=ns.tls,
        ca_file=ns.ca_file,
    )
    return ns, cfg


def main(bot: Bot, argv: Sequence[str] | None = None) -> int:
    """Parse the command line, configure logging and run ``bot``. Returns an exit code."""
    ns, cfg = parse_args(argv, default_name=bot.name)
    configure_logging(ns.log_level, json=ns.log_json)
    try:
        run(bot, cfg)
    except FatalStreamError as err:
        print(f"uno_bot: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        pass
    return 0
