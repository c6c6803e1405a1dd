"""Examined (session 54): the web view's page at a link whose match id is not valid
percent-encoding (``#/match/%E0%A4%A``, a link cut short) stayed blank: ``decodeURIComponent``
threw in ``route()``, so no list, no error and no polling. The page says why and links back to
the list, and the next link it is given works as usual."""

from __future__ import annotations

import pytest

from tests.play.live import ADMIN, live_server
from uno_server.web import WebView

from .cdp import chromium, need_chromium

pytestmark = pytest.mark.asyncio

need_chromium(module=True)

PROBLEM = "document.querySelector('#main .problem')?.textContent || ''"


async def test_a_link_with_a_malformed_id_says_why_and_the_list_still_works() -> None:
    async with live_server() as live:
        view = WebView(live.addr, ADMIN)
        await view.start()
        try:
            base = f"http://127.0.0.1:{view.port}"
            async with chromium() as page:
                await page.goto(f"{base}/#/match/%E0%A4%A")
                said = await page.wait_for(PROBLEM)
                conn = await page.evaluate("document.getElementById('conn').textContent")
                back = await page.evaluate("document.querySelector('#main a')?.hash")
                # the link back: the list of matches, polled as usual
                await page.evaluate("document.querySelector('#main a').click()")
                heading = await page.wait_for("document.querySelector('#main h1')?.textContent")
                # a well-formed link after it: refused by the server, and the page says why
                await page.evaluate("location.hash = '#/match/' + encodeURIComponent('caf\u00e9')")
                refused = await page.wait_for(PROBLEM)
        finally:
            await view.stop()
    assert '"%E0%A4%A" is not valid percent-encoding' in said, said
    assert said.endswith("go back to the list of matches") and conn == said, (said, conn)
    assert back == "#/"
    assert heading == "0 matches in play", heading
    assert "a match id is 1-64 printable ASCII characters" in refused, refused
