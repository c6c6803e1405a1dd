"""kill -9 of the runner mid-run, then resume: every planned hand is stored exactly once."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from uno_tournament.schedule import plan

from .helpers import bot_entry, write_config


def _count(db: Path) -> int:
    if not db.exists():
        return 0
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            return int(conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0])
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return 0


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "uno_server.cli", *args]


def kill_at_observed_point(
    proc: subprocess.Popen[str], db: Path, at_least: int, total: int, timeout: float = 120
) -> int:
    """kill -9 the runner at a point the test has seen: poll the store's stored-hand count until
    it reaches ``at_least``, freeze the runner (SIGSTOP: it is the store's only writer, so the
    count cannot move any more), read the count, and kill it. Returns the count, which is then
    certain to be the count at the kill and below ``total`` (the test fails otherwise, saying
    so, instead of killing a finished run)."""
    deadline = time.monotonic() + timeout
    while _count(db) < at_least:
        assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
        assert time.monotonic() < deadline, f"fewer than {at_least} hands stored in {timeout} s"
        time.sleep(0.05)
    proc.send_signal(signal.SIGSTOP)
    stored = _count(db)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert 0 < stored < total, f"the run stored {stored} of {total} hands before the kill"
    return stored


def test_sigkill_of_the_runner_then_resume_loses_and_repeats_nothing(tmp_path: Path) -> None:
    bots = [bot_entry(f"h{i}") for i in range(3)] + [
        bot_entry(f"r{i}", "uno_bot.examples.random_bot") for i in range(2)
    ]
    cfg = write_config(tmp_path, bots, name="kill", concurrency=6)
    out = tmp_path / "out"
    db = out / "tournament.sqlite"
    proc = subprocess.Popen(
        _cli("tournament", "run", str(cfg), "--quiet"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 60
        while _count(db) < 1:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "no progress"
            time.sleep(0.05)
        children = subprocess.run(
            ["pgrep", "-P", str(proc.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
        stored = kill_at_observed_point(proc, db, 20, 120)
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=10)
    assert _count(db) == stored
    # the bot processes follow the runner (PR_SET_PDEATHSIG) instead of lingering
    deadline = time.monotonic() + 10
    while any(_alive(int(p)) for p in children) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(int(p)) for p in children)

    res = subprocess.run(
        _cli("tournament", "resume", str(out), "--quiet"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"120 hands ({stored} done;" in res.stdout
    conn = sqlite3.connect(db)
    ids = [r[0] for r in conn.execute("SELECT hand_id FROM hands")]
    tid = conn.execute("SELECT value FROM meta WHERE key = 'tournament_id'").fetchone()[0]
    seat_rows = conn.execute("SELECT COUNT(*) FROM seats").fetchone()[0]
    conn.close()
    planned = plan(tid.strip('"'), ["h0", "h1", "h2", "r0", "r1"], blocks=1, seed=7)
    assert len(ids) == len(set(ids)) == 120
    assert set(ids) == {h.hand_id for h in planned}
    assert seat_rows == 4 * 120
    assert len(list((out / "replays").glob("*.json"))) == 120
    assert (out / "results.json").is_file()


def test_ctrl_c_stops_cleanly_and_prints_how_to_resume(tmp_path: Path) -> None:
    cfg = write_config(tmp_path, [bot_entry(f"b{i}") for i in range(5)], name="int")
    out = tmp_path / "out"
    proc = subprocess.Popen(
        _cli("tournament", "run", str(cfg), "--quiet"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while _count(out / "tournament.sqlite") < 5:
        assert proc.poll() is None and time.monotonic() < deadline
        time.sleep(0.1)
    proc.send_signal(signal.SIGINT)
    stdout, _ = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert f"uno-arena tournament resume {out}" in stdout


_FITTER_START = """
import multiprocessing, sys
from uno_tournament import runner
class Parent:
    pid = int(sys.argv[1])
multiprocessing.parent_process = lambda: Parent()
runner._fitter_init()
print("refitting")
"""


@pytest.mark.parametrize("runner_alive", [True, False])
def test_a_refit_process_whose_runner_died_while_it_started_exits(runner_alive: bool) -> None:
    """kill -9 of the runner while its refit process is still starting (before the death
    signal is armed) must not leave that process behind, holding the runner's stdout."""
    parent = os.getpid() if runner_alive else 0  # 0: this process's parent is someone else
    res = subprocess.run(
        [sys.executable, "-c", _FITTER_START, str(parent)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if runner_alive:
        assert (res.returncode, res.stdout) == (0, "refitting\n"), res.stderr
    else:
        assert (res.returncode, res.stdout) == (1, ""), res.stderr


@pytest.mark.parametrize("runner_alive", [True, False])
def test_a_launched_process_whose_runner_died_while_it_started_exits(
    runner_alive: bool, tmp_path: Path
) -> None:
    """The same for the bots, servers and shard workers the runner launches: a launch whose
    runner is already gone does not start the program."""
    from uno_tournament.procs import launcher

    cmd = launcher(str(tmp_path))
    if not runner_alive:
        cmd[cmd.index(str(os.getpid()))] = "0"  # this process's parent is someone else
    res = subprocess.run(
        [*cmd, sys.executable, "-c", "import os; print(os.getcwd())"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if runner_alive:
        assert (res.returncode, res.stdout) == (0, f"{tmp_path}\n"), res.stderr
    else:
        assert (res.returncode, res.stdout) == (1, ""), res.stderr


def test_a_second_resume_of_one_folder_is_refused_in_one_line(tmp_path: Path) -> None:
    """Two ``resume``s of one folder: the second is refused in one line (exit 2), naming the
    process that plays the folder, as a second ``run`` is; the lock dies with its process, so a
    resume after a kill -9 is not refused."""
    cfg = write_config(tmp_path, [bot_entry(f"b{i}") for i in range(5)], name="lock")
    out = tmp_path / "out"
    db = out / "tournament.sqlite"
    first = subprocess.run(
        _cli("tournament", "run", str(cfg), "--quiet", "--max-hands", "2"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert first.returncode == 0 and _count(db) == 2, first.stdout + first.stderr
    a = subprocess.Popen(
        _cli("tournament", "resume", str(out), "--quiet"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while _count(db) < 3:  # the first resume is playing: seen in the store
            assert a.poll() is None, a.stdout.read() if a.stdout else ""
            assert time.monotonic() < deadline, "the first resume stored nothing"
            time.sleep(0.05)
        # the first resume is held (it keeps its lock) while the others try: two process
        # start-ups on a busy machine can outlast the rest of its run
        a.send_signal(signal.SIGSTOP)
        b = subprocess.run(
            _cli("tournament", "resume", str(out), "--quiet", "--max-hands", "1"),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert a.poll() is None
        assert b.returncode == 2, b.stdout + b.stderr
        lines = b.stderr.strip().splitlines()
        assert len(lines) == 1, b.stderr
        assert f"{out} is being played by process {a.pid}" in lines[0]
        assert f"uno-arena tournament resume {out}" in lines[0]
        assert b.stdout == ""  # it started nothing
        again = subprocess.run(  # a second run of the folder: the same line
            _cli("tournament", "run", str(cfg), "--quiet"),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert again.returncode == 2 and f"process {a.pid}" in again.stderr, again.stderr
        a.send_signal(signal.SIGCONT)
        stored = kill_at_observed_point(a, db, 4, 120)
    finally:
        if a.poll() is None:
            a.kill()
        a.communicate(timeout=30)
    c = subprocess.run(
        _cli("tournament", "resume", str(out), "--quiet", "--max-hands", "1"),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert c.returncode == 0, c.stdout + c.stderr
    assert f"120 hands ({stored} done;" in c.stdout
    assert _count(db) == stored + 1
