"""Which bots meet, in which seats, on which deals.

Tables, by default: every four-bot combination for up to 12 bots; for more, a greedy design in
which every pair of bots shares about ``pair_meetings`` tables and every bot sits at about as
many tables. That default has a cliff (12 bots play 495 tables, 11,880 hands a block; 13 bots
play 16 tables, 384 hands), so a tournament can instead ask for a size:

* ``hands``: a budget. The design is ``round(hands / 24)`` tables, each played for one block, in
  which every pair of bots meets about equally often and every bot sits about equally often
  (for N <= 12 and a budget of at least one full round robin: whole round robins);
* ``precision_elo``: the half-width of the 95% CI of the gap between two bots of similar
  strength. A gap's standard error is about ``SE_PER_HAND_ELO / sqrt(hands each bot plays)``
  (measured on engine-played hands, see :data:`SE_PER_HAND_ELO`), so the budget is
  ``N / 4 * (1.96 * SE_PER_HAND_ELO / precision) ** 2`` hands.

The trade-off: the precision of every gap grows with the square root of the hands each bot
plays, so halving the intervals costs four times the hands, whatever N; a budget below
``24 * N * (N - 1) / 12`` hands cannot seat every pair together even once, and the ratings then
compare some bots only through common opponents (still unbiased, less precise).

Each table plays duplicate blocks of 24 hands: 6 deals x 4 rotations. Deal ``d`` of a block seats
the table's bots in the ``d``-th circular order (bot 0 fixed, the other three permuted: the 3! = 6
circular orders); rotation ``r`` shifts every bot ``r`` seats on, so over a deal's 4 rotations every
bot holds every seat's cards once. Within a block every bot sits in every seat 6 times and directly
after each other bot 8 times. The dealer is always seat 0, so the deal is fixed by its seed.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from collections.abc import Sequence
from dataclasses import dataclass

SE_PER_HAND_ELO = 460.0
"""Standard error of the rating gap between two bots of similar strength, in Elo, times the
square root of the hands each of them plays (measured on engine-played hands of heuristic bots:
about 430-530 for bots within 200 Elo of each other; more for much weaker bots, whose gaps to
the rest matter less)."""

DEALS_PER_BLOCK = 6
ROTATIONS = 4
HANDS_PER_BLOCK = DEALS_PER_BLOCK * ROTATIONS

CIRCULAR_ORDERS: tuple[tuple[int, ...], ...] = tuple(
    (0, *p) for p in itertools.permutations((1, 2, 3))
)


@dataclass(frozen=True, slots=True)
class HandSpec:
    """One planned hand."""

    hand_id: str
    table: int
    block: int
    deal: int
    rotation: int
    seed: int
    """Match seed of the deal (same seed and dealer 0: same shuffled cards)."""
    bots: tuple[str, ...]
    """Bot name per seat."""
    table_bots: tuple[str, ...] = ()
    """The table's four bots in the design's order (``seating(table_bots, deal, rotation)``
    gives ``bots``)."""

    @property
    def deal_id(self) -> str:
        return f"t{self.table}/b{self.block}/d{self.deal}"


MAX_PLAN_HANDS = 2_000_000
"""The most hands one run plans. A run holds its whole plan in memory (about 300 bytes a hand,
and a sequential run's budget is planned in full), so a plan of 10,000,000 hands took 3.5 GB and
more than a minute before the run's first line; 2,000,000 hands are days of play on one machine
(a longer tournament is several runs, or shards: docs/scale-out.md)."""


def plan_size_problem(
    n_bots: int,
    *,
    blocks: int,
    hands: int,
    precision_elo: float,
    pair_meetings: int,
    max_hands: int,
    sequential: bool,
) -> str | None:
    """Why a tournament's plan is too large to make (the field that sizes it, and what to do), or
    ``None``. For ``blocks`` the size is a lower bound: all C(N, 4) tables up to 12 bots, else
    the ``pair_meetings * C(N, 2) / 6`` tables a balanced design needs at least."""
    if sequential:
        size, field = max_hands, "max_hands"
    elif precision_elo > 0:
        size, field = hands_for_precision(precision_elo, n_bots), "precision_elo"
    elif hands > 0:
        size, field = hands, "hands"
    else:
        n = n_bots
        tables = math.comb(n, 4) if n <= 12 else math.ceil(pair_meetings * n * (n - 1) / 12)
        size, field = blocks * tables * HANDS_PER_BLOCK, "blocks"
    if size <= MAX_PLAN_HANDS:
        return None
    return (
        f"tournament.{field}: plans {size:,} hands, more than the {MAX_PLAN_HANDS:,} one run "
        "holds in memory; play it as several runs, or ask less of one"
    )


def hands_for_precision(precision_elo: float, n_bots: int) -> int:
    """Hands a design needs for a 95% CI of about +-``precision_elo`` on a gap."""
    per_bot = (1.959963984540054 * SE_PER_HAND_ELO / precision_elo) ** 2
    return math.ceil(per_bot * n_bots / 4)


def expected_precision(hands: int, n_bots: int) -> float:
    """The half-width (Elo) of the 95% CI of a gap between two similar bots after ``hands``."""
    per_bot = 4 * hands / n_bots
    return 1.959963984540054 * SE_PER_HAND_ELO / math.sqrt(per_bot) if per_bot else math.inf


@dataclass(frozen=True)
class Design:
    """The tables and how many duplicate blocks each plays."""

    tables: list[tuple[str, ...]]
    blocks: int
    reason: str
    """How the size was chosen, for the run's first line."""

    @property
    def hands(self) -> int:
        return len(self.tables) * self.blocks * HANDS_PER_BLOCK


def design(
    bots: Sequence[str],
    *,
    blocks: int = 1,
    hands: int = 0,
    precision_elo: float = 0.0,
    pair_meetings: int = 1,
    seed: int = 1,
) -> Design:
    """The tables of a tournament: by blocks (the default design), a hand budget or a precision.

    See the module docstring for the trade-off."""
    n = len(bots)
    if n < 4:
        raise ValueError(f"a table needs four distinct bots, got {n}")
    if precision_elo > 0:
        hands = hands_for_precision(precision_elo, n)
        why = f"precision +-{precision_elo:g} Elo needs about {hands} hands"
    elif hands > 0:
        why = f"budget of {hands} hands"
    else:
        tables = tables_for(bots, pair_meetings=pair_meetings, seed=seed)
        return Design(tables, blocks, f"{blocks} block{'s' if blocks != 1 else ''}")
    units = max(math.ceil(n / 4), round(hands / HANDS_PER_BLOCK))
    full = math.comb(n, 4)
    if n <= 12 and units >= full:
        whole = max(1, round(units / full))
        played, tables = full * whole, [tuple(c) for c in itertools.combinations(bots, 4)]
    else:
        whole, played = 1, units
        tables = balanced_tables(bots, count=units, seed=seed)
    if played * HANDS_PER_BLOCK != hands:  # a table plays whole duplicate blocks of 24
        floor = math.ceil(n / 4)
        least = (
            f", and at least {floor} tables so that every one of the {n} bots plays"
            if units == floor and floor > round(hands / HANDS_PER_BLOCK)
            else ""
        )
        why += f", played as {played * HANDS_PER_BLOCK} (whole tables of {HANDS_PER_BLOCK}{least})"
    return Design(tables, whole, why)


def split_warning(tables: Sequence[Sequence[str]]) -> list[str]:
    """A warning line when the planned tables split the bots into groups that never share a
    table, directly or through other bots: the ratings can then compare bots within a group
    only (an examination's 48 hands of 8 bots were two tables of four, and the start line
    promised a precision no cross-table pair could have). Empty when the tables link them."""
    parent: dict[str, str] = {}

    def root(b: str) -> str:
        while parent.setdefault(b, b) != b:
            parent[b] = parent[parent[b]]
            b = parent[b]
        return b

    for tb in tables:
        for b in tb[1:]:
            parent[root(b)] = root(tb[0])
    groups: dict[str, list[str]] = {}
    for b in parent:
        groups.setdefault(root(b), []).append(b)
    if len(groups) < 2:
        return []
    n = len(parent)
    need = HANDS_PER_BLOCK * math.ceil((n - 1) / 3)
    shown = "; ".join(", ".join(g[:6]) + (", ..." if len(g) > 6 else "") for g in groups.values())
    return [
        f"warning: these tables split the {n} bots into {len(groups)} groups that never meet "
        f"({shown}), so the ratings will compare bots within a group only; plan at least "
        f"{need} hands (hands = {need}, or more blocks) to link them all"
    ]


def tables_for(
    bots: Sequence[str], *, pair_meetings: int = 1, seed: int = 1
) -> list[tuple[str, ...]]:
    """The tables: all C(N,4) for N <= 12, else a balanced greedy design."""
    n = len(bots)
    if n < 4:
        raise ValueError(f"a table needs four distinct bots, got {n}")
    if n <= 12:
        return [tuple(c) for c in itertools.combinations(bots, 4)]
    return balanced_tables(bots, pair_meetings=pair_meetings, seed=seed)


def balanced_tables(
    bots: Sequence[str],
    *,
    pair_meetings: int = 1,
    count: int | None = None,
    seed: int = 1,
    steps: int = 30_000,
) -> list[tuple[str, ...]]:
    """A design in which every pair of bots shares about ``pair_meetings`` tables (a table covers
    6 pairs) and every bot sits at about as many tables: greedy (each table starts from the pair
    that met least and adds the bots that met the chosen ones least) until every pair has met
    ``pair_meetings`` times, then a seeded local search
    that swaps single bots (simulated annealing on the squared deviations of the pair and bot
    counts from their means, with a penalty on pairs that meet too rarely).

    With ``count``, exactly that many tables (pairs then meet about ``6 * count / C(N, 2)``
    times, possibly less than once)."""
    n = len(bots)
    exact = count is not None
    if count is not None:
        pair_meetings = max(0, (6 * count) // (n * (n - 1) // 2))
    else:
        count = math.ceil(pair_meetings * n * (n - 1) / 12)
    rng = random.Random(seed)
    meet = [[0] * n for _ in range(n)]
    used = [0] * n
    tables: list[list[int]] = []
    while len(tables) < count or (
        not exact
        and min(meet[i][j] for i, j in itertools.combinations(range(n), 2)) < pair_meetings
    ):
        jitter = [rng.random() for _ in range(n)]
        a, b = min(
            itertools.combinations(range(n), 2),
            key=lambda p: (meet[p[0]][p[1]], used[p[0]] + used[p[1]], jitter[p[0]] + jitter[p[1]]),
        )
        chosen = [a, b]
        while len(chosen) < 4:
            best = min(
                (i for i in range(n) if i not in chosen),
                key=lambda i: (
                    max(meet[i][j] for j in chosen),
                    sum(meet[i][j] for j in chosen),
                    used[i],
                    jitter[i],
                ),
            )
            chosen.append(best)
        for x, y in itertools.combinations(chosen, 2):
            meet[x][y] += 1
            meet[y][x] += 1
        for i in chosen:
            used[i] += 1
        tables.append(chosen)
    count = len(tables)
    target_pair = 6 * count / (n * (n - 1) / 2)
    target_use = 4 * count / n

    def pair_cost(m: int) -> float:  # squared deviation, and a pair below pair_meetings costs 8
        return (m - target_pair) ** 2 + 8.0 * max(0, pair_meetings - m)

    for step in range(steps):
        temp = 0.6 * (1.0 - step / steps) + 1e-3
        t = rng.randrange(count)
        pos = rng.randrange(4)
        old = tables[t][pos]
        new = rng.randrange(n)
        if new in tables[t]:
            continue
        others = [x for k, x in enumerate(tables[t]) if k != pos]
        delta = 0.0
        for o in others:
            m_old, m_new = meet[old][o], meet[new][o]
            delta += pair_cost(m_old - 1) - pair_cost(m_old)
            delta += pair_cost(m_new + 1) - pair_cost(m_new)
        u_old, u_new = used[old], used[new]
        delta += (u_old - 1 - target_use) ** 2 - (u_old - target_use) ** 2
        delta += (u_new + 1 - target_use) ** 2 - (u_new - target_use) ** 2
        if delta <= 0 or rng.random() < math.exp(-delta / temp):
            for o in others:
                meet[old][o] -= 1
                meet[o][old] -= 1
                meet[new][o] += 1
                meet[o][new] += 1
            used[old] -= 1
            used[new] += 1
            tables[t][pos] = new
    return [tuple(bots[i] for i in sorted(tb)) for tb in tables]


def deal_seed(tournament_seed: int, table: int, block: int, deal: int) -> int:
    digest = hashlib.sha256(f"{tournament_seed}/{table}/{block}/{deal}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def seating(table_bots: Sequence[str], deal: int, rotation: int) -> tuple[str, ...]:
    """Bot per seat for a deal (circular order) and rotation."""
    order = CIRCULAR_ORDERS[deal % DEALS_PER_BLOCK]
    return tuple(table_bots[order[(s - rotation) % ROTATIONS]] for s in range(ROTATIONS))


def hand_id(tournament_id: str, table: int, block: int, deal: int, rotation: int) -> str:
    return f"{tournament_id}/t{table}/b{block}/d{deal}/r{rotation}"


def plan(
    tournament_id: str,
    bots: Sequence[str],
    *,
    blocks: int,
    seed: int,
    pair_meetings: int = 1,
    hands: int = 0,
    precision_elo: float = 0.0,
) -> list[HandSpec]:
    """Every hand of the tournament, in playing order: block by block, and within a block deal by
    deal across all tables, so partial results stay balanced."""
    chosen = design(
        bots,
        blocks=blocks,
        hands=hands,
        precision_elo=precision_elo,
        pair_meetings=pair_meetings,
        seed=seed,
    )
    tables = chosen.tables
    if chosen.hands > MAX_PLAN_HANDS:  # config checks a lower bound; this is the exact size
        raise ValueError(
            f"the design has {chosen.hands:,} hands, more than the {MAX_PLAN_HANDS:,} one run "
            "holds in memory; play it as several runs, or ask less of one"
        )
    out: list[HandSpec] = []
    for b in range(chosen.blocks):
        for d in range(DEALS_PER_BLOCK):
            for t, tb in enumerate(tables):
                s = deal_seed(seed, t, b, d)
                for r in range(ROTATIONS):
                    out.append(
                        HandSpec(
                            hand_id(tournament_id, t, b, d, r),
                            t,
                            b,
                            d,
                            r,
                            s,
                            seating(tb, d, r),
                            tuple(tb),
                        )
                    )
    return out


# ------------------------------------------------------------------------------ shards


def shard_units(
    plan_: Sequence[HandSpec], count: int, seed: int
) -> dict[tuple[int, int, int], int]:
    """The shard (0..count-1) of each deal of the plan, keyed ``(table, block, deal)``.

    The unit of a partition is a table's deal: its 4 rotations, the duplicate set whose hands
    share one deck. The deals are put in a seeded order (SHA-256 of ``seed/table/block/deal``)
    and dealt to the shards in turn, so every shard gets the same number of deals, give or take
    one, and a mix of every table and block. The partition depends on the tournament seed and
    the number of shards only; a hand's deal seed, seating and id never depend on it, so a
    hand plays the same whichever shard plays it."""
    if count < 1:
        raise ValueError(f"the number of shards must be at least 1, got {count}")
    units = sorted(
        {(h.table, h.block, h.deal) for h in plan_},
        key=lambda u: hashlib.sha256(f"{seed}/{u[0]}/{u[1]}/{u[2]}".encode()).digest(),
    )
    return {u: k % count for k, u in enumerate(units)}


def partition(plan_: Sequence[HandSpec], index: int, count: int, seed: int) -> list[HandSpec]:
    """The hands of shard ``index`` of ``count``, in playing order (see :func:`shard_units`)."""
    if not 0 <= index < count:
        raise ValueError(f"shard index {index} is not in 0..{count - 1}")
    owner = shard_units(plan_, count, seed)
    return [h for h in plan_ if owner[(h.table, h.block, h.deal)] == index]
