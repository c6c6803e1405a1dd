"""Schedule: duplicate blocks, all C(N,4) tables, pair balance for larger N."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest

from uno_tournament.schedule import (
    HANDS_PER_BLOCK,
    balanced_tables,
    plan,
    seating,
    tables_for,
)


def test_a_block_puts_every_bot_in_every_seat_six_times_and_after_every_other_bot_eight_times() -> (
    None
):
    bots = ("a", "b", "c", "d")
    seats: Counter[tuple[str, int]] = Counter()
    follows: Counter[tuple[str, str]] = Counter()
    for deal in range(6):
        for rot in range(4):
            order = seating(bots, deal, rot)
            assert sorted(order) == sorted(bots)
            for s, b in enumerate(order):
                seats[b, s] += 1
                follows[b, order[(s - 1) % 4]] += 1
    assert set(seats.values()) == {6} and len(seats) == 16
    assert set(follows.values()) == {8} and len(follows) == 12


def test_rotations_of_a_deal_give_every_bot_every_seats_cards() -> None:
    bots = ("a", "b", "c", "d")
    for deal in range(6):
        held = {(seating(bots, deal, r)[s], s) for r in range(4) for s in range(4)}
        assert len(held) == 16


@pytest.mark.parametrize("n", [4, 5, 8, 12])
def test_all_four_bot_tables_up_to_twelve_bots(n: int) -> None:
    bots = [f"b{i}" for i in range(n)]
    tables = tables_for(bots)
    assert sorted(tables) == sorted(itertools.combinations(bots, 4))


@pytest.mark.parametrize(("n", "meetings"), [(13, 1), (16, 1), (17, 2), (20, 1), (25, 1)])
def test_pairs_meet_about_equally_often_above_twelve_bots(n: int, meetings: int) -> None:
    bots = [f"b{i:02d}" for i in range(n)]
    tables = balanced_tables(bots, pair_meetings=meetings, seed=3)
    assert all(len(set(t)) == 4 for t in tables)
    pairs: Counter[frozenset[str]] = Counter()
    uses: Counter[str] = Counter()
    for t in tables:
        pairs.update(frozenset(p) for p in itertools.combinations(t, 2))
        uses.update(t)
    counts = [pairs[frozenset(p)] for p in itertools.combinations(bots, 2)]
    assert min(counts) >= meetings
    assert max(counts) - min(counts) <= 2
    assert sum(c == min(counts) or c == min(counts) + 1 for c in counts) >= 0.95 * len(counts)
    assert max(uses.values()) - min(uses.values()) <= 2


def test_plan_ids_are_unique_stable_and_share_deal_seeds_across_rotations() -> None:
    bots = ["a", "b", "c", "d", "e"]
    p1 = plan("x", bots, blocks=2, seed=5)
    p2 = plan("x", bots, blocks=2, seed=5)
    assert p1 == p2
    assert len(p1) == 5 * 2 * HANDS_PER_BLOCK
    assert len({h.hand_id for h in p1}) == len(p1)
    by_deal: dict[str, set[int]] = {}
    for h in p1:
        by_deal.setdefault(h.deal_id, set()).add(h.seed)
    assert all(len(s) == 1 for s in by_deal.values())
    assert len({next(iter(s)) for s in by_deal.values()}) == len(by_deal)
    assert plan("x", bots, blocks=1, seed=6)[0].seed != p1[0].seed
