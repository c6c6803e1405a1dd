"""The new-version test (uno_tournament.newversion): a GSPRT on the fitted gap in information time.

The operating characteristic is checked on the Gaussian process the method assumes (the fitted
gap's score ``S = d_hat / se**2`` a Brownian motion with drift ``d`` in ``t = 1 / se**2``, looked
at once a block), where a thousand tests take seconds; one engine-played test runs the real
thing. The control, a one-sided fixed-n z test rechecked at every look, must exceed alpha.
"""

from __future__ import annotations

import collections
import itertools
import json
import math
import re

import numpy as np
import pytest

from uno_tournament.newversion import (
    NewVersionState,
    fixed_information,
    newversion_tables,
    stop_line_of,
)
from uno_tournament.rating_model import Finish, HandResult, Ratings
from uno_tournament.settled import fit_hands

NAMES = ("new", "old", "f0", "f1")


def gap_ratings(gap: float, se: float, hands: int) -> Ratings:
    cov = np.diag([se * se / 2.0, se * se / 2.0, 100.0, 100.0])
    return Ratings(
        bots=NAMES,
        elo=np.array([gap / 2.0, -gap / 2.0, 0.0, 0.0]),
        cov=cov,
        seat_elo=np.zeros(4),
        later_seat_elo=np.zeros(4),
        loser_weight=0.0,
        loser_weight_se=0.0,
        log_likelihood=0.0,
        iterations=1,
        converged=True,
        n_hands=hands,
        n_clusters=hands,
        places="winner",
        cluster=None,
    )


def brownian_test(
    d: float, rng: np.random.Generator, *, dt: float = 2e-4, looks: int = 400, naive: bool = False
) -> tuple[str, float]:
    """One test on the Gaussian process: returns the verdict and the information used."""
    st = NewVersionState("new", "old", delta0=0.0, delta1=40.0, min_hands=0)
    score = 0.0
    for k in range(1, looks + 1):
        score += d * dt + rng.normal(0.0, math.sqrt(dt))
        t = k * dt
        gap, se = score / t, 1.0 / math.sqrt(t)
        if naive:  # the trap: a one-sided 95% z test of d > delta0, rechecked every look
            if gap / se > 1.645:
                return "H1", t
            continue
        dec = st.look(gap_ratings(gap, se, 100 * k))
        if dec.done:
            return dec.verdict, t
    return "continue", looks * dt


def test_operating_characteristic_and_mean_information() -> None:
    rng = np.random.default_rng(1)
    at0 = [brownian_test(0.0, rng) for _ in range(1000)]
    at1 = [brownian_test(40.0, rng) for _ in range(1000)]
    e0 = sum(v == "H1" for v, _ in at0) / 1000
    e1 = sum(v == "H0" for v, _ in at1) / 1000
    assert e0 <= 0.05 and e1 <= 0.05
    assert all(v in ("H0", "H1") for v, _ in at0 + at1)  # every test decides within the budget
    fixed = fixed_information(0.0, 40.0, 0.05, 0.05)
    assert fixed == pytest.approx((2 * 1.6448536 / 40.0) ** 2, rel=1e-6)
    # the sequential test needs about half the information of a fixed-size test of equal power
    assert np.mean([t for _, t in at0]) < 0.7 * fixed
    assert np.mean([t for _, t in at1]) < 0.7 * fixed


def test_naive_repeated_z_test_exceeds_alpha() -> None:
    rng = np.random.default_rng(2)
    runs = [brownian_test(0.0, rng, naive=True) for _ in range(300)]
    assert sum(v == "H1" for v, _ in runs) / 300 > 0.15


def test_resume_continues_the_same_test() -> None:
    rng = np.random.default_rng(3)
    fits = []
    score = 0.0
    for k in range(1, 200):
        score += 20.0 * 2e-4 + rng.normal(0.0, math.sqrt(2e-4))
        t = k * 2e-4
        fits.append(gap_ratings(score / t, 1 / math.sqrt(t), 100 * k))
    whole = NewVersionState("new", "old", delta1=40.0, min_hands=0)
    verdicts = [whole.look(f).verdict for f in fits]
    part = NewVersionState("new", "old", delta1=40.0, min_hands=0)
    for f in fits[:5]:
        part.look(f)
    part = NewVersionState.from_dict(json.loads(json.dumps(part.to_dict())))
    assert verdicts[5:] == [part.look(f).verdict for f in fits[5:]]
    assert part.to_dict() == whole.to_dict()
    decided = whole.verdict
    assert decided in ("H0", "H1")  # and the decision stands at later looks
    assert whole.look(gap_ratings(-500.0 if decided == "H1" else 500.0, 1.0, 10**6)).verdict == (
        decided
    )


def test_llr_and_the_progress_line() -> None:
    st = NewVersionState("new", "old", delta0=0.0, delta1=10.0, min_hands=0)
    assert re.fullmatch(
        r"LLR: 0\.00 \(-2\.94, 2\.94\) \[0\.00, 10\.00\], 0 hands", st.progress_line()
    )
    st.look(gap_ratings(8.0, 4.0, 1000))
    # LLR = (d1 - d0) * t * (gap - (d0 + d1) / 2) = 10 * (1/16) * 3
    assert st.llr == pytest.approx(10.0 / 16.0 * 3.0)
    line = st.progress_line()
    assert line.startswith("LLR: 1.88 (-2.94, 2.94) [0.00, 10.00]")
    assert "new - old: +8.0 +- 7.8 Elo (95%)" in line and line.endswith("1000 hands")
    st.look(gap_ratings(9.0, 2.0, 4000))
    assert st.verdict == "H1" and st.decided_at == 4000
    assert st.progress_line().endswith("H1 accepted, new is better by 10")


def test_budget_too_few_hands_and_bad_settings() -> None:
    st = NewVersionState("new", "old", delta1=10.0, min_hands=500, max_hands=2000)
    assert not st.look(gap_ratings(50.0, 1.0, 400)).looked  # too few hands: no look
    assert st.look(gap_ratings(5.0, 50.0, 2000)).verdict == "budget"
    with pytest.raises(ValueError, match="delta1"):
        NewVersionState("new", "old", delta0=5.0, delta1=5.0)
    with pytest.raises(ValueError, match="different"):
        NewVersionState("new", "new")
    with pytest.raises(ValueError, match="alpha"):
        NewVersionState("new", "old", alpha=0.0)
    with pytest.raises(ValueError, match="version"):
        NewVersionState.from_dict({"version": 99})
    with pytest.raises(ValueError, match="both"):
        NewVersionState("x", "y").look(gap_ratings(1.0, 1.0, 100))


def test_tables_seat_both_versions_with_the_field_in_turn() -> None:
    field = ["a", "b", "c", "d"]
    tables = [t for blk in range(3) for t in newversion_tables("new", "old", field, 4, blk, 5)]
    assert all(t[:2] == ("new", "old") and len(set(t)) == 4 for t in tables)
    pairs = collections.Counter(tuple(sorted(t[2:])) for t in tables)
    assert set(pairs) == set(itertools.combinations(field, 2))  # every field pair in 12 tables
    assert max(pairs.values()) - min(pairs.values()) == 0
    assert newversion_tables("new", "old", field, 4, 1, 5) == tables[4:8]  # a function of block
    with pytest.raises(ValueError, match="field"):
        newversion_tables("new", "old", ["new", "a", "b"], 2, 0, 1)


def test_engine_played_new_version_test() -> None:
    """A candidate 46 Elo better than the baseline (reference gap of randomness 0.0 vs 0.1),
    delta1 = 46: the test accepts H1 well within the budget."""
    from uno_tournament import bench_settled as bs

    run = bs.play_newversion("delta1", 3, delta1=46.1, alpha=0.05, beta=0.05, max_hands=2400)
    assert run.verdict == "H1" and run.hands < 2400
    assert 1e-6 < run.info_per_hand < 1e-4


def _always_last(hands: int, seed: int = 5) -> list[HandResult]:
    """Hands in which "new" finishes last every time (a candidate whose every seat went to a
    stand-in, under the "last" forfeit policy); the others in a random order. Four rotations
    of each deal, as the plan deals them."""
    rng = np.random.default_rng(seed)
    out = []
    for h in range(hands):
        others = list(rng.permutation(["old", "f0", "f1"]))
        seats = [*others, "new"]
        k = h % 4
        seats = seats[k:] + seats[:k]
        out.append(
            HandResult(
                f"h{h:05d}",
                f"d{h // 4}",
                tuple(
                    Finish(b, s, 4 if b == "new" else others.index(b) + 1)
                    for s, b in enumerate(seats)
                ),
            )
        )
    return out


def test_a_candidate_never_ahead_is_rejected_by_its_limit_not_left_undecided() -> None:
    """An examination's candidate crashed on every decision; under "last" it was last in all
    480 hands, and the test ended "budget, undecided (LLR -0.39)": the prior that keeps the fit
    finite gave the gap the prior's error. The one-sided limit of the gap decides instead."""
    results = _always_last(96)
    prior_only = fit_hands(results, NAMES)
    assert prior_only is not None and not prior_only.sides.any()  # the fit of before
    before = NewVersionState("new", "old", min_hands=96, max_hands=96, sequence=False)
    d = before.look(prior_only)
    assert d.verdict == "budget" and abs(d.llr) < 2.0  # undecided: the defect
    fitted = fit_hands(results, NAMES, bounds=True)
    assert fitted is not None and int(fitted.sides[NAMES.index("new")]) == -1
    st = NewVersionState("new", "old", min_hands=96, max_hands=480)
    d = st.look(fitted)
    assert d.verdict == "H0" and d.looked and st.decided_at == 96
    assert st.high < 0.0 and st.low == -math.inf
    line = st.progress_line()
    assert "new never went out ahead of the others" in line and "at most" in line, line
    again = NewVersionState.from_dict(json.loads(json.dumps(st.to_dict())))
    assert again.to_dict() == st.to_dict() and again.high == st.high
    # a limit is a 5% decision: a test asking beta = 1% plays on, to its budget
    strict = NewVersionState("new", "old", beta=0.01, min_hands=96, max_hands=96)
    d = strict.look(fitted)
    assert d.verdict == "budget" and strict.bounded and strict.high < 0.0
    # the mirror: a candidate ahead of every other bot in every hand is accepted (H1)
    mirror = [
        HandResult(
            r.hand_id, r.deal_id, tuple(Finish(f.bot, f.seat, 5 - f.place) for f in r.finishes)
        )
        for r in results
    ]
    up = fit_hands(mirror, NAMES, bounds=True)
    assert up is not None and up.sides.any()  # the frame is "new"; the others below it
    st = NewVersionState("new", "old", delta1=10.0, min_hands=96)
    assert st.look(up).verdict == "H1" and st.low >= 10.0


def _given_up_after(good: int, bad: int, seed: int = 3) -> list[HandResult]:
    """``good`` hands in a random order (the candidate as good as the others), then ``bad``
    hands in which it is last every time: a candidate given up on after a few hands, a
    stand-in playing each of its seats as a forfeit under the "last" policy."""
    rng = np.random.default_rng(seed)
    out = []
    for h in range(good):
        order = list(rng.permutation(NAMES))
        seats = list(NAMES[h % 4 :] + NAMES[: h % 4])
        out.append(
            HandResult(
                f"g{h:05d}",
                f"g{h // 4}",
                tuple(Finish(b, seats.index(b), order.index(b) + 1) for b in NAMES),
            )
        )
    return out + [
        HandResult(f"x{r.hand_id}", f"x{r.deal_id}", r.finishes) for r in _always_last(bad)
    ]


@pytest.mark.parametrize("good", [24, 48])
def test_a_candidate_given_up_after_some_hands_is_rejected_by_the_sequence(good: int) -> None:
    """An examination's candidate crashed, was restarted and given up on after a few good
    hands; a stand-in then lost every hand for it. Its fitted gap ran off (-600 Elo) and its
    information shrank with it, so the LLR stalled near -1.8 for 1,500 hands and the run ended
    "undecided". The gap's confidence sequence accepts H0; without it the test plays on."""
    fitted = fit_hands(_given_up_after(good, 900), NAMES, bounds=True)
    assert fitted is not None and not fitted.sides.any()  # not one-sided: it went out ahead
    old = NewVersionState("new", "old", min_hands=96, max_hands=2000, sequence=False)
    d = old.look(fitted)
    assert d.verdict == "continue" and old.lower < d.llr < 0.0 and d.gap < -400  # the defect
    st = NewVersionState("new", "old", min_hands=96, max_hands=2000)
    d = st.look(fitted)
    assert d.verdict == "H0" and st.decided_at == fitted.n_hands, (d, st.limit)
    assert st.lower < d.llr  # decided by the sequence, not the LLR
    assert st.limit <= st.delta0 and st.limit > d.gap
    line = stop_line_of(st, st.decided_at)
    assert line.startswith("stopped: H0 accepted, new is not better than old (the gap, ")
    assert "by its confidence sequence at 0.0025" in line, line
    assert st.progress_line().endswith("(by the gap's confidence sequence)")
    again = NewVersionState.from_dict(json.loads(json.dumps(st.to_dict())))
    assert again.to_dict() == st.to_dict() and again.sequence
    # a state recorded before the rule continues without it
    legacy = st.to_dict()
    del legacy["sequence"], legacy["limit"]
    assert not NewVersionState.from_dict(legacy).sequence


def test_the_sequence_leaves_gaps_near_the_hypotheses_to_the_sprt() -> None:
    """At gaps within a hundred Elo of [delta0, delta1] the LLR decides, or nothing does: the
    sequence's limits there are wider than the gap's distance to either hypothesis."""
    for gap, se in ((-17.4, 27.6), (60.0, 27.6), (-60.0, 27.6), (30.0, 15.0)):
        with_seq = NewVersionState("new", "old", min_hands=0)
        without = NewVersionState("new", "old", min_hands=0, sequence=False)
        a, b = with_seq.look(gap_ratings(gap, se, 500)), without.look(gap_ratings(gap, se, 500))
        assert a.verdict == b.verdict and math.isnan(with_seq.limit), (gap, se, a, b)
