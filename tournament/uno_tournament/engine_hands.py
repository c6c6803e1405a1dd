"""Hands the engine really plays, between bots of known relative strength, for the rating checks.

Each bot is the engine's :class:`~uno_server.engine.HeuristicBot` that plays a uniformly random
legal action with probability ``eps`` (0 plays the heuristic always, 1 is a random player). The
hands are played in process, straight through the engine (no service, no clock), under the
classic rules with single-hand scoring, with the same design as a tournament:

* every deal seats four bots (cycling through all ``C(N, 4)`` tables in a shuffled order) in a
  random circular order and is played four times with the seats rotated (duplicate dealing), so
  each bot holds every seat's cards once and the four hands form one cluster;
* the finishing order is the tournament's: the seat that goes out first, then by points left.

A bot's decisions use its own seeded generator, distinct for every hand, so the only thing the
four hands of a deal share is the deck, as in a real tournament.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from itertools import combinations

from uno_server.engine import Hand, HeuristicBot, RuleSet
from uno_server.engine.simulate import play_hand

from .ratings import HandResult

__all__ = ["SEATS", "engine_bot_names", "play_engine_hands"]

SEATS = 4
ROTATIONS = 4


def engine_bot_names(eps: Sequence[float]) -> tuple[str, ...]:
    """``e00-0.10`` style names: index, then the bot's randomness."""
    return tuple(f"e{i:02d}-{e:.2f}" for i, e in enumerate(eps))


def play_engine_hands(
    eps: Sequence[float],
    n_hands: int,
    seed: int,
    *,
    prefix: str = "",
    rules: RuleSet | None = None,
    progress: Callable[[int], None] | None = None,
) -> list[HandResult]:
    """Play ``n_hands`` hands (a multiple of 4) among bots of randomness ``eps``.

    ``seed`` fixes every deal, every seating and every bot decision; the same arguments give the
    same hands. ``progress(done)`` is called after each deal.
    """
    if n_hands % ROTATIONS:
        raise ValueError("n_hands must be a multiple of 4 (duplicate dealing)")
    if len(eps) < SEATS:
        raise ValueError("need at least four bots")
    rules = rules or RuleSet(scoring="single_hand")
    names = engine_bot_names(eps)
    rng = random.Random(seed)
    tables = list(combinations(range(len(eps)), SEATS))
    order: list[tuple[int, ...]] = []
    out: list[HandResult] = []
    for d in range(n_hands // ROTATIONS):
        if not order:
            order = list(tables)
            rng.shuffle(order)
        table = list(order.pop())
        rng.shuffle(table)  # the circular order of the deal
        deck_seed = rng.getrandbits(63)
        deal_id = f"{prefix}d{d:06d}"
        for r in range(ROTATIONS):
            at_seat = [table[(s - r) % SEATS] for s in range(SEATS)]
            bots = [HeuristicBot(seed=rng.getrandbits(63), randomness=eps[b]) for b in at_seat]
            hand = play_hand(Hand.deal(rules, deck_seed, 0), bots)
            out.append(
                HandResult.from_points(
                    f"{deal_id}r{r}",
                    deal_id,
                    names[at_seat[hand.winner]],
                    [(names[b], s, hand.points_held(s)) for s, b in enumerate(at_seat)],
                )
            )
        if progress is not None:
            progress(d + 1)
    return out
