"""A client that opens connections by the thousand and never makes a call (an examination: 19,990
connections that sent the HTTP/2 preface and nothing more) took every file descriptor of
``uno-arena serve``. gRPC then logged "File descriptor limit reached" and accepted nothing from
anyone: no bot could reconnect, no admin call got through, while the flood held. The server now
caps its connections below its descriptor limit, closes a connection whose handshake has not
finished in ``HANDSHAKE_TIMEOUT_MS``, and one with no call for ``IDLE_CONNECTION_MS``."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from uno_server.service import server as server_mod

ADMIN = "admin-token-for-the-flood"
NOFILE = 400
FLOOD = 600
PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
HUNG_S = 180.0


LIMITED = (
    "import resource, runpy, sys\n"
    f"resource.setrlimit(resource.RLIMIT_NOFILE, ({NOFILE}, {NOFILE}))\n"
    "sys.argv = ['uno-arena', *sys.argv[1:]]\n"
    "runpy.run_module('uno_server.cli', run_name='__main__')\n"
)
"""``uno-arena serve`` with a small descriptor limit (set in the process itself)."""


def _serve(err: IO[str]) -> tuple[subprocess.Popen[str], int]:
    srv = subprocess.Popen(
        [sys.executable, "-c", LIMITED, "serve", "--port", "0", "--admin-token", ADMIN],
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
    )
    assert srv.stdout is not None
    line = srv.stdout.readline().strip()
    assert line.startswith("uno-arena: serving on "), line
    return srv, int(line.rsplit(":", 1)[-1].split()[0])


def _check(port: int) -> str:
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        try:
            health_pb2_grpc.HealthStub(ch).Check(health_pb2.HealthCheckRequest(), timeout=5)
        except grpc.RpcError as exc:
            return str(exc.code())
    return "ok"


def _read(sock: socket.socket) -> str:
    """``"data"``: the server spoke on it (took it: its HTTP/2 settings); ``"closed"``; or
    ``""``: nothing yet."""
    try:
        return "data" if sock.recv(65536) else "closed"
    except BlockingIOError:
        return ""
    except OSError:
        return "closed"


def test_a_flood_of_silent_connections_leaves_the_server_working(tmp_path: Path) -> None:
    assert server_mod.HANDSHAKE_TIMEOUT_MS <= 10_000
    err = tmp_path / "server.err"
    with err.open("w") as out:
        _flood(out)
    log = err.read_text()
    assert "File descriptor limit reached" not in log, log[-2000:]
    assert "Too many open files" not in log, log[-2000:]


def _flood(err: IO[str]) -> None:
    srv, port = _serve(err)
    flood: list[socket.socket] = []
    try:
        for _ in range(FLOOD):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.setblocking(False)
            try:
                s.connect(("127.0.0.1", port))
            except BlockingIOError:
                pass
            flood.append(s)
        time.sleep(0.5)
        for s in flood:
            try:
                s.send(PREFACE)
            except OSError:
                pass
        # the cap: the server keeps descriptors of its own, and refuses the surplus at once
        fds = len(os.listdir(f"/proc/{srv.pid}/fd"))
        assert fds <= NOFILE - server_mod.FD_RESERVE // 2, fds
        # the handshake timeout: the server cuts the silent connections it took while the
        # flood still holds every socket open, and then serves a real client
        # (gRPC's own defaults cut them after 60-120 s; the bound is 5 times the handshake's)
        cut = time.monotonic() + 5 * server_mod.HANDSHAKE_TIMEOUT_MS / 1000
        taken: set[int] = set()  # the connections the server took (the cap refuses the rest)
        while True:
            states = [_read(s) for s in flood]
            taken |= {i for i, st in enumerate(states) if st == "data"}
            if any(states[i] == "closed" for i in taken):
                break
            assert time.monotonic() < cut, f"the server cut none of {len(taken)} it took"
            time.sleep(0.5)
        end = time.monotonic() + HUNG_S
        answer = _check(port)
        while answer != "ok":
            assert time.monotonic() < end, f"a real client was never served: {answer}"
            time.sleep(0.5)
            answer = _check(port)
        assert srv.poll() is None
    finally:
        for s in flood:
            s.close()
        srv.terminate()
        srv.wait(timeout=30)
        assert srv.stdout is not None
        srv.stdout.close()
