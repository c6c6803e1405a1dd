"""Rating four-seat UNO results.

The final table is a maximum-likelihood Plackett-Luce fit over every hand's finishing order, with
seat-position terms, reported on the Elo scale (``elo = theta * 400 / ln 10``) with 95% confidence
intervals, a covariance matrix and a likelihood-of-superiority matrix. Standard errors come from
the observed information with a cluster-robust sandwich: under duplicate dealing the four rotated
hands of one deal are not independent, so the default clusters by deal.

Model
-----
A hand's finishing order is read as a sequence of choices. The first-out seat is chosen from all
seats with probability ``exp(u_i) / sum_j exp(u_j)``; the next place from the seats that remain,
and so on. Utilities are::

    first place (going out):        u_i = theta[bot_i] + gamma[seat_i]
    places 2..n-1 (by points left): u_i = lam * theta[bot_i] + delta[seat_i]

``theta`` are the bot strengths, ``gamma``/``delta`` the seat terms (seat 0 is the reference) and
``lam`` the weight of places 2-4 relative to going out. The Elo scale is the going-out stage's,
so a rating gap has one meaning a user can check in the records (:func:`first_out_probability`):
of the hands two bots share in which one of the two goes out first, the stronger goes out first
with probability ``1 / (1 + 10 ** (-gap / 400))`` (about 64% for a +100 gap).

Why ``lam`` is fitted (``places="discounted"``, the default): in UNO places 2-4 are decided by the
points left when someone goes out, which carries much less skill signal than going out. On hands
the engine plays between heuristic bots of graded randomness ``lam`` comes out near 0.31 (see
:mod:`uno_tournament.validate_ratings`). Plain Plackett-Luce (``places="full"``: ``lam = 1``, one
set of seat terms) then mixes two scales: its gaps are about half the going-out gaps and its
intervals do not cover them. ``lam`` is estimated jointly with the ratings by maximum likelihood,
within ``[0, inf]``, and its uncertainty enters every interval through the joint sandwich
covariance (delta method on ``theta = cos(omega) * beta``, see :class:`_Layout`). The sandwich's
bread is the expected information; its meat sums the scores by deal.

When the bots are all alike ``lam`` is not identified (it multiplies ``theta = 0``); the chart of
:class:`_Layout` keeps the fit finite there and the expected-information bread keeps the
intervals the width of a fit with ``lam`` known (validated: the A/A rate stays near 5%).
``places="winner"`` uses the first place only (valid, but loses the losers' signal, which matters
most for weak bots that rarely go out); ``"full"`` is kept as a control.

Ties (equal points left) are tie groups: every member of a group is scored as chosen from the risk
set at the start of the group (the Breslow approximation), and a trailing group that holds every
remaining seat carries no information and is skipped. Within a hand the finishing order is therefore
independent of how tied seats are listed.

Computation: the choices are aggregated into distinct types (the same alternatives in the same
seats and the same choice) with counts, which are the sufficient statistics of the likelihood;
Newton-Raphson runs on the types, and only the final sandwich goes back to the individual choices
to sum the scores by cluster. A previous solution can be passed as a warm start (live refits).

Determinism: hands are sorted by ``hand_id`` before anything is accumulated, so a reshuffled input
gives bit-identical ratings; Newton-Raphson runs to a step below ``1e-10`` (in theta units).

A sequential Elo (:class:`SequentialElo`) is provided for live displays and
:func:`fit_pairwise_naive` (six independent pairwise games per hand) as a negative control: both
are known to fail the validation in :mod:`uno_tournament.validate_ratings`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from itertools import combinations, pairwise
from typing import Literal

import numpy as np
import numpy.typing as npt

__all__ = [
    "ELO_PER_NAT",
    "FORFEIT_POLICIES",
    "Z95",
    "Finish",
    "HandResult",
    "Outcomes",
    "PlacesModel",
    "Ratings",
    "SequentialElo",
    "apply_forfeits",
    "first_out_probability",
    "fit_outcomes",
    "fit_pairwise_naive",
    "fit_plackett_luce",
    "gap_for_probability",
    "kendall_tau",
    "likelihood_of_superiority",
    "normal_cdf",
]

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
# Result
# --------------------------------------------------------------------------------------------------


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

    def __post_init__(self) -> None:
        if self.bots.shape != self.places.shape or self.bots.ndim != 2:
            raise ValueError("bots and places must be (hands, seats) arrays of one shape")
        if self.cluster.shape != (self.bots.shape[0],):
            raise ValueError("cluster must have one entry per hand")

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
        for i, r in enumerate(results):
            for f in r.finishes:
                bots[i, f.seat] = index[f.bot]
                places[i, f.seat] = f.place
            keys.append(r.deal_id if cluster == "deal" else r.hand_id)
        ids = {k: n for n, k in enumerate(sorted(set(keys)))}
        return cls(bots, places, np.array([ids[k] for k in keys], dtype=np.int64), len(ids))


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


@dataclass(frozen=True)
class Ratings:
    """A fitted rating table. All strengths, errors and covariances are in Elo points."""

    bots: tuple[str, ...]
    elo: FloatArray
    """Ratings, centred at mean 0 (or 0 for the ``anchor`` bot)."""
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
    param_cov: FloatArray = field(repr=False, default_factory=lambda: np.zeros((0, 0)))
    """Covariance of the internal parameter vector (theta units), for diagnostics."""
    params: FloatArray = field(repr=False, default_factory=lambda: np.zeros(0))
    """The internal parameter vector at the optimum: a warm start for the next fit."""
    loser_weight_prior: tuple[float, float] | None = None
    """``(mean, sd)`` of the normal prior on ``lam`` the fit used (``None``: plain maximum
    likelihood, or ``lam`` not fitted)."""
    prior_sd_elo: float | None = None
    """The sd of the normal prior on the centred ratings, if the fit used one."""

    @property
    def se(self) -> FloatArray:
        return np.sqrt(np.clip(np.diag(self.cov), 0.0, None))

    @property
    def ci_low(self) -> FloatArray:
        return self.elo - Z95 * self.se

    @property
    def ci_high(self) -> FloatArray:
        return self.elo + Z95 * self.se

    def index(self, bot: str) -> int:
        return self.bots.index(bot)

    def diff(self) -> tuple[FloatArray, FloatArray]:
        """``(d, se)``: matrices of ``elo[i] - elo[j]`` and its (covariance-aware) error."""
        d = self.elo[:, None] - self.elo[None, :]
        v = np.diag(self.cov)
        var = v[:, None] + v[None, :] - 2.0 * self.cov
        return d, np.sqrt(np.clip(var, 0.0, None))

    def diff_ci(self, a: str, b: str, z: float = Z95) -> tuple[float, float, float]:
        """``(estimate, low, high)`` for ``elo[a] - elo[b]``."""
        d, se = self.diff()
        i, j = self.index(a), self.index(b)
        return float(d[i, j]), float(d[i, j] - z * se[i, j]), float(d[i, j] + z * se[i, j])

    def significant(self, z: float = Z95) -> BoolArray:
        """Pairs whose difference CI excludes 0 (diagonal False)."""
        d, se = self.diff()
        with np.errstate(divide="ignore", invalid="ignore"):
            out = np.abs(d) > z * se
        np.fill_diagonal(out, False)
        return out

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
    """``LOS[i, j] = P(bot i stronger than bot j)`` under the normal approximation.

    Uses the full covariance (``Phi(d_ij / se_ij)``); the diagonal is 0.5.
    """
    d, se = r.diff()
    n = len(r.bots)
    out = np.full((n, n), 0.5)
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            if se[i, j] > 0:
                out[i, j] = normal_cdf(d[i, j] / se[i, j])
            else:
                out[i, j] = 0.5 if d[i, j] == 0 else float(d[i, j] > 0)
    return out


# --------------------------------------------------------------------------------------------------
# Choices, their sufficient statistics, and the Newton-Raphson engine
# --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Choices:
    """Distinct choice types with counts, and the type and cluster of every single choice.

    A type is a set of alternatives (``bot[t, s]`` in seat column ``s``, ``-1`` where the seat is
    not among them), the seat chosen, and the stage (``later``: a place after the first)."""

    bot: IntArray  # (T, W)
    chosen: IntArray  # (T,)
    later: BoolArray  # (T,)
    count: FloatArray  # (T,)
    row_type: IntArray  # (E,) type of every single choice
    row_cluster: IntArray  # (E,)
    n_clusters: int
    n_hands: int

    @property
    def mask(self) -> BoolArray:
        out: BoolArray = self.bot >= 0
        return out


def _aggregate(
    bot: IntArray, chosen: IntArray, later: BoolArray, cluster: IntArray, o: Outcomes
) -> _Choices:
    """Collapse single choices (rows) into distinct types with counts."""
    width = bot.shape[1]
    if len(chosen) == 0:
        return _Choices(
            np.zeros((0, width), dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.bool_),
            np.zeros(0),
            np.zeros(0, dtype=np.int64),
            np.zeros(0, dtype=np.int64),
            o.n_clusters,
            o.n_hands,
        )
    key = np.concatenate([bot + 1, chosen[:, None], later[:, None].astype(np.int64)], axis=1)
    base = int(max(int(key.max()) + 1, 2))
    if base ** key.shape[1] < 2**62:
        # one int64 per row: a 1-d unique sorts plain integers (fast, and without the GIL)
        weights = np.array([base**k for k in range(key.shape[1])][::-1], dtype=np.int64)
        codes = key @ weights
        _, first, inverse, counts = np.unique(
            codes, return_index=True, return_inverse=True, return_counts=True
        )
        uniq = key[first]
    else:
        uniq, inverse, counts = np.unique(key, axis=0, return_inverse=True, return_counts=True)
    uniq = uniq.copy()
    uniq[:, :width] -= 1
    return _Choices(
        bot=np.ascontiguousarray(uniq[:, :width]),
        chosen=np.ascontiguousarray(uniq[:, width]),
        later=uniq[:, width + 1].astype(np.bool_),
        count=counts.astype(np.float64),
        row_type=inverse.reshape(-1).astype(np.int64),
        row_cluster=cluster,
        n_clusters=o.n_clusters,
        n_hands=o.n_hands,
    )


def _pl_choices(o: Outcomes, places: PlacesModel) -> _Choices:
    """Plackett-Luce choices: each seat not in the trailing group is chosen from the seats placed
    at or after it (Breslow ties); ``"winner"`` keeps the first group only."""
    real = o.bots >= 0
    big = np.iinfo(np.int64).max
    pl = np.where(real, o.places, big)
    last = np.where(real, o.places, np.iinfo(np.int64).min).max(axis=1)
    first = pl.min(axis=1)
    valid = real & (pl < last[:, None]) & (real.sum(axis=1) >= 2)[:, None]
    if places == "winner":
        valid &= pl == first[:, None]
    h_idx, s_idx = np.nonzero(valid)  # row-major: hand order, then seat
    mine = pl[h_idx, s_idx]
    alt = real[h_idx] & (pl[h_idx] >= mine[:, None])
    bot = np.where(alt, o.bots[h_idx], -1)
    later = mine > first[h_idx]
    return _aggregate(bot, s_idx.astype(np.int64), later, o.cluster[h_idx], o)


def _pair_choices(o: Outcomes) -> _Choices:
    """Six pairwise games per four-seat hand (ties carry no win): the negative control."""
    width = o.bots.shape[1]
    bots, chosen, clusters = [], [], []
    real = o.bots >= 0
    for a in range(width):
        for b in range(width):
            if a == b:
                continue
            win = real[:, a] & real[:, b] & (o.places[:, a] < o.places[:, b])
            h = np.nonzero(win)[0]
            row = np.full((len(h), width), -1, dtype=np.int64)
            row[:, a] = o.bots[h, a]
            row[:, b] = o.bots[h, b]
            bots.append(row)
            chosen.append(np.full(len(h), a, dtype=np.int64))
            clusters.append(o.cluster[h])
    bot = np.concatenate(bots)
    ch = np.concatenate(chosen)
    cl = np.concatenate(clusters)
    return _aggregate(bot, ch, np.zeros(len(ch), dtype=np.bool_), cl, o)


@dataclass(frozen=True)
class _Layout:
    """The parameter vector: ``beta`` (bots 1.., bot 0 is 0), then the going-out seat terms, then
    (``discounted``) the later seat terms and the angle ``omega``.

    ``discounted`` scales the strengths by ``cos(omega)`` for going out and ``sin(omega)`` for
    places 2..: ``theta = cos(omega) * beta`` and ``lam = tan(omega)``, with ``omega`` in
    ``[0, pi/2]``. In this chart ``lam = inf`` (only places 2.. carry signal) is the finite point
    ``omega = pi/2``, so the maximum likelihood over ``lam`` always exists and Newton-Raphson
    never chases ``lam`` to infinity when the bots are all alike (where ``lam`` is not
    identified)."""

    n_bots: int
    width: int
    seat_terms: bool
    discounted: bool

    @property
    def n_theta(self) -> int:
        return self.n_bots - 1

    @property
    def n_seat(self) -> int:
        return self.width - 1 if self.seat_terms else 0

    @property
    def gamma0(self) -> int:
        return self.n_theta

    @property
    def delta0(self) -> int:
        return self.n_theta + self.n_seat

    @property
    def omega(self) -> int:
        return self.n_theta + 2 * self.n_seat

    @property
    def size(self) -> int:
        return self.n_theta + (2 * self.n_seat + 1 if self.discounted else self.n_seat)

    def unpack(self, x: FloatArray) -> tuple[FloatArray, FloatArray, FloatArray, float]:
        """``(beta, gamma, delta, omega)``, with ``beta[0] = 0``; ``omega = pi/4`` if not
        discounted (unused)."""
        beta = np.concatenate(([0.0], x[: self.n_theta]))
        gamma = np.zeros(self.width)
        delta = np.zeros(self.width)
        omega = math.pi / 4
        if self.seat_terms:
            gamma[1:] = x[self.gamma0 : self.gamma0 + self.n_seat]
            delta[1:] = gamma[1:]
        if self.discounted:
            if self.seat_terms:
                delta[1:] = x[self.delta0 : self.delta0 + self.n_seat]
            omega = float(x[self.omega])
        return beta, gamma, delta, omega

    def scales(self, omega: float) -> tuple[float, float]:
        """Strength scale of going out and of places 2.."""
        if self.discounted:
            return math.cos(omega), math.sin(omega)
        return 1.0, 1.0


@dataclass(frozen=True)
class _Design:
    """Sparse Jacobian structure of the utilities, fixed for a fit.

    Each alternative touches at most three parameters: its bot's ``beta``, its seat term and the
    angle ``omega``. ``cols`` (T, W, 3) names them; ``lay.size`` is a dummy column for "none"."""

    cols: IntArray
    flat: IntArray  # type * (size + 1) + col, raveled (T*W*3,)
    chosen_flat: IntArray  # the chosen alternative's entries (T*3,)
    pair: IntArray  # col_i * (size + 1) + col_j over (T, W, 3, 3), raveled
    seat_on: FloatArray  # (T, W) 1.0 where the seat term applies
    theta_on: BoolArray  # (T, W)
    omega_on: BoolArray  # (T, W)
    bot0: IntArray  # (T, W) bot index with 0 where masked
    span: int  # size + 1


def _design(ch: _Choices, lay: _Layout) -> _Design:
    t, w = ch.bot.shape
    size = lay.size
    mask = ch.mask
    later = ch.later[:, None]
    seat = np.broadcast_to(np.arange(w, dtype=np.int64), (t, w))
    cols = np.full((t, w, 3), size, dtype=np.int64)
    theta_on = mask & (ch.bot > 0)
    cols[:, :, 0] = np.where(theta_on, ch.bot - 1, size)
    seat_on = np.zeros((t, w))
    if lay.seat_terms:
        on = mask & (seat > 0)
        base = np.where(later, lay.delta0, lay.gamma0) if lay.discounted else lay.gamma0
        cols[:, :, 1] = np.where(on, base + seat - 1, size)
        seat_on = on.astype(np.float64)
    omega_on = theta_on if lay.discounted else np.zeros((t, w), dtype=np.bool_)
    cols[:, :, 2] = np.where(omega_on, lay.omega, size)
    span = size + 1
    rows = np.arange(t)
    return _Design(
        cols=cols,
        flat=(rows[:, None, None] * span + cols).ravel(),
        chosen_flat=(rows[:, None] * span + cols[rows, ch.chosen]).ravel(),
        pair=(cols[:, :, :, None] * span + cols[:, :, None, :]).ravel(),
        seat_on=seat_on,
        theta_on=theta_on,
        omega_on=omega_on,
        bot0=np.where(mask, ch.bot, 0),
        span=span,
    )


def _stage_scales(x: FloatArray, ch: _Choices, lay: _Layout) -> tuple[FloatArray, FloatArray]:
    """Per type (T, 1): the strength scale and its derivative in ``omega``."""
    _, _, _, omega = lay.unpack(x)
    first, later = lay.scales(omega)
    d_first, d_later = (-math.sin(omega), math.cos(omega)) if lay.discounted else (0.0, 0.0)
    stage = ch.later[:, None]
    return np.where(stage, later, first), np.where(stage, d_later, d_first)


def _probabilities(
    x: FloatArray, ch: _Choices, lay: _Layout, des: _Design
) -> tuple[FloatArray, FloatArray, FloatArray]:
    """Utilities (T, W; -inf where masked), choice probabilities and log-sum-exp (T,)."""
    beta, gamma, delta, _ = lay.unpack(x)
    w, _ = _stage_scales(x, ch, lay)
    seat_term = np.where(ch.later[:, None], delta[None, :], gamma[None, :])
    u = np.where(ch.mask, w * beta[des.bot0] + seat_term, -np.inf)
    umax = u.max(axis=1, keepdims=True)
    ex = np.exp(u - umax)
    tot = ex.sum(axis=1, keepdims=True)
    lse = (umax + np.log(tot))[:, 0]
    return u, ex / tot, lse


def _log_likelihood(x: FloatArray, ch: _Choices, lay: _Layout, des: _Design) -> float:
    u, _, lse = _probabilities(x, ch, lay, des)
    rows = np.arange(len(ch.chosen))
    return float(np.dot(ch.count, u[rows, ch.chosen] - lse))


def _derivatives(
    x: FloatArray, ch: _Choices, lay: _Layout, des: _Design, observed: bool = True
) -> tuple[FloatArray, FloatArray]:
    """Per-type scores of ONE choice (T, P) and the count-weighted observed Hessian (P, P)."""
    beta = np.concatenate(([0.0], x[: lay.n_theta]))
    _, p, _ = _probabilities(x, ch, lay, des)
    w, dw = _stage_scales(x, ch, lay)
    t, a = ch.bot.shape
    rows = np.arange(t)
    size, span = lay.size, des.span
    b = beta[des.bot0]
    vals = np.empty((t, a, 3))
    vals[:, :, 0] = np.where(des.theta_on, w, 0.0)
    vals[:, :, 1] = des.seat_on
    vals[:, :, 2] = np.where(des.omega_on, dw * b, 0.0)
    jbar = np.bincount(
        des.flat, weights=(p[:, :, None] * vals).ravel(), minlength=t * span
    ).reshape(t, span)[:, :size]
    jchosen = np.bincount(
        des.chosen_flat, weights=vals[rows, ch.chosen].ravel(), minlength=t * span
    ).reshape(t, span)[:, :size]
    scores: FloatArray = (jchosen - jbar).astype(np.float64)
    cpv = (ch.count[:, None] * p)[:, :, None] * vals
    second = (cpv[:, :, :, None] * vals[:, :, None, :]).ravel()
    outer = np.bincount(des.pair, weights=second, minlength=span * span).reshape(span, span)
    hess: FloatArray = (jbar * ch.count[:, None]).T @ jbar - outer[:size, :size]
    if lay.discounted and observed:
        # The utilities are not linear in (beta, omega): add sum(residual * d2u) where
        # d2u / (d omega d beta_b) = dw and d2u / d omega^2 = -w * beta_b.
        resid = -p
        resid[rows, ch.chosen] += 1.0
        resid *= ch.count[:, None]
        on = des.omega_on
        cross = np.bincount(ch.bot[on] - 1, weights=(resid * dw)[on], minlength=lay.n_theta)
        hess[lay.omega, : lay.n_theta] += cross
        hess[: lay.n_theta, lay.omega] += cross
        hess[lay.omega, lay.omega] -= float(np.sum((resid * w * b)[on]))
    return scores, hess


def _centre(n_bots: int, anchor: int | None) -> FloatArray:
    """Map from the reduced theta (bot 0 fixed at 0) to reported strengths."""
    t = np.vstack([np.zeros((1, n_bots - 1)), np.eye(n_bots - 1)])
    if anchor is None:
        m = np.eye(n_bots) - 1.0 / n_bots
    else:
        m = np.eye(n_bots)
        m[:, anchor] -= 1.0
    out: FloatArray = m @ t
    return out


def _cluster_sums(scores: FloatArray, ch: _Choices) -> FloatArray:
    """Sum of the single choices' scores per cluster (G, P)."""
    g, size = ch.n_clusters, scores.shape[1]
    out = np.zeros((g, size))
    for k in range(size):
        out[:, k] = np.bincount(ch.row_cluster, weights=scores[ch.row_type, k], minlength=g)
    return out


LAM_RANGE = (0.0, math.inf)
"""``lam`` is fitted in ``[0, inf]``: a stronger bot never tends to keep more points."""
OMEGA_START = math.atan(0.3)
"""Where Newton-Raphson starts ``omega``: ``lam = 0.3``, near what engine-played hands show."""
LAM_PRIOR: tuple[float, float] = (0.0, 0.3)
"""The weak prior on ``lam`` of the default fit: normal, mean 0.3 (engine-played hands measure
0.31), sd 0.3. It adds ``-0.5 * ((lam - 0.3) / 0.3) ** 2`` to the log-likelihood, which grows
without bound as ``lam`` does, so ``lam`` is always finite; where the hands measure ``lam``
(standard error 0.02-0.09 on 2,000 hands of bots that differ) it moves the estimate by 0.5-8% of
its distance to 0.3, and where they do not (bots all alike, ``lam`` multiplies ``theta = 0``) it
holds ``lam`` near 0.3 instead of letting it run to infinity. See the module docstring."""
OMEGA_MAX = math.atan(1e6)
"""With the prior, ``omega`` stays below this (``tan`` is finite there); the prior's penalty at it
is about 5e12, so no fit ever ends on it."""


def _lam_penalty(omega: float, prior: tuple[float, float]) -> tuple[float, float, float]:
    """``(value, first derivative, Gauss-Newton second derivative >= 0)`` in ``omega`` of the
    prior's penalty ``0.5 * ((tan(omega) - mean) / sd) ** 2`` (the full second derivative, for
    Newton-Raphson, is :func:`_lam_penalty_hessian`)."""
    mean, sd = prior
    t = math.tan(omega)
    sec2 = 1.0 + t * t
    r = (t - mean) / sd
    return 0.5 * r * r, r / sd * sec2, sec2 * sec2 / (sd * sd)


def _lam_penalty_hessian(omega: float, prior: tuple[float, float]) -> float:
    """The full second derivative of the prior's penalty in ``omega``."""
    mean, sd = prior
    t = math.tan(omega)
    sec2 = 1.0 + t * t
    return (sec2 * sec2 + 2.0 * (t - mean) * sec2 * t) / (sd * sd)


def _fit(
    ch: _Choices,
    bots: tuple[str, ...],
    *,
    seat_terms: bool,
    places: str,
    cluster: ClusterBy,
    anchor: str | None,
    prior_sd_elo: float | None,
    start: FloatArray | None,
    max_iter: int,
    tol: float,
    known_loser_weight: float | None = None,
    loser_weight_prior: tuple[float, float] | None = None,
) -> Ratings:
    n = len(bots)
    if n < 2:
        raise ValueError("need at least two bots")
    width = ch.bot.shape[1]
    discounted = places == "discounted"
    lay = _Layout(n, max(width, 1), seat_terms and width > 1, discounted)
    des = _design(ch, lay)
    x = np.zeros(lay.size)
    if discounted:
        x[lay.omega] = OMEGA_START
    if start is not None and start.shape == x.shape and bool(np.all(np.isfinite(start))):
        x = start.astype(np.float64, copy=True)
    centre = _centre(n, None)
    penalty = np.zeros((lay.size, lay.size))
    if prior_sd_elo is not None:
        s = prior_sd_elo / ELO_PER_NAT
        penalty[: lay.n_theta, : lay.n_theta] = centre.T @ centre / s**2

    fixed = discounted and known_loser_weight is not None
    prior = loser_weight_prior if discounted and not fixed else None
    if prior is not None and not (math.isfinite(prior[0]) and prior[1] > 0):
        raise ValueError(f"loser_weight_prior must be (mean, sd > 0), got {prior}")

    def objective(z: FloatArray) -> float:
        value = _log_likelihood(z, ch, lay, des) - 0.5 * float(z @ penalty @ z)
        if prior is not None:
            value -= _lam_penalty(float(z[lay.omega]), prior)[0]
        return value

    lo, hi = (math.atan(LAM_RANGE[0]), math.atan(LAM_RANGE[1])) if discounted else (0.0, 0.0)
    if prior is not None:
        hi = OMEGA_MAX

    def clip(z: FloatArray) -> FloatArray:
        if discounted:
            z[lay.omega] = min(max(z[lay.omega], lo), hi)
        return z

    if fixed:
        assert known_loser_weight is not None
        x[lay.omega] = math.atan(known_loser_weight)
    x = clip(x)
    converged = False
    iterations = 0
    current = objective(x)
    free = np.ones(lay.size, dtype=np.bool_)
    for iterations in range(1, max_iter + 1):  # noqa: B007
        scores, hess = _derivatives(x, ch, lay, des)
        grad = ch.count @ scores - penalty @ x
        if prior is not None:
            w = float(x[lay.omega])
            grad[lay.omega] -= _lam_penalty(w, prior)[1]
            hess[lay.omega, lay.omega] -= _lam_penalty_hessian(w, prior)
        free[:] = True
        if discounted:  # lam on a bound with the gradient pushing out: hold it there this step
            w, g = x[lay.omega], grad[lay.omega]
            free[lay.omega] = not (fixed or (w <= lo and g <= 0) or (w >= hi and g >= 0))
        neg = -(hess - penalty)
        step = np.zeros(lay.size)
        step[free] = _ascent_step(neg[np.ix_(free, free)], grad[free])
        t = 1.0
        while True:
            cand = clip(x + t * step)
            value = objective(cand)
            if value >= current - 1e-12 * abs(current) or t < 1e-8:
                break
            t *= 0.5
        moved = float(np.max(np.abs(cand - x), initial=0.0))
        x, current = cand, value
        if moved < tol:
            converged = True
            break

    ll = _log_likelihood(x, ch, lay, des)
    # The bread is the expected (Fisher) information: the observed one adds a term whose mean is
    # zero (residuals times the curvature of the (beta, omega) chart) which, when the bots are
    # nearly equal and lam barely identified, widens every interval by up to half.
    scores, hess = _derivatives(x, ch, lay, des, observed=False)
    if prior is not None:  # the prior's information about lam (its Gauss-Newton part)
        hess[lay.omega, lay.omega] -= _lam_penalty(float(x[lay.omega]), prior)[2]
    keep = np.ones(lay.size, dtype=np.bool_)
    if fixed:
        keep[lay.omega] = False  # a known lam carries no uncertainty
        scores = np.where(keep[None, :], scores, 0.0)
    bread = np.zeros((lay.size, lay.size))
    bread[np.ix_(keep, keep)] = np.linalg.pinv(
        -(hess - penalty)[np.ix_(keep, keep)], hermitian=True
    )
    if cluster is None:
        pcov = bread
    else:
        sums = _cluster_sums(scores, ch)
        g = ch.n_clusters
        meat = sums.T @ sums * (g / (g - 1) if g > 1 else 1.0)
        pcov = bread @ meat @ bread
    pcov = 0.5 * (pcov + pcov.T)

    beta, gamma, delta, omega = lay.unpack(x)
    first, _ = lay.scales(omega)
    nt = lay.n_theta
    # theta = cos(omega) * beta: the delta method over (beta, omega)
    jac = np.zeros((nt, lay.size))
    jac[:, :nt] = first * np.eye(nt)
    if discounted:
        jac[:, lay.omega] = -math.sin(omega) * beta[1:]
    tcov = jac @ pcov @ jac.T
    anchor_idx = None if anchor is None else bots.index(anchor)
    tmap = _centre(n, anchor_idx)
    elo = ELO_PER_NAT * (tmap @ (first * beta[1:]))
    cov = ELO_PER_NAT**2 * (tmap @ tcov @ tmap.T)
    if discounted:
        lam = math.tan(omega) if first > 1e-12 else math.inf
        lam_se = math.sqrt(max(pcov[lay.omega, lay.omega], 0.0)) / max(first, 1e-12) ** 2
    else:
        lam, lam_se = (0.0 if places == "winner" else 1.0), 0.0
    return Ratings(
        bots=bots,
        elo=elo,
        cov=cov,
        seat_elo=ELO_PER_NAT * gamma,
        later_seat_elo=ELO_PER_NAT * delta,
        loser_weight=lam,
        loser_weight_se=lam_se,
        log_likelihood=ll,
        iterations=iterations,
        converged=converged,
        n_hands=ch.n_hands,
        n_clusters=ch.n_clusters,
        places=places,
        cluster=cluster,
        anchor=anchor,
        param_cov=pcov,
        params=x,
        loser_weight_prior=prior,
        prior_sd_elo=prior_sd_elo,
    )


def _ascent_step(neg_hess: FloatArray, grad: FloatArray) -> FloatArray:
    """Newton step, damped towards gradient ascent where the Hessian is not negative definite."""
    scale = float(np.max(np.abs(np.diag(neg_hess)), initial=1.0))
    mu = 0.0
    eye = np.eye(len(grad))
    for _ in range(60):
        try:
            chol = np.linalg.cholesky(neg_hess + mu * eye)
        except np.linalg.LinAlgError:
            mu = max(mu * 10.0, 1e-8 * scale)
            continue
        y = np.linalg.solve(chol, grad)
        step: FloatArray = np.linalg.solve(chol.T, y)
        return step
    fallback: FloatArray = grad / scale
    return fallback


def _bot_index(results: Sequence[HandResult], bots: Sequence[str] | None) -> tuple[str, ...]:
    seen = {f.bot for r in results for f in r.finishes}
    if bots is None:
        return tuple(sorted(seen))
    missing = seen - set(bots)
    if missing:
        raise ValueError(f"results name bots not in `bots`: {sorted(missing)}")
    if len(set(bots)) != len(bots):
        raise ValueError("duplicate names in `bots`")
    return tuple(bots)


def _canonical(results: Iterable[HandResult]) -> list[HandResult]:
    ordered = sorted(results, key=lambda r: r.hand_id)
    for a, b in pairwise(ordered):
        if a.hand_id == b.hand_id:
            raise ValueError(f"duplicate hand_id {a.hand_id!r}")
    return ordered


def fit_outcomes(
    outcomes: Outcomes,
    bots: Sequence[str],
    *,
    seat_terms: bool = True,
    places: PlacesModel = "discounted",
    cluster: ClusterBy = "deal",
    anchor: str | None = None,
    prior_sd_elo: float | None = None,
    start: FloatArray | None = None,
    known_loser_weight: float | None = None,
    loser_weight_prior: tuple[float, float] | None = LAM_PRIOR,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> Ratings:
    """Fit columnar outcomes (bot indices into ``bots``); see :func:`fit_plackett_luce`.

    With ``cluster`` set, ``outcomes.cluster`` numbers the clusters; ``"hand"`` or ``None`` ignore
    it (a cluster per hand, or the plain observed information)."""
    names = tuple(bots)
    if len(set(names)) != len(names):
        raise ValueError("duplicate names in `bots`")
    if anchor is not None and anchor not in names:
        raise ValueError(f"anchor {anchor!r} is not a rated bot")
    if outcomes.bots.size and int(outcomes.bots.max()) >= len(names):
        raise ValueError("outcomes name a bot index beyond `bots`")
    if cluster == "hand":
        outcomes = Outcomes(
            outcomes.bots,
            outcomes.places,
            np.arange(outcomes.n_hands, dtype=np.int64),
            outcomes.n_hands,
        )
    ch = _pl_choices(outcomes, places)
    return _fit(
        ch,
        names,
        seat_terms=seat_terms,
        places=places,
        cluster=cluster,
        anchor=anchor,
        prior_sd_elo=prior_sd_elo,
        start=start,
        max_iter=max_iter,
        tol=tol,
        known_loser_weight=known_loser_weight,
        loser_weight_prior=loser_weight_prior,
    )


def fit_plackett_luce(
    results: Iterable[HandResult],
    bots: Sequence[str] | None = None,
    *,
    seat_terms: bool = True,
    places: PlacesModel = "discounted",
    cluster: ClusterBy = "deal",
    anchor: str | None = None,
    prior_sd_elo: float | None = None,
    start: FloatArray | None = None,
    known_loser_weight: float | None = None,
    loser_weight_prior: tuple[float, float] | None = LAM_PRIOR,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> Ratings:
    """Fit the Plackett-Luce model (see the module docstring) by maximum likelihood.

    Args:
        results: the hands, in any order (they are sorted by ``hand_id``; ids must be unique).
        bots: the bots to rate, in the order of the returned arrays; default sorted names.
        seat_terms: fit seat-position terms (seat 0 is the reference).
        places: ``"discounted"`` (default: places 2.. weigh ``lam``, fitted), ``"winner"``
            (first place only) or ``"full"`` (plain Plackett-Luce, ``lam = 1``; a control).
        cluster: ``"deal"`` (default; duplicate dealing), ``"hand"`` or ``None`` (plain Hessian).
        anchor: report ratings relative to this bot instead of centring at mean 0.
        prior_sd_elo: optional Gaussian prior on the centred ratings; keeps the fit finite when a
            bot never beats anyone. ``None`` is the pure maximum-likelihood fit.
        start: a previous fit's ``params`` (same bots and seats), to start Newton-Raphson there.
        known_loser_weight: hold ``lam`` at this value instead of fitting it (an oracle for the
            validation, when the truth is known).
        loser_weight_prior: ``(mean, sd)`` of the weak normal prior on ``lam`` (default
            :data:`LAM_PRIOR`) that keeps it finite; ``None`` is plain maximum likelihood, whose
            ``lam`` can run to infinity (see the module docstring).
        max_iter, tol: Newton-Raphson limits (tol is on the largest step, in theta units).
    """
    ordered = _canonical(results)
    names = _bot_index(ordered, bots)
    index = {b: i for i, b in enumerate(names)}
    return fit_outcomes(
        Outcomes.from_results(ordered, index, "hand" if cluster == "hand" else "deal"),
        names,
        seat_terms=seat_terms,
        places=places,
        cluster=cluster,
        anchor=anchor,
        prior_sd_elo=prior_sd_elo,
        start=start,
        known_loser_weight=known_loser_weight,
        loser_weight_prior=loser_weight_prior,
        max_iter=max_iter,
        tol=tol,
    )


def fit_pairwise_naive(
    results: Iterable[HandResult],
    bots: Sequence[str] | None = None,
    *,
    seat_terms: bool = True,
    cluster: ClusterBy = None,
    max_iter: int = 100,
    tol: float = 1e-10,
) -> Ratings:
    """Bradley-Terry fit treating each hand as six independent pairwise games (NEGATIVE CONTROL).

    With ``cluster=None`` (the naive version) its intervals are too narrow: the six games of a hand
    share the same four results. Kept to prove that the validation can fail; do not use it for
    the final table.
    """
    ordered = _canonical(results)
    names = _bot_index(ordered, bots)
    index = {b: i for i, b in enumerate(names)}
    o = Outcomes.from_results(ordered, index, "hand" if cluster == "hand" else "deal")
    return _fit(
        _pair_choices(o),
        names,
        seat_terms=seat_terms,
        places="pairwise",
        cluster=cluster,
        anchor=None,
        prior_sd_elo=None,
        start=None,
        max_iter=max_iter,
        tol=tol,
    )


# --------------------------------------------------------------------------------------------------
# Sequential Elo (live display only)
# --------------------------------------------------------------------------------------------------


class SequentialElo:
    """Order-dependent multi-player Elo for live progress displays (not for the final table).

    Each hand is split into its pairwise results (ahead = 1, tie = 0.5); every bot moves by
    ``k * sum(score - expected)`` over its opponents, with expectations from the ratings before
    the hand.
    """

    def __init__(self, k: float = 16.0, initial: float = 0.0) -> None:
        self.k = k
        self.initial = initial
        self.ratings: dict[str, float] = {}
        self.hands = 0

    def rating(self, bot: str) -> float:
        return self.ratings.get(bot, self.initial)

    def update(self, hand: HandResult) -> dict[str, float]:
        """Apply one hand; returns the rating change per bot."""
        before = {f.bot: self.rating(f.bot) for f in hand.finishes}
        delta = dict.fromkeys(before, 0.0)
        for a, b in combinations(hand.finishes, 2):
            expected = 1.0 / (1.0 + 10.0 ** ((before[b.bot] - before[a.bot]) / 400.0))
            score = 0.5 if a.place == b.place else float(a.place < b.place)
            delta[a.bot] += self.k * (score - expected)
            delta[b.bot] -= self.k * (score - expected)
        for bot, d in delta.items():
            self.ratings[bot] = before[bot] + d
        self.hands += 1
        return delta

    def update_all(self, hands: Iterable[HandResult]) -> None:
        for h in hands:
            self.update(h)

    def as_array(self, bots: Sequence[str]) -> FloatArray:
        """Ratings for ``bots``, centred at mean 0."""
        v = np.array([self.rating(b) for b in bots], dtype=np.float64)
        out: FloatArray = v - v.mean()
        return out


# --------------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------------


def kendall_tau(a: Sequence[float] | FloatArray, b: Sequence[float] | FloatArray) -> float:
    """Kendall's tau-b between two score vectors (1 = same order)."""
    x = np.asarray(a, dtype=np.float64)
    y = np.asarray(b, dtype=np.float64)
    if x.shape != y.shape or x.ndim != 1 or len(x) < 2:
        raise ValueError("need two equal-length 1-d vectors with at least two entries")
    i, j = np.triu_indices(len(x), k=1)
    sx = np.sign(x[i] - x[j])
    sy = np.sign(y[i] - y[j])
    denom = math.sqrt(float(np.sum(sx != 0)) * float(np.sum(sy != 0)))
    return float(np.sum(sx * sy)) / denom if denom > 0 else 0.0
