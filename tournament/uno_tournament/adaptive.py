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
* After it, only the **bots in play** sit at the block's tables: both bots of every open
  adjacent pair of the current ranking and the two nearest on each side
  (:func:`active_ranks`; at least four). Bots whose pairs are all decided and far from an open
  one sit the block out: their hands would add little to the open pairs. (Their claims stand:
  the intervals are running intersections, and a pair with no hands in a block gets no
  update.)
* The **floor** first: ``ceil((M - 1) / 3)`` tables (M bots in play; 3 for all 8) form a chain
  along the ranking of the bots in play (ranks 1-4, 4-7, ...; the last table the last four),
  consecutive tables sharing a bot. So every bot in play plays at least 24 hands a block
  (``HANDS_PER_BLOCK``), neighbours meet, and the block's hands alone connect the bots in
  play: a fit of one block rates every pair among them, which
  :meth:`uno_tournament.settled.SettledState.look_block` needs.
* The **focus tables** (the rest), one at a time, greedily: the four bots in play whose table
  seats the most still-needed information. An open pair whose half-width is ``u`` times the room
  it has to a decision (:func:`unresolved`) needs about ``u**2 - 1`` times the information it
  has (an interval narrows as 1/sqrt(information)); a table is worth the sum, over the open
  adjacent pairs it seats together, of that need over (tables seating the pair so far + 1)
  (D'Hondt, shared between pairs). Both bots of an open pair at the same table compare them
  directly on the same cards, which is where the information about their gap is, and a table
  of four neighbours in the ranking serves three adjacent pairs at once: when the open pairs
  are neighbours (the close gaps of a ladder usually are) most focus tables seat all of them.
  Ties go to the table spanning the fewest ranks, then to an order seeded by ``seed`` and
  ``block``.
* When no adjacent pair is open (the run has settled) the next block is the balanced design
  again.

On the linear Gaussian model of the engine reference's ladder (``tests/tournament/
test_adaptive.py``) these choices use 0.63 of the hands of the fixed design that reaches the
same guarantee (:mod:`uno_tournament.bench_settled`), against 0.72 with every bot at every block
and one open pair a focus table; each of the two changes alone gives 0.67-0.68.

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

__all__ = ["active_ranks", "block_hands", "floor_tables", "next_block_tables", "unresolved"]

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
    # the bots in play: both bots of every open pair and the two nearest on each side (the
    # focus tables' candidates), at least four; the others sit the block out
    active = active_ranks(ranking, [i for i, _ in open_pairs])
    chain = [ranking[k] for k in active]
    # the floor: a chain of tables along the ranking of the bots in play, each sharing a bot with
    # the next, so each of them plays every block, neighbours meet, and the block alone
    # connects them (its fit rates every pair among them)
    out: list[tuple[str, ...]] = []
    for k in range(floor_tables(chain)):
        first = min(k * (SEATS - 1), len(chain) - SEATS)
        out.append(table(chain[first : first + SEATS]))
    floor = len(out)
    # the focus tables, one at a time, greedily: the table of four bots in play that seats the
    # most still-needed information. A pair's interval narrows as 1/sqrt(information), so an open
    # pair whose half-width is u times its room needs about u**2 - 1 times the information it
    # has; a table is worth the sum, over the open adjacent pairs it seats together, of
    # need / (tables seating that pair so far + 1) (D'Hondt, shared: a table of four
    # neighbours serves three adjacent pairs at once); ties go to the table spanning the fewest
    # ranks, then to a seeded order.
    need = {i: max(u * u - 1.0, 0.05) for i, u in open_pairs}
    given = dict.fromkeys(need, 0)
    rank_of = {b: k for k, b in enumerate(ranking)}

    def seats(members: Sequence[str]) -> list[int]:
        ranks = sorted(rank_of[b] for b in members)
        return [i for i in ranks if i in need and i + 1 in ranks]

    for tb in out:
        for i in seats(tb):
            given[i] += 1
    candidates = [c for c in itertools.combinations(chain, SEATS) if seats(c)]
    shuffled = list(range(len(candidates)))
    _rng(seed, block, "focus").shuffle(shuffled)
    tiebreak = dict(zip(range(len(candidates)), shuffled, strict=True))
    span = [max(map(rank_of.__getitem__, c)) - min(map(rank_of.__getitem__, c)) for c in candidates]
    for _ in range(n_tables - floor):
        best = max(
            range(len(candidates)),
            key=lambda m: (
                sum(need[i] / (given[i] + 1) for i in seats(candidates[m])),
                -span[m],
                tiebreak[m],
            ),
        )
        out.append(table(candidates[best]))
        for i in seats(candidates[best]):
            given[i] += 1
    return out


def active_ranks(ranking: Sequence[str], open_at: Sequence[int]) -> list[int]:
    """Ranks (0 = strongest) of the bots a block after the first look seats: for every open
    adjacent pair ``(i, i + 1)`` the ranks ``i - 2 .. i + 3`` (the pair and the four bots its focus
    tables draw from), widened around them to at least four bots; ascending."""
    n = len(ranking)
    ranks = {k for i in open_at for k in range(i - 2, i + 4) if 0 <= k < n}
    lo, hi = (min(ranks), max(ranks)) if ranks else (0, 0)
    while len(ranks) < min(SEATS, n):
        lo, hi = max(0, lo - 1), min(n - 1, hi + 1)
        ranks |= {lo, hi}
    return sorted(ranks)


def _seed(seed: int, block: int) -> int:
    return int.from_bytes(hashlib.sha256(f"adaptive/{seed}/{block}".encode()).digest()[:4], "big")


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
