"""``make bench-report``: ``uno-arena tournament report`` on a realistic 100,000-hand folder.

The folder (:mod:`uno_tournament.synthetic_store`: 12 bots, the plan's first 100,000 hands, real
engine-played replays in the database and on disk) is generated once and kept in
``runs/bench-report-<hands>`` for the next run. The report then runs as its own process, as a
user runs it, and the benchmark prints its wall time and its peak resident memory (the
kernel's ``ru_maxrss`` of the child). The last line reads::

    bench-report: <N> hands, report <T> s, peak RSS <M> MB (limits 30 s, 1024 MB): PASS
"""

from __future__ import annotations

import argparse
import math
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from .config import BotSpec, TournamentConfig
from .store import DB_NAME, Store

LIMIT_S = 30.0
LIMIT_MB = 1024.0


def bench_config(n_bots: int, hands: int) -> TournamentConfig:
    """Round robins of every four-bot table, enough blocks to hold ``hands``."""
    per_block = 24 * math.comb(n_bots, 4)
    return TournamentConfig(
        name="bench",
        bots=tuple(BotSpec(f"bot{i:02d}", token=f"token-of-bot{i:02d}") for i in range(n_bots)),
        seed=1,
        blocks=max(1, math.ceil(hands / per_block)),
        rules={"seats": 4, "scoring": "single_hand"},
    )


def ensure_folder(folder: Path, n_bots: int, hands: int) -> float:
    """Make the folder unless a complete one is there; returns the seconds it took."""
    if (folder / DB_NAME).is_file():
        store = Store.open(folder)
        try:
            if store.count() == hands:
                return 0.0
        finally:
            store.close()
        raise SystemExit(f"{folder} holds another run; remove it first")
    from .synthetic_store import make_folder

    t0 = time.monotonic()

    def show(done: int, total: int) -> None:
        el = time.monotonic() - t0
        print(
            f"\r  generating: {done}/{total} hands, {el:.0f} s",
            end="\n" if done == total else "",
            file=sys.stderr,
            flush=True,
        )

    make_folder(folder, bench_config(n_bots, hands), hands, progress=show)
    return time.monotonic() - t0


def run_report(folder: Path) -> tuple[float, float, int]:
    """``(seconds, peak RSS in MB, exit status)`` of ``uno-arena tournament report``."""
    t0 = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-m", "uno_server.cli", "tournament", "report", str(folder)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    _, status, usage = os.wait4(proc.pid, 0)
    seconds = time.monotonic() - t0
    proc.returncode = os.waitstatus_to_exitcode(status)
    err = proc.stderr.read().decode() if proc.stderr else ""
    if proc.returncode:
        print(err, file=sys.stderr)
    return seconds, usage.ru_maxrss / 1024.0, proc.returncode


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench-report", description=__doc__)
    ap.add_argument("--hands", type=int, default=100_000)
    ap.add_argument("--bots", type=int, default=12)
    ap.add_argument("--folder", help="where to keep the generated run (default runs/...)")
    args = ap.parse_args(argv)
    folder = Path(args.folder or f"runs/bench-report-{args.hands}")
    made = ensure_folder(folder, args.bots, args.hands)
    store = Store.open(folder)
    try:
        n = store.count()
    finally:
        store.close()
    size = (folder / DB_NAME).stat().st_size / 2**20
    print(
        f"folder {folder}: {n} hands, {args.bots} bots, database {size:.0f} MB"
        + (f", generated in {made:.0f} s" if made else " (kept from an earlier run)"),
        file=sys.stderr,
    )
    seconds, rss, code = run_report(folder)
    ok = code == 0 and seconds < LIMIT_S and rss < LIMIT_MB
    print(
        f"bench-report: {n} hands, report {seconds:.1f} s, peak RSS {rss:.0f} MB "
        f"(limits {LIMIT_S:.0f} s, {LIMIT_MB:.0f} MB): {'PASS' if ok else 'FAIL'}"
    )
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
