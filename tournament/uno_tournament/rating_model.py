"""The records and the result of the rating fit: finishing orders, columnar outcomes, the forfeit
policies, and the fitted table with its intervals (:class:`Ratings`).

The model and the fit are described in :mod:`uno_tournament.ratings`, which re-exports every
name here; :mod:`uno_tournament.ratings_fit` holds the Newton-Raphson engine.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

ELO_PER_NAT = 400.0 / math.log(10.0)
"""Elo points per unit of the natural-log strength ``theta``."""

Z95 = 1.959963984540054
"""The two-sided 95% standard-normal quantile."""

PlacesModel = Literal["discounted", "full", "winner"]
ClusterBy = Literal["deal", "hand"] | None


def first_out_probability(gap_elo: float) -> float:
    """P(the stronger of two bots goes out first | one of the two goes out first), for a gap.
    Written so that no gap overflows (a runaway fit's gap of millions of Elo gives 0 or 1)."""
    x = gap_elo / 400.0 * math.log(10.0)
    if x >= 0:
        return 1.0 / (1.0 + math.exp(-x))
    e = math.exp(x)
    return e / (1.0 + e)


def gap_for_probability(p: float) -> float:
    """The rating gap at which :func:`first_out_probability` is ``p``."""
    if not 0.0 < p < 1.0:
        raise ValueError("p must be within (0, 1)")
    return 400.0 * math.log10(p / (1.0 - p))


def normal_cdf(x: float) -> float:
    """Standard normal distribution function."""
    return 0.5 * math.erfc(-x / math.sqrt(2.0))


def _beta_fraction(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1.0)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    out = d
    for m in range(1, 500):
        for num in (
            m * (b - m) * x / ((a + 2 * m - 1.0) * (a + 2 * m)),
            -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1.0)),
        ):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            out *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return out


def _incomplete_beta(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = (
        math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    )
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _beta_fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _beta_fraction(b, a, 1.0 - x) / b


def student_t_cdf(x: float, df: float) -> float:
    """Student's t distribution function with ``df`` degrees of freedom (``inf``: the normal;
    ``df`` below 1: NaN, no distribution to speak of)."""
    if math.isnan(x) or not df >= 1.0:
        return math.nan
    if math.isinf(df) or df > 1e7:
        return normal_cdf(x)
    tail = 0.5 * _incomplete_beta(0.5 * df, 0.5, df / (df + x * x))
    return 1.0 - tail if x > 0 else tail


_T_QUANTILES: dict[tuple[float, float], float] = {}


def student_t_quantile(p: float, df: float) -> float:
    """The ``p`` quantile (``0.5 <= p < 1``) of Student's t with ``df`` degrees of freedom: the
    normal's for ``df = inf``, ``inf`` for ``df`` below 1 (one cluster says nothing about the
    spread)."""
    if not 0.5 <= p < 1.0:
        raise ValueError("p must be within [0.5, 1)")
    if not df >= 1.0:
        return math.inf
    key = (p, df)
    hit = _T_QUANTILES.get(key)
    if hit is not None:
        return hit
    if math.isinf(df) or df > 1e7:
        lo, hi = 0.0, 40.0
        cdf = normal_cdf
    else:
        lo, hi = 0.0, 1.0
        while student_t_cdf(hi, df) < p:
            hi *= 2.0

        def cdf(x: float) -> float:
            return student_t_cdf(x, df)

    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if cdf(mid) < p:
            lo = mid
        else:
            hi = mid
        if hi - lo < 1e-12 * max(1.0, hi):
            break
    out = 0.5 * (lo + hi)
    if len(_T_QUANTILES) < 4096:
        _T_QUANTILES[key] = out
    return out


# --------------------------------------------------------------------------------------------------
# Records
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Finish:
    """One seat's result in a hand.

    ``place`` is 1 for the first seat out; seats with equal ``place`` are tied (equal points left).
    Only the order of places matters (1, 2, 2, 4 and 1, 2, 2, 3 mean the same).
    """

    bot: str
    seat: int
    place: int


@dataclass(frozen=True, slots=True)
class HandResult:
    """The finishing order of one hand.

    ``deal_id`` names the shuffled deck; under duplicate dealing the rotated replays of one deck
    share it and form one cluster for the standard errors.
    """

    hand_id: str
    deal_id: str
    finishes: tuple[Finish, ...]
    out_first: bool = True
    """The seat that went out first is among ``finishes``. False when it was left out (under the
    "exclude" forfeit policy, a stand-in that went out first): the best of the seats given
    did not go out, and their order is by points only (places 2..)."""
    excluded: tuple[str, ...] = field(default=(), compare=False)
    """Bots seated in the hand whose seat the ratings leave out (the "exclude" forfeit policy:
    a stand-in played it). Not part of the result: the sequential test tells a bot given up on
    (seated, every seat excluded) from one its schedule did not seat."""

    def __post_init__(self) -> None:
        if len(self.finishes) < 2:
            raise ValueError(f"hand {self.hand_id}: needs at least two seats")
        bots = [f.bot for f in self.finishes]
        seats = [f.seat for f in self.finishes]
        if len(set(bots)) != len(bots):
            raise ValueError(f"hand {self.hand_id}: a bot appears twice")
        if len(set(seats)) != len(seats):
            raise ValueError(f"hand {self.hand_id}: a seat appears twice")
        if any(s < 0 for s in seats):
            raise ValueError(f"hand {self.hand_id}: negative seat")

    @classmethod
    def from_order(cls, hand_id: str, deal_id: str, order: Sequence[tuple[str, int]]) -> HandResult:
        """Build from ``(bot, seat)`` pairs in strict finishing order, first out first."""
        return cls(
            hand_id,
            deal_id,
            tuple(Finish(bot, seat, place) for place, (bot, seat) in enumerate(order, start=1)),
        )

    @classmethod
    def from_points(
        cls, hand_id: str, deal_id: str, winner: str, seats: Sequence[tuple[str, int, int]]
    ) -> HandResult:
        """Build from ``(bot, seat, points_left)``: the winner first, then by points left.

        Equal points left (among the non-winners) are ties.
        """
        if winner not in {b for b, _, _ in seats}:
            raise ValueError(f"hand {hand_id}: winner {winner!r} is not seated")
        rest = sorted(((p, b, s) for b, s, p in seats if b != winner), key=lambda t: t[0])
        seat_of = {b: s for b, s, _ in seats}
        finishes = [Finish(winner, seat_of[winner], 1)]
        for i, (points, bot, seat) in enumerate(rest):
            tied = i > 0 and rest[i - 1][0] == points
            finishes.append(Finish(bot, seat, finishes[-1].place if tied else i + 2))
        return cls(hand_id, deal_id, tuple(finishes))

    def groups(self) -> list[list[Finish]]:
        """Tie groups in finishing order; within a group, sorted by seat."""
        ordered = sorted(self.finishes, key=lambda f: (f.place, f.seat))
        out: list[list[Finish]] = []
        for f in ordered:
            if out and out[-1][0].place == f.place:
                out[-1].append(f)
            else:
                out.append([f])
        return out


# --------------------------------------------------------------------------------------------------
# Columnar outcomes: what the fit needs from each hand, and nothing else
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Outcomes:
    """Hands in columns: ``bots[h, s]`` is the index of the bot in seat ``s`` of hand ``h`` (``-1``
    for an empty seat) and ``places[h, s]`` its place (lower is better; equal places are ties;
    only the order matters). ``cluster[h]`` numbers the hand's cluster (its deal, under duplicate
    dealing) from 0 to ``n_clusters - 1``. Rows must be in a canonical order (the tournament's
    hand-id order) for the fit to be bit-for-bit reproducible."""

    bots: IntArray
    places: IntArray
    cluster: IntArray
    n_clusters: int
    out_first: BoolArray | None = None
    """Per hand, whether the seat that went out first is rated (``None``: in every hand). Under
    the "exclude" forfeit policy a stand-in that went out first is left out, and the best of
    the rated seats did not go out: their order is by points only, which the fit reads as
    places 2.. (weight ``lam``), not as going out (an examination: the runner-up of such a
    hand was counted as going out first)."""

    def __post_init__(self) -> None:
        if self.bots.shape != self.places.shape or self.bots.ndim != 2:
            raise ValueError("bots and places must be (hands, seats) arrays of one shape")
        if self.cluster.shape != (self.bots.shape[0],):
            raise ValueError("cluster must have one entry per hand")
        if self.out_first is not None and self.out_first.shape != (self.bots.shape[0],):
            raise ValueError("out_first must have one entry per hand")

    @property
    def went_out(self) -> BoolArray:
        """:attr:`out_first`, all True where it is not set."""
        if self.out_first is None:
            return np.ones(self.bots.shape[0], dtype=np.bool_)
        return np.asarray(self.out_first, dtype=np.bool_)

    @property
    def n_hands(self) -> int:
        return int(self.bots.shape[0])

    @classmethod
    def from_results(
        cls, results: Sequence[HandResult], index: dict[str, int], cluster: ClusterBy = "deal"
    ) -> Outcomes:
        """Columns of ``results`` (already in canonical order); ``index`` maps bot names."""
        width = 1 + max((f.seat for r in results for f in r.finishes), default=1)
        h = len(results)
        bots = np.full((h, width), -1, dtype=np.int64)
        places = np.zeros((h, width), dtype=np.int64)
        keys: list[str] = []
        out_first = np.ones(h, dtype=np.bool_)
        for i, r in enumerate(results):
            for f in r.finishes:
                bots[i, f.seat] = index[f.bot]
                places[i, f.seat] = f.place
            keys.append(r.deal_id if cluster == "deal" else r.hand_id)
            out_first[i] = r.out_first
        ids = {k: n for n, k in enumerate(sorted(set(keys)))}
        return cls(
            bots,
            places,
            np.array([ids[k] for k in keys], dtype=np.int64),
            len(ids),
            None if out_first.all() else out_first,
        )


FORFEIT_POLICIES = ("last", "count", "exclude")


def apply_forfeits(
    bots: IntArray, places: IntArray, forfeit: BoolArray, policy: str
) -> tuple[IntArray, IntArray]:
    """``(bots, places)`` after the forfeit policy, for hands in which a stand-in played seats.

    ``forfeit[h, s]`` marks a seat played (in whole or in part) by a stand-in. Policies:

    * ``"last"`` (the default of a tournament): the bot of that seat takes last place; the other
      seats keep their real order ahead of it (several forfeits in one hand tie for last);
    * ``"count"``: the stand-in's result counts as the bot's own (no forfeit);
    * ``"exclude"``: the seat is left out of the ratings (its bot becomes ``-1``); the other seats
      still count among themselves.
    """
    if policy not in FORFEIT_POLICIES:
        raise ValueError(f"unknown forfeit policy {policy!r}; choose from {FORFEIT_POLICIES}")
    hit = forfeit & (bots >= 0)
    if policy == "count" or not hit.any():
        return bots, places
    if policy == "exclude":
        return np.where(hit, -1, bots), places
    last = np.where(bots >= 0, places, 0).max(axis=1, keepdims=True) + 1
    return bots, np.where(hit, last, places)


def first_rated(
    bots: IntArray, places: IntArray, forfeit: BoolArray, policy: str
) -> BoolArray | None:
    """Per hand, whether a rated seat counts as going out first after :func:`apply_forfeits`
    (:attr:`Outcomes.out_first`; ``None``: in every hand). ``"exclude"`` leaves out a stand-in
    that went out first, and then no rated seat went out. Under ``"last"`` the forfeiting seat
    is placed last by the policy's own definition and the best of the others counts as first,
    unless two or more of them tie for it on points: then no one does (an examination: both
    were counted as going out first, 97 going-out records from 96 hands, and a bot that never
    went out got "won 1", which kept it out of the one-sided bounds and left the new-version
    test undecided against a bot that lost every hand)."""
    if policy not in ("exclude", "last"):
        return None
    real = bots >= 0
    hit = forfeit & real
    if not hit.any():
        return None
    big = np.iinfo(np.int64).max
    best = np.where(real, places, big).min(axis=1, keepdims=True)
    stand_in_first = (hit & (places == best)).any(axis=1)
    if policy == "exclude":
        out = ~stand_in_first
    else:  # the best of the rated seats not taken over, shared by two or more: no one first
        rest = real & ~hit
        top = np.where(rest, places, big).min(axis=1, keepdims=True)
        out = ~(stand_in_first & ((rest & (places == top)).sum(axis=1) >= 2))
    return None if out.all() else np.asarray(out, dtype=np.bool_)


@dataclass(frozen=True)
class Ratings:
    """A fitted rating table. All strengths, errors and covariances are in Elo points."""

    bots: tuple[str, ...]
    elo: FloatArray
    """Ratings, centred at mean 0 over the bots rated (:attr:`rated`; or 0 for the ``anchor``
    bot): a bot the hands cannot rate does not move the others (``standings.fit_ratings``)."""
    cov: FloatArray
    """Covariance of ``elo`` (Elo^2), cluster-robust if ``cluster`` is set."""
    seat_elo: FloatArray
    """Winner-stage seat terms, seat 0 = 0 (zeros if fitted without seat terms)."""
    later_seat_elo: FloatArray
    """Seat terms for places 2.. (same as ``seat_elo`` unless ``places="discounted"``)."""
    loser_weight: float
    """The fitted weight ``lam`` of places 2.. (1 for "full", 0 for "winner")."""
    loser_weight_se: float
    """Its standard error (0 when it is not fitted)."""
    log_likelihood: float
    iterations: int
    converged: bool
    n_hands: int
    n_clusters: int
    places: str
    cluster: str | None
    anchor: str | None = None
    unmeasured: int = 0
    """Directions of the parameters the clusters did not measure (fewer deals than the fit
    has parameters), where the model-based variance stands in for the clustered one
    (:func:`uno_tournament.ratings_fit._floored`); 0 with many deals."""
    param_cov: FloatArray = field(repr=False, default_factory=lambda: np.zeros((0, 0)))
    """Covariance of the internal parameter vector (theta units), for diagnostics."""
    params: FloatArray = field(repr=False, default_factory=lambda: np.zeros(0))
    """The internal parameter vector at the optimum: a warm start for the next fit."""
    loser_weight_prior: tuple[float, float] | None = None
    """``(mean, sd)`` of the normal prior on ``lam`` the fit used (``None``: plain maximum
    likelihood, or ``lam`` not fitted)."""
    prior_sd_elo: float | None = None
    """The sd of the normal prior on the centred ratings, if the fit used one."""
    units: IntArray | None = None
    """Per bot, the independent units its rated hands fall in: the clusters (deals) with
    ``cluster="deal"``, else its hands. ``None``: not counted (a large-sample table). The
    intervals are Student's t with ``units - 1`` degrees of freedom (for a pair, the fewer of the
    two bots'): a clustered standard error from a handful of deals is itself uncertain, and the
    normal quantile would overstate what they show. A bot with fewer than 2 units is not rated
    (:attr:`rated`): its intervals are NaN and it is in no comparison."""
    side: IntArray | None = None
    """Per bot, which way the results bound its rating (:mod:`uno_tournament.rating_bounds`): 0
    both ways; +1 from below only (it finished ahead of every bot it met in every rated hand, and
    maximum likelihood puts it at +infinity); -1 from above only. ``None``: every bot 0."""
    bound: FloatArray | None = None
    """The one-sided 97.5% limit (Elo) of each bot with a non-zero :attr:`side`, NaN elsewhere:
    its interval is ``[bound, +inf)`` or ``(-inf, bound]``."""
    ahead_always: BoolArray | None = None
    """``ahead_always[o, i]``, for a pair with a bot of non-zero :attr:`side`: ``o`` finished
    ahead of ``i`` in every hand they shared in so many deals that it is a 2.5% event or rarer
    for an ``i`` at least as good as ``o`` (:func:`uno_tournament.rating_bounds.always_ahead`):
    the pair is called different although the one-sided interval, which reads going out first
    only, may overlap the other's (an examination's bot that finished last in all 24 hands was
    ranked 1-4). ``None``: not computed (no bot one-sided)."""
    group: IntArray | None = None
    """Per bot, its group of bots linked by rated hands (``-1``: none), when there are several
    (``None``: one). Each group is centred among itself, and a pair across groups has no
    difference to measure: :meth:`diff` gives it an infinite error, so it is never significant."""

    @property
    def se(self) -> FloatArray:
        return np.sqrt(np.clip(np.diag(self.cov), 0.0, None))

    @property
    def df(self) -> FloatArray:
        """Each bot's degrees of freedom (``inf`` without :attr:`units`; 0 for a bot not
        rated)."""
        if self.units is None:
            return np.full(len(self.bots), math.inf)
        return np.maximum(np.asarray(self.units, dtype=np.float64) - 1.0, 0.0)

    @property
    def rated(self) -> BoolArray:
        """Bots with rated hands in at least two units (see :attr:`units`), and, for a bot the
        results bound on one side only, a bound (it met the bots bounded both ways)."""
        bounded = np.ones(len(self.bots), dtype=np.bool_)
        if self.side is not None and self.bound is not None:
            bounded = (self.sides == 0) | ~np.isnan(self.bound)
        return np.asarray((self.df >= 1.0) & bounded, dtype=np.bool_)

    def quantiles(self) -> FloatArray:
        """Each bot's two-sided 95% quantile (``Z95`` for a large sample; NaN if not rated)."""
        return np.array(
            [student_t_quantile(0.975, d) if d >= 1.0 else math.nan for d in self.df.tolist()]
        )

    def pair_quantiles(self) -> FloatArray:
        """The two-sided 95% quantile of each pair's difference (the fewer degrees of freedom of
        the two; NaN where either bot is not rated)."""
        df = self.df
        pair = np.minimum(df[:, None], df[None, :])
        cache: dict[float, float] = {}
        out = np.full(pair.shape, math.nan)
        for idx, d in np.ndenumerate(pair):
            if d >= 1.0:
                q = cache.get(float(d))
                if q is None:
                    q = cache[float(d)] = student_t_quantile(0.975, float(d))
                out[idx] = q
        return out

    @property
    def sides(self) -> IntArray:
        """:attr:`side`, zeros where it is not set."""
        if self.side is None:
            return np.zeros(len(self.bots), dtype=np.int64)
        return np.asarray(self.side, dtype=np.int64)

    def _one_sided(self, t: FloatArray, up: bool) -> FloatArray:
        """Two-sided limits ``t`` with the one-sided bots' limits put in (``up``: the upper)."""
        if self.side is None or self.bound is None:
            return t
        side = np.where(self.df >= 1.0, self.sides, 0)  # a bot not rated stays NaN
        out = np.where(side == (-1 if up else 1), self.bound, t)
        return np.asarray(np.where(side == (1 if up else -1), math.inf if up else -math.inf, out))

    @property
    def ci_low(self) -> FloatArray:
        return self._one_sided(self.elo - self.quantiles() * self.se, up=False)

    @property
    def ci_high(self) -> FloatArray:
        return self._one_sided(self.elo + self.quantiles() * self.se, up=True)

    def index(self, bot: str) -> int:
        return self.bots.index(bot)

    def diff(self) -> tuple[FloatArray, FloatArray]:
        """``(d, se)``: matrices of ``elo[i] - elo[j]`` and its (covariance-aware) error."""
        d = self.elo[:, None] - self.elo[None, :]
        v = np.diag(self.cov)
        var = v[:, None] + v[None, :] - 2.0 * self.cov
        se = np.sqrt(np.clip(var, 0.0, None))
        if self.group is not None:  # groups that never met: no difference to measure
            g = np.asarray(self.group)
            se = np.where(g[:, None] == g[None, :], se, math.inf)
        return d, se

    def diff_ci(self, a: str, b: str, z: float | None = None) -> tuple[float, float, float]:
        """``(estimate, low, high)`` for ``elo[a] - elo[b]``; ``z`` overrides the pair's 95%
        quantile (:meth:`pair_quantiles`)."""
        d, se = self.diff()
        i, j = self.index(a), self.index(b)
        if self.sides[i] or self.sides[j]:  # a one-sided bot: the limits of the two intervals
            lo, hi = self.ci_low, self.ci_high
            return float(d[i, j]), float(lo[i] - hi[j]), float(hi[i] - lo[j])
        q = float(self.pair_quantiles()[i, j]) if z is None else z
        return float(d[i, j]), float(d[i, j] - q * se[i, j]), float(d[i, j] + q * se[i, j])

    def significant(self, z: float | None = None) -> BoolArray:
        """Pairs whose difference CI excludes 0 (diagonal False; never a pair with a bot not
        rated). ``z`` overrides the pairs' 95% quantiles."""
        d, se = self.diff()
        q = self.pair_quantiles() if z is None else np.full(d.shape, z)
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.abs(d) > q * se
        side = self.sides
        if side.any():  # a pair with a one-sided bot: only intervals that do not overlap
            lo, hi = self.ci_low, self.ci_high
            apart = (lo[:, None] > hi[None, :]) | (lo[None, :] > hi[:, None])
            if self.ahead_always is not None:
                apart |= self.ahead_always | self.ahead_always.T
            either = (side[:, None] != 0) | (side[None, :] != 0)
            out = np.where(either, apart, out)
        out &= self.rated[:, None] & self.rated[None, :]
        np.fill_diagonal(out, False)
        return np.asarray(out, dtype=np.bool_)

    def first_out(self, a: str, b: str) -> float:
        """P(``a`` goes out first | ``a`` or ``b`` goes out first) at the fitted ratings."""
        return first_out_probability(float(self.elo[self.index(a)] - self.elo[self.index(b)]))

    def ranking(self) -> list[str]:
        """Bots from strongest to weakest (ties broken by name)."""
        return [b for _, b in sorted(zip(-self.elo, self.bots, strict=True))]

    def table(self) -> str:
        """A printable rating table."""
        lines = [f"{'bot':<20} {'elo':>8} {'se':>7} {'95% CI':>19}"]
        for i in np.argsort(-self.elo, kind="stable"):
            lines.append(
                f"{self.bots[i]:<20} {self.elo[i]:8.1f} {self.se[i]:7.1f} "
                f"[{self.ci_low[i]:7.1f}, {self.ci_high[i]:7.1f}]"
            )
        return "\n".join(lines)


def likelihood_of_superiority(r: Ratings) -> FloatArray:
    """``LOS[i, j] = P(bot i stronger than bot j)`` under the normal approximation (Student's t
    with the pair's degrees of freedom, see :attr:`Ratings.units`).

    Uses the full covariance (``T(d_ij / se_ij)``); the diagonal is 0.5; NaN for a pair with a
    bot not rated or without a standard error (no comparison to speak of), or with a bot the
    results bound on one side only (:attr:`Ratings.side`: no estimate to approximate around).
    """
    d, se = r.diff()
    df = np.where(r.sides != 0, 0.0, r.df)
    n = len(r.bots)
    out = np.full((n, n), 0.5)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            pair_df = min(float(df[i]), float(df[j]))
            if pair_df < 1.0 or not se[i, j] > 0:
                out[i, j] = math.nan
            else:
                out[i, j] = student_t_cdf(float(d[i, j] / se[i, j]), pair_df)
    return out
