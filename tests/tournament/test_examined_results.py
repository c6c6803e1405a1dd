"""What the stop-49 examination of results truth found: edits to the database that turned its
checks off (a configuration edited together with the plan's size, the tournament's id edited),
stored values that were not JSON any more or missing (tracebacks), a new run writing over
another tournament's reports, and the meaningless estimate of a rating bound on one side only
published in results.json and leaderboard.csv."""

from __future__ import annotations

import csv
import io
import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.refusal import cli, refused
from uno_server.cli import main as cli_main

from .helpers import bot_entry, write_config

CRASHY = Path(__file__).with_name("crashy_bot.py")


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("examined-results")
    cfg = write_config(tmp, [bot_entry(f"b{i}") for i in range(4)], name="exr")
    assert cli_main(["tournament", "run", str(cfg), "--quiet"]) == 0
    return tmp / "out"


def _copy(played: Path, to: Path) -> Path:
    shutil.copytree(played, to)
    return to


def _edit(db: Path, *sql: str, params: tuple[object, ...] = ()) -> None:
    conn = sqlite3.connect(db)
    with conn:
        for q in sql:
            conn.execute(q, params) if "?" in q else conn.execute(q)
    conn.close()


def _meta(db: Path, key: str) -> object:
    row = sqlite3.connect(db).execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return json.loads(row[0])


def test_a_configuration_edited_with_the_plans_size_is_refused(
    played: Path, tmp_path: Path
) -> None:
    """The forfeit policy edited alone was refused; edited together with `blocks`, the plan's
    size changed, the chained positions could not be compared, and the configuration's check
    was skipped with them: report rewrote the ratings and resume played a block more."""
    run = _copy(played, tmp_path / "run")
    db = run / "tournament.sqlite"
    cfg = _meta(db, "config")
    assert isinstance(cfg, dict)
    cfg["blocks"] = int(cfg["blocks"]) + 1
    cfg["faults"]["forfeit"] = "exclude" if cfg["faults"]["forfeit"] != "exclude" else "last"
    _edit(db, "UPDATE meta SET value = ? WHERE key = 'config'", params=(json.dumps(cfg),))
    before = (run / "results.json").read_bytes()
    hands = sqlite3.connect(db).execute("SELECT COUNT(*) FROM hands").fetchone()[0]
    for args in (("report", str(run)), ("resume", str(run), "--quiet")):
        line = refused("tournament", *args)
        assert "the stored configuration differs from the one chained into results.json" in line
    assert (run / "results.json").read_bytes() == before
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM hands").fetchone()[0] == hands


def test_an_edited_tournament_id_is_refused_and_a_new_run_keeps_off_old_reports(
    played: Path, tmp_path: Path
) -> None:
    """The chain does not cover the tournament's id, and a results.json of another id was
    taken for another tournament's: with the id edited, an edited illegal count was reported
    (and a resume played every hand again)."""
    run = _copy(played, tmp_path / "run")
    db = run / "tournament.sqlite"
    _edit(
        db,
        "UPDATE meta SET value = '\"t4-aaaaaa\"' WHERE key = 'tournament_id'",
        "UPDATE seats SET illegal = 9 WHERE rowid = 1",
    )
    before = (run / "results.json").read_bytes()
    for args in (("report", str(run)), ("resume", str(run), "--quiet")):
        line = refused("tournament", *args)
        assert "but the database holds 't4-aaaaaa'" in line, line
        assert "move results.json away first" in line
    assert (run / "results.json").read_bytes() == before
    # a new run into a folder that holds another tournament's reports (its database gone)
    # would write over them, which is how an edited id could pass: refused before it starts
    (run / "tournament.sqlite").unlink()
    cfg = write_config(tmp_path, [bot_entry(f"b{i}") for i in range(4)], name="exr")
    line = refused("tournament", "run", str(cfg), "--out", str(run))
    assert f"{run} holds the reports of tournament" in line, line
    assert "choose another output folder" in line
    assert (run / "results.json").read_bytes() == before
    assert not (run / "tournament.sqlite").exists()


@pytest.mark.parametrize("edit", ["missing id", "not json", "bad blocks", "bad seed", "policy"])
def test_a_missing_id_or_a_value_that_is_not_json_is_one_line(
    played: Path, tmp_path: Path, edit: str
) -> None:
    """The first two were tracebacks (KeyError, JSONDecodeError) from report, resume and
    watch; the others were reported as stored."""
    run = _copy(played, tmp_path / "run")
    db = run / "tournament.sqlite"
    if edit == "missing id":
        _edit(db, "DELETE FROM meta WHERE key = 'tournament_id'")
        want = "the database names no tournament"
    elif edit == "not json":
        _edit(db, "UPDATE meta SET value = 'not json' WHERE key = 'config'")
        want = "the stored 'config' is not the JSON the run wrote"
    else:  # report rated an edited blocks = -3 and seed = "abc" (verify did list problems)
        cfg = _meta(db, "config")
        assert isinstance(cfg, dict)
        field, value, want = {
            "bad blocks": ("blocks", -3, "the stored configuration's tournament.blocks"),
            "bad seed": ("seed", "abc", "the stored configuration's tournament.seed"),
            "policy": ("faults", {**cfg["faults"], "forfeit": "x"}, "faults.forfeit: 'x'"),
        }[edit]
        cfg[field] = value
        _edit(db, "UPDATE meta SET value = ? WHERE key = 'config'", params=(json.dumps(cfg),))
        (run / "results.json").unlink()  # no chain to compare with: the values themselves
    for args in (("report", str(run)), ("resume", str(run), "--quiet")):
        line = refused("tournament", *args)
        assert want in line and "restore it from a copy" in line, line


def test_a_rating_bound_on_one_side_publishes_no_estimate(tmp_path: Path) -> None:
    """A bot that crashed every hand (forfeit "last") is bound from above only: results.json
    and leaderboard.csv gave the weak prior's -1989 +- 652 as its rating."""
    bots = [bot_entry(f"b{i}") for i in range(3)]
    bots.append(
        '[[bots]]\nname = "crash"\n'
        f'command = ["{{python}}", "{CRASHY}", "--crash-after", "1", "--log-level", "warning"]\n'
    )
    cfg = write_config(tmp_path, bots, name="one", extra='forfeit = "last"\nmax_restarts = 0\n')
    assert cli_main(["tournament", "run", str(cfg), "--quiet"]) == 0
    out = tmp_path / "out"
    rows = {r["bot"]: r for r in json.loads((out / "results.json").read_text())["leaderboard"]}
    crash = rows["crash"]
    assert crash["interval"] == "upper limit only", crash
    assert crash["rating"] is None and crash["se"] is None, crash
    assert crash["ci_low"] is None and isinstance(crash["ci_high"], float)
    two = [r for r in rows.values() if r["interval"] == "two-sided"]
    assert two and all(isinstance(r["rating"], float) and r["se"] > 0 for r in two)
    table = {
        r["bot"]: r for r in csv.DictReader(io.StringIO((out / "leaderboard.csv").read_text()))
    }
    assert table["crash"]["rating"] == "" and table["crash"]["se"] == ""
    assert table["crash"]["ci_high"] != ""
    assert cli("tournament", "verify", str(out)).returncode == 0


def test_the_database_holding_the_tokens_is_its_owners_alone(played: Path) -> None:
    """The stored configuration holds every bot's token (a resume needs them); the file was
    created 0644, readable by every user of the machine (an examination)."""
    assert (played / "tournament.sqlite").stat().st_mode & 0o077 == 0
