"""What the stop-46 examination of the command line found, each now one plain line (or done
right) with nothing lost: report files that a stranger replaced by a link, a pipe or a folder;
NUL characters in a config; an empty ``--out``; a damaged database; a Ctrl-C while the command
line is still being imported; a config saved with a byte-order mark; a bot's token echoed in
its start-up failure."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
import types
from importlib.metadata import entry_points
from pathlib import Path

import pytest

from tests.refusal import cli, refused
from uno_server.cli import main as cli_main
from uno_server.service.main import load_config as load_server_config
from uno_tournament.config import load

from .helpers import bot_entry, write_config


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("examined")
    cfg = write_config(tmp, [bot_entry(f"b{i}") for i in range(4)], name="ex")
    assert cli_main(["tournament", "run", str(cfg), "--quiet"]) == 0
    return tmp / "out"


def _copy(played: Path, to: Path) -> Path:
    shutil.copytree(played, to)
    return to


def test_report_replaces_a_link_or_a_pipe_and_names_a_folder(played: Path, tmp_path: Path) -> None:
    run = _copy(played, tmp_path / "run")
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (run / "results.json").unlink()
    (run / "results.json").symlink_to(victim)  # written through, it overwrote a file outside
    (run / "leaderboard.md").unlink()
    os.mkfifo(run / "leaderboard.md")  # opened for writing, it waited for a reader forever
    # a results.json that is not a report cannot vouch for the database: refused, not written
    # through nor taken for no report at all (an examination truncated it to hide an edit)
    line = refused("tournament", "report", str(run))
    assert "results.json is not a report this program wrote" in line, line
    assert "move results.json away first" in line, line
    assert victim.read_text() == "precious\n"
    (run / "results.json").unlink()  # moved away: the database is reported as it is
    res = cli("tournament", "report", str(run))
    assert res.returncode == 0, res.stderr[-2000:]
    assert victim.read_text() == "precious\n"
    for name in ("results.json", "leaderboard.md"):
        assert (run / name).is_file() and not (run / name).is_symlink(), name
    assert json.loads((run / "results.json").read_text())["hands"]
    (run / "report.html").unlink()
    (run / "report.html").mkdir()  # was an IsADirectoryError traceback
    line = refused("tournament", "report", str(run))
    assert "report.html: a folder is in its place; move it away" in line, line
    assert f"uno-arena tournament report {run}" in line
    assert not [p.name for p in run.iterdir() if p.name.endswith(".tmp")]


def test_nul_characters_and_an_empty_out_are_refused_before_anything_is_made(
    tmp_path: Path,
) -> None:
    cfg = write_config(tmp_path, [bot_entry(f"b{i}") for i in range(4)])
    text = cfg.read_text()
    nul_out = tmp_path / "nul-output.toml"
    nul_out.write_text(text.replace(f'output = "{tmp_path / "out"}"', 'output = "o\\u0000x"'))
    assert "tournament.output: a path cannot hold a NUL" in refused(
        "tournament", "run", str(nul_out)
    )
    nul_cmd = tmp_path / "nul-command.toml"
    nul_cmd.write_text(text.replace('"warning"', '"warn\\u0000ing"', 1))
    assert "bots[0].command: a NUL character" in refused("tournament", "run", str(nul_cmd))
    line = refused("tournament", "run", str(cfg), "--out", "")  # was: the config's folder, rc 0
    assert "argument --out: empty; name the folder" in line
    names = {"tournament.toml", "nul-output.toml", "nul-command.toml"}
    assert {p.name for p in tmp_path.iterdir()} == names


def test_a_damaged_database_is_called_damaged_with_the_way_out(
    played: Path, tmp_path: Path
) -> None:
    run = _copy(played, tmp_path / "run")
    for extra in ("tournament.sqlite-wal", "tournament.sqlite-shm"):
        (run / extra).unlink(missing_ok=True)
    db = run / "tournament.sqlite"
    data = db.read_bytes()
    db.write_bytes(data[: len(data) // 2])
    for args in (("verify",), ("watch", "--once"), ("report",)):
        line = refused("tournament", args[0], str(run), *args[1:])
        assert "damaged" in line and "restore it from a copy" in line, (args, line)
        assert "not a tournament database" not in line
    other = _copy(played, tmp_path / "other")
    (other / "tournament.sqlite").write_text("this is no database\n" * 100)
    assert "not a tournament database" in refused("tournament", "verify", str(other))


def test_a_ctrl_c_while_the_command_line_is_imported_is_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Importing the command line takes a second or more on a busy machine; a Ctrl-C then was a
    KeyboardInterrupt traceback from the console script, before any handler of ours."""

    class StillImporting(types.ModuleType):
        def __getattr__(self, name: str) -> object:
            if name == "main":  # where `from .cli import main` stands when the Ctrl-C comes
                raise KeyboardInterrupt
            raise AttributeError(name)

    from uno_server import _entry

    before = signal.getsignal(signal.SIGINT)
    try:
        monkeypatch.setitem(sys.modules, "uno_server.cli", StillImporting("uno_server.cli"))
        assert _entry.main() == 130
    finally:
        signal.signal(signal.SIGINT, before)  # main leaves its own for the interpreter's exit
    assert capsys.readouterr().err == "uno-arena: interrupted\n"
    (script,) = entry_points(group="console_scripts", name="uno-arena")
    assert script.value == "uno_server._entry:main"


def test_a_ctrl_c_is_honoured_in_a_process_started_with_it_ignored(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A `&` job of a script starts with SIGINT ignored, which Python keeps: a SIGINT before the
    command's own handler was lost, and the whole run played (exit status 0)."""

    class Command(types.ModuleType):
        def main(self) -> int:  # the command, before its own handler: it is sent a SIGINT
            os.kill(os.getpid(), signal.SIGINT)
            for _ in range(50):
                time.sleep(0.1)  # the handler runs at the next bytecode boundary
            return 0

    from uno_server import _entry

    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        monkeypatch.setitem(sys.modules, "uno_server.cli", Command("uno_server.cli"))
        assert _entry.main() == 130
    finally:
        signal.signal(signal.SIGINT, before)
    assert capsys.readouterr().err == "uno-arena: interrupted\n"


EXITING = """
import atexit, os, signal, sys, time, types

def main():  # the command: it finished (its reports written); the interpreter exits next
    atexit.register(lambda: (os.kill(os.getpid(), signal.SIGINT), time.sleep(30)))
    return 0

command = types.ModuleType("uno_server.cli")
command.main = main
sys.modules["uno_server.cli"] = command
from uno_server._entry import main as entry
sys.exit(entry())
"""


def test_a_ctrl_c_while_the_interpreter_exits_says_the_command_had_ended() -> None:
    """About 0.1 s after a sharded run's reports the interpreter is still exiting (joining
    threads, the fitting pool); a Ctrl-C there ended the process silently with status 130, as
    if the finished run had been interrupted (an examination). Now one line, and the command's
    own status."""
    res = subprocess.run(
        [sys.executable, "-c", EXITING], check=False, capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0, (res.returncode, res.stderr[-2000:])
    assert res.stderr == (
        "uno-arena: Ctrl-C while exiting: the command had already ended (exit status 0)\n"
    ), res.stderr[-2000:]


def test_a_config_saved_with_a_byte_order_mark_is_read(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, [bot_entry(f"b{i}") for i in range(4)], name="bom")
    cfg.write_bytes(b"\xef\xbb\xbf" + cfg.read_bytes())  # as Windows Notepad saves UTF-8
    assert load(cfg).name == "bom"
    server = tmp_path / "server.toml"
    server.write_bytes(b"\xef\xbb\xbf[server]\nport = 50999\n")
    assert load_server_config(str(server)).port == 50999


def test_a_replay_seed_of_hundreds_of_digits_is_cut_in_the_message(
    played: Path, tmp_path: Path
) -> None:
    data = json.loads(next((played / "replays").iterdir()).read_text())
    data["seed"] = int("9" * 400)
    replay = tmp_path / "r.json"
    replay.write_text(json.dumps(data))
    line = refused("replay", str(replay))
    assert "'seed'" in line and len(line) < 300, line


def test_a_bot_that_echoes_its_token_and_fails_to_start_does_not_show_it(tmp_path: Path) -> None:
    token = "ab12" * 8
    echo = "import sys; print('unrecognized arguments:', sys.argv[1], file=sys.stderr); sys.exit(3)"
    bots = [bot_entry(f"b{i}") for i in range(3)] + [
        f'[[bots]]\nname = "echo"\ntoken = "{token}"\n'
        f'command = ["{{python}}", "-c", "{echo}", "{{token}}"]\n'
    ]
    cfg = write_config(tmp_path, bots, startup_timeout_s=60)
    res = cli("tournament", "run", str(cfg), "--quiet", timeout=120)
    assert res.returncode != 0
    assert "bot 'echo' failed to start" in res.stderr and "<token>" in res.stderr, res.stderr
    assert token not in res.stderr + res.stdout
    warning = [x for x in res.stderr.splitlines() if x.startswith("warning: echo")]
    assert warning and "the command names {token}" in warning[0]
    assert "the command names {token}" not in res.stdout


def _edit(db: Path, *sql: str) -> None:
    conn = sqlite3.connect(db)
    with conn:
        for q in sql:
            conn.execute(q)
    conn.close()


def test_report_and_resume_refuse_a_database_changed_since_its_results(
    played: Path, tmp_path: Path
) -> None:
    """resume and report rewrote results.json from an edited database, and verify then passed:
    an examination deleted a hand and resumed (it was played again, with another winner), and
    set a bot's illegal count and reported (the report showed 7 illegal moves)."""
    deleted = _copy(played, tmp_path / "deleted")
    db = deleted / "tournament.sqlite"
    hid = sqlite3.connect(db).execute("SELECT hand_id FROM hands ORDER BY hand_id").fetchone()[0]
    _edit(db, *(f"DELETE FROM {t} WHERE hand_id = '{hid}'" for t in ("seats", "replays", "hands")))
    before = (deleted / "results.json").read_bytes()
    for args in (("resume", str(deleted)), ("report", str(deleted))):
        line = refused("tournament", *args)
        assert f"hand {hid} is in results.json's chain but no longer in the database" in line
        assert "move results.json away first" in line, line
    assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM hands").fetchone()[0] == 23
    assert (deleted / "results.json").read_bytes() == before  # nothing rewritten
    assert cli("tournament", "verify", str(deleted)).returncode == 1

    edited = _copy(played, tmp_path / "edited")
    _edit(edited / "tournament.sqlite", f"UPDATE seats SET illegal = 7 WHERE hand_id = '{hid}'")
    line = refused("tournament", "report", str(edited))
    assert f"hand {hid} in the database differs from the one chained into results.json" in line
    # the way out the message gives: the database as it is now, said on purpose
    (edited / "results.json").rename(tmp_path / "old-results.json")
    assert cli("tournament", "report", str(edited)).returncode == 0
    # an unchanged database reports again as before
    same = _copy(played, tmp_path / "same")
    assert cli("tournament", "report", str(same)).returncode == 0
    assert cli("tournament", "verify", str(same)).returncode == 0


def test_report_and_resume_refuse_an_edited_or_deleted_incident_but_not_a_new_one(
    played: Path, tmp_path: Path
) -> None:
    """The incidents (crashes, bots given up on: the report's crash counts and † marks) were
    chained as one digest, so `report` could not tell an edited incident from a new one and
    wrote the edited one into the report (an examination; `verify --head` caught it)."""
    crash = "INSERT INTO incidents (at, bot, kind, detail) VALUES ({}, '{}', 'crash', '1')"
    # a run stopped before its end (a hand not stored) stores new incidents when resumed
    partial = _copy(played, tmp_path / "partial")
    pdb = partial / "tournament.sqlite"
    last = sqlite3.connect(pdb).execute("SELECT MAX(hand_id) FROM hands").fetchone()[0]
    _edit(
        pdb, *(f"DELETE FROM {t} WHERE hand_id = '{last}'" for t in ("seats", "replays", "hands"))
    )
    _edit(pdb, crash.format(1, "b1"))
    (partial / "results.json").unlink()  # a report of the database as it is now
    assert cli("tournament", "report", str(partial)).returncode == 0
    seen = json.loads((partial / "results.json").read_text())["chain"]["columns"]
    assert seen["incidents_seen"] == "1"
    _edit(pdb, crash.format(2, "b2"))  # one more (a resumed run's): not a change
    assert cli("tournament", "report", str(partial)).returncode == 0
    assert (
        json.loads((partial / "results.json").read_text())["chain"]["columns"]["incidents_seen"]
        == "2"
    )
    # a finished run with two incidents, reported
    run = _copy(played, tmp_path / "run")
    db = run / "tournament.sqlite"
    _edit(db, crash.format(1, "b1"), crash.format(2, "b2"))
    (run / "results.json").unlink()
    assert cli("tournament", "report", str(run)).returncode == 0
    assert cli("tournament", "verify", str(run)).returncode == 0
    older = _copy(run, tmp_path / "older")  # as the version before incidents_seen wrote it
    data = json.loads((older / "results.json").read_text())
    del data["chain"]["columns"]["incidents_seen"]
    (older / "results.json").write_text(json.dumps(data, indent=2))
    res = cli("tournament", "verify", str(older))
    assert res.returncode == 0, res.stdout[-1500:]
    # a finished run stores no incident after its report: one added is refused (an examination
    # added "given up" for the winner, which report marked with a dagger), in either file
    for folder in (_copy(run, tmp_path / "late"), _copy(older, tmp_path / "older-late")):
        _edit(folder / "tournament.sqlite", crash.format(3, "b0"))
        line = refused("tournament", "report", str(folder))
        assert "was stored after results.json chained every planned hand" in line, line
    for base, name in ((older, "older-edited"), (partial, "older-partial-edited")):
        folder = tmp_path / name  # no count in the file: an edit is still caught
        # (without the SQLite side files: the last command closed the database, and a -wal
        # file vanishing during the copy failed it once in CI)
        shutil.copytree(base, folder, ignore=shutil.ignore_patterns("*-wal", "*-shm"))
        data = json.loads((folder / "results.json").read_text())
        data["chain"]["columns"].pop("incidents_seen", None)
        (folder / "results.json").write_text(json.dumps(data, indent=2))
        _edit(folder / "tournament.sqlite", "UPDATE incidents SET bot = 'b3' WHERE id = 1")
        line = refused("tournament", "report", str(folder))
        assert "chained into results.json was edited" in line, (name, line)
    before = (run / "results.json").read_bytes()
    edited = _copy(run, tmp_path / "edited")  # the first incident's bot changed
    _edit(edited / "tournament.sqlite", "UPDATE incidents SET bot = 'b3' WHERE id = 1")
    deleted = _copy(run, tmp_path / "deleted")  # the last one deleted
    _edit(deleted / "tournament.sqlite", "DELETE FROM incidents WHERE id = 2")
    for folder, want in (
        (edited, "an incident (a crash, a bot given up on) chained into results.json was edited"),
        (
            deleted,
            "results.json chains 2 incidents (crashes, bots given up on), the database holds 1",
        ),
    ):
        for args in (("report", str(folder)), ("resume", str(folder), "--quiet")):
            line = refused("tournament", *args)
            assert want in line, line
        assert (folder / "results.json").read_bytes() == before  # nothing rewritten
        assert cli("tournament", "verify", str(folder)).returncode == 1


def test_a_results_json_cut_short_emptied_or_without_its_chain_guards_still(
    played: Path, tmp_path: Path
) -> None:
    """An examination deleted a hand (and its replay), then cut results.json short, emptied it
    or removed its chain: report and resume took that for no report at all, wrote over it,
    and verify passed a finished run with a hand gone ("1 planned hands not played yet")."""
    for how in ("cut", "empty", "no chain", "no digests", "short digests"):
        run = _copy(played, tmp_path / how.replace(" ", "-"))
        db = run / "tournament.sqlite"
        hid = sqlite3.connect(db).execute("SELECT max(hand_id) FROM hands").fetchone()[0]
        _edit(db, *(f"DELETE FROM {t} WHERE hand_id = '{hid}'" for t in ("seats", "replays")))
        _edit(db, f"DELETE FROM hands WHERE hand_id = '{hid}'")
        text = (run / "results.json").read_text()
        data = json.loads(text)
        if how == "cut":
            text = text[:3000]
        elif how == "empty":
            text = ""
        elif how == "no chain":
            del data["chain"]
        elif how == "no digests":
            del data["chain"]["hands_digests"]
        else:
            data["chain"]["hands_digests"] = data["chain"]["hands_digests"][:24]
        if how not in ("cut", "empty"):
            text = json.dumps(data, indent=2)
        (run / "results.json").write_text(text)
        want = (
            "results.json is not a report this program wrote"
            if how in ("cut", "empty")
            else "results.json holds no chain"
            if how == "no chain"
            else "results.json's chain does not list this run's planned hands"
        )
        for args in (("report", str(run)), ("resume", str(run), "--quiet")):
            line = refused("tournament", *args)
            assert want in line and "move results.json away first" in line, (how, line)
        assert (run / "results.json").read_text() == text, how  # nothing written over
        assert sqlite3.connect(db).execute(
            "SELECT count(*) FROM hands WHERE hand_id = ?", (hid,)
        ).fetchone() == (0,), how  # and the deleted hand not played again


def test_report_and_resume_refuse_a_hand_stored_outside_the_schedule(
    played: Path, tmp_path: Path
) -> None:
    """An examination copied a hand under an id the schedule does not have: verify failed it,
    but report and resume wrote over the reports ("25 of 24 hands", a win more)."""
    run = _copy(played, tmp_path / "forged")
    db = run / "tournament.sqlite"
    hid = sqlite3.connect(db).execute("SELECT hand_id FROM hands ORDER BY hand_id").fetchone()[0]
    copy = [
        f"CREATE TEMP TABLE t_{t} AS SELECT * FROM {t} WHERE hand_id = '{hid}'"
        for t in ("hands", "seats", "replays")
    ]
    copy += [f"UPDATE t_{t} SET hand_id = '{hid}9'" for t in ("hands", "seats", "replays")]
    copy += [f"INSERT INTO {t} SELECT * FROM t_{t}" for t in ("hands", "seats", "replays")]
    _edit(db, *copy)
    before = (run / "results.json").read_bytes()
    for args in (("report", str(run)), ("resume", str(run), "--quiet")):
        line = refused("tournament", *args)
        want = f"hand {hid}9 is not in the schedule and was stored after results.json"
        assert want in line, line
    assert (run / "results.json").read_bytes() == before
    assert cli("tournament", "verify", str(run)).returncode == 1


def test_report_and_resume_are_not_held_by_a_pipe_or_a_device_at_results_json(
    played: Path, tmp_path: Path
) -> None:
    """Comparing the database with results.json read it first: a FIFO there hung `report` and
    `resume` for ever, a link to /dev/zero read until memory ran out (an examination)."""
    for i, plant in enumerate(("fifo", "zero")):
        run = _copy(played, tmp_path / f"run{i}")
        (run / "results.json").unlink()
        if plant == "fifo":
            os.mkfifo(run / "results.json")
        else:
            (run / "results.json").symlink_to("/dev/zero")
        for args in (("report", str(run)), ("resume", str(run), "--quiet")):
            res = cli("tournament", *args, timeout=120)  # answered at once, nothing written
            assert res.returncode == 2, (plant, args, res.stderr[-1000:])
            assert "results.json is not a report this program wrote" in res.stderr, res.stderr
        (run / "results.json").unlink()
        for args in (("report", str(run)), ("resume", str(run), "--quiet")):
            res = cli("tournament", *args, timeout=120)
            assert res.returncode == 0, (plant, args, res.stderr[-1000:])
        assert (run / "results.json").is_file() and not (run / "results.json").is_symlink()
        assert cli("tournament", "verify", str(run)).returncode == 0


def test_a_bot_with_a_syntax_error_is_named_by_its_file_and_line(tmp_path: Path) -> None:
    """An examination: the one line of a bot that failed to start gave the caret, the message
    and the exit note (`^ | SyntaxError: invalid syntax | --- exited with status 1`): the file
    and the line that matter were in the log only."""
    broken = tmp_path / "broken.py"
    broken.write_text("import sys\n\n\ndef decide(x:\n    return 1\n")
    bots = [bot_entry(f"b{i}") for i in range(3)] + [
        f'[[bots]]\nname = "broken"\ncommand = ["{{python}}", "{broken}"]\n'
    ]
    cfg = write_config(tmp_path, bots, startup_timeout_s=60)
    res = cli("tournament", "run", str(cfg), "--quiet", timeout=120)
    assert res.returncode != 0
    line = next(ln for ln in res.stderr.splitlines() if "failed to start" in ln)
    assert f'File "{broken}", line 4' in line and "SyntaxError" in line, line
    assert "--- " not in line, line
