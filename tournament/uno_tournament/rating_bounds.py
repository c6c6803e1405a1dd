"""Ratings the results bound on one side only.

A bot that went out first in every rated hand it played has no maximum-likelihood rating: the
likelihood keeps rising as its rating goes to +infinity. So has a group of bots that went out
ahead of the rest in every hand they shared with them, and, downwards, a bot that never went out
first (a bot that crashed every hand, under the "last" forfeit policy). The final-table fit then
falls back to a weak prior (:func:`uno_tournament.standings.fit_ratings`), which keeps the numbers
finite; but the prior's estimate of such a bot is an artefact and its sandwich error is near 0
(every choice it made was already predicted). An examination found the always-winning bot's
interval covering its true rating in 14 of 67 small tournaments, and the other bots' (centred on
a mean that included the runaway estimate) in 57%.

What is reported instead (:func:`going_out_sides`, :func:`bound_one_sided`):

* the going-out graph (an edge from each hand's first-out bot to every other rated bot at the
  table) shows which bots the results compare both ways: its largest strongly connected group
  is the *frame*. A group that reaches the frame but is not reached from it went out ahead of it
  whenever they met (+1); a group the frame reaches but that does not reach it never did (-1);
* the ratings are centred on the frame (mean 0 over it); its intervals are the fit's, in that
  frame;
* a bot above or below the frame gets one side only, ``[low, +inf)`` or ``(-inf, high]``: the
  rating at which what its group showed against the frame becomes a 2.5% event, the group's
  other ratings moving with it and the frame held at its estimates. In each hand where the group
  met the frame, the chance that the frame did not go out first (+1), or the group did not (-1),
  comes from the model's first stage, without seat terms (results like these do not identify
  them). Within a deal the hands may be dependent in any way, so a deal counts with the least
  likely of its hands (an upper bound on the chance of the deal's outcome whatever the
  dependence), and deals multiply. So the bound is a one-sided 97.5% limit, as each end of the
  two-sided 95% intervals is, conditional on the frame's estimates (Jensen's inequality sets
  how they are pooled, see :func:`_chances`);
* a pair with such a bot is called different when the two intervals do not overlap, or when
  one of the two finished ahead of the other in every hand they shared in enough deals
  (:func:`always_ahead`, a sign test on deals that reads the whole finishing order, where the
  limits read going out first only); its likelihood of superiority, a normal approximation with
  nothing to approximate here, is not given.

Separation that needs the seat terms (a small tournament's winners explained exactly by bot and
seat together, no bot one-sided) is handled before this: the fit is redone without seat terms
(:func:`uno_tournament.standings.fit_ratings`).
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

from .rating_model import ELO_PER_NAT, BoolArray, FloatArray, IntArray, Outcomes, Ratings

TAIL = 0.025
"""The chance, at the bound, of the results a one-sided bot showed (each end of a 95% interval)."""


def one_sided(outcomes: Outcomes, n_bots: int, places: str) -> IntArray:
    """Per bot: +1 if it was never behind another rated seat and at least once ahead of one, -1
    if it was never ahead of one (``places="winner"``: never went out first) and at least once
    behind, else 0. Only hands with two rated seats or more count."""
    bots, pl = outcomes.bots, outcomes.places
    real = bots >= 0
    usable = real.sum(axis=1) >= 2
    big = np.iinfo(np.int64).max
    best = np.where(real, pl, big).min(axis=1)
    worst = np.where(real, pl, -big).max(axis=1)
    ahead = np.zeros(n_bots, dtype=np.bool_)  # once ahead of another rated seat
    behind = np.zeros(n_bots, dtype=np.bool_)
    first = np.zeros(n_bots, dtype=np.bool_)  # once in the first place group, and out first
    went_out = outcomes.went_out  # the hand's first-out seat is rated (Outcomes.out_first)
    if places == "winner":  # a hand whose winner is not rated tells the winner model nothing
        usable = usable & went_out
    for s in range(bots.shape[1]):
        rows = usable & real[:, s]
        who = bots[rows, s]
        mine = pl[rows, s]
        ahead[who[mine < worst[rows]]] = True
        behind[who[mine > best[rows]]] = True
        first[who[(mine == best[rows]) & went_out[rows]]] = True
    side = np.zeros(n_bots, dtype=np.int64)
    side[ahead & ~behind] = 1
    never_up = ~first if places == "winner" else ~ahead
    side[never_up & behind] = -1
    return side


def going_out_graph(outcomes: Outcomes, n_bots: int) -> BoolArray:
    """``beat[i, j]``: bot ``i`` went out first (or tied first) in a rated hand with ``j``."""
    bots, pl = outcomes.bots, outcomes.places
    real = bots >= 0
    usable = real.sum(axis=1) >= 2
    best = np.where(real, pl, np.iinfo(np.int64).max).min(axis=1)
    # a hand whose first-out seat is not rated (Outcomes.out_first) has no going-out edge
    top = real & (pl == best[:, None]) & (usable & outcomes.went_out)[:, None]
    beat = np.zeros((n_bots, n_bots), dtype=np.bool_)
    for a in range(bots.shape[1]):
        for b in range(bots.shape[1]):
            if a != b:
                rows = top[:, a] & real[:, b] & ~top[:, b]
                beat[bots[rows, a], bots[rows, b]] = True
    return beat


def _reach(edge: BoolArray) -> BoolArray:
    """Reflexive-transitive closure of a directed graph (repeated squaring)."""
    r = (edge | np.eye(len(edge), dtype=np.bool_)).astype(np.float32)
    while True:
        nxt = (r @ r > 0).astype(np.float32)
        if np.array_equal(nxt, r):
            return r > 0
        r = nxt


def going_out_sides(
    outcomes: Outcomes, n_bots: int, names: Sequence[str] | None = None
) -> IntArray:
    """Per bot, which way the going-out results bound its rating (0, +1, -1; see the module
    docstring). The frame is the largest strongly connected group of the going-out graph (the
    bots that beat each other, directly or through others); a group that reaches it but is not
    reached from it is above it (+1), one it reaches is below (-1). Only bots linked by rated
    hands into one field are placed; with several fields (bots that never met) every bot is 0.

    Groups of one size tie: the frame is then the one that places the most bots (above or
    below it), then the first by name, never by where the bots are listed (an examination:
    one bot going out first in every hand was "reference", with the others bounded below it,
    or the others "two-sided" and it unranked, as the config listed them)."""
    beat = going_out_graph(outcomes, n_bots)
    played = np.zeros(n_bots, dtype=np.bool_)
    played[outcomes.bots[outcomes.bots >= 0]] = True
    side = np.zeros(n_bots, dtype=np.int64)
    if int(played.sum()) < 2:
        return side
    met = _reach(beat | beat.T)
    idx = np.nonzero(played)[0]
    if not met[np.ix_(idx, idx)].all():
        return side
    r = _reach(beat)
    same = r & r.T
    sizes = same[np.ix_(idx, idx)].sum(axis=1)
    sub = r[np.ix_(idx, idx)]
    placed = (sub ^ sub.T).sum(axis=1)  # bots above or below each candidate, not beside it
    label = list(names) if names is not None else [f"{k:09d}" for k in range(n_bots)]
    best = min(
        range(len(idx)),
        key=lambda j: (-int(sizes[j]), -int(placed[j]), label[int(idx[j])], int(idx[j])),
    )
    frame = idx[best]
    for k in idx:
        if same[k, frame]:
            continue
        side[k] = 1 if r[k, frame] else -1 if r[frame, k] else 0
    return side


def _chances(
    outcomes: Outcomes, k: int, elo: FloatArray, side: IntArray
) -> tuple[FloatArray, FloatArray, FloatArray, IntArray]:
    """For bot ``k`` with ``side[k] != 0``, in the rated hands where its group (the bots of its
    side) met the frame (``side == 0``): the group's weight (``exp(theta)`` over its seats, the
    group shifted with ``k``'s rating, so relative to it), the weight of the rest of the table,
    the part of that outside the frame (+1 only), and each hand's unit (its cluster). In every
    such hand a bot above the frame beat the frame to going out (+1: the winner is not in the
    frame), or the group never went out first (-1).
    Seat terms are left out: when one group goes out first in every hand it plays, the first
    stage's seat terms are not identified (a fit put seat 2 at -507 Elo).

    Jensen's inequality makes each bound err on the safe side: for a lower bound (+1) the frame's
    seats each weigh the geometric mean of their weights (never more than their sum; plugged in
    as they are, a few deals' noisy estimates overstate the field and put the bound above the
    truth) and the group's are summed; for an upper bound the other way round. (A margin: with
    the least likely hand of each deal the limits missed in none of 292 small tournaments'
    limits either way.)"""
    bots = outcomes.bots
    real = bots >= 0
    side_of = np.where(real, side[np.maximum(bots, 0)], 2)
    g = real & (side_of == side[k])
    f = real & (side_of == 0)
    x = real & ~g & ~f
    # only hands whose first-out seat is rated: the chances below are of going out first
    rows = np.nonzero(g.any(axis=1) & f.any(axis=1) & (real.sum(axis=1) >= 2) & outcomes.went_out)[
        0
    ]
    theta = np.asarray(elo, dtype=np.float64) / ELO_PER_NAT
    t = np.where(real[rows], theta[np.maximum(bots[rows], 0)], 0.0)
    g, f, x = g[rows], f[rows], x[rows]

    def pooled(mask: BoolArray, values: FloatArray, arithmetic: bool) -> FloatArray:
        count = mask.sum(axis=1)
        if arithmetic:
            return np.asarray(np.where(mask, np.exp(values), 0.0).sum(axis=1), dtype=np.float64)
        mean = np.where(mask, values, 0.0).sum(axis=1) / np.maximum(count, 1)
        return np.asarray(count * np.exp(mean), dtype=np.float64)

    up = bool(side[k] > 0)
    group = pooled(g, t - theta[k], arithmetic=up)  # relative to k: shifted with k's rating
    extra = pooled(x, t, arithmetic=True)  # the other seats outside the frame, as estimated
    rest = pooled(f, t, arithmetic=not up) + extra
    return group, rest, extra if up else np.zeros_like(extra), outcomes.cluster[rows]


def _bound(
    group: FloatArray, rest: FloatArray, extra: FloatArray, unit: IntArray, side: int
) -> float:
    """The rating (Elo, in the frame's centring) at which the least likely hand of each unit,
    multiplied over the units, has chance :data:`TAIL`: a bot above the frame went out first in
    every hand (``side`` +1; ``extra`` is the weight of such bots outside the group, part of
    ``rest``), or the group never did (-1)."""
    if group.size == 0:
        return math.nan
    _, inverse = np.unique(unit, return_inverse=True)
    n_units = int(inverse.max()) + 1

    def log_chance(elo: float) -> float:
        x = group * math.exp(min(max(elo / ELO_PER_NAT, -700.0), 700.0))
        p = (x + extra) / (x + rest) if side > 0 else 1.0 - x / (x + rest)
        worst = np.ones(n_units)
        np.minimum.at(worst, inverse, p)
        with np.errstate(divide="ignore"):
            return float(np.log(worst).sum())

    target = math.log(TAIL)
    lo, hi = -1e5, 1e5
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        # side +1: the chance rises with the rating; -1: it falls
        if (log_chance(mid) < target) == (side > 0):
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-6:
            break
    return 0.5 * (lo + hi)


def always_ahead(outcomes: Outcomes, n_bots: int, side: IntArray) -> BoolArray:
    """``out[o, i]`` for each pair with a bot of non-zero ``side``: ``o`` finished ahead of
    ``i`` in every hand the two shared in so many of the deals they met in that, were ``i`` at
    least as good as ``o``, it would be a :data:`TAIL` event or rarer.

    A one-sided bound reads going out first only, so a bot that finished behind every other bot
    in every hand, but did not go out first in enough deals to say so at 2.5%, kept an upper
    limit above the others' lower limits: an examination's always-last bot, 24 of 24 hands
    behind each of three bots, was ranked 1-4. This test reads the whole finishing order and
    assumes no model. "``i`` at least as good as ``o``" is taken as: in each deal, averaged over
    the hands the two shared in it (seat rotation), ``o`` finishes ahead of ``i`` at most half the
    time. The chance that ``o`` is ahead in all of those hands is at most that average, so at most
    1/2 whatever the hands' dependence within the deal; deals are dealt independently, so the
    number of deals ``o`` swept is at most Binomial(deals met, 1/2), whose upper tail is the test.
    Ties count for neither. Like the one-sided limits, it is one end of a 95% comparison per pair,
    with no correction for the number of pairs."""
    out = np.zeros((n_bots, n_bots), dtype=np.bool_)
    bots, places, cluster = outcomes.bots, outcomes.places, outcomes.cluster
    n_cl = max(outcomes.n_clusters, 1)
    for i in np.nonzero(side != 0)[0]:
        rows, seats = np.nonzero(bots == i)
        if rows.size == 0:
            continue
        mine = places[rows, seats][:, None]
        others, their = bots[rows], places[rows]
        deal = np.broadcast_to(cluster[rows][:, None], others.shape)
        met = (others >= 0) & (others != i)
        shared = np.zeros((n_bots, n_cl), dtype=np.int64)
        behind = np.zeros_like(shared)  # hands in which ``i`` finished behind the other
        before = np.zeros_like(shared)  # hands in which ``i`` finished ahead of it
        np.add.at(shared, (others[met], deal[met]), 1)
        sel = met & (their < mine)
        np.add.at(behind, (others[sel], deal[sel]), 1)
        sel = met & (their > mine)
        np.add.at(before, (others[sel], deal[sel]), 1)
        together = shared > 0
        deals = together.sum(axis=1)
        swept_by = (together & (behind == shared)).sum(axis=1)
        swept = (together & (before == shared)).sum(axis=1)
        for o in np.nonzero(deals > 0)[0]:
            if _half_tail(int(deals[o]), int(swept_by[o])) <= TAIL:
                out[o, i] = True
            if _half_tail(int(deals[o]), int(swept[o])) <= TAIL:
                out[i, o] = True
    return out


def _half_tail(n: int, k: int) -> float:
    """P(Binomial(n, 1/2) >= k), summed in logs (a run has thousands of deals)."""
    if k <= 0:
        return 1.0
    if k > n:
        return 0.0
    return _half_tail_sum(n, k)


def _half_tail_sum(n: int, k: int) -> float:
    log_n = math.lgamma(n + 1) - n * math.log(2.0)
    total = 0.0
    for j in range(k, n + 1):
        term = math.exp(log_n - math.lgamma(j + 1) - math.lgamma(n - j + 1))
        total += term
        if term < 1e-17 * total and 2 * j > n:
            break
    return min(total, 1.0)


def bound_one_sided(r: Ratings, outcomes: Outcomes, side: IntArray) -> Ratings:
    """``r`` (a fit over ``outcomes``, bots indexed alike) centred on the bots with ``side == 0``
    and with the one-sided bounds of the others (see the module docstring)."""
    n = len(r.bots)
    two = side == 0
    if not (side != 0).any() or not two.any():
        return r
    w = np.where(two, 1.0 / int(two.sum()), 0.0)
    a = np.eye(n) - np.outer(np.ones(n), w)
    elo = a @ r.elo
    cov = a @ r.cov @ a.T
    bound = np.full(n, math.nan)
    for k in np.nonzero(side != 0)[0]:
        group, rest, extra, unit = _chances(outcomes, int(k), elo, side)
        bound[k] = _bound(group, rest, extra, unit, int(side[k]))
    return dataclasses.replace(
        r, elo=np.asarray(elo), cov=np.asarray(cov), side=side.astype(np.int64), bound=bound
    )


def places_both_ways(outcomes: Outcomes, n_bots: int) -> BoolArray:
    """``both[i, j]``: bots ``i`` and ``j`` each finished ahead of the other in some rated hand,
    in the whole finishing order (places 2-4 too, where the going-out graph reads only who went
    out first)."""
    bots, pl = outcomes.bots, outcomes.places
    real = bots >= 0
    ahead = np.zeros((n_bots, n_bots), dtype=np.bool_)
    for a in range(bots.shape[1]):
        for b in range(bots.shape[1]):
            if a != b:
                rows = real[:, a] & real[:, b] & (pl[:, a] < pl[:, b])
                ahead[bots[rows, a], bots[rows, b]] = True
    return ahead & ahead.T


def out_first_always(outcomes: Outcomes, bot: int) -> bool:
    """Whether ``bot`` went out first in every rated hand it played with another rated seat."""
    bots, pl = outcomes.bots, outcomes.places
    real = bots >= 0
    usable = real.sum(axis=1) >= 2
    best = np.where(real, pl, np.iinfo(np.int64).max).min(axis=1)
    mine = usable[:, None] & (bots == bot)
    if not mine.any():
        return False
    first = (pl == best[:, None]) & outcomes.went_out[:, None]
    return bool(first[mine].all())


def describe(
    names: list[str] | tuple[str, ...],
    side: IntArray,
    *,
    both_ways: BoolArray | None = None,
    frame_out_first: bool = False,
    loser_weight: float = math.nan,
) -> str:
    """The note's sentence on the bots bounded on one side ('' if none). ``both_ways``
    (:func:`places_both_ways`, over ``names``) and ``frame_out_first`` (the frame's one bot
    went out first in every hand, :func:`out_first_always`) say why a frame is one bot: a
    strict order, or bots compared both ways in places 2-4 only, which the limits do not read
    (an examination: "No two bots were compared both ways" where three bots finished ahead of
    each other 21-27 and 26-22, one bot having gone out first in every hand and places 2-4
    weighing 0.00)."""
    up = [names[i] for i in np.nonzero(side > 0)[0]]
    down = [names[i] for i in np.nonzero(side < 0)[0]]
    if not up and not down:
        return ""
    parts = []
    if up:
        parts.append(
            f"{', '.join(up)} went out first ahead of the others whenever they met, so "
            "there is only a lower limit"
        )
    if down:
        parts.append(
            f"{', '.join(down)} never went out first ahead of the others, so there is only "
            "an upper limit"
        )
    frame = [names[i] for i in np.nonzero(side == 0)[0]]
    if len(frame) == 1:
        # no two bots went out first ahead of each other both ways, and the largest group of the
        # going-out graph is one bot, which the limits are measured from
        ref = f"{frame[0]} (0 by definition: its interval reads 'reference')"
        both = np.asarray(both_ways) if both_ways is not None else np.zeros((0, 0), bool)
        if not both.any():  # a strict order: nobody finished ahead of anyone both ways
            centred = f"No two bots were compared both ways, so the ratings are measured from {ref}"
        else:
            # a pair by name, not by where the bots are listed (the same hands, the same note)
            a, b = min(sorted((names[int(i)], names[int(j)])) for i, j in np.argwhere(both))
            who = (
                f"{frame[0]} went out first in every hand"
                if frame_out_first
                else "no two bots went out first ahead of each other both ways"
            )
            weight = (
                f" (places 2-4 weigh {loser_weight:.2f} here)"
                if math.isfinite(loser_weight)
                else ""
            )
            centred = (
                f"The limits read who went out first, and {who}; bots such as {a} and {b} were "
                f"compared both ways only through places 2-4{weight}. So the ratings are "
                f"measured from {ref}"
            )
    else:
        centred = "The other ratings are centred on the bots compared both ways"
    return (
        "The results bound some ratings on one side only: "
        + "; ".join(parts)
        + f" (one-sided 97.5%). {centred}, and a pair with a one-sided bot is called different "
        "only when the intervals do not overlap, or when one of the two finished ahead of the "
        "other in every hand they shared (in enough deals)."
    )


def tied_exactly(outcomes: Outcomes) -> bool:
    """True if, in every deal (cluster), each bot took exactly the same places as every other
    bot at that deal's tables, over the seats its rotations gave it: copies of one deterministic
    program, dealt duplicate deals, play a deal alike from every seat. Then every rating is 0
    and every clustered interval has no width, not because a rating is known but because these
    hands contain nothing that tells the bots apart (the scores of each deal cancel), and more
    of the same hands will not. Places are compared as ranks among the hand's rated seats; a
    deal with one hand, or one bot, makes it False (the bots cannot have matched there)."""
    bots, pl, cl = outcomes.bots, outcomes.places, outcomes.cluster
    if bots.size == 0:
        return False
    real = bots >= 0
    # each seat's rank: how many rated seats of its hand finished strictly ahead of it
    ahead = real[:, None, :] & (pl[:, None, :] < pl[:, :, None])
    rank = ahead.sum(axis=2)
    width = bots.shape[1]
    n_bots = int(bots.max()) + 1
    g = np.broadcast_to(cl[:, None], bots.shape)[real].astype(np.int64)
    b = bots[real].astype(np.int64)
    r = rank[real].astype(np.int64)
    pair, which = np.unique(g * n_bots + b, return_inverse=True)
    counts = np.zeros((pair.size, width), dtype=np.int64)  # (deal, bot) -> its places
    np.add.at(counts, (which.ravel(), r), 1)
    deal = pair // n_bots
    first = np.unique(deal, return_index=True)[1]
    per_deal = np.bincount(deal)[deal]  # bots seen in the deal of each (deal, bot)
    if bool((per_deal < 2).any()) or bool((counts.sum(axis=1) < 2).any()):
        return False
    lead = first[np.searchsorted(deal[first], deal)]  # each deal's first bot, for its rows
    return bool(np.array_equal(counts, counts[lead]))


def reference_of(intervals: Sequence[tuple[str, float, float]]) -> str | None:
    """Of ``(name, low, high)``, the name of the only finite interval of no width, if one is
    alone in having none: the bot of a frame of one bot, the others measured from it. Bots tied
    exactly (:data:`~uno_tournament.standings.TIED_NOTE`) all have intervals of no width, and
    none of them is a reference (see :attr:`uno_tournament.report.Summary.reference`)."""
    none = [name for name, lo, hi in intervals if lo == hi and math.isfinite(lo)]
    return none[0] if len(none) == 1 else None


def comparison_groups(outcomes: Outcomes, n_bots: int) -> list[list[int]]:
    """The bots (indices) that are linked by rated hands, directly or through other bots: the
    connected groups of the graph whose edges are two bots rated in one hand. A bot without a
    rated hand is in no group."""
    parent = list(range(n_bots))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    seen: set[int] = set()
    for row in np.asarray(outcomes.bots):
        seated = [int(b) for b in row if b >= 0]
        seen.update(seated)
        for b in seated[1:]:
            ra, rb = root(seated[0]), root(b)
            if ra != rb:
                parent[rb] = ra
    groups: dict[int, list[int]] = {}
    for i in sorted(seen):
        groups.setdefault(root(i), []).append(i)
    return list(groups.values())
