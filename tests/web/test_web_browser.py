"""The web view in a real headless Chromium (Debian's package), driven over the DevTools protocol.

A match runs while the page shows it. The page must update as the hand goes on, and no hidden
card may ever be in the page's DOM or in anything the page received over the network (every
response body and every server-sent event is recorded), checked against the engine's truth at
the sequence number each view or message is at.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from typing import Any

import pytest

from tests.play.helpers import card_words, words_of
from tests.play.live import ADMIN, Live, live_server, public_now
from uno_server.gen.uno.v1 import game_pb2
from uno_server.play.cards import label
from uno_server.web import WebView

from .cdp import NAVIGATING, CdpError, chromium, chromium_path
from .sse import check_state

pytestmark = pytest.mark.asyncio
HEURISTIC = game_pb2.BUILTIN_BOT_HEURISTIC
RANDOM = game_pb2.BUILTIN_BOT_RANDOM

if chromium_path() is None:
    if os.environ.get("CI") == "true":
        raise RuntimeError("the browser test needs Debian's chromium (.ci/run installs it)")
    pytest.skip("chromium not installed: apt-get install chromium", allow_module_level=True)

DOM = """(() => {
  const t = document.getElementById("table");
  if (!t) return null;
  const seats = [...document.querySelectorAll(".seat")];
  return {
    seq: Number(t.dataset.seq),
    phase: t.dataset.phase,
    cards: [...document.querySelectorAll("[data-card]")].map((e) => Number(e.dataset.card)),
    text: document.body.innerText,
    counts: seats.map((e) => Number(e.querySelector(".cards").textContent)),
    revealed: seats.map((e) =>
      [...e.querySelectorAll(".revealed [data-card]")].map((c) => Number(c.dataset.card))),
  };
})()"""


def check_dom(dom: dict[str, Any], public: set[int]) -> None:
    hidden = sorted(set(dom["cards"]) - public)
    assert not hidden, f"DOM at seq {dom['seq']} holds hidden cards {hidden}"
    words = card_words(dom["text"].lower().replace("\u00a0", " ")) - words_of(public)
    assert not words, f"DOM text at seq {dom['seq']} names hidden cards {sorted(words)}"
    if dom["phase"] != "over":
        assert not any(dom["revealed"]), "a hand is revealed while the hand runs"


@contextlib.asynccontextmanager
async def held_match(hold_at: int, delay: float = 0.0) -> AsyncIterator[tuple[Live, str, str]]:
    """A live server and its web view, with a match held mid-hand: (live, match id, base URL)."""
    async with live_server(hold_at=hold_at, delay=delay) as live:
        view = WebView(live.addr, ADMIN)
        await view.start()
        try:
            mid = await live.create(["gate", HEURISTIC, RANDOM, HEURISTIC], seed=31)
            await live.until_held()
            yield live, mid, f"http://127.0.0.1:{view.port}"
        finally:
            await view.stop()


async def test_a_match_live_in_chromium() -> None:
    async with held_match(3) as (live, mid, base):
        table = live.table(mid)
        async with chromium() as page:
            await page.goto(f"{base}/")
            await page.wait_for(f"!!document.querySelector('tr[data-match=\"{mid}\"]')")
            await page.evaluate(f"document.querySelector('tr[data-match=\"{mid}\"] a').click()")
            dom = await page.wait_for(DOM)
            # joined mid-hand: the counts on the page are the engine's
            hand = table.match.hand
            assert dom["counts"] == [len(h) for h in hand.hands]
            check_dom(dom, public_now(table, dom["seq"]))
            seqs = {dom["seq"]}
            stepped: list[int] = []

            async def page_caught_up() -> None:
                # before each of its answers the gate waits for the page to show the match as
                # it is now: the page follows the hand step by step, however slow the machine
                want = len(table.records)
                shown = await page.wait_for(
                    f"(() => {{ const d = {DOM}; return d && d.seq >= {want} ? d : null; }})()"
                )
                check_dom(shown, public_now(table, shown["seq"]))
                seqs.add(shown["seq"])
                stepped.append(want)

            live.gate.before_answer = page_caught_up
            live.gate.open()
            samples = 0
            while True:
                dom = await page.evaluate(DOM)
                check_dom(dom, public_now(table, dom["seq"]))
                seqs.add(dom["seq"])
                samples += 1
                if dom["phase"] == "over" and "match over" in dom["text"].lower():
                    break
                await asyncio.sleep(0.02)
            # the end: every hand revealed, as the engine has them
            for seat, cards in enumerate(dom["revealed"]):
                assert sorted(cards) == sorted(hand.hands[seat])
                for code in hand.hands[seat]:
                    assert label(code) in dom["text"].lower()
            # the stream's end event reached the page, after the last state
            await page.wait_for("document.getElementById('conn').textContent === 'match over'")
            await page.settle()
            traffic = page.traffic
    assert len(stepped) >= 3 and len(seqs) >= 5, "the page did not update as the hand went on"
    assert samples >= 5
    # every server-sent event the page received
    states = [json.loads(data) for event, data in traffic.sse if event == "state"]
    assert len(states) >= 10
    for state in states:
        check_state(state, table)
    assert states[-1]["ended"]
    # every other response body: pages, script, style and the list of matches
    urls = [url for url, _, _ in traffic.responses]
    assert any(url.endswith("/api/matches") for url in urls)
    assert any(url.endswith("/static/app.js") for url in urls)
    for url, _, body in traffic.responses:
        if url.endswith("/api/matches"):
            data = json.loads(body)
            assert mid in {m["match_id"] for m in data["matches"]}
            assert "code" not in body  # the list carries no card at all


async def test_the_dom_check_sees_a_planted_card() -> None:
    """Break on purpose: a card the engine has not shown, planted in the DOM, fails the check."""
    async with held_match(2) as (live, mid, base):
        table = live.table(mid)
        public = public_now(table)
        hidden = next(c for h in table.match.hand.hands for c in h if c not in public)
        async with chromium() as page:
            await page.goto(f"{base}/#/match/{mid}")
            dom = await page.wait_for(DOM)
            check_dom(dom, public_now(table, dom["seq"]))
            await page.evaluate(
                "document.getElementById('log').append(Object.assign("
                f"document.createElement('span'), {{textContent: '{label(hidden)}'}}));"
                "document.getElementById('log').lastChild.dataset.card = "
                f"'{hidden}'"
            )
            planted = await page.evaluate(DOM)
            with pytest.raises(AssertionError, match="hidden card"):
                check_dom(planted, public_now(table, planted["seq"]))


async def test_wait_for_asks_the_new_document_when_its_call_meets_a_navigation() -> None:
    """The helper, not the product: an expression in flight when the page navigates (a click
    on a link, as the league's standings test does) is answered with an error by Chromium; the
    wait goes on in the new document. Here the first evaluation itself navigates (a reload) and
    never resolves, so the error is certain, not a race."""
    from aiohttp import web

    async def index(_: web.Request) -> web.Response:
        return web.Response(text="<p>page</p>", content_type="text/html")

    app = web.Application()
    app.router.add_get("/", index)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        async with chromium() as page:
            await page.goto(f"http://127.0.0.1:{port}/")
            await page.wait_for("document.readyState === 'complete'")
            reload_once = """(() => {
              if (sessionStorage.getItem("reloaded")) return location.href;
              sessionStorage.setItem("reloaded", "1");
              location.reload();
              return new Promise(() => {});
            })()"""
            assert await page.wait_for(reload_once) == f"http://127.0.0.1:{port}/"
            # the same call outside wait_for is an error: the case the helper must survive
            await page.evaluate("sessionStorage.clear()")
            with pytest.raises(CdpError, match="|".join(NAVIGATING)):
                await page.evaluate(reload_once)
    finally:
        await runner.cleanup()
