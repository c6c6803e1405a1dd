"""``tournament verify`` and ``uno-arena replay`` against edited results (issue 10 item 4, issue 20
item 2): every stored column any output reads, edited in turn, fails verify in one line naming
the hand and the column; so do a deleted, a duplicated and two swapped hands, and the chain head
in results.json is what verify compares the store with.

One real tournament (four bot processes, 24 hands) is played once; every test works on a copy.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import pytest

from tests.refusal import refused
from uno_server.cli import main as cli_main
from uno_tournament import chain
from uno_tournament.config import TournamentConfig
from uno_tournament.config_stored import load_config
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


def _hand_ids(run: Path) -> list[str]:
    conn = sqlite3.connect(run / DB_NAME)
    try:
        return [r[0] for r in conn.execute("SELECT hand_id FROM hands ORDER BY hand_id")]
    finally:
        conn.close()


def _sql(run: Path, *statements: str, params: tuple[object, ...] = ()) -> None:
    """Edit the database the way a user with the sqlite3 shell would (no foreign keys)."""
    conn = sqlite3.connect(run / DB_NAME)
    try:
        conn.execute("PRAGMA foreign_keys=OFF")
        for s in statements:
            conn.execute(s, params if "?" in s else ())
        conn.commit()
    finally:
        conn.close()


def load_config_of(run: Path) -> TournamentConfig:
    store = Store.open(run)
    try:
        return load_config(store, run)
    finally:
        store.close()


def _tid(run: Path) -> str:
    store = Store.open(run)
    try:
        return str(store.meta()["tournament_id"])
    finally:
        store.close()


def _verify(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[str], str]:
    """Exit status, the problem lines, and the summary line of ``tournament verify``."""
    capsys.readouterr()
    code = cli_main(["tournament", "verify", *args])
    captured = capsys.readouterr()
    lines = captured.out.strip().splitlines()
    return code, lines[:-1], (lines[-1] if lines else "") + captured.err


# ------------------------------------------------------------------ a real run passes


def test_a_real_record_is_confirmed_against_the_engine_schedule_and_database(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out = _replay(_files(run)[5])
    assert code == 0, out
    assert "confirmed" in out and "matches the tournament's database" in out
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 0 and problems == [], problems
    assert "verified 24 of 24" in summary
    results = json.loads((run / "results.json").read_text())
    head = results["chain"]["head"]
    assert len(head) == 64 and head[:16] in summary
    assert head in (run / "leaderboard.md").read_text()
    assert head in (run / "report.html").read_text()


def test_rows_stored_in_another_physical_order_still_verify(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # every output reads the hands by id, and the chain takes them in the schedule's order:
    # the order rows sit in the file is no result
    _sql(
        run,
        "CREATE TABLE h2 AS SELECT * FROM hands ORDER BY hand_id DESC",
        "DELETE FROM hands",
        "INSERT INTO hands SELECT * FROM h2",
        "DROP TABLE h2",
    )
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 0 and problems == []


def test_a_column_added_by_a_schema_upgrade_keeps_the_chain(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # an older store gains new columns with a zero default when it is opened (ALTER TABLE):
    # the chain encodes a zero like an absent column, so its head stays the one published
    head = json.loads((run / "results.json").read_text())["chain"]["head"]
    _sql(run, "ALTER TABLE seats ADD COLUMN added_later INTEGER NOT NULL DEFAULT 0")
    code, problems, _ = _verify([str(run), "--head", head], capsys)
    assert code == 0 and problems == [], problems
    hid = _hand_ids(run)[K]
    _sql(run, "UPDATE seats SET added_later = 5 WHERE hand_id = ? AND seat = 1", params=(hid,))
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1, problems
    assert hid in problems[0] and "seats.added_later" in problems[0]


@pytest.fixture(scope="module")
def faulty(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A run with every kind of fault: a bot that crashes (disconnect takeovers, time-outs,
    strikes, then a stand-in for a bot given up on)."""
    from .test_forfeits import _crashy

    tmp = tmp_path_factory.mktemp("faulty")
    cfg = write_config(
        tmp,
        [bot_entry("h0"), bot_entry("h1"), bot_entry("h2"), _crashy("crashy", 25)],
        name="flt",
        extra="max_restarts = 1\nstrikes = 2\n[time_control]\nreconnect_grace_ms = 300\n"
        "decision_ms = 150\ntime_bank_ms = 0\n[sandbox]\nenabled = false\n",
    )
    assert cli_main(["tournament", "run", str(cfg), "--quiet"]) == 0
    return tmp / "out"


FAULT_EDITS = [
    ("seats.timeouts", "timeouts + 1"),
    ("seats.timeouts", "0"),
    ("seats.strikes", "0"),
    ("seats.taken_over", "0"),
    ("seats.takeover_cause", "''"),
    (
        "seats.takeover_cause",
        "CASE takeover_cause WHEN 'strikes' THEN 'disconnected' ELSE 'strikes' END",
    ),
]


def test_a_run_with_faults_verifies_and_its_fault_columns_are_checked(
    faulty: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, problems, _ = _verify([str(faulty)], capsys)
    assert code == 0 and problems == [], problems
    conn = sqlite3.connect(faulty / DB_NAME)
    try:
        causes = {r[0] for r in conn.execute("SELECT takeover_cause FROM seats")}
        hid, seat = conn.execute(
            "SELECT hand_id, seat FROM seats WHERE timeouts > 0 AND taken_over = 1 "
            "ORDER BY hand_id LIMIT 1"
        ).fetchone()
    finally:
        conn.close()
    assert {"disconnected", "unavailable"} <= causes, causes  # the run has the faults
    for i, (column, expr) in enumerate(FAULT_EDITS):
        run = tmp_path / f"edit{i}"
        shutil.copytree(faulty, run)
        col = column.split(".")[1]
        _sql(
            run,
            f"UPDATE seats SET {col} = {expr} WHERE hand_id = ? AND seat = {seat}",
            params=(hid,),
        )
        _report_over_the_edit(run)  # the chain cannot help
        code, problems, _ = _verify([str(run)], capsys)
        assert code == 1 and len(problems) == 1, (column, problems)
        assert hid in problems[0] and column in problems[0], (column, problems)


def _report_over_the_edit(run: Path) -> None:
    """`report` on an edited database: refused while results.json chains the hand as it was
    (one line, exit 2); a forger moves results.json away, as the refusal says, and reports."""
    assert cli_main(["tournament", "report", str(run)]) == 2
    (run / "results.json").unlink()
    assert cli_main(["tournament", "report", str(run)]) == 0


# ------------------------------------------------------------------ every column, edited

K = 7  # the hand every edit is made to
SEAT = 1

# (table.column, SQL expression giving the edited value)
COLUMN_EDITS = [
    ("hands.table_no", "table_no + 1"),
    ("hands.block", "block + 1"),
    ("hands.deal", "deal + 1"),
    ("hands.rotation", "(rotation + 1) % 4"),
    ("hands.deal_id", "deal_id || 'x'"),
    ("hands.match_seed", "match_seed + 1"),
    ("hands.hand_seed", "hand_seed + 1"),
    ("hands.dealer", "1 - dealer"),
    ("hands.match_id", "'m-forged'"),
    ("hands.winner_seat", "(winner_seat + 1) % 4"),
    ("hands.moves", "moves + 1"),
    ("hands.duration_s", "duration_s + 1.5"),
    ("hands.finished_at", "finished_at - 60"),
    (
        "hands.content_hash",
        "CASE WHEN content_hash LIKE '00%' THEN 'ff' ELSE '00' END || substr(content_hash, 3)",
    ),
    ("seats.bot", "'b9'"),
    ("seats.place", "place % 4 + 1"),
    ("seats.points_left", "points_left + 1"),
    ("seats.points_won", "points_won + 5"),
    ("seats.timeouts", "timeouts + 1"),
    ("seats.strikes", "strikes + 1"),
    ("seats.illegal", "illegal + 2"),
    ("seats.taken_over", "1 - taken_over"),
    ("seats.takeover_cause", "'strikes'"),
    ("seats.late", "late + 1"),
    ("seats.decisions", "decisions + 1"),
    ("seats.response_ms", "CAST(x'ffff0000' || substr(response_ms, 5) AS BLOB)"),
    ("seats.response_ms", "CAST(response_ms || x'07000000' AS BLOB)"),
    ("seats.seat", "7"),
]


def _edit_column(run: Path, hid: str, column: str, expr: str, seat: int = SEAT) -> None:
    table, col = column.split(".")
    where = "hand_id = ?" + (f" AND seat = {seat}" if table == "seats" else "")
    conn = sqlite3.connect(run / DB_NAME)
    try:
        before = conn.execute(f"SELECT {col} FROM {table} WHERE {where}", (hid,)).fetchall()
    finally:
        conn.close()
    _sql(run, f"UPDATE {table} SET {col} = {expr} WHERE {where}", params=(hid,))
    conn = sqlite3.connect(run / DB_NAME)
    try:
        after = conn.execute(f"SELECT {col} FROM {table} WHERE {where}", (hid,)).fetchall()
    finally:
        conn.close()
    assert before != after, f"the edit of {column} changed nothing"


def _column_digest(run: Path, hid: str, column: str) -> str | None:
    """The one-byte digest of ``column`` of hand ``hid`` that results.json keeps (None for an
    empty column), read the way verify reads it."""
    store = Store.open(run)
    try:
        return chain.scan(store).column_digests[hid].get(column)
    finally:
        store.close()


def _edit_naming(run: Path, hids: list[str], column: str, expr: str, seat: int = SEAT) -> str:
    """Edit ``column`` of the first hand in ``hids`` whose one-byte column digest the edit
    changes; returns that hand's id. results.json keeps one byte of each column's digest (by
    design), and a hand's id holds the tournament's random id, so any edit leaves that byte as
    it was once in about 256 runs: verify still fails the hand then, but can only say "its
    rows", not which column. Such an edit is undone (the database restored) and the next hand
    is edited instead, so the test always asks verify to name the column. A column a replay
    vouches for has no such digest (the replay names it): the first hand is edited."""
    if column in chain.REPLAY_CHECKED:
        _edit_column(run, hids[0], column, expr, seat)
        return hids[0]
    for hid in hids:
        before = _column_digest(run, hid, column)
        saved = sqlite3.connect(":memory:")
        conn = sqlite3.connect(run / DB_NAME)
        try:
            conn.backup(saved)
        finally:
            conn.close()
        _edit_column(run, hid, column, expr, seat)
        if _column_digest(run, hid, column) != before:
            saved.close()
            return hid
        conn = sqlite3.connect(run / DB_NAME)
        try:
            saved.backup(conn)
        finally:
            conn.close()
            saved.close()
    raise AssertionError(f"no hand's {column} digest changes with {expr}")


@pytest.mark.parametrize(
    ("column", "expr"), COLUMN_EDITS, ids=[f"{c}={e}" for c, e in COLUMN_EDITS]
)
def test_each_edited_column_fails_in_one_line_naming_hand_and_column(
    run: Path, capsys: pytest.CaptureFixture[str], column: str, expr: str
) -> None:
    hid = _edit_naming(run, _hand_ids(run)[K:], column, expr)
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 1, summary
    assert len(problems) == 1, problems
    assert hid in problems[0] and column in problems[0], problems[0]
    assert "1 problem in 24 stored hands (23 confirmed)" in summary


REPLAY_CHECKED = [(c, e) for c, e in COLUMN_EDITS if c in chain.REPLAY_CHECKED]


@pytest.mark.parametrize(
    ("column", "expr"), REPLAY_CHECKED, ids=[f"{c}={e}" for c, e in REPLAY_CHECKED]
)
def test_an_edit_the_report_was_rewritten_over_is_still_named_by_the_replay(
    run: Path, capsys: pytest.CaptureFixture[str], column: str, expr: str
) -> None:
    # whoever edits the database and runs `report` again gets a new chain head: the columns a
    # replay vouches for still fail, by the engine and the replay alone
    hid = _hand_ids(run)[K]
    _edit_column(run, hid, column, expr)
    _report_over_the_edit(run)
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 1, summary
    assert len(problems) == 1 and hid in problems[0] and column in problems[0], problems


def test_every_column_of_the_store_is_edited_by_a_test(run: Path) -> None:
    conn = sqlite3.connect(run / DB_NAME)
    try:
        stored = {
            f"{t}.{r[1]}"
            for t in ("hands", "seats")
            for r in conn.execute(f"PRAGMA table_info({t})")
        }
    finally:
        conn.close()
    edited = {c for c, _ in COLUMN_EDITS} | {"hands.hand_id", "seats.hand_id"}
    assert stored <= edited, stored - edited


def test_an_edited_incident_fails(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # crashes and given-up bots are the report's "crashes" column and its dagger mark
    _sql(run, "INSERT INTO incidents (at, bot, kind, detail) VALUES (1.0, 'b2', 'crash', 'x')")
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1 and problems[0].startswith("incidents:"), problems


def test_an_edited_configuration_fails_also_against_a_published_head(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The report reads the stored configuration's forfeit policy, size and stopping rule: an
    examination changed ``forfeit`` from "last" to "count" in ``meta.config`` and verify passed
    (the hands, and so the old chain, were untouched)."""
    published = json.loads((run / "results.json").read_text())["chain"]
    assert published["algorithm"] == chain.ALGORITHM
    _sql(
        run,
        'UPDATE meta SET value = replace(value, \'"forfeit": "last"\', '
        "'\"forfeit\": \"count\"') WHERE key = 'config'",
    )
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1 and problems[0].startswith("meta.config:"), problems
    code, problems, summary = _verify([str(run), "--head", published["head"]], capsys)
    assert code == 1 and "differs from" in " ".join([*problems, summary]), (problems, summary)


def test_an_older_runs_chain_still_verifies_and_says_what_it_leaves_out(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A results.json written before the configuration was chained (uno-arena-chain/1), or
    before the sequential decision was (uno-arena-chain/2)."""
    hands = [h.hand_id for h in load_config_of(run).plan(_tid(run))]
    store = Store.open(run)
    try:
        legacy = chain.compute(store, hands, algorithm=chain.LEGACY)
    finally:
        store.close()

    def to_legacy(data: dict[str, Any]) -> None:
        data["chain"] = {**legacy.to_json()}

    store = Store.open(run)
    try:
        before = chain.compute(store, hands, algorithm=chain.NO_DECISION)
    finally:
        store.close()
    kept = (run / "results.json").read_text()

    def to_before(data: dict[str, Any]) -> None:
        data["chain"] = {**before.to_json()}

    # uno-arena-chain/2 leaves out only a sequential decision, which a fixed-size run has not
    _edit(run / "results.json", to_before)
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 0 and not problems and "not chained" not in summary, summary
    (run / "results.json").write_text(kept)
    _edit(run / "results.json", to_legacy)
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 0 and not problems and "configuration is not chained" in summary, summary
    code, problems, summary = _verify([str(run), "--head", legacy.head], capsys)
    assert code == 0 and "configuration is not chained" in summary, summary
    _sql(run, "INSERT INTO incidents (at, bot, kind, detail) VALUES (1.0, 'b2', 'crash', 'x')")
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and problems[0].startswith("incidents:"), problems


@pytest.mark.parametrize(
    ("name", "edit", "where"),
    [
        ("results.json", "rating", "leaderboard[0]"),
        ("results.json", "los", "likelihood_of_superiority."),
        ("leaderboard.csv", "bot", "row 2"),
        ("leaderboard.md", "number", "line "),
        ("report.html", "bot", "line "),
    ],
)
def test_an_edited_report_file_fails_naming_the_file_and_the_place(
    run: Path, capsys: pytest.CaptureFixture[str], name: str, edit: str, where: str
) -> None:
    """What people read and publish: an examination raised a rating in results.json and verify
    passed (the database and its chain were untouched)."""
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 0 and not problems
    path = run / name
    if name == "results.json":
        data = json.loads(path.read_text())
        if edit == "rating":
            data["leaderboard"][0]["rating"] += 25.0
        else:
            first = next(iter(data["likelihood_of_superiority"]))
            other = next(iter(data["likelihood_of_superiority"][first]))
            data["likelihood_of_superiority"][first][other] = 0.99
        path.write_text(json.dumps(data, indent=1))
    else:
        text = path.read_text()
        if edit == "bot":
            bot = json.loads((run / "results.json").read_text())["leaderboard"][0]["bot"]
            text = text.replace(bot, bot + "x", 1)
        else:
            rating = json.loads((run / "results.json").read_text())["leaderboard"][0]["rating"]
            shown = f"{rating:+.1f}"
            assert shown in text
            text = text.replace(shown, f"{rating + 30:+.1f}", 1)
        path.write_text(text)
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1, problems
    assert problems[0].startswith(f"{name}: {where}") and "report DIR" in problems[0], problems


def test_report_files_written_again_verify(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The comparison is with what `report` writes: writing the report again changes nothing,
    and a folder without the optional files is not an error."""
    assert cli_main(["tournament", "report", str(run)]) == 0
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 0 and not problems and "not compared" not in summary, summary
    (run / "report.html").unlink()
    (run / "leaderboard.md").unlink()
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 0 and not problems, problems
    # a check of fewer files must not read as a check of all four
    assert "not there, so not compared: leaderboard.md, report.html" in summary, summary


@pytest.mark.parametrize("kind", ["fifo", "folder", "dangling link"])
def test_something_else_in_a_report_files_place_is_a_problem(
    run: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """A pipe, a folder or a dangling link where leaderboard.md was is not a missing file
    (which verify only notes): it is named, and verify fails."""
    victim = run / "leaderboard.md"
    victim.unlink()
    if kind == "fifo":
        os.mkfifo(victim)
    elif kind == "folder":
        victim.mkdir()
    else:
        victim.symlink_to(run / "no-such-file.md")
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1, problems
    assert problems[0].startswith("leaderboard.md: unreadable"), problems


@pytest.mark.parametrize("kind", ["dev-zero", "fifo"])
def test_a_replay_that_is_a_device_or_a_pipe_is_named_not_read(
    run: Path, capsys: pytest.CaptureFixture[str], kind: str
) -> None:
    """A symlink to /dev/zero or a named pipe in replays/ used to hang verify (it read until
    memory ran out, or waited for a writer forever)."""
    victim = _files(run)[0]
    victim.unlink()
    if kind == "fifo":
        os.mkfifo(victim)
    else:
        victim.symlink_to("/dev/zero")
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1 and "not a regular file" in problems[0], problems
    results = run / "results.json"
    results.unlink()
    os.mkfifo(results)
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and any("results.json: unreadable" in p for p in problems), problems


def test_a_replay_data_edit_in_the_database_fails(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = _hand_ids(run)
    _sql(
        run,
        "UPDATE replays SET data = (SELECT data FROM replays WHERE hand_id = ?) "
        f"WHERE hand_id = '{ids[K]}'",
        params=(ids[K + 1],),
    )
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1, problems
    assert ids[K] in problems[0] and "replays.data" in problems[0]


def test_a_zlib_bomb_in_the_database_is_refused_not_inflated(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """200 KB that inflate to 200 MiB, stored as a hand's replay: refused at 64 MiB."""
    ids = _hand_ids(run)
    bomb = zlib.compress(b" " * (200 << 20), 9)
    _sql(run, f"UPDATE replays SET data = ? WHERE hand_id = '{ids[K]}'", params=(bomb,))
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1 and ids[K] in problems[0], problems
    assert "inflates beyond 64 MiB" in problems[0], problems


# ------------------------------------------------------------------ deleted, duplicated, swapped


def test_a_deleted_hand_fails_in_one_line(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    hid = _hand_ids(run)[K]
    for table in ("seats", "replays", "hands"):
        _sql(run, f"DELETE FROM {table} WHERE hand_id = ?", params=(hid,))
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1, problems
    assert hid in problems[0] and "deleted" in problems[0]
    assert "23 stored hands" in summary


def test_a_deleted_hand_and_its_file_still_fail(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hid = _hand_ids(run)[K]
    for table in ("seats", "replays", "hands"):
        _sql(run, f"DELETE FROM {table} WHERE hand_id = ?", params=(hid,))
    _files(run)[K].unlink()
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1 and hid in problems[0] and "deleted" in problems[0]
    # without results.json, the finished schedule still misses it... once a head is given
    head = json.loads((run / "results.json").read_text())["chain"]["head"]
    (run / "results.json").unlink()
    code, problems, _ = _verify([str(run), "--head", head], capsys)
    assert code == 1 and len(problems) == 1 and "chain head" in problems[0], problems
    # where the store says every shard finished, the schedule names the missing hand
    _sql(run, "INSERT INTO shards VALUES ('1/1', 'a', 'h', 1, 'finished', 24, 24, 1.0, 2.0)")
    code, problems, _ = _verify([str(run), "--head", head], capsys)
    assert code == 1 and any(hid in p and "missing" in p for p in problems), problems


def test_a_duplicated_hand_row_fails_in_one_line(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # a table rebuilt without its primary key can hold a hand twice
    hid = _hand_ids(run)[K]
    _sql(
        run,
        "CREATE TABLE h2 AS SELECT * FROM hands",
        "DROP TABLE hands",
        "CREATE TABLE hands AS SELECT * FROM h2",
        "DROP TABLE h2",
        "INSERT INTO hands SELECT * FROM hands WHERE hand_id = ?",
        params=(hid,),
    )
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1, problems
    assert hid in problems[0] and "more than once" in problems[0]


def test_a_hand_copied_under_a_new_id_fails_in_one_line(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hid = _hand_ids(run)[K]
    new = hid[:-1] + "9"  # rotation 9: no hand of the schedule
    for table in ("hands", "seats", "replays"):
        _sql(
            run,
            f"CREATE TABLE c AS SELECT * FROM {table} WHERE hand_id = ?",
            f"UPDATE c SET hand_id = '{new}'",
            f"INSERT INTO {table} SELECT * FROM c",
            "DROP TABLE c",
            params=(hid,),
        )
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1, problems
    assert new in problems[0] and "not a hand of this tournament's schedule" in problems[0]


@pytest.mark.parametrize("other", [1, 9], ids=["same-deal", "another-deal"])
def test_two_swapped_hands_fail_one_line_each(
    run: Path, capsys: pytest.CaptureFixture[str], other: int
) -> None:
    ids = _hand_ids(run)
    a, b = ids[K - 1], ids[K - 1 + other]
    for table in ("hands", "seats", "replays"):
        _sql(
            run,
            f"UPDATE {table} SET hand_id = 'tmp' WHERE hand_id = '{a}'",
            f"UPDATE {table} SET hand_id = '{a}' WHERE hand_id = '{b}'",
            f"UPDATE {table} SET hand_id = '{b}' WHERE hand_id = 'tmp'",
        )
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 2, problems
    for hid in (a, b):
        (line,) = [p for p in problems if p.startswith(hid + ":")]
        assert "hands." in line or "seats." in line


# ------------------------------------------------------------------ degenerate inputs


def test_a_run_without_results_json_checks_every_hand_and_fails_on_the_head(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    head = json.loads((run / "results.json").read_text())["chain"]["head"]
    (run / "results.json").unlink()
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1 and "results.json: missing" in problems[0]
    assert "--head" in problems[0] and "(24 confirmed)" in summary
    code, problems, _ = _verify([str(run), "--head", head], capsys)
    assert code == 0 and problems == []
    code, problems, _ = _verify([str(run), "--head", "ab" * 32], capsys)
    assert code == 1 and len(problems) == 1 and "chain head" in problems[0]
    # a malformed --head is a usage error, said before any hand is re-run: one line, exit 2
    code, problems, err = _verify([str(run), "--head", "not-hex"], capsys)
    assert code == 2 and problems == [] and "64 hex digits of a chain head" in err, err
    (run / "results.json").write_text('{"hands": ')
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1 and "results.json: unreadable" in problems[0]
    (run / "results.json").write_text('{"hands": 24}')  # written before verify had a chain
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1 and "has no chain head" in problems[0]


def test_a_run_without_replay_files_is_one_line(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    shutil.rmtree(run / "replays")
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1 and "no replays folder" in problems[0], problems
    assert "(24 confirmed)" in summary  # against the database's copies


def test_a_truncated_replay_file_fails_in_one_line(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = _files(run)[K]
    f.write_bytes(f.read_bytes()[:1000])
    code, problems, _ = _verify([str(run)], capsys)
    assert (
        code == 1 and len(problems) == 1 and f.name in problems[0] and "not a replay" in problems[0]
    )


def test_a_deleted_seat_row_fails_in_one_line(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    hid = _hand_ids(run)[K]
    _sql(run, "DELETE FROM seats WHERE hand_id = ? AND seat = 3", params=(hid,))
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1, problems
    assert hid in problems[0] and "seats.seat: no row for seat 3" in problems[0]


def test_an_empty_store_verifies_as_nothing_played(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _sql(run, "DELETE FROM seats", "DELETE FROM replays", "DELETE FROM hands")
    shutil.rmtree(run / "replays")
    (run / "results.json").unlink()
    assert cli_main(["tournament", "report", str(run)]) == 0
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 0 and problems == [], problems
    assert "verified 0 of 0 stored hands" in summary and "24 planned hands not played" in summary
    # a hand deleted from a store results.json says was finished is still missing
    assert json.loads((run / "results.json").read_text())["chain"]["hands"] == 0


def test_a_finished_run_missing_hands_without_files_names_them(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = _hand_ids(run)
    for hid in ids[:2]:
        for table in ("seats", "replays", "hands"):
            _sql(run, f"DELETE FROM {table} WHERE hand_id = ?", params=(hid,))
    for f in _files(run)[:2]:
        f.unlink()
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 2
    assert all(any(hid in p and "deleted" in p for p in problems) for hid in ids[:2])


def test_verify_of_a_missing_folder_is_one_plain_line(tmp_path: Path) -> None:
    res = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "tournament", "verify", str(tmp_path / "nope")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 2 and len(res.stderr.strip().splitlines()) == 1, res.stderr
    assert "no tournament here" in res.stderr


# ------------------------------------------------------------------ uno-arena replay FILE

REPLAY_EDITS = [
    ("hands.winner_seat", "hands", "winner_seat = (winner_seat + 1) % 4"),
    ("seats.points_left", "seats", "points_left = points_left + 3"),
    ("seats.points_won", "seats", "points_won = points_won + 3"),
    ("seats.place", "seats", "place = place % 4 + 1"),
    ("seats.taken_over", "seats", "taken_over = 1 - taken_over"),
    ("hands.moves", "hands", "moves = moves + 1"),
]


@pytest.mark.parametrize(
    ("column", "table", "edit"), REPLAY_EDITS, ids=[e[0] for e in REPLAY_EDITS]
)
def test_replay_does_not_claim_a_match_with_an_edited_database(
    run: Path, column: str, table: str, edit: str
) -> None:
    f = _files(run)[K]
    hid = json.loads(f.read_text())["hand_id"]
    _sql(run, f"UPDATE {table} SET {edit} WHERE hand_id = ?", params=(hid,))
    code, out = _replay(f)
    assert code == 1 and len(out.strip().splitlines()) == 1, out
    assert "matches the tournament's database" not in out
    assert column in out and hid in out


# ------------------------------------------------------------------ PostgreSQL


def test_verify_store_url_checks_a_postgresql_run(
    run: Path, pg_url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from uno_tournament.pgstore import PgStore

    lite = Store.open(run)
    pg = PgStore.connect(pg_url, create=True)
    try:
        pg.init_meta(lite.meta())
        pg.add_hands(lite.hands())
        for _, bot, kind, detail in lite.incidents():
            pg.add_incident(bot, kind, detail)
    finally:
        lite.close()
        pg.close()
    head = json.loads((run / "results.json").read_text())["chain"]["head"]
    # the same rows give the same chain in PostgreSQL
    code, problems, summary = _verify(["--store", pg_url, str(run)], capsys)
    assert code == 0 and problems == [], problems
    assert "verified 24 of 24" in summary and "uno-test-password" not in summary
    code, problems, _ = _verify(["--store", pg_url, "--head", head], capsys)
    assert code == 0 and problems == []
    code, problems, _ = _verify(["--store", pg_url], capsys)
    assert code == 1 and len(problems) == 1 and "--head" in problems[0]
    hid = _hand_ids(run)[K]
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(
            "UPDATE seats SET place = mod(place, 4) + 1 WHERE hand_id = %s AND seat = 2", (hid,)
        )
    code, problems, _ = _verify(["--store", pg_url, "--head", head], capsys)
    assert code == 1 and len(problems) == 1 and hid in problems[0] and "seats.place" in problems[0]
    with psycopg.connect(pg_url, autocommit=True) as conn:
        for table in ("seats", "replays", "hands"):
            conn.execute(f"DELETE FROM {table} WHERE hand_id = %s", (hid,))
    code, problems, _ = _verify(["--store", pg_url, str(run)], capsys)
    assert code == 1 and len(problems) == 1 and hid in problems[0], problems


def test_verify_store_wants_a_url(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli_main(["tournament", "verify", "--store", str(tmp_path)]) == 2
    assert "postgresql://" in capsys.readouterr().err
    assert cli_main(["tournament", "verify"]) == 2
    assert "--store URL" in capsys.readouterr().err


# ------------------------------------------------------------------ replay files (issue 10)


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
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 1
    assert any(files[2].name in ln and "copied" in ln for ln in problems)
    assert any(files[5].name in ln and "missing" in ln for ln in problems)
    assert any("t9-b9-d9-r9.json" in ln and "no hand" in ln for ln in problems)
    assert len(problems) == 3
    assert summary.endswith("(22 confirmed)") and "3 problems in 24 stored hands" in summary


def test_the_stored_hash_is_the_hash_of_the_replay_file(run: Path) -> None:
    store = Store.open(run)
    try:
        hashes = store.hashes()
        for f in _files(run):
            data = json.loads(f.read_text())
            assert hashes[data["hand_id"]] == content_hash(data)
            raw = store.conn.execute(
                "SELECT data FROM replays WHERE hand_id = ?", (data["hand_id"],)
            ).fetchone()[0]
            assert json.loads(zlib.decompress(raw)) == data
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
    for command in ("report", "verify"):
        res = subprocess.run(
            [sys.executable, "-m", "uno_server.cli", "tournament", command, str(run)],
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


# --------------------------------------------- examination of 2026-12-04: what verify let pass


def test_a_results_json_claiming_the_older_chain_still_gets_its_reports_compared(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An examiner rewrote results.json's chain in the older format (its head computed with
    public code), raised a rating in every report file, and verify passed: the older chain had
    turned the report comparison off. It stays on; only the chain itself is left out of it."""
    hands = [h.hand_id for h in load_config_of(run).plan(_tid(run))]
    store = Store.open(run)
    try:
        legacy = chain.compute(store, hands, algorithm=chain.LEGACY)
    finally:
        store.close()

    def downgrade_and_raise(data: dict[str, Any]) -> None:
        data["chain"] = {**legacy.to_json()}
        data["leaderboard"][1]["rating"] += 100.0

    _edit(run / "results.json", downgrade_and_raise)
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 1, summary
    assert len(problems) == 1 and problems[0].startswith("results.json: leaderboard[1]"), problems


def test_a_key_written_twice_is_refused_in_results_json_and_in_a_replay(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """JSON readers differ on which of two values of one key counts (Python's the last, others
    the first): a forged rating placed before the real one passed verify, and a replay with two
    winners passed `uno-arena replay`."""
    path = run / "results.json"
    text = path.read_text()
    assert text.count('"rating": ') >= 4
    path.write_text(text.replace('"rating": ', '"rating": 999.0, "rating": ', 1))
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and any("twice in one object" in p for p in problems), problems
    path.write_text(text)
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 0, problems
    replay = _files(run)[0]
    raw = replay.read_text()
    assert raw.startswith("{")
    forged = json.loads(raw)["bots"][::-1]  # a reader that keeps the first value sees these
    replay.write_text('{"bots": ' + json.dumps(forged) + ", " + raw[1:])
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1 and "twice in one object" in problems[0], problems
    rc, out = _replay(replay)
    assert rc != 0 and "twice in one object" in out and "Traceback" not in out, out


@pytest.mark.parametrize(
    ("statement", "seen"),
    [
        ("UPDATE seats SET late = '' WHERE seat = 1", "ValueError"),
        ("UPDATE hands SET match_seed = 'x'", "TypeError"),
        ("UPDATE seats SET response_ms = '[1,2' WHERE seat = 2", "JSONDecodeError"),
        ("UPDATE replays SET data = 'abc'", "TypeError"),
    ],
)
def test_a_value_of_a_type_no_run_writes_is_one_problem_line_not_a_traceback(
    run: Path, capsys: pytest.CaptureFixture[str], statement: str, seen: str
) -> None:
    _sql(run, statement)
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 1 and "Traceback" not in summary, summary
    assert len(problems) == 1 and problems[0].startswith("verify stopped: "), problems
    assert seen in problems[0] and "edited by hand" in problems[0], problems


def test_numbers_no_report_writes_are_problems_not_tracebacks(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = run / "results.json"
    data = json.loads(path.read_text())
    path.write_text(path.read_text().replace(f'"hands": {data["hands"]}', '"hands": 1' + "0" * 400))
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 1 and problems and "Traceback" not in summary, summary
    assert problems[0].startswith("results.json: ") and "hands is 1000" in problems[0], problems
    path.write_text("[" * 100_000 + "]" * 100_000)
    code, problems, summary = _verify([str(run)], capsys)
    assert code == 1 and "Traceback" not in summary, summary
    assert any("results.json: unreadable (RecursionError)" in p for p in problems), problems


def test_verify_leaves_the_database_as_it_found_it(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """verify opened the database read-write and put back a column an edit had dropped; what
    it checks is read, never changed."""
    _sql(run, "ALTER TABLE seats DROP COLUMN late")
    before = (run / DB_NAME).read_bytes()
    _verify([str(run)], capsys)
    conn = sqlite3.connect(run / DB_NAME)
    try:
        columns = [r[1] for r in conn.execute("PRAGMA table_info(seats)")]
    finally:
        conn.close()
    assert "late" not in columns
    assert (run / DB_NAME).read_bytes() == before


def test_a_report_file_with_other_line_endings_says_so(
    run: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A leaderboard.md converted to CRLF read "has 53 lines, not 53"."""
    path = run / "leaderboard.md"
    path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    code, problems, _ = _verify([str(run)], capsys)
    assert code == 1 and len(problems) == 1, problems
    assert "other line endings" in problems[0] and "lines, not" not in problems[0], problems


def test_report_counts_are_compared_exactly_and_ratings_within_the_float_tolerance() -> None:
    """An examination raised a count of 1,000,000 by one in a report file and verify passed:
    the relative tolerance meant for floats from another machine covered integers too."""
    from uno_tournament.verify_reports import _json_difference, _same_cell

    assert not _same_cell("1000001", "1000000")
    assert not _same_cell("1000000.0000001", "1000000")
    assert _same_cell("12.30000000001", "12.3")
    assert (
        _json_difference({"hands": 1000001}, {"hands": 1000000}, "")
        == "hands is 1000001, not 1000000:"
    )
    assert _json_difference({"hands": 1000000.0000001}, {"hands": 1000000}, "") is not None
    # two values whose short forms look alike are shown in full ("hands is 24, not 24")
    assert (
        _json_difference({"hands": 24.0000001}, {"hands": 24}, "") == "hands is 24.0000001, not 24:"
    )
    assert _json_difference({"elo": 12.30000000001}, {"elo": 12.3}, "") is None


# ------------------------------------------------------------------ where the record sits


def test_an_archive_on_read_only_media_verifies(run: Path) -> None:
    """An examination: a run folder on read-only media (a published archive) could not be
    verified at all ('unable to open database file': SQLite could not make its WAL index). The
    folder is mounted read-only for the command by bubblewrap, as a CD or an archive would be."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        assert os.environ.get("CI") != "true", "CI installs bubblewrap"
        pytest.skip("bwrap not installed")
    cmd = [sys.executable, "-m", "uno_server.cli", "tournament", "verify", str(run)]
    ro = [bwrap, "--dev-bind", "/", "/", "--ro-bind", str(run), str(run)]
    res = subprocess.run([*ro, *cmd], capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "verified 24 of 24 stored hands" in res.stdout
    # an edit is still found there: the archive is read, not trusted
    _sql(run, "UPDATE seats SET points_won = points_won + 1 WHERE seat = 0")
    res = subprocess.run([*ro, *cmd], capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 1 and "points_won" in res.stdout, res.stdout[-2000:] + res.stderr
    # writes a killed run left unmerged cannot be read there: said, not read around
    (run / f"{DB_NAME}-wal").write_bytes(b"\0" * 4096)
    res = subprocess.run([*ro, *cmd], capture_output=True, text=True, timeout=300, check=False)
    assert res.returncode == 2 and "copy the folder somewhere writable" in res.stderr, res.stderr


def test_a_database_that_is_not_a_file_is_named_so(run: Path) -> None:
    for odd in ("folder", "device", "broken"):
        if (run / DB_NAME).is_dir() and not (run / DB_NAME).is_symlink():
            (run / DB_NAME).rmdir()
        else:
            (run / DB_NAME).unlink(missing_ok=True)
        if odd == "folder":
            (run / DB_NAME).mkdir()
        else:
            (run / DB_NAME).symlink_to("/dev/zero" if odd == "device" else run / "nowhere")
        for command in ("verify", "report", "resume"):
            line = refused("tournament", command, str(run))
            assert f"{DB_NAME}: not a regular file" in line, (odd, line)


def test_report_and_resume_refuse_a_damaged_file_instead_of_reading_around_it(run: Path) -> None:
    """An examination: a page overwritten mid-file (where replays are kept) was read around:
    `report` rewrote every report from the file and exited 0. Now report and resume name the
    damage in one line, exit 2, and leave the reports as they were."""
    db = run / DB_NAME
    before = (run / "results.json").read_bytes()
    conn = sqlite3.connect(db)
    page = conn.execute("PRAGMA page_size").fetchone()[0]
    pages = conn.execute("PRAGMA page_count").fetchone()[0]
    conn.close()
    with db.open("r+b") as f:
        f.seek((pages - 2) * page)  # near the end: the last replays written
        f.write(b"\xff" * page)
    for command in ("report", "resume"):
        line = refused("tournament", command, str(run))
        assert "the database is damaged" in line and "restore it from a copy" in line, line
    assert (run / "results.json").read_bytes() == before
