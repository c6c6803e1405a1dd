"""The anytime-valid stopping rule (uno_tournament.settled).

The error-rate checks run the sequential test on the Gaussian process it assumes (bot estimates
with independent increments, looked at 40 times), where thousands of tournaments take a second,
and once on Plackett-Luce fits of synthetic hands. Both fail when the Bonferroni division is
removed (``test_error_rate_needs_the_correction``) and the naive rule fails them.
"""

from __future__ import annotations

import dataclasses
import itertools
import json
import math
from collections.abc import Callable

import numpy as np
import pytest

from uno_tournament.rating_model import Ratings
from uno_tournament.ratings import HandResult, fit_plackett_luce
from uno_tournament.settled import SettledState, half_width, tune_rho
from uno_tournament.synthetic import SyntheticConfig, bot_names, simulate_hands

BOTS = tuple(f"b{i}" for i in range(8))


def fake_ratings(elo: np.ndarray, var: float | np.ndarray, n_hands: int) -> Ratings:
    n = elo.size
    cov = np.diag(np.broadcast_to(np.asarray(var, dtype=np.float64), (n,)).copy())
    return Ratings(
        bots=BOTS[:n],
        elo=elo.astype(np.float64),
        cov=cov,
        seat_elo=np.zeros(4),
        later_seat_elo=np.zeros(4),
        loser_weight=0.0,
        loser_weight_se=0.0,
        log_likelihood=0.0,
        iterations=1,
        converged=True,
        n_hands=n_hands,
        n_clusters=n_hands,
        places="winner",
        cluster=None,
    )


def wrong_claims(st: SettledState, truth: dict[str, float]) -> int:
    """Claims that are wrong: the order reversed, or tied while the true gap is >= delta."""
    bad = 0
    for p in st.claims():
        gap = truth[p.a] - truth[p.b]
        if p.status == "better" and (gap <= 0 if p.low > 0 else gap >= 0):
            bad += 1
        if p.status == "tied" and abs(gap) >= st.indifference_elo:
            bad += 1
    return bad


def gaussian_tournament(
    true_elo: np.ndarray,
    rng: np.random.Generator,
    *,
    looks: int = 40,
    info_per_look: float = 5e-4,
    make: Callable[..., SettledState] = SettledState,
    naive: bool = False,
) -> tuple[SettledState, bool, int]:
    """One tournament on the canonical Gaussian process: bot i's score has independent Gaussian
    increments of variance ``c`` per step and mean ``theta_i * c`` (c = info per look, 1/Elo^2).
    Returns the state, whether it settled, and the look at which it stopped."""
    n = true_elo.size
    st = make(BOTS[:n], alpha=0.05, indifference_elo=10.0, min_hands_per_bot=0)
    score = np.zeros(n)
    for k in range(1, looks + 1):
        score += true_elo * info_per_look + rng.normal(0.0, math.sqrt(info_per_look), n)
        info = k * info_per_look
        r = fake_ratings(score / info, 1.0 / info, k)
        if naive:  # the optional-stopping trap: a fixed-n 95% interval, rechecked every look
            d, se = r.diff()
            for (a, b), p in st.pairs.items():
                i, j = BOTS.index(a), BOTS.index(b)
                if p.status == "open" and abs(d[i, j]) > 1.959964 * se[i, j]:
                    p.status, p.low, p.high, p.claimed_at = "better", d[i, j], d[i, j], k
            continue
        dec = st.look(r)
        if dec.settled:
            return st, True, k
    return st, False, looks


def error_rate(
    true_elo: np.ndarray, n: int, seed: int, **kw: object
) -> tuple[float, list[int], int]:
    rng = np.random.default_rng(seed)
    truth = dict(zip(BOTS, true_elo.tolist(), strict=False))
    errors, stops, settled = 0, [], 0
    for _ in range(n):
        st, ok, k = gaussian_tournament(true_elo, rng, **kw)  # type: ignore[arg-type]
        errors += wrong_claims(st, truth) > 0
        stops.append(k)
        settled += ok
    return errors / n, stops, settled


def binomial_upper(k: int, n: int, z: float = 2.576) -> float:
    """Wilson upper bound (99%)."""
    p = k / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre + spread) / (1 + z * z / n)


def binomial_lower(k: int, n: int, z: float = 2.576) -> float:
    p = k / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return (centre - spread) / (1 + z * z / n)


# -- the boundary --------------------------------------------------------------------------------


def test_half_width_is_the_mixture_boundary() -> None:
    a, rho = 0.05 / 28, 0.003
    for t in (1e-4, 1e-3, 1e-2, 1.0):
        w = half_width(t, rho, a)
        # at the boundary the mixture martingale equals exactly 1/a
        s = w * t
        m = math.sqrt(rho / (t + rho)) * math.exp(s * s / (2 * (t + rho)))
        assert m == pytest.approx(1 / a, rel=1e-9)
    ws = [half_width(t, rho, a) for t in np.geomspace(1e-5, 10, 50)]
    assert all(x > y for x, y in itertools.pairwise(ws))  # narrows as information grows
    assert half_width(0.0, rho, a) == math.inf
    assert half_width(math.nan, rho, a) == math.inf


def test_tune_rho_puts_the_tightest_point_at_the_target() -> None:
    a = 0.05 / 28
    rho = tune_rho(a, 20.0)
    # find t where the tuned sequence is 20 Elo wide; no other rho is narrower there
    lo, hi = 1e-8, 1e3
    for _ in range(200):
        mid = math.sqrt(lo * hi)
        lo, hi = (mid, hi) if half_width(mid, rho, a) > 20.0 else (lo, mid)
    for f in (0.3, 0.7, 1.5, 3.0):
        assert half_width(hi, rho * f, a) > half_width(hi, rho, a)
    with pytest.raises(ValueError):
        tune_rho(0.0, 20.0)
    with pytest.raises(ValueError):
        tune_rho(0.01, -1.0)


# -- error rates on the Gaussian process ----------------------------------------------------------

LADDER = np.array([105.0, 75.0, 45.0, 45.0, 15.0, -25.0, -100.0, -160.0])
"""Gaps like the example field's, with one pair (45/45) tied."""


def test_aa_declares_nothing_ordered() -> None:
    rate, _, _ = error_rate(np.zeros(8), 300, seed=1)
    assert rate <= 0.05
    assert binomial_upper(round(rate * 300), 300) < 0.08


def test_ladder_error_rate_and_it_settles() -> None:
    rate, stops, settled = error_rate(LADDER, 150, seed=2, looks=200, info_per_look=5e-3)
    assert binomial_upper(round(rate * 150), 150) < 0.1
    assert rate <= 0.05
    assert settled >= 140  # nearly every run decides every adjacent pair within the budget
    assert np.mean(stops) < 150  # and stops well before the budget


def test_naive_rule_fails() -> None:
    """The control: rechecking a fixed-n 95% interval at every look claims orders in A/A."""
    rate, _, _ = error_rate(np.zeros(8), 60, seed=3, naive=True)
    assert binomial_lower(round(rate * 60), 60) > 0.05


class NoCorrection(SettledState):
    """The correction broken on purpose: every pair gets the whole alpha."""

    @property
    def alpha_pair(self) -> float:
        return self.alpha


def test_error_rate_needs_the_correction() -> None:
    """Without the division by C(N, 2) the A/A error rate exceeds alpha: the correction the
    other tests rely on is what holds them."""
    rate, _, _ = error_rate(np.zeros(8), 300, seed=1, make=NoCorrection)
    assert binomial_lower(round(rate * 300), 300) > 0.05


# -- the state: claims kept, resume exact, degenerate fits -----------------------------------------


def test_claims_are_never_retracted_and_resume_is_exact() -> None:
    rng = np.random.default_rng(5)
    n, c = 8, 2e-4
    score = np.zeros(n)
    fits = []
    for k in range(1, 150):
        score += LADDER * c + rng.normal(0.0, math.sqrt(c), n)
        fits.append(fake_ratings(score / (k * c), 1.0 / (k * c), 24 * k))
    whole = SettledState(BOTS, min_hands_per_bot=0)
    seen: dict[tuple[str, str], tuple[str, int | None]] = {}
    for r in fits:
        whole.look(r)
        for key, p in whole.pairs.items():
            if key in seen:  # a claim stays as made
                assert (p.status, p.claimed_at) == seen[key]
            elif p.status != "open":
                seen[key] = (p.status, p.claimed_at)
    assert seen
    # kill after 60 looks: the stored state, read back, continues the same test exactly
    first = SettledState(BOTS, min_hands_per_bot=0)
    for r in fits[:60]:
        first.look(r)
    resumed = SettledState.from_dict(json.loads(json.dumps(first.to_dict())))
    for r in fits[60:]:
        resumed.look(r)
    assert resumed.to_dict() == whole.to_dict()


def test_degenerate_fits_are_skipped_not_claimed() -> None:
    st = SettledState(BOTS[:4], min_hands_per_bot=0)
    elo = np.array([300.0, 100.0, -100.0, -300.0])
    bad = fake_ratings(elo, np.nan, 100)
    dec = st.look(bad)
    assert not dec.looked and "no finite" in dec.note and not st.claims()
    zero = fake_ratings(elo, 0.0, 100)  # no information: nothing is claimed from a zero error
    dec = st.look(zero)
    assert dec.looked and not st.claims() and not dec.settled
    with pytest.raises(ValueError, match="other bots"):  # a bot the test does not know
        SettledState(BOTS[:3]).look(fake_ratings(elo, 1.0, 100))
    # a fit of some of its bots (one with no rated hand left out): only their pairs move
    part = SettledState(BOTS[:5], min_hands_per_bot=0)
    dec = part.look(fake_ratings(elo, 1.0, 100))
    assert dec.looked and BOTS[4] not in dec.ranking
    left = [p for p in part.pairs.values() if BOTS[4] in (p.a, p.b)]
    assert left and all((p.low, p.high) == (-math.inf, math.inf) for p in left)
    assert any(math.isfinite(p.low) for p in part.pairs.values() if BOTS[4] not in (p.a, p.b))
    gated = SettledState(BOTS[:4], min_hands_per_bot=50)
    dec = gated.look(fake_ratings(elo, 1.0, 100), {b: 40 for b in BOTS[:4]})
    assert not dec.looked and not gated.claims()
    dec = gated.look(fake_ratings(elo, 1.0, 100), {b: 60 for b in BOTS[:4]})
    assert dec.looked and dec.settled and dec.summary() == "3 of 3 pairs decided"
    for bad_args in ({"alpha": 0.0}, {"alpha": 1.0}, {"indifference_elo": 0.0}):
        with pytest.raises(ValueError):
            SettledState(BOTS[:4], **bad_args)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="version"):
        SettledState.from_dict({"version": 99})


def test_summary_names_open_pairs_in_ranking_order() -> None:
    st = SettledState(BOTS[:4], min_hands_per_bot=0)
    dec = st.look(fake_ratings(np.array([300.0, 1.0, 0.0, -301.0]), 4.0, 400))
    assert dec.ranking == ("b0", "b1", "b2", "b3")
    assert dec.open_pairs == ["b1~b2"]
    assert dec.summary() == "2 of 3 pairs decided, open: b1~b2"


# -- on real Plackett-Luce fits -----------------------------------------------------------------


def test_on_fitted_hands_ladder_settles_correctly() -> None:
    """Synthetic hands, refit after every 96 hands: the sequential test settles a wide ladder with
    every claim right, and an A/A field claims no order."""
    cfg = SyntheticConfig(n_bots=5, spacing_elo=150.0, n_hands=96 * 40)
    names = bot_names(5)
    truth_elo = 150.0 * (np.arange(5, 0, -1) - 3.0)
    truth = dict(zip(names, truth_elo.tolist(), strict=True))
    hands = simulate_hands(cfg, np.random.default_rng(11))
    st = SettledState(names, min_hands_per_bot=0)
    start = None
    for k in range(1, 41):
        r = fit_plackett_luce(hands[: 96 * k], names, start=start)
        start = r.params
        dec = st.look(r)
        if dec.settled:
            break
    assert dec.settled, dec.summary()
    assert list(dec.ranking) == list(names)
    assert wrong_claims(st, truth) == 0

    aa = SettledState(names, min_hands_per_bot=0)
    aa_cfg = SyntheticConfig(n_bots=5, spacing_elo=0.0, n_hands=96 * 20)
    aa_hands = simulate_hands(aa_cfg, np.random.default_rng(12))
    for k in range(1, 21):
        aa.look(fit_plackett_luce(aa_hands[: 96 * k], names))
    assert all(p.status != "better" for p in aa.pairs.values())


# -- the bench's pieces (make bench-settled runs them at full size) --------------------------------


def test_bench_fixed_design_and_line(capsys: pytest.CaptureFixture[str]) -> None:
    from uno_tournament import bench_settled as bs

    truth = {"b0": 100.0, "b1": 50.0, "b2": 45.0, "b3": -200.0}
    r = fake_ratings(np.array([100.0, 50.0, 45.0, -200.0]), 25.0, 1000)
    n_each = bs.fixed_design_hands(r, truth, 0.05, 10.0, 6, joint=False)
    # the b1~b2 pair (5 apart) needs (z' + z_power) * se < 10 - 5 with se = sqrt(50) at 1000
    z = bs._normal_quantile(0.05 / 12) + bs._normal_quantile(0.1)
    assert n_each == pytest.approx(1000 * (z * math.sqrt(50.0) / 5.0) ** 2, rel=1e-6)
    # the joint definition also counts a close pair decided as ordered (rightly), so here less
    assert bs.fixed_design_hands(r, truth, 0.05, 10.0, 6) < n_each
    # on a ladder (every gap above delta) deciding every pair in the same tournament w.p. 0.9
    # needs more than deciding each on its own w.p. 0.9
    ladder = {"b0": 150.0, "b1": 100.0, "b2": 50.0, "b3": 0.0}
    r2 = fake_ratings(np.array([150.0, 100.0, 50.0, 0.0]), 25.0, 1000)
    each = bs.fixed_design_hands(r2, ladder, 0.05, 10.0, 6, joint=False)
    assert each < bs.fixed_design_hands(r2, ladder, 0.05, 10.0, 6) < 1.6 * each
    # planned from delta alone: every adjacent pair's Bonferroni half-width at most delta / 2
    n_plan = bs.planned_design_hands(r, ["b0", "b1", "b2", "b3"], 0.05, 10.0, 6)
    zc = bs._normal_quantile(0.05 / 12)
    assert n_plan == pytest.approx(1000 * (zc * math.sqrt(50.0) / 5.0) ** 2, rel=1e-6)
    assert bs._normal_quantile(0.025) == pytest.approx(1.959964, abs=1e-5)
    lo, hi = bs.wilson(0, 200)
    assert lo < 1e-12 and 0.015 < hi < 0.02
    good = bs.Run(1000, True, 0, 3, 0, 3, 2000.0, 1800.0, 9000.0)
    uni = bs.Run(1500, True, 0, 3, 1, 3, 2000.0, 1800.0, 9000.0)
    aa = bs.Run(4000, False, 0, 0, 1, 1, math.nan)
    nv = [bs.NVRun("delta0", "H0", 300, 1e-5)] * 4 + [bs.NVRun("delta1", "H1", 500, 1e-5)] * 4
    assert bs.report([good] * 4, [aa] * 4, 0.05, 4000, [uni] * 4, nv, 0.05, 46.0) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == (
        "bench-settled: error 0.000 [0.000, 0.490] (alpha 0.05), aa 0.000, hands 0.50 of fixed, "
        "new-version errors 0.000/0.000, 16 tournaments: PASS"
    )
    # any target missed makes it FAIL: here the uniform control needs no more hands
    assert bs.report([good] * 4, [aa] * 4, 0.05, 4000, [good] * 4, nv, 0.05, 46.0) == 1
    out = capsys.readouterr().out
    assert "uniform control does not need more hands" in out and out.strip().endswith("FAIL")


def test_bench_engine_aa_tournament_claims_no_order() -> None:
    """A real (tiny) engine-played run: five identical bots, adaptive tables, a look after every
    block of 96 hands, to the budget; nothing is declared ordered and the budget is respected."""
    from uno_tournament import bench_settled as bs

    run = bs.play_until_settled([0.3] * 5, None, 7, alpha=0.05, delta=10.0, max_hands=576, tables=4)
    assert run.hands == 576 and not run.settled
    assert run.ordered == 0 and run.wrong == 0


# -- looks on the plan's prefixes: the same decisions however the hands arrive ---------------------


def _ladder_hands() -> tuple[list[HandResult], tuple[str, ...]]:
    cfg = SyntheticConfig(n_bots=4, spacing_elo=200.0, n_hands=96 * 12)
    return simulate_hands(cfg, np.random.default_rng(21)), bot_names(4)


def test_advance_looks_only_at_complete_prefixes_and_resumes_exactly() -> None:
    from uno_tournament.settled import advance, stop_line

    hands, names = _ladder_hands()
    ids = [h.hand_id for h in hands]
    by_id = {h.hand_id: h for h in hands}

    whole = SettledState(names, min_hands_per_bot=48)
    decisions = advance(whole, ids, by_id, 96)
    assert whole.settled_at is not None and decisions[-1].settled
    assert (
        stop_line(decisions[-1], budget_reached=False) == "stopped: settled (3 of 3 pairs decided)"
    )
    assert whole.settled_at % 96 == 0 and len(decisions) == whole.settled_at // 96
    assert advance(whole, ids, by_id, 96) == []  # nothing after the settling look

    # hands arrive out of order (concurrent tables), with a kill and a resume in between
    rng = np.random.default_rng(3)
    order = list(rng.permutation(len(ids)))
    part = SettledState(names, min_hands_per_bot=48)
    arrived: dict[str, HandResult | None] = {}
    for n, i in enumerate(order):
        arrived[ids[i]] = by_id[ids[i]]
        if n % 50 == 0:
            advance(part, ids, arrived, 96)
            # a look never runs ahead of the complete prefix
            assert all(h in arrived for h in ids[: part.through])
            part = SettledState.from_dict(json.loads(json.dumps(part.to_dict())))
    advance(part, ids, arrived, 96)
    assert part.to_dict() == whole.to_dict()


def test_advance_budget_and_left_out_hands() -> None:
    from uno_tournament.settled import advance, stop_line

    cfg = SyntheticConfig(n_bots=4, spacing_elo=0.0, n_hands=96 * 3)
    hands = simulate_hands(cfg, np.random.default_rng(22))
    names = bot_names(4)
    ids = [h.hand_id for h in hands]
    stored: dict[str, HandResult | None] = {h.hand_id: h for h in hands}
    stored[ids[5]] = None  # left out of the ratings (forfeit policy "exclude"): still counts
    st = SettledState(names, min_hands_per_bot=0)
    decisions = advance(st, ids, stored, 100)  # the last look covers the plan's tail
    assert [d.hands for d in decisions] == [99, 199, 287]
    assert st.through == len(ids) and st.settled_at is None
    line = stop_line(decisions[-1], budget_reached=True)
    assert line.startswith("stopped: budget, 3 pairs open: ")
    last = decisions[-1]
    first_open = next(i for i, p in enumerate(last.adjacent) if p.status == "open")
    decided = [
        p if i == first_open or p.status != "open" else dataclasses.replace(p, status="better")
        for i, p in enumerate(last.adjacent)
    ]
    one = dataclasses.replace(last, adjacent=tuple(decided))
    assert stop_line(one, budget_reached=True).startswith("stopped: budget, 1 pair open: ")
    with pytest.raises(ValueError):
        advance(st, ids, stored, 0)


def test_a_block_that_seats_some_bots_updates_only_their_pairs() -> None:
    """Adaptive blocks may leave decided bots out (uno_tournament.adaptive.active_ranks): the
    block's fit rates the bots it seats (settled.fit_block), their pairs accumulate, the others
    keep their sums exactly; a fit rating a bot the test does not know is refused."""
    import dataclasses

    from uno_tournament.settled import fit_block

    names = BOTS[:5]
    st = SettledState(names, alpha=0.05, indifference_elo=10.0, min_hands_per_bot=0)
    full = fake_ratings(np.array([60.0, 30.0, 0.0, -30.0, -60.0]), 100.0, 500)
    st.look_block(full, names, 500)
    before = {k: (p.score, p.info) for k, p in st.pairs.items()}
    part = dataclasses.replace(
        fake_ratings(np.array([40.0, 10.0, -10.0, -40.0]), 100.0, 500), bots=names[:4]
    )
    dec = st.look_block(part, names, 1000)
    assert dec.looked
    for (a, b), p in st.pairs.items():
        if names[4] in (a, b):  # the bot the block did not seat: untouched
            assert (p.score, p.info) == before[(a, b)]
        else:
            assert p.info == pytest.approx(before[(a, b)][1] + 1.0 / 200.0)
    stranger = dataclasses.replace(part, bots=(*names[:3], "nobody"))
    with pytest.raises(ValueError, match="two or more of the sequential test's bots"):
        st.look_block(stranger, names, 1500)
    # fit_block fits over the bots the hands seat, in the test's order
    hands = simulate_hands(
        SyntheticConfig(n_bots=4, spacing_elo=100.0, n_hands=480), np.random.default_rng(3)
    )
    fitted = fit_block(hands, (*bot_names(4), "absent"))
    assert fitted is not None and fitted.ratings.bots == bot_names(4)
    # each pair's variance is the larger of the sandwich's and the model-based one
    sw, fi = fitted.ratings.cov, fitted.bread
    for i in range(4):
        for j in range(i + 1, 4):
            assert fitted.pair_var(i, j) == max(
                sw[i, i] + sw[j, j] - 2 * sw[i, j], fi[i, i] + fi[j, j] - 2 * fi[i, j]
            )
