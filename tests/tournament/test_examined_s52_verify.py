"""Examined in session 52: verify and report around a shard's folder and a run still playing,
and what a settled run's report and progress line say about looks and the whole run.

- ``verify --store URL DIR`` on a shard's --out folder (reports, no replays: a shard writes
  none) counted the missing replays as a problem and suggested ``report DIR``, which fails;
- ``report DIR`` on such a folder said only that no tournament is there;
- ``verify DIR`` of a run still playing listed its new hands and incidents as edits;
- a 24-hand budget's report said "a look every 24 hands" of a run that could take no look; a
  shard's progress line mixed its own count with the whole run's.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from uno_server.cli import main as cli_main
from uno_tournament import report_settled
from uno_tournament.settled import SettledState
from uno_tournament.settled_run import SequentialRecord
from uno_tournament.store import RunLock

from .helpers import bot_entry, write_config


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "tournament", *args],
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
        env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
    )


def test_a_shard_folder_verifies_without_replays_and_report_names_the_command_that_works(
    pg_url: str, tmp_path: Path
) -> None:
    cfg = write_config(tmp_path, [bot_entry(f"b{i}") for i in range(4)], name="sv")
    out = tmp_path / "shard-out"
    res = _cli("run", str(cfg), "--shard", "0/1", "--store", pg_url, "--out", str(out), "--quiet")
    assert res.returncode == 0, res.stderr
    assert (out / "results.json").is_file() and not (out / "replays").exists()

    ver = _cli("verify", "--store", pg_url, str(out))
    assert ver.returncode == 0, ver.stdout + ver.stderr
    last = ver.stdout.strip().splitlines()[-1]
    assert "verified 24 of 24 stored hands" in last
    assert "no replay files in the folder (a shard writes none)" in last
    assert "uno-arena tournament report --store postgresql://" in last and f"--out {out}" in last

    rep = _cli("report", str(out))
    assert rep.returncode == 2
    err = rep.stderr.strip()
    assert "\n" not in err
    assert f"write them again with: uno-arena tournament report --store URL --out {out}" in err
    # ... and that command works: it writes the replays too, which verify then checks
    again = _cli("report", "--store", pg_url, "--out", str(out))
    assert again.returncode == 0, again.stderr
    assert len(list((out / "replays").glob("*.json"))) == 24
    ver = _cli("verify", "--store", pg_url, str(out))
    assert ver.returncode == 0 and "no replay files" not in ver.stdout


def test_verify_of_a_run_still_playing_says_so_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    run = tmp_path / "run"
    lock = RunLock.acquire(run)  # a runner that plays the folder (another process in life)
    try:
        assert cli_main(["tournament", "verify", str(run)]) == 2
        err = capsys.readouterr().err.strip()
        assert "\n" not in err
        assert f"{run} is still being played by process {os.getpid()} on " in err
        assert "verify it once the run stops" in err
    finally:
        lock.release()
    # the run stopped: verify looks at it (and a resume is not refused because of verify)
    assert cli_main(["tournament", "verify", str(run)]) == 2
    assert "still being played" not in capsys.readouterr().err
    RunLock.acquire(run).release()


def _record(plan: int, every: int, looked: bool) -> SequentialRecord:
    st = SettledState(("a", "b", "c", "d"), alpha=0.05, indifference_elo=10)
    pairs = [{"pair": "c~d", "status": "open", "low": -5000.0, "high": 5010.0}]
    look = {"through": every, "hands": every, "looked": looked, "ranking": ["a", "b", "c", "d"]}
    look["pairs"] = pairs
    return SequentialRecord("settled", plan, every, state=st, through=every, looks=[look])


def test_a_budget_below_the_first_look_says_no_look_can_happen() -> None:
    rec = _record(24, 24, looked=False)
    method = report_settled._method(rec)
    assert "a look every" not in method
    assert "no look within the budget of 24 hands (the first look needs 96 hands" in method
    assert "a look every 192 hands" in report_settled._method(_record(2000, 192, looked=True))


def test_the_projection_past_the_budget_names_the_whole_run() -> None:
    rec = _record(600, 192, looked=True)
    rec.played = 562  # the whole run's hands (a shard's line starts with its own share's)
    line = rec.status_line()
    assert "the 38 the budget leaves (whole run: 562 of 600 hands stored)" in line, line
