"""Schedule: duplicate blocks, all C(N,4) tables, pair balance for larger N."""

from __future__ import annotations

import contextlib
import io
import itertools
from collections import Counter
from pathlib import Path

import pytest

from uno_tournament import schedule
from uno_tournament.schedule import (
    HANDS_PER_BLOCK,
    balanced_tables,
    design,
    expected_precision,
    hands_for_precision,
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


# --- issue 10: a hand budget or a precision, for any N (no cliff between 12 and 13 bots) ---------


def _balance(tables: list[tuple[str, ...]], bots: list[str]) -> tuple[int, int, int]:
    """(pairs that never meet, max - min pair meetings, max - min tables per bot)"""
    pairs: Counter[frozenset[str]] = Counter()
    uses: Counter[str] = Counter()
    for t in tables:
        pairs.update(frozenset(p) for p in itertools.combinations(t, 2))
        uses.update(t)
    counts = [pairs[frozenset(p)] for p in itertools.combinations(bots, 2)]
    return (
        sum(c == 0 for c in counts),
        max(counts) - min(counts),
        max(uses[b] for b in bots) - min(uses[b] for b in bots),
    )


@pytest.mark.parametrize("n", [11, 12, 13, 14])
def test_a_hand_budget_gives_that_many_hands_for_any_n(n: int) -> None:
    """The default design jumps from 11,880 hands a block (12 bots) to 384 (13 bots); with a
    budget the size follows the budget whatever N is."""
    bots = [f"b{i:02d}" for i in range(n)]
    hands = plan("x", bots, blocks=1, seed=3, hands=4800)
    assert abs(len(hands) - 4800) <= HANDS_PER_BLOCK
    tables = sorted({h.table_bots for h in hands})
    never, pair_spread, use_spread = _balance(
        [h.table_bots for h in hands if h.deal == 0 and h.rotation == 0], bots
    )
    assert never == 0 and pair_spread <= 2 and use_spread <= 1, (never, pair_spread, use_spread)
    assert all(len(set(t)) == 4 for t in tables)


def test_a_large_budget_for_few_bots_plays_whole_round_robins() -> None:
    bots = [f"b{i}" for i in range(8)]
    d = design(bots, hands=2 * 70 * HANDS_PER_BLOCK)
    assert d.blocks == 2 and sorted(d.tables) == sorted(itertools.combinations(bots, 4))


def test_a_precision_picks_the_hands_that_reach_it() -> None:
    bots = [f"b{i:02d}" for i in range(13)]
    d = design(bots, precision_elo=40.0)
    assert d.hands >= hands_for_precision(40.0, 13) - HANDS_PER_BLOCK
    assert expected_precision(d.hands, 13) <= 40.0 * 1.02
    # four times the hands for half the interval, whatever N
    assert hands_for_precision(20.0, 13) == pytest.approx(4 * hands_for_precision(40.0, 13), 1e-3)
    assert "precision" in d.reason


def test_without_a_size_the_default_design_is_unchanged() -> None:
    bots = [f"b{i:02d}" for i in range(13)]
    assert design(bots).tables == tables_for(bots, seed=1)
    assert len(plan("x", bots[:12], blocks=1, seed=1)) == 495 * HANDS_PER_BLOCK


def test_a_budget_that_splits_the_bots_into_groups_is_named_before_the_run() -> None:
    """48 hands of 8 bots are two tables of four that never share a bot: the ratings can
    compare bots within a table only, and the run's first line promised a precision for every
    gap (an examination). The plan now says so, with the budget that links them all."""
    names = [f"a{i}" for i in range(1, 9)]
    split = schedule.design(names, hands=48, seed=7).tables
    lines = schedule.split_warning(split)
    assert len(lines) == 1 and "split the 8 bots into 2 groups that never meet" in lines[0]
    assert "plan at least 72 hands" in lines[0]
    linked = schedule.design(names, hands=72, seed=7).tables
    assert schedule.split_warning(linked) == []
    assert schedule.split_warning(schedule.design(names, blocks=1).tables) == []


def test_the_run_says_a_split_plan_before_its_first_hand(tmp_path: Path) -> None:
    """The warning and the qualified precision come out of a real run's first lines."""
    from uno_server.cli import main as cli_main

    from .helpers import bot_entry, write_config

    cfg = write_config(tmp_path, [bot_entry(f"b{i}") for i in range(8)], name="split")
    cfg.write_text(cfg.read_text().replace("blocks = 1\n", "hands = 48\n"))
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        assert cli_main(["tournament", "run", str(cfg)]) == 0
    text = out.getvalue()
    assert "split the 8 bots into 2 groups that never meet" in text, text[-2000:]
    assert "95% CI of a gap within a group about" in text
    assert text.index("never meet") < text.index("finished")


def test_a_budget_that_is_no_multiple_of_a_table_says_what_is_played() -> None:
    # an examination: "25 hands (budget of 25 hands)" was promised and 24 were played
    # and one that doubles (13 bots, hands = 48: 96) says why: every bot must play
    cases = (
        (4, 25, 24, ""),
        (5, 25, 48, 2),
        (5, 130, 120, ""),
        (5, 3000, 3000, ""),
        (13, 48, 96, 4),
    )
    for n, asked, played, floor in cases:
        d = schedule.design([f"b{i}" for i in range(n)], hands=asked)
        assert len(d.tables) * d.blocks * schedule.HANDS_PER_BLOCK == played
        least = f", and at least {floor} tables so that every one of the {n} bots plays"
        if asked == played:
            assert d.reason == f"budget of {asked} hands"
        else:
            assert d.reason == (
                f"budget of {asked} hands, played as {played} (whole tables of 24"
                f"{least if floor else ''})"
            )
