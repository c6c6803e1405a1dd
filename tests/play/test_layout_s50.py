"""Examined (s50): the play and watch screens in small terminals, and their wording.

* At 40 columns the Seats panel showed no names, no ▶ and no "(you)" (the fixed columns took
  the width); at 30 rows the "Legal moves" line was below the screen's edge. Now the seat number
  moves in front of the name, the points give way first, a long name is cut with … before its
  "(you)" is; a narrow terminal stacks the Seats and Table panels, a short one gives the panels
  only a top border and lets the log give way first.
* The status bar put the match id and the server address before the hand and the state, so at
  100 columns "ended" was cut off: the state now comes first, and the bar ends in … if cut.
* ``tournament watch`` printed 120-column lines into a 40-column terminal (every row wrapped,
  and the path in the heading broke mid-word).
* An unknown match said ``NOT_FOUND: ... ListMatches shows the ones it knows``; ``/api/matches``
  named seats "heuristic", "heuristic" where the screens say "heuristic #1", "heuristic #3";
  a player named ``me`` read "challenged me's Wild Draw Four".

The screens are drawn headless (Textual's pilot) from a model set by hand: no server, no clock.
"""

from __future__ import annotations

import asyncio
import fcntl
import io
import os
import re
import struct
import termios
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from textual import events, on

from uno_server.engine import actions as A
from uno_server.engine import cards as C
from uno_server.gen.uno.v1 import admin_pb2, bot_pb2, game_pb2
from uno_server.play.app import PlayApp
from uno_server.play.follow import Follower, model_for
from uno_server.play.human import NO_DEADLINE_MS, Decision
from uno_server.play.model import SPECTATOR, TableModel
from uno_server.play.render import seats_table, table_text
from uno_server.play.session import PlayOptions
from uno_server.play.watch import WatchApp
from uno_server.web.server import match_json
from uno_tournament.config import BotSpec, TournamentConfig
from uno_tournament.store import HandRecord, SeatRecord, Store
from uno_tournament.watch import watch

from .live import ADMIN, live_server
from .snap import screen_text, settle

NAMES = ["me", "heuristic", "heuristic", "a-very-long-bot-name-indeed"]
HAND = ["red_9", "yellow_4", "yellow_5", "yellow_9", "yellow_draw_two", "blue_2", "blue_5"]
MATCH_ID = "m000001-abcdef"


def table_model(viewer: int = 0) -> TableModel:
    """Seat 0 ("me", the viewer) to play, seven cards each, a yellow 2 on top."""
    model = TableModel(list(NAMES), viewer=viewer)
    model.match_id = MATCH_ID
    model.phase = "turn"
    model.hand_number = 1
    model.dealer = 3
    model.current = 0
    model.top = C.parse("yellow_2")
    model.color = 1
    model.discard = 1
    for s in model.seats:
        s.cards = 7
    if viewer == 0:
        model.hand = sorted(C.parse(c) for c in HAND)
    return model


def turn_request(model: TableModel) -> bot_pb2.DecisionRequest:
    req = bot_pb2.DecisionRequest(
        prompt=bot_pb2.PROMPT_TURN, required=True, match_id=MATCH_ID, time_left_ms=NO_DEADLINE_MS
    )
    req.legal_actions.add(id=A.DRAW, kind=game_pb2.ACTION_KIND_DRAW, description="draw")
    for code in model.hand:
        if code >> 4 == 1 or code & 15 == 2:  # yellow, or a 2
            a = req.legal_actions.add(id=A.PLAY_BASE + code, kind=game_pb2.ACTION_KIND_PLAY)
            a.card.code = code
    return req


def render(renderable: Any, width: int) -> list[str]:
    console = Console(width=width, file=io.StringIO(), record=True, legacy_windows=False)
    console.print(renderable)
    return [line.rstrip() for line in console.export_text().splitlines()]


# ------------------------------------------------------------------ the Seats panel by itself


@pytest.mark.parametrize("width", [20, 26, 36, 38, 46, 56])
def test_every_seat_keeps_its_name_arrow_and_you_at_any_width(width: int) -> None:
    """20: a 24-column terminal; 26: the panel beside the Table at 60 columns; 36-38: a
    40-column terminal (stacked); 56: 120 columns (the full table)."""
    model = table_model()
    lines = render(seats_table(model), width)
    assert len(lines) == 1 + len(NAMES), lines  # a header and one line a seat: nothing wraps
    assert all(len(line) <= width for line in lines), lines
    rows = lines[1:]
    assert rows[0].lstrip().startswith("▶"), rows  # seat 0 is to play
    assert "(you)" in rows[0], rows
    assert "me" in rows[0].replace("(you)", ""), rows
    for seat, name in enumerate(model.names[1:3], start=1):
        # "heuristic #1", "heuristic #2": whole from a 30-column terminal up; the seat number
        # in front tells them apart when a tinier one cuts them
        assert name in rows[seat] or (width < 26 and f"{seat} heur" in rows[seat]), (name, rows)
    long = rows[3]
    assert "a-very" in long and ("indeed" in long or "…" in long), rows
    assert all(row.rstrip().endswith("7") or " 7 " in row for row in rows), rows  # the counts


def test_a_long_name_is_cut_before_its_you_is() -> None:
    model = TableModel(["someone-with-a-rather-long-name", "ai-1"], viewer=0)
    model.phase, model.current = "turn", 1
    for width in (20, 30, 40):
        row = render(seats_table(model), width)[1]
        assert "… (you)" in row, (width, row)


@pytest.mark.parametrize("width", [24, 30])
def test_the_table_panel_says_the_direction_and_piles_on_one_line_each(width: int) -> None:
    lines = render(table_text(table_model(), width=width), width)
    assert any(line.startswith("Direction 0 → 1 → 2 → 3") for line in lines), lines
    assert not any(line.startswith("(seat") or line.startswith("pile") for line in lines), lines
    compact = render(table_text(table_model(), width=width, compact=True), width)
    assert len(compact) < len(lines), (compact, lines)


# ------------------------------------------------------------------ the play screen, headless


class StillTable(PlayApp):
    """The play screen with no table behind it: the test sets the model and the decision."""

    async def _run_table(self) -> None:
        return None


class FakeSession:
    addr = "uno-arena.example.org:50051"
    can_create = False
    failure = ""

    async def close(self) -> None:
        return None


async def play_screen(size: tuple[int, int]) -> str:
    app = StillTable(PlayOptions(practice=True, name="me"))
    async with app.run_test(size=size) as pilot:
        model = table_model()
        app.session = FakeSession()  # type: ignore[assignment]
        app.match_id = MATCH_ID
        app.model = model
        app.decision_ms = NO_DEADLINE_MS
        future: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        app.decision = Decision(turn_request(model), future)
        app._refresh()
        await settle(pilot)
        text = screen_text(app)
        app.session = None
        future.cancel()
    return text


SIZES = [(40, 30), (60, 30), (80, 30), (40, 24), (60, 24), (80, 24), (100, 30), (120, 42)]


@pytest.mark.asyncio
@pytest.mark.parametrize("size", SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
async def test_the_play_screen_keeps_names_and_legal_moves_in_a_small_terminal(
    size: tuple[int, int],
) -> None:
    width, height = size
    text = await play_screen(size)
    lines = text.splitlines()
    assert len(lines) == height and all(len(line) <= width for line in lines), text
    mine = [line for line in lines if "me (you)" in line]
    assert len(mine) == 1 and "▶" in mine[0], text  # the person's seat, to play
    for name in ("heuristic #1", "heuristic #2", "a-very"):
        assert name in text, (name, text)
    moves = [i for i, line in enumerate(lines) if "Legal moves:" in line]
    assert moves, f"no Legal moves line at {width}x{height}:\n{text}"
    assert moves[0] < height - 1, text  # above the footer
    assert "d draw" in lines[moves[0]], text
    if height >= 30 or width >= 60:  # the clock too
        assert "Clock:" in text, text
    status = lines[0]
    assert re.match(r" UNO Arena +· +hand 1 +· +practice", status), status


@pytest.mark.asyncio
async def test_the_play_status_bar_keeps_the_hand_and_pace_before_the_address() -> None:
    text = await play_screen((100, 30))
    status = text.splitlines()[0].strip()
    assert "hand 1" in status and "10 min a move" in status, status
    assert status.endswith("…"), status  # cut where it says so, in the address or match id


# ------------------------------------------------------------------ the watch screen, headless


class StillWatch(WatchApp):
    """The watch screen following one ended match it was handed: no server."""

    def __init__(self, follower: Follower, **kwargs: Any) -> None:
        super().__init__("uno-arena.example.org:50051", ADMIN, match_id=MATCH_ID, **kwargs)
        self.follower = follower

    @on(events.Mount)
    async def still(self, event: events.Mount) -> None:
        event.prevent_default()  # not WatchApp's on_mount: it would follow the match on a server
        self.followers[MATCH_ID] = self.follower
        self.focus_key = MATCH_ID
        await self._show()
        self._status()


def ended_follower() -> Follower:
    info = admin_pb2.MatchInfo(
        match_id=MATCH_ID,
        labels={"tournament": "spring-cup-2026", "table": "12"},
        state=admin_pb2.MATCH_STATE_FINISHED,
    )
    f = Follower(None, MATCH_ID)  # type: ignore[arg-type]
    f.info, f.model, f.caught_up, f.ended = info, table_model(viewer=SPECTATOR), True, True
    return f


@pytest.mark.asyncio
@pytest.mark.parametrize("size", [(100, 30), (80, 24), (40, 30)])
async def test_the_watch_status_bar_says_ended_before_the_long_parts(
    size: tuple[int, int],
) -> None:
    app = StillWatch(ended_follower())
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        text = screen_text(app)
    status = text.splitlines()[0].strip()
    assert "ended" in status and "hand 1" in status, status
    assert status.index("ended") < status.index("hand 1"), status
    assert "▶" in text and "heuristic #1" in text, text  # the seats, at 40 columns too


# ------------------------------------------------------------------ tournament watch


def _tournament(folder: Path, bots: list[str]) -> Store:
    specs = tuple(BotSpec(n, ("x",), "/", {}, "", False) for n in bots)
    config = TournamentConfig(name="t", bots=specs)
    store = Store.create(folder, {"tournament_id": "t", "config": config.to_dict()})
    for i in range(48):
        winner = (i * 7) % 3
        losers = [s for s in range(4) if s != winner]
        places = [1 if s == winner else 2 + losers.index(s) for s in range(4)]
        store.add_hand(
            HandRecord(
                hand_id=f"t/t0/b0/d{i // 4}/r{i % 4}",
                table=0,
                block=0,
                deal=i // 4,
                rotation=i % 4,
                deal_id=f"t/t0/b0/d{i // 4}",
                match_seed=i,
                hand_seed=i,
                dealer=0,
                match_id=f"m{i}",
                winner_seat=winner,
                moves=30,
                duration_s=0.1,
                seats=[
                    SeatRecord(
                        seat=s,
                        bot=b,
                        place=places[s],
                        points_left=0 if s == winner else 5 + s,
                        points_won=20 if s == winner else 0,
                    )
                    for s, b in enumerate(bots)
                ],
                replay={"hand_id": f"t/t0/b0/d{i // 4}/r{i % 4}"},
            )
        )
    return store


class Terminal(io.StringIO):
    """What ``tournament watch`` writes to: a terminal of ``columns`` (a pseudo-terminal's
    window size, so ``os.get_terminal_size`` reads it), its text kept here."""

    def __init__(self, columns: int) -> None:
        super().__init__()
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, columns, 0, 0))

    def isatty(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.slave

    def close(self) -> None:
        os.close(self.master)
        os.close(self.slave)
        super().close()


@pytest.mark.parametrize("columns", [40, 32])
def test_tournament_watch_fits_a_narrow_terminal(tmp_path: Path, columns: int) -> None:
    bots = ["py-blunders-50", "heuristic-with-a-long-name", "randomly", "gatekeeper-2"]
    store = _tournament(tmp_path / "some-long-folder" / "run2", bots)
    out = Terminal(columns)
    try:
        assert watch(store, once=True, stream=out) == 0
        text = out.getvalue()
    finally:
        out.close()
        store.close()
    lines = re.sub(r"\x1b\[[0-9;]*m", "", text).splitlines()  # a terminal's: in colour
    assert all(len(line) <= columns for line in lines), "\n".join(lines)
    assert "" not in lines, text  # no row wrapped onto a line of its own
    head = lines[0]
    if columns >= 40:
        assert "(…/run2/tournament.sqlite)" in head, head
    assert "some-long-folder" not in text, text  # shortened, not broken over two lines
    for bot in bots:  # one line a bot: whole, or cut with …
        rows = [line for line in lines if re.match(r"\d", line) and bot[:6] in line]
        assert len(rows) == 1, (bot, text)
        assert bot in rows[0] or "…" in rows[0], (bot, text)


def test_tournament_watch_into_a_pipe_keeps_its_lines_whole(tmp_path: Path) -> None:
    store = _tournament(tmp_path / "run2", ["py-blunders-50", "b", "c", "d"])
    out = io.StringIO()
    try:
        assert watch(store, once=True, stream=out) == 0
    finally:
        store.close()
    text = out.getvalue()
    assert str(tmp_path / "run2") in text.splitlines()[0]
    assert "py-blunders-50" in text and "95% CI" in text, text


# ------------------------------------------------------------------ wording


@pytest.mark.asyncio
async def test_an_unknown_match_says_what_to_do_next() -> None:
    async with live_server() as live:
        app = WatchApp(live.addr, ADMIN, match_id="x")
        async with app.run_test(size=(100, 30)):
            for _ in range(3000):  # ends by itself: the first answer is the refusal
                if app.error:
                    break
                await asyncio.sleep(0.01)
    assert not app.is_running
    assert "NOT_FOUND" not in app.error and "ListMatches" not in app.error, app.error
    assert "no match 'x' on this server" in app.error, app.error
    assert f"run `uno-arena watch --server {live.addr} --admin-token TOKEN` without a match id" in (
        app.error
    )


def test_api_matches_names_seats_as_the_screens_do() -> None:
    heuristic = game_pb2.Player(builtin=game_pb2.BUILTIN_BOT_HEURISTIC)
    info = admin_pb2.MatchInfo(
        match_id=MATCH_ID,
        seats=[
            admin_pb2.MatchSeat(seat=0, player=game_pb2.Player(bot_name="gate")),
            admin_pb2.MatchSeat(seat=1, player=heuristic),
            admin_pb2.MatchSeat(seat=2, player=game_pb2.Player(bot_name="me")),
            admin_pb2.MatchSeat(seat=3, player=heuristic),
        ],
    )
    assert match_json(info)["seats"] == model_for(info).names
    assert match_json(info)["seats"] == ["gate", "heuristic #1", "me", "heuristic #3"]


@pytest.mark.parametrize("viewer", [SPECTATOR, 2, 3])
@pytest.mark.parametrize("bluff", [True, False])
def test_no_possessive_on_a_players_name(viewer: int, bluff: bool) -> None:
    model = TableModel(["heuristic", "heuristic", "heuristic", "me"], viewer=viewer)
    event = game_pb2.ChallengedEvent(challenger=2, offender=3, bluff=bluff)
    line = model.apply(game_pb2.Event(sequence=1, hand_number=1, challenged=event))
    assert line is not None
    assert "'s " not in line.text, line.text
    if viewer == 3:
        assert line.text.startswith("heuristic #2 challenged your Wild Draw Four: "), line.text
    elif viewer == 2:
        assert line.text.startswith("You challenged the Wild Draw Four from me: "), line.text
    else:
        assert line.text.startswith("heuristic #2 challenged the Wild Draw Four from me: ")
