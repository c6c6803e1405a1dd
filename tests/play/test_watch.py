"""``uno-arena watch`` against a live server: a spectator joins a match in the middle of a hand,
follows it live, replays one from its start, and watches a tournament's tables. At every event
the drawn view, and at every poll the real screen, is checked against the engine's truth: the
counts are the engine's, and no card is shown that the engine has not shown to everyone."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from uno_server.engine.views import redact
from uno_server.gen.uno.v1 import game_pb2
from uno_server.play.cards import label
from uno_server.play.follow import Follower
from uno_server.play.model import LogLine
from uno_server.play.watch import MAX_TABLES, WatchApp

from .helpers import SPECTATOR, STALL_S, Stall
from .live import (
    ADMIN,
    check_no_hidden,
    live_server,
    public_now,
    render_model,
)
from .snap import check_snapshot, screen_text, settle

pytestmark = pytest.mark.asyncio
HEURISTIC = game_pb2.BUILTIN_BOT_HEURISTIC
RANDOM = game_pb2.BUILTIN_BOT_RANDOM
SIZE = (120, 40)


class CheckedWatch(WatchApp):
    """The watch screen, checking each update against the engine before drawing it."""

    def __init__(self, *args: Any, tables: Callable[[str], Any], **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.tables = tables
        self.checked = 0
        self.cards_named = 0

    def _followed(self, follower: Follower, line: LogLine | None) -> None:
        model = follower.model
        if model is not None and (follower.caught_up or self.pace):
            table = self.tables(follower.match_id)
            text = render_model(model)
            public = public_now(table, model.last_sequence)
            self.cards_named += check_no_hidden(text, public, f"event {model.last_sequence}")
            if model.in_hand:
                assert all(s.revealed is None for s in model.seats)
            self.checked += 1
        super()._followed(follower, line)


def moving(app: WatchApp) -> tuple[object, ...]:
    """What advances while a spectator waits: the matches the screen follows, the events each
    has drawn, whether each caught up or ended, and any error."""
    return (
        app.error,
        tuple(
            (mid, f.model.last_sequence if f.model is not None else -1, f.caught_up, f.ended)
            for mid, f in sorted(app.followers.items())
        ),
    )


def last_seen_by_spectators(table: Any) -> int:
    """The sequence of the table's last event a spectator receives (some are only a seat's)."""
    for i in range(len(table.records), 0, -1):
        if redact(table.records[i - 1].event, SPECTATOR) is not None:
            return i
    return 0


async def until(pilot: Any, cond: Callable[[], bool], stall: float = STALL_S) -> None:
    """Wait for ``cond``, then for the screen to settle. Fails only if ``cond`` stays false while
    nothing the screen follows moves for ``stall`` seconds (a busy machine is slow, not stuck)."""
    app = pilot.app
    watch = Stall(lambda: moving(app), stall)
    while not cond():
        watch.check(lambda: f"screen:\n{screen_text(app)}")
        await pilot.pause(0.01)
    await settle(pilot)


async def test_join_mid_hand_then_follow_live_to_the_reveal() -> None:
    async with live_server(hold_at=4, delay=0.1) as live:
        mid = await live.create(["gate", HEURISTIC, RANDOM, HEURISTIC], seed=11)
        await live.until_held()
        table = live.table(mid)
        hand = table.match.hand
        app = CheckedWatch(live.addr, ADMIN, match_id=mid, tables=live.table)
        async with app.run_test(size=SIZE) as pilot:
            follower = app.followers[mid]
            await until(pilot, lambda: follower.caught_up)
            model = follower.model
            assert model is not None
            # joined in the middle, the counts are the engine's at once
            assert model.in_hand
            assert [s.cards for s in model.seats] == [len(h) for h in hand.hands]
            assert model.top == hand.discard[-1]
            assert model.color == hand.color
            assert model.current == hand.current == 0
            text = screen_text(app)
            check_no_hidden(text, public_now(table), "joined mid-hand")
            for s in model.seats:  # every seat's count is on the screen
                assert any(
                    f" {s.seat}  {model.names[s.seat]}" in row and f" {s.cards} " in row
                    for row in text.splitlines()
                )
            check_snapshot("watch_mid_hand", text)
            live.gate.open()
            screens = 0
            while not follower.ended:
                await pilot.pause(0.005)
                text = screen_text(app)
                if follower.model is not None and follower.model.in_hand:
                    check_no_hidden(text, public_now(table), "live screen")
                    screens += 1
            await settle(pilot)
            final = screen_text(app)
            assert model.phase == "over" and model.match_over
            ended = hand.hands
            for s in model.seats:
                assert sorted(s.revealed or ()) == sorted(ended[s.seat])
                for code in ended[s.seat]:
                    assert label(code) in " ".join(final.split())
            check_snapshot("watch_hand_over", final)
            await pilot.press("q")
        assert screens >= 3
        assert app.checked >= 20 and app.cards_named >= 20


async def test_follow_a_match_from_its_start() -> None:
    async with live_server() as live:
        mid = await live.create(["gate", HEURISTIC, RANDOM, HEURISTIC], seed=12)
        table = live.table(mid)
        while table.state == 1:
            await asyncio.sleep(0.02)
        app = CheckedWatch(live.addr, ADMIN, match_id=mid, pace=0.003, tables=live.table)
        seen_in_play = 0
        async with app.run_test(size=SIZE) as pilot:
            follower = app.followers[mid]
            while not follower.ended:
                await pilot.pause(0.01)
                m = follower.model
                if m is not None and m.in_hand and not follower.caught_up:
                    seen_in_play += 1
                    assert "replaying from the start" in screen_text(app)
            await pilot.pause()
            assert follower.model is not None and follower.model.match_over
            await pilot.press("q")
        assert seen_in_play >= 3  # the hand was shown as it went, not only its end
        assert app.checked >= 20


async def test_a_tournaments_tables() -> None:
    async with live_server(hold_at=3) as live:
        labels = {"tournament": "cup"}
        m1 = await live.create(
            ["gate", HEURISTIC, RANDOM, HEURISTIC], seed=21, labels={**labels, "table": "1"}
        )
        m2 = await live.create(
            [HEURISTIC, "gate", HEURISTIC, RANDOM], seed=22, labels={**labels, "table": "2"}
        )
        other = await live.create([HEURISTIC, HEURISTIC, RANDOM, RANDOM], seed=23)
        await live.until_held()
        app = CheckedWatch(live.addr, ADMIN, labels=labels, poll_s=0.05, tables=live.table)
        async with app.run_test(size=SIZE) as pilot:
            await until(
                pilot,
                lambda: (
                    len(app.followers) == 2 and all(f.caught_up for f in app.followers.values())
                ),
            )
            assert {f.match_id for f in app.followers.values()} == {m1, m2}
            assert other not in {f.match_id for f in app.followers.values()}
            await until(pilot, lambda: len(app.query(".card")) == 2)

            def both_held_and_shown() -> bool:
                # both tables stand still at the gate, and each card has drawn their last event
                return live.gate.holding == {m1, m2} and all(
                    f.model is not None
                    and f.model.last_sequence == last_seen_by_spectators(live.table(f.match_id))
                    for f in app.followers.values()
                )

            await until(pilot, both_held_and_shown)
            text = screen_text(app)
            assert "table 1" in text and "table 2" in text
            # two tables on one screen: each card was checked alone when drawn (CheckedWatch)
            both = public_now(live.table(m1)) | public_now(live.table(m2))
            check_no_hidden(text, both, "tables view")
            check_snapshot("watch_tables", text)
            await pilot.press("2")
            await settle(pilot)
            one = screen_text(app)
            assert "table 2" in one and "What happened" in one
            await pilot.press("escape")
            await settle(pilot)
            assert "table 1" in screen_text(app)
            live.gate.open()
            await until(pilot, lambda: all(f.ended for f in app.followers.values()))
            await pilot.press("q")
        assert app.checked >= 10


async def test_a_table_in_play_is_shown_before_finished_ones() -> None:
    """Watching every table, the finished matches filled the nine places (oldest match ids
    first) and a newer match in play never appeared: tables in play come first now."""
    async with live_server(hold_at=3) as live:
        finished = [
            await live.create([HEURISTIC, RANDOM, HEURISTIC, RANDOM], seed=40 + i)
            for i in range(MAX_TABLES + 1)
        ]
        watch = Stall(live.progress)
        while any(m in live.server.arena.running for m in finished):
            watch.check("waiting for the built-in bots' matches to finish")
            await asyncio.sleep(0.02)
        running = await live.create(["gate", HEURISTIC, RANDOM, HEURISTIC], seed=60)
        await live.until_held()
        app = WatchApp(live.addr, ADMIN, poll_s=0.05)
        async with app.run_test(size=SIZE) as pilot:

            def shown() -> set[str]:
                return {f.match_id for f in app.followers.values()}

            await until(
                pilot,
                lambda: (
                    len(app.followers) == MAX_TABLES
                    and all(f.caught_up for f in app.followers.values())
                ),
                stall=15,
            )
            assert running in shown(), sorted(shown())
            assert len(app.query(".card")) == MAX_TABLES
            # the finished ones fill the other places, the newest first
            assert shown() - {running} == set(finished[-(MAX_TABLES - 1) :])
            live.gate.open()
            await pilot.press("q")


async def test_the_check_sees_a_hidden_card() -> None:
    """Break on purpose: a screen that names a card some seat holds unseen fails the check."""
    async with live_server(hold_at=3) as live:
        mid = await live.create(["gate", HEURISTIC, RANDOM, HEURISTIC], seed=11)
        await live.until_held()
        table = live.table(mid)
        public = public_now(table)
        hidden = [c for h in table.match.hand.hands for c in h if c not in public]
        assert hidden
        shown = next(iter(public))
        assert check_no_hidden(f"seat 1 played {label(shown)}", public, "public card") == 1
        with pytest.raises(AssertionError, match="hidden card"):
            check_no_hidden(f"seat 2 holds {label(hidden[0])}", public_now(table), "leak")


async def test_an_unknown_match_is_said() -> None:
    """The screen closes by itself and the command says it (tests/play/test_examined_cli.py)."""
    async with live_server() as live:
        app = WatchApp(live.addr, ADMIN, match_id="m999999-nothere")
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: bool(app.error))
        assert "no match 'm999999-nothere' on this server" in app.error and not app.is_running
        bad = WatchApp(live.addr, "wrong-admin-token", match_id="m1")
        async with bad.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: bool(bad.error))
        assert "admin token" in bad.error and not bad.is_running


async def test_a_status_update_after_the_app_closed_is_dropped() -> None:
    """A worker's last update can land after the screen is gone (a slow machine closing the
    app mid-poll); it is dropped, not raised as WorkerFailed over the real outcome."""
    app = WatchApp("127.0.0.1:1", "admin-token-1234", poll_s=5)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
    app._status()  # no NoMatches


async def test_a_server_that_cannot_be_reached_is_said_where_it_can_be_read() -> None:
    """Watching every table of a server nobody listens at showed "No matches in play yet"
    forever: the error was at the end of the status line, past an 80-column terminal's edge.
    A server never reached is now a wrong address: the screen closes and the command says it
    in one line (a server reached once and then lost is asked again and again)."""
    app = WatchApp("127.0.0.1:1", "admin-token-1234", poll_s=5)
    async with app.run_test(size=(80, 24)) as pilot:
        await until(pilot, lambda: bool(app.error))
    assert not app.is_running
    assert "uno-arena serve" in app.error and "--server HOST:PORT" in app.error
