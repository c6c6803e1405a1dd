"""The AI that fills the empty seats of a table ``uno-arena play`` hosts.

It is an ordinary bot of the Python SDK, seated through the protocol like any other. It plays
like the engine's :class:`~uno_server.engine.bots.HeuristicBot`, with what a person at the table
needs on top:

* it sometimes forgets to call UNO, and calls late only after a human reaction time, so that the
  person can catch it;
* it notices a person's missed UNO only after a reaction time, so that the person can still call
  it late;
* it sometimes bluffs a Wild Draw Four, so that challenging is worth practising;
* it takes a moment over each move, so that a person can follow the play.

(The server's own built-in bots act the instant they may: a person can never catch one, nor
call UNO late while one is seated.)

:class:`Policy` is the pure part (engine views in, action ids out, one seeded generator); it is
what the tests replay offline with the engine.
"""

from __future__ import annotations

import asyncio
import random
from dataclasses import dataclass

from uno_bot import Bot, DecisionRequest, MatchState
from uno_server.engine import actions as A
from uno_server.engine import cards as C
from uno_server.engine.bots import HeuristicBot
from uno_server.engine.hand import most_held_color
from uno_server.engine.views import SeatView as EngineView
from uno_server.gen.uno.v1 import bot_pb2

from .wire import engine_view, own


@dataclass(frozen=True, slots=True)
class AiStyle:
    """How the practice AI behaves. Times in milliseconds; ``None`` means never."""

    forget_uno: float = 0.25
    """Chance of playing the second-last card without calling UNO."""
    late_call_ms: int | None = 1500
    """After forgetting, how long until it calls UNO late (None: it never does)."""
    catch_ms: int | None = 1200
    """How long it takes to notice someone else's missed UNO (None: it never catches)."""
    catch_chance: float = 0.8
    """Chance that it notices at all; otherwise it lets the window go."""
    bluff: float = 0.15
    """Chance of playing a Wild Draw Four while holding a card of the active colour."""
    think_ms: int = 350
    """Pause before each required move."""


SCRIPTED = AiStyle(
    forget_uno=1.0, late_call_ms=None, catch_ms=None, catch_chance=0.0, bluff=1.0, think_ms=0
)
"""Deterministic style for tests: never calls UNO, never catches, bluffs whenever it can, and
answers at once, so that every outcome depends only on the seed and the person's moves."""


@dataclass(frozen=True, slots=True)
class WindowPlan:
    """An answer to an optional request and how long to wait before giving it."""

    action_id: int
    delay_ms: int


class Policy:
    """The practice AI's choices for one seat: pure, seeded."""

    def __init__(self, seed: int, style: AiStyle) -> None:
        self.style = style
        self.rng = random.Random(seed)
        self.heuristic = HeuristicBot(seed)

    def required(self, view: EngineView) -> int:
        """A required decision (a turn, a drawn card, a Wild Draw Four to answer, ...)."""
        legal = view.legal_actions
        choice = self._bluff(view)
        if choice is None:
            choice = self.heuristic.choose(view)
        if choice >= A.PLAY_BASE and choice < A.SWAP_BASE and (choice - A.PLAY_BASE) % 2 == 1:
            # a play with the UNO call: forget it now and then
            if self.style.forget_uno and self.rng.random() < self.style.forget_uno:
                if choice - 1 in legal:
                    choice -= 1
        return choice

    def _bluff(self, view: EngineView) -> int | None:
        style = self.style
        if view.phase != "turn" or not style.bluff or C.WILD_DRAW_FOUR not in view.hand:
            return None
        held = any(c >> 4 == view.active_color for c in view.hand if c < C.WILD)
        if not held or self.rng.random() >= style.bluff:
            return None  # an honest Wild Draw Four is the heuristic's own choice
        rest = [c for c in view.hand if c != C.WILD_DRAW_FOUR]
        choice = A.play_id(C.WILD_DRAW_FOUR, most_held_color(rest), len(view.hand) == 2)
        return choice if choice in view.legal_actions else None

    def optional(self, view: EngineView) -> WindowPlan | None:
        """An optional chance: a UNO window (catch someone, or call UNO late) or a jump-in."""
        style = self.style
        legal = view.legal_actions
        if view.uno_window < 0:  # jump-in
            choice = self.heuristic.choose(view)
            return WindowPlan(choice, style.think_ms) if choice in legal else None
        if view.uno_window == view.seat:
            if style.late_call_ms is None or A.CALL_UNO not in legal:
                return None
            return WindowPlan(A.CALL_UNO, style.late_call_ms)
        if style.catch_ms is None:
            return None
        catch = A.CATCH_BASE + view.uno_window
        if catch in legal and self.rng.random() < style.catch_chance:
            return WindowPlan(catch, style.catch_ms)
        return WindowPlan(A.NO_CATCH, style.catch_ms) if A.NO_CATCH in legal else None


class PracticeBot(Bot):
    """The practice AI on the wire: one SDK bot, one :class:`Policy` per seat it holds."""

    threaded = False
    answer_optional = True
    version = "practice-1"

    def __init__(self, name: str, seed: int, style: AiStyle) -> None:
        self.name = name
        self.seed = seed
        self.style = style

    def new_state(self, match_id: str, seat: int) -> MatchState:
        state = MatchState(match_id=match_id, seat=seat)
        state.data["policy"] = Policy(self.seed * 16 + seat, self.style)
        return state

    async def decide(self, request: DecisionRequest, state: MatchState) -> int | None:
        req = own(bot_pb2.DecisionRequest, request)
        policy: Policy = state.data.setdefault(
            "policy", Policy(self.seed * 16 + state.seat, self.style)
        )
        view = engine_view(req)
        if not req.required:
            plan = policy.optional(view)
            if plan is None:
                return None
            if plan.delay_ms:
                await asyncio.sleep(plan.delay_ms / 1000)
            return plan.action_id
        choice = policy.required(view)
        if self.style.think_ms:
            await asyncio.sleep(self.style.think_ms / 1000)
        return choice
