"""Examined (session 54): the watch and play screens.

* ``watch`` (the tables view) after a busy run: the server lists finished matches far longer
  than it keeps their events, and ListMatches does not say which it freed. The view learnt it
  only by failing to follow each one: the first screen was nine cards saying "ended too long
  ago to replay", and each poll walked back through the history nine more. It now asks before
  following (:meth:`Spectator.expired`, as the web view's list does), so such a match is never
  a card.
* ``play``: a move's key that does not apply now (p c a x u n m) said nothing: its binding was
  off, so the action that explains never ran. It says why, and still does not act.
* The Wild's colour dialog takes R Y G B too (Caps Lock on).
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from textual.app import App

from uno_server.gen.uno.v1 import admin_pb2, game_pb2
from uno_server.play.app import OFF_KEYS, PlayApp
from uno_server.play.dialogs import ColorScreen
from uno_server.play.follow import Follower, Spectator
from uno_server.play.model import LogLine
from uno_server.play.watch import WatchApp

from .helpers import Stall
from .live import ADMIN, Live, live_server
from .snap import screen_text
from .test_play_screen import next_decision, options
from .test_watch import until

pytestmark = pytest.mark.asyncio
SIZE = (120, 42)
HEURISTIC = game_pb2.BUILTIN_BOT_HEURISTIC
RANDOM = game_pb2.BUILTIN_BOT_RANDOM
KEPT = 2


class SeenWatch(WatchApp):
    """The watch screen, remembering every match it followed and every card it drew."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[str] = []
        self.screens: list[str] = []

    def _followed(self, follower: Follower, line: LogLine | None) -> None:
        if follower.match_id not in self.seen:
            self.seen.append(follower.match_id)
        super()._followed(follower, line)
        self.screens.append(screen_text(self))


async def _finished(live: Live, count: int) -> list[str]:
    """``count`` matches played to their end one after the other; the server keeps the events
    of the last :data:`KEPT` only."""
    live.server.arena.config.log_linger_matches = KEPT
    mids = []
    for i in range(count):
        mids.append(await live.create([HEURISTIC, RANDOM, HEURISTIC], seed=40 + i))
        watch = Stall(live.progress)
        while mids[-1] in live.server.arena.running:
            watch.check("waiting for the match to finish")
            await asyncio.sleep(0.02)
    assert [m for m in mids if live.server.arena.finished[m].table] == mids[-KEPT:]
    return mids


async def test_watch_never_makes_a_card_of_a_match_too_old_to_replay(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Six finished matches, the events of two kept. One poll (the next is an hour away):
    its cards are the two, and no other match was ever followed or said on the screen."""
    async with live_server() as live:
        mids = await _finished(live, 6)
        app = SeenWatch(live.addr, ADMIN, poll_s=3600)
        async with app.run_test(size=SIZE) as pilot:
            await until(
                pilot,
                lambda: (
                    len(app.followers) == KEPT
                    and all(f.caught_up and f.ended for f in app.followers.values())
                    and len(app.query(".card")) == KEPT
                ),
            )
            text = screen_text(app)
            # a later poll asks only from the oldest end it does not know to be freed: once
            assert app.spectator is not None
            asked: list[str] = []
            replayable = Spectator.replayable

            async def counted(self: Spectator, info: admin_pb2.MatchInfo) -> bool:
                asked.append(info.match_id)
                return await replayable(self, info)

            monkeypatch.setattr(Spectator, "replayable", counted)
            infos = await app.spectator.matches(limit=200)
            again = await app.spectator.expired(infos, app.expired)
            await pilot.press("q")
    assert sorted(app.seen) == sorted(mids[-KEPT:]), app.seen
    assert app.expired == set(mids[:-KEPT])
    assert not any("too long ago" in s for s in [*app.screens, text]), text
    assert "2 tables" in text, text
    assert again == app.expired and asked == [mids[-KEPT]], (again, asked)


# ------------------------------------------------------------------ play: keys that do not apply


async def test_a_key_that_does_not_apply_says_why_and_does_nothing() -> None:
    """At the person's first turn (seven cards, no penalty, no UNO window, the match going on):
    each key of a move that is not open says why on the screen, and nothing is sent."""
    said = {
        "p": "You can pass only after drawing",
        "a": "There is no penalty to accept.",
        "x": "You can challenge only a Wild Draw Four",
        "c": "Nobody to catch",
        "n": "Nobody to let go",
        "u": "Call UNO when you hold two cards",
        "m": "m starts another match once this one is over",
    }
    app = PlayApp(options())
    shown: dict[str, str] = {}
    async with app.run_test(size=SIZE) as pilot:
        assert await next_decision(app, pilot)
        assert app.model is not None and len(app.model.hand) == 7
        for key, words in said.items():
            assert not app.check_action(OFF_KEYS[key], ())  # the binding is off
            await pilot.press(key)
            await pilot.pause()
            shown[key] = screen_text(app)
            assert app.message.plain.startswith(words), (key, app.message.plain)
        sent = list(app.sent)
        await pilot.press("q")
    assert sent == [], sent
    for key, text in shown.items():
        assert said[key] in " ".join(text.split()), (key, text)


# ------------------------------------------------------------------ play: the colour dialog


class _Dialog(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.picked: list[int | None] = []

    def ask(self) -> None:
        self.push_screen(ColorScreen("name the colour", 0), self.picked.append)


@pytest.mark.parametrize(("key", "color"), [("R", 0), ("Y", 1), ("G", 2), ("B", 3), ("g", 2)])
async def test_the_colour_dialog_takes_upper_case_letters(key: str, color: int) -> None:
    app = _Dialog()
    async with app.run_test() as pilot:
        app.ask()
        await pilot.pause()
        await pilot.press(key)
        await pilot.pause()
    assert app.picked == [color]
