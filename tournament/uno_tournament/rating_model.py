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
