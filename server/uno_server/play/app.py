"""The play screen: a person's seat at a UNO table, in the terminal (Textual).

The screen shows the person's hand in colour, the top card, the active colour and the direction,
every seat's name, card count, UNO status and points, what happened in words, the legal moves,
and clocks for the decision deadline and the UNO window. Keys:

======  ================================================================================
1-9, 0  play that card (or ←/→ to choose one and Enter); a Wild asks for the colour
d / p   draw a card / keep the drawn card and pass
u       call UNO: with your next play when you hold two cards, or late once you forgot
c / n   catch a player who did not call UNO / let it go
a / x   accept a Wild Draw Four / challenge it (you then see the evidence)
m / q   another match (when you host the table) / quit (Ctrl-C too)
======  ================================================================================

The letters work in upper case too (Caps Lock on; :mod:`.keys`). The screen's key handling,
clocks and redraws share the one model of the table (:mod:`uno_server.play.model` holds
everything that is not drawing, :mod:`.render` the panels' contents, :mod:`.dialogs` the colour
and seat dialogs).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import ClassVar

from rich.console import Group
from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.css.query import NoMatches
from textual.widgets import Footer, RichLog, Static

from uno_server.engine import actions as A
from uno_server.engine import cards as C
from uno_server.engine.hand import most_held_color
from uno_server.gen.uno.v1 import bot_pb2, game_pb2

from .cards import Flow, chips, color_text, face, label
from .dialogs import ColorScreen, SeatScreen
from .history import FollowingLog
from .human import NO_DEADLINE_MS, Decision
from .keys import CARD_KEYS, MOVE_BINDINGS, OFF_KEYS
from .model import TableModel, player_name
from .render import (
    TableInfo,
    action_words,
    line_text,
    played_for_you,
    seats_table,
    seconds,
    span,
    status_line,
    why_not,
)
from .session import PlayOptions, SetupError, TableSession

KIND = game_pb2  # enum numbers of ActionKind
NARROW = 60
"""Below this many columns the Seats and Table panels are stacked, not side by side."""
SHORT = 36
"""Below this many rows the panels keep only their top border, the table says itself in fewer
lines and the moves panel drops its empty message line: the legal moves stay on the screen."""


class PlayApp(App[None]):
    """One person's seat. Give it :class:`PlayOptions`; it runs the table (see session.py)."""

    TITLE = "UNO Arena"
    CSS = """
    #status {
        height: 1; background: $boost; padding: 0 1; text-wrap: nowrap; text-overflow: ellipsis;
    }
    #upper { height: auto; }
    #seats, #table { width: 1fr; height: auto; border: round $primary; padding: 0 1; }
    #log { height: 1fr; min-height: 6; border: round $primary; padding: 0 1; }
    #evidence { height: auto; border: round cyan; padding: 0 1; display: none; }
    #evidence.shown { display: block; }
    #hand { height: auto; min-height: 3; border: round $accent; padding: 0 1; }
    #moves { height: auto; min-height: 4; border: round $accent; padding: 0 1; }
    /* a narrow terminal: the seats above the table; a short one: each panel keeps only its top
       border (with its title), and the log gives way first, so the legal moves stay */
    Screen.-narrow #upper { layout: vertical; }
    Screen.-short #seats, Screen.-short #table { border: none; border-top: round $primary; }
    Screen.-short #log { border: none; border-top: round $primary; min-height: 1; }
    Screen.-short #evidence { border: none; border-top: round cyan; }
    Screen.-short #hand, Screen.-short #moves { border: none; border-top: round $accent; }
    Screen.-short #hand, Screen.-short #moves { min-height: 2; }
    """
    # App declares their type (not as a ClassVar mypy knows)
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (NARROW, "-wide")]  # noqa: RUF012
    VERTICAL_BREAKPOINTS = [(0, "-short"), (SHORT, "-tall")]  # noqa: RUF012
    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(k, f"card({i})", f"card {k}", show=False) for i, k in enumerate(CARD_KEYS)),
        Binding("left", "cursor(-1)", "previous card", show=False),
        Binding("right", "cursor(1)", "next card", show=False),
        Binding("enter", "play_selected", "play"),
        *MOVE_BINDINGS,  # d p u c n a x m q, and the same in upper case (keys.py)
        # Ctrl-C quits as q does (Textual's own binding only says to press ctrl+q)
        Binding("ctrl+c", "quit", "quit", show=False, priority=True),
    ]

    def __init__(
        self,
        options: PlayOptions,
        *,
        monotonic: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
    ) -> None:
        super().__init__()
        self.options = options
        self.monotonic = monotonic
        self.wall = wall
        self.session: TableSession | None = None
        self.model: TableModel | None = None
        self.decision: Decision | None = None
        self.cursor = 0
        self.uno_armed = False
        self.message = Text("")
        self.lobby = "Starting ..."
        self.result = ""
        self.sent: list[int] = []
        """Every action id the person answered, in order (tests read it)."""
        self.match_id = ""
        self.error = ""
        """Why the table could not start (the command prints it after the screen closes)."""
        self.decision_ms = 0
        self.timed_out: Text | None = None
        """What was played for the person when their time last ran out; shown under the moves
        until they next answer themselves."""
        self._color_screen: ColorScreen | None = None
        self._laid_out = False
        self.changed = asyncio.Event()
        """Set whenever something arrives from the server (tests wait on it)."""

    # ------------------------------------------------------------------ layout

    def compose(self) -> ComposeResult:
        yield Static(id="status")
        with Horizontal(id="upper"):
            yield Static(id="seats")
            yield Static(id="table")
        yield FollowingLog(id="log", wrap=True, markup=False, max_lines=500, auto_scroll=True)
        yield Static(id="evidence")
        yield Static(id="hand")
        yield Static(id="moves")
        yield Footer()

    def on_mount(self) -> None:
        self.query_one("#seats").border_title = "Seats"
        self.query_one("#table").border_title = "Table"
        self.query_one("#log").border_title = "What happened"
        self.query_one("#evidence").border_title = "Challenge evidence"
        self.query_one("#hand").border_title = "Your hand"
        self.query_one("#moves").border_title = "Your move"
        self._laid_out = True
        self.set_interval(0.2, self._tick)
        self.run_worker(self._run_table(), name="table", exit_on_error=False)
        self._refresh()

    def on_resize(self, event: events.Resize) -> None:
        self._refresh()  # the table's and the moves' wording follow the terminal's size

    async def _run_table(self) -> None:
        try:
            self.session = TableSession(self.options, self, self._say, self._failed)
            await self.session.start()
            if self.session.can_create:
                self._say("Setting up the table ...")
                await self.session.create_match()
            else:
                self._say(
                    f"Connected to {self.session.addr} as {self.options.name}. "
                    "Waiting to be seated: the host starts the match."
                )
        except SetupError as exc:  # nothing to wait for: the command ends and says why
            self._failed(str(exc))

    def _failed(self, error: str) -> None:
        """The table cannot go on (the server refused it, or a seat of ours for good): the
        screen closes and the command says ``error`` in one line, exit status 1."""
        self.error = self.error or error
        self.exit()

    async def action_quit(self) -> None:
        self._laid_out = False  # what the closing seat reports now is not drawn
        if self.session is not None:
            self.error = self.error or self.session.failure
            await self.session.close()
            self.session = None
        self.exit()

    async def on_unmount(self) -> None:
        self._laid_out = False
        if self.session is not None:
            await self.session.close()
            self.session = None

    def _say(self, text: str) -> None:
        self.lobby = text
        self._refresh()

    def _tell(self, text: str, style: str = "bold yellow") -> None:
        self.message = Text(text, style=style)
        self._refresh_moves()

    # ------------------------------------------------------------------ from the seat (Sink)

    def on_match_started(self, started: bot_pb2.MatchStarted) -> None:
        if started.match_id == self.match_id or not self._laid_out:
            return
        self.match_id = started.match_id
        names = [player_name(s.player) for s in sorted(started.seats, key=lambda s: s.seat)]
        names[started.seat] = self.options.name
        self.model = TableModel.for_rules(names, started.rules, viewer=started.seat)
        self.model.match_id = started.match_id
        self.decision_ms = started.time_control.decision_ms
        self.result = ""
        self.timed_out = None
        log = self.query_one("#log", RichLog)
        log.clear()
        log.write(Text(f"Match {started.match_id}: {', '.join(self.model.names)}.", style="bold"))
        self._changed()

    def on_events(self, match_id: str, seat: int, events: list[game_pb2.Event]) -> None:
        if self.model is None or match_id != self.match_id or not self._laid_out:
            return
        log = self.query_one("#log", RichLog)
        width = log.scrollable_content_region.width or None
        for ev in events:
            line = self.model.apply(ev)
            if line is not None:
                log.write(line_text(line), width=width)
        self._changed()

    def on_decision(self, decision: Decision) -> None:
        req = decision.request
        if self.model is None or req.match_id != self.match_id or not self._laid_out:
            return
        self.decision = decision
        self.model.sync_view(req.view)
        self.message = self.timed_out or Text("")
        hand = self.model.hand
        if self.model.drawn >= 0 and self.model.drawn in hand:
            self.cursor = hand.index(self.model.drawn)
        else:
            playable = [i for i, c in enumerate(hand) if self._plays_for(c)]
            if playable and (self.cursor >= len(hand) or self.cursor not in playable):
                self.cursor = playable[0]
        self.cursor = min(self.cursor, max(0, len(hand) - 1))
        if len(hand) != 2 and req.view.phase != game_pb2.PHASE_DRAWN:
            self.uno_armed = False
        if req.prompt in (bot_pb2.PROMPT_UNO_WINDOW, bot_pb2.PROMPT_LATE_UNO):
            self.bell()
        if req.prompt == bot_pb2.PROMPT_CHOOSE_COLOR:
            screen = ColorScreen(
                "The first card is a Wild: name the colour.",
                most_held_color(hand),
                can_cancel=False,
            )
            self._color_screen = screen
            self.push_screen(screen, lambda c: self._answer_color(decision, c))
        self._changed()

    def on_decision_closed(self, decision: Decision) -> None:
        if self.decision is decision:
            self.decision = None
            if self._color_screen is not None and self._color_screen.is_current:
                self._color_screen.dismiss(None)
            self._color_screen = None
        self._changed()

    def on_time_out(self, decision: Decision, action_id: int) -> None:
        req = decision.request
        if self.model is None or req.match_id != self.match_id or not self._laid_out:
            return
        note = Text(
            f"Your time ran out: {played_for_you(decision.action(action_id))} for you. "
            f"Answer within {span(self.decision_ms)} next time (the clock shows what is left).",
            style="bold red",
        )
        log = self.query_one("#log", RichLog)
        log.write(note, width=log.scrollable_content_region.width or None)
        self.timed_out = self.message = note
        self._changed()

    def on_match_ended(self, ended: bot_pb2.MatchEnded) -> None:
        if ended.match_id != self.match_id or self.model is None:
            return
        if ended.cause != game_pb2.END_CAUSE_COMPLETED:
            self.result = "The match was stopped."
        elif ended.won:
            self.result = "You won the match!"
        else:
            who = " and ".join(self.model.who(w) for w in ended.winners)
            self.result = f"{who} won the match."
        self._changed()

    def _changed(self) -> None:
        self.changed.set()
        if self._laid_out:
            self.refresh_bindings()
            self._refresh()

    # ------------------------------------------------------------------ actions

    def _legal(self, kind: int) -> list[game_pb2.LegalAction]:
        d = self.decision
        if d is None or not d.open:
            return []
        return [a for a in d.request.legal_actions if a.kind == kind]

    def _plays_for(self, code: int) -> list[game_pb2.LegalAction]:
        return [a for a in self._legal(KIND.ACTION_KIND_PLAY) if a.card.code == code]

    def _send(self, action_id: int) -> bool:
        d = self.decision
        if d is None or not d.answer(action_id):
            self._tell("That move is no longer open.")
            return False
        self.sent.append(action_id)
        self.decision = None
        self.message = Text("")
        self.timed_out = None
        if (action_id - A.PLAY_BASE) % 2 == 1 and A.PLAY_BASE <= action_id < A.SWAP_BASE:
            self.uno_armed = False
        self._changed()
        return True

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Show in the footer only the keys that do something now."""
        kinds = {
            "draw": KIND.ACTION_KIND_DRAW,
            "pass_turn": KIND.ACTION_KIND_PASS,
            "catch": KIND.ACTION_KIND_CATCH,
            "let_go": KIND.ACTION_KIND_NO_CATCH,
            "accept": KIND.ACTION_KIND_ACCEPT,
            "challenge": KIND.ACTION_KIND_CHALLENGE,
            "play_selected": KIND.ACTION_KIND_PLAY,
        }
        if action in kinds:
            return bool(self._legal(kinds[action]))
        if action == "uno":
            return bool(self._legal(KIND.ACTION_KIND_CALL_UNO)) or (
                self.model is not None and len(self.model.hand) == 2
            )
        if action == "new_match":
            return bool(self.result) and self.session is not None and self.session.can_create
        return True

    async def on_key(self, event: events.Key) -> None:
        """A move's key that does not apply now: its binding is off (check_action), so Textual
        would drop the key in silence; its action says why (and acts only on a legal move)."""
        action = OFF_KEYS.get(event.key)
        if action is None or self.screen.is_modal or self.check_action(action, ()):
            return  # not a move's key, a dialog's, or the binding runs it
        event.prevent_default()  # the binding stays off
        said = getattr(self, f"action_{action}")()
        if said is not None:  # action_new_match is a coroutine
            await said

    def action_card(self, index: int) -> None:
        self._play_index(index)

    def action_cursor(self, delta: int) -> None:
        if self.model and self.model.hand:
            self.cursor = (self.cursor + delta) % len(self.model.hand)
            self._refresh_hand()

    def action_play_selected(self) -> None:
        self._play_index(self.cursor)

    def _play_index(self, index: int) -> None:
        model = self.model
        if model is None or self.decision is None:
            self._tell("It is not your move yet.")
            return
        if not 0 <= index < len(model.hand):
            self._tell(f"You hold {len(model.hand)} cards.")
            return
        self.cursor = index
        code = model.hand[index]
        plays = self._plays_for(code)
        if not plays:
            assert self.decision is not None
            self._tell(why_not(model, self.decision.request.prompt, code))
            return
        if code >= C.WILD:
            rest = list(model.hand)
            rest.remove(code)
            screen = ColorScreen(
                f"You play a {label(code)}: name the colour.", most_held_color(rest)
            )
            self._color_screen = screen
            decision = self.decision
            self.push_screen(screen, lambda c: self._play_wild(decision, code, c))
            return
        if any(a.HasField("target_seat") for a in plays):  # seven-o: a 7 swaps hands
            choices = [
                (
                    a.target_seat,
                    f"{model.who(a.target_seat)}, {model.seats[a.target_seat].cards} cards",
                )
                for a in plays
            ]
            decision = self.decision
            self.push_screen(SeatScreen(choices), lambda s: self._play_swap(decision, plays, s))
            return
        self._send(self._with_uno(plays).id)

    def _play_swap(
        self, decision: Decision | None, plays: list[game_pb2.LegalAction], seat: int | None
    ) -> None:
        if seat is None or decision is None or decision is not self.decision:
            self._refresh()
            return
        chosen = [a for a in plays if a.target_seat == seat]
        if chosen:
            self._send(chosen[0].id)

    def _with_uno(self, plays: list[game_pb2.LegalAction]) -> game_pb2.LegalAction:
        want = [a for a in plays if a.uno == self.uno_armed]
        return want[0] if want else plays[0]

    def _play_wild(self, decision: Decision | None, code: int, color: int | None) -> None:
        self._color_screen = None
        if color is None or decision is None or decision is not self.decision:
            self._refresh()
            return
        plays = [a for a in self._plays_for(code) if a.color == color + 1]
        if plays:
            self._send(self._with_uno(plays).id)

    def _answer_color(self, decision: Decision, color: int | None) -> None:
        self._color_screen = None
        if color is not None and decision is self.decision:
            self._send(A.CHOOSE_COLOR_BASE + color)

    def action_draw(self) -> None:
        draws = self._legal(KIND.ACTION_KIND_DRAW)
        if draws:
            self._send(draws[0].id)
        elif self._legal(KIND.ACTION_KIND_PASS):
            self._tell("You have drawn already: play the card you drew, or p to keep it.")
        else:
            self._tell("You can draw only at the start of your turn.")

    def action_pass_turn(self) -> None:
        passes = self._legal(KIND.ACTION_KIND_PASS)
        if passes:
            self._send(passes[0].id)
        else:
            self._tell("You can pass only after drawing a card you could play.")

    def action_uno(self) -> None:
        late = self._legal(KIND.ACTION_KIND_CALL_UNO)
        if late:
            self._send(late[0].id)
            return
        if self.model is not None and len(self.model.hand) == 2:
            self.uno_armed = not self.uno_armed
            if self.uno_armed:
                self._tell("UNO! It is called with your next play.", "bold magenta")
            else:
                self._tell("UNO call taken back.")
            self.refresh_bindings()
            return
        self._tell("Call UNO when you hold two cards, before the play that leaves you one.")

    def action_catch(self) -> None:
        catches = self._legal(KIND.ACTION_KIND_CATCH)
        if catches:
            self._send(catches[0].id)
        else:
            self._tell("Nobody to catch: catch a player left with one card who did not call UNO.")

    def action_let_go(self) -> None:
        skip = self._legal(KIND.ACTION_KIND_NO_CATCH)
        if skip:
            self._send(skip[0].id)
        else:
            self._tell("Nobody to let go: n lets off a player who did not call UNO.")

    def action_accept(self) -> None:
        acc = self._legal(KIND.ACTION_KIND_ACCEPT)
        if acc:
            self._send(acc[0].id)
        else:
            self._tell("There is no penalty to accept.")

    def action_challenge(self) -> None:
        ch = self._legal(KIND.ACTION_KIND_CHALLENGE)
        if ch:
            self._send(ch[0].id)
        else:
            self._tell("You can challenge only a Wild Draw Four played on you.")

    async def action_new_match(self) -> None:
        if self.session is None or not self.session.can_create or not self.result:
            self._tell("m starts another match once this one is over, at a table you host.")
            return
        self.result = ""
        self._say("Dealing a new hand ...")
        try:
            await self.session.create_match()
        except SetupError as exc:
            self._say(f"Cannot start another match: {exc}")

    # ------------------------------------------------------------------ drawing

    def _tick(self) -> None:
        d = self.decision
        if (d is not None and d.deadline is not None) or (
            self.model is not None and self.model.window >= 0
        ):
            try:
                self._refresh_moves()
                self._refresh_table()
            except NoMatches:  # the app is closing: the widgets are gone before the timer
                self._laid_out = False

    def _refresh(self) -> None:
        if not self._laid_out:
            return
        try:
            self._refresh_status()
            self._refresh_table()
            self._refresh_hand()
            self._refresh_moves()
            self._refresh_evidence()
        except NoMatches:  # the app is closing (see _tick)
            self._laid_out = False

    def _refresh_status(self) -> None:
        # what the table is doing first, the long parts (address, match id) last: a narrow
        # terminal cuts them off, not the rest
        opts = self.options
        parts = ["UNO Arena"]
        if self.model is not None and self.model.hand_number:
            parts.append(f"hand {self.model.hand_number}")
        if self.result:
            parts.append("match over")
        if opts.practice:
            parts.append(self._practice_pace())
        if self.session is not None and self.session.addr:
            where = "embedded server" if opts.embedded else "server"
            parts.append(f"{where} {self.session.addr}")
        if self.match_id:
            parts.append(f"match {self.match_id}")
        self.query_one("#status", Static).update(status_line(parts))

    def _practice_pace(self) -> str:
        """The practice table's pace as configured: its UNO window (the match's own rules once
        they are known) and the time a move may take."""
        window = 2000  # the rules' default
        if self.model is not None:
            window = self.model.uno_window_ms
        else:
            with contextlib.suppress(SetupError):
                rules = self.options.rule_set()
                if rules.HasField("uno_window_ms"):
                    window = rules.uno_window_ms
        try:
            move = self.options.time_control().decision_ms
        except SetupError:
            move = NO_DEADLINE_MS
        return f"practice: {span(window)} UNO window, {span(move)} a move"

    def _refresh_table(self) -> None:
        model = self.model
        seats = self.query_one("#seats", Static)
        table = self.query_one("#table", Static)
        if model is None:
            seats.update(Text("No match yet.", style="italic"))
            table.update(Text(""))
            return
        seats.update(seats_table(model))
        table.update(TableInfo(model, now=self.wall(), compact=self.size.height < SHORT))

    def _refresh_evidence(self) -> None:
        panel = self.query_one("#evidence", Static)
        ev = self.model.evidence if self.model is not None else None
        if ev is None or self.model is None:
            panel.set_class(False, "shown")
            return
        items = [Text(f"{self.model.who(ev.offender, start=True)} held")]
        items += chips(ev.hand) if ev.hand else [Text("no other card")]
        items.append(Text("when it played the Wild Draw Four on"))
        items.append(color_text(ev.color_before) + Text("."))
        verdict = Text(ev.verdict, style="bold green" if ev.bluff else "bold red")
        panel.update(Group(Flow(items), verdict))
        panel.set_class(True, "shown")

    def _refresh_hand(self) -> None:
        panel = self.query_one("#hand", Static)
        model = self.model
        if model is None or not model.hand:
            panel.update(Text("No cards." if model is not None else "", style="italic"))
            return
        deciding = self.decision is not None
        items: list[Text] = []
        for i, code in enumerate(model.hand):
            key = CARD_KEYS[i] if i < len(CARD_KEYS) else "·"
            playable = bool(self._plays_for(code))
            items.append(
                face(
                    code,
                    prefix=f"{key} ",
                    dim=deciding and not playable,
                    selected=deciding and i == self.cursor,
                )
            )
        if model.drawn >= 0:
            items.append(Text("  just drawn:") + face(model.drawn))
        if self.uno_armed:
            items.append(Text("  UNO! called with your next play", style="bold magenta"))
        panel.update(Flow(items))

    def _refresh_moves(self) -> None:
        if not self._laid_out:
            return
        panel = self.query_one("#moves", Static)
        if self.message.plain or self.size.height >= SHORT:
            panel.update(Group(self._moves_text(), self.message))
        else:  # a short terminal: no empty line under the clock
            panel.update(self._moves_text())

    def _moves_text(self) -> Text:
        model = self.model
        d = self.decision
        if model is None:
            return Text(self.lobby)
        if self.result:
            out = Text(self.result, style="bold green")
            if self.session is not None and self.session.can_create:
                out.append("   m: another match   q: quit")
            else:
                out.append("   q: quit")
            return out
        if d is None or not d.open:
            return self._waiting_text(model)
        req = d.request
        out = Text()
        prompt = req.prompt
        if prompt == bot_pb2.PROMPT_TURN:
            out.append("Your turn: play a card that matches ", style="bold")
            out.append_text(color_text(model.color))
            top_rank = label(model.top).split(" ", 1)[-1] if 0 <= model.top < C.WILD else ""
            if top_rank:
                out.append(f" or {top_rank}", style="bold")
            out.append(", or draw.", style="bold")
        elif prompt == bot_pb2.PROMPT_DRAWN:
            out.append("You drew ", style="bold")
            out.append_text(face(model.drawn))
            out.append(": play it now, or p to keep it and pass.", style="bold")
        elif prompt == bot_pb2.PROMPT_WILD_DRAW_FOUR:
            off = req.view.pending_penalty.offender if req.view.HasField("pending_penalty") else -1
            (accept, fail), stack = model.wd4_stakes(), model.stack
            held = f"it draws 4 and you the stack's {stack}" if stack else "it draws 4"
            out.append(
                f"{model.who(off, start=True)} played a Wild Draw Four on you. a: accept (draw "
                f"{accept}).  x: challenge: if it held the old colour {held}, if not you draw "
                f"{fail}.",
                style="bold",
            )
        elif prompt == bot_pb2.PROMPT_STACK:
            out.append(
                f"A Draw Two stack: a to accept {model.penalty} cards, or add a draw two.",
                style="bold",
            )
        elif prompt == bot_pb2.PROMPT_CHOOSE_COLOR:
            out.append("Name the colour of the first card.", style="bold")
        elif prompt == bot_pb2.PROMPT_UNO_WINDOW:
            out.append(
                f"{model.who(model.window, start=True)} has one card and did not call UNO! "
                "c: catch (it draws "
                f"{2 if not req.rules.HasField('uno_penalty') else req.rules.uno_penalty}).  "
                "n: let it go.",
                style="bold yellow",
            )
        elif prompt == bot_pb2.PROMPT_LATE_UNO:
            out.append(
                "You have one card and did not call UNO! u: call it now, before someone "
                "catches you.",
                style="bold magenta",
            )
        elif prompt == bot_pb2.PROMPT_JUMP_IN:
            out.append("You hold the exact top card: play it to jump in.", style="bold")
        out.append("\nLegal moves: ")
        out.append_text(self._legal_moves_text(req))
        out.append("\n")
        out.append_text(self._clock_text(d))
        return out

    def _waiting_text(self, model: TableModel) -> Text:
        out = Text()
        if model.phase == "over":
            out.append(f"{model.who(model.winner, start=True)} won the hand.", style="bold")
        elif model.current >= 0 and model.current != model.viewer:
            out.append(f"Waiting for {model.who(model.current)} ...")
        else:
            out.append("Waiting ...")
        if model.window >= 0 and model.window_closes is not None:
            out.append(f"   UNO window on {model.who(model.window)}: ")
            out.append(seconds(model.window_closes - self.wall()), style="bold yellow")
        return out

    def _legal_moves_text(self, req: bot_pb2.DecisionRequest) -> Text:
        out = Text()
        model = self.model
        assert model is not None
        items: list[Text] = []
        shown: set[int] = set()
        for a in req.legal_actions:
            if a.kind == KIND.ACTION_KIND_CHOOSE_COLOR:
                if a.id == A.CHOOSE_COLOR_BASE:
                    items.append(Text("r y g b name the colour"))
            elif a.kind == KIND.ACTION_KIND_PLAY:
                code = a.card.code
                if code in shown or code not in model.hand:
                    continue
                shown.add(code)
                i = model.hand.index(code)
                key = CARD_KEYS[i] if i < len(CARD_KEYS) else "Enter"
                t = Text(f"{key}:")
                t.append_text(face(code))
                if code >= C.WILD:
                    t.append(" + colour")
                items.append(t)
            else:
                items.append(Text(action_words(a)))
        uno_both = any(a.uno for a in req.legal_actions) and any(
            a.kind == KIND.ACTION_KIND_PLAY and not a.uno for a in req.legal_actions
        )
        if uno_both:
            items.append(
                Text(
                    f"u UNO with the play: {'ON' if self.uno_armed else 'off'}",
                    style="bold magenta" if self.uno_armed else "",
                )
            )
        for i, t in enumerate(items):
            if i:
                out.append("   ")
            out.append_text(t)
        return out

    def _clock_text(self, d: Decision) -> Text:
        out = Text("Clock: ")
        now = self.monotonic()
        req = d.request
        if req.required:
            if self.decision_ms >= NO_DEADLINE_MS:
                # practice: the longest time a move may take (the contract has no untimed
                # option); say it is a long clock, not that there is none
                if d.deadline is not None:
                    out.append(f"{seconds(d.deadline - now)} to decide", style="bold")
                if self.size.width >= 76:  # else a second line for what the status bar says
                    out.append(
                        f" (practice: {NO_DEADLINE_MS // 60_000} min a move, the server's longest)",
                        style="dim",
                    )
            elif d.deadline is not None:
                left = d.deadline - now
                out.append(f"{seconds(left)} to decide", style="bold red" if left < 5 else "bold")
        model = self.model
        if model is not None and model.window >= 0:
            window_left: float | None = None
            if not req.required and d.deadline is not None:
                window_left = d.deadline - now
            if window_left is None and model.window_closes is not None:
                window_left = model.window_closes - self.wall()
            if window_left is not None:
                if req.required:
                    out.append("   ")
                out.append(f"UNO window {seconds(window_left)}", style="bold yellow")
        return out


__all__ = ["CARD_KEYS", "OFF_KEYS", "ColorScreen", "PlayApp"]
