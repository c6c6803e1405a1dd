"""League matchmaking against what other ladders got wrong: starved new versions, feeder bots
at one table, and a crashing bot that takes more than its share."""

from __future__ import annotations

import math
import random
from collections import Counter

import pytest

from uno_tournament.league.matchmaking import Entry, next_tables

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
    authors = {"v0": "mallory", "v1": "mallory", "v2": "mallory", "v3": "mallory"}
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
