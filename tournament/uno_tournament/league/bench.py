"""``python -m uno_tournament.league.bench``: a league of 16 versions plays for a fixed time, and
a new submission arrives during the run (issue 26's ``make bench-league``).

The 16 versions (16 authors: heuristic bots of graded randomness, and random bots) are entered
into a fresh league's store directly, as ``league submit`` records accepted versions, so that
the time measured is play; the new submission goes through ``league submit`` for real (its
sandboxed gate) while ``league run`` plays. The last line::

    bench-league: 16 versions, H hands/s, refit T s, new submission rated after W s, E errors

H: hands stored per second of play (from the first stored hand to the stop); T: the mean refit
time (a refit over every league hand, after each block); W: from the submission's acceptance
(its verdict recorded) to the first refit that rates it; E: bot incidents (crashes, given up),
a refused submission, and a run that did not stop cleanly.
"""

from __future__ import annotations

import argparse
import os
import re
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .settings import settings_from
from .store import LeagueStore

SDK = ["--log-level", "warning", "--addr", "{addr}", "--name", "{name}"]


def _command(i: int) -> list[str]:
    if i % 4 == 3:
        return ["{python}", "-m", "uno_bot.examples.random_bot", *SDK]
    randomness = f"{(i % 4) * 0.25:.2f}"
    return ["{python}", "-m", "uno_tournament.bots.graded", "--randomness", randomness, *SDK]


def _count(db: Path) -> int:
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.Error:
        return 0


def _rated(league: Path, key: str) -> bool:
    store = LeagueStore.open(league)
    try:
        ids = {v.id for v in store.versions() if v.key == key}
        return any(vid in ids for _, vid, *_ in store.history())
    finally:
        store.close()


def bench(versions: int, seconds: float, tables: int, folder: Path) -> str:
    league = folder / "league"
    store = LeagueStore.create(league, settings_from(None))
    try:
        for i in range(versions):
            bot = league / "bots" / f"v{i:02d}" / "1"
            bot.mkdir(parents=True)
            store.record(
                name=f"v{i:02d}",
                version="1",
                author=f"author{i:02d}",
                language="python",
                folder=str(bot),
                manifest={"run": _command(i)},
                state="active",
            )
    finally:
        store.close()
    newbot = folder / "newcomer"
    newbot.mkdir()
    (newbot / "bot.toml").write_text(
        'name = "newcomer"\nversion = "1"\nauthor = "late-author"\nrun = ["{python}", "-m", '
        '"uno_bot.examples.heuristic_bot", "--log-level", "warning", "--addr", "{addr}", '
        '"--name", "{name}"]\n'
    )
    env = {**os.environ, "GRPC_VERBOSITY": "ERROR"}
    cli = [sys.executable, "-m", "uno_server.cli", "league"]
    log = (folder / "run.log").open("w")
    run = subprocess.Popen(
        [*cli, "run", str(league), "--tables", str(tables)],
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
        env=env,
    )
    db = league / "play" / "tournament.sqlite"
    errors = 0
    wait_s = float("nan")
    try:
        deadline = time.monotonic() + 300
        while _count(db) == 0:
            if run.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"bench-league: the league did not start (see {log.name})")
            time.sleep(0.2)
        started = time.monotonic()
        first = _count(db)
        print(f"bench-league: playing; a new submission in {seconds / 3:.0f} s", flush=True)
        time.sleep(seconds / 3)
        sub = subprocess.run(
            [*cli, "submit", str(league), str(newbot)],
            capture_output=True,
            text=True,
            env=env,
            check=False,
        )
        accepted = time.monotonic()
        print(f"bench-league: {sub.stdout.strip()[:200]}", flush=True)
        if sub.returncode != 0:
            errors += 1
        else:
            while not _rated(league, "newcomer@1") and time.monotonic() < accepted + 600:
                time.sleep(0.2)
            if _rated(league, "newcomer@1"):
                wait_s = time.monotonic() - accepted
            else:
                errors += 1
        rest = started + seconds - time.monotonic()
        if rest > 0:
            time.sleep(rest)
        hands = _count(db) - first
        played_s = time.monotonic() - started
        run.send_signal(signal.SIGTERM)
        code = run.wait(timeout=300)
        if code not in (0, 130):
            errors += 1
    finally:
        if run.poll() is None:
            run.kill()
            run.wait()
        log.close()
    out = (folder / "run.log").read_text()
    refits = [float(s) for s in re.findall(r"^refit \d+: \d+ hands in ([0-9.]+) s", out, re.M)]
    errors += len(re.findall(r"^bot \S+: crash ", out, re.M))  # given up: a retired version
    store = LeagueStore.open(league)
    try:
        errors += sum(1 for v in store.versions() if v.state != "active")
    finally:
        store.close()
    refit_s = sum(refits) / len(refits) if refits else float("nan")
    return (
        f"bench-league: {versions} versions, {hands / played_s:.1f} hands/s, refit "
        f"{refit_s:.2f} s, new submission rated after {wait_s:.0f} s, {errors} errors"
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--versions", type=int, default=16, help="versions in the league (4-64)")
    ap.add_argument("--seconds", type=float, default=120.0, help="play time (30-3600)")
    ap.add_argument("--tables", type=int, default=4, help="tables per block (1-16)")
    ap.add_argument("--keep", help="a folder to keep the league in (default: a temporary one)")
    args = ap.parse_args(argv)
    if not 4 <= args.versions <= 64:
        ap.error(f"--versions: must be from 4 to 64, got {args.versions}")
    if not 30 <= args.seconds <= 3600:
        ap.error(f"--seconds: must be from 30 to 3600, got {args.seconds:g}")
    if not 1 <= args.tables <= 16:
        ap.error(f"--tables: must be from 1 to 16, got {args.tables}")
    if args.keep:
        folder = Path(args.keep)
        folder.mkdir(parents=True, exist_ok=True)
        print(bench(args.versions, args.seconds, args.tables, folder))
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-league-") as tmp:
        print(bench(args.versions, args.seconds, args.tables, Path(tmp)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
