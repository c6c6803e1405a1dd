"""Built-in bots. They fill empty seats, replace seats that time out, and serve as opponents.

Both decide from a :class:`~uno_server.engine.views.SeatView` only, never from the hand itself, so
they play by the same information a remote bot gets. Each owns a seeded generator.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Protocol

from . import actions as A
from . import cards as C
from .hand import most_held_color
from .views import SeatView


class Bot(Protocol):
    name: str

    def choose(self, view: SeatView) -> int:
        """Return one id from ``view.legal_actions``."""
        ...


class RandomBot:
    """Picks uniformly among the legal action ids, except that it draws only when it has no card
    to play (the random agent of RLCard and most harnesses does the same; a bot that draws
    voluntarily a third of the time makes hands of over a thousand actions). With
    ``voluntary_draws=True`` it picks uniformly among every legal id, draws included."""

    name = "random"

    def __init__(self, seed: int = 0, *, voluntary_draws: bool = False) -> None:
        self.rng = random.Random(seed)
        self._random = self.rng.random  # looked up once: it is called on every decision
        self.voluntary_draws = voluntary_draws

    def choose(self, view: SeatView) -> int:
        return self.choose_from(view.legal_actions)

    def choose_from(self, legal: Sequence[int]) -> int:
        k = len(legal)
        if k > 1 and legal[0] == 0 and not self.voluntary_draws:
            return legal[1 + int(self._random() * (k - 1))]
        return legal[int(self._random() * k)]


class HeuristicBot:
    """Follows the strategy section of how-to-play-uno.txt:

    - dump high cards once any opponent is down to two or three cards;
    - keep several colours: play from the colour held most, keep the lone cards of other colours;
    - name the colour held most when playing a Wild;
    - save a Draw Two or Skip for the seat about to go out, and use it then;
    - hold the Wild Draw Four until it is legal (no card of the active colour), never bluff;
    - a Reverse to turn play away from a seat about to go out;
    - always call UNO; catch every missed call; challenge a Wild Draw Four when a bluff is likely.

    ``randomness`` is the probability of playing a uniformly random legal action instead
    (0 plays the heuristic always), used to make bots of graded strength.
    """

    name = "heuristic"

    def __init__(self, seed: int = 0, randomness: float = 0.0) -> None:
        if not 0.0 <= randomness <= 1.0:
            raise ValueError(f"randomness must be within 0..1, got {randomness}")
        self.rng = random.Random(seed)
        self.randomness = randomness

    def choose(self, view: SeatView) -> int:
        legal = view.legal_actions
        if self.randomness and self.rng.random() < self.randomness:
            return legal[int(self.rng.random() * len(legal))]
        if len(legal) == 1:
            return legal[0]
        first = legal[0]
        if view.uno_window >= 0:
            catch = A.CATCH_BASE + view.uno_window
            return catch if catch in legal else legal[0]
        if view.phase == "challenge":
            return A.CHALLENGE if self._bluff_likely(view) else A.ACCEPT
        if view.phase == "choose_color":
            return A.CHOOSE_COLOR_BASE + most_held_color(view.hand)
        plays = [a for a in legal if a >= A.PLAY_BASE]
        if not plays:
            return first
        best = max(plays, key=lambda a: (self._score(view, A.decode(a)), -a))
        if first in (A.DRAW, A.PASS, A.ACCEPT) and self._score(view, A.decode(best)) < -50:
            return first
        return best

    @staticmethod
    def _bluff_likely(view: SeatView) -> bool:
        n = len(view.card_counts)
        offender = (view.seat - view.direction) % n
        # Each card held is of the old colour with probability about 1/4; a bluff is worth
        # challenging when the chance it was one beats 1/3 (6 cards risked against 4 accepted).
        return view.card_counts[offender] >= 3

    def _score(self, view: SeatView, act: A.Action) -> float:
        card = act.card
        rank = card & 15
        hand = view.hand
        n = len(view.card_counts)
        d = view.direction
        nxt = (view.seat + d) % n
        prev = (view.seat - d) % n
        others = [view.card_counts[s] for s in range(n) if s != view.seat]
        danger = min(others) <= 3 if others else False
        nxt_low = view.card_counts[nxt] <= 2
        score = 0.0
        if card == C.WILD_DRAW_FOUR:
            honest = not any(c >> 4 == view.active_color for c in hand if c < C.WILD)
            if not honest:
                return -1000.0  # never bluff
            score = 5.0 + (40 if nxt_low else 0)
        elif card == C.WILD:
            score = 2.0 + (30 if danger else 0)
        elif rank in (C.SKIP, C.DRAW_TWO):
            score = 45.0 if nxt_low else (25.0 if danger else 4.0)
        elif rank == C.REVERSE:
            score = 40.0 if nxt_low and view.card_counts[prev] > 2 else (25.0 if danger else 6.0)
        else:
            score = 10.0 + rank * (2.0 if danger else 0.5)
        if card < C.WILD:
            same = sum(1 for c in hand if c < C.WILD and c >> 4 == card >> 4)
            score += 3.0 * same  # play from the colour held most; keep lone colours
        if C.is_wild(card):
            want = most_held_color(c for c in hand if c != card)
            score += 5.0 if act.color == want else -100.0
        if len(hand) == 2:
            score += 1000.0 if act.uno else -1000.0
        if act.target >= 0:  # seven-o: swap with the smallest hand
            score -= view.card_counts[act.target] * 10
        return score


BOTS: dict[str, type[RandomBot] | type[HeuristicBot]] = {
    "random": RandomBot,
    "heuristic": HeuristicBot,
}
