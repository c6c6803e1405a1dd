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
intervals do not cover them. ``lam`` is estimated jointly with the ratings, within ``[0, inf)``,
and its uncertainty enters every interval through the joint sandwich covariance (delta method on
``theta = cos(omega) * beta``, see :class:`~uno_tournament.ratings_fit._Layout`). The sandwich's
bread is the expected information; its meat sums the scores by deal.

Why ``lam`` has a weak prior (:data:`LAM_PRIOR`, half-normal, sd 0.3): its maximum-likelihood
estimate is in effect the ratio of the bots' spread in places 2-4 to their spread in going out,
and it runs to infinity where that ratio is unbounded: when the bots are all alike (``lam``
multiplies ``theta = 0``, and the going-out spread is noise) or when the two stages disagree (a
strong bot that forfeits half its hands is last in each forfeit but about average at going
out). At ``lam = inf`` every rating is exactly 0 and the intervals shrink to a third of the
winner-only fit's; plain maximum likelihood did that in 19 of 137 A/A tournaments at the
example's design. The fit therefore maximises the log-likelihood minus ``0.5 * (lam / 0.3)**2``:
where the hands measure ``lam`` (standard error 0.02-0.09 on 2,000 hands of bots that differ) the
prior moves it by 0.5-8%; where they do not, it shrinks ``lam`` toward 0, the winner-only model,
and the intervals toward the winner-only fit's. ``loser_weight_prior=None`` is plain maximum
likelihood (a control). ``make bench-aa`` checks 1,000 A/A tournaments.
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

import dataclasses
import math
from collections.abc import Iterable, Sequence

import numpy as np

from .rating_baselines import SequentialElo, fit_pairwise_naive, kendall_tau
from .rating_model import (
    ELO_PER_NAT,
    FORFEIT_POLICIES,
    Z95,
    BoolArray,
    ClusterBy,
    Finish,
    FloatArray,
    HandResult,
    IntArray,
    Outcomes,
    PlacesModel,
    Ratings,
    apply_forfeits,
    first_out_probability,
    first_rated,
    gap_for_probability,
    likelihood_of_superiority,
    normal_cdf,
    student_t_cdf,
    student_t_quantile,
)
from .ratings_fit import LAM_PRIOR, _bot_index, _canonical, _fit, _pl_choices

__all__ = [
    "ELO_PER_NAT",
    "FORFEIT_POLICIES",
    "LAM_PRIOR",
    "Z95",
    "BoolArray",
    "ClusterBy",
    "Finish",
    "FloatArray",
    "HandResult",
    "IntArray",
    "Outcomes",
    "PlacesModel",
    "Ratings",
    "SequentialElo",
    "apply_forfeits",
    "first_out_probability",
    "first_rated",
    "fit_outcomes",
    "fit_pairwise_naive",
    "fit_plackett_luce",
    "gap_for_probability",
    "kendall_tau",
    "likelihood_of_superiority",
    "normal_cdf",
    "student_t_cdf",
    "student_t_quantile",
]


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
            outcomes.out_first,
        )
    _check_options(
        places, cluster, prior_sd_elo, known_loser_weight, loser_weight_prior, max_iter, tol
    )
    ch = _pl_choices(outcomes, places)
    fitted = _fit(
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
    return dataclasses.replace(fitted, units=_units(outcomes, len(names), cluster == "deal"))


def _units(outcomes: Outcomes, n_bots: int, by_cluster: bool) -> IntArray:
    """Per bot, the clusters (``by_cluster``) or the hands its rated seats fall in."""
    seated = outcomes.bots >= 0
    rows = np.nonzero(seated)[0]
    who = outcomes.bots[seated].astype(np.int64)
    unit = outcomes.cluster[rows].astype(np.int64) if by_cluster else rows.astype(np.int64)
    if who.size == 0:
        return np.zeros(n_bots, dtype=np.int64)
    keys = np.unique(who * (int(unit.max()) + 1) + unit)
    counts: IntArray = np.bincount(keys // (int(unit.max()) + 1), minlength=n_bots).astype(np.int64)
    return counts


MAX_LOSER_WEIGHT = 10.0
"""The largest weight of places 2-4 a caller may hold or centre a prior on (10 times going out;
the fits find 0.2-0.5). Beyond it the winner's term vanishes in the scale and every rating
collapses to 0 with a zero error."""


def _check_options(
    places: str,
    cluster: ClusterBy,
    prior_sd_elo: float | None,
    known_loser_weight: float | None,
    loser_weight_prior: tuple[float, float] | None,
    max_iter: int,
    tol: float,
) -> None:
    """The fit's options, each against its documented range: a ValueError naming the option."""
    if places not in ("discounted", "full", "winner"):
        raise ValueError(f"places: {places!r}; choose 'discounted', 'full' or 'winner'")
    if cluster not in ("deal", "hand", None):
        raise ValueError(f"cluster: {cluster!r}; choose 'deal', 'hand' or None")
    if prior_sd_elo is not None and not (
        math.isfinite(prior_sd_elo) and 1.0 <= prior_sd_elo <= 1e6
    ):
        raise ValueError(f"prior_sd_elo: {prior_sd_elo!r}; give 1-1e6 Elo, or None for no prior")
    if known_loser_weight is not None and not (
        math.isfinite(known_loser_weight) and 0.0 <= known_loser_weight <= MAX_LOSER_WEIGHT
    ):
        raise ValueError(
            f"known_loser_weight: {known_loser_weight!r}; give 0-{MAX_LOSER_WEIGHT:g}, or None "
            "to fit it"
        )
    if loser_weight_prior is not None:
        try:
            mean, sd = (float(v) for v in loser_weight_prior)
        except (TypeError, ValueError):
            raise ValueError(
                f"loser_weight_prior: {loser_weight_prior!r}; give (mean, sd), or None"
            ) from None
        if not (math.isfinite(mean) and 0.0 <= mean <= MAX_LOSER_WEIGHT):
            raise ValueError(f"loser_weight_prior: mean {mean!r}; give 0-{MAX_LOSER_WEIGHT:g}")
        if not (math.isfinite(sd) and 0.0 < sd <= 1e3):
            raise ValueError(f"loser_weight_prior: sd {sd!r}; give more than 0 and at most 1000")
    if not (isinstance(max_iter, int) and max_iter >= 1):
        raise ValueError(f"max_iter: {max_iter!r}; give at least 1")
    if not (math.isfinite(tol) and tol > 0.0):
        raise ValueError(f"tol: {tol!r}; give a positive number")


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
