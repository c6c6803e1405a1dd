"""The game server's connections are one budget for every bot (session 53).

An examination's bot opened 19,700 connections to the server's socket through its 8 processes,
the server's whole cap (the file descriptor limit), and kept reopening the ones the server
closed when idle; other authors' bots timed out meanwhile. The keeper counts a confined bot's
connected sockets in its own network namespace and stops it above
:data:`uno_tournament.sandbox.CONNECTIONS_MAX`, naming the limit.

The bots here connect to a listening Unix socket in their own (read-only) folder, as a bot
reaches the server's socket; a bot that holds a few connections runs to its end."""

from __future__ import annotations

import json
import socket
import sys
import threading
from pathlib import Path

from uno_tournament import sandbox
from uno_tournament.config import BotSpec
from uno_tournament.sandbox_keeper import connected_sockets

from .test_sandbox import _keeper_run, _need_sandbox

HOG = """
import socket, sys, time
held = []
for i in range(N):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(SOCK)
    held.append(s)
print("connected", len(held), flush=True)
time.sleep(WAIT)
print("survived", flush=True)
"""


def _listen(path: Path) -> socket.socket:
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen(512)
    accepted: list[socket.socket] = []

    def accept() -> None:
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            accepted.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    return srv


def _bot(tmp_path: Path, n: int, wait: float) -> tuple[str, dict[str, object]]:
    sock = tmp_path / "srv.sock"
    code = f"N = {n}\nSOCK = {str(sock)!r}\nWAIT = {wait}\n" + HOG
    spec = BotSpec(name="hog", command=("python3",), cwd=str(tmp_path))
    argv = sandbox.build_argv(sandbox.probe().bwrap, spec, [sys.executable, "-I", "-S", "-c", code])
    names = sandbox.limit_names(spec.sandbox, watchdog=False)
    log = _keeper_run(tmp_path, argv, sockets_max=sandbox.CONNECTIONS_MAX, names=names)
    status = json.loads((tmp_path / "k.status").read_text())
    return log, status


def test_a_bot_holding_more_connections_than_its_share_is_stopped(tmp_path: Path) -> None:
    _need_sandbox()
    srv = _listen(tmp_path / "srv.sock")
    try:
        n = sandbox.CONNECTIONS_MAX + 40
        log, status = _bot(tmp_path, n, wait=90)  # stopped long before the 90 s are out
        assert f"connected {n}" in log, log
        assert "survived" not in log, log
        want = f"connection limit {sandbox.CONNECTIONS_MAX} (connected sockets)"
        assert status["limit"] == want, status
        assert f"{want} reached: the bot is stopped" in log, log
    finally:
        srv.close()


def test_a_bot_with_a_few_connections_runs_to_its_end(tmp_path: Path) -> None:
    _need_sandbox()
    srv = _listen(tmp_path / "srv.sock")
    try:
        log, status = _bot(tmp_path, 8, wait=1.0)  # four polls of the keeper, at least
        assert "connected 8" in log and "survived" in log, log
        assert status == {"code": 0, "limit": "", "stopped": False}, status
    finally:
        srv.close()


def test_an_unreadable_count_is_not_taken_for_zero() -> None:
    assert connected_sockets(2**22 + 7) == -1  # no such process
