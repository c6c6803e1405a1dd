"""The web view's HTTP side against a live server: the list of matches, the pages, and a table's
event stream, joined in the middle of a hand and followed to the reveal. Every message is
checked against the engine's truth. Also ``uno-arena serve --web-port`` as a process."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator

import aiohttp
import pytest
import pytest_asyncio

from tests.play.live import ADMIN, Live, live_server
from uno_server.gen.uno.v1 import game_pb2
from uno_server.web import WebView

from .sse import cards_in, check_state, sse

pytestmark = pytest.mark.asyncio
HEURISTIC = game_pb2.BUILTIN_BOT_HEURISTIC
RANDOM = game_pb2.BUILTIN_BOT_RANDOM


@pytest_asyncio.fixture
async def held() -> AsyncIterator[tuple[Live, WebView]]:
    async with live_server(hold_at=4, delay=0.02) as live:
        view = WebView(live.addr, ADMIN)
        await view.start()
        try:
            yield live, view
        finally:
            await view.stop()


async def test_list_pages_and_a_table_followed_to_the_reveal(held: tuple[Live, WebView]) -> None:
    live, view = held
    mid = await live.create(["gate", HEURISTIC, RANDOM, HEURISTIC], seed=11, labels={"t": "x"})
    await live.until_held()
    table = live.table(mid)
    base = f"http://127.0.0.1:{view.port}"
    async with aiohttp.ClientSession() as http:
        async with http.get(f"{base}/api/matches") as res:
            data = await res.json()
        [m] = data["matches"]
        assert m["match_id"] == mid and m["state"] == "running" and m["labels"] == {"t": "x"}
        assert m["seats"] == ["gate", "heuristic #1", "random", "heuristic #3"]  # as screens
        async with http.get(f"{base}/api/matches?label=t=y") as res:
            assert (await res.json())["matches"] == []
        async with http.get(f"{base}/") as res:
            assert res.status == 200 and "UNO Arena" in await res.text()
        for name in ("app.js", "style.css"):
            async with http.get(f"{base}/static/{name}") as res:
                assert res.status == 200 and len(await res.read()) > 500
        async with http.get(f"{base}/static/server.py") as res:
            assert res.status == 404

        states = []
        async with http.get(f"{base}/api/matches/{mid}/events") as res:
            assert res.headers["Content-Type"].startswith("text/event-stream")
            events = sse(res)
            kind, first = await anext(events)
            assert kind == "state"
            # joined mid-hand: the counts are the engine's, and the hand is hidden
            hand = table.match.hand
            assert [s["cards"] for s in first["seats"]] == [len(h) for h in hand.hands]
            assert first["top"]["code"] == hand.discard[-1]
            assert first["current"] == hand.current
            check_state(first, table)
            live.gate.open()
            async for kind, data in events:
                if kind == "end":
                    break
                assert kind == "state"
                states.append(data)
                check_state(data, table)
        last = states[-1]
        assert last["ended"] and last["match_over"] and last["phase"] == "over"
        for s in last["seats"]:
            assert sorted(c["code"] for c in s["revealed"]) == sorted(hand.hands[s["seat"]])
        assert sum(len(cards_in(s)) for s in states) > 20
        assert len(states) >= 10

        # an unknown match: refused before any stream starts (tests/web/test_web_streams.py)
        async with http.get(f"{base}/api/matches/nope/events") as res:
            assert res.status == 404 and "no match 'nope'" in await res.text()


async def test_serve_with_web_port() -> None:
    env = {**os.environ, "UNO_ARENA_ADMIN_TOKEN": "admin-web-process"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "uno_server.cli", "serve", "--port", "0", "--web-port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    try:
        assert proc.stdout is not None
        web = ""
        for _ in range(10):
            line = await asyncio.wait_for(asyncio.to_thread(proc.stdout.readline), 30)
            if match := re.search(r"web view on (http://\S+)/", line):
                web = match.group(1)
                break
        assert web, "serve did not print the web view's address"
        async with aiohttp.ClientSession() as http:
            async with http.get(f"{web}/healthz") as res:
                assert res.status == 200
            async with http.get(f"{web}/api/matches") as res:
                assert (await res.json()) == {"matches": []}
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        if proc.stdout is not None:
            proc.stdout.close()
    assert proc.returncode == 0


async def test_bad_web_port_is_one_line() -> None:
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            "uno_server.cli",
            "serve",
            "--admin-token",
            "admin-123456",
            "--web-port",
            "70000",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert res.returncode == 2
    assert res.stderr.strip() == "uno-arena: --web-port: must be 0-65535, got 70000"
