"""kill -9 of a separate ``uno-arena serve`` mid-run: the runner stops with a one-line error and
stores no partial hand; ``resume`` against a new server stores every planned hand exactly once.

``faults.startup_timeout_s`` is both how long the runner waits for its bots to connect and how
long it waits for a lost server. The test keeps the second short (GRACE_S) so that the run stops
soon after the kill, so the first must not depend on how fast a busy machine starts four bot
processes: the bots are external, started by the test, and the runner starts only once the
server lists all four as connected (seen, not assumed after a sleep). Every other wait is a
liveness bound (LIVENESS_S) that only guards against a hang."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import grpc

from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc
from uno_tournament.schedule import plan

from .helpers import write_config
from .test_resume import _cli, _count

ADMIN = "admin-token-for-test"
BOTS = ["h0", "h1", "h2", "h3"]
GRACE_S = 8  # faults.startup_timeout_s: how long the runner waits for a lost server
LIVENESS_S = 300  # a hang, not a pace: a busy machine is slow


def _token(name: str) -> str:
    return f"token-of-{name}"


def _serve(log: IO[str]) -> tuple[subprocess.Popen[str], str]:
    """Start ``uno-arena serve`` on a free port with the bots' tokens; its HOST:PORT."""
    bots = [a for b in BOTS for a in ("--bot", f"{b}={_token(b)}")]
    srv = subprocess.Popen(
        _cli("serve", "--port", "0", "--admin-token", ADMIN, "--log-level", "warning", *bots),
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
    )
    assert srv.stdout is not None
    line = srv.stdout.readline().strip()  # "uno-arena: serving on 127.0.0.1:<port>"
    assert line.startswith("uno-arena: serving on "), line
    return srv, line.rsplit(" ", 1)[-1]


def _bots(addr: str, log: IO[str]) -> list[subprocess.Popen[str]]:
    """The four bots, started by the test against ``addr``; returns once the server lists every
    one of them as connected."""
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "uno_bot.examples.heuristic_bot", "--log-level", "warning"],
            env={
                **os.environ,
                "UNO_ARENA_ADDR": addr,
                "UNO_ARENA_TOKEN": _token(b),
                "UNO_ARENA_BOT_NAME": b,
            },
            stdout=log,
            stderr=log,
            text=True,
        )
        for b in BOTS
    ]
    md = (("authorization", f"Bearer {ADMIN}"),)
    deadline = time.monotonic() + LIVENESS_S
    with grpc.insecure_channel(addr) as ch:
        admin = admin_pb2_grpc.AdminServiceStub(ch)
        while True:
            res = admin.ListBots(admin_pb2.ListBotsRequest(), metadata=md, timeout=30)
            if set(BOTS) <= {b.bot_name for b in res.bots if b.connected}:
                return procs
            for p in procs:
                assert p.poll() is None, f"a bot exited with {p.returncode}"
            assert time.monotonic() < deadline, "the bots did not connect"
            time.sleep(0.1)


def _stop(proc: subprocess.Popen[str]) -> None:
    if proc.poll() is None:
        proc.kill()
    proc.communicate(timeout=10)


def test_sigkill_of_the_server_then_resume_on_a_new_server(tmp_path: Path) -> None:
    # external bots with fixed tokens in the config, registered with the server by --bot
    bots = [f'[[bots]]\nname = "{b}"\ntoken = "{_token(b)}"\n' for b in BOTS]
    cfg = write_config(tmp_path, bots, name="srvkill", blocks=2, startup_timeout_s=GRACE_S)
    out = tmp_path / "out"
    db = out / "tournament.sqlite"
    log = (tmp_path / "server.log").open("a")
    srv, addr = _serve(log)
    players = _bots(addr, log)
    run = subprocess.Popen(
        _cli("tournament", "run", str(cfg), "--server", addr, "--admin-token", ADMIN, "--quiet"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + LIVENESS_S
        while _count(db) < 20:
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "no progress"
            time.sleep(0.1)
        srv.send_signal(signal.SIGKILL)  # at an observed point: 20 or more hands stored
        srv.wait(timeout=10)
        # the runner gives the server GRACE_S to come back, then stops with one line; what it
        # stored is read once it has exited (no sleep to let a last hand land)
        stdout, stderr = run.communicate(timeout=LIVENESS_S)
        at_kill = _count(db)
    finally:
        _stop(run)
        _stop(srv)
        for p in players:
            _stop(p)
    assert run.returncode == 2, stdout + stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    assert f"lost the server {addr}" in lines[0]
    assert f"uno-arena tournament resume {out} --server" in lines[0]
    assert f"{at_kill} of 48 hands stored" in lines[0]
    assert _count(db) == at_kill < 48  # nothing stored after the server died

    srv2, addr2 = _serve(log)
    players = []
    try:
        assert addr2 != addr
        players = _bots(addr2, log)
        res = subprocess.run(
            _cli("tournament", "resume", str(out), "--server", addr2, "--admin-token", ADMIN),
            capture_output=True,
            text=True,
            timeout=LIVENESS_S,
            check=False,
        )
    finally:
        _stop(srv2)
        for p in players:
            _stop(p)
        log.close()
    assert res.returncode == 0, res.stdout + res.stderr
    assert f"48 hands ({at_kill} done;" in res.stdout
    assert f"using server {addr2}" in res.stdout

    conn = sqlite3.connect(db)
    try:
        ids = [r[0] for r in conn.execute("SELECT hand_id FROM hands")]
        tid = json.loads(
            conn.execute("SELECT value FROM meta WHERE key = 'tournament_id'").fetchone()[0]
        )
        seat_rows = conn.execute("SELECT COUNT(*) FROM seats").fetchone()[0]
    finally:
        conn.close()
    planned = {h.hand_id for h in plan(tid, BOTS, blocks=2, seed=7)}
    assert len(planned) == 48
    assert len(ids) == len(set(ids)) == 48
    assert set(ids) == planned
    assert seat_rows == 4 * 48
    replays = list((out / "replays").glob("*.json"))
    assert len(replays) == 48
    assert all(json.loads(p.read_text())["hand_id"] in planned for p in replays)
    assert (out / "results.json").is_file()
