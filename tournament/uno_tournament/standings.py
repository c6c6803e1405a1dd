"""What the ratings need from each hand, kept in columns and up to date as hands arrive.

A hand contributes four numbers per seat: the bot, its finishing place, whether a stand-in played
the seat (a forfeit), and the deal it belongs to (the cluster of the standard errors). These are
the sufficient statistics of the rating fit: :class:`Standings` keeps them in growing numpy
arrays, fills them from the ``seats`` table on a resume (never from a replay's JSON), appends each
new hand in microseconds, and refits from a snapshot with a warm start from the previous
solution. The report builds the same columns from the store (:func:`rated_outcomes`), so the live
leaderboard and the final table are one computation; the report also sorts the hands by id so its
figures are bit-for-bit reproducible, which the live refit skips (it only changes the order in
which floating-point sums are taken).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from .rating_bounds import (
    always_ahead,
    bound_one_sided,
    comparison_groups,
    describe,
    going_out_sides,
    one_sided,
    out_first_always,
    places_both_ways,
    tied_exactly,
)
from .rating_model import Z95
from .ratings import (
    Finish,
    HandResult,
    Outcomes,
    Ratings,
    apply_forfeits,
    first_rated,
    fit_outcomes,
)
from .store import Columns, HandRecord, ResultStore

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]
FloatArray = npt.NDArray[np.float64]

SEATS = 4


def rated_outcomes(
    hand_ids: Sequence[str],
    deal_ids: Sequence[str],
    bots: IntArray,
    places: IntArray,
    forfeit: BoolArray,
    policy: str,
) -> Outcomes:
    """Outcomes for the fit: rows in hand-id order, clusters by deal, the forfeit policy applied."""
    order = sorted(range(len(hand_ids)), key=hand_ids.__getitem__)
    cluster_of: dict[str, int] = {}
    for d in sorted(set(deal_ids)):
        cluster_of[d] = len(cluster_of)
    cluster = np.array([cluster_of[deal_ids[i]] for i in order], dtype=np.int64)
    idx = np.array(order, dtype=np.int64)
    first = first_rated(bots[idx], places[idx], forfeit[idx], policy)
    b, p = apply_forfeits(bots[idx], places[idx], forfeit[idx], policy)
    return Outcomes(b, p, cluster, len(cluster_of), first)


RUNAWAY_ELO = 4000.0
"""A rating this far from the mean (odds of 10^10 to 1) is no estimate but a fit running away
toward an unbounded rating, which a tolerance stopped early: such a fit is redone with the prior."""


def fit_ratings(
    outcomes: Outcomes,
    names: Sequence[str],
    *,
    start: FloatArray | None = None,
) -> tuple[Ratings | None, str]:
    """The final-table fit (:func:`_fit_ratings`), and its note, over the bots with a rated seat
    only, centred on the bots it rates.

    A bot with no rated seat (every one forfeited under ``exclude``) has no rating to estimate:
    left in, its free parameter made maximum likelihood fail and the prior fit widened every
    other bot's interval tenfold, by where it was listed. It is left out of the fit and shown as
    not rated. A bot rated on too few deals (:attr:`Ratings.rated`) is in the fit, since its
    hands tell about the others, but not in the centring: its uncertain estimate moved every
    other rating and widened its interval (an examination: one deal of a fifth bot took the
    leader's interval from +-88 to +-243 Elo). Differences are unchanged by the centring."""
    present = np.zeros(len(names), dtype=np.bool_)
    present[outcomes.bots[outcomes.bots >= 0]] = True
    if present.all() or present.sum() < 2:
        r, note = _fit_ratings(outcomes, names, start=start)
        if r is None:
            return None, note
        return _centred_on_rated(r, comparison_groups(outcomes, len(names))), _groups_note(
            note, outcomes, len(names)
        )
    keep = np.flatnonzero(present)
    new_index = np.full(len(names), -1, dtype=np.int64)
    new_index[keep] = np.arange(len(keep))
    sub = Outcomes(
        np.where(outcomes.bots >= 0, new_index[np.maximum(outcomes.bots, 0)], -1),
        outcomes.places,
        outcomes.cluster,
        outcomes.n_clusters,
        outcomes.out_first,
    )
    r, note = _fit_ratings(sub, [names[int(i)] for i in keep])
    if r is None:
        return None, note
    groups = comparison_groups(sub, len(keep))
    return _widened(_centred_on_rated(r, groups), names, keep), _groups_note(note, sub, len(keep))


def _centred_on_rated(r: Ratings, groups: Sequence[Sequence[int]]) -> Ratings:
    """``r`` with each group of bots that met (``groups``, :func:`comparison_groups`) centred at
    mean 0 over its bots that ``r`` rates both ways (unchanged if a group has none). An exact
    linear change of frame within a group, whose ratings are defined up to a common shift;
    between groups that never met there is no rating to keep, and their offset, which only a
    prior fixed, is taken out of every interval (an examination: 8 bots at two tables that
    never shared a bot read +-910 Elo each, +-200 within their table). Unchanged with an
    anchor."""
    if r.anchor is not None:
        return r
    n = len(r.bots)
    # the frame: the rated bots bounded both ways (a one-sided bot's rating is a limit, not a
    # point to centre on; the one-sided fit already measures the rest from them)
    both = r.rated & (r.sides == 0)
    mean = np.zeros((n, n))
    for members in groups:
        g = np.asarray(members, dtype=np.int64)
        if not both[g].any():
            return r  # no frame to centre on: the fit's own stands
        base = g[both[g]]
        mean[np.ix_(g, base)] = 1.0 / len(base)
    frame = np.eye(n) - mean
    shift = mean @ r.elo
    group = None
    if len(groups) > 1:
        group = np.full(n, -1, dtype=np.int64)
        for k, members in enumerate(groups):
            group[np.asarray(members, dtype=np.int64)] = k
    elif np.allclose(frame @ r.elo, r.elo, rtol=0.0, atol=1e-12):
        return r  # centred so already (one group, every bot rated)
    return dataclasses.replace(
        r,
        elo=r.elo - shift,
        cov=frame @ r.cov @ frame.T,
        bound=None if r.bound is None else r.bound - shift,
        group=group,
    )


def _groups_note(note: str, outcomes: Outcomes, n_bots: int) -> str:
    """The fit's note, saying why it needed a prior when the bots form groups that never met
    (maximum likelihood cannot place such groups against each other; it did converge within
    them)."""
    k = len(comparison_groups(outcomes, n_bots))
    failed = "maximum likelihood did not converge"
    if k > 1 and note.startswith(failed):
        note = (
            f"maximum likelihood cannot place {k} groups of bots that never met against each "
            "other" + note[len(failed) :] + "; each group is centred at mean 0 among itself"
        )
    return note


def _widened(r: Ratings, names: Sequence[str], keep: IntArray) -> Ratings:
    """``r`` (a fit of the bots ``keep`` of ``names``) over every bot of ``names``: the others
    not rated (no units, no side, rating 0 with no variance), and no warm start (its size is
    the fit's)."""
    n = len(names)
    elo = np.zeros(n)
    elo[keep] = r.elo
    cov = np.zeros((n, n))
    cov[np.ix_(keep, keep)] = r.cov
    units = np.zeros(n, dtype=np.int64)
    if r.units is not None:
        units[keep] = r.units
    side = None
    if r.side is not None:
        side = np.zeros(n, dtype=np.int64)
        side[keep] = r.side
    bound = None
    if r.bound is not None:
        bound = np.full(n, np.nan)
        bound[keep] = r.bound
    group = None
    if r.group is not None:
        group = np.full(n, -1, dtype=np.int64)
        group[keep] = r.group
    ahead_always = None
    if r.ahead_always is not None:
        ahead_always = np.zeros((n, n), dtype=np.bool_)
        ahead_always[np.ix_(keep, keep)] = r.ahead_always
    return dataclasses.replace(
        r,
        bots=tuple(names),
        elo=elo,
        cov=cov,
        units=units,
        side=side,
        bound=bound,
        group=group,
        ahead_always=ahead_always,
        params=np.zeros(0),
    )


def _fit_ratings(
    outcomes: Outcomes,
    names: Sequence[str],
    *,
    start: FloatArray | None = None,
) -> tuple[Ratings | None, str]:
    """The final-table fit, and its note ('' for plain maximum likelihood).

    Where maximum likelihood has no finite solution: without seat terms, if that is finite (a
    small tournament's winners explained by bot and seat together); else with a weak prior (sd
    1000 Elo), a bot or group the results bound on one side only getting that side
    (:mod:`uno_tournament.rating_bounds`). So does a finite fit in which such a bot's rating
    rests on places 2-4 whose weight the hands do not tell from 0 (:func:`_places_bound`). A bot
    that went out first in every hand it played, or never ahead of anyone, skips the attempts
    that cannot succeed."""
    if outcomes.n_hands == 0 or len(names) < 2:
        return None, "no hands"
    side = going_out_sides(outcomes, len(names), names)
    weak = False  # a finite fit whose one-sided bots rest on places 2-4 alone (_places_bound)
    if not one_sided(outcomes, len(names), "discounted").any():
        r = fit_outcomes(outcomes, names, start=start)
        if _finite(r):
            if _places_bound(r, side):
                return r, ""
            weak = True
        else:
            # a small tournament's winners can be explained exactly by bot and seat together
            # (it happened in 18 of 200 tournaments of 24 hands): without seat terms, which
            # duplicate dealing balances, maximum likelihood is finite again
            r = fit_outcomes(outcomes, names, seat_terms=False)
            if _finite(r):
                if _places_bound(r, side):
                    return r, (
                        "fitted without seat terms: with them, maximum likelihood has no finite "
                        "solution (the winners are explained by bot and seat together)"
                    )
                weak = True
    r = fit_outcomes(outcomes, names, prior_sd_elo=1000.0, seat_terms=SEATS_IN_PRIOR_FIT)
    prior = "a N(0, 1000 Elo) prior"
    if SEATS_IN_PRIOR_FIT and not _converged(r):
        # one strong bot among random ones (it went out first in 94 of 96 hands, one other bot
        # twice): with seat terms the prior fit stopped unconverged at +4342 and -1191 Elo for
        # the two, standard errors 8,000; without them it converged to a gap of 671 Elo, what
        # 94 against 2 says
        alt = fit_outcomes(outcomes, names, prior_sd_elo=1000.0, seat_terms=False)
        if _converged(alt) or not _all_finite(r):
            r, prior = alt, "a N(0, 1000 Elo) prior and without seat terms"
    note = f"maximum likelihood did not converge; fitted with {prior}"
    if side.any() and (side == 0).any():
        r = bound_one_sided(r, outcomes, side)
        r = dataclasses.replace(r, ahead_always=always_ahead(outcomes, len(names), side))
        why = (
            "maximum likelihood is finite only through places 2-4, whose weight these hands do "
            "not tell from 0"
            if weak
            else "maximum likelihood has no finite solution"
        )
        # a bot not rated (rated hands in fewer than two deals) has no limit to describe (an
        # examination's "crashy ... only an upper limit" beside "not rated: crashy")
        rated = np.asarray(r.rated, dtype=bool)
        shown = [n for n, ok in zip(names, rated, strict=True) if ok]
        frame = np.nonzero(side == 0)[0]
        note = f"{why}; fitted with {prior}. " + describe(
            shown,
            side[rated],
            both_ways=places_both_ways(outcomes, len(names))[np.ix_(rated, rated)],
            frame_out_first=len(frame) == 1 and out_first_always(outcomes, int(frame[0])),
            loser_weight=float(r.loser_weight),
        )
    if not _converged(r):
        note = note.rstrip(" .") + (
            ". Even that fit did not converge: these numbers are not estimates; play more hands "
            "(or check the forfeits) before reading them."
        )
    return r, note


def _all_finite(r: Ratings) -> bool:
    """Finite ratings and errors (converged or not)."""
    return bool(np.all(np.isfinite(r.elo))) and bool(np.all(np.isfinite(r.se)))


def _converged(r: Ratings) -> bool:
    """A fit (with or without a prior) that converged to finite ratings and errors."""
    return r.converged and _all_finite(r)


def _places_bound(r: Ratings, side: IntArray) -> bool:
    """False when a bot that the going-out results bound on one side only (``side != 0``, see
    :func:`~uno_tournament.rating_bounds.going_out_sides`) has a finite rating only through
    places 2-4 whose weight the hands do not tell from 0 (its 95% interval holds 0).

    Such a rating is finite because ``lam`` is: a random bot that never went out first in 96
    hands was fitted at -1386 Elo with a standard error of 2,957 (``lam`` 0.07 +- 0.16), and
    the mean it enters widened every other bot's interval to +-1,900 Elo. Its going-out results
    still give it an upper limit, and the others a frame to be measured in, as when maximum
    likelihood has no finite solution at all. A weight fixed by the model (not fitted, standard
    error 0) bounds it if it is above 0."""
    if not side.any() or not (side == 0).any():
        return True
    lam, se = float(r.loser_weight), float(r.loser_weight_se)
    if se == 0.0:
        return lam > 0.0
    return bool(np.isfinite(se)) and lam - Z95 * se > 0.0


SEATS_IN_PRIOR_FIT = True
"""The prior fit keeps the seat terms: without them the other bots' intervals missed more
(14.9% against 9.1% in small tournaments with a sweeping bot), though the one-sided limits do
not use them either way."""


def _finite(r: Ratings) -> bool:
    """A maximum-likelihood fit that converged to finite ratings and errors, none running away
    (:data:`RUNAWAY_ELO`)."""
    return _converged(r) and float(np.max(np.abs(r.elo))) < RUNAWAY_ELO


def fit_played(cols: Columns, outcomes: Outcomes) -> tuple[Ratings | None, str]:
    """:func:`fit_ratings` over the bots that played a seat in ``cols`` (a bot named in the
    columns without a hand is left out of the fit); ``outcomes`` are the columns' hands as
    :func:`rated_outcomes` gives them, bots indexed as in ``cols.bot_names``."""
    return fit_shown(outcomes, list(cols.bot_names), cols.bots)


def fit_shown(
    outcomes: Outcomes, bot_names: Sequence[str], bots: IntArray | None = None
) -> tuple[Ratings | None, str]:
    """The report's fit (:func:`fit_played`) of ``outcomes``, bots indexed as in
    ``bot_names``, over the bots that played a seat in ``bots`` (default: the outcomes'):
    also what ``tournament watch`` shows, so the two agree (bots tied exactly included)."""
    played = outcomes.bots if bots is None else bots
    seen = sorted({int(b) for b in played[played >= 0]})
    remap = np.full(len(bot_names) + 1, -1, dtype=np.int64)
    for j, i in enumerate(seen):
        remap[i] = j
    fit_out = Outcomes(
        remap[outcomes.bots],
        outcomes.places,
        outcomes.cluster,
        outcomes.n_clusters,
        outcomes.out_first,
    )
    r, note = fit_ratings(fit_out, [bot_names[i] for i in seen])
    if r is not None and tied_exactly(fit_out):
        # exact by symmetry: what the fit leaves is rounding (1e-14 Elo, either sign), which
        # ordered the leaderboard and printed "-0". The intervals have no width, as every
        # deal's scores cancel: the fit's own covariance puts the model-based one there (as
        # where deals do not measure a direction, ratings_fit._floored), and counts those
        # directions as unmeasured for want of deals, which more deals would not change.
        r = dataclasses.replace(r, elo=np.zeros_like(r.elo), cov=np.zeros_like(r.cov), unmeasured=0)
        note = f"{note.rstrip(' .')}. {TIED_NOTE}" if note else TIED_NOTE
    return r, note


TIED_NOTE = (
    "The bots are tied exactly: in every deal each bot took the same places as every other bot "
    "there, over the seats its rotations gave it (copies of one deterministic program play a "
    "deal alike from every seat). So every rating is 0 and no interval has any width: not a "
    "rating known to the last Elo, but hands that cannot tell these bots apart, as more of the "
    "same hands will not."
)
"""The note of a fit whose hands are :func:`~uno_tournament.rating_bounds.tied_exactly`."""


class Standings:
    """The rating columns of a running tournament (bots indexed as in ``bots``)."""

    def __init__(self, bots: Sequence[str], policy: str, capacity: int = 1024) -> None:
        self.names = list(bots)
        self.index = {b: i for i, b in enumerate(self.names)}
        self.policy = policy
        self.n = 0
        self._bots = np.full((capacity, SEATS), -1, dtype=np.int64)
        self._places = np.zeros((capacity, SEATS), dtype=np.int64)
        self._forfeit = np.zeros((capacity, SEATS), dtype=np.bool_)
        self._cluster = np.zeros(capacity, dtype=np.int64)
        self._clusters: dict[str, int] = {}
        self.last: Ratings | None = None

    def __len__(self) -> int:
        return self.n

    @classmethod
    def from_columns(cls, cols: Columns, bots: Sequence[str], policy: str) -> Standings:
        n = cols.n_hands
        st = cls(bots, policy, capacity=max(1024, 2 * n))
        remap = np.array([st._bot(name) for name in cols.bot_names] + [-1], dtype=np.int64)
        width = min(SEATS, cols.bots.shape[1])
        st._bots[:n, :width] = remap[cols.bots[:, :width]]
        st._places[:n, :width] = cols.places[:, :width]
        st._forfeit[:n, :width] = cols.taken_over[:, :width]
        for i, d in enumerate(cols.deal_ids):
            st._cluster[i] = st._clusters.setdefault(d, len(st._clusters))
        st.n = n
        return st

    @classmethod
    def from_store(cls, store: ResultStore, bots: Sequence[str], policy: str) -> Standings:
        return cls.from_columns(store.columns(bots), bots, policy)

    def _bot(self, name: str) -> int:
        i = self.index.get(name)
        if i is None:
            i = self.index[name] = len(self.names)
            self.names.append(name)
        return i

    def _grow(self) -> None:
        cap = 2 * len(self._cluster)
        for attr in ("_bots", "_places", "_forfeit", "_cluster"):
            old = getattr(self, attr)
            new = np.full((cap, *old.shape[1:]), -1 if attr == "_bots" else 0, dtype=old.dtype)
            new[: len(old)] = old
            setattr(self, attr, new)

    def add(self, hand_id: str, deal_id: str, seats: Sequence[tuple[str, int, bool]]) -> None:
        """One stored hand: ``(bot, place, forfeit)`` per seat, seat 0 first."""
        del hand_id  # the live fit needs no order; the report sorts by hand id itself
        if self.n == len(self._cluster):
            self._grow()
        i = self.n
        for s, (bot, place, forfeit) in enumerate(seats):
            self._bots[i, s] = self._bot(bot)
            self._places[i, s] = place
            self._forfeit[i, s] = forfeit
        self._cluster[i] = self._clusters.setdefault(deal_id, len(self._clusters))
        self.n = i + 1  # last: a snapshot never sees a half-written row

    def outcomes(self) -> Outcomes:
        """A snapshot of the rated outcomes (copies; safe to fit in another thread)."""
        n = self.n
        bots, places, forfeit = (
            self._bots[:n].copy(),
            self._places[:n].copy(),
            self._forfeit[:n].copy(),
        )
        first = first_rated(bots, places, forfeit, self.policy)
        b, p = apply_forfeits(bots, places, forfeit, self.policy)
        cluster = self._cluster[:n].copy()
        return Outcomes(b, p, cluster, int(cluster.max()) + 1 if n else 0, first)

    def snapshot(self) -> tuple[Outcomes, list[str], FloatArray | None]:
        """What a refit needs, as plain arrays (to send to a worker process)."""
        start = self.last.params if self.last is not None else None
        return self.outcomes(), list(self.names), start

    def accept(self, r: Ratings | None) -> None:
        """Keep a refit's result as the next warm start."""
        if r is not None and r.converged:
            self.last = r

    def fit(self, *, prior_sd_elo: float | None = None) -> tuple[Ratings | None, str]:
        """Refit, warm-started from the previous fit (safe to call in a worker thread while
        :meth:`add` runs on the event loop). ``prior_sd_elo`` fits with a weak prior at once
        (live refits early in a run, when a bot may not have won yet)."""
        out = self.outcomes()
        if out.n_hands == 0:
            return None, "no hands"
        names = list(self.names)
        start = self.last.params if self.last is not None else None
        r: Ratings | None
        if prior_sd_elo is not None:
            r, note = fit_outcomes(out, names, prior_sd_elo=prior_sd_elo, start=start), ""
        else:
            r, note = fit_ratings(out, names, start=start)
        if r is not None and not note:
            self.last = r
        return r, note


def live_fit(
    outcomes: Outcomes, names: list[str], start: FloatArray | None, prior_sd_elo: float
) -> Ratings | None:
    """A live refit (run in a worker process: picklable arguments, no shared state)."""
    if outcomes.n_hands == 0:
        return None
    return fit_outcomes(outcomes, names, prior_sd_elo=prior_sd_elo, start=start)


def hand_result(h: HandRecord) -> HandResult:
    return HandResult.from_points(
        h.hand_id, h.deal_id, h.winner, [(s.bot, s.seat, s.points_left) for s in h.seats]
    )


def places(winner: int, points: list[int]) -> list[int]:
    """Place per seat: the winner 1, the others by points left (ties share a place)."""
    rest = sorted((p, s) for s, p in enumerate(points) if s != winner)
    out = [0] * len(points)
    out[winner] = 1
    for i, (p, s) in enumerate(rest):
        out[s] = out[rest[i - 1][1]] if i > 0 and rest[i - 1][0] == p else i + 2
    return out


def rated_result(h: HandRecord, policy: str) -> HandResult | None:
    """The hand as the ratings see it under the forfeit policy (for the live sequential Elo);
    None if fewer than two rated seats remain."""
    if policy == "count" or not any(s.taken_over for s in h.seats):
        return hand_result(h)
    last = max(s.place for s in h.seats) + 1
    finishes = tuple(
        Finish(s.bot, s.seat, last if s.taken_over else s.place)
        for s in h.seats
        if not (policy == "exclude" and s.taken_over)
    )
    # a stand-in went out first: under "exclude" no rated seat went out; under "last" the best
    # of the others counts as first, unless several tie for it (ratings.first_rated)
    best = min(s.place for s in h.seats)
    out_first = True
    if any(s.taken_over and s.place == best for s in h.seats):
        rest = [s.place for s in h.seats if not s.taken_over]
        out_first = policy == "last" and rest.count(min(rest, default=0)) < 2
    if len(finishes) < 2:
        return None
    out = tuple(s.bot for s in h.seats if policy == "exclude" and s.taken_over)
    return HandResult(h.hand_id, h.deal_id, finishes, out_first, out)
