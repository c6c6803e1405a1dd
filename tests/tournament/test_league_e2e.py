"""Issue 26's proof, reduced but real: a league on an embedded server.

1. three bots are submitted at once: one in Go, one in Python, and a broken one that the gate
   refuses with its reason;
2. play starts (house bots fill the seats two versions cannot);
3. a fourth bot and a new version of the Python bot are submitted while it runs;
4. it is killed with kill -9 at a point the test has seen, and resumed;
5. at the end the store holds every hand once, the history has an entry per refit, the old
   version is retired with its verdict, and the report shows it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from tests.clients.langs import ready
from uno_tournament.league.ratings import server_name
from uno_tournament.league.store import LeagueStore

SDK = ["--addr", "{addr}", "--name", "{name}"]
PY = ["{python}", "-m", "uno_bot.examples.heuristic_bot", "--log-level", "warning", *SDK]
RANDOM = ["{python}", "-m", "uno_bot.examples.random_bot", "--log-level", "warning", *SDK]
ENV = {**os.environ, "GRPC_VERBOSITY": "ERROR"}


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "uno_server.cli", "league", *args]


def _bot(folder: Path, **fields: object) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "bot.toml").write_text("".join(f"{k} = {json.dumps(v)}\n" for k, v in fields.items()))
    return folder


def _submit_all(league: Path, *folders: Path) -> list[subprocess.CompletedProcess[str]]:
    """Submit bot folders at once (each gate is a short tournament of its own)."""
    procs = [
        subprocess.Popen(
            _cli("submit", str(league), str(f)),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        for f in folders
    ]
    out = []
    for p in procs:
        stdout, stderr = p.communicate(timeout=600)
        out.append(subprocess.CompletedProcess(p.args, p.returncode, stdout, stderr))
    return out


def _seats(league: Path) -> dict[str, tuple[str, ...]]:
    db = league / "play" / "tournament.sqlite"
    if not db.exists():
        return {}
    try:
        conn = sqlite3.connect(db, timeout=5)
        try:
            out: dict[str, list[str]] = {}
            for hid, bot in conn.execute("SELECT hand_id, bot FROM seats ORDER BY hand_id, seat"):
                out.setdefault(hid, []).append(bot)
            return {h: tuple(b) for h, b in out.items()}
        finally:
            conn.close()
    except sqlite3.OperationalError:
        return {}


def _versions(league: Path) -> dict[str, tuple[str, str, str]]:
    """key -> (state, reason, server name)."""
    store = LeagueStore.open(league)
    try:
        return {v.key: (v.state, v.reason, server_name(v)) for v in store.versions()}
    finally:
        store.close()


def test_a_league_from_submissions_to_report(tmp_path: Path) -> None:
    t0 = time.monotonic()
    go = ready("go")
    league = tmp_path / "league"
    res = subprocess.run(
        _cli("init", str(league)), check=False, capture_output=True, text=True, env=ENV
    )
    assert res.returncode == 0, res.stderr

    gofolder = tmp_path / "gopher"
    gofolder.mkdir()
    shutil.copy2(go.folder / "bin" / "heuristic-bot", gofolder / "heuristic-bot")
    _bot(gofolder, name="gopher", version="1.0", author="alice", language="go",
         run=["./heuristic-bot", *SDK])  # fmt: skip
    snake = _bot(tmp_path / "snake", name="snake", version="1", author="bob", language="python",
                 run=PY)  # fmt: skip
    crash = ["{python}", "-c", "print('cannot load model weights'); raise SystemExit(3)"]
    broken = _bot(tmp_path / "broken", name="broken", version="0.1", author="carol", run=crash)

    # 1. three submissions; the broken one is refused with its reason
    r_go, r_py, r_broken = _submit_all(league, gofolder, snake, broken)
    assert r_go.returncode == 0, r_go.stdout + r_go.stderr
    assert r_go.stdout.startswith("gopher@1.0: accepted (gate passed: 24 hands")
    assert r_py.returncode == 0, r_py.stdout + r_py.stderr
    assert r_broken.returncode == 1, r_broken.stdout + r_broken.stderr
    assert "broken@0.1: refused" in r_broken.stdout
    assert "cannot load model weights" in r_broken.stdout
    names = {k: v[2] for k, v in _versions(league).items()}

    # 2. play starts
    proc = subprocess.Popen(  # 1 hand at a time: the gates of step 3 get the CPU
        _cli("run", str(league), "--concurrency", "1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env=ENV,
    )
    try:
        deadline = time.monotonic() + 120
        while not _seats(league):
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "no hand stored in 120 s"
            time.sleep(0.1)
        first = next(iter(_seats(league).values()))
        assert {names["gopher@1.0"], names["snake@1"]} <= set(first)

        # 3. a fourth bot and a new version, submitted while the league plays
        dice = _bot(tmp_path / "dice", name="dice", version="1", author="dave", run=RANDOM)
        (snake / "bot.toml").write_text((snake / "bot.toml").read_text().replace('"1"', '"2"'))
        r_dice, r_snake2 = _submit_all(league, dice, snake)
        assert r_dice.returncode == 0, r_dice.stdout + r_dice.stderr
        assert r_snake2.returncode == 0 and "retired snake@1" in r_snake2.stdout, r_snake2.stdout
        names = {k: v[2] for k, v in _versions(league).items()}
        newcomers = {names["dice@1"], names["snake@2"]}

        # 4. kill -9 once both newcomers have stored hands (seen by the test), then resume
        deadline = time.monotonic() + 120
        while not all(any(n in s for s in _seats(league).values()) for n in newcomers):
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "the new versions did not play within 120 s"
            time.sleep(0.1)
        proc.send_signal(signal.SIGSTOP)  # the store's only writer holds still
        before = _seats(league)
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        assert proc.stdout is not None
        proc.stdout.close()
    old_hands = [h for h, s in before.items() if names["snake@1"] in s]
    assert old_hands and all(names["snake@2"] not in before[h] for h in old_hands)

    res = subprocess.run(
        _cli("run", str(league), "--hands", "12"),
        check=False,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=300,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    after = _seats(league)

    # 5. every hand once, none lost; the retired version no longer plays
    assert len(after) == len(before) + 12
    assert all(after[h] == s for h, s in before.items())
    assert all(names["snake@1"] not in s for h, s in after.items() if h not in before)
    versions = _versions(league)
    assert versions["snake@1"][:2] == ("retired", "replaced by snake@2")
    assert versions["broken@0.1"][0] == "refused"
    store = LeagueStore.open(league)
    try:
        refits = store.refits()
        history = store.history()
        repl = store.replacements()
    finally:
        store.close()
    assert len(refits) >= 2 and refits[-1][2] == len(after)
    ids = {k: int(v[2].rsplit(".", 1)[1]) for k, v in versions.items()}
    old_rows = [r for r in history if r[1] == ids["snake@1"]]
    assert [r[0] for r in old_rows] == [r[0] for r in refits]  # an entry per refit
    assert [(o, n) for o, n, *_ in repl] == [(ids["snake@1"], ids["snake@2"])]
    verdict, test = repl[0][3], repl[0][4]
    assert verdict in ("better", "not better", "undecided yet")
    assert test["candidate"] == names["snake@2"] and test["baseline"] == names["snake@1"]

    res = subprocess.run(
        _cli("report", str(league)), check=False, capture_output=True, text=True, env=ENV
    )
    assert res.returncode == 0, res.stderr
    md = (league / "report" / "league.md").read_text()
    assert "| snake@1 | bob | retired |" in md and f"replaced by snake@2: {verdict}" in md
    assert "broken@0.1 (carol): " in md and "cannot load model weights" in md
    page = (league / "report" / "league.html").read_text()
    for key in ("gopher@1.0", "snake@1", "snake@2", "dice@1"):
        assert f"data-version='{key}'" in page
    print(f"\nleague end-to-end: {len(after)} hands, {len(refits)} refits, "
          f"{time.monotonic() - t0:.0f} s")  # fmt: skip
