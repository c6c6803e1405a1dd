"""The UNO rules engine: pure, seeded, and complete to the letter of ../shared/rules.

Nothing here imports gRPC, asyncio, logging or the clock, or touches the global ``random``.
"""

from . import actions, cards, events
from .bots import HeuristicBot, RandomBot
from .errors import (
    EngineError,
    HandOverError,
    IllegalActionError,
    InvalidRulesError,
    MalformedActionError,
    StateError,
    WrongSeatError,
)
from .hand import SYSTEM, Hand
from .match import Match
from .rules import RuleSet
from .views import SeatView, redact, seat_view

__all__ = [
    "SYSTEM",
    "EngineError",
    "Hand",
    "HandOverError",
    "HeuristicBot",
    "IllegalActionError",
    "InvalidRulesError",
    "MalformedActionError",
    "Match",
    "RandomBot",
    "RuleSet",
    "SeatView",
    "StateError",
    "WrongSeatError",
    "actions",
    "cards",
    "events",
    "redact",
    "seat_view",
]
