"""A person's seat: an ordinary SDK bot whose ``decide`` waits for the person.

The server cannot tell this seat from any other bot: it connects with a bot token, says Hello,
and answers each DecisionRequest with one of its legal action ids. Each request becomes a
:class:`Decision` handed to a :class:`Sink` (the play screen); the person's key press resolves it.
If the request closes first (a window expired, someone else caught the offender, the deadline
passed), the SDK cancels ``decide`` and the sink hears that the decision is gone.

When the person's time runs out, the seat answers what the SDK would (:func:`fallback_action`:
the request's default, such as drawing a card) a moment before the SDK's own clock does, and
tells the sink first: the screen says that the time ran out and what was played, rather than
showing the move as if the person had chosen it.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from uno_bot import Bot, DecisionRequest, MatchState, decide_budget, fallback_action
from uno_server.gen.uno.v1 import bot_pb2, game_pb2

from .wire import own, own_events

NO_DEADLINE_MS = 600_000
"""The longest decision allowance the contract accepts (TimeControl.decision_ms 1-600000). The
practice table uses it as its "no deadline": the contract has no deadline-free option yet."""
EARLY_S = 0.25
"""How long before the SDK's own clock (``decide_budget``) the person's time runs out: the seat
then answers the fallback itself, so that the screen can say so. The SDK started its clock when
the request arrived, a little before ``decide`` was called; this margin covers that gap."""
LATE_S = 1.0
"""A required decision cancelled this close to the person's cut-off was cancelled by the SDK's
clock (the gap between the request's arrival and ``decide`` outgrew :data:`EARLY_S` on a busy
machine): the SDK answered the same fallback, and the screen is told so all the same."""


@dataclass(eq=False)
class Decision:
    """One open decision request of the person's seat."""

    request: bot_pb2.DecisionRequest
    future: asyncio.Future[int | None]
    received: float = field(default_factory=time.monotonic)
    """Monotonic time the request arrived; ``request.time_left_ms`` counts from here."""
    budget: float | None = None
    """Seconds the SDK gives ``decide`` from the request's arrival (``decide_budget``); None:
    no SDK clock (an optional request)."""
    fallback: int | None = None
    """What the SDK answers when ``decide`` cannot (``fallback_action``)."""
    timed_out: int | None = None
    """The action answered for the person when their time ran out (None: it did not)."""

    @property
    def legal(self) -> list[game_pb2.LegalAction]:
        return list(self.request.legal_actions)

    def legal_ids(self) -> set[int]:
        return {a.id for a in self.request.legal_actions}

    @property
    def deadline(self) -> float | None:
        """Monotonic time by which the answer must arrive, or None if there is no deadline. For
        a required request: when the person's time runs out and the fallback is played for
        them (a moment before the server's deadline, see :data:`EARLY_S`)."""
        budget = self.budget
        if budget is not None:
            return self.received + max(0.0, budget - min(EARLY_S, budget / 4))
        left = self.request.time_left_ms
        return self.received + left / 1000 if left > 0 else None

    def action(self, action_id: int) -> game_pb2.LegalAction | None:
        """The legal action of ``action_id``, or None."""
        for a in self.request.legal_actions:
            if a.id == action_id:
                return a
        return None

    @property
    def open(self) -> bool:
        return not self.future.done()

    def answer(self, action_id: int) -> bool:
        """Answer with ``action_id`` if it is legal and the decision is still open."""
        if self.future.done() or action_id not in self.legal_ids():
            return False
        self.future.set_result(action_id)
        return True


class Sink(Protocol):
    """Where the person's seat reports what happens (the play screen)."""

    def on_match_started(self, started: bot_pb2.MatchStarted) -> None: ...

    def on_events(self, match_id: str, seat: int, events: list[game_pb2.Event]) -> None: ...

    def on_decision(self, decision: Decision) -> None: ...

    def on_decision_closed(self, decision: Decision) -> None: ...

    def on_time_out(self, decision: Decision, action_id: int) -> None:
        """The person's time ran out: ``action_id`` is answered for them (called before it is
        sent, so before the events it causes)."""

    def on_match_ended(self, ended: bot_pb2.MatchEnded) -> None: ...


class HumanBot(Bot):
    """The person's seat on the wire."""

    threaded = False
    answer_optional = True
    version = "human"

    def __init__(self, name: str, sink: Sink) -> None:
        self.name = name
        self.sink = sink

    async def decide(self, request: DecisionRequest, state: MatchState) -> int | None:
        req = own(bot_pb2.DecisionRequest, request)
        decision = Decision(
            req,
            asyncio.get_running_loop().create_future(),
            budget=decide_budget(request),
            fallback=fallback_action(request),
        )
        self.sink.on_decision(decision)
        budget = decision.budget
        cutoff = decision.deadline if budget is not None else None
        timer = None
        if cutoff is not None and budget is not None and decision.fallback is not None:
            delay = max(0.0, cutoff - time.monotonic())
            timer = asyncio.get_running_loop().call_later(delay, self._time_out, decision)
        try:
            return await decision.future
        except asyncio.CancelledError:
            # closed by the server or by the SDK; this near the cut-off it was the SDK's clock,
            # which answers the same fallback (see LATE_S)
            if (
                cutoff is not None
                and budget is not None
                and decision.timed_out is None
                and time.monotonic() >= cutoff - min(LATE_S, budget / 2)
            ):
                self._time_out(decision, answer=False)
            raise
        finally:
            if timer is not None:
                timer.cancel()
            self.sink.on_decision_closed(decision)

    def _time_out(self, decision: Decision, *, answer: bool = True) -> None:
        """The person's time ran out: the sink is told, then the fallback answered (``answer``;
        else the SDK answers it)."""
        choice = decision.fallback
        if choice is None or decision.timed_out is not None:
            return
        if answer and decision.future.done():  # the person answered just in time
            return
        decision.timed_out = choice
        self.sink.on_time_out(decision, choice)
        if answer and not decision.future.done():
            decision.future.set_result(choice)

    def on_match_started(self, state: MatchState) -> None:
        if state.started is not None:
            self.sink.on_match_started(own(bot_pb2.MatchStarted, state.started))

    def on_events(self, state: MatchState, events: Sequence[Any]) -> None:
        self.sink.on_events(state.match_id, state.seat, own_events(events))

    def on_match_ended(self, state: MatchState, ended: Any) -> None:
        self.sink.on_match_ended(own(bot_pb2.MatchEnded, ended))
