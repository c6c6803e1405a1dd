"""Issue 10, item 1, on hands the engine really plays: heuristic bots of graded randomness.

* What the reports say a gap means (of the hands two bots share in which one of them goes out
  first, the stronger goes out first ``1 / (1 + 10 ** (-gap / 400))`` of the time) holds in the
  head-to-head records; the old default (plain Plackett-Luce) fails the same check.
* A reduced engine-played validation (``make bench-ratings`` runs the full one).
* The precision a design promises (``schedule.SE_PER_HAND_ELO``) is what these hands give.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from uno_tournament.engine_hands import engine_bot_names, play_engine_hands
from uno_tournament.ratings import HandResult, fit_plackett_luce
from uno_tournament.schedule import SE_PER_HAND_ELO
from uno_tournament.validate_ratings import (
    ENGINE_EPS,
    GAP_Z_MAX,
    gap_check,
    head_to_head,
    load_reference,
    run_engine_validation,
)


@pytest.fixture(scope="module")
def ladder() -> list[HandResult]:
    return play_engine_hands(ENGINE_EPS, 2400, seed=4242)


def test_a_gap_means_the_odds_of_going_out_first_in_the_head_to_head_records(
    ladder: list[HandResult],
) -> None:
    names = engine_bot_names(ENGINE_EPS)
    w = head_to_head(ladder, names)
    r = fit_plackett_luce(ladder, names)
    zmax, mad, pairs = gap_check(w, r.elo)
    assert pairs == 28 and zmax < GAP_Z_MAX and mad < 4.0, (zmax, mad)
    # the strongest and the weakest bot: the record and the ratings agree within the noise
    won, lost = int(w[0, -1]), int(w[-1, 0])
    assert abs(won / (won + lost) - r.first_out(names[0], names[-1])) < 3 * math.sqrt(
        0.25 / (won + lost)
    )
    # plain Plackett-Luce (the old default) compresses the going-out scale: the same check fails
    full = fit_plackett_luce(ladder, names, places="full")
    assert gap_check(w, full.elo)[0] > GAP_Z_MAX + 1.0
    assert np.ptp(full.elo) < 0.75 * np.ptp(r.elo)


def test_the_reference_run_agrees_with_its_own_records() -> None:
    ref = load_reference()
    assert ref["bots"] == list(engine_bot_names(ENGINE_EPS)) and ref["hands"] >= 100_000
    elo = np.asarray(ref["elo"])
    assert np.all(np.diff(elo) < 0)  # more randomness, weaker
    assert 0.25 < ref["loser_weight"] < 0.4
    zmax, mad, _ = gap_check(np.asarray(ref["going_out_first"]), elo)
    assert zmax < GAP_Z_MAX + 1.0 and mad < 1.0, (zmax, mad)
    # the winner-only fit of the same hands measures the same going-out scale
    assert np.max(np.abs(np.asarray(ref["winner_only_elo"]) - elo)) < 10


def test_the_precision_a_design_promises_is_what_engine_hands_give(
    ladder: list[HandResult],
) -> None:
    names = engine_bot_names(ENGINE_EPS)
    r = fit_plackett_luce(ladder, names)
    _, se = r.diff()
    per_bot = 4 * len(ladder) / len(names)
    adjacent = [se[i, i + 1] * math.sqrt(per_bot) for i in range(4)]  # bots within 200 Elo
    assert all(0.8 * SE_PER_HAND_ELO < c < 1.2 * SE_PER_HAND_ELO for c in adjacent), adjacent


@pytest.mark.slow
def test_a_reduced_engine_played_validation_passes_and_fails_the_controls() -> None:
    rep = run_engine_validation(
        6, hands=1000, methods=["pl", "pl-full", "pairwise-naive"], reshuffle_checks=1
    )
    pl = rep.methods["pl"]
    assert pl.mean_tau >= 0.97
    assert pl.coverage >= 0.85  # 168 pairs: the full run holds 0.93-0.97
    assert pl.aa_rate <= 0.12
    assert pl.reshuffle_max_diff <= 1e-6
    assert 0.2 < pl.mean_lam < 0.45
    assert rep.methods["pl-full"].coverage < 0.6
    assert rep.methods["pairwise-naive"].coverage < 0.8
    assert rep.gap_ok
