"""Who plays next in a league: the tables of one block.

A block seats each chosen version at most once; each table of four then plays the block's
duplicate deals with rotated seats, as a tournament's tables do (:mod:`uno_tournament.schedule`).
The choice answers what other ladders got wrong:

- **New versions first, by hands played, not by uncertainty.** Versions are taken in order of
  the hands they have played (fewest first). A version's uncertainty grows when it crashes or
  forfeits; ordering by it gave Halite's crashing bot most of the games. Hands played only grow,
  whatever happens in them, so a crashing version gets its share and no more.
- **No starvation.** With ``V`` versions and ``T`` tables a block seats the ``4T`` versions with
  the fewest hands, ties broken by a seeded hash. A version submitted now has 0 hands, fewer
  than any version that has played, so it sits at a table of the very next block: its wait for
  its first hands is at most one block (:func:`first_hands_bound`).
- **One bot per author at a table** (by default): an author's feeder bots can never share a table
  with the bot they would feed. A version whose author is already seated at every open table
  waits for the next block (it is first in line then).
- **Retired and given-up versions are not scheduled**: the caller passes only active ones.

Beyond the floor the league schedules for information (:func:`information_order`): after each
refit the versions no fit has rated yet, then the two versions of each adjacent pair of the
ranking that is still open (its 95% interval on the gap covers 0), least resolved first, go to
the front of the line (``prefer``), after the ones below ``floor_hands``. The league sets that floor
at :data:`FLOOR_SHARE` of the mean hands of its versions, so scheduling for information never
starves a version whose pairs are decided: every version keeps at least half the mean.
"""

from __future__ import annotations

import hashlib
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

from .. import schedule
from ..rating_model import Ratings

__all__ = ["FLOOR_SHARE", "Entry", "block_specs", "information_order", "next_tables"]

SEATS = 4


@dataclass(frozen=True)
class Entry:
    """An active version as matchmaking sees it."""

    key: str
    """``name@version``."""
    author: str
    hands: int
    """Hands it has played (forfeits included)."""


def _tiebreak(seed: int, block: int, key: str) -> bytes:
    return hashlib.sha256(f"{seed}/{block}/{key}".encode()).digest()


def next_tables(
    entries: Sequence[Entry],
    n_tables: int,
    *,
    seed: int,
    block: int,
    one_per_author: bool = True,
    prefer: Sequence[str] = (),
    floor_hands: int = 0,
) -> list[tuple[str, ...]]:
    """The tables of block ``block``: up to ``n_tables`` tables of four distinct versions
    (fewer when too few versions or authors are left). Deterministic in its arguments."""
    if n_tables < 1:
        raise ValueError(f"n_tables must be at least 1, got {n_tables}")
    keys = [e.key for e in entries]
    if len(set(keys)) != len(keys):
        raise ValueError("each version may be listed once")
    preferred = set(prefer)

    def order(e: Entry) -> tuple[int, int, int, bytes]:
        below_floor = 0 if e.hands < floor_hands else 1
        return (below_floor, 0 if e.key in preferred else 1, e.hands, _tiebreak(seed, block, e.key))

    line = sorted(entries, key=order)
    tables: list[list[Entry]] = []
    for e in line:
        placed = False
        for t in tables:
            # authors compared without case: "Alice" and "alice" are one author here
            mine = e.author.casefold()
            if len(t) < SEATS and not (
                one_per_author and any(o.author.casefold() == mine for o in t)
            ):
                t.append(e)
                placed = True
                break
        if not placed and len(tables) < n_tables:
            tables.append([e])
            placed = True
        if len(tables) == n_tables and all(len(t) == SEATS for t in tables):
            break
    return [tuple(e.key for e in t) for t in tables if len(t) == SEATS]


def block_specs(
    tid: str, seed: int, block: int, tables: Sequence[tuple[str, ...]]
) -> list[schedule.HandSpec]:
    """The hands of one block at these tables, as a tournament's block has them: each table
    plays :data:`~uno_tournament.schedule.DEALS_PER_BLOCK` deals, each in its
    :data:`~uno_tournament.schedule.ROTATIONS` seat rotations (deal by deal across the tables)."""
    out = []
    for d in range(schedule.DEALS_PER_BLOCK):
        for t, tb in enumerate(tables):
            s = schedule.deal_seed(seed, t, block, d)
            for r in range(schedule.ROTATIONS):
                out.append(
                    schedule.HandSpec(
                        schedule.hand_id(tid, t, block, d, r),
                        t,
                        block,
                        d,
                        r,
                        s,
                        schedule.seating(tb, d, r),
                        tuple(tb),
                    )
                )
    return out


FLOOR_SHARE = 0.5
"""While the league prefers the versions of open pairs, a version with fewer hands than this
share of the mean goes first again (and a new version, with none, at once)."""
Z_OPEN = 1.96
"""A pair is open while its gap is within this many standard errors of 0 (a 95% interval)."""


def information_order(ratings: Ratings | None, keys: Sequence[str]) -> list[str]:
    """The versions (of ``keys``) to seat first for information: those the fit has not rated,
    then both versions of each open adjacent pair of the ranking (gap / its standard error below
    :data:`Z_OPEN`, from the fit's covariance), the least resolved pair first; a version in two
    open pairs is listed once, at its first place."""
    rated = set(ratings.bots) if ratings is not None else set()
    out = [k for k in keys if k not in rated]
    if ratings is None:
        return out
    idx = {b: i for i, b in enumerate(ratings.bots)}
    ranked = sorted((k for k in keys if k in idx), key=lambda k: -float(ratings.elo[idx[k]]))
    pairs = []
    for a, b in itertools.pairwise(ranked):
        i, j = idx[a], idx[b]
        var = float(ratings.cov[i, i] + ratings.cov[j, j] - 2 * ratings.cov[i, j])
        gap = abs(float(ratings.elo[i] - ratings.elo[j]))
        z = gap / var**0.5 if var > 0 else float("inf")
        if z < Z_OPEN:
            pairs.append((z, a, b))
    for _, a, b in sorted(pairs):
        out += [k for k in (a, b) if k not in out]
    return out
