"""The plain state a table and its parts share: a seat, an open request, the time control,
a reconnecting bot's replay budget, and where a seat's messages go (its bot's ``Outbox``).

Only the table (:mod:`.table`) and the parts it owns, its seat log (:mod:`.seat_log`) and
request desk (:mod:`.request_desk`), change these; everything else reads them.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final, Protocol

from uno_server.engine.bots import Bot, HeuristicBot, RandomBot
from uno_server.gen.uno.v1 import bot_pb2, game_pb2

BUILTIN_NAMES: Final[dict[int, str]] = {
    game_pb2.BUILTIN_BOT_RANDOM: "random",
    game_pb2.BUILTIN_BOT_HEURISTIC: "heuristic",
}


def make_builtin(kind: int, seed: int) -> Bot:
    return RandomBot(seed) if kind == game_pb2.BUILTIN_BOT_RANDOM else HeuristicBot(seed)


class Outbox(Protocol):
    """Where a table sends a bot's messages: its live stream session."""

    bot_name: str
    push_events: bool

    def send(self, msg: bot_pb2.PlayResponse) -> None: ...


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Validated time control (milliseconds)."""

    decision_ms: int = 1000
    time_bank_ms: int = 0
    strikes_before_takeover: int = 3
    reconnect_grace_ms: int = 5000
    takeover_bot: int = game_pb2.BUILTIN_BOT_HEURISTIC

    def to_proto(self) -> game_pb2.TimeControl:
        return game_pb2.TimeControl(
            decision_ms=self.decision_ms,
            time_bank_ms=self.time_bank_ms,
            strikes_before_takeover=self.strikes_before_takeover,
            reconnect_grace_ms=self.reconnect_grace_ms,
            takeover_bot=self.takeover_bot,
        )


@dataclass(slots=True)
class OpenRequest:
    request_id: str
    number: int  # the request's number within the match (the id's suffix)
    seat: int  # match seat
    legal: list[int]  # engine action ids (hand seat numbering)
    required: bool
    sent_at: float
    deadline: float  # loop time, seconds; inf for optional requests


@dataclass(slots=True)
class Seat:
    seat: int
    bot_name: str  # "" for a built-in seat
    builtin: int  # BuiltinBot number for built-in seats (and after a takeover)
    ai: Bot | None
    bank_ms: int
    strikes: int = 0
    rejected: int = 0  # faults: rejected actions but late answers (MatchSeat.rejected_actions)
    stale: int = 0  # late answers (MatchSeat.stale_actions); never in rejected
    decisions: int = 0
    response_ms_total: float = 0.0
    response_ms: list[float] = field(default_factory=list)  # MatchSeat.response_ms, unrounded
    last_response_ms: int = 0  # the latest accepted answer's response time (previous_response_ms)
    taken_over: bool = False
    takeover_cause: int = 0
    cursor: int = 0  # records delivered to the seat's bot (= the last sequence it was sent)
    open: OpenRequest | None = None
    disconnected_since: float | None = None
    bot_version: str = ""
    push: bool = False  # the seat's bot asked for pushed SeatEvents
    ended_sent: bool = False  # MatchEnded reached the bot


@dataclass(slots=True)
class ReplayBudget:
    """Events a reconnecting bot may have sent again (Resume.cursors) in this session."""

    left: float
