"""``uno-arena league run`` (issue 26): the ladder plays on an embedded server, takes new
versions while it runs, survives kill -9 with no stored hand lost, finishes the hands in play on
SIGTERM, and keeps a rating history per refit.

The versions here are entered into the league's store directly (their gate is
test_league_submit's and the end-to-end test's business), so that these tests are about play.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from uno_tournament.league.cli import settings_from
from uno_tournament.league.store import LeagueStore

RUN = [
    "{python}",
    "-m",
    "uno_bot.examples.heuristic_bot",
    "--log-level",
    "warning",
    "--addr",
    "{addr}",
    "--name",
    "{name}",
]
RANDOM = [*RUN[:2], "uno_bot.examples.random_bot", *RUN[3:]]


def _enter(league: Path, name: str, version: str, author: str, run: list[str] = RUN) -> None:
    """A version as ``league submit`` records an accepted one."""
    folder = league / "bots" / name / version
    folder.mkdir(parents=True, exist_ok=True)
    store = LeagueStore.open(league)
    try:
        store.record(
            name=name,
            version=version,
            author=author,
            language="python",
            folder=str(folder),
            manifest={"run": run},
            state="active",
        )
    finally:
        store.close()


def _hands(league: Path) -> list[tuple[str, tuple[str, ...]]]:
    """(hand id, bots by seat) of every stored hand."""
    db = league / "play" / "tournament.sqlite"
    if not db.exists():
        return []
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            rows = conn.execute("SELECT hand_id, seat, bot FROM seats ORDER BY hand_id, seat")
            out: dict[str, list[str]] = {}
            for hid, _, bot in rows:
                out.setdefault(hid, []).append(bot)
            return [(h, tuple(b)) for h, b in out.items()]
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return []


def _count(league: Path) -> int:
    db = league / "play" / "tournament.sqlite"
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


def _start(league: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "uno_server.cli", "league", "run", str(league), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
    )


def _wait_for(proc: subprocess.Popen[str], what: str, cond: object, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while not cond():  # type: ignore[operator]
        if proc.poll() is not None:
            out = proc.stdout.read() if proc.stdout else ""
            raise AssertionError(f"league run exited ({proc.returncode}) before {what}:\n{out}")
        assert time.monotonic() < deadline, f"no {what} within {timeout} s"
        time.sleep(0.05)


def _new_league(tmp_path: Path) -> Path:
    league = tmp_path / "league"
    store = LeagueStore.create(league, settings_from(None))
    store.close()
    return league


def test_new_versions_join_a_running_league_which_survives_kill_9(tmp_path: Path) -> None:
    league = _new_league(tmp_path)
    for name, author in (("a", "ann"), ("b", "bob"), ("c", "cat")):
        _enter(league, name, "1", author)
    proc = _start(league, "--no-house-bots")
    try:
        # three authors cannot make a table (with no house bot to fill it): the league waits
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("waiting:"):
                assert "a table needs four versions of four authors" in line, line
                break
        assert _count(league) == 0
        second = subprocess.run(  # one league, one run
            [sys.executable, "-m", "uno_server.cli", "league", "run", str(league)],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert second.returncode == 2 and second.stderr.strip() == (
            f"uno-arena: {league}: another `league run` plays this league; stop it (Ctrl-C) first"
        )
        _enter(league, "d", "1", "dan", RANDOM)  # submitted while it runs: no restart
        _wait_for(proc, "5 stored hands", lambda: _count(league) >= 5)
        proc.send_signal(signal.SIGSTOP)  # it is the store's only writer: the count holds
        before = _hands(league)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
    assert 5 <= len(before) < 24, len(before)
    assert {b for _, bots in before for b in bots} == {"a.1", "b.2", "c.3", "d.4"}

    _enter(league, "a", "2", "ann")  # a new version while the league is down
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "uno_server.cli",
            "league",
            "run",
            str(league),
            "--hands",
            "24",
            "--no-house-bots",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
    )
    assert res.returncode == 0, res.stdout + res.stderr
    after = _hands(league)
    ids = [h for h, _ in after]
    assert len(ids) == len(set(ids)) == len(before) + 24  # every hand once, none lost
    assert set(before) <= set(after)  # the stored hands are untouched
    new = [bots for h, bots in after if (h, bots) not in set(before)]
    assert all("a.5" in bots and "a.1" not in bots for bots in new)  # a@1 retired, a@2 plays
    assert "resuming at block 1" in res.stdout
    assert "a@2 (ann) enters the ladder" in res.stdout
    assert "a@1 (ann) enters" not in res.stdout  # a retired version is not even launched

    store = LeagueStore.open(league)
    try:
        states = {v.key: v.state for v in store.versions()}
        refits = store.refits()
        history = store.history()
        repl = store.replacements()
    finally:
        store.close()
    assert states == {
        "a@1": "retired",
        "b@1": "active",
        "c@1": "active",
        "d@1": "active",
        "a@2": "active",
    }
    # a refit after each block (and none repeated on the resume), each with a row per version
    assert [n for _, _, n, _ in refits] == sorted({n for _, _, n, _ in refits})
    assert refits[-1][2] == len(after)
    for rid, _, _, _ in refits:
        rated = {vid for r, vid, *_ in history if r == rid}
        assert len(rated) >= 4, (rid, rated)
    for _, _, rating, low, high, _ in history:
        assert low < rating < high
    assert [(o, n, v) for o, n, _, v, _ in repl] == [(1, 5, "undecided yet")]


SLOW_BOT = """
import time
from uno_bot import bot

@bot(name="slow")
def decide(request):
    time.sleep(0.15)  # a hand lasts seconds: at the signal, hands are surely in play
    return request.legal_actions[-1].id

decide.main()
"""


def test_sigterm_finishes_the_hands_in_play(tmp_path: Path) -> None:
    league = _new_league(tmp_path)
    for name, author in (("a", "ann"), ("b", "bob"), ("c", "cat")):
        _enter(league, name, "1", author)
    slow = ["{python}", "slow.py", "--addr", "{addr}", "--name", "{name}"]
    _enter(league, "slow", "1", "sam", slow)
    (league / "bots" / "slow" / "1" / "slow.py").write_text(SLOW_BOT)
    proc = _start(league, "--concurrency", "4")
    try:
        _wait_for(proc, "2 stored hands", lambda: _count(league) >= 2)
        at_signal = _count(league)
        proc.send_signal(signal.SIGTERM)
        out, _ = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, out
    assert "stopping: finishing the hands in play" in out
    assert "Continue with: uno-arena league run" in out
    # the four hands in play at the signal (each takes seconds) were finished and stored; a
    # stop that dropped them would leave the count where it was
    assert at_signal + 2 <= _count(league) <= at_signal + 4, (at_signal, _count(league), out)
    store = LeagueStore.open(league)
    try:
        refits = store.refits()
    finally:
        store.close()
    assert refits and refits[-1][2] == _count(league)  # a last refit takes the last hands in


def test_a_version_that_never_connects_is_given_up_and_the_league_goes_on(
    tmp_path: Path,
) -> None:
    cfg = tmp_path / "league.toml"
    cfg.write_text("[faults]\nstartup_timeout_s = 3\n")
    league = tmp_path / "league"
    store = LeagueStore.create(league, settings_from(cfg))
    store.close()
    _enter(league, "good", "1", "ann")
    sleeper = ["{python}", "-c", "import time; print('loading...', flush=True); time.sleep(600)"]
    _enter(league, "sleepy", "1", "bob", sleeper)
    res = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "league", "run", str(league), "--hands", "24"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, "GRPC_VERBOSITY": "ERROR"},
    )
    assert res.returncode == 0, res.stdout + res.stderr
    hands = _hands(league)
    assert len(hands) == 24
    assert all("good.1" in bots and "sleepy.2" not in bots for _, bots in hands)
    store = LeagueStore.open(league)
    try:
        states = {v.key: (v.state, v.reason) for v in store.versions()}
    finally:
        store.close()
    assert states["good@1"] == ("active", "")
    state, reason = states["sleepy@1"]
    assert state == "retired" and reason.startswith("given up: did not connect within 3 s")
    assert "loading..." in reason  # the log's tail says what the bot was doing


def test_bad_run_arguments_are_one_line_and_exit_2(tmp_path: Path) -> None:
    league = _new_league(tmp_path)
    for args, message in (
        (["--hands", "0"], "argument --hands: must be from 1 to 100000000, got 0"),
        (["--tables", "65"], "argument --tables: must be from 1 to 64, got 65"),
        (["--concurrency", "x"], "argument --concurrency: must be a whole number, got 'x'"),
        (["--until", "forever"], "argument --until: invalid choice: 'forever'"),
    ):
        res = subprocess.run(
            [sys.executable, "-m", "uno_server.cli", "league", "run", str(league), *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        assert res.returncode == 2 and message in res.stderr, res.stderr
        # one plain line, as the league's other errors: argparse printed its usage block above
        assert res.stderr.count("\n") == 1 and "usage:" not in res.stderr, res.stderr
        assert "`uno-arena league run --help` lists the options" in res.stderr
    res = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", "league", "run", str(tmp_path / "none")],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert res.returncode == 2
    assert res.stderr.startswith(f"uno-arena: {tmp_path / 'none'}: no league here")
    assert len(res.stderr.strip().splitlines()) == 1
