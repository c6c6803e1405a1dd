"""``uno-arena watch``: a live, read-only view of one match or of every table of a tournament.

It is a spectator: it reads ``AdminService.WatchMatch`` (public information while a hand runs,
every hand revealed when it ends) and ``ListMatches``, and asks ``AwaitMatch`` from a finished
match's last event whether its events are still kept; nothing else.

* With a match id it shows that table: seats and card counts, top card, colour, direction, the
  UNO window, what happened in words, and every hand once the hand is over.
* Without one it shows the tables in play (of one tournament with ``--tournament``), one card
  per table, following each table from match to match; 1-9 opens a table, Esc goes back. The
  tables in play come first, then the most recently finished ones that can still be replayed
  (the server lists a finished match longer than it keeps its events: each poll asks which
  before following any, see :meth:`~.follow.Spectator.expired`).

Joining a match in the middle replays its public events first, so the counts are right at once;
``--from-start`` replays them at a watchable pace instead.
"""

from __future__ import annotations

import asyncio
import shlex
import time
from collections.abc import Mapping
from typing import ClassVar

import grpc
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Grid, Horizontal, Vertical
from textual.css.query import NoMatches
from textual.widgets import Footer, RichLog, Static

from uno_server.gen.uno.v1 import admin_pb2
from uno_server.service.tlsclient import channel as tls_channel

from .cards import color_text, face
from .follow import Follower, Spectator, WatchError
from .history import FollowingLog
from .model import LogLine, TableModel
from .render import TableInfo, line_text, seats_table, status_line

MAX_TABLES = 9
SHORT = 30
"""Below this many rows a table says itself in fewer lines (see the play screen's)."""


def pick_tables(
    chosen: Mapping[str, admin_pb2.MatchInfo], followed: Mapping[str, Follower]
) -> list[str]:
    """The tables to show, at most :data:`MAX_TABLES`: ``chosen`` holds each table's match,
    newest table first. Tables in play come first (those already on the screen keep their
    place, then the newest); finished ones only fill the places left, newest first."""
    running = [k for k, i in chosen.items() if i.state == admin_pb2.MATCH_STATE_RUNNING]
    done = [k for k in chosen if chosen[k].state != admin_pb2.MATCH_STATE_RUNNING]
    running.sort(key=lambda k: k not in followed)  # a stable sort: newest first otherwise
    return (running + done)[:MAX_TABLES]


def table_key(info: admin_pb2.MatchInfo) -> str:
    """Matches of one tournament table share a key (labels ``tournament`` and ``table``)."""
    labels = info.labels
    if "table" in labels:
        return f"{labels.get('tournament', '')}/{labels['table']}"
    return info.match_id


def card_title(follower: Follower) -> str:
    info = follower.info
    labels = info.labels if info is not None else {}
    parts = []
    if "tournament" in labels:
        parts.append(f"{labels['tournament']}")
    if "table" in labels:
        parts.append(f"table {labels['table']}")
    parts.append(follower.match_id)
    return " · ".join(parts)


def error_text(
    follower: Follower, server: str = "HOST:PORT", tls_ca: str | None = None, *, then: str = ""
) -> str:
    """Why ``follower`` cannot follow its match, in words that say what to do next: an unknown
    match is not the server's raw refusal (a gRPC status name and an API's name). ``then`` says
    what to do next on a screen that lists the tables; without it, the command that lists them,
    as it works when typed: naming the admin token (never the token itself) and the
    ``--tls-ca`` given."""
    shown = follower.match_id if len(follower.match_id) <= 64 else follower.match_id[:64] + "…"
    if follower.error_code == grpc.StatusCode.NOT_FOUND and expired(follower):
        said = (
            f"match {shown!r} ended too long ago to replay: the server keeps a finished "
            "match's events only a short while after its end"
        )
    elif follower.error_code == grpc.StatusCode.NOT_FOUND:
        said = (
            f"no match {shown!r} on this server (unknown, or ended longer ago than the "
            "server keeps matches)"
        )
    elif follower.error_code == grpc.StatusCode.INVALID_ARGUMENT and follower.info is None:
        # the server refused the id itself: not its raw words (a status name, the field's name)
        said = f"no match {shown!r} on this server (a match id is 1-64 printable ASCII characters)"
    else:
        return follower.error
    return f"{said}; {then or list_hint(server, tls_ca)}"


def expired(follower: Follower) -> bool:
    """The server knows the match (its summary came first) but no longer keeps its events."""
    return follower.error_code == grpc.StatusCode.NOT_FOUND and follower.info is not None


def list_hint(server: str = "HOST:PORT", tls_ca: str | None = None) -> str:
    """What to run to list the matches in play, as a command that works."""
    tls = f" --tls-ca {shlex.quote(tls_ca)}" if tls_ca else ""
    return (
        f"run `uno-arena watch --server {server}{tls} --admin-token TOKEN` without a match id to "
        "list the matches in play (TOKEN: the server's admin token; or set "
        "UNO_ARENA_ADMIN_TOKEN and leave out --admin-token)"
    )


def compact(model: TableModel | None, follower: Follower) -> RenderableType:
    """One table in a few lines, for the tables view."""
    if follower.error:
        return Text(error_text(follower, then="the list drops it at its next update"), style="red")
    if model is None or not follower.caught_up:
        return Text("joining ...", style="italic")
    seats = Table(box=None, expand=True, pad_edge=False, show_header=False)
    seats.add_column(width=1, no_wrap=True)
    seats.add_column(ratio=1, no_wrap=True, overflow="ellipsis")
    seats.add_column(justify="right", width=3)
    seats.add_column(width=3)
    for s in model.seats:
        marker = "▶" if model.in_hand and s.seat == model.current else ""
        uno = "1!" if model.window == s.seat else ("UNO" if s.uno and s.cards == 1 else "")
        name = f"{s.seat} {model.names[s.seat]}" + (" (out)" if s.eliminated else "")
        seats.add_row(marker, name, str(s.cards), uno)
    body: list[RenderableType] = [seats]
    top = Text(f"hand {model.hand_number}  top ")
    top.append_text(face(model.top) if model.top >= 0 else Text("-"))
    top.append("  colour ")
    top.append_text(color_text(model.color))
    if model.phase == "over" and model.winner >= 0:
        top.append(f"  {model.who(model.winner)} won", style="bold green")
    body.append(top)
    recent = list(model.log)[-3:]
    body.extend(line_text(line) for line in recent)
    return Group(*body)


class TableView(Vertical):
    """One table, as in the play screen but with no hand and no moves."""

    DEFAULT_CSS = """
    TableView { height: 1fr; }
    TableView .upper { height: auto; }
    TableView .seats, TableView .table {
        width: 1fr; height: auto; border: round $primary; padding: 0 1;
    }
    TableView RichLog { height: 1fr; border: round $primary; padding: 0 1; }
    """

    def __init__(self, follower: Follower) -> None:
        super().__init__()
        self.follower = follower
        self._shown = 0

    def compose(self) -> ComposeResult:
        with Horizontal(classes="upper"):
            yield Static(classes="seats")
            yield Static(classes="table")
        yield FollowingLog(wrap=True, markup=False, max_lines=1000, auto_scroll=True)

    def on_mount(self) -> None:
        self.query_one(".seats").border_title = "Seats"
        self.query_one(".table").border_title = "Table"
        self.query_one(RichLog).border_title = "What happened"
        self.update()

    def update(self, now: float | None = None) -> None:
        f = self.follower
        model = f.model
        try:
            seats = self.query_one(".seats", Static)
            table = self.query_one(".table", Static)
            log = self.query_one(RichLog)
        except NoMatches:
            # mounted but not composed yet (its on_mount draws it), or being removed: a
            # follower's update came in between
            return
        if f.error:
            seats.update(Text(error_text(f, then="Esc goes back to all tables"), style="red"))
            return
        if model is None:
            seats.update(Text("joining ...", style="italic"))
            return
        seats.update(seats_table(model))
        table.update(TableInfo(model, now=now, compact=self.app.size.height < SHORT))
        if not log.size.width:  # not laid out yet: lines would wrap at a default width
            self.call_after_refresh(self.update, now)
            return
        lines = f.lines
        width = log.scrollable_content_region.width
        for line in lines[self._shown :]:
            log.write(line_text(line), width=width)
        self._shown = len(lines)


class WatchApp(App[None]):
    """A spectator's screen. ``match_id`` picks one match; otherwise every table in play."""

    TITLE = "UNO Arena · watch"
    CSS = """
    #status {
        height: 1; background: $boost; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis;
    }
    #tables { grid-size: 3; grid-gutter: 0 1; height: 1fr; }
    .card { border: round $primary; padding: 0 1; height: auto; }
    /* a narrow terminal: fewer cards a row, a table's seats above its top card */
    Screen.-narrow #tables { grid-size: 1; }
    Screen.-medium #tables { grid-size: 2; }
    Screen.-narrow TableView .upper { layout: vertical; }
    """
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (60, "-medium"), (100, "-wide")]  # noqa: RUF012
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("1", "open(1)", "open a table", key_display="1-9"),
        *(Binding(str(i), f"open({i})", f"table {i}", show=False) for i in range(2, 10)),
        Binding("escape", "back", "all tables"),
        Binding("q", "quit", "quit"),
        # Ctrl-C quits as q does (Textual's own binding only says to press ctrl+q)
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),
    ]

    def __init__(
        self,
        server: str,
        admin_token: str,
        *,
        match_id: str | None = None,
        labels: Mapping[str, str] | None = None,
        pace: float = 0.0,
        poll_s: float = 1.0,
        channel: grpc.aio.Channel | None = None,
        tls_ca: str | None = None,
    ) -> None:
        super().__init__()
        self.server = server
        self.tls_ca = tls_ca
        """``--tls-ca``: the server's CA certificate (PEM file) or ``system``; None: plaintext."""
        self.admin_token = admin_token
        self.match_id = match_id
        self.labels = dict(labels or {})
        self.pace = pace
        self.poll_s = poll_s
        self._channel = channel
        self._own_channel = channel is None
        self.spectator: Spectator | None = None
        self.followers: dict[str, Follower] = {}
        """Followed matches, by table key (or match id)."""
        self.focus_key: str | None = None
        self.in_play: set[str] = set()
        """The tables whose match ran at the last poll: their cards come first."""
        self.expired: set[str] = set()
        """Finished matches whose events the server no longer keeps: not offered as tables."""
        self.rank: dict[str, int] = {}
        """Each table's place at the last poll (:func:`pick_tables`: finished ones newest
        first)."""
        self.listed: int | None = None
        """How many matches (with :attr:`labels`) the server listed at the last poll; None
        before the first."""
        self.listed_expired = 0
        """How many of those can no longer be replayed."""
        self.error = ""
        self.updates = 0
        """Number of updates drawn (tests wait on it)."""

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        yield Vertical(id="body")
        yield Footer()

    async def on_mount(self) -> None:
        if self._channel is None:
            self._channel = tls_channel(self.server, self.tls_ca)
        self.spectator = Spectator(self._channel, self.admin_token, tls_ca=self.tls_ca)
        if self.match_id:
            follower = Follower(self.spectator, self.match_id, pace=self.pace)
            self.followers[self.match_id] = follower
            self.focus_key = self.match_id
            await self._show()
            self.run_worker(follower.run(self._followed), name=f"follow-{self.match_id}")
        else:
            await self._show()
            self.run_worker(self._poll(), name="poll")
        self.set_interval(0.25, self._tick)
        self._status()

    async def on_unmount(self) -> None:
        if self._own_channel and self._channel is not None:
            await self._channel.close()

    # ------------------------------------------------------------------ data

    async def _poll(self) -> None:
        assert self.spectator is not None
        while True:
            try:
                infos = await self.spectator.matches(labels=self.labels, limit=200)
                # the list holds finished matches whose events are freed (it does not say
                # which): ask before following one, or the cards would show them first and
                # learn it one follow at a time, walking back through the history
                self.expired = await self.spectator.expired(infos, self.expired)
                self.listed = len(infos)
                self.listed_expired = sum(1 for i in infos if i.match_id in self.expired)
                self.error = ""
            except WatchError as exc:
                self.error = str(exc)
                if exc.permanent:  # a refused token, a server never reached: the command ends
                    self.exit()
                    return
                self._status()
                await asyncio.sleep(self.poll_s)
                continue
            chosen: dict[str, admin_pb2.MatchInfo] = {}
            for info in infos:  # newest first: the first running match of each table wins
                key = table_key(info)
                have = chosen.get(key)
                running = info.state == admin_pb2.MATCH_STATE_RUNNING
                if have is None or (running and have.state != admin_pb2.MATCH_STATE_RUNNING):
                    chosen[key] = info
            # a table whose latest match cannot be replayed is left out, not shown with an older
            # match of its own (older still, and freed too: the cards walked back through a
            # tournament table's history, one poll at a time)
            chosen = {k: i for k, i in chosen.items() if i.match_id not in self.expired}
            keys = pick_tables(chosen, self.followers)
            before = [key for key, _ in self._ordered()]
            self.in_play = {k for k in keys if chosen[k].state == admin_pb2.MATCH_STATE_RUNNING}
            self.rank = {k: i for i, k in enumerate(keys)}
            changed = False
            for key in keys:
                info = chosen[key]
                old = self.followers.get(key)
                if old is None or (old.match_id != info.match_id and old.ended):
                    follower = Follower(self.spectator, info.match_id, pace=self.pace)
                    self.followers[key] = follower
                    self.run_worker(follower.run(self._followed), name=f"follow-{key}")
                    changed = True
            for key in list(self.followers):
                if key not in keys and self.followers[key].ended and key != self.focus_key:
                    del self.followers[key]
                    changed = True
            if changed or [key for key, _ in self._ordered()] != before:
                await self._show()
            self._status()
            await asyncio.sleep(self.poll_s)

    def _followed(self, follower: Follower, line: LogLine | None) -> None:
        self.updates += 1
        if follower.error and self.match_id:
            # the one match cannot be followed any more (refused, or the server stayed away):
            # the command ends and says why
            self.error = error_text(follower, self.server, self.tls_ca)
            self.exit()
            return
        if expired(follower):  # freed since the poll asked: the next one shows another table
            self.expired.add(follower.match_id)
        self._draw(follower)

    # ------------------------------------------------------------------ drawing

    def _ordered(self) -> list[tuple[str, Follower]]:
        """The tables in the order of their cards (and keys 1-9): those in play first, by
        table (a tournament's table 1, 2, ...: a table keeps its place from match to match),
        then the finished ones, the most recent first."""

        def place(kv: tuple[str, Follower]) -> tuple[int, tuple[str, int, str], int]:
            key = kv[0]
            if key in self.in_play:
                return (0, _natural(key), 0)
            return (1, ("", 0, ""), self.rank.get(key, len(self.rank)))

        return sorted(self.followers.items(), key=place)

    async def _show(self) -> None:
        body = self.query_one("#body", Vertical)
        await body.remove_children()
        if self.focus_key is not None and self.focus_key in self.followers:
            await body.mount(TableView(self.followers[self.focus_key]))
        else:
            grid = Grid(id="tables")
            await body.mount(grid)
            cards = []
            for i, (key, f) in enumerate(self._ordered(), start=1):
                card = Static(compact(f.model, f), classes="card", name=key)
                card.border_title = f"{i}  {card_title(f)}"
                cards.append(card)
            if cards:
                await grid.mount_all(cards)
            else:
                await grid.mount(Static(self._empty_text(), id="empty"))
        self._status()

    def _empty_text(self) -> Text:
        """What the grid shows with no table: the error if the server cannot be asked (the
        status line alone cut it off at a terminal's width), else that nothing is in play."""
        if self.error:
            return Text(f"{self.error}\n(asking again every {self.poll_s:g} s)", style="red")
        labels = " ".join(f"{k}={v}" for k, v in sorted(self.labels.items()))
        if self.listed == 0 and labels:  # nothing at all carries the label
            return Text(
                f"No match on this server carries {labels}: check the id (`uno-arena tournament "
                f"run` prints it). Asking again every {self.poll_s:g} s.",
                style="italic",
            )
        if self.listed and self.listed == self.listed_expired:  # listed, none replayable
            n = self.listed
            what = "the finished match" if n == 1 else f"the {n} finished matches"
            whose = f"with {labels}" if labels else "on this server"
            return Text(
                f"No match in play: {what} {whose} {'ended' if n == 1 else 'all ended'} too "
                "long ago to replay (the server keeps a finished match's events only a short "
                "while after its end, and lists the match longer).",
                style="italic",
            )
        return Text("No matches in play yet ...", style="italic")

    def _draw(self, follower: Follower) -> None:
        for view in self.query(TableView):
            if view.follower is follower:
                view.update(now=_wall())
        numbers = {key: i for i, (key, _) in enumerate(self._ordered(), start=1)}
        for card in self.query(".card").results(Static):
            f = self.followers.get(card.name or "")
            if f is follower:
                card.update(compact(f.model, f))
                card.border_title = f"{numbers.get(card.name or '', '?')}  {card_title(f)}"
        self._status()

    def on_resize(self, event: events.Resize) -> None:
        self._status()  # what the status bar leaves out follows the terminal's width

    def _tick(self) -> None:
        for view in self.query(TableView):
            model = view.follower.model
            if model is not None and model.window >= 0:
                view.update(now=_wall())

    def _status(self) -> None:
        # the state first, the long parts (the table, the match id, the server) last: a narrow
        # terminal cuts those off, not whether the match still runs
        width = self.size.width
        title = "watching" if width < 60 else "UNO Arena · watching"
        parts = [title if width < 80 else "UNO Arena · watching (read-only)"]
        long: list[str] = []
        if self.focus_key is not None and self.focus_key in self.followers:
            f = self.followers[self.focus_key]
            if f.ended:
                parts.append("ended")
            elif not f.caught_up:
                parts.append("replaying from the start" if self.pace else "joining")
            else:
                parts.append("running")
            if f.model is not None and f.model.hand_number:
                parts.append(f"hand {f.model.hand_number}")
            long.append(card_title(f))
        else:
            running = sum(1 for f in self.followers.values() if not f.ended)
            parts.append(f"{len(self.followers)} tables, {running} in play")
            if self.labels:
                long.append(" ".join(f"{k}={v}" for k, v in sorted(self.labels.items())))
        if self.error:
            parts.append(self.error)
        parts += [*long, self.server]
        try:
            status = self.query_one("#status", Static)
        except NoMatches:  # the app is closing: a worker's last update has nowhere to go
            return
        status.update(status_line(parts))
        for empty in self.query("#empty").results(Static):
            empty.update(self._empty_text())

    # ------------------------------------------------------------------ keys

    async def action_open(self, number: int) -> None:
        if self.match_id:
            return
        ordered = self._ordered()
        if 1 <= number <= len(ordered):
            self.focus_key = ordered[number - 1][0]
            await self._show()

    async def action_back(self) -> None:
        if self.match_id or self.focus_key is None:
            return
        self.focus_key = None
        await self._show()


def _natural(key: str) -> tuple[str, int, str]:
    head, _, tail = key.rpartition("/")
    return (head, int(tail) if tail.isdigit() else 1 << 30, tail)


def _wall() -> float:
    return time.time()
