"""The fit's internals: choices and their sufficient statistics, the parameter chart, the
log-likelihood with its analytic derivatives, and the Newton-Raphson engine with the sandwich
covariance. The public entry points are :func:`uno_tournament.ratings.fit_plackett_luce` and
:func:`uno_tournament.ratings.fit_outcomes`; the model is described there.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import pairwise

import numpy as np

from .rating_model import (
    ELO_PER_NAT,
    BoolArray,
    ClusterBy,
    FloatArray,
    HandResult,
    IntArray,
    Outcomes,
    PlacesModel,
    Ratings,
)

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
    at or after it (Breslow ties); ``"winner"`` keeps the first group only. In a hand whose
    first-out seat is not rated (:attr:`Outcomes.out_first`) every choice is a later place's."""
    real = o.bots >= 0
    big = np.iinfo(np.int64).max
    pl = np.where(real, o.places, big)
    last = np.where(real, o.places, np.iinfo(np.int64).min).max(axis=1)
    first = pl.min(axis=1)
    went_out = o.went_out  # False: the seat that went out is not rated (Outcomes.out_first)
    valid = real & (pl < last[:, None]) & (real.sum(axis=1) >= 2)[:, None]
    if places == "winner":
        valid &= (pl == first[:, None]) & went_out[:, None]
    h_idx, s_idx = np.nonzero(valid)  # row-major: hand order, then seat
    mine = pl[h_idx, s_idx]
    alt = real[h_idx] & (pl[h_idx] >= mine[:, None])
    bot = np.where(alt, o.bots[h_idx], -1)
    later = (mine > first[h_idx]) | ~went_out[h_idx]
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
"""The weak prior on ``lam`` of the default fit: half-normal, mean 0, sd 0.3. It adds
``-0.5 * (lam / 0.3) ** 2`` to the log-likelihood, which grows without bound as ``lam`` does, so
``lam`` is always finite. Where the hands measure ``lam`` (standard error 0.02-0.09 on 2,000
hands of bots that differ) it moves the estimate by 0.5-8%; where they do not (bots all alike:
``lam`` multiplies ``theta = 0``) it shrinks ``lam`` toward 0, the winner-only model, instead of
letting it run to infinity. See :mod:`uno_tournament.ratings`."""
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


UNBOUNDED_CURVATURE = 1e-9
"""A converged fit whose information matrix has an eigenvalue below this share of its largest
has a direction the hands do not bound (see :func:`_fit`); legitimate fits stay above 1e-5."""

UNMEASURED = 0.01
"""A direction of the parameters whose cluster-robust variance is below this share of the
model-based (Fisher) one (a standard error under a tenth of it) is taken as one the clusters do
not measure: see :func:`_floored`."""


def _floored(bread: FloatArray, sandwich: FloatArray) -> tuple[FloatArray, int]:
    """The cluster-robust covariance, with the model-based one (``bread``) put back in each
    direction the clusters do not measure; and how many directions that was.

    The sandwich's middle is a sum over clusters of score sums that add up to (nearly) zero at
    the maximum, so its rank is at most ``clusters - 1``. With fewer clusters than the fit has
    parameters (a league's first refit: 2 deals, 4 bots and the seat terms) some combinations of
    the ratings get a variance of exactly zero, and a bot an interval of no width; the same
    happens to one bot whose few deals' scores cancel in each deal, and nearly happens with
    barely more clusters than parameters. Nothing was measured there: it is not certainty. In
    the whitened frame of ``bread`` (where it is the identity) the sandwich's eigenvalues say how
    each direction's variance compares with the model's; a direction below :data:`UNMEASURED`
    gets the model's variance instead (eigenvalue 1), and every other direction keeps the
    sandwich's. With many clusters none is that low and the sandwich is returned unchanged.
    (Copies of one deterministic bot, whose every deal's scores cancel, are a tie the callers
    report as such: :data:`uno_tournament.standings.TIED_NOTE`.)"""
    if not (np.all(np.isfinite(bread)) and np.all(np.isfinite(sandwich))):
        return sandwich, 0  # a fit that broke down: its errors say so as they are
    b, u = np.linalg.eigh(0.5 * (bread + bread.T))
    if b.size == 0 or b[-1] <= 0.0:
        return sandwich, 0
    use = b > 1e-14 * b[-1]
    root = u[:, use] * np.sqrt(b[use])  # bread = root @ root.T
    white = u[:, use] / np.sqrt(b[use])  # white.T @ bread @ white = identity
    m = white.T @ sandwich @ white
    lam, v = np.linalg.eigh(0.5 * (m + m.T))
    if lam[0] >= UNMEASURED:
        return sandwich, 0
    low = lam < UNMEASURED
    lifted = (v * np.where(low, 1.0, lam)) @ v.T
    return np.asarray(root @ lifted @ root.T), int(low.sum())


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
    warm = (
        start.astype(np.float64, copy=True)
        if start is not None and start.shape == x.shape and bool(np.all(np.isfinite(start)))
        else None
    )
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
    current = objective(x)
    if warm is not None:
        # A warm start is a guess, not a promise: the previous fit may have run away (a bot
        # that had not won yet) and left a point from which no step climbs. Start from
        # whichever of it and the cold start is the higher.
        if fixed:
            warm[lay.omega] = x[lay.omega]
        warm = clip(warm)
        at_warm = objective(warm)
        if math.isfinite(at_warm) and at_warm >= current:
            x, current = warm, at_warm
    converged = False
    iterations = 0
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
            if value >= current - 1e-12 * abs(current):
                break
            if t < 1e-8:  # no step along this direction climbs: stuck, not converged
                cand, value = x, current
                break
            t *= 0.5
        x, current = cand, value
        # Converged when the Newton step itself is small (as clipped at lam's bounds), not
        # the step taken: a line search that had to shrink its step to nothing moved nothing
        # and says nothing about being at the maximum.
        full = float(np.max(np.abs(clip(x + step) - x), initial=0.0))
        if full < tol:
            converged = True
            break
        if t < 1e-8:
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
    info = -(hess - penalty)[np.ix_(keep, keep)]
    if converged:
        # A rating the hands do not bound (a bot that never finished ahead in them) runs off
        # until its terms underflow: the steps vanish and the loop stops, "converged", at
        # thousands of Elo with no curvature left in that direction (a zero standard error,
        # from the pseudo-inverse). That is no maximum: report it as not converged, so the
        # callers' fallback (a prior on the ratings) applies.
        # A term no choice involves (the later-stage seat terms of two-seat hands, which have
        # no places after the first) has no curvature anywhere, at the optimum as at the start:
        # that is an absent term, not a runaway one, and it is left out of the check.
        neutral = np.zeros(lay.size)
        if discounted:
            neutral[lay.omega] = OMEGA_START
        _, h0 = _derivatives(neutral, ch, lay, des, observed=False)
        present = (np.abs(np.diag(h0 - penalty)) > 0.0)[keep]
        sub = info[np.ix_(present, present)]
        eig = np.linalg.eigvalsh(0.5 * (sub + sub.T))
        if not (eig.size and eig[0] > UNBOUNDED_CURVATURE * max(eig[-1], 1e-300)):
            converged = False
    bread = np.zeros((lay.size, lay.size))
    bread[np.ix_(keep, keep)] = np.linalg.pinv(info, hermitian=True)
    unmeasured = 0
    if cluster is None:
        pcov = bread
    else:
        sums = _cluster_sums(scores, ch)
        g = ch.n_clusters
        meat = sums.T @ sums * (g / (g - 1) if g > 1 else 1.0)
        pcov, unmeasured = _floored(bread, bread @ meat @ bread)
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
        unmeasured=unmeasured,
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
