"""Examined (session 52): the watch and play commands, and ``serve``'s bot names.

* ``watch --tournament``: a table whose latest match the server can no longer replay is left
  out, not shown with older and older matches of its own (the cards walked back through the
  table's history); opened before it goes, it says so and Esc goes back. A follower's update
  that arrives while a table's view is mounted but not yet composed no longer crashes the
  screen (``NoMatches: '.seats'``, exit status 0).
* ``serve --bot heuristic=TOKEN`` (or random, me, ai) is refused: ``match --seats`` and ``play
  --seats`` read those words as a built-in bot or a keyword, so the bot never played. A
  tournament's own server (its config file) still takes them.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Static

from uno_server.cli import build_parser, main
from uno_server.gen.uno.v1 import admin_pb2, game_pb2
from uno_server.play.follow import Follower, Spectator
from uno_server.play.model import LogLine
from uno_server.play.watch import TableView, WatchApp
from uno_server.service.auth import RESERVED_BOT_NAMES
from uno_server.service.main import ConfigError, config_from_args

from .helpers import Stall
from .live import ADMIN, live_server
from .snap import screen_text
from .test_watch import until

SIZE = (120, 42)
HEURISTIC = game_pb2.BUILTIN_BOT_HEURISTIC
RANDOM = game_pb2.BUILTIN_BOT_RANDOM
UNO_ARENA = Path(sys.executable).parent / "uno-arena"


class SeenWatch(WatchApp):
    """The watch screen, remembering every match it followed."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.seen: list[str] = []

    def _followed(self, follower: Follower, line: LogLine | None) -> None:
        if follower.match_id not in self.seen:
            self.seen.append(follower.match_id)
        super()._followed(follower, line)


def count_polls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A counter of the lists of matches asked for (the tables view asks once a poll)."""
    polls = [0]
    asked = Spectator.matches

    async def counted(self: Spectator, **kwargs: Any) -> list[admin_pb2.MatchInfo]:
        polls[0] += 1
        return await asked(self, **kwargs)

    monkeypatch.setattr(Spectator, "matches", counted)
    return polls


async def _two_tables(live: Any) -> tuple[list[str], list[str]]:
    """Two matches of a tournament's table 0, then two of its table 1, each finished; the
    server keeps the events of the last two only: table 0's latest match cannot be replayed."""
    live.server.arena.config.log_linger_matches = 2
    tables: list[list[str]] = [[], []]
    for table in (0, 1):
        for i in range(2):
            labels = {"tournament": "t52", "table": str(table)}
            mid = await live.create([HEURISTIC, RANDOM, HEURISTIC], seed=50 + i, labels=labels)
            tables[table].append(mid)
            watch = Stall(live.progress)
            while mid in live.server.arena.running:
                watch.check("waiting for the match to finish")
                await asyncio.sleep(0.02)
    kept = [m for m in (*tables[0], *tables[1]) if live.server.arena.finished[m].table]
    assert kept == tables[1], kept
    return tables[0], tables[1]


@pytest.mark.asyncio
async def test_a_table_too_old_to_replay_is_left_out_not_walked_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The examiner saw table 0 offered with m000016, then m000017 ... while m000024 was its
    latest match: each poll replaced the freed match with the table's previous one. The table
    is left out; no older match of it is ever followed (since session 54 its latest match is
    not followed either: the poll asks which matches are freed before following any)."""
    async with live_server() as live:
        zero, one = await _two_tables(live)
        polls = count_polls(monkeypatch)
        app = SeenWatch(live.addr, ADMIN, labels={"tournament": "t52"}, poll_s=0.05)
        async with app.run_test(size=SIZE) as pilot:
            await until(pilot, lambda: zero[1] in app.expired)
            then = polls[0]
            # more polls than the old walk back needed to reach the older match
            await until(
                pilot,
                lambda: (
                    polls[0] >= then + 4
                    and {f.match_id for f in app.followers.values()} == {one[1]}
                    and len(app.query(".card")) == 1
                ),
            )
            text = screen_text(app)
            await pilot.press("q")
        assert app.seen == [one[1]], app.seen  # never zero[1] (freed), never zero[0]
        assert "table 1" in text and "table 0" not in text, text


@pytest.mark.asyncio
async def test_opening_a_table_too_old_to_replay_says_so_and_esc_goes_back(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Key 2 on that table (its log freed after the poll asked, before the list drops it)
    opens its latest match and says it ended too long ago; Esc goes back to the tables. A
    follower's update that comes while a table's view is mounted but not yet composed is drawn
    once the view is ready (it was a NoMatches traceback, and the screen exited 0)."""
    async with live_server() as live:
        zero, _ = await _two_tables(live)

        async def none_freed(self: Spectator, infos: object, known: object = ()) -> set[str]:
            return set()  # as if the log were freed just after the poll asked

        monkeypatch.setattr(Spectator, "expired", none_freed)
        app = WatchApp(live.addr, ADMIN, labels={"tournament": "t52"}, poll_s=3600)
        async with app.run_test(size=SIZE) as pilot:
            await until(
                pilot,
                lambda: (
                    len(app.query(".card")) == 2
                    and all(f.ended for f in app.followers.values())
                    and "ended too" in screen_text(app)
                ),
            )
            numbers = {f.match_id: i for i, (_, f) in enumerate(app._ordered(), start=1)}
            await pilot.press(str(numbers[zero[1]]))
            await until(pilot, lambda: bool(app.query(TableView)))
            opened = seats_text(app.query_one(TableView))
            focused = app.followers[app.focus_key or ""]
            await pilot.press("escape")
            await until(pilot, lambda: len(app.query(".card")) == 2)
            # the race: a view registered but not composed, and its follower's update
            body = app.query_one("#body")
            view = TableView(focused)
            body.mount(view)  # not awaited: in the DOM, its children not composed yet
            app._draw(focused)
            await pilot.pause()
            assert "ended too long ago" in seats_text(view)
            await pilot.press("q")
        assert focused.match_id == zero[1], (focused.match_id, zero)
        assert f"match {zero[1]!r} ended too long ago to replay" in opened, opened
        assert opened.endswith("Esc goes back to all tables"), opened


def seats_text(view: TableView) -> str:
    """What a table's view says in its Seats panel (an error replaces the seats)."""
    return str(view.query_one(".seats", Static).content)


# ------------------------------------------------------------------ serve's reserved bot names


@pytest.mark.parametrize("name", RESERVED_BOT_NAMES)
def test_serve_refuses_a_bot_named_as_a_builtin_or_a_keyword(name: str) -> None:
    args = build_parser().parse_args(
        ["serve", "--admin-token", "admin-secret-1", "--bot", f"{name}=tok-1234567890"]
    )
    with pytest.raises(ConfigError) as caught:
        config_from_args(args)
    said = str(caught.value)
    assert said.startswith(f"--bot {name}: {name!r} is a reserved word"), said
    assert all(word in said for word in RESERVED_BOT_NAMES) and "another name" in said, said


def test_serve_refuses_it_with_one_line_and_exit_2() -> None:
    res = subprocess.run(
        [str(UNO_ARENA), "serve", "--port", "0", "--admin-token", "admin-secret-1",
         "--bot", "heuristic=tok-1234567890"],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert res.returncode == 2, res.stdout + res.stderr
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and "--bot heuristic:" in lines[0], res.stderr
    assert "serving" not in res.stdout


def test_a_tournaments_config_file_still_registers_a_bot_named_heuristic(
    tmp_path: Path,
) -> None:
    """A tournament starts its own server with ``serve --config FILE`` and seats its bots by
    name through CreateMatch, where a bot called heuristic plays as itself: the file keeps
    taking the name (tournament/uno_tournament/shard.py writes it)."""
    conf = tmp_path / "server.toml"
    conf.write_text(
        '[server]\nadmin_token = "admin-secret-1"\n[bots]\n"heuristic" = "tok-1234567890"\n'
    )
    args = build_parser().parse_args(["serve", "--config", str(conf)])
    assert config_from_args(args).bots == {"heuristic": "tok-1234567890"}


# ------------------------------------------------------------ play: the rules' ranges first


@pytest.mark.parametrize(
    ("rule", "said"),
    [
        ("hand_size=0", "--rule hand_size=0: must be 1-15, got 0"),
        ("hand_size=500", "--rule hand_size=500: must be 1-15, got 500"),
        ("decks=0", "--rule decks=0: must be 1 or 2, got 0"),
        ("hand_size=15", "--rule hand_size=15: 10 seats x 15 cards = 150 of the 108-card deck"),
    ],
)
def test_play_refuses_a_rule_out_of_range_before_any_screen(
    rule: str, said: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """It opened the screen, then exited 1 with "the server refused the match: rules.hand_size:
    must be 1-15, got 0". The ranges are checked first now: one line, exit 2, no screen."""
    import uno_server.play.cli as play_cli

    def no_screen(app: object) -> None:
        raise AssertionError("the screen opened")

    monkeypatch.setattr(play_cli, "terminal_problem", lambda: None)  # as in a terminal
    monkeypatch.setattr(play_cli, "run_screen", no_screen)
    seats = ["me", *["ai"] * 9] if rule == "hand_size=15" else ["me", "ai"]
    assert main(["play", "--seats", *seats, "--rule", rule]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"uno-arena play: {said}"), err


# -------------------------------------------------------- play and watch need a terminal


@pytest.mark.parametrize(
    "argv",
    [
        ["watch", "--server", "127.0.0.1:1", "--admin-token", "wrong-admin-token"],
        ["play", "--practice"],
    ],
)
def test_play_and_watch_refuse_to_draw_the_screen_into_a_file(
    argv: list[str], tmp_path: Path
) -> None:
    """``watch ... > o.txt`` wrote 71 lines of the screen's escape codes, the useful line last.
    With its output not a terminal the command says so in one line (exit 2) and draws
    nothing."""
    out = tmp_path / "o.txt"
    with out.open("w") as fh:
        res = subprocess.run(
            [str(UNO_ARENA), *argv],
            stdin=subprocess.DEVNULL, stdout=fh, stderr=subprocess.PIPE, text=True, timeout=60,
            check=False,
        )  # fmt: skip
    assert res.returncode == 2, res.stderr
    assert out.read_text() == ""
    lines = res.stderr.splitlines()
    assert len(lines) == 1 and "\x1b" not in res.stderr, res.stderr
    assert "stdout is not a terminal" in lines[0] and "run the command in a terminal" in lines[0]
