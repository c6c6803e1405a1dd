"""A small real tournament: Python SDK bots as processes, an embedded server, SQLite results."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from uno_server.cli import main as cli_main
from uno_tournament.replay import check, load

from .helpers import bot_entry, write_config


def test_four_bots_one_block_end_to_end(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    cfg = write_config(
        tmp_path,
        [
            bot_entry("heur"),
            bot_entry("rand", "uno_bot.examples.random_bot"),
            bot_entry("heur2"),
            bot_entry("rand2", "uno_bot.examples.random_bot"),
        ],
    )
    out = tmp_path / "out"
    assert cli_main(["tournament", "run", str(cfg), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "finished: 24 hands" in text
    conn = sqlite3.connect(out / "tournament.sqlite")
    assert conn.execute("SELECT COUNT(*), COUNT(DISTINCT hand_id) FROM hands").fetchone() == (
        24,
        24,
    )
    seats = conn.execute("SELECT bot, seat, COUNT(*) FROM seats GROUP BY bot, seat").fetchall()
    assert len(seats) == 16 and {n for _, _, n in seats} == {6}  # every bot in every seat 6x
    conn.close()
    for name in ("leaderboard.md", "leaderboard.csv", "results.json", "report.html"):
        assert (out / name).is_file(), name
    results = json.loads((out / "results.json").read_text())
    board = results["leaderboard"]
    assert {b["bot"] for b in board} == {"heur", "rand", "heur2", "rand2"}
    assert all(b["hands"] == 24 and b["decisions"] > 0 for b in board)
    assert all(b["p99_decision_ms"] >= b["mean_decision_ms"] * 0 for b in board)
    assert sum(b["wins"] for b in board) == 24
    assert "tied exactly" not in results["model"]["note"]  # two programs, played differently
    # correct bots make no real faults; answers that came too late (a race) are counted apart,
    # in the store's own column, and never as illegal
    assert all(b["illegal_actions"] == 0 and b["late_answers"] >= 0 for b in board), board
    conn = sqlite3.connect(out / "tournament.sqlite")
    late = dict(conn.execute("SELECT bot, SUM(late) FROM seats GROUP BY bot").fetchall())
    conn.close()
    assert {b["bot"]: b["late_answers"] for b in board} == late
    assert "<svg" in (out / "report.html").read_text()
    logs = sorted(p.name for p in (out / "logs").iterdir())
    assert {"heur.log", "rand.log", "heur2.log", "rand2.log"} <= set(logs)
    replays = sorted((out / "replays").glob("*.json"))
    assert len(replays) == 24
    assert check(load(replays[0])).ok
    res = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "replay", str(replays[-1])],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0 and "confirmed" in res.stdout
    # report again from the folder; resume of a finished tournament plays nothing
    assert cli_main(["tournament", "report", str(out)]) == 0
    assert cli_main(["tournament", "resume", str(out), "--quiet"]) == 0
    assert "24 hands (24 done;" in capsys.readouterr().out


def test_a_bot_that_cannot_start_is_reported_with_its_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = (
        '[[bots]]\nname = "broken"\n'
        'command = ["{python}", "-c", "import sys; print(\'no luck here\'); sys.exit(3)"]\n'
    )
    cfg = write_config(tmp_path, [bot_entry("a"), bot_entry("b"), bot_entry("c"), broken])
    assert cli_main(["tournament", "run", str(cfg), "--quiet"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1
    assert "bot 'broken' failed to start: exited with status 3" in err[0]
    assert "no luck here" in err[0]


def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["tournament", "run", str(tmp_path / "nope.toml")]) == 2
    assert cli_main(["tournament", "resume", str(tmp_path)]) == 2
    assert cli_main(["replay", str(tmp_path / "nope.json")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 3 and all(line.startswith("uno-arena: ") for line in err)


def test_ctrl_c_after_the_last_hand_is_stored_still_writes_the_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A Ctrl-C that lands after the last hand was stored (before the metrics linger began, or
    while the run shuts down) must not cost the run its reports: every hand is there."""
    from uno_tournament.runner import Runner

    def ctrl_c_now(self: Runner) -> Any:
        self._interrupt()  # the signal handler's own call, at the latest moment it can come
        assert self.interrupted and self.stop_requested

        async def nothing() -> None:
            return None

        return nothing()

    monkeypatch.setattr(Runner, "_linger", ctrl_c_now)
    cfg = write_config(
        tmp_path,
        [bot_entry(n) for n in ("a", "b")]
        + [bot_entry(n, "uno_bot.examples.random_bot") for n in ("c", "d")],
    )
    assert cli_main(["tournament", "run", str(cfg), "--quiet"]) == 0
    text = capsys.readouterr().out
    assert "finished: 24 hands" in text and "interrupted" not in text
    results = json.loads((tmp_path / "out" / "results.json").read_text())
    assert sorted(b["bot"] for b in results["leaderboard"]) == ["a", "b", "c", "d"]
