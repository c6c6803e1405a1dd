"""Validate the rating methods on synthetic bots of known strength.

``python -m uno_tournament.validate_ratings --repeats 500`` runs, per repeat, a tournament of
8 bots 30 Elo apart over 2,000 hands (duplicate dealing, see :mod:`uno_tournament.synthetic`) and an
A/A tournament of 8 equal bots, and rates both with

* ``pl``: the deal-clustered Plackett-Luce fit with seat terms (the final-table method),
* ``pairwise-naive``: six independent Bradley-Terry games per hand (negative control),
* ``elo-k16``: sequential Elo with K=16 (negative control; no intervals).

Pass criteria (from the tournament issue): mean Kendall tau >= 0.99, pairwise 95% CI coverage in
[0.93, 0.97], ratings identical to 1e-6 Elo when the hands are reshuffled, and an A/A rate of
significant pairs in [0.035, 0.065]. The controls must fail at least one of them.
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace

import numpy as np

from uno_tournament.ratings import (
    FloatArray,
    HandResult,
    Ratings,
    SequentialElo,
    fit_pairwise_naive,
    fit_plackett_luce,
    kendall_tau,
)
from uno_tournament.synthetic import SyntheticConfig, bot_names, simulate_hands, true_ratings

__all__ = [
    "AA_RANGE",
    "COVERAGE_RANGE",
    "RESHUFFLE_TOL",
    "TAU_MIN",
    "MethodStats",
    "ValidationReport",
    "main",
    "run_validation",
]

TAU_MIN = 0.99
COVERAGE_RANGE = (0.93, 0.97)
AA_RANGE = (0.035, 0.065)
RESHUFFLE_TOL = 1e-6

Rater = Callable[[Sequence[HandResult], Sequence[str]], Ratings | FloatArray]


def _pl(hands: Sequence[HandResult], bots: Sequence[str]) -> Ratings:
    return fit_plackett_luce(hands, bots, places="full")


def _pl_discounted(hands: Sequence[HandResult], bots: Sequence[str]) -> Ratings:
    return fit_plackett_luce(hands, bots, places="discounted")


def _pl_unclustered(hands: Sequence[HandResult], bots: Sequence[str]) -> Ratings:
    return fit_plackett_luce(hands, bots, cluster=None)


def _pl_winner(hands: Sequence[HandResult], bots: Sequence[str]) -> Ratings:
    return fit_plackett_luce(hands, bots, places="winner")


def _naive(hands: Sequence[HandResult], bots: Sequence[str]) -> Ratings:
    return fit_pairwise_naive(hands, bots)


def _elo16(hands: Sequence[HandResult], bots: Sequence[str]) -> FloatArray:
    elo = SequentialElo(k=16.0)
    elo.update_all(hands)
    return elo.as_array(bots)


METHODS: dict[str, tuple[Rater, str]] = {
    "pl": (_pl, "Plackett-Luce over the full order, seat terms, clustered by deal"),
    "pairwise-naive": (_naive, "six independent pairwise games per hand (control)"),
    "elo-k16": (_elo16, "sequential Elo, K=16 (control)"),
    "pl-discounted": (_pl_discounted, "fitted discount on places 2-4 (experimental)"),
    "pl-unclustered": (_pl_unclustered, "Plackett-Luce, Hessian-only errors"),
    "pl-winner": (_pl_winner, "winner-only Plackett-Luce, clustered by deal"),
}
CORE_METHODS = ("pl", "pairwise-naive", "elo-k16")


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

    @property
    def mean_tau(self) -> float:
        return float(np.mean(self.taus)) if self.taus else math.nan

    @property
    def coverage(self) -> float:
        return self.covered / self.pairs if self.pairs else math.nan

    @property
    def aa_rate(self) -> float:
        return self.aa_flagged / self.aa_pairs if self.aa_pairs else math.nan

    def failures(self) -> list[str]:
        """The pass criteria this method fails (empty = passes)."""
        out = []
        if not self.mean_tau >= TAU_MIN:
            out.append(f"tau {self.mean_tau:.4f} < {TAU_MIN}")
        if not self.has_ci:
            out.append("no confidence intervals")
        else:
            if not COVERAGE_RANGE[0] <= self.coverage <= COVERAGE_RANGE[1]:
                out.append(f"coverage {self.coverage:.4f} outside {COVERAGE_RANGE}")
            if not AA_RANGE[0] <= self.aa_rate <= AA_RANGE[1]:
                out.append(f"A/A rate {self.aa_rate:.4f} outside {AA_RANGE}")
        if self.reshuffle_checks and not self.reshuffle_max_diff <= RESHUFFLE_TOL:
            out.append(f"reshuffle changes ratings by {self.reshuffle_max_diff:.3g} Elo")
        return out


@dataclass
class ValidationReport:
    config: SyntheticConfig
    repeats: int
    seed: int
    seconds: float
    methods: dict[str, MethodStats]

    def format(self) -> str:
        c = self.config
        lines = [
            f"{self.repeats} repeats x {c.n_hands} hands, {c.n_bots} bots {c.spacing_elo:g} Elo "
            f"apart, loser_signal={c.loser_signal:g}, deal_correlation={c.deal_correlation:g}, "
            f"seed={self.seed}, {self.seconds:.1f} s",
            f"{'method':<16} {'mean tau':>9} {'coverage':>9} {'A/A rate':>9} {'reshuffle':>10}  "
            "verdict",
        ]
        for name, m in self.methods.items():
            fails = m.failures()
            verdict = "PASS" if not fails else "FAIL: " + "; ".join(fails)
            cov = f"{m.coverage:9.4f}" if m.has_ci else f"{'-':>9}"
            aa = f"{m.aa_rate:9.4f}" if m.has_ci else f"{'-':>9}"
            lines.append(
                f"{name:<16} {m.mean_tau:9.4f} {cov} {aa} {m.reshuffle_max_diff:10.2g}  {verdict}"
            )
        return "\n".join(lines)


def _score(
    stats: MethodStats, result: Ratings | FloatArray, truth: FloatArray, aa: bool
) -> FloatArray:
    if isinstance(result, Ratings):
        elo = result.elo
        if aa:
            flagged = result.significant()
            iu = np.triu_indices(len(elo), k=1)
            stats.aa_flagged += int(flagged[iu].sum())
            stats.aa_pairs += len(iu[0])
        else:
            d, se = result.diff()
            true_d = truth[:, None] - truth[None, :]
            iu = np.triu_indices(len(elo), k=1)
            ok = np.abs(d[iu] - true_d[iu]) <= 1.959963984540054 * se[iu]
            stats.covered += int(ok.sum())
            stats.pairs += len(iu[0])
    else:
        elo = result
        stats.has_ci = False
    if not aa:
        stats.taus.append(kendall_tau(elo, truth))
    return elo


def run_validation(
    repeats: int,
    *,
    seed: int = 20240601,
    config: SyntheticConfig | None = None,
    methods: Sequence[str] = CORE_METHODS,
    reshuffle_checks: int = 5,
    progress: Callable[[int, int], None] | None = None,
) -> ValidationReport:
    """Run ``repeats`` synthetic tournaments (plus as many A/A tournaments) and score ``methods``.

    The first ``reshuffle_checks`` repeats also refit every method on a shuffled copy of the hands.
    """
    cfg = config or SyntheticConfig()
    bots = bot_names(cfg.n_bots)
    truth = true_ratings(cfg)
    equal = np.zeros(cfg.n_bots)
    stats = {m: MethodStats(m) for m in methods}
    start = time.perf_counter()
    root = np.random.SeedSequence(seed)
    for rep, child in enumerate(root.spawn(repeats)):
        rng = np.random.default_rng(child)
        hands = simulate_hands(cfg, rng, truth)
        aa_hands = simulate_hands(cfg, rng, equal)
        shuffled: list[HandResult] | None = None
        if rep < reshuffle_checks:
            perm = rng.permutation(len(hands))
            shuffled = [hands[int(i)] for i in perm]
        for name in methods:
            rater = METHODS[name][0]
            elo = _score(stats[name], rater(hands, bots), truth, aa=False)
            _score(stats[name], rater(aa_hands, bots), truth, aa=True)
            if shuffled is not None:
                again = rater(shuffled, bots)
                elo2 = again.elo if isinstance(again, Ratings) else again
                s = stats[name]
                s.reshuffle_max_diff = max(s.reshuffle_max_diff, float(np.max(np.abs(elo - elo2))))
                s.reshuffle_checks += 1
        if progress is not None:
            progress(rep + 1, repeats)
    return ValidationReport(cfg, repeats, seed, time.perf_counter() - start, stats)


def _progress_printer(stream: object) -> Callable[[int, int], None]:
    start = time.perf_counter()
    out = stream if hasattr(stream, "write") else sys.stderr

    def show(done: int, total: int) -> None:
        elapsed = time.perf_counter() - start
        eta = elapsed / done * (total - done)
        end = "\n" if done == total else ""
        print(
            f"\r  repeat {done}/{total}  {elapsed:6.1f} s elapsed, ~{eta:6.1f} s left",
            end=end,
            file=out,  # type: ignore[arg-type]
            flush=True,
        )

    return show


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m uno_tournament.validate_ratings", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--repeats", type=int, default=500)
    parser.add_argument("--seed", type=int, default=20240601)
    parser.add_argument("--hands", type=int, default=2000)
    parser.add_argument("--bots", type=int, default=8)
    parser.add_argument("--spacing", type=float, default=30.0, help="Elo between adjacent bots")
    parser.add_argument("--loser-signal", type=float, default=SyntheticConfig.loser_signal)
    parser.add_argument("--deal-correlation", type=float, default=SyntheticConfig.deal_correlation)
    parser.add_argument("--reshuffle-checks", type=int, default=10)
    parser.add_argument(
        "--methods",
        default=",".join(METHODS),
        help=f"comma-separated subset of {', '.join(METHODS)}",
    )
    parser.add_argument("--quiet", action="store_true", help="no progress line")
    args = parser.parse_args(argv)
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        parser.error(f"unknown methods: {unknown}")
    cfg = replace(
        SyntheticConfig(),
        n_hands=args.hands,
        n_bots=args.bots,
        spacing_elo=args.spacing,
        loser_signal=args.loser_signal,
        deal_correlation=args.deal_correlation,
    )
    for m in methods:
        print(f"  {m:<16} {METHODS[m][1]}", file=sys.stderr)
    report = run_validation(
        args.repeats,
        seed=args.seed,
        config=cfg,
        methods=methods,
        reshuffle_checks=args.reshuffle_checks,
        progress=None if args.quiet else _progress_printer(sys.stderr),
    )
    print(report.format())
    pl = report.methods.get("pl")
    return 0 if pl is None or not pl.failures() else 1


if __name__ == "__main__":
    raise SystemExit(main())
