"""A client that opens connections by the thousand and never makes a call (an examination: 19,990
connections that sent the HTTP/2 preface and nothing more) took every file descriptor of
``uno-arena serve``. gRPC then logged "File descriptor limit reached" and accepted nothing from
anyone: no bot could reconnect, no admin call got through, while the flood held. The server now
caps its connections below its descriptor limit, closes a connection whose handshake has not
finished in ``HANDSHAKE_TIMEOUT_MS``, and one with no call for ``IDLE_CONNECTION_MS``."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import IO

import grpc
import pytest
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


@pytest.mark.asyncio
async def test_streams_without_a_token_are_bounded() -> None:
    """An examination held every connection the server takes with one Health.Watch each (a
    call without a token that never ends, so the idle close never came). At most
    MAX_OPEN_STREAMS Health.Watch streams, and as many reflection streams, run at once; the
    next is refused, and one that ends makes room."""
    from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

    from uno_server.service.open_calls import MAX_OPEN_STREAMS
    from uno_server.service.server import ArenaServer, ServerConfig

    server = ArenaServer(ServerConfig(port=0, admin_token=ADMIN))
    port = await server.start()
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
            stub = health_pb2_grpc.HealthStub(ch)
            watches = [stub.Watch(health_pb2.HealthCheckRequest()) for _ in range(MAX_OPEN_STREAMS)]
            for w in watches:  # each is open: its first answer came
                assert (await w.read()).status == health_pb2.HealthCheckResponse.SERVING
            extra = stub.Watch(health_pb2.HealthCheckRequest())
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await extra.read()
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "use Health.Check" in (refused.value.details() or "")
            assert (await stub.Check(health_pb2.HealthCheckRequest())).status  # still answered
            watches[0].cancel()
            again = stub.Watch(health_pb2.HealthCheckRequest())
            while True:  # the cancelled stream's end reaches the server, then room is made
                try:
                    assert (await again.read()).status == health_pb2.HealthCheckResponse.SERVING
                    break
                except grpc.aio.AioRpcError as exc:
                    assert exc.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                    again = stub.Watch(health_pb2.HealthCheckRequest())
                    await asyncio.sleep(0.05)
            for w in (*watches, again):
                w.cancel()
            refl = reflection_pb2_grpc.ServerReflectionStub(ch)
            ask = reflection_pb2.ServerReflectionRequest(list_services="")
            streams = [refl.ServerReflectionInfo() for _ in range(MAX_OPEN_STREAMS + 1)]
            answers = []
            for s in streams:
                try:
                    await s.write(ask)
                    answers.append((await s.read()).HasField("list_services_response"))
                except grpc.aio.AioRpcError as exc:
                    answers.append(exc.code())
                except asyncio.InvalidStateError:  # refused before the request was written
                    answers.append(await s.code())
            assert answers[:MAX_OPEN_STREAMS] == [True] * MAX_OPEN_STREAMS, answers
            assert answers[-1] == grpc.StatusCode.RESOURCE_EXHAUSTED, answers[-1]
            for s in streams:
                s.cancel()
    finally:
        await server.stop(drain_timeout_s=0.2)


def test_failed_accepts_are_logged_once_in_a_while(monkeypatch: pytest.MonkeyPatch) -> None:
    """With every descriptor taken through the web view's port, asyncio logged one error and
    its traceback per connection it could not accept: 20,434 lines in 25 s (an examination)."""
    import logging

    from uno_server.service import open_calls

    now = [1000.0]
    monkeypatch.setattr("uno_server.service.open_calls.time.monotonic", lambda: now[0])
    flood = open_calls.AcceptFlood()

    def record(msg: str) -> logging.LogRecord:
        return logging.LogRecord("asyncio", logging.ERROR, __file__, 1, msg, None, None)

    accept = open_calls.ACCEPT_FAILURE + "\nexception: [Errno 24] Too many open files"
    kept = [r for r in (record(accept) for _ in range(500)) if flood.filter(r)]
    assert len(kept) == 1
    assert flood.filter(record("Task exception was never retrieved"))  # others pass
    now[0] += open_calls.ACCEPT_LOG_EVERY_S
    later = record(accept)
    assert flood.filter(later) and "(499 more like it left out)" in str(later.msg)
    open_calls.bound_accept_errors()
    open_calls.bound_accept_errors()
    installed = [
        f for f in logging.getLogger("asyncio").filters if isinstance(f, open_calls.AcceptFlood)
    ]
    assert len(installed) == 1
