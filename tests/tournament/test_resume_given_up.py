"""A bot the run gave up on stays given up when the run is resumed: it is not started again.

The resume read the "given up" marks (a stand-in played the bot's seats) but launched the bot
all the same: a process that could only sit idle, and a resume that failed outright when the
bot's start failed (a bot given up for crashing may crash at once)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.refusal import cli

from .helpers import bot_entry, write_config

CRASHY = Path(__file__).with_name("crashy_bot.py")


def _starts(out: Path) -> int:
    logs = list(out.rglob("crashy.log"))
    assert logs, sorted(str(p) for p in out.rglob("*.log"))
    return sum(log.read_text().count(" starting: ") for log in logs)


def test_a_resume_does_not_start_a_bot_the_run_gave_up_on(tmp_path: Path) -> None:
    crashy = (
        '[[bots]]\nname = "crashy"\n'
        f'command = ["{{python}}", "{CRASHY}", "--crash-after", "3", "--log-level", "warning"]\n'
    )
    cfg = write_config(
        tmp_path,
        [bot_entry("h0"), bot_entry("h1"), bot_entry("h2"), crashy],
        name="gu",
        extra="max_restarts = 1\n[time_control]\nreconnect_grace_ms = 300\n",
    )
    res = cli("tournament", "run", str(cfg), "--quiet", timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    out = tmp_path / "out"
    assert "crashy" in json.loads((out / "results.json").read_text())["given_up"]
    started = _starts(out)
    assert started == 2, started  # its first start and one restart, then given up

    # the last hands gone (and results.json moved away, to report the store as it is): a resume
    # plays them again, with the stand-in in the given-up bot's seats
    conn = sqlite3.connect(out / "tournament.sqlite")
    with conn:
        last = [r[0] for r in conn.execute("SELECT hand_id FROM hands ORDER BY hand_id DESC")][:4]
        for table in ("seats", "replays", "hands"):
            conn.executemany(f"DELETE FROM {table} WHERE hand_id = ?", [(h,) for h in last])
    conn.close()
    (out / "results.json").rename(tmp_path / "results.json.kept")
    res = cli("tournament", "resume", str(out), "--quiet", timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    results = json.loads((out / "results.json").read_text())
    assert results["hands"] == 24 and "crashy" in results["given_up"], results["hands"]
    assert _starts(out) == started  # not launched again
