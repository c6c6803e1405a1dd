"""Tests of the Plackett-Luce rating fit, its negative controls and the synthetic validation."""

from __future__ import annotations

import math
import random

import numpy as np
import pytest

from uno_tournament import ratings as rt
from uno_tournament import ratings_fit as rf
from uno_tournament.ratings import (
    ELO_PER_NAT,
    Finish,
    HandResult,
    SequentialElo,
    first_out_probability,
    fit_pairwise_naive,
    fit_plackett_luce,
    gap_for_probability,
    kendall_tau,
    likelihood_of_superiority,
)
from uno_tournament.synthetic import SyntheticConfig, bot_names, simulate_hands, true_ratings
from uno_tournament.validate_ratings import (
    COVERAGE_RANGE,
    RESHUFFLE_TOL,
    TAU_MIN,
    run_validation,
)


def _two_bot_hands(wins: int, losses: int) -> list[HandResult]:
    hands = []
    for k in range(wins + losses):
        order = [("A", 0), ("B", 1)] if k < wins else [("B", 1), ("A", 0)]
        hands.append(HandResult.from_order(f"h{k:03d}", f"d{k:03d}", order))
    return hands


@pytest.fixture(scope="module")
def sample() -> list[HandResult]:
    return simulate_hands(SyntheticConfig(n_hands=800), np.random.default_rng(7))


# --- records -------------------------------------------------------------------------------------


def test_from_points_orders_by_points_and_ties_equal_points() -> None:
    hand = HandResult.from_points(
        "h1", "d1", "C", [("A", 0, 12), ("B", 1, 30), ("C", 2, 0), ("D", 3, 12)]
    )
    assert [(f.bot, f.place) for f in hand.finishes] == [("C", 1), ("A", 2), ("D", 2), ("B", 4)]
    assert [[f.bot for f in g] for g in hand.groups()] == [["C"], ["A", "D"], ["B"]]


@pytest.mark.parametrize(
    "finishes",
    [
        (Finish("A", 0, 1),),
        (Finish("A", 0, 1), Finish("A", 1, 2)),
        (Finish("A", 0, 1), Finish("B", 0, 2)),
    ],
)
def test_malformed_hands_are_rejected(finishes: tuple[Finish, ...]) -> None:
    with pytest.raises(ValueError):
        HandResult("h", "d", finishes)


def test_duplicate_hand_ids_and_unknown_bots_are_rejected() -> None:
    hands = _two_bot_hands(2, 1)
    with pytest.raises(ValueError, match="duplicate hand_id"):
        fit_plackett_luce([*hands, hands[0]])
    with pytest.raises(ValueError, match="not in `bots`"):
        fit_plackett_luce(hands, ["A"])


# --- known small cases ---------------------------------------------------------------------------


def test_two_bots_match_the_closed_form() -> None:
    """With two bots Plackett-Luce is a coin: logit(win rate), SE 1/sqrt(n p q), in Elo."""
    wins, losses = 30, 10
    r = fit_plackett_luce(
        _two_bot_hands(wins, losses), seat_terms=False, cluster=None, places="full"
    )
    n, p = wins + losses, wins / (wins + losses)
    expected = ELO_PER_NAT * math.log(wins / losses)
    assert r.converged
    assert r.elo[0] - r.elo[1] == pytest.approx(expected, abs=1e-8)
    assert r.elo.sum() == pytest.approx(0.0, abs=1e-9)
    _, se = r.diff()
    assert se[0, 1] == pytest.approx(ELO_PER_NAT / math.sqrt(n * p * (1 - p)), rel=1e-8)
    d, low, high = r.diff_ci("A", "B")
    assert low < d < high


def test_three_bot_plackett_luce_matches_a_direct_maximisation() -> None:
    """Every permutation of three bots weighted by hand: compare with a brute-force grid optimum."""
    counts = {("A", "B", "C"): 6, ("A", "C", "B"): 3, ("B", "A", "C"): 4, ("B", "C", "A"): 2}
    counts |= {("C", "A", "B"): 2, ("C", "B", "A"): 1}
    hands = []
    for order, n in counts.items():
        for k in range(n):
            hands.append(
                HandResult.from_order(
                    f"{''.join(order)}{k}", "d", [(b, 0 + i) for i, b in enumerate(order)]
                )
            )
    # Rotate seats away: same seat per bot order position would confound, so fit without seats.
    r = fit_plackett_luce(hands, seat_terms=False, places="full", cluster=None)

    def loglik(tb: float, tc: float) -> float:
        th = {"A": 0.0, "B": tb, "C": tc}
        total = 0.0
        for order, n in counts.items():
            rest = list(order)
            for b in order[:-1]:
                total += n * (th[b] - math.log(sum(math.exp(th[x]) for x in rest)))
                rest.remove(b)
        return total

    tb = (r.elo[1] - r.elo[0]) / ELO_PER_NAT
    tc = (r.elo[2] - r.elo[0]) / ELO_PER_NAT
    best = loglik(tb, tc)
    assert r.log_likelihood == pytest.approx(best, abs=1e-9)
    for db, dc in [(1e-4, 0), (-1e-4, 0), (0, 1e-4), (0, -1e-4), (1e-4, 1e-4)]:
        assert loglik(tb + db, tc + dc) < best


@pytest.mark.parametrize("places", ["discounted", "full", "winner"])
def test_analytic_derivatives_match_finite_differences(
    sample: list[HandResult], places: rt.PlacesModel
) -> None:
    names = bot_names(8)
    index = {b: i for i, b in enumerate(names)}
    ch = rf._pl_choices(rt.Outcomes.from_results(rf._canonical(sample), index), places)
    assert ch.count.sum() == len(ch.row_type) and len(ch.count) < len(ch.row_type)
    lay = rf._Layout(8, 4, True, places == "discounted")
    des = rf._design(ch, lay)
    x = np.random.default_rng(3).normal(0.0, 0.3, lay.size)
    if lay.discounted:
        x[lay.omega] = 0.6
    scores, hess = rf._derivatives(x, ch, lay, des)

    def grad(z: np.ndarray) -> np.ndarray:
        out: np.ndarray = ch.count @ rf._derivatives(z, ch, lay, des)[0]
        return out

    h = 1e-5
    for j in range(lay.size):
        e = np.zeros(lay.size)
        e[j] = h
        num = rf._log_likelihood(x + e, ch, lay, des) - rf._log_likelihood(x - e, ch, lay, des)
        assert (ch.count @ scores)[j] == pytest.approx(num / (2 * h), rel=1e-5, abs=1e-5)
        np.testing.assert_allclose(hess[:, j], (grad(x + e) - grad(x - e)) / (2 * h), atol=1e-4)


def test_ties_use_only_the_strict_part_of_the_order() -> None:
    """Places 2-4 all tied say nothing beyond the winner: same fit as the winner-only model."""
    rng = random.Random(5)
    bots = ["A", "B", "C", "D"]
    tied, strict = [], []
    for k in range(200):
        order = rng.sample(bots, 4)
        seats = rng.sample(range(4), 4)
        tied.append(
            HandResult(
                f"h{k}",
                f"d{k // 4}",
                tuple(
                    Finish(b, s, 1 if i == 0 else 2)
                    for i, (b, s) in enumerate(zip(order, seats, strict=True))
                ),
            )
        )
        strict.append(
            HandResult.from_order(f"h{k}", f"d{k // 4}", list(zip(order, seats, strict=True)))
        )
    a = fit_plackett_luce(tied, places="full")
    b = fit_plackett_luce(strict, places="winner")
    np.testing.assert_allclose(a.elo, b.elo, atol=1e-9)
    np.testing.assert_allclose(a.cov, b.cov, atol=1e-9)


# --- determinism ---------------------------------------------------------------------------------


@pytest.mark.parametrize("places", ["discounted", "full", "winner"])
def test_reshuffled_hands_give_identical_ratings(
    sample: list[HandResult], places: rt.PlacesModel
) -> None:
    base = fit_plackett_luce(sample, places=places)
    shuffled = list(sample)
    random.Random(11).shuffle(shuffled)
    # Also list each hand's seats in another order: only places matter.
    shuffled = [HandResult(h.hand_id, h.deal_id, h.finishes[::-1]) for h in shuffled]
    again = fit_plackett_luce(shuffled, places=places)
    assert base.converged and again.converged
    assert np.max(np.abs(base.elo - again.elo)) <= RESHUFFLE_TOL
    np.testing.assert_allclose(base.cov, again.cov, rtol=1e-9, atol=1e-9)


def test_sequential_elo_is_order_dependent(sample: list[HandResult]) -> None:
    names = bot_names(8)
    a = SequentialElo(k=16)
    a.update_all(sample)
    b = SequentialElo(k=16)
    b.update_all(sample[::-1])
    assert np.max(np.abs(a.as_array(names) - b.as_array(names))) > 1.0


def test_sequential_elo_update_is_zero_sum() -> None:
    elo = SequentialElo(k=16)
    change = elo.update(HandResult.from_order("h", "d", [("A", 0), ("B", 1)]))
    assert change == {"A": 8.0, "B": -8.0}
    hand = HandResult.from_points("h2", "d", "C", [("A", 0, 5), ("B", 1, 5), ("C", 2, 0)])
    assert sum(elo.update(hand).values()) == pytest.approx(0.0, abs=1e-12)


# --- intervals -----------------------------------------------------------------------------------


def test_interval_sanity(sample: list[HandResult]) -> None:
    r = fit_plackett_luce(sample)
    assert r.converged and r.n_hands == 800 and r.n_clusters == 200
    assert r.elo.mean() == pytest.approx(0.0, abs=1e-9)
    assert np.all(r.ci_low < r.elo) and np.all(r.elo < r.ci_high)
    np.testing.assert_allclose(r.cov, r.cov.T)
    assert np.linalg.eigvalsh(r.cov).min() > -1e-9
    los = likelihood_of_superiority(r)
    np.testing.assert_allclose(los + los.T, 1.0)
    strongest, weakest = r.index(r.ranking()[0]), r.index(r.ranking()[-1])
    assert los[strongest, weakest] > 0.99
    anchored = fit_plackett_luce(sample, anchor="bot07")
    assert anchored.elo[7] == 0.0 and anchored.se[7] == 0.0
    np.testing.assert_allclose(anchored.diff()[0], r.diff()[0], atol=1e-9)
    np.testing.assert_allclose(anchored.diff()[1], r.diff()[1], atol=1e-9)
    assert "bot00" in r.table()


def test_prior_keeps_a_hopeless_bot_finite() -> None:
    hands = _two_bot_hands(20, 0)
    with_prior = fit_plackett_luce(hands, seat_terms=False, prior_sd_elo=400.0)
    assert with_prior.converged and 0 < with_prior.elo[0] < 2000


def test_large_sample_recovers_the_generating_model() -> None:
    cfg = SyntheticConfig(n_hands=8000, loser_signal=0.5, later_seat_elo=(0.0, 10.0, 5.0, -5.0))
    hands = simulate_hands(cfg, np.random.default_rng(1))
    r = fit_plackett_luce(hands, bots=bot_names(8), places="discounted")
    truth = true_ratings(cfg)
    z_elo = (r.elo - truth) / r.se
    assert np.all(np.abs(z_elo) < 3.5)
    assert abs(r.loser_weight - cfg.loser_signal) < 3.5 * r.loser_weight_se
    assert np.all(np.abs(r.seat_elo - np.asarray(cfg.seat_elo)) < 20)
    assert np.all(np.abs(r.later_seat_elo - np.asarray(cfg.later_seat_elo)) < 20)


def test_kendall_tau() -> None:
    assert kendall_tau([3, 2, 1], [30, 20, 10]) == 1.0
    assert kendall_tau([3, 2, 1], [10, 20, 30]) == -1.0
    assert kendall_tau([1, 2, 3, 4], [1, 2, 4, 3]) == pytest.approx(4 / 6)


# --- the default fit: a fitted weight of places 2-4 ---------------------------------------------


def test_the_default_fit_weighs_places_2_to_4_by_a_fitted_weight() -> None:
    """Issue 10: the default must not weigh places 2-4 as much as going out."""
    cfg = SyntheticConfig(n_hands=4000, loser_signal=0.3)
    hands = simulate_hands(cfg, np.random.default_rng(21))
    r = fit_plackett_luce(hands, bot_names(8))
    assert r.places == "discounted"
    assert abs(r.loser_weight - 0.3) < 3.5 * r.loser_weight_se and r.loser_weight_se < 0.1
    truth = true_ratings(cfg)
    assert np.all(np.abs(r.elo - truth) < 3.5 * r.se)
    full = fit_plackett_luce(hands, bot_names(8), places="full")
    # plain Plackett-Luce shrinks the going-out scale when places 2-4 carry less signal
    assert np.ptp(full.elo) < 0.8 * np.ptp(r.elo)


def test_a_known_weight_is_held_and_carries_no_uncertainty() -> None:
    cfg = SyntheticConfig(n_hands=2000, loser_signal=0.5)
    hands = simulate_hands(cfg, np.random.default_rng(22))
    fitted = fit_plackett_luce(hands, bot_names(8))
    known = fit_plackett_luce(hands, bot_names(8), known_loser_weight=fitted.loser_weight)
    assert known.loser_weight == pytest.approx(fitted.loser_weight)
    np.testing.assert_allclose(known.elo, fitted.elo, atol=1e-6)  # the same optimum
    # the fitted weight's uncertainty widens the intervals, most for the extreme bots
    assert np.mean(fitted.se) > np.mean(known.se)
    assert fitted.se[0] > known.se[0] and fitted.se[-1] > known.se[-1]


def test_equal_bots_keep_finite_fits_and_intervals_no_wider_than_the_winner_only_fit() -> None:
    """With all bots alike the weight of places 2-4 is not identified: the fit must still
    converge, and its intervals must not blow up (an observed-information bread widens them by
    up to half; the winner-only fit, which uses less data, is the yardstick)."""
    cfg = SyntheticConfig(n_hands=2000)
    wider = []
    for seed in range(6):
        hands = simulate_hands(cfg, np.random.default_rng(100 + seed), np.zeros(8))
        r = fit_plackett_luce(hands, bot_names(8))
        w = fit_plackett_luce(hands, bot_names(8), places="winner")
        assert r.converged and np.all(np.isfinite(r.se)) and r.loser_weight >= 0
        wider.append(float(np.mean(r.se) / np.mean(w.se)))
    assert max(wider) < 1.1, wider


def test_warm_start_gives_the_same_fit_in_fewer_iterations(sample: list[HandResult]) -> None:
    cold = fit_plackett_luce(sample[:600])
    warm = fit_plackett_luce(sample, start=cold.params)
    again = fit_plackett_luce(sample)
    np.testing.assert_allclose(warm.elo, again.elo, atol=1e-6)
    assert warm.iterations < again.iterations


@pytest.mark.parametrize(
    ("policy", "bots", "places"),
    [
        ("last", [[0, 1, 2, 3]], [[2, 1, 4, 3]]),
        ("count", [[0, 1, 2, 3]], [[1, 2, 4, 3]]),
        ("exclude", [[0, -1, 2, 3]], [[1, 2, 4, 3]]),
    ],
)
def test_forfeit_policies(policy: str, bots: list[list[int]], places: list[list[int]]) -> None:
    """Seat 1 went out first, but a stand-in played it: under "last" its bot is last and the
    others keep their real order ahead of it."""
    b = np.array([[0, 1, 2, 3]])
    p = np.array([[2, 1, 4, 3]])
    f = np.array([[False, True, False, False]])
    b2, p2 = rt.apply_forfeits(b, p, f, policy)
    if policy == "last":
        assert p2.tolist() == [[2, 5, 4, 3]]  # same order as 1, 4, 3, 2
    else:
        assert b2.tolist() == bots
    with pytest.raises(ValueError, match="unknown forfeit policy"):
        rt.apply_forfeits(b, p, f, "nope")


def test_two_forfeits_in_one_hand_tie_for_last() -> None:
    b = np.array([[0, 1, 2, 3]])
    p = np.array([[1, 2, 3, 4]])
    f = np.array([[True, False, True, False]])
    _, p2 = rt.apply_forfeits(b, p, f, "last")
    assert p2.tolist() == [[5, 2, 5, 4]]


def test_a_gap_means_odds_of_going_out_first() -> None:
    assert first_out_probability(0) == 0.5
    assert first_out_probability(-15_500_000) == 0.0  # a runaway fit's gap: no OverflowError
    assert first_out_probability(15_500_000) == 1.0
    assert first_out_probability(100) == pytest.approx(0.640, abs=1e-3)
    assert gap_for_probability(first_out_probability(237.0)) == pytest.approx(237.0)


# --- validation on synthetic bots (reduced; `make bench-ratings` runs the full one) -------------


@pytest.mark.slow
@pytest.mark.parametrize("signal", [0.0, 0.3, 1.0])
def test_plackett_luce_passes_the_synthetic_validation_at_any_loser_signal(signal: float) -> None:
    cfg = SyntheticConfig(loser_signal=signal)
    report = run_validation(30, seed=101, config=cfg, methods=["pl", "pl-full"], reshuffle_checks=2)
    pl = report.methods["pl"]
    assert pl.mean_tau >= pl.tau_allowed
    assert 0.91 <= pl.coverage <= 0.98  # 840 pairs in 30 repeats: about +-1.5% of noise
    assert 0.02 <= pl.aa_rate <= 0.085
    assert pl.reshuffle_max_diff <= RESHUFFLE_TOL
    if signal < 0.5:
        full = report.methods["pl-full"]
        assert full.coverage < COVERAGE_RANGE[0] and full.failures()


@pytest.mark.slow
def test_the_validation_fails_the_negative_controls() -> None:
    report = run_validation(5, seed=202, methods=["pairwise-naive", "elo-k16"])
    naive, elo = report.methods["pairwise-naive"], report.methods["elo-k16"]
    assert naive.coverage < COVERAGE_RANGE[0]
    assert naive.failures()
    assert elo.mean_tau < TAU_MIN
    assert elo.reshuffle_max_diff > RESHUFFLE_TOL
    assert elo.failures()


@pytest.mark.slow
def test_naive_pairwise_fails_even_when_plain_plackett_luce_is_true() -> None:
    """Under plain Plackett-Luce the pairwise estimates are unbiased, so this isolates the CIs."""
    cfg = SyntheticConfig()
    report = run_validation(5, seed=303, config=cfg, methods=["pairwise-naive"])
    assert report.methods["pairwise-naive"].coverage < COVERAGE_RANGE[0]


def test_naive_pairwise_fit_is_a_bradley_terry_on_six_games(sample: list[HandResult]) -> None:
    r = fit_pairwise_naive(sample)
    assert r.converged and r.places == "pairwise" and r.cluster is None
    assert kendall_tau(r.elo, true_ratings(SyntheticConfig())) > 0.8


def test_the_final_table_never_reports_a_runaway_rating() -> None:
    """A bot that never finishes ahead has no finite maximum-likelihood rating. Whether the
    optimiser reports it as not converged or stops early far out, the final table falls back to
    the prior, says so, and every rating stays a number a reader can use."""
    from uno_tournament.standings import RUNAWAY_ELO, fit_ratings

    hands = _two_bot_hands(0, 30)
    o = rt.Outcomes.from_results(hands, {"A": 0, "B": 1}, "deal")
    r, note = fit_ratings(o, ["A", "B"])
    assert r is not None and "prior" in note, note
    assert np.all(np.abs(r.elo) < RUNAWAY_ELO) and np.all(np.isfinite(r.se))
    assert r.elo[0] < r.elo[1]


def test_a_fit_that_stops_far_out_is_redone_with_the_prior(monkeypatch: pytest.MonkeyPatch) -> None:
    """An optimiser can also stop early, "converged", thousands of Elo out on its way toward an
    unbounded rating (a forfeits run once reported -15.5 million): that fit is redone too."""
    import dataclasses

    from uno_tournament import standings

    hands = _two_bot_hands(1, 30)
    o = rt.Outcomes.from_results(hands, {"A": 0, "B": 1}, "deal")
    real = rt.fit_outcomes

    def stops_far_out(*args: object, **kw: object) -> rt.Ratings:
        r = real(*args, **kw)  # type: ignore[arg-type]
        if kw.get("prior_sd_elo") is None:
            r = dataclasses.replace(r, converged=True, elo=r.elo * 10_000)
        return r

    monkeypatch.setattr(standings, "fit_outcomes", stops_far_out)
    r, note = standings.fit_ratings(o, ["A", "B"])
    assert r is not None and "prior" in note, note
    assert np.all(np.abs(r.elo) < standings.RUNAWAY_ELO)


def test_a_warm_start_from_a_runaway_fit_reaches_the_cold_fit() -> None:
    """Engine-played hands of a new-version test (NEW at eps 0, OLD at 1, a field at 0.3 and
    0.5): after the first block of 24 hands one bot has not finished ahead, so its fit runs
    away (not converged, thousands of Elo out). A refit on 192 hands warm-started from there
    once stopped at once, "converged", at a log-likelihood of -8e36 with no standard errors,
    and every look after it did the same. It must reach the cold fit, and a fit that cannot
    climb is never called converged."""
    from uno_server.engine import RuleSet
    from uno_tournament.adaptive import block_hands
    from uno_tournament.bench_settled import _play
    from uno_tournament.newversion import newversion_tables

    seed, names = 49, ("new", "old", "f1", "f2")
    randomness = dict(zip(names, (0.0, 1.0, 0.3, 0.5), strict=True))
    rules, rng = RuleSet(scoring="single_hand"), random.Random(seed * 7 + 1)
    played: list[HandResult] = []
    for block in range(8):
        tables = newversion_tables("new", "old", ["f1", "f2"], 1, block, seed)
        played += [_play(s, rules, randomness, rng) for s in block_hands("x", tables, block, seed)]
    first = fit_plackett_luce(played[:24], names)
    assert not first.converged and float(np.max(np.abs(first.elo))) > 4000, first.elo
    cold = fit_plackett_luce(played, names)
    warm = fit_plackett_luce(played, names, start=first.params)
    assert cold.converged and warm.converged
    assert abs(warm.log_likelihood - cold.log_likelihood) < 1e-6
    np.testing.assert_allclose(warm.elo, cold.elo, atol=1e-4)
    assert np.all(np.isfinite(warm.se)) and np.all(warm.se > 0)
    # one Newton iteration from far away cannot be the maximum
    short = fit_plackett_luce(played, names, start=first.params, max_iter=1)
    assert not short.converged


def test_two_seat_hands_converge_and_a_runaway_among_them_does_not() -> None:
    """Two-seat hands have no places after the first, so the later-stage seat terms have no
    information at all: they used to make every such fit report ``converged=False`` (its
    curvature check saw their zero as a runaway). An absent term is left out of the check; a
    bot that never wins still is a runaway."""
    rng = np.random.default_rng(1)
    hands = []
    for i in range(200):
        a, b = (int(v) for v in rng.choice(4, 2, replace=False))
        seats = [0, 1] if rng.random() < 0.5 else [1, 0]
        w = [f"b{a}", f"b{b}"] if rng.random() < 0.5 else [f"b{b}", f"b{a}"]
        order = [(w[0], seats[0]), (w[1], seats[1])]
        hands.append(HandResult.from_order(f"h{i:04d}", f"d{i // 2:04d}", order))
    for places in ("discounted", "winner", "full"):
        r = fit_plackett_luce(hands, places=places)
        assert r.converged, places
        assert np.all(np.isfinite(r.se)) and np.all(r.se > 0)
    runaway = fit_plackett_luce(_two_bot_hands(0, 30))  # A never wins
    assert not runaway.converged
