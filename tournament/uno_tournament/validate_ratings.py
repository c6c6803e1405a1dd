"""Validate the rating methods twice: on synthetic bots of known strength, and on hands the engine
really plays between bots of known relative strength.

``make bench-ratings`` runs ``python -m uno_tournament.validate_ratings`` with both parts:

* **synthetic**: per loser signal in ``0, 0.25, 0.5, 0.75, 1`` (the weight of places 2-4 in the
  generating model), ``--repeats`` tournaments of 8 bots 30 Elo apart over 2,000 hands (duplicate
  dealing, see :mod:`uno_tournament.synthetic`) and as many A/A tournaments of 8 equal bots;
* **engine**: ``--engine-repeats`` tournaments of 2,000 hands the engine plays between its
  heuristic bot with randomness ``eps`` in :data:`ENGINE_EPS` (:mod:`uno_tournament.engine_hands`)
  and as many A/A tournaments of 8 bots with ``eps = 0.2``. The truth is the reference gap of a
  long run (``tournament/uno_tournament/data/engine_reference.json``; the command that made it
  is in the file: ``python -m uno_tournament.validate_ratings --make-reference``).

Methods (the first is the final-table method, the others are controls that must fail):

* ``pl``: Plackett-Luce, places 2-4 weigh a fitted ``lam``, seat terms, clustered by deal;
* ``pl-full``: plain Plackett-Luce (``lam = 1``): its scale is wrong when ``lam < 1``;
* ``pairwise-naive``: six independent Bradley-Terry games per hand: intervals too narrow;
* ``elo-k16``: sequential Elo with K=16: noisy and order-dependent, no intervals.

The ``pl`` method is fitted the way the final table is
(:func:`uno_tournament.standings.fit_ratings`, with its fallback to a prior on the ratings when a
bot never finishes ahead); the share of fits that needed that fallback is reported (column
``fallback``).

``--aa N`` (``make bench-aa``) runs the collapse check of issue 20 instead: ``N`` A/A tournaments
at the example's design (8 identical engine heuristic bots of randomness 0.2 on the tournament's
own schedule, ``blocks = 1``: 70 tables, 1,680 hands), counting non-finite weights of places 2-4
and comparing each fit's mean interval width with the winner-only fit's (pass: within
:data:`AA_WIDTH_TOL`).

Pass criteria: mean Kendall tau >= 0.99 where the design allows it (when even the oracle, the
same fit told the true ``lam``, falls short, within 0.003 of the oracle), pairwise 95% CI
coverage in [0.93, 0.97], ratings identical to 1e-6 Elo when the hands are reshuffled, and an
A/A rate of significant pairs in [0.035, 0.065]. On engine hands the meaning of a gap is checked
too: in the hands two bots share in which one of them goes out first, the stronger goes out
first as often as ``1 / (1 + 10 ** (-gap / 400))`` says, for every pair (|z| < 3.5).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import numpy as np

from uno_tournament.engine_hands import engine_bot_names, play_engine_hands, play_schedule_hands
from uno_tournament.ratings import (
    Z95,
    FloatArray,
    HandResult,
    Outcomes,
    Ratings,
    SequentialElo,
    first_out_probability,
    fit_outcomes,
    fit_pairwise_naive,
    fit_plackett_luce,
    kendall_tau,
)
from uno_tournament.standings import fit_ratings
from uno_tournament.synthetic import SyntheticConfig, bot_names, simulate_hands, true_ratings

__all__ = [
    "AA_RANGE",
    "AA_WIDTH_TOL",
    "COVERAGE_RANGE",
    "ENGINE_EPS",
    "RESHUFFLE_TOL",
    "TAU_MIN",
    "AAResult",
    "MethodStats",
    "ValidationReport",
    "aa_tournament",
    "load_reference",
    "main",
    "run_aa",
    "run_engine_validation",
    "run_validation",
]

TAU_MIN = 0.99
TAU_SLACK = 0.003
COVERAGE_RANGE = (0.93, 0.97)
AA_RANGE = (0.035, 0.065)
RESHUFFLE_TOL = 1e-6
GAP_Z_MAX = 3.5
SIGNALS = (0.0, 0.25, 0.5, 0.75, 1.0)
ENGINE_EPS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.65, 0.8)
ENGINE_AA_EPS = 0.2
ENGINE_HANDS = 2000
REFERENCE_HANDS = 200_000
REFERENCE_SEED = 1_000_003
REFERENCE_FILE = "engine_reference.json"
AA_SEED = 100_000
AA_WIDTH_TOL = 0.25
"""An A/A fit's mean interval width must be within 25% of the winner-only fit's."""

Rater = Callable[[Sequence[HandResult], Sequence[str]], Ratings | FloatArray]


def _pl(hands: Sequence[HandResult], bots: Sequence[str]) -> Ratings:
    """The final table's fit, fallback included; a fit that needed the fallback says so in
    ``prior_sd_elo``."""
    ordered = sorted(hands, key=lambda h: h.hand_id)
    index = {b: i for i, b in enumerate(bots)}
    r, _ = fit_ratings(Outcomes.from_results(ordered, index), list(bots))
    assert r is not None
    return r


def _pl_full(hands: Sequence[HandResult], bots: Sequence[str]) -> Ratings:
    return fit_plackett_luce(hands, bots, places="full")


def _pl_winner(hands: Sequence[HandResult], bots: Sequence[str]) -> Ratings:
    return fit_plackett_luce(hands, bots, places="winner")


def _naive(hands: Sequence[HandResult], bots: Sequence[str]) -> Ratings:
    return fit_pairwise_naive(hands, bots)


def _elo16(hands: Sequence[HandResult], bots: Sequence[str]) -> FloatArray:
    elo = SequentialElo(k=16.0)
    elo.update_all(hands)
    return elo.as_array(bots)


METHODS: dict[str, tuple[Rater, str]] = {
    "pl": (_pl, "Plackett-Luce, fitted weight of places 2-4, seat terms, clustered by deal"),
    "pl-full": (_pl_full, "plain Plackett-Luce, places 2-4 weigh as much as going out (control)"),
    "pairwise-naive": (_naive, "six independent pairwise games per hand (control)"),
    "elo-k16": (_elo16, "sequential Elo, K=16 (control)"),
    "pl-winner": (_pl_winner, "winner-only Plackett-Luce, clustered by deal (for comparison)"),
}
CORE_METHODS = ("pl", "pl-full", "pairwise-naive", "elo-k16")
CONTROLS = ("pl-full", "pairwise-naive", "elo-k16")


@dataclass
class MethodStats:
    """Accumulated figures of one method."""

    name: str
    taus: list[float] = field(default_factory=list)
    covered: int = 0
    pairs: int = 0
    aa_flagged: int = 0
    aa_pairs: int = 0
    reshuffle_max_diff: float = 0.0
    reshuffle_checks: int = 0
    has_ci: bool = True
    tau_allowed: float = TAU_MIN
    """The tau target: 0.99, or the oracle's tau minus 0.003 where the design allows no more."""
    lams: list[float] = field(default_factory=list)
    fits: int = 0
    fallbacks: int = 0
    """Fits that needed the final table's fallback (a prior on the ratings)."""

    @property
    def fallback_share(self) -> float:
        return self.fallbacks / self.fits if self.fits else math.nan

    @property
    def mean_tau(self) -> float:
        return float(np.mean(self.taus)) if self.taus else math.nan

    @property
    def coverage(self) -> float:
        return self.covered / self.pairs if self.pairs else math.nan

    @property
    def aa_rate(self) -> float:
        return self.aa_flagged / self.aa_pairs if self.aa_pairs else math.nan

    @property
    def mean_lam(self) -> float:
        return float(np.mean(self.lams)) if self.lams else math.nan

    def failures(self) -> list[str]:
        """The pass criteria this method fails (empty = passes)."""
        out = []
        if not self.mean_tau >= self.tau_allowed:
            out.append(f"tau {self.mean_tau:.4f} < {self.tau_allowed:.4f}")
        if not self.has_ci:
            out.append("no confidence intervals")
        else:
            if not COVERAGE_RANGE[0] <= self.coverage <= COVERAGE_RANGE[1]:
                out.append(f"coverage {self.coverage:.4f} outside {COVERAGE_RANGE}")
            if self.aa_pairs and not AA_RANGE[0] <= self.aa_rate <= AA_RANGE[1]:
                out.append(f"A/A rate {self.aa_rate:.4f} outside {AA_RANGE}")
        if self.reshuffle_checks and not self.reshuffle_max_diff <= RESHUFFLE_TOL:
            out.append(f"reshuffle changes ratings by {self.reshuffle_max_diff:.3g} Elo")
        return out

    def row(self, label: str) -> str:
        fails = self.failures()
        verdict = "PASS" if not fails else "FAIL: " + "; ".join(fails)
        cov = f"{self.coverage:9.4f}" if self.has_ci else f"{'-':>9}"
        aa = f"{self.aa_rate:9.4f}" if self.has_ci and self.aa_pairs else f"{'-':>9}"
        lam = f"{self.mean_lam:6.3f}" if self.lams else f"{'-':>6}"
        fb = f"{100 * self.fallback_share:7.1f}%" if self.fits else f"{'-':>8}"
        return (
            f"{label:<7} {self.name:<15} {self.mean_tau:7.4f} {cov} {aa} {lam} "
            f"{self.reshuffle_max_diff:9.2g} {fb}  {verdict}"
        )


HEADER = (
    f"{'':<7} {'method':<15} {'tau':>7} {'coverage':>9} {'A/A rate':>9} {'lam':>6} "
    f"{'reshuffle':>9} {'fallback':>8}  verdict"
)


@dataclass
class ValidationReport:
    title: str
    repeats: int
    seconds: float
    methods: dict[str, MethodStats]
    label: str = ""
    notes: list[str] = field(default_factory=list)
    gap_ok: bool | None = None
    """Engine part: the meaning of a gap held against the pooled head-to-head records."""

    def format(self, header: bool = True) -> str:
        lines = [self.title, HEADER] if header else []
        lines += [m.row(self.label) for m in self.methods.values()]
        lines += self.notes
        return "\n".join(lines)

    def passed(self) -> bool:
        """The final-table method passes and every control fails."""
        pl = self.methods.get("pl")
        if pl is None or pl.failures():
            return False
        return all(self.methods[c].failures() for c in CONTROLS if c in self.methods)


def synthetic_passed(reports: Sequence[ValidationReport]) -> bool:
    """The final-table method passes at every loser signal; every control fails at one at least
    (a control may be right where the generating model is its own: plain Plackett-Luce at
    signal 1)."""
    if not all("pl" in r.methods and not r.methods["pl"].failures() for r in reports):
        return False
    controls = {c for r in reports for c in r.methods if c in CONTROLS}
    return all(any(r.methods[c].failures() for r in reports if c in r.methods) for c in controls)


def _score(
    stats: MethodStats, result: Ratings | FloatArray, truth: FloatArray | None, aa: bool
) -> FloatArray:
    iu = None
    if isinstance(result, Ratings):
        if stats.name == "pl":
            stats.fits += 1
            stats.fallbacks += result.prior_sd_elo is not None
        elo = result.elo
        iu = np.triu_indices(len(elo), k=1)
        if aa:
            stats.aa_flagged += int(result.significant()[iu].sum())
            stats.aa_pairs += len(iu[0])
        else:
            assert truth is not None
            d, se = result.diff()
            true_d = truth[:, None] - truth[None, :]
            ok = np.abs(d[iu] - true_d[iu]) <= Z95 * se[iu]
            stats.covered += int(ok.sum())
            stats.pairs += len(iu[0])
            if result.places == "discounted":
                stats.lams.append(result.loser_weight)
    else:
        elo = result
        stats.has_ci = False
    if not aa:
        assert truth is not None
        stats.taus.append(kendall_tau(elo, truth))
    return elo


def _rate_all(
    stats: dict[str, MethodStats],
    hands: list[HandResult],
    aa_hands: list[HandResult],
    bots: Sequence[str],
    aa_bots: Sequence[str],
    truth: FloatArray,
    shuffle_rng: np.random.Generator | None,
) -> None:
    shuffled = None
    if shuffle_rng is not None:
        shuffled = [hands[int(i)] for i in shuffle_rng.permutation(len(hands))]
    for name, s in stats.items():
        rater = METHODS[name][0]
        elo = _score(s, rater(hands, bots), truth, aa=False)
        _score(s, rater(aa_hands, aa_bots), None, aa=True)
        if shuffled is not None:
            again = rater(shuffled, bots)
            elo2 = again.elo if isinstance(again, Ratings) else again
            s.reshuffle_max_diff = max(s.reshuffle_max_diff, float(np.max(np.abs(elo - elo2))))
            s.reshuffle_checks += 1


# ---------------------------------------------------------------------------------- synthetic


def run_validation(
    repeats: int,
    *,
    seed: int = 20240601,
    config: SyntheticConfig | None = None,
    methods: Sequence[str] = CORE_METHODS,
    reshuffle_checks: int = 5,
    progress: Callable[[int, int], None] | None = None,
) -> ValidationReport:
    """Synthetic part for one generating model: ``repeats`` tournaments plus as many A/A
    tournaments; the first ``reshuffle_checks`` repeats also refit on shuffled hands."""
    cfg = config or SyntheticConfig()
    bots = bot_names(cfg.n_bots)
    truth = true_ratings(cfg)
    equal = np.zeros(cfg.n_bots)
    stats = {m: MethodStats(m) for m in methods}
    oracle = MethodStats("oracle")
    start = time.perf_counter()
    for rep, child in enumerate(np.random.SeedSequence(seed).spawn(repeats)):
        rng = np.random.default_rng(child)
        hands = simulate_hands(cfg, rng, truth)
        aa_hands = simulate_hands(cfg, rng, equal)
        _rate_all(
            stats, hands, aa_hands, bots, bots, truth, rng if rep < reshuffle_checks else None
        )
        o = fit_plackett_luce(hands, bots, known_loser_weight=cfg.loser_signal)
        oracle.taus.append(kendall_tau(o.elo, truth))
        if progress is not None:
            progress(rep + 1, repeats)
    allowed = min(TAU_MIN, oracle.mean_tau - TAU_SLACK)
    for s in stats.values():
        s.tau_allowed = allowed
    notes = []
    if allowed < TAU_MIN:
        notes.append(
            f"        (tau target {allowed:.4f}: the oracle, told the true weight of places "
            f"2-4, reaches {oracle.mean_tau:.4f} in this design)"
        )
    title = (
        f"synthetic: {repeats} repeats x {cfg.n_hands} hands, {cfg.n_bots} bots "
        f"{cfg.spacing_elo:g} Elo apart, deal_correlation={cfg.deal_correlation:g}, seed={seed}"
    )
    return ValidationReport(
        title,
        repeats,
        time.perf_counter() - start,
        stats,
        label=f"{cfg.loser_signal:.2f}",
        notes=notes,
    )


# ------------------------------------------------------------------------------ engine-played


def reference_path() -> Path:
    return Path(str(resources.files("uno_tournament") / "data" / REFERENCE_FILE))


def load_reference(path: Path | None = None) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((path or reference_path()).read_text())
    return data


def _engine_pair(args: tuple[int, int, int]) -> tuple[list[HandResult], list[HandResult]]:
    rep_seed, n_hands, _ = args
    hands = play_engine_hands(ENGINE_EPS, n_hands, rep_seed, prefix="v")
    aa = play_engine_hands([ENGINE_AA_EPS] * len(ENGINE_EPS), n_hands, rep_seed + 1, prefix="a")
    return hands, aa


def _pool_map(
    fn: Callable[[Any], Any], items: list[Any], jobs: int, progress: Callable[[int, int], None]
) -> list[Any]:
    out: list[Any] = []
    if jobs <= 1:
        for i, it in enumerate(items):
            out.append(fn(it))
            progress(i + 1, len(items))
        return out
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(jobs) as pool:
        for i, r in enumerate(pool.imap(fn, items)):
            out.append(r)
            progress(i + 1, len(items))
    return out


def head_to_head(hands: Sequence[HandResult], names: Sequence[str]) -> np.ndarray[Any, Any]:
    """``W[i, j]``: hands ``i`` and ``j`` share in which ``i`` goes out first."""
    idx = {b: i for i, b in enumerate(names)}
    w = np.zeros((len(names), len(names)), dtype=np.int64)
    for h in hands:
        first = [f for f in h.finishes if f.place == 1]
        if len(first) != 1:
            continue
        a = idx[first[0].bot]
        for f in h.finishes:
            if f.place != 1:
                w[a, idx[f.bot]] += 1
    return w


def gap_check(w: np.ndarray[Any, Any], elo: FloatArray) -> tuple[float, float, int]:
    """``(max |z|, mean |observed - predicted| in points of %, pairs)`` of the going-out shares
    against ``1 / (1 + 10 ** (-gap / 400))``."""
    zs, diffs = [], []
    n = len(elo)
    for i in range(n):
        for j in range(i + 1, n):
            m = int(w[i, j] + w[j, i])
            if m == 0:
                continue
            p = first_out_probability(float(elo[i] - elo[j]))
            obs = w[i, j] / m
            zs.append((obs - p) / math.sqrt(max(p * (1 - p), 1e-12) / m))
            diffs.append(abs(obs - p) * 100)
    return float(np.max(np.abs(zs))), float(np.mean(diffs)), len(zs)


def run_engine_validation(
    repeats: int,
    *,
    seed: int = 7_000_000,
    hands: int = ENGINE_HANDS,
    reference: dict[str, Any] | None = None,
    methods: Sequence[str] = CORE_METHODS,
    jobs: int = 1,
    reshuffle_checks: int = 3,
    progress: Callable[[int, int], None] | None = None,
) -> ValidationReport:
    """Engine-played part: tournaments of ``hands`` hands among :data:`ENGINE_EPS` bots, scored
    against the reference gaps, plus A/A tournaments of equal bots."""
    ref = reference or load_reference()
    names = engine_bot_names(ENGINE_EPS)
    aa_names = engine_bot_names([ENGINE_AA_EPS] * len(ENGINE_EPS))
    if list(ref["bots"]) != list(names):
        raise ValueError("the reference file is for other bots; regenerate it (--make-reference)")
    truth = np.asarray(ref["elo"], dtype=np.float64)
    stats = {m: MethodStats(m) for m in methods}
    start = time.perf_counter()
    items = [(seed + 2 * r, hands, r) for r in range(repeats)]
    pairs = _pool_map(_engine_pair, items, jobs, progress or (lambda _d, _t: None))
    w = np.zeros((len(names), len(names)), dtype=np.int64)
    rng = np.random.default_rng(seed)
    for rep, (h, aa) in enumerate(pairs):
        _rate_all(stats, h, aa, names, aa_names, truth, rng if rep < reshuffle_checks else None)
        w += head_to_head(h, names)
    zmax, mad, n_pairs = gap_check(w, truth)
    gap_ok = zmax < GAP_Z_MAX
    notes = [
        f"        reference: {ref['hands']} hands, lam {ref['loser_weight']:.3f}, adjacent gaps "
        + ", ".join(f"{g:.0f}" for g in -np.diff(truth))
        + f" (made by: {ref['command']})",
        f"        gap meaning: in the {int(w.sum())} pooled going-out records of {n_pairs} pairs, "
        f"the stronger went out first as often as 1/(1+10^(-gap/400)) says: max |z| "
        f"{zmax:.2f} (< {GAP_Z_MAX}), mean |observed - predicted| {mad:.2f} points of %"
        f"  {'PASS' if gap_ok else 'FAIL'}",
    ]
    title = (
        f"engine-played: {repeats} repeats x {hands} hands, heuristic bots eps "
        f"{', '.join(f'{e:g}' for e in ENGINE_EPS)}; A/A: 8 bots eps {ENGINE_AA_EPS:g}; "
        f"seed={seed}"
    )
    return ValidationReport(
        title,
        repeats,
        time.perf_counter() - start,
        stats,
        label="engine",
        notes=notes,
        gap_ok=gap_ok,
    )


# ------------------------------------------------------------------ A/A at the example's design


@dataclass(frozen=True)
class AAResult:
    """One A/A tournament at the example's design, fitted the final table's way."""

    seed: int
    lam: float
    lam_se: float
    converged: bool
    fallback: bool
    elo: FloatArray
    se: FloatArray
    width_ratio: float
    """Mean interval width over the winner-only fit's."""
    winner_ptp: float
    """Spread of the winner-only fit's ratings (the data's signal, which the fit must keep)."""
    unguarded_lam: float = math.nan
    """The weight plain maximum likelihood (no prior on it: the fit before issue 20) finds on
    the same hands, the control that shows the collapse."""
    unguarded_width_ratio: float = math.nan

    @property
    def ok(self) -> bool:
        return (
            math.isfinite(self.lam)
            and bool(np.all(np.isfinite(self.elo)))
            and bool(np.all(np.isfinite(self.se)))
            and abs(self.width_ratio - 1.0) <= AA_WIDTH_TOL
        )


def aa_outcomes(k: int) -> tuple[Outcomes, tuple[str, ...]]:
    """The ``k``-th A/A tournament: 8 engine heuristic bots of randomness
    :data:`ENGINE_AA_EPS` on the example's schedule (tournament seed ``AA_SEED + k``)."""
    eps = [ENGINE_AA_EPS] * 8
    names = engine_bot_names(eps)
    hands = sorted(play_schedule_hands(eps, AA_SEED + k), key=lambda h: h.hand_id)
    return Outcomes.from_results(hands, {b: i for i, b in enumerate(names)}), names


def aa_tournament(k: int) -> AAResult:
    o, names = aa_outcomes(k)
    r, note = fit_ratings(o, names)
    assert r is not None
    w = fit_outcomes(o, names, places="winner")
    plain = fit_outcomes(o, names, loser_weight_prior=None)
    return AAResult(
        seed=AA_SEED + k,
        lam=r.loser_weight,
        lam_se=r.loser_weight_se,
        converged=r.converged,
        fallback=bool(note),
        elo=r.elo,
        se=r.se,
        width_ratio=float(np.mean(r.se) / np.mean(w.se)),
        winner_ptp=float(np.ptp(w.elo)),
        unguarded_lam=plain.loser_weight,
        unguarded_width_ratio=float(np.mean(plain.se) / np.mean(w.se)),
    )


def run_aa(n: int, *, jobs: int = 1, progress: Callable[[int, int], None] | None = None) -> bool:
    """``make bench-aa``: ``n`` A/A tournaments; prints the figures, returns pass/fail."""
    t0 = time.perf_counter()
    out: list[AAResult] = _pool_map(aa_tournament, list(range(n)), jobs, progress or _quiet)
    ratios = np.array([a.width_ratio for a in out])
    lams = np.array([a.lam for a in out])
    nonfinite = int(np.sum(~np.isfinite(lams)))
    outside = int(np.sum(np.abs(ratios - 1.0) > AA_WIDTH_TOL))
    fallbacks = sum(a.fallback for a in out)
    plain_lams = np.array([a.unguarded_lam for a in out])
    plain_ratios = np.array([a.unguarded_width_ratio for a in out])
    plain_nonfinite = int(np.sum(~np.isfinite(plain_lams)))
    with np.errstate(invalid="ignore"):
        plain_outside = int(np.sum(~(np.abs(plain_ratios - 1.0) <= AA_WIDTH_TOL)))
    ok = all(a.ok for a in out)
    print(
        f"A/A at the example's design: {n} tournaments x 1680 hands, 8 engine heuristic bots "
        f"eps {ENGINE_AA_EPS:g}, seeds {AA_SEED}..{AA_SEED + n - 1}, "
        f"{time.perf_counter() - t0:.0f} s\n"
        f"  non-finite weights of places 2-4: {nonfinite}\n"
        f"  weight: median {np.median(lams):.3f}, max {np.max(lams):.3f}\n"
        f"  mean interval width / winner-only fit's: min {ratios.min():.3f}, "
        f"mean {ratios.mean():.3f}, max {ratios.max():.3f}; outside 1 +- {AA_WIDTH_TOL:g}: "
        f"{outside}\n"
        f"  fits that needed the fallback (prior on the ratings): {fallbacks} "
        f"({100 * fallbacks / n:.1f}%)\n"
        f"  control, the unguarded fit (no prior on the weight) on the same hands: "
        f"{plain_nonfinite} non-finite weights, {plain_outside} widths outside 1 +- "
        f"{AA_WIDTH_TOL:g}\n"
        f"bench-aa: {'PASS' if ok else 'FAIL'}"
    )
    return ok


def _quiet(_done: int, _total: int) -> None:
    return None


def make_reference(
    hands: int, *, seed: int = REFERENCE_SEED, jobs: int = 1, out: Path | None = None
) -> dict[str, Any]:
    """The long run behind the engine validation's truth; written to the package's data."""
    chunk = 20_000
    items = [(seed + i, min(chunk, hands - i * chunk)) for i in range(math.ceil(hands / chunk))]
    t0 = time.perf_counter()
    parts = _pool_map(_reference_chunk, items, jobs, _progress_printer("reference chunks"))
    all_hands = [h for p in parts for h in p]
    names = engine_bot_names(ENGINE_EPS)
    r = fit_plackett_luce(all_hands, names)
    win = fit_plackett_luce(all_hands, names, places="winner")
    data = {
        "command": f"python -m uno_tournament.validate_ratings --make-reference "
        f"--reference-hands {hands} --reference-seed {seed}",
        "eps": list(ENGINE_EPS),
        "bots": list(names),
        "hands": len(all_hands),
        "seed": seed,
        "seconds": round(time.perf_counter() - t0, 1),
        "elo": [round(float(v), 3) for v in r.elo],
        "se": [round(float(v), 3) for v in r.se],
        "loser_weight": round(r.loser_weight, 4),
        "loser_weight_se": round(r.loser_weight_se, 4),
        "winner_only_elo": [round(float(v), 3) for v in win.elo],
        "going_out_first": head_to_head(all_hands, names).tolist(),
    }
    path = out or reference_path()
    path.write_text(json.dumps(data, indent=1) + "\n")
    return data


def _reference_chunk(args: tuple[int, int]) -> list[HandResult]:
    seed, n = args
    return play_engine_hands(ENGINE_EPS, n, seed, prefix=f"ref{seed}-")


# ------------------------------------------------------------------------------------ command


def _progress_printer(label: str) -> Callable[[int, int], None]:
    start = time.perf_counter()

    def show(done: int, total: int) -> None:
        elapsed = time.perf_counter() - start
        eta = elapsed / max(done, 1) * (total - done)
        end = "\n" if done == total else ""
        print(
            f"\r  {label}: {done}/{total}  {elapsed:6.1f} s elapsed, ~{eta:6.1f} s left",
            end=end,
            file=sys.stderr,
            flush=True,
        )

    return show


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m uno_tournament.validate_ratings", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--repeats", type=int, default=200, help="synthetic repeats per signal")
    parser.add_argument("--signals", default=",".join(f"{s:g}" for s in SIGNALS))
    parser.add_argument("--engine-repeats", type=int, default=150)
    parser.add_argument("--engine-hands", type=int, default=ENGINE_HANDS)
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--hands", type=int, default=2000, help="synthetic hands per repeat")
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--spacing", type=float, default=30.0, help="Elo between adjacent bots")
    parser.add_argument("--deal-correlation", type=float, default=SyntheticConfig.deal_correlation)
    parser.add_argument("--reshuffle-checks", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=1, help="processes playing engine hands")
    parser.add_argument(
        "--methods", default=",".join(CORE_METHODS), help=f"subset of {', '.join(METHODS)}"
    )
    parser.add_argument("--make-reference", action="store_true", help="rebuild the reference")
    parser.add_argument(
        "--aa", type=int, default=0, metavar="N", help="only the A/A collapse check, N tournaments"
    )
    parser.add_argument("--reference-hands", type=int, default=REFERENCE_HANDS)
    parser.add_argument("--reference-seed", type=int, default=REFERENCE_SEED)
    args = parser.parse_args(argv)
    if args.make_reference:
        ref = make_reference(args.reference_hands, seed=args.reference_seed, jobs=args.jobs)
        print(
            f"reference: {ref['hands']} hands in {ref['seconds']} s, lam {ref['loser_weight']}, "
            f"elo {ref['elo']} -> {reference_path()}"
        )
        return 0
    if args.aa > 0:
        return 0 if run_aa(args.aa, jobs=args.jobs, progress=_progress_printer("A/A")) else 1
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        parser.error(f"unknown methods: {unknown}")
    for m in methods:
        print(f"  {m:<15} {METHODS[m][1]}", file=sys.stderr)
    ok = True
    if args.repeats > 0:
        reports = []
        for i, sig in enumerate(float(s) for s in args.signals.split(",")):
            cfg = replace(
                SyntheticConfig(),
                n_hands=args.hands,
                n_bots=args.bots,
                spacing_elo=args.spacing,
                loser_signal=sig,
                deal_correlation=args.deal_correlation,
            )
            rep = run_validation(
                args.repeats,
                seed=args.seed + 1000 * i,
                config=cfg,
                methods=methods,
                reshuffle_checks=args.reshuffle_checks,
                progress=_progress_printer(f"synthetic, loser signal {sig:g}"),
            )
            reports.append(rep)
        print(reports[0].title.rsplit(", seed=", 1)[0] + "; rows: loser signal, method")
        print(HEADER.replace("       ", "signal ", 1))
        for rep in reports:
            print(rep.format(header=False))
        syn_ok = synthetic_passed(reports)
        print(
            "synthetic: pl passes at every loser signal and every control fails at one at "
            f"least (plain Plackett-Luce is the true model at signal 1): "
            f"{'PASS' if syn_ok else 'FAIL'}\n"
        )
        ok &= syn_ok
    if args.engine_repeats > 0:
        eng = run_engine_validation(
            args.engine_repeats,
            hands=args.engine_hands,
            methods=methods,
            jobs=args.jobs,
            progress=_progress_printer("engine-played repeats"),
        )
        print(eng.format())
        ok &= eng.passed() and bool(eng.gap_ok)
    print(f"bench-ratings: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
