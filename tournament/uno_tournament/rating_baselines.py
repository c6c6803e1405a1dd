"""Baselines used only to validate the final table (:mod:`uno_tournament.validate_ratings`): a
sequential Elo for live displays, the naive pairwise fit (a negative control) and Kendall's tau.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from itertools import combinations

import numpy as np

from .rating_model import ClusterBy, FloatArray, HandResult, Outcomes, Ratings
from .ratings_fit import _bot_index, _canonical, _fit, _pair_choices

__all__ = ["SequentialElo", "fit_pairwise_naive", "kendall_tau"]


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
