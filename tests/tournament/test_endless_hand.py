"""A hand that never ends: bots that never play a card hold it open once the draw pile runs
dry (every turn draws nothing and passes). The server ends such a match after 20,000 actions;
the runner played the same hand again for ever and said nothing (an examination: 61 tries in
ten minutes, one hand of 24 stored). It now stops at the second try, naming the hand."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from tests.refusal import cli

from .helpers import write_config

HOARDER = Path(__file__).with_name("hoarder_bot.py")


def _hoarder(name: str) -> str:
    return (
        f'[[bots]]\nname = "{name}"\n'
        f'command = ["{{python}}", "{HOARDER}", "--log-level", "warning"]\n'
    )


def test_a_hand_that_never_ends_stops_the_run_naming_it(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, [_hoarder(f"h{i}") for i in range(4)], concurrency=1)
    res = cli("tournament", "run", str(cfg), "--quiet", timeout=600)
    assert res.returncode == 2, res.stdout[-1000:] + res.stderr[-2000:]
    line = res.stderr.strip().splitlines()[-1]
    assert "did not end after 20000 actions in 2 tries of the same deal" in line, line
    assert "Bots that never play a card" in line and "t-" in line, line
    out = tmp_path / "out"
    stored = sqlite3.connect(out / "tournament.sqlite").execute("SELECT COUNT(*) FROM hands")
    assert stored.fetchone()[0] == 0
    tries = (out / "logs" / "tournament.log").read_text().count('"hand played again"')
    assert tries == 1, tries  # one try again, then the stop
