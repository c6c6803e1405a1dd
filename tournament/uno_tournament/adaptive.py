"""Scheduling for information: which tables the next duplicate block of a "settled" run plays.

API (for the runner; all pure and deterministic)
------------------------------------------------
* :func:`next_block_tables` ``(state, last, bots, n_tables, block, seed) -> list[tuple[str, ...]]``:
  the four-bot tables of block ``block``, chosen from the sequential test's state
  (:class:`~uno_tournament.settled.SettledState`, a function of the stored hands) and the last
  look's decision (:class:`~uno_tournament.settled.SettledDecision`, or ``None`` before the first
  look), and the tournament seed. Nothing else enters (no clock, no global random), so a run
  resumed after kill -9 from the saved state, or another shard reading the same store, computes
  the same tables.
* :func:`block_hands` ``(tournament_id, tables, block, seed) -> list[HandSpec]``: the block's
  hands in playing order, with the plan's scheme exactly (:func:`uno_tournament.schedule.hand_id`,
  :func:`~uno_tournament.schedule.deal_seed`, :func:`~uno_tournament.schedule.seating`: 6 deals x
  4 seat rotations per table, deal by deal across the tables). A table's index in a hand id is
  its position in its block.

The runner's loop: ``tables = next_block_tables(...)``; play ``block_hands(...)``; append their
ids to the plan's order and call :func:`uno_tournament.settled.advance` with ``look_every`` =
the block's hands and ``by_block=True`` (one look per block, on exactly the blocks so far, each
block's hands also fitted alone); pass its last decision to the next call.

How the tables are chosen
-------------------------
* Before the first look (``last`` is ``None`` or not ``looked``): a balanced design over all bots
  (:func:`uno_tournament.schedule.balanced_tables`, seeded by ``seed`` and ``block``).
* After it: the **floor** first. ``ceil((N - 1) / 3)`` tables of each block (3 for 8 bots) form
  a chain along the current ranking (bots 1-4, 4-7, ...; the last table the last four bots),
  consecutive tables sharing a bot. So every bot plays at least 24 hands a block
  (``HANDS_PER_BLOCK``), neighbours in the ranking meet, and the block's hands alone connect
  every bot: a fit of one block rates every pair, which
  :meth:`uno_tournament.settled.SettledState.look_block` needs. The remaining tables go to the
  open adjacent pairs of the current ranking, in proportion to the information each still needs
  (D'Hondt on ``u**2 - 1``, ``u`` from
  :func:`unresolved`), each table seating both bots of its pair and two of the four bots
  nearest them in the ranking (all six choices in turn). Both bots of an open pair sitting at
  the same table compare them directly on the same cards, which is where the information about
  their gap is. When no adjacent pair is open (the run has settled) the next block is the
  balanced design again.

Why the adaptive design is ignorable for the fit: the tables of a block depend only on hands
already played (and the seed), so the likelihood of all hands is the product of each hand's
Plackett-Luce likelihood given its table, times design factors that do not involve the ratings; the
maximum-likelihood fit and its observed-information (sandwich) covariance are the same as if
those tables had been fixed in advance. The intervals come from the observed information of the
hands actually played, not from a resampling of the design. The final table is therefore the
usual fit. The *sequential* claims need one more step: a cumulative fit's ``d_hat / se**2`` is not
a martingale in information time when the tables follow the data (the fit's weights on direct
and indirect comparisons move with the design; on a linear Gaussian model the A/A share of false
orders rose from about 1% to about 4-5% with this scheduling). So an adaptive run combines
per-block fits (:meth:`~uno_tournament.settled.SettledState.look_block`): given the earlier
blocks, each block's estimate is ``N(d, var_block)`` whatever its tables, and their
inverse-variance sum is a martingale with the right clock. ``make bench-settled`` checks both
on engine-played hands: the error rate and the A/A share with this scheduling, against the
reference.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Sequence

from .schedule import (
    DEALS_PER_BLOCK,
    ROTATIONS,
    HandSpec,
    balanced_tables,
    deal_seed,
    hand_id,
    seating,
)
from .settled import PairState, SettledDecision, SettledState

__all__ = ["block_hands", "floor_tables", "next_block_tables", "unresolved"]

SEATS = 4
UNRESOLVED_CAP = 1e6


def _rng(seed: int, block: int, what: str) -> random.Random:
    digest = hashlib.sha256(f"adaptive/{what}/{seed}/{block}".encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


def floor_tables(bots: Sequence[str]) -> int:
    """Tables of each block reserved for the floor: ``ceil((N - 1) / 3)``, a chain of tables
    along the ranking that seats every bot and links them all (consecutive tables share a
    bot)."""
    return max(1, math.ceil((len(bots) - 1) / (SEATS - 1)))


def unresolved(p: PairState, delta: float) -> float:
    """How far an open pair is from a decision: its half-width over the room it has to reach
    one (its distance from 0 to be ordered, or from +-delta to be certified tied), whichever is
    larger (the easier way to a decision); at most :data:`UNRESOLVED_CAP` (a pair without an
    interval). 0 for a decided pair."""
    if p.status != "open":
        return 0.0
    if not (math.isfinite(p.low) and math.isfinite(p.high)):
        return UNRESOLVED_CAP
    mid, half = (p.low + p.high) / 2.0, (p.high - p.low) / 2.0
    room = max(abs(mid), delta - abs(mid))
    if room <= 0.0:
        return UNRESOLVED_CAP
    return min(UNRESOLVED_CAP, half / room)


def next_block_tables(
    state: SettledState,
    last: SettledDecision | None,
    bots: Sequence[str],
    n_tables: int,
    block: int,
    seed: int,
) -> list[tuple[str, ...]]:
    """The tables of block ``block`` (see the module docstring). ``n_tables`` must be at least
    the floor, :func:`floor_tables`; every table is four distinct bots, each in ``bots``'
    order."""
    names = tuple(bots)
    if len(names) < SEATS or len(set(names)) != len(names):
        raise ValueError(f"a table needs four distinct bots, got {len(names)} names")
    if set(names) != set(state.bots):
        raise ValueError("the bots differ from the sequential test's")
    floor = floor_tables(names)
    if n_tables < floor:
        raise ValueError(f"n_tables must be at least {floor} (every bot once a block)")
    if block < 0:
        raise ValueError("block must be at least 0")
    order = {b: i for i, b in enumerate(names)}

    def table(members: Sequence[str]) -> tuple[str, ...]:
        return tuple(sorted(members, key=order.__getitem__))

    if len(names) == SEATS:
        return [names] * n_tables
    if last is None or not last.looked or last.settled:
        return [
            table(t)
            for t in balanced_tables(names, count=n_tables, seed=_seed(seed, block), steps=3000)
        ]
    ranking = list(last.ranking)
    open_pairs: list[tuple[int, float]] = []
    for i, (x, y) in enumerate(itertools.pairwise(ranking)):
        u = unresolved(state.pair(x, y), state.indifference_elo)
        if u > 0.0:
            open_pairs.append((i, u))
    if not open_pairs:
        return [
            table(t)
            for t in balanced_tables(names, count=n_tables, seed=_seed(seed, block), steps=3000)
        ]
    # the floor: a chain of tables along the ranking, each sharing a bot with the next, so every
    # bot plays every block, neighbours meet, and the block alone connects every bot
    out: list[tuple[str, ...]] = []
    for k in range(floor):
        first = min(k * (SEATS - 1), len(ranking) - SEATS)
        out.append(table(ranking[first : first + SEATS]))
    # D'Hondt on the information still needed: a pair's interval narrows as 1/sqrt(information),
    # so it needs about u**2 - 1 times the information it has; each focus table goes to the
    # open pair with the largest need / (tables so far + 1)
    need = [max(u * u - 1.0, 0.05) for _, u in open_pairs]
    given = [0] * len(open_pairs)
    for _ in range(n_tables - floor):
        j = max(range(len(open_pairs)), key=lambda m: (need[m] / (given[m] + 1), -m))
        i = open_pairs[j][0]
        mates = [ranking[k] for k in (i - 1, i + 2, i - 2, i + 3) if 0 <= k < len(ranking)]
        choices = list(itertools.combinations(mates[:4], 2))
        pick = choices[(given[j] + _offset(seed, block, i)) % len(choices)]
        out.append(table([ranking[i], ranking[i + 1], *pick]))
        given[j] += 1
    return out


def _seed(seed: int, block: int) -> int:
    return int.from_bytes(hashlib.sha256(f"adaptive/{seed}/{block}".encode()).digest()[:4], "big")


def _offset(seed: int, block: int, pair: int) -> int:
    return _rng(seed, block, f"pair{pair}").randrange(6)


def block_hands(
    tournament_id: str, tables: Sequence[Sequence[str]], block: int, seed: int
) -> list[HandSpec]:
    """The hands of one block in playing order: deal by deal across the tables, each deal's four
    seat rotations together, with :mod:`uno_tournament.schedule`'s ids, deal seeds and
    seatings (a table's index is its position in ``tables``)."""
    for tb in tables:
        if len(tb) != SEATS or len(set(tb)) != SEATS:
            raise ValueError(f"a table needs four distinct bots, got {list(tb)!r}"[:200])
    out: list[HandSpec] = []
    for d in range(DEALS_PER_BLOCK):
        for t, tb in enumerate(tables):
            s = deal_seed(seed, t, block, d)
            for r in range(ROTATIONS):
                out.append(
                    HandSpec(
                        hand_id(tournament_id, t, block, d, r),
                        t,
                        block,
                        d,
                        r,
                        s,
                        seating(tb, d, r),
                        tuple(tb),
                    )
                )
    return out
