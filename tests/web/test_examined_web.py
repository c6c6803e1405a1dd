"""Examined: the web view answers a bad filter as the asker's fault (HTTP 400 with the reason),
not as a server failure (502); and it never shows the seed of a running match."""

from __future__ import annotations

import aiohttp
import pytest

from tests.play.live import ADMIN, live_server
from uno_server.gen.uno.v1 import game_pb2
from uno_server.web import WebView

pytestmark = pytest.mark.asyncio
HEURISTIC = game_pb2.BUILTIN_BOT_HEURISTIC


async def test_a_label_filter_over_its_limit_is_a_bad_request() -> None:
    async with live_server(hold_at=1) as live:
        view = WebView(live.addr, ADMIN)
        await view.start()
        try:
            mid = await live.create(["gate", HEURISTIC], seed=5, labels={"t": "x"})
            await live.until_held()  # running, and held there
            base = f"http://127.0.0.1:{view.port}"
            async with aiohttp.ClientSession() as http:
                async with http.get(f"{base}/api/matches", params={"label": "k" * 70 + "=v"}) as r:
                    text = await r.text()
                    assert r.status == 400, (r.status, text)
                assert "label" in text and "64" in text, text
                async with http.get(f"{base}/api/matches?label=t=x") as r:
                    assert r.status == 200
                    [m] = (await r.json())["matches"]
            assert m["match_id"] == mid and m["state"] == "running"
            assert "seed" not in m
        finally:
            live.gate.open()
            await view.stop()
