"""Issue 10, item 4: a replay proves which hand it is and who sat where; a run can be verified
whole; a tournament.sqlite that is not a database is one plain line.

One real tournament (four bot processes, 24 hands) is played once; every test works on a copy.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from uno_server.cli import main as cli_main
from uno_tournament.store import DB_NAME, Store, content_hash

from .helpers import bot_entry, write_config


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("verify")
    cfg = write_config(tmp, [bot_entry(f"b{i}") for i in range(4)], name="ver")
    assert cli_main(["tournament", "run", str(cfg), "--quiet"]) == 0
    return tmp / "out"


@pytest.fixture
def run(played: Path, tmp_path: Path) -> Path:
    out = tmp_path / "run"
    shutil.copytree(played, out)
    return out


def _replay(path: Path) -> tuple[int, str]:
    res = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "replay", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    return res.returncode, res.stdout + res.stderr


def _files(run: Path) -> list[Path]:
    return sorted((run / "replays").glob("*.json"))


def _edit(path: Path, change: object) -> None:
    data = json.loads(path.read_text())
    change(data)  # type: ignore[operator]
    path.write_text(json.dumps(data, indent=1))


def test_a_real_record_is_confirmed_against_the_engine_schedule_and_database(run: Path) -> None:
    code, out = _replay(_files(run)[5])
    assert code == 0, out
    assert "confirmed" in out and "matches the tournament's database" in out
    assert cli_main(["tournament", "verify", str(run)]) == 0


def test_a_swapped_seating_fails_with_one_line(run: Path) -> None:
    f = _files(run)[3]

    def swap(d: dict[str, list[str]]) -> None:
        d["bots"][0], d["bots"][2] = d["bots"][2], d["bots"][0]

    _edit(f, swap)
    code, out = _replay(f)
    assert code == 1 and len(out.strip().splitlines()) == 1
    assert "seating was changed" in out
    # outside the tournament folder the schedule still catches it
    loose = run.parent / f.name
    shutil.copy(f, loose)
    code, out = _replay(loose)
    assert code == 1 and "seating was changed" in out


def test_a_changed_hand_id_fails(run: Path) -> None:
    files = _files(run)
    target = files[1]
    other = json.loads(files[9].read_text())["hand_id"]

    def rename(d: dict[str, str]) -> None:
        d["hand_id"] = other

    _edit(target, rename)
    code, out = _replay(target)
    assert code == 1 and len(out.strip().splitlines()) == 1 and "hand" in out
    # renaming the file to match still fails: the schedule slot and the database disagree
    moved = run / "replays" / files[9].name
    moved.unlink()
    target.rename(moved)
    code, out = _replay(moved)
    assert code == 1 and len(out.strip().splitlines()) == 1
    assert "hand id" in out or "content hash" in out or "seed" in out


def test_a_record_copied_from_another_hand_fails(run: Path) -> None:
    files = _files(run)
    shutil.copy(files[7], files[2])
    code, out = _replay(files[2])
    assert code == 1 and len(out.strip().splitlines()) == 1
    assert "copied from another hand" in out

    # relabelled as the hand it replaces (id, seating, seeds, slot): the deal gives it away
    real = json.loads(files[3].read_text())
    fake = json.loads(files[8].read_text())
    for k in ("hand_id", "bots", "match_seed", "schedule", "match_id"):
        fake[k] = real[k]
    files[3].write_text(json.dumps(fake, indent=1))
    code, out = _replay(files[3])
    assert code == 1 and len(out.strip().splitlines()) == 1
    assert "deal was changed" in out or "content hash" in out


def test_an_edited_record_fails_on_its_content_hash(run: Path) -> None:
    f = _files(run)[4]

    def edit(d: dict[str, object]) -> None:
        d["match_id"] = "someone-else"

    _edit(f, edit)
    code, out = _replay(f)
    assert code == 1 and "content hash" in out


def test_verify_reports_each_problem_on_one_line(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    files = _files(run)
    shutil.copy(files[7], files[2])
    files[5].unlink()
    (run / "replays" / "t9-b9-d9-r9.json").write_text(files[0].read_text())
    capsys.readouterr()
    assert cli_main(["tournament", "verify", str(run)]) == 1
    lines = capsys.readouterr().out.strip().splitlines()
    assert any(files[2].name in ln and "copied" in ln for ln in lines)
    assert any(files[5].name in ln and "missing" in ln for ln in lines)
    assert any("t9-b9-d9-r9.json" in ln and "no hand" in ln for ln in lines)
    assert lines[-1].endswith("(22 confirmed)") and "3 problems in 24 stored hands" in lines[-1]


def test_the_stored_hash_is_the_hash_of_the_replay_file(run: Path) -> None:
    store = Store.open(run)
    try:
        hashes = store.hashes()
        for f in _files(run):
            data = json.loads(f.read_text())
            assert hashes[data["hand_id"]] == content_hash(data)
    finally:
        store.close()


@pytest.mark.parametrize("command", ["resume", "report", "verify"])
def test_a_tournament_file_that_is_not_a_database_is_one_plain_line(
    tmp_path: Path, command: str
) -> None:
    (tmp_path / DB_NAME).write_bytes(b"this is not SQLite\n" * 100)
    res = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "tournament", command, str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 2
    assert res.stdout == "" and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "not a tournament database" in res.stderr and "Traceback" not in res.stderr


def test_a_damaged_database_is_one_plain_line(run: Path) -> None:
    db = run / DB_NAME
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    raw = bytearray(db.read_bytes())
    raw[4096 * 3 : 4096 * 6] = b"\x5a" * (4096 * 3)  # clobber some pages, keep the header
    db.write_bytes(bytes(raw))
    res = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "tournament", "report", str(run)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "Traceback" not in res.stderr


def test_a_schema_1_file_is_upgraded_when_opened(tmp_path: Path) -> None:
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.executescript(
        """
        CREATE TABLE schema_version (version INTEGER NOT NULL);
        INSERT INTO schema_version VALUES (1);
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        CREATE TABLE hands (hand_id TEXT PRIMARY KEY, table_no INTEGER NOT NULL,
            block INTEGER NOT NULL, deal INTEGER NOT NULL, rotation INTEGER NOT NULL,
            deal_id TEXT NOT NULL, match_seed INTEGER NOT NULL, hand_seed INTEGER NOT NULL,
            dealer INTEGER NOT NULL, match_id TEXT NOT NULL, winner_seat INTEGER NOT NULL,
            moves INTEGER NOT NULL, duration_s REAL NOT NULL, finished_at REAL NOT NULL,
            replay TEXT NOT NULL);
        CREATE TABLE seats (hand_id TEXT NOT NULL REFERENCES hands(hand_id),
            seat INTEGER NOT NULL, bot TEXT NOT NULL, place INTEGER NOT NULL,
            points_left INTEGER NOT NULL, points_won INTEGER NOT NULL,
            timeouts INTEGER NOT NULL, strikes INTEGER NOT NULL, illegal INTEGER NOT NULL,
            taken_over INTEGER NOT NULL, takeover_cause TEXT NOT NULL,
            decisions INTEGER NOT NULL, response_ms TEXT NOT NULL,
            PRIMARY KEY (hand_id, seat));
        CREATE TABLE incidents (id INTEGER PRIMARY KEY AUTOINCREMENT, at REAL NOT NULL,
            bot TEXT NOT NULL, kind TEXT NOT NULL, detail TEXT NOT NULL);
        INSERT INTO meta VALUES ('tournament_id', '"old"');
        INSERT INTO hands VALUES ('old/t0/b0/d0/r0', 0, 0, 0, 0, 't0/b0/d0', -5, 7, 0, 'm', 1,
            30, 0.5, 1.0, '{"hand_id": "old/t0/b0/d0/r0", "seed": 7}');
        """
    )
    for s, bot in enumerate("abcd"):
        conn.execute(
            "INSERT INTO seats VALUES ('old/t0/b0/d0/r0', ?, ?, ?, ?, 0, 0, 0, 0, 0, '', 3, ?)",
            (s, bot, 1 if s == 1 else 2 + s, 0 if s == 1 else 5 * s, "[4, 5, 6]"),
        )
    conn.commit()
    conn.close()
    store = Store.open(tmp_path)
    try:
        assert store.replay("old/t0/b0/d0/r0") == {"hand_id": "old/t0/b0/d0/r0", "seed": 7}
        assert store.hashes()["old/t0/b0/d0/r0"] == content_hash(
            {"hand_id": "old/t0/b0/d0/r0", "seed": 7}
        )
        h = next(store.hand_rows())
        assert h.match_seed == 2**64 - 5 and h.seats[2].response_ms == [4, 5, 6]
        cols = store.columns()
        assert cols.bot_names == list("abcd") and cols.response_ms["a"].tolist() == [4, 5, 6]
    finally:
        store.close()
    assert Store.open(tmp_path).conn.execute("SELECT version FROM schema_version").fetchone() == (
        2,
    )
