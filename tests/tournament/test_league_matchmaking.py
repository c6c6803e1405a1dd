"""League matchmaking against what other ladders got wrong: starved new versions, feeder bots
at one table, and a crashing bot that takes more than its share."""

from __future__ import annotations

import dataclasses
import math
import random
from collections import Counter

import numpy as np
import pytest

from uno_tournament.league.matchmaking import (
    FLOOR_SHARE,
    Entry,
    information_order,
    next_tables,
)
from uno_tournament.rating_model import Ratings

HANDS_PER_BLOCK = 24  # one block: 6 deals x 4 rotations at every table


def _simulate(
    n_versions: int,
    n_tables: int,
    blocks: int,
    *,
    arrivals: dict[int, list[Entry]] | None = None,
    authors: dict[str, str] | None = None,
) -> tuple[dict[str, int], dict[str, int], list[list[tuple[str, ...]]]]:
    """Play ``blocks`` blocks; returns hands per version, the block of each version's first
    table minus its arrival block, and every block's tables."""
    authors = authors or {}
    live = [Entry(f"v{i}", authors.get(f"v{i}", f"author{i}"), 0) for i in range(n_versions)]
    arrived = {e.key: 0 for e in live}
    first: dict[str, int] = {}
    history = []
    for b in range(blocks):
        for e in (arrivals or {}).get(b, []):
            live.append(e)
            arrived[e.key] = b
        tables = next_tables(live, n_tables, seed=7, block=b)
        history.append(tables)
        seated = {k for t in tables for k in t}
        for k in seated:
            first.setdefault(k, b - arrived[k])
        live = [
            Entry(e.key, e.author, e.hands + (HANDS_PER_BLOCK if e.key in seated else 0))
            for e in live
        ]
    return {e.key: e.hands for e in live}, first, history


def test_with_20_versions_no_version_waits_more_than_one_block_for_its_first_hands() -> None:
    rng = random.Random(3)
    arrivals = {b: [Entry(f"new{b}", f"newcomer{b}", 0)] for b in rng.sample(range(5, 60), 12)}
    hands, first, _ = _simulate(20, 2, 80, arrivals=arrivals)
    assert len(first) == 32  # everyone played
    # the 20 founding versions arrive together: 8 seats a block take them in ceil(20 / 8) blocks
    assert max(first[f"v{i}"] for i in range(20)) == math.ceil(20 / 8) - 1
    # a version submitted alone plays in the very next block: it is first in line
    assert all(first[f"new{b}"] == 0 for b in arrivals), first
    # and once there, nobody falls behind: hands per version differ by at most one block
    settled = [h for k, h in hands.items() if not k.startswith("new")]
    assert max(settled) - min(settled) <= HANDS_PER_BLOCK


def test_an_authors_feeder_bots_never_share_a_table() -> None:
    # one author whatever the case of the letters ("Alice" and "alice" sat together)
    authors = {"v0": "mallory", "v1": "Mallory", "v2": "MALLORY", "v3": "mallory"}
    _, _, history = _simulate(12, 2, 60, authors=authors)
    mallory = {"v0", "v1", "v2", "v3"}
    for tables in history:
        for t in tables:
            assert len(set(t) & mallory) <= 1, t
    # mallory's bots still play their share
    seats = Counter(k for tables in history for t in tables for k in t)
    assert min(seats[k] for k in mallory) >= min(seats.values()) - 1


def test_a_crashing_version_gets_its_share_of_tables_and_no_more() -> None:
    """Its hands are forfeits but count as played: what grows with crashes (its uncertainty)
    never moves it up the line, as it did on Halite."""
    _, _, history = _simulate(10, 2, 100)  # v9 crashes in every hand: the same schedule
    seats = Counter(k for tables in history for t in tables for k in t)
    fair = 100 * 2 * 4 / 10
    assert abs(seats["v9"] - fair) <= 1, seats
    assert max(seats.values()) - min(seats.values()) <= 1


def test_too_few_authors_fill_fewer_tables_and_each_version_sits_once() -> None:
    entries = [Entry(f"m{i}", "mallory", 0) for i in range(6)] + [Entry("a", "alice", 0)]
    assert next_tables(entries, 3, seed=1, block=0) == []  # two authors: no table of four
    entries += [Entry("b", "bob", 0), Entry("c", "carol", 0)]
    tables = next_tables(entries, 3, seed=1, block=0)
    assert len(tables) == 1 and len(set(tables[0])) == 4
    assert sum(k.startswith("m") for k in tables[0]) == 1
    assert next_tables(entries, 3, seed=1, block=0, one_per_author=False)  # the default relaxed


def test_preferred_versions_come_after_the_floor_and_the_choice_is_deterministic() -> None:
    entries = [Entry(f"v{i}", f"a{i}", 100) for i in range(8)] + [Entry("new", "n", 0)]
    tables = next_tables(entries, 1, seed=5, block=2, prefer=["v6", "v7"], floor_hands=24)
    assert {"new", "v6", "v7"} <= set(tables[0])
    assert tables == next_tables(entries, 1, seed=5, block=2, prefer=["v6", "v7"], floor_hands=24)
    with pytest.raises(ValueError, match="listed once"):
        next_tables([*entries, entries[0]], 1, seed=5, block=2)


# --- scheduling for information -------------------------------------------------------------


def _ratings(elo: dict[str, float], se: float) -> Ratings:
    """A fitted table with these ratings and independent errors of ``se`` Elo each."""
    bots = tuple(elo)
    return Ratings(
        bots=bots,
        elo=np.array([elo[b] for b in bots]),
        cov=np.eye(len(bots)) * se**2,
        seat_elo=np.zeros(4),
        later_seat_elo=np.zeros(4),
        loser_weight=0.3,
        loser_weight_se=0.05,
        log_likelihood=0.0,
        iterations=1,
        converged=True,
        n_hands=1000,
        n_clusters=100,
        places="full",
        cluster="deal",
    )


def test_unrated_versions_then_the_open_pairs_least_resolved_first() -> None:
    # gaps: a-b 200 (decided), b-c 30 (open, z 1.06), c-d 10 (open, z 0.35), d-e 300 (decided)
    r = _ratings({"a": 400, "b": 200, "c": 170, "d": 160, "e": -140}, se=20)
    order = information_order(r, ["a", "b", "c", "d", "e", "new"])
    assert order == ["new", "c", "d", "b"]
    assert information_order(None, ["x", "y"]) == ["x", "y"]  # no fit yet: all unrated
    # a covariance that makes a close pair's gap precise decides it
    tight = dataclasses.replace(r, cov=np.full((5, 5), 399.0) + np.eye(5))
    assert information_order(tight, ["a", "b", "c", "d", "e"]) == []


def test_the_open_pair_plays_every_block_and_no_version_falls_behind() -> None:
    """Eight versions of eight authors, one table a block, one open pair (c, d): the pair sits
    at every table, and the floor (FLOOR_SHARE of the mean hands) still brings every other
    version in: none falls below half the mean by more than a block."""
    keys = list("abcdefgh")
    r = _ratings({k: 300.0 - 100 * i for i, k in enumerate(keys)} | {"d": 105.0}, se=25)
    assert sorted(information_order(r, keys)) == ["c", "d"]
    hands = dict.fromkeys(keys, 0)
    seated = Counter[str]()
    for block in range(60):
        entries = [Entry(k, f"author-{k}", hands[k]) for k in keys]
        mean = sum(hands.values()) / len(hands)
        (table,) = next_tables(
            entries,
            1,
            seed=1,
            block=block,
            floor_hands=math.ceil(FLOOR_SHARE * mean),
            prefer=information_order(r, keys),
        )
        for k in table:
            hands[k] += 24
            seated[k] += 1
        mean = sum(hands.values()) / len(hands)
        assert min(hands.values()) >= FLOOR_SHARE * mean - 24, hands
    # the open pair sits at nearly every table (a fair share would be 30 of 60 blocks; the
    # floor takes the table once, when the versions that had not played yet fell below it)
    assert seated["c"] >= 55 and seated["d"] >= 55, seated
    assert min(seated.values()) >= 15, seated  # the others share the rest, none starved
