"""A person's seat: an ordinary SDK bot whose ``decide`` waits for the person.

The server cannot tell this seat from any other bot: it connects with a bot token, says Hello,
and answers each DecisionRequest with one of its legal action ids. Each request becomes a
:class:`Decision` handed to a :class:`Sink` (the play screen); the person's key press resolves it.
If the request closes first (a window expired, someone else caught the offender, the deadline
passed), the SDK cancels ``decide`` and the sink hears that the decision is gone.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from uno_bot import Bot, DecisionRequest, MatchState
from uno_server.gen.uno.v1 import bot_pb2, game_pb2

from .wire import own, own_events

NO_DEADLINE_MS = 600_000
"""The longest decision allowance the contract accepts (TimeControl.decision_ms 1-600000). The
practice table uses it as its "no deadline": the contract has no deadline-free option yet."""


@dataclass(eq=False)
class Decision:
    """One open decision request of the person's seat."""

    request: bot_pb2.DecisionRequest
    future: asyncio.Future[int | None]
    received: float = field(default_factory=time.monotonic)
    """Monotonic time the request arrived; ``request.time_left_ms`` counts from here."""

    @property
    def legal(self) -> list[game_pb2.LegalAction]:
        return list(self.request.legal_actions)

    def legal_ids(self) -> set[int]:
        return {a.id for a in self.request.legal_actions}

    @property
    def deadline(self) -> float | None:
        """Monotonic time by which the answer must arrive, or None if there is no deadline."""
        left = self.request.time_left_ms
        return self.received + left / 1000 if left > 0 else None

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
        decision = Decision(req, asyncio.get_running_loop().create_future())
        self.sink.on_decision(decision)
        try:
            return await decision.future
        finally:
            self.sink.on_decision_closed(decision)

    def on_match_started(self, state: MatchState) -> None:
        if state.started is not None:
            self.sink.on_match_started(own(bot_pb2.MatchStarted, state.started))

    def on_events(self, state: MatchState, events: Sequence[Any]) -> None:
        self.sink.on_events(state.match_id, state.seat, own_events(events))

    def on_match_ended(self, state: MatchState, ended: Any) -> None:
        self.sink.on_match_ended(own(bot_pb2.MatchEnded, ended))
