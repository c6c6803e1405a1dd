"""The web view's event streams at their edges, against a live server:

* a browser tab that closes ends its WatchMatch call at once (not when a write first fails, nor
  at garbage collection), even on a match that stands still;
* an unknown match id is answered 404 and a malformed one 400, before any stream starts, saying
  back no more than a short prefix of the id;
* the page keeps a problem on show (the stream's end used to overwrite it with "match over"),
  and shows why a stream was refused;
* an eliminated seat (Challenge UNO) is shown as eliminated at a hand's end, not as gone out.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import aiohttp
import pytest

from tests.play.live import ADMIN, Live, live_server
from uno_server.engine import events as E
from uno_server.engine.match import Match
from uno_server.engine.rules import RuleSet
from uno_server.gen.uno.v1 import admin_pb2, game_pb2
from uno_server.play.follow import Follower, Spectator
from uno_server.play.model import SPECTATOR, TableModel
from uno_server.service import convert
from uno_server.web import WebView
from uno_server.web.server import state_json

from .cdp import chromium, chromium_path

pytestmark = pytest.mark.asyncio
HEURISTIC = game_pb2.BUILTIN_BOT_HEURISTIC
RANDOM = game_pb2.BUILTIN_BOT_RANDOM
needs_chromium = pytest.mark.skipif(chromium_path() is None, reason="chromium not installed")


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """What is left open stays open: no garbage collection closes it behind the test's back."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


@contextlib.asynccontextmanager
async def web(view_class: type[WebView] = WebView) -> AsyncIterator[tuple[Live, WebView, str]]:
    async with live_server(hold_at=3) as live:
        view = view_class(live.addr, ADMIN)
        await view.start()
        try:
            yield live, view, f"http://127.0.0.1:{view.port}"
        finally:
            live.gate.open()
            await view.stop()


async def until(cond: Any, what: str, seconds: float = 10.0) -> None:
    end = asyncio.get_running_loop().time() + seconds
    while not cond():
        assert asyncio.get_running_loop().time() < end, what
        await asyncio.sleep(0.02)


async def test_a_closed_tab_ends_its_watch_call_at_once() -> None:
    with no_gc():
        async with web() as (live, view, base):
            mid = await live.create(["gate", HEURISTIC, RANDOM, HEURISTIC], seed=31)
            await live.until_held()  # the match stands still: nothing more is written
            watchers = live.server.arena.watchers
            async with aiohttp.ClientSession() as http:
                for _ in range(3):
                    res = await http.get(f"{base}/api/matches/{mid}/events")
                    assert res.status == 200
                    assert (await res.content.readline()).startswith(b"event: state")
                    res.close()  # the tab goes away
            await until(lambda: not watchers, f"{len(watchers)} WatchMatch calls left open")
            await until(lambda: not view._streams, "handlers left running")


class _Call:
    """A WatchMatch call that yields ``messages`` and then waits, like a match standing still."""

    def __init__(self, messages: list[admin_pb2.WatchMatchResponse]) -> None:
        self.messages = messages
        self.cancelled = False

    def cancel(self) -> bool:
        self.cancelled = True
        return True

    async def __aiter__(self) -> AsyncIterator[admin_pb2.WatchMatchResponse]:
        for m in self.messages:
            yield m
        await asyncio.Event().wait()


async def test_a_follower_whose_listener_fails_cancels_its_call() -> None:
    """The write to a browser that went away fails inside the listener: the call is cancelled
    then and there, not left half read."""
    info = admin_pb2.MatchInfo(match_id="m1", state=admin_pb2.MATCH_STATE_RUNNING)
    info.seats.add(seat=0).player.builtin = HEURISTIC
    call = _Call([admin_pb2.WatchMatchResponse(match=info)])
    spectator = Spectator.__new__(Spectator)
    spectator.md = (("authorization", "Bearer unused-token"),)
    spectator.reached = True
    spectator.stub = type("Stub", (), {"WatchMatch": lambda self, req, metadata: call})()

    def gone(f: Follower, line: object) -> None:
        raise ConnectionResetError("the browser went away")

    with no_gc():
        with pytest.raises(ConnectionResetError):
            await Follower(spectator, "m1").run(gone)
        assert call.cancelled


async def test_an_unknown_or_malformed_match_id_is_refused_before_the_stream() -> None:
    async with web() as (_, _view, base), aiohttp.ClientSession() as http:
        async with http.get(f"{base}/api/matches/m999999-nothere/events") as res:
            text = await res.text()
            assert res.status == 404, (res.status, text)
            assert "text/event-stream" not in res.headers.get("Content-Type", "")
            assert "no match 'm999999-nothere'" in text
        for bad in ("x" * 5000, "caf\u00e9"):
            async with http.get(f"{base}/api/matches/{bad}/events") as res:
                text = await res.text()
                assert res.status == 400, (res.status, text)
                assert "1-64 printable ASCII" in text
                assert len(text) < 200 and "x" * 40 not in text, text


class _Unchecked(WebView):
    """A view that lets every id through to the stream: the stream's own problem event."""

    async def _check_match(self, match_id: str) -> None:
        return None


@needs_chromium
async def test_the_page_keeps_a_problem_and_says_why_a_stream_was_refused() -> None:
    async with web(_Unchecked) as (_, _view, base), chromium() as page:
        await page.goto(f"{base}/#/match/m999999-nothere")
        await page.wait_for("document.getElementById('conn')?.textContent.includes('no match')")
        await asyncio.sleep(0.3)  # the end event follows the problem
        text = await page.evaluate("document.getElementById('conn').textContent")
        assert "no match" in text and "match over" not in text, text
        # the stream's own problem is worded for a person, not as the server's status name
        main = await page.evaluate("document.getElementById('main').innerText")
        assert "no match 'm999999-nothere'" in main and "NOT_FOUND" not in main, main
        assert "list of matches" in main, main
    async with web() as (_, _view, base), chromium() as page:
        await page.goto(f"{base}/#/match/m999999-nothere")
        await page.wait_for("document.getElementById('conn')?.textContent.includes('no match')")
        main = await page.evaluate("document.getElementById('main').innerText")
        assert "no match 'm999999-nothere'" in main, main


def _eliminated_hand_end() -> dict[str, Any]:
    """A Challenge UNO table as the web view sends it, at the end of a hand that an eliminated
    seat sat out (engine events, mapped to match seats as the service sends them)."""
    rules = RuleSet(scoring="lowest", challenge_uno=True, target_score=200)
    match = Match(rules, 3)
    model = TableModel([f"b{i}" for i in range(4)])
    from uno_server.engine.bots import HeuristicBot
    from uno_server.engine.views import redact, seat_view

    bots = [HeuristicBot(i) for i in range(4)]
    fed, seq, h2m = 0, 0, list(match.active)
    level = (E.HandScored, E.SeatEliminated, E.MatchEnded, E.DealerDraw, E.DealerChosen)
    while True:
        while fed < len(match.log):
            ev = match.log[fed]
            fed += 1
            if type(ev) is E.HandStarted:
                h2m = list(match.active)
            if not isinstance(ev, level):
                ev = convert.remap_event(ev, h2m, 4)
            red = redact(ev, SPECTATOR)
            if red is not None:
                seq += 1
                model.apply(
                    convert.event_to_proto(red, seq, match.hand_number, convert.timestamp(1))
                )
            if type(ev) is E.HandEnded and len(h2m) < 4:
                return state_json(model, None, ended=False)
        hand = match.hand
        assert not match.over, "no hand ended with a seat eliminated"
        if hand.over:
            match.next_hand()
            continue
        seat = hand.pending_seats()[0]
        match.apply(seat, bots[h2m[seat]].choose(seat_view(hand, seat)))


@needs_chromium
async def test_an_eliminated_seat_is_shown_as_eliminated_not_gone_out() -> None:
    state = _eliminated_hand_end()
    out = [s["seat"] for s in state["seats"] if s["eliminated"]]
    assert out and state["phase"] == "over"
    async with web() as (_, _view, base), chromium() as page:
        await page.goto(f"{base}/")
        await page.wait_for("!!document.querySelector('#main h1')")  # the list is shown
        boxes, direction = await page.evaluate(
            f"stopAll(); renderTable({json.dumps(state)}); "
            "[[...document.querySelectorAll('.seat')].map((e) => e.innerText), "
            "document.getElementById('direction').textContent]"
        )
    gone_out = [i for i, text in enumerate(boxes) if "out!" in text]
    assert gone_out == [state["winner"]], boxes
    for seat in out:
        assert "eliminated" in boxes[seat], boxes
        assert f"{seat} →" not in direction and f"→ {seat} " not in direction, direction
