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
from .schedule import plan as schedule_plan

__all__ = ["SEATS", "engine_bot_names", "play_engine_hands", "play_schedule_hands"]

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


def play_schedule_hands(
    eps: Sequence[float],
    seed: int,
    *,
    blocks: int = 1,
    hands: int = 0,
    tournament_id: str = "t",
    rules: RuleSet | None = None,
) -> list[HandResult]:
    """The hands of a tournament's own schedule (:func:`uno_tournament.schedule.plan`: every
    table of four, duplicate blocks of 6 deals x 4 rotations, the plan's deal seeds and hand
    and deal ids), played in process between bots of randomness ``eps``.

    With eight bots and ``blocks=1`` this is the example tournament's design
    (``examples/tournament.toml``): 70 tables, 1,680 hands. ``seed`` is the tournament seed (it
    fixes every deck) and, offset, the seed of the bots' own decisions."""
    rules = rules or RuleSet(scoring="single_hand")
    names = engine_bot_names(eps)
    randomness = dict(zip(names, eps, strict=True))
    rng = random.Random(seed * 7919 + 1)
    out: list[HandResult] = []
    for spec in schedule_plan(tournament_id, names, blocks=blocks, seed=seed, hands=hands):
        bots = [HeuristicBot(seed=rng.getrandbits(63), randomness=randomness[b]) for b in spec.bots]
        hand = play_hand(Hand.deal(rules, spec.seed, 0), bots)
        out.append(
            HandResult.from_points(
                spec.hand_id,
                spec.deal_id,
                spec.bots[hand.winner],
                [(b, s, hand.points_held(s)) for s, b in enumerate(spec.bots)],
            )
        )
    return out
