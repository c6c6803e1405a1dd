"""The HTTP pages beside a game server take a bounded number of connections (session 52).

The web view's and the metrics pages' ports had no cap of their own: silent connections to
them, opened by the thousand, took the descriptors of the process whose gRPC server bots
reach. Now the web view holds at most ``WEB_CONNECTIONS`` and a metrics page
``METRICS_CONNECTIONS`` at once; the next is answered 503 and closed, a silent one is closed
after ``SILENT_SECONDS``, and once they go the page serves again."""

from __future__ import annotations

import asyncio
import socket
import time

import pytest
from prometheus_client import CollectorRegistry, Counter

from tests.play.live import ADMIN, live_server
from uno_server.gen.uno.v1 import game_pb2
from uno_server.web import WebView, guard

HEURISTIC = game_pb2.BUILTIN_BOT_HEURISTIC


async def _silent(port: int, n: int) -> list[asyncio.StreamWriter]:
    out = []
    for _ in range(n):
        _reader, writer = await asyncio.open_connection("127.0.0.1", port)
        out.append(writer)
    return out


async def _answer(port: int) -> bytes:
    """What one more connection is told, asking for /healthz."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
    await writer.drain()
    data = await asyncio.wait_for(reader.read(), 60)
    writer.close()
    return data


@pytest.mark.asyncio
async def test_the_web_view_refuses_connections_over_its_cap_and_the_game_goes_on() -> None:
    async with live_server() as live:
        view = WebView(live.addr, ADMIN)
        await view.start()
        try:
            held = await _silent(view.port, guard.WEB_CONNECTIONS)
            server = view._runner.server if view._runner is not None else None
            assert isinstance(server, guard._CappedServer)
            for _ in range(6000):  # until the server has accepted them all (its own count)
                if server.open == guard.WEB_CONNECTIONS:
                    break
                await asyncio.sleep(0.02)
            assert server.open == guard.WEB_CONNECTIONS
            refused = await _answer(view.port)
            assert refused.startswith(b"HTTP/1.1 503"), refused
            assert b"too many connections to this port" in refused
            # the game server is not short of anything: a match is created and played
            mid = await live.create([HEURISTIC, HEURISTIC], seed=3)
            assert mid
            for w in held:
                w.close()
            ok = b""
            for _ in range(2400):  # until the closed ones are counted out
                ok = await _answer(view.port)
                if ok.startswith(b"HTTP/1.1 200"):
                    break
                await asyncio.sleep(0.05)
            assert ok.startswith(b"HTTP/1.1 200") and ok.endswith(b"ok\n"), ok
        finally:
            await view.stop()


@pytest.mark.asyncio
async def test_a_silent_connection_to_the_web_view_is_closed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(guard, "SILENT_SECONDS", 0.5)
    async with live_server() as live:
        view = WebView(live.addr, ADMIN)
        await view.start()
        try:
            reader, writer = await asyncio.open_connection("127.0.0.1", view.port)
            # closed by the server, not by us: the read ends (EOF) with nothing sent
            assert await asyncio.wait_for(reader.read(), 30) == b""  # aiohttp alone: 75 s
            writer.close()
        finally:
            await view.stop()


def _scrape(port: int) -> bytes:
    with socket.create_connection(("127.0.0.1", port), timeout=60) as s:
        s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks)


def test_a_metrics_page_refuses_connections_over_its_cap() -> None:
    registry = CollectorRegistry()
    Counter("uno_cap_probe", "a probe", registry=registry).inc(7)
    httpd = guard.start_metrics_server(0, "127.0.0.1", registry)
    port = int(httpd.server_address[1])
    try:
        assert b"uno_cap_probe_total 7.0" in _scrape(port)
        held = [
            socket.create_connection(("127.0.0.1", port), timeout=60)
            for _ in range(guard.METRICS_CONNECTIONS)
        ]
        refused = b""
        for _ in range(2400):  # until the server has accepted them all
            refused = _scrape(port)
            if refused.startswith(b"HTTP/1.1 503"):
                break
            time.sleep(0.05)
        assert refused.startswith(b"HTTP/1.1 503"), refused
        assert b"too many connections to this port" in refused
        for s in held:
            s.close()
        page = b""
        for _ in range(2400):  # until the closed ones are counted out
            page = _scrape(port)
            if b"uno_cap_probe_total 7.0" in page:
                break
            time.sleep(0.05)
        assert b"uno_cap_probe_total 7.0" in page, page[:200]
    finally:
        httpd.shutdown()
        httpd.server_close()


def test_a_silent_connection_to_a_metrics_page_is_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(guard, "SILENT_SECONDS", 0.5)
    httpd = guard.start_metrics_server(0, "127.0.0.1", CollectorRegistry())
    try:
        with socket.create_connection(("127.0.0.1", int(httpd.server_address[1])), 120) as s:
            assert s.recv(1) == b""  # closed by the server, with nothing sent
    finally:
        httpd.shutdown()
        httpd.server_close()
