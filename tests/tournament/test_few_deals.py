"""Fewer deals than the fit has parameters: no interval without width.

The deal-clustered (sandwich) covariance sums each deal's scores, and at the maximum those sums
add up to zero, so its rank is at most deals - 1. A league's first refit (7 hands of 2 deals, 4
versions: found when a league test failed now and then) gave two versions a standard error of
exactly 0 and the store, the report and the page an "interval" [+30, +30], which the reports
then labelled "reference" (the label of a frame of one bot). Where the deals do not measure a
direction the fit now puts the model-based (Fisher) variance back
(:func:`uno_tournament.ratings_fit._floored`); with many deals nothing changes.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import cast

import numpy as np
import pytest

from uno_tournament import ratings_fit
from uno_tournament.engine_hands import engine_bot_names, play_engine_hands
from uno_tournament.rating_bounds import reference_of
from uno_tournament.ratings import HandResult, Outcomes, PlacesModel, Ratings, fit_outcomes
from uno_tournament.standings import fit_ratings

# The league's first refit, as it stored the hands: (hand, seats in finishing order).
LEAGUE_FIRST_REFIT = [
    ("t0/b0/d1/r3", [("c.3", 1), ("a.1", 3), ("d.4", 2), ("b.2", 0)]),
    ("t0/b0/d0/r1", [("d.4", 3), ("c.3", 0), ("b.2", 2), ("a.1", 1)]),
    ("t0/b0/d1/r2", [("a.1", 2), ("b.2", 3), ("d.4", 1), ("c.3", 0)]),
    ("t0/b0/d1/r1", [("c.3", 3), ("d.4", 0), ("a.1", 1), ("b.2", 2)]),
    ("t0/b0/d0/r0", [("b.2", 1), ("d.4", 2), ("a.1", 0), ("c.3", 3)]),
    ("t0/b0/d0/r3", [("a.1", 3), ("b.2", 0), ("d.4", 1), ("c.3", 2)]),
    ("t0/b0/d1/r0", [("b.2", 1), ("c.3", 2), ("a.1", 0), ("d.4", 3)]),
]
LEAGUE_BOTS = ["a.1", "b.2", "c.3", "d.4"]


@pytest.fixture
def sandwich_alone(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The fit as it was: the sandwich, whatever its rank."""
    monkeypatch.setattr(ratings_fit, "_floored", lambda bread, sandwich: (sandwich, 0))
    yield


def _league() -> Outcomes:
    hands = [
        HandResult.from_order(h, h.rsplit("/", 1)[0], order) for h, order in LEAGUE_FIRST_REFIT
    ]
    ordered = sorted(hands, key=lambda h: h.hand_id)
    return Outcomes.from_results(ordered, {b: i for i, b in enumerate(LEAGUE_BOTS)}, "deal")


def _engine(eps: list[float], hands: int, seed: int) -> tuple[Outcomes, list[str]]:
    names = list(engine_bot_names(eps))
    played = sorted(play_engine_hands(eps, hands, seed), key=lambda h: h.hand_id)
    return Outcomes.from_results(played, {b: i for i, b in enumerate(names)}, "deal"), names


def _widths_are_real(r: Ratings) -> None:
    assert r.n_clusters == 2 and bool(np.all(r.rated))
    for i, b in enumerate(r.bots):
        assert r.se[i] > 1.0, (b, r.se[i])  # Elo: not 0, not rounding
        assert r.ci_low[i] < r.elo[i] < r.ci_high[i], (b, r.ci_low[i], r.elo[i], r.ci_high[i])


def test_a_leagues_first_refit_gives_every_version_an_interval_with_width() -> None:
    r, _ = fit_ratings(_league(), LEAGUE_BOTS)
    assert r is not None
    _widths_are_real(r)
    assert r.unmeasured >= 1  # what the report's note says (test_report_says_so)
    assert (
        reference_of([(b, lo, hi) for b, lo, hi in zip(r.bots, r.ci_low, r.ci_high, strict=True)])
        is None
    )


def test_the_sandwich_alone_gave_that_refit_intervals_of_no_width(sandwich_alone: None) -> None:
    """The defect, kept visible: without the floor two versions' errors are 0 (to rounding)."""
    r, _ = fit_ratings(_league(), LEAGUE_BOTS)
    assert r is not None
    # "0 to rounding": 1e-6 Elo held with one numpy; numpy 2.4.6 leaves 1.1e-6 in one of
    # them. Either is nothing beside the 174 Elo of the others, and far under _widths_are_real's 1
    assert int(np.sum(r.se < 1e-3)) == 2, r.se
    with pytest.raises(AssertionError):
        _widths_are_real(r)


# Engine-played hands of few deals (4 hands a deal): 2 bots' worth of parameters to 16 hands.
FEW = [
    ([0.1] * 4, 8),
    ([0.1] * 4, 16),
    ([0.0, 0.2, 0.5, 1.0], 24),
    ([0.0, 0.1, 0.3, 0.6, 1.0, 1.0, 0.05, 0.2], 16),
]


def _ratio_to_model(outcomes: Outcomes, names: list[str]) -> tuple[float, float]:
    """The smallest ratio, over the bots and over the pairs, of the default fit's standard
    error to the model-based one (``cluster=None``) at the same settings."""
    r, _ = fit_ratings(outcomes, names)
    assert r is not None
    model = fit_outcomes(
        outcomes,
        names,
        places=cast("PlacesModel", r.places),
        cluster=None,
        prior_sd_elo=r.prior_sd_elo,
        loser_weight_prior=r.loser_weight_prior,
        seat_terms=bool(np.any(r.seat_elo)),
    )
    # the bots the report rates, each frame centred on them (as fit_ratings centres its own)
    rated = r.rated
    w = rated / rated.sum()
    frame = np.eye(len(names)) - np.outer(np.ones(len(names)), w)
    model_se = np.sqrt(np.diag(frame @ model.cov @ frame.T))
    both = np.outer(rated, rated) & ~np.eye(len(names), dtype=np.bool_)
    return (
        float(np.min(r.se[rated] / model_se[rated])),
        float(np.min(r.diff()[1][both] / model.diff()[1][both])),
    )


@pytest.mark.parametrize(("eps", "hands"), FEW)
def test_few_deals_never_measure_a_rating_or_a_gap_finer_than_a_tenth_of_the_model(
    eps: list[float], hands: int
) -> None:
    """Each direction keeps at least 1% of the model's variance (UNMEASURED): so each bot and
    each pair at least a tenth of its standard error, over several deals' luck."""
    for seed in range(4):
        o, names = _engine(eps, hands, seed)
        bot, pair = _ratio_to_model(o, names)
        assert bot >= 0.1 - 1e-9 and pair >= 0.1 - 1e-9, (eps, hands, seed, bot, pair)


def test_the_sandwich_alone_measures_few_deals_far_too_finely(sandwich_alone: None) -> None:
    """Break on purpose: without the floor the same check fails (4 bots, 2 deals: a pair's
    error 0.02 of the model's; among the bots rated, more deals give the sandwich more room)."""
    eps, hands = FEW[0]
    worst = min(min(_ratio_to_model(*_engine(eps, hands, seed))) for seed in range(4))
    assert worst < 0.1


def test_many_deals_keep_the_sandwich_exactly(monkeypatch: pytest.MonkeyPatch) -> None:
    """With 80 deals of 4 bots no direction is unmeasured: the covariance is the sandwich's."""
    o, names = _engine([0.0, 0.2, 0.5, 1.0], 320, 1)
    r, _ = fit_ratings(o, names)
    assert r is not None and r.n_clusters == 80 and r.unmeasured == 0
    monkeypatch.setattr(ratings_fit, "_floored", lambda bread, sandwich: (sandwich, 0))
    raw, _ = fit_ratings(o, names)
    assert raw is not None
    assert np.array_equal(r.cov, raw.cov) and np.array_equal(r.elo, raw.elo)


def test_the_floor_is_at_least_the_sandwich_and_the_model_where_unmeasured() -> None:
    """The matrix itself: never below the sandwich; in the sandwich's null directions (rank 1
    from 2 clusters) exactly the model's variance; left alone when full."""
    rng = np.random.default_rng(7)
    a = rng.normal(size=(5, 5))
    bread = a @ a.T + 0.5 * np.eye(5)
    sums = rng.normal(size=(2, 5))
    sums -= sums.mean(axis=0)  # two clusters' score sums, adding up to zero: rank 1
    sandwich = bread @ (sums.T @ sums * 2.0) @ bread
    out, lifted = ratings_fit._floored(bread, sandwich)
    assert lifted == 4  # five directions, one measured
    assert np.min(np.linalg.eigvalsh(out - sandwich)) > -1e-9
    # the bread's frame (bread^-1/2, its symmetric root): the directions c = W v for v the
    # eigenvectors of W sandwich W, one of them measured, four not
    b, u = np.linalg.eigh(bread)
    white = u @ np.diag(b**-0.5) @ u.T
    lam, v = np.linalg.eigh(white @ sandwich @ white)
    assert int(np.sum(lam > 1e-9)) == 1
    for k in range(5):
        c = white @ v[:, k]
        if lam[k] > 1e-9:  # measured: the sandwich's variance, unchanged
            assert c @ out @ c == pytest.approx(c @ sandwich @ c, rel=1e-9)
        else:  # unmeasured (variance 0 by the sandwich): the model's
            assert abs(c @ sandwich @ c) < 1e-9
            assert c @ out @ c == pytest.approx(c @ bread @ c, rel=1e-9)
    full = rng.normal(size=(40, 5))
    full -= full.mean(axis=0)
    many = bread @ (full.T @ full) @ bread
    kept, none = ratings_fit._floored(bread, many)
    assert kept is many and none == 0


def test_a_broken_down_fit_keeps_its_errors_as_they_are() -> None:
    """Non-finite input (a fit that broke down) is passed through, never 'repaired' to look
    finite: its NaN errors are what tell the callers to fall back."""
    bread = np.eye(3)
    bad = np.full((3, 3), np.nan)
    assert ratings_fit._floored(bread, bad)[0] is bad
    assert ratings_fit._floored(bad, bread)[0] is bread


def test_the_report_says_where_few_deals_left_the_model_to_measure() -> None:
    """The note under the leaderboard (and results.json) says when the floor applied, and is
    silent with many deals."""
    from tests.tournament.test_one_sided import _summary_of

    r, note = fit_ratings(_league(), LEAGUE_BOTS)
    assert r is not None and r.unmeasured >= 1
    s = _summary_of(r, note)
    assert f"2 deals are too few to measure every direction of the fit: in {r.unmeasured}" in (
        s.model_text
    )
    assert s.to_json()["model"]["unmeasured_directions"] == r.unmeasured
    o, names = _engine([0.0, 0.2, 0.5, 1.0], 320, 1)
    many, note = fit_ratings(o, names)
    assert many is not None
    s = _summary_of(many, note)
    assert "too few" not in s.model_text and s.to_json()["model"]["unmeasured_directions"] == 0


def test_a_league_refit_over_few_deals_says_so_in_its_note(tmp_path: Path) -> None:
    """The league keeps each refit's note (league.json): the first refits, over a handful of
    deals, say where the model-based error stood in; later ones, over many, do not."""
    import random

    from tests.tournament.test_league_ratings import _league, _play
    from uno_tournament.league.ratings import fit_league, server_name
    from uno_tournament.store import Store

    league = _league(tmp_path)
    store = Store.create(tmp_path / "league" / "play", {"tournament_id": "league"})
    try:
        names = [server_name(v) for v in league.versions()]
        elo = dict(zip(names, (-60.0, 0.0, 40.0, 90.0), strict=True))
        rng = random.Random(3)
        _play(store, rng, names, elo, 8)
        first = fit_league(store, "last")
        assert first.ratings is not None and first.ratings.unmeasured >= 1
        assert "2 deals are too few to measure every direction" in first.note
        _play(store, rng, names, elo, 312)
        later = fit_league(store, "last")
        assert later.ratings is not None and later.ratings.unmeasured == 0
        assert "too few" not in later.note
    finally:
        store.close()
        league.close()
