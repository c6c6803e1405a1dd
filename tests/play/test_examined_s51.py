"""Examined (session 51): the play and watch screens.

* A person whose time runs out is told so, and what was played for them, before the log says
  what that move did (it read "You drew red 0." as if they had chosen it).
* A finished match the server still lists but whose events it freed: ``watch ID`` says it is
  too old to replay (not "no match"), and the tables view leaves it out.
* ``watch``'s tables view shows the tables in play first (keys 1.. open them), not last.
* ``watch``'s hint for an unknown match is a command that works (it names the admin token).
* Ctrl-C quits ``play`` and ``watch`` as q does (it showed Textual's "press ctrl+q" toast).
"""

from __future__ import annotations

import asyncio
import os
import re
import shlex
import subprocess
import time
from typing import Any

import grpc
import pytest

from uno_server.cli import build_parser
from uno_server.engine import events as E
from uno_server.gen.uno.v1 import game_pb2
from uno_server.play.app import PlayApp
from uno_server.play.cli import cmd_watch
from uno_server.play.follow import Follower
from uno_server.play.session import PlayOptions
from uno_server.play.watch import MAX_TABLES, WatchApp, error_text

from .helpers import Stall
from .live import ADMIN, arena_table, live_server
from .snap import screen_text, settle
from .test_examined_cli import _ends
from .test_signals import SCREEN_S, UNO_ARENA, check_restored, close_pty, read_pty, spawn_in_pty
from .test_watch import until

pytestmark = pytest.mark.asyncio
SIZE = (120, 42)
HEURISTIC = game_pb2.BUILTIN_BOT_HEURISTIC
RANDOM = game_pb2.BUILTIN_BOT_RANDOM


def log_text(app: Any) -> list[str]:
    """The "What happened" log's lines as written (a wrapped line is one entry per row)."""
    from textual.widgets import RichLog

    log = app.query_one("#log", RichLog)
    return [strip.text.rstrip() for strip in log.lines]


def play_progress(app: PlayApp) -> tuple[object, ...]:
    d = app.decision
    seq = app.model.last_sequence if app.model is not None else -1
    return (app.match_id, seq, id(d) if d is not None else None, len(app.sent), app.result)


# ------------------------------------------------------------------ 1. the person's time ran out


async def test_a_move_the_time_ran_out_on_is_said_before_what_it_did() -> None:
    """The examiner's repro (seed 7, three heuristic bots) with a short clock: the person
    presses nothing, the seat draws and then keeps and passes for them; the log says that the
    time ran out before the line of the move it caused, and the moves panel says it too."""
    app = PlayApp(
        PlayOptions(seats=["me", "heuristic", "heuristic", "heuristic"], decision_ms=1500, seed=7)
    )
    async with app.run_test(size=SIZE) as pilot:
        watch = Stall(lambda: play_progress(app))

        def passed_for_me() -> bool:
            return any("kept the drawn card and passed for you" in line for line in log_text(app))

        while not passed_for_me():
            assert not app.result, "the match ended before the person's time ran out twice"
            watch.check(lambda: f"waiting for two time-outs; screen:\n{screen_text(app)}")
            await pilot.pause(0.02)
        # and the log has caught up with what the server did for the person
        session = app.session
        assert session is not None and session.server is not None
        table = arena_table(session.server.arena, app.match_id)
        seat = app.model.viewer if app.model is not None else -1
        while not any("You kept" in line for line in log_text(app)):
            watch.check(lambda: f"waiting for the pass in the log; screen:\n{screen_text(app)}")
            await pilot.pause(0.02)
        lines = log_text(app)
        # the moves panel says it too, until the person answers again
        await settle(pilot, lambda text: "Your time ran out: " in text.split("Your move", 1)[-1])
        await pilot.press("q")
    assert app.sent == [], "the person pressed nothing"
    drew = next(i for i, line in enumerate(lines) if "drew a card for you" in line)
    passed = next(i for i, line in enumerate(lines) if "passed for you" in line)
    you_drew = next(
        i for i, line in enumerate(lines) if line.startswith("You drew") and "deal" not in line
    )
    you_kept = next(i for i, line in enumerate(lines) if line.startswith("You kept"))
    # cause before effect: the note, then the move it made; the draw before the pass
    assert drew < you_drew < passed < you_kept, "\n".join(lines)
    assert "Your time ran out" in lines[drew], lines
    # the server applied exactly those two moves for the person's seat, in that order
    mine = [r.event for r in table.records if getattr(r.event, "seat", -2) == seat]
    kinds = [type(e) for e in mine if isinstance(e, (E.Drew, E.Passed, E.Played))]
    assert kinds[:2] == [E.Drew, E.Passed], mine


# ------------------------------------------------------------ 2. matches too old to replay


async def test_watch_says_a_listed_match_is_too_old_and_lists_only_what_it_can_show() -> None:
    """The server lists a finished match longer than it keeps its events (tests/web/
    test_examined_s51.py). ``watch ID`` said "no match" for an id the list showed; it says the
    match ended too long ago to replay now. The tables view shows only the tables it can
    replay: a card that could never show its table gives its place to one that can."""
    async with live_server() as live:
        live.server.arena.config.log_linger_matches = 2
        mids = []
        for i in range(4):
            mids.append(await live.create([HEURISTIC, RANDOM, HEURISTIC], seed=90 + i))
            watch = Stall(live.progress)
            while mids[-1] in live.server.arena.running:
                watch.check("waiting for the match to finish")
                await asyncio.sleep(0.02)
        arena = live.server.arena
        kept = [m for m in mids if arena.finished[m].table is not None]
        assert kept == mids[-2:]
        error = await _ends(WatchApp(live.addr, ADMIN, match_id=mids[0]))
        assert f"match {mids[0]!r} ended too long ago to replay" in error, error
        assert "no match" not in error and "--admin-token TOKEN" in error, error
        app = WatchApp(live.addr, ADMIN, poll_s=0.05)
        async with app.run_test(size=SIZE) as pilot:
            await until(
                pilot,
                lambda: (
                    {f.match_id for f in app.followers.values()} == set(kept)
                    and all(f.caught_up and not f.error for f in app.followers.values())
                    and len(app.query(".card")) == len(kept)
                ),
            )
            text = screen_text(app)
            await pilot.press("q")
        assert "too long ago" not in text and "no match" not in text, text
        assert app.expired == set(mids[:2])


# ------------------------------------------------------------------ 3. tables in play first


async def test_the_table_in_play_is_card_1_before_eight_finished_ones() -> None:
    """Eight finished matches and one in play (the newest id): the examiner found it on card 9,
    the cards sorted by id. It is card 1 now, key 1 opens it, and the finished ones follow, the
    most recent first."""
    async with live_server(hold_at=3) as live:
        finished = [
            await live.create([HEURISTIC, RANDOM, HEURISTIC, RANDOM], seed=70 + i)
            for i in range(MAX_TABLES - 1)
        ]
        watch = Stall(live.progress)
        while any(m in live.server.arena.running for m in finished):
            watch.check("waiting for the built-in bots' matches to finish")
            await asyncio.sleep(0.02)
        running = await live.create(["gate", HEURISTIC, RANDOM, HEURISTIC], seed=80)
        await live.until_held()
        app = WatchApp(live.addr, ADMIN, poll_s=0.05)
        async with app.run_test(size=SIZE) as pilot:
            await until(
                pilot,
                lambda: (
                    len(app.query(".card")) == MAX_TABLES
                    and all(f.caught_up for f in app.followers.values())
                ),
            )
            cards = list(app.query(".card"))
            titles = [str(card.border_title) for card in cards]
            shown = [f.match_id for _, f in app._ordered()]
            await pilot.press("1")
            await settle(pilot)
            opened = app.focus_key
            one = screen_text(app)
            live.gate.open()
            await pilot.press("q")
        assert titles[0].startswith("1  ") and running in titles[0], titles
        assert shown == [running, *reversed(finished)], (shown, finished)
        for i, (title, mid) in enumerate(zip(titles, shown, strict=True), start=1):
            assert title.startswith(f"{i}  ") and mid in title, titles
        assert opened is not None and app.followers[opened].match_id == running
        assert running in one and "What happened" in one


# ------------------------------------------------------------- 4. the hint is a command that works


def _hinted(error: str) -> list[str]:
    """The arguments of the ``uno-arena watch`` command an error says to run."""
    found = re.search(r"`uno-arena (watch [^`]*)`", error)
    assert found, error
    return shlex.split(found.group(1))


async def test_the_hint_for_an_unknown_match_is_a_command_that_works(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """It said `uno-arena watch --server HOST:PORT` without a match id, which the command
    refuses without an admin token. Typed as said (TOKEN replaced by the admin token), the hint
    now lists the matches; the token itself is never printed."""
    monkeypatch.delenv("UNO_ARENA_ADMIN_TOKEN", raising=False)
    async with live_server(hold_at=1) as live:
        mid = await live.create(["gate", HEURISTIC], seed=5)
        await live.until_held()
        error = await _ends(WatchApp(live.addr, ADMIN, match_id="m999999-nothere"))
        assert "no match 'm999999-nothere' on this server" in error, error
        assert ADMIN not in error
        argv = _hinted(error)
        args = build_parser().parse_args([ADMIN if a == "TOKEN" else a for a in argv])
        assert args.func is cmd_watch and args.match_id is None
        assert args.admin_token == ADMIN and args.server == live.addr
        # and what it opens lists the match in play
        app = WatchApp(args.server, args.admin_token, match_id=args.match_id, poll_s=0.05)
        async with app.run_test(size=SIZE) as pilot:
            watch = Stall(lambda: (app.error, sorted(app.followers)))
            while mid not in {f.match_id for f in app.followers.values()}:
                assert not app.error, app.error
                watch.check("waiting for the hinted command to list the match")
                await pilot.pause(0.02)
        # the other way the hint names: the token from the environment, --admin-token left out
        assert "UNO_ARENA_ADMIN_TOKEN" in error
        monkeypatch.setenv("UNO_ARENA_ADMIN_TOKEN", ADMIN)
        i = argv.index("--admin-token")
        args = build_parser().parse_args(argv[:i] + argv[i + 2 :])
        assert args.admin_token == ADMIN


async def test_the_hint_names_the_tls_ca_given() -> None:
    follower = Follower(
        spectator=None,  # type: ignore[arg-type]
        match_id="m1",
        error="NOT_FOUND: match m1 not found",
        error_code=grpc.StatusCode.NOT_FOUND,
    )
    argv = _hinted(error_text(follower, "arena.example.org:50051", "/etc/uno/ca.pem"))
    assert argv[argv.index("--tls-ca") + 1] == "/etc/uno/ca.pem"
    assert argv[argv.index("--server") + 1] == "arena.example.org:50051"
    assert "--admin-token" in argv


# ------------------------------------------------------------------ 5. Ctrl-C quits


async def _until_quit_or_told(app: Any) -> None:
    """Wait until the app has stopped, or has shown a notification (Textual's "Do you want to
    quit? Press ctrl+q" toast): one of the two follows a Ctrl-C."""
    watch = Stall(lambda: (app.is_running, len(app._notifications)))
    while app.is_running and not app._notifications:
        watch.check("waiting for the app to stop or to show a notification")
        await asyncio.sleep(0.02)


async def test_ctrl_c_quits_play_as_q_does() -> None:
    app = PlayApp(PlayOptions(seats=["me", "ai"], practice=True, seed=3))
    async with app.run_test(size=SIZE) as pilot:
        watch = Stall(lambda: play_progress(app))
        while app.model is None:  # the match is on the screen
            watch.check(lambda: f"waiting for the match; screen:\n{screen_text(app)}")
            await pilot.pause(0.02)
        await pilot.press("ctrl+c")
        await _until_quit_or_told(app)
        told = [n.message for n in app._notifications]
    assert not told, told
    assert not app.is_running
    assert app.session is None  # closed as q closes it: the seats and the embedded server


async def test_ctrl_c_quits_watch_as_q_does() -> None:
    async with live_server() as live:
        app = WatchApp(live.addr, ADMIN, poll_s=0.05)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.pause()
            await pilot.press("ctrl+c")
            await _until_quit_or_told(app)
            told = [n.message for n in app._notifications]
        assert not told, told
        assert not app.is_running


TOAST = b"Do you want to quit"
"""Textual's answer to Ctrl-C: a notification that says to press ctrl+q."""


def ctrl_c_in_pty(argv: list[str], ready: bytes) -> tuple[int | None, bytes]:
    """Run ``argv`` in a terminal; once it has written ``ready``, type Ctrl-C (the byte a
    terminal sends for it). Returns the exit status and everything it wrote."""
    fd, child = spawn_in_pty(argv)
    out = b""
    typed = False
    try:
        # the limits only turn a screen that never comes up, or never ends, into a failure
        end = time.monotonic() + SCREEN_S
        while time.monotonic() < end and child.poll() is None:
            if not typed and ready in out:
                os.write(fd, b"\x03")
                typed, end = True, time.monotonic() + SCREEN_S
            if typed and TOAST in out:  # told to press ctrl+q instead: it will not end
                break
            try:
                out += read_pty(fd)
            except OSError:  # the child closed the terminal
                break
        try:
            code: int | None = child.wait(timeout=SCREEN_S if typed and TOAST not in out else 0.1)
        except subprocess.TimeoutExpired:
            code = None
    finally:
        out += close_pty(fd, child)
    assert typed, f"the screen never came up:\n{out[-2000:]!r}"
    return code, out


async def test_ctrl_c_on_play_in_a_terminal_quits_and_restores_it() -> None:
    argv = [UNO_ARENA, "play", "--seats", "me", "ai", "--listen", "127.0.0.1:0", "--practice"]
    code, out = await asyncio.to_thread(ctrl_c_in_pty, argv, b"Your hand")
    assert TOAST not in out and code is not None, "Ctrl-C did not quit"
    check_restored(code, out)


async def test_ctrl_c_on_watch_in_a_terminal_quits_and_restores_it() -> None:
    async with live_server() as live:
        argv = [UNO_ARENA, "watch", "--server", live.addr, "--admin-token", ADMIN]
        code, out = await asyncio.to_thread(ctrl_c_in_pty, argv, b"watching")
    assert TOAST not in out and code is not None, "Ctrl-C did not quit"
    check_restored(code, out)
