"""A tournament whose configuration gives no seed deals from a secret one drawn for the run: the
default was 1, and a bot that knows the seed recomputes every seat's cards from its own match's
table, block and deal (an examination did, with a league's seed 1). The drawn seed is kept in
the run's database, so resume, report and verify deal the same cards; `--shard I/N` pods, which
each read the file, must be given one."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from tests.refusal import cli, refused
from uno_server.cli import main as cli_main
from uno_tournament.config import load

from .helpers import bot_entry, write_config


def _seedless(tmp_path: Path) -> Path:
    cfg = write_config(tmp_path, [bot_entry(f"b{i}") for i in range(4)], name="secret")
    text = cfg.read_text()
    assert "seed = 7\n" in text
    cfg.write_text(text.replace("seed = 7\n", ""))
    return cfg


def test_a_config_without_a_seed_draws_a_secret_one_that_the_run_keeps(tmp_path: Path) -> None:
    cfg = _seedless(tmp_path)
    seeds = {load(cfg).seed for _ in range(5)}
    assert len(seeds) == 5 and all(0 <= s < 2**63 for s in seeds)
    assert not seeds & {0, 1, 7}
    assert cli_main(["tournament", "run", str(cfg), "--quiet"]) == 0
    out = tmp_path / "out"
    row = sqlite3.connect(out / "tournament.sqlite").execute(
        "SELECT value FROM meta WHERE key = 'config'"
    )
    stored = json.loads(row.fetchone()[0])["seed"]
    assert stored not in seeds | {1}  # drawn again for the run, and kept
    assert cli("tournament", "verify", str(out)).returncode == 0  # deals re-derived from it
    assert cli("tournament", "report", str(out)).returncode == 0
    # only the database (mode 0600) holds it: every replay file (0644, the records a run hands
    # out) wrote it as schedule.tournament_seed, and so did every report or log, checked here
    assert (out / "tournament.sqlite").stat().st_mode & 0o077 == 0
    files = [p for p in out.rglob("*") if p.is_file() and not p.name.startswith("tournament.")]
    assert len([p for p in files if p.parent.name == "replays"]) == 24, files
    for path in files:
        assert str(stored).encode() not in path.read_bytes(), path
    replay = next((out / "replays").iterdir())
    res = cli("replay", str(replay))
    assert res.returncode == 0 and "matches the tournament's database" in res.stdout, res.stdout
    alone = tmp_path / replay.name
    alone.write_bytes(replay.read_bytes())
    res = cli("replay", str(alone))
    assert res.returncode == 0 and "--tournament DIR" in res.stdout, res.stdout


def test_shard_pods_must_be_given_the_seed(tmp_path: Path) -> None:
    cfg = _seedless(tmp_path)
    line = refused(
        "tournament", "run", str(cfg), "--shard", "0/2", "--store", "postgresql://x@127.0.0.1/y"
    )
    assert "--shard 0/2: every pod must deal the same cards, so set tournament.seed" in line
