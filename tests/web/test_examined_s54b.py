"""Examined (session 54, second round): the web view's page.

* A match page for the ids ``.`` and ``..`` (``#/match/..``, ``#/match/%2E%2E``) showed a bare
  "404: Not Found": a browser drops the path segments ``.`` and ``..`` from a URL, even written
  ``%2E`` (the URL standard's "double-dot segment"), so the page asked ``/api/events`` or
  ``/api/matches/events``. The page asks ``/api/events?match=ID`` for those ids, and the
  endpoint answers its own message.
* The list page said a refused filter (HTTP 400, ``/?label=x``) was "server unreachable": only
  a network failure or a 5xx is; a 4xx says the server's reason.
"""

from __future__ import annotations

import aiohttp
import pytest

from tests.play.live import ADMIN, live_server
from uno_server.web import WebView

from .cdp import chromium, need_chromium

pytestmark = pytest.mark.asyncio


@pytest.fixture
def browser() -> None:
    need_chromium()  # skipped without Chromium, failed under CI=true


PROBLEM = "document.querySelector('#main .problem')?.textContent || ''"


async def test_the_query_form_of_the_event_stream_answers_for_dot_ids() -> None:
    async with live_server() as live:
        view = WebView(live.addr, ADMIN)
        await view.start()
        try:
            base = f"http://127.0.0.1:{view.port}"
            said = {}
            async with aiohttp.ClientSession() as http:
                for mid in (".", "..", "m999999-nothere"):
                    async with http.get(f"{base}/api/events", params={"match": mid}) as res:
                        said[mid] = (res.status, await res.text())
                async with http.get(f"{base}/api/events") as res:
                    said[""] = (res.status, await res.text())
        finally:
            await view.stop()
    for mid in (".", "..", "m999999-nothere"):
        status, text = said[mid]
        assert status == 404 and text.startswith(f"no match {mid!r}: unknown"), (mid, said[mid])
    assert said[""][0] == 400 and "1-64 printable ASCII" in said[""][1], said[""]


@pytest.mark.usefixtures("browser")
@pytest.mark.parametrize("link", ["..", "%2E%2E", ".", "%2E"])
async def test_a_match_page_for_a_dot_id_says_the_servers_answer(link: str) -> None:
    mid = "." * link.count(".") + "." * link.count("%2E")
    async with live_server() as live:
        view = WebView(live.addr, ADMIN)
        await view.start()
        try:
            base = f"http://127.0.0.1:{view.port}"
            async with chromium() as page:
                await page.goto(f"{base}/#/match/{link}")
                said = await page.wait_for(PROBLEM)
        finally:
            await view.stop()
    assert said.startswith(f"no match {mid!r}: unknown"), said
    assert "404" not in said, said


@pytest.mark.usefixtures("browser")
async def test_a_refused_filter_is_said_with_its_reason_not_as_unreachable() -> None:
    async with live_server() as live:
        view = WebView(live.addr, ADMIN)
        await view.start()
        try:
            base = f"http://127.0.0.1:{view.port}"
            async with chromium() as page:
                await page.goto(f"{base}/?label=x#/")
                said = await page.wait_for(PROBLEM)
                conn = await page.evaluate("document.getElementById('conn').textContent")
                back = await page.evaluate("document.querySelector('#main a')?.href")
        finally:
            await view.stop()
    assert said.startswith("the server refused this list (HTTP 400): label: write it as "), said
    assert "KEY=VALUE" in said and conn == said, (said, conn)
    assert "unreachable" not in said, said
    assert back == f"{base}/", back
