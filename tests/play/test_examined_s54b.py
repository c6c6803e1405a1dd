"""Examined (session 54, second round): keys, the seat dialog, and ``watch``'s wording.

* ``play``: with Caps Lock (or Shift) on, the move keys (D P U C N A X M Q) had no binding and
  Textual dropped them in silence; Q did not quit. They do what the lower case does, with the
  same "does not apply now" messages, and the footer shows each move once.
* The seven-o seat dialog ignored a seat number that is not a choice without a word: it says
  why.
* ``watch --tournament ID`` said "No matches in play yet ..." for a tournament whose matches all
  ended too long ago to replay and for an id nothing carries: it says which.
* ``watch MATCH_ID`` with an id the server refuses (``é``, 65 characters) printed the raw gRPC
  refusal: it says it as for an unknown id.
"""

from __future__ import annotations

import asyncio

import pytest
from textual.app import App

from uno_server.engine import actions as A
from uno_server.gen.uno.v1 import game_pb2
from uno_server.play.app import PlayApp
from uno_server.play.dialogs import SeatScreen
from uno_server.play.watch import WatchApp

from .helpers import Stall
from .live import ADMIN, live_server
from .snap import screen_text
from .test_play_screen import next_decision, options
from .test_watch import until

pytestmark = pytest.mark.asyncio
SIZE = (120, 42)
HEURISTIC = game_pb2.BUILTIN_BOT_HEURISTIC
RANDOM = game_pb2.BUILTIN_BOT_RANDOM


# ------------------------------------------------------------------ play: Caps Lock on


async def test_upper_case_move_keys_do_what_the_lower_case_do() -> None:
    """At the person's first turn (seven cards, the match going on): P A X C N U M say why, as
    p a x c n u m do, and send nothing; D draws; Q quits. The footer names each move once."""
    said = {
        "P": "You can pass only after drawing",
        "A": "There is no penalty to accept.",
        "X": "You can challenge only a Wild Draw Four",
        "C": "Nobody to catch",
        "N": "Nobody to let go",
        "U": "Call UNO when you hold two cards",
        "M": "m starts another match once this one is over",
    }
    app = PlayApp(options())
    async with app.run_test(size=SIZE) as pilot:
        assert await next_decision(app, pilot)
        assert app.model is not None and len(app.model.hand) == 7
        shown = [b.binding for b in app.active_bindings.values() if b.binding.show]
        words = [b.description for b in shown]
        for key, text in said.items():
            await pilot.press(key)
            await pilot.pause()
            assert app.message.plain.startswith(text), (key, app.message.plain)
        assert app.sent == [], app.sent
        await pilot.press("D")
        watch = Stall(lambda: len(app.sent))
        while not app.sent:
            watch.check("waiting for D to draw")
            await pilot.pause(0.01)
        assert app.sent == [A.DRAW], app.sent
        await pilot.press("Q")
        watch = Stall(lambda: app.is_running)
        while app.is_running:
            watch.check("waiting for Q to quit")
            await pilot.pause(0.01)
    assert len(words) == len(set(words)), words
    assert "draw" in words and "quit" in words, words
    assert not any(b.key.isupper() for b in shown), [b.key for b in shown]


# ------------------------------------------------------------------ play: the seat dialog


class _Seats(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.picked: list[int | None] = []
        self.dialog = SeatScreen([(1, "bob, 7 cards"), (3, "dan, 2 cards")])

    def ask(self) -> None:
        self.push_screen(self.dialog, self.picked.append)


async def test_the_seat_dialog_says_why_a_seat_is_not_a_choice() -> None:
    app = _Seats()
    async with app.run_test(size=(80, 24)) as pilot:
        app.ask()
        await pilot.pause()
        await pilot.press("2")  # not a choice (the person's own seat, say)
        await pilot.pause()
        still = app.screen is app.dialog
        text = screen_text(app)
        await pilot.press("3")
        await pilot.pause()
    assert still and app.picked == [3], app.picked
    assert "Seat 2 is not one to swap with: press 1 or 3, or Esc." in text, text


# ------------------------------------------------------------------ watch: the empty screen


async def test_watch_a_tournament_that_nothing_carries_says_so() -> None:
    async with live_server() as live:
        await live.create([HEURISTIC, RANDOM], seed=7, labels={"tournament": "other"})
        app = WatchApp(live.addr, ADMIN, labels={"tournament": "nothing-here"}, poll_s=3600)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.listed is not None)
            await pilot.pause()
            text = " ".join(screen_text(app).split())
            await pilot.press("q")
    assert "No match on this server carries tournament=nothing-here: check the id" in text, text
    assert "in play yet" not in text, text


async def test_watch_a_tournament_whose_matches_are_too_old_to_replay_says_so() -> None:
    """Its one match played to the end, the server keeping no finished match's events: the
    screen says the match is too old to replay, not that one is coming."""
    async with live_server() as live:
        live.server.arena.config.log_linger_matches = 0
        mid = await live.create([HEURISTIC, RANDOM], seed=7, labels={"tournament": "t-old"})
        watch = Stall(live.progress)
        arena = live.server.arena
        while arena.finished.get(mid) is None or arena.finished[mid].table:
            watch.check("waiting for the match to finish and its events to be freed")
            await asyncio.sleep(0.02)
        app = WatchApp(live.addr, ADMIN, labels={"tournament": "t-old"}, poll_s=3600)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: app.listed is not None)
            await pilot.pause()
            text = " ".join(screen_text(app).split())
            await pilot.press("q")
    assert app.listed == app.listed_expired == 1
    assert "the finished match with tournament=t-old ended too long ago to replay" in text, text
    assert "in play yet" not in text, text


# ------------------------------------------------------------------ watch: a refused id


@pytest.mark.parametrize("match_id", ["\u00e9", "a" * 65])
async def test_watch_an_id_the_server_refuses_is_said_as_an_unknown_one(match_id: str) -> None:
    async with live_server() as live:
        app = WatchApp(live.addr, ADMIN, match_id=match_id)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: bool(app.error))
    shown = match_id if len(match_id) <= 64 else match_id[:64] + "\u2026"
    assert app.error.startswith(f"no match {shown!r} on this server"), app.error
    assert "1-64 printable ASCII characters" in app.error, app.error
    assert "INVALID_ARGUMENT" not in app.error and "\n" not in app.error, app.error
    assert "without a match id to list the matches" in app.error, app.error
    assert not app.is_running
