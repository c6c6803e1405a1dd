"""Session 54's examinations of the league's messages and locks: a folder inside a league was
"no league here ... start one with `uno-arena league init L/bots`", advice that `init` then
refused (it names the league's folder now); the per-author and per-name lock files of
``league submit`` piled up (11 in one league, with a ``kill -9`` mid-build): they are removed
when released, and those a killed ``submit`` left by the next one, without weakening the lock.

Ordered by what the processes print and by the locks themselves, never by sleeping."""

from __future__ import annotations

import fcntl
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.refusal import cli, refused
from uno_tournament.league.locks import key_lock
from uno_tournament.league.records import open_league
from uno_tournament.league.store import LeagueError, league_around

WAITING = "waiting: another submission of alice is being built or judged"


def _locks(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.glob(".submit.*.lock"))


def test_a_folder_inside_a_league_names_the_league(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    res = cli("league", "init", "L")
    assert res.returncode == 0, res.stderr
    (tmp_path / "L" / "bots").mkdir(exist_ok=True)
    (tmp_path / "x").mkdir()
    inside = "L/bots: a folder inside the league L, not a league; give the league's folder, L"
    assert refused("league", "status", "L/bots") == f"uno-arena: {inside}"
    # every league command opens its league so (run, report, retire, token, serve --league)
    for readonly in (False, True):
        with pytest.raises(LeagueError) as info:
            open_league(Path("L/bots"), readonly=readonly)
        assert str(info.value) == inside
    # not inside it, though its path goes through it: no league here, as before
    with pytest.raises(LeagueError) as info:
        open_league(Path("L/../x"))
    assert str(info.value) == (
        "L/../x: no league here (league.sqlite is missing); start one with "
        "`uno-arena league init L/../x`"
    )
    assert league_around(Path("L/bots/deeper")) == Path("L")
    assert league_around(tmp_path / "L" / "bots") == tmp_path / "L"


def test_key_locks_are_removed_when_released(tmp_path: Path) -> None:
    with key_lock(tmp_path, "author alice", "of alice"), key_lock(tmp_path, "name x", "of x"):
        assert len(_locks(tmp_path)) == 2
    assert _locks(tmp_path) == []


def test_a_lock_left_by_a_killed_submit_is_removed_and_a_held_one_is_kept(
    tmp_path: Path,
) -> None:
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, pathlib\n"
            "from uno_tournament.league.locks import key_lock\n"
            "with key_lock(pathlib.Path(sys.argv[1]), 'author bob', 'of bob'):\n"
            "    print('held', flush=True)\n"
            "    sys.stdin.read()\n",
            str(tmp_path),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        bob = _locks(tmp_path)
        assert len(bob) == 1
        with key_lock(tmp_path, "author alice", "of alice"):
            pass
        assert _locks(tmp_path) == bob  # held by a submission in progress: kept
        holder.kill()  # kill -9 mid-build: its lock file stays behind
        holder.wait()
        assert _locks(tmp_path) == bob
        with key_lock(tmp_path, "author carol", "of carol"):
            assert len(_locks(tmp_path)) == 1  # carol's own; bob's is gone
        assert _locks(tmp_path) == []
    finally:
        if holder.poll() is None:
            holder.kill()
        holder.wait()
        for pipe in (holder.stdin, holder.stdout):
            if pipe is not None:
                pipe.close()


def test_a_waiter_on_a_removed_lock_file_still_waits_its_turn(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The holder removes the file as it releases: the waiter, woken on the removed file,
    takes the lock on the file at the path, and while it holds it nobody else can."""
    inside = threading.Event()
    leave = threading.Event()
    errors: list[BaseException] = []

    def waiter() -> None:
        try:
            with key_lock(tmp_path, "author alice", "of alice"):
                inside.set()
                leave.wait(60)
        except BaseException as exc:
            errors.append(exc)

    with key_lock(tmp_path, "author alice", "of alice"):
        t = threading.Thread(target=waiter)
        t.start()
        seen = ""
        while WAITING not in seen:  # it is blocked on the lock now
            seen += capfd.readouterr().err
            assert t.is_alive() and not errors, errors
        assert not inside.is_set()
    assert inside.wait(60)
    (path,) = (tmp_path / name for name in _locks(tmp_path))
    with open(path, "rb") as f, pytest.raises(BlockingIOError):
        fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)  # the waiter holds it
    leave.set()
    t.join(60)
    assert not errors, errors
    assert _locks(tmp_path) == []
