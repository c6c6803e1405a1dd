"""The UNO rules engine: pure, seeded, and complete to the letter of ../shared/rules.

Nothing here imports gRPC, asyncio, logging or the clock, or touches the global ``random``.

``COMPILED`` tells whether this process runs the mypyc-compiled engine, ``BUILD`` says which
build runs and, for the pure sources, why (see ``_build.py`` and setup.py).
"""

from ._build import choose as _choose_build

_compiled, BUILD = _choose_build()

from . import actions, cards, events  # noqa: E402 (the build is chosen first)
from . import hand as _hand  # noqa: E402
from .bots import HeuristicBot, RandomBot  # noqa: E402
from .errors import (  # noqa: E402
    EngineError,
    HandOverError,
    IllegalActionError,
    InvalidRulesError,
    MalformedActionError,
    StateError,
    WrongSeatError,
)
from .hand import SYSTEM, Hand  # noqa: E402
from .match import Match  # noqa: E402
from .rules import RuleSet  # noqa: E402
from .views import SeatView, redact, seat_view  # noqa: E402

COMPILED: bool = not str(_hand.__file__).endswith(".py")
"""True when the engine's hot modules run compiled (mypyc), False for the pure sources."""
if _compiled != COMPILED:  # pragma: no cover - a broken install
    BUILD = f"{'compiled' if COMPILED else 'pure Python'} (unexpected: {BUILD})"

__all__ = [
    "BUILD",
    "COMPILED",
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
