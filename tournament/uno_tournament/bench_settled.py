"""``make bench-settled``: the "run until settled" rule (:mod:`uno_tournament.settled`) on hands
the engine really plays.

Each tournament plays the project's own schedule (:func:`uno_tournament.schedule.plan` with
``hands = max_hands``: every table of four, duplicate deals, seat rotation) between the engine's
heuristic bots of known randomness, hand by hand in the plan's order, refits the ratings every
``look_every`` hands (warm-started, as the runner's refits are) and looks; it stops at the first
look that settles every adjacent pair, or at ``max_hands``. The scheduling is the fixed plan's
(scheduling for information is not built yet).

Reported:

* **error rate** on the ladder of :data:`~uno_tournament.validate_ratings.ENGINE_EPS` against the
  200,000-hand reference (a claim is wrong when it orders a pair against the reference, or calls a
  pair tied whose reference gap is at least delta), with its Wilson 95% interval;
* **A/A**: 8 identical bots, the share of tournaments that declare any pair ordered;
* **efficiency**: hands used over the hands a fixed design needs for the same guarantee (one look
  at the end with Bonferroni-corrected fixed-n intervals, at level alpha over all pairs, that
  decide each adjacent pair of the reference with probability 0.9); the fixed design's
  precision at n hands is the sequential run's final standard error scaled by
  ``sqrt(n_final / n)``;
* the **naive control**: at every look (up to its own stop or the sequential rule's), every pair
  whose fixed-n 95% interval separates is claimed, and it stops when every adjacent pair's interval
  separates; its A/A share must exceed alpha.

The last line has the issue's form; parts not built yet (the new-version test, the uniform
scheduling control) print ``n/a`` and make the line FAIL.
"""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing
import random
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from uno_server.engine import Hand, HeuristicBot, RuleSet
from uno_server.engine.simulate import play_hand

from .engine_hands import engine_bot_names
from .ratings import HandResult, Ratings, fit_plackett_luce
from .schedule import plan as schedule_plan
from .settled import SettledState
from .validate_ratings import ENGINE_AA_EPS, ENGINE_EPS, load_reference

Z95 = 1.959963984540054
POWER = 0.9
"""The fixed design's chance to decide each adjacent pair (the sequential runs settle in nearly
every tournament within the budget)."""
MISSING = ("the new-version test", "the uniform-scheduling control")
"""Targets of the issue this bench cannot check yet: while any is listed the line says FAIL."""


@dataclass(frozen=True)
class Run:
    """One tournament's outcome."""

    hands: int
    settled: bool
    wrong: int
    """Wrong claims of the sequential rule (against the truth)."""
    ordered: int
    """Pairs the sequential rule declared ordered (for the A/A share)."""
    naive_wrong: int
    naive_ordered: int
    fixed_hands: float
    """Hands the fixed design needs for the same guarantee (nan for A/A)."""


def _normal_quantile(p: float) -> float:
    """Upper quantile by bisection on erfc (no scipy)."""
    lo, hi = 0.0, 40.0
    for _ in range(200):
        mid = (lo + hi) / 2
        if 0.5 * math.erfc(mid / math.sqrt(2.0)) > p:
            lo = mid
        else:
            hi = mid
    return hi


def wrong_claims(st: SettledState, truth: dict[str, float]) -> int:
    bad = 0
    for p in st.claims():
        gap = truth[p.a] - truth[p.b]
        if p.status == "better" and (gap <= 0 if p.low > 0 else gap >= 0):
            bad += 1
        if p.status == "tied" and abs(gap) >= st.indifference_elo:
            bad += 1
    return bad


def fixed_design_hands(
    r: Ratings, truth: dict[str, float], alpha: float, delta: float, n_pairs: int
) -> float:
    """Hands a single-look design needs so that Bonferroni fixed-n intervals (level alpha over
    all pairs) decide each adjacent pair of the truth with probability :data:`POWER`."""
    z = _normal_quantile(alpha / n_pairs / 2.0) + _normal_quantile(1.0 - POWER)
    _, se = r.diff()
    order = sorted(truth, key=lambda b: -truth[b])
    idx = {b: i for i, b in enumerate(r.bots)}
    need = 0.0
    for x, y in itertools.pairwise(order):
        gap = abs(truth[x] - truth[y])
        s = float(se[idx[x], idx[y]])
        # precision at n hands: s * sqrt(N / n); decided with probability POWER when
        # (z_alpha' + z_power) * se < gap (or < delta - gap for a pair to certify as tied)
        room = gap if gap >= delta else delta - gap
        need = max(need, r.n_hands * (z * s / room) ** 2)
    return need


def play_until_settled(
    eps: Sequence[float],
    truth: dict[str, float] | None,
    seed: int,
    *,
    alpha: float,
    delta: float,
    max_hands: int,
    look_every: int,
) -> Run:
    names = engine_bot_names(eps)
    randomness = dict(zip(names, eps, strict=True))
    rules = RuleSet(scoring="single_hand")
    rng = random.Random(seed * 7919 + 1)
    specs = schedule_plan(f"s{seed}", names, blocks=1, seed=seed, hands=max_hands)
    st = SettledState(names, alpha=alpha, indifference_elo=delta)
    naive_ordered: set[tuple[str, str]] = set()
    naive_done = False
    played: list[HandResult] = []
    per_bot = dict.fromkeys(names, 0)
    start = None
    r: Ratings | None = None
    settled = False
    for k, spec in enumerate(specs, start=1):
        bots = [HeuristicBot(seed=rng.getrandbits(63), randomness=randomness[b]) for b in spec.bots]
        hand = play_hand(Hand.deal(rules, spec.seed, 0), bots)
        played.append(
            HandResult.from_points(
                spec.hand_id,
                spec.deal_id,
                spec.bots[hand.winner],
                [(b, s, hand.points_held(s)) for s, b in enumerate(spec.bots)],
            )
        )
        for b in spec.bots:
            per_bot[b] += 1
        if k % look_every and k != len(specs):
            continue
        try:
            r = fit_plackett_luce(played, names, start=start)
        except (ValueError, np.linalg.LinAlgError, FloatingPointError):
            continue
        start = r.params
        dec = st.look(r, per_bot)
        if not naive_done and dec.looked:
            # the naive reader: every pair whose fixed-n 95% interval separates at this look is
            # claimed (the higher-rated one better); stops once every adjacent pair separates
            d, se = r.diff()
            i = {b: j for j, b in enumerate(r.bots)}
            rank = dec.ranking
            for u, x in enumerate(rank):
                for y in rank[u + 1 :]:
                    if abs(d[i[x], i[y]]) > Z95 * se[i[x], i[y]]:
                        naive_ordered.add((x, y))
            naive_done = all(
                abs(d[i[x], i[y]]) > Z95 * se[i[x], i[y]] for x, y in itertools.pairwise(rank)
            )
        if dec.settled:
            settled = True
            break
    assert r is not None
    ordered = sum(p.status == "better" for p in st.pairs.values())
    return Run(
        hands=len(played),
        settled=settled,
        wrong=wrong_claims(st, truth) if truth is not None else ordered,
        ordered=ordered,
        naive_wrong=(
            sum(truth[x] <= truth[y] for x, y in naive_ordered)
            if truth is not None
            else len(naive_ordered)
        ),
        naive_ordered=len(naive_ordered),
        fixed_hands=(
            fixed_design_hands(r, truth, alpha, delta, st.n_pairs)
            if truth is not None
            else math.nan
        ),
    )


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = p + z * z / (2 * n)
    spread = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, (centre - spread) / (1 + z * z / n)), min(
        1.0, (centre + spread) / (1 + z * z / n)
    )


def _job(args: tuple[str, int, float, float, int, int]) -> Run:
    kind, seed, alpha, delta, max_hands, look_every = args
    if kind == "ladder":
        ref = load_reference()
        truth = dict(zip(engine_bot_names(ENGINE_EPS), ref["elo"], strict=True))
        return play_until_settled(
            ENGINE_EPS,
            truth,
            seed,
            alpha=alpha,
            delta=delta,
            max_hands=max_hands,
            look_every=look_every,
        )
    return play_until_settled(
        [ENGINE_AA_EPS] * len(ENGINE_EPS),
        None,
        seed,
        alpha=alpha,
        delta=delta,
        max_hands=max_hands,
        look_every=look_every,
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m uno_tournament.bench_settled", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--tournaments", type=int, default=200, help="ladder tournaments")
    parser.add_argument("--aa", type=int, default=200, help="A/A tournaments")
    parser.add_argument("--alpha", type=float, default=0.05)
    parser.add_argument("--indifference-elo", type=float, default=10.0)
    parser.add_argument("--max-hands", type=int, default=20_000)
    parser.add_argument("--look-every", type=int, default=280, help="hands between refits")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--seed", type=int, default=1)
    a = parser.parse_args(argv)
    if a.tournaments < 1 or a.aa < 0 or a.jobs < 1 or a.look_every < 1:
        parser.error("--tournaments and --jobs must be at least 1, --aa at least 0")
    jobs: list[tuple[str, int, float, float, int, int]] = [
        ("ladder", a.seed + i, a.alpha, a.indifference_elo, a.max_hands, a.look_every)
        for i in range(a.tournaments)
    ] + [
        ("aa", a.seed + 100_000 + i, a.alpha, a.indifference_elo, a.max_hands, a.look_every)
        for i in range(a.aa)
    ]
    t0 = time.time()
    runs: list[Run] = []

    def show(i: int) -> None:
        print(f"  {i} of {len(jobs)} tournaments, {time.time() - t0:.0f} s", file=sys.stderr)

    if a.jobs == 1:
        for i, j in enumerate(jobs, start=1):
            runs.append(_job(j))
            show(i)
    else:
        with multiprocessing.get_context("spawn").Pool(a.jobs) as pool:
            for i, res in enumerate(pool.imap(_job, jobs), start=1):
                runs.append(res)
                show(i)
    ladder, aa = runs[: a.tournaments], runs[a.tournaments :]
    return report(ladder, aa, a.alpha, a.max_hands)


def report(ladder: Sequence[Run], aa: Sequence[Run], alpha: float, max_hands: int) -> int:
    n = len(ladder)
    err = sum(r.wrong > 0 for r in ladder)
    lo, hi = wilson(err, n)
    aa_k = sum(r.ordered > 0 for r in aa)
    aa_rate = aa_k / len(aa) if aa else math.nan
    used = float(np.mean([r.hands for r in ladder]))
    fixed = float(np.mean([r.fixed_hands for r in ladder]))
    ratio = used / fixed
    settled = sum(r.settled for r in ladder)
    naive_err = sum(r.naive_wrong > 0 for r in ladder)
    naive_aa = sum(r.naive_ordered > 0 for r in aa)
    print("| check | result | target |")
    print("| --- | --- | --- |")
    print(
        f"| ladder tournaments with a wrong claim | {err} of {n}: {err / n:.1%} "
        f"[{lo:.1%}, {hi:.1%}] | <= {alpha:.0%} |"
    )
    print(f"| ladder tournaments settled within {max_hands} hands | {settled} of {n} | - |")
    if aa:
        print(
            f"| A/A tournaments declaring a pair ordered | {aa_k} of {len(aa)}: "
            f"{aa_rate:.1%} | <= {alpha:.0%} |"
        )
    print(f"| hands used, mean | {used:.0f} | - |")
    print(f"| fixed design's hands for the same guarantee, mean | {fixed:.0f} | - |")
    print(f"| efficiency (used / fixed) | {ratio:.2f} | <= 0.6 |")
    print(f"| naive rule: ladder tournaments with a wrong claim | {naive_err} of {n} | - |")
    if aa:
        print(
            f"| naive rule: A/A declaring a pair ordered (control) | {naive_aa} of {len(aa)}: "
            f"{naive_aa / len(aa):.1%} | > {alpha:.0%} |"
        )
    print("| uniform scheduling control | n/a (scheduling for information not built) | - |")
    print("| new-version test | n/a (not built) | - |")
    core_ok = (
        err / n <= alpha
        and bool(aa)
        and aa_rate <= alpha
        and ratio <= 0.6
        and naive_aa / len(aa) > alpha
    )
    print(f"core targets: {'met' if core_ok else 'missed'}; not built yet: {', '.join(MISSING)}")
    ok = core_ok and not MISSING
    aa_text = f"{aa_rate:.3f}" if aa else "n/a"
    print(
        f"bench-settled: error {err / n:.3f} [{lo:.3f}, {hi:.3f}] (alpha {alpha:g}), "
        f"aa {aa_text}, hands {ratio:.2f} of fixed, new-version errors n/a/n/a, "
        f"{n + len(aa)} tournaments: {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
