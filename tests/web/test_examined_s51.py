"""Examined (session 51): the web view's list offered matches whose event stream then said
"no match ...: unknown". The server keeps a finished match's summary (ListMatches, GetMatch)
far longer than its event log (1000 matches / an hour against 128 / 120 s), so the list held
matches that could no longer be replayed. Now the list marks them (``replayable``: false, and the
page shows them without a link) and their event stream is refused with HTTP 404 before it
starts, in words that say why and what to do next."""

from __future__ import annotations

import asyncio

import aiohttp
import pytest

from tests.play.helpers import Stall
from tests.play.live import ADMIN, Live, live_server
from uno_server.gen.uno.v1 import game_pb2
from uno_server.web import WebView

from .sse import sse

pytestmark = pytest.mark.asyncio
HEURISTIC = game_pb2.BUILTIN_BOT_HEURISTIC
RANDOM = game_pb2.BUILTIN_BOT_RANDOM
KEPT = 2
"""The event logs the server keeps in these tests (``--log-linger-matches``)."""


async def finished_matches(live: Live, count: int) -> list[str]:
    """``count`` matches of the built-in bots, each played to its end before the next starts
    (so they end in the order they were created)."""
    live.server.arena.config.log_linger_matches = KEPT
    out = []
    for i in range(count):
        mid = await live.create([HEURISTIC, RANDOM, HEURISTIC], seed=90 + i)
        watch = Stall(live.progress)
        while mid in live.server.arena.running:
            watch.check(f"waiting for {mid} to finish")
            await asyncio.sleep(0.02)
        out.append(mid)
    return out


def kept(live: Live, mid: str) -> bool:
    """The server's own word: it still keeps the match's event log."""
    f = live.server.arena.finished[mid]
    return f.table is not None


async def test_the_list_marks_matches_too_old_to_replay_and_their_stream_is_refused() -> None:
    async with live_server() as live:
        mids = await finished_matches(live, 5)
        truth = {mid: kept(live, mid) for mid in mids}
        assert sum(truth.values()) == KEPT and not any(truth[m] for m in mids[:-KEPT]), truth
        view = WebView(live.addr, ADMIN)
        await view.start()
        try:
            base = f"http://127.0.0.1:{view.port}"
            async with aiohttp.ClientSession() as http:
                async with http.get(f"{base}/api/matches") as res:
                    listed = {m["match_id"]: m for m in (await res.json())["matches"]}
                assert set(listed) == set(mids)  # every match the server keeps is listed
                assert {mid: m["replayable"] for mid, m in listed.items()} == truth
                for mid in mids:
                    async with http.get(f"{base}/api/matches/{mid}/events") as res:
                        if not truth[mid]:
                            # refused before any stream starts, saying why and what to do
                            text = await res.text()
                            assert res.status == 404, (res.status, text)
                            assert f"match '{mid}' ended too long ago to replay" in text, text
                            assert "go back to the list of matches" in text, text
                            continue
                        assert res.status == 200
                        assert res.headers["Content-Type"].startswith("text/event-stream")
                        kinds = [kind async for kind, _ in sse(res)]
                    assert kinds[-1] == "end" and "state" in kinds and "problem" not in kinds
        finally:
            await view.stop()


async def test_a_stream_whose_log_is_freed_meanwhile_says_it_is_too_old() -> None:
    """The race the check before the stream cannot close: the log is freed between the check
    and WatchMatch. The problem event says the match is too old to replay, not unknown."""
    async with live_server() as live:
        [mid, *_] = await finished_matches(live, KEPT + 1)
        view = WebView(live.addr, ADMIN)
        await view.start()
        try:

            async def always(info: object) -> bool:
                return True

            assert view.spectator is not None
            view.spectator.replayable = always  # type: ignore[method-assign]
            base = f"http://127.0.0.1:{view.port}"
            async with (
                aiohttp.ClientSession() as http,
                http.get(f"{base}/api/matches/{mid}/events") as res,
            ):
                assert res.status == 200
                said = [data async for kind, data in sse(res) if kind == "problem"]
        finally:
            await view.stop()
        assert len(said) == 1, said
        assert f"match '{mid}' ended too long ago to replay" in said[0]["message"], said
        assert "unknown" not in said[0]["message"], said


async def test_the_page_shows_them_without_a_link_and_says_why() -> None:
    from .cdp import chromium, need_chromium

    need_chromium()
    async with live_server() as live:
        mids = await finished_matches(live, KEPT + 2)
        old, new = mids[:-KEPT], mids[-KEPT:]
        view = WebView(live.addr, ADMIN)
        await view.start()
        try:
            async with chromium() as page:
                await page.goto(f"http://127.0.0.1:{view.port}/")
                await page.wait_for(
                    f"document.querySelectorAll('tr[data-match]').length === {len(mids)}"
                )
                rows = await page.evaluate(
                    """[...document.querySelectorAll('tr[data-match]')].map((r) => ({
                      id: r.dataset.match, link: !!r.querySelector('a'),
                      state: r.children[1].textContent }))"""
                )
                note = await page.evaluate("document.getElementById('too-old')?.textContent")
        finally:
            await view.stop()
    shown = {r["id"]: r for r in rows}
    for mid in old:
        assert not shown[mid]["link"] and "too old to replay" in shown[mid]["state"], rows
    for mid in new:
        assert shown[mid]["link"] and "too old" not in shown[mid]["state"], rows
    assert note and "Open a match in play or one that ended recently" in note, note
