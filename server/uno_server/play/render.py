"""Rich renderables of a :class:`~uno_server.play.model.TableModel`, shared by the play and the
watch screens. Pure functions of the model and the time, so screens can be snapshot-tested."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.table import Table
from rich.text import Text

from uno_server.gen.uno.v1 import bot_pb2, game_pb2

from .cards import TEXT_STYLES, Flow, chips, color_text, face, label
from .model import CardRef, ColorRef, LogLine, SeatInfo, TableModel

LINE_STYLES = {
    "uno": "bold magenta",
    "catch": "bold yellow",
    "challenge": "bold cyan",
    "evidence": "cyan",
    "end": "bold green",
    "service": "italic red",
}


def line_text(line: LogLine) -> Text:
    """A log line with its cards as coloured chips and its colours in colour."""
    out = Text(style=LINE_STYLES.get(line.kind, ""))
    for p in line.parts:
        if isinstance(p, CardRef):
            out.append_text(face(p.code, pad=False))
        elif isinstance(p, ColorRef):
            out.append(COLOR_NAMES[p.color], style=TEXT_STYLES[p.color])
        else:
            out.append(p)
    return out


COLOR_NAMES = ("red", "yellow", "green", "blue")


def seconds(left: float) -> str:
    """Time left for a clock: ``12.3 s``, or ``4:05`` from a minute up."""
    left = max(0.0, left)
    if left >= 60:
        m, s = divmod(int(left), 60)
        return f"{m}:{s:02d}"
    return f"{left:.1f} s"


def span(ms: int) -> str:
    """A configured length of time: ``5 s``, ``1.5 s``, ``90 s``, ``10 min``."""
    if ms >= 60_000 and ms % 60_000 == 0:
        return f"{ms // 60_000} min"
    return f"{ms / 1000:g} s"


FULL_SEATS = 50
"""From this width of the Seats panel up, the seat number has a column of its own and the
headers are words; below it the seat number goes in front of the name and the points shrink
(or drop) first, so the name, the arrow and "(you)" stay."""


def seats_table(model: TableModel, *, show_hands: bool = True) -> RenderableType:
    """Every seat: who plays it, how many cards, UNO, points; an arrow at the seat to play.
    Once a hand has ended, each seat's revealed cards below. Laid out for the width it is drawn
    at (:class:`Seats`)."""
    return Seats(model, show_hands=show_hands)


class Seats:
    """The seats as a table fitted to the width it is given: in a narrow panel the columns
    that matter least (the seat number's own column, then the points) give way first, and a
    long name is shortened with … before its "(you)" is."""

    def __init__(self, model: TableModel, *, show_hands: bool = True) -> None:
        self.model = model
        self.show_hands = show_hands

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield _seats(self.model, options.max_width, self.show_hands)


def _seats(model: TableModel, width: int, show_hands: bool) -> RenderableType:
    full = width >= FULL_SEATS
    points = [str(s.total) for s in model.seats]
    pts_w = max(3, *(len(p) for p in points)) if points else 3
    # fixed columns and the gaps between them (a column pads one space each side, none at the
    # edges, in the full table; one space on the right in the narrow one)
    fixed = 2 + 4 + 5 + 4 + 6 + 10 if full else 1 + 5 + 3 + pts_w + 4
    # the points give way when the names are cut to fewer than 8 characters, or when without
    # them more names show whole
    lengths = [_seat_name(model, s, 1 << 10, full=False).cell_len for s in model.seats]
    cut_with = sum(n > width - fixed for n in lengths)
    cut_without = sum(n > width - fixed + pts_w + 1 for n in lengths)
    with_points = full or not (width - fixed < 8 or cut_without < cut_with)
    if not with_points:
        fixed -= pts_w + 1
    cards_w = 5 if full or width - fixed >= 12 else 3  # "cards", or "cds" in a tiny panel
    fixed -= 5 - cards_w
    name_w = max(1, width - fixed)
    if full:
        t = Table(box=None, expand=True, pad_edge=False, show_edge=False)
        t.add_column("", width=2, no_wrap=True)
        t.add_column("seat", justify="right", width=4)
        t.add_column("player", ratio=3, no_wrap=True, overflow="ellipsis")
        t.add_column("cards", justify="right", width=5)
        t.add_column("", width=4)
        t.add_column("points", justify="right", width=6)
    else:
        t = Table(box=None, expand=True, pad_edge=False, show_edge=False, padding=(0, 1, 0, 0))
        t.add_column("", width=1, no_wrap=True)
        t.add_column("player", width=name_w, no_wrap=True, overflow="ellipsis")
        t.add_column("cards" if cards_w == 5 else "cds", justify="right", width=cards_w)
        t.add_column("", width=3, no_wrap=True)
        if with_points:
            t.add_column("pts", justify="right", width=pts_w, no_wrap=True)
    for s in model.seats:
        marker = ""
        if model.in_hand and s.seat == model.current:
            marker = "▶"
        if model.match_over and s.seat in model.winners:
            marker = "★"
        name = _seat_name(model, s, name_w, full=full)
        uno = Text("")
        if model.window == s.seat:
            uno = Text("1!", style="bold reverse yellow")
        elif s.uno and s.cards == 1:
            uno = Text("UNO", style="bold magenta")
        count = Text(str(s.cards), style="bold red" if s.cards == 1 and model.in_hand else "")
        row: list[RenderableType] = [marker, str(s.seat), name, count, uno, str(s.total)]
        if not full:
            del row[1]
            if not with_points:
                row.pop()
        t.add_row(*row)
    if not show_hands or model.phase != "over":
        return t
    hands: list[RenderableType] = [t, Text("\nHands at the end:", style="bold")]
    for s in model.seats:
        items = [Text(f"{model.names[s.seat]}:", style="bold")]
        if s.revealed is None:
            if not s.eliminated:
                continue
            items.append(Text("eliminated, sat the hand out", style="dim"))
        elif s.revealed:
            items += chips(s.revealed)
            items.append(Text(f"({s.points_held or 0} points)", style="dim"))
        else:
            items.append(Text("out!", style="bold green"))
        hands.append(Flow(items))
    return Group(*hands)


def _seat_name(model: TableModel, s: SeatInfo, width: int, *, full: bool) -> Text:
    """A seat's name with what is said about it, "(you)", "(offline)", ...; a name too long
    for ``width`` is shortened with … so that what follows it still shows. A narrow table puts
    the seat number in front and says the states in short."""
    head = "" if full else f"{s.seat} "
    tail = Text()
    if s.seat == model.viewer and model.names[s.seat] != "you":
        tail.append(" (you)")
    if s.eliminated:
        tail.append(" (eliminated)" if full else " (out)", style="dim")
    elif not s.connected:
        tail.append(" (offline)" if full else " (off)", style="italic red")
    elif s.taken_over:
        tail.append(" (AI plays)" if full else " (AI)", style="italic red")
    name = Text(model.names[s.seat])
    room = width - len(head) - tail.cell_len
    if name.cell_len > room:
        name.truncate(max(1, room), overflow="ellipsis")
    out = Text(head) + name
    if s.seat == model.viewer:
        out.stylize("bold")
    out.append_text(tail)
    return out


def table_text(
    model: TableModel, *, now: float | None = None, width: int | None = None, compact: bool = False
) -> Text:
    """Top card, active colour, direction, piles, hand number, UNO window and its clock.
    ``now`` is the server time in Unix seconds (for the UNO window clock). ``width``: a line
    that would not fit says it in fewer words (the direction without "(seat numbers up)", the
    piles in short); ``compact``: fewer lines (top card and colour on one, the piles with the
    hand number, no dealer), for a short terminal."""
    out = Text()
    fits = (lambda n: True) if width is None else (lambda n: n <= width)
    if model.phase == "waiting":
        out.append("No hand dealt yet.", style="italic")
        return out
    top = face(model.top) if model.top >= 0 else Text("none", style="italic")
    penalty = f"penalty waiting: {model.penalty} cards" if model.penalty and model.in_hand else ""
    if compact and fits(4 + top.cell_len + 9 + color_text(model.color).cell_len):
        out.append("Top ")
        out.append_text(top)
        out.append("  colour ")
    elif compact:
        out.append("Top    ")
        out.append_text(top)
        out.append("\nColour ")
    else:
        out.append("Top card  ")
        out.append_text(top)
        out.append("\nColour    ")
    out.append_text(color_text(model.color))
    if penalty:
        line = out.plain.rsplit("\n", 1)[-1]
        out.append("   " if fits(len(line) + 3 + len(penalty)) else "\n")
        out.append(penalty, style="bold red")
    arrows = direction_arrows(model)
    if not fits(len("Direction ") + len(arrows)):
        arrows = arrows.split("   (", 1)[0]
    out.append("\nDirection ")
    out.append(arrows, style="bold")
    piles = f"Draw pile {model.draw_pile}   discard pile {model.discard}"
    if compact:
        piles = f"Hand {model.hand_number} · draw pile {model.draw_pile} · discard {model.discard}"
        if not fits(len(piles)):
            piles = f"Hand {model.hand_number} · draw {model.draw_pile} · discard {model.discard}"
    elif not fits(len(piles)):
        piles = f"Draw {model.draw_pile}, discard {model.discard}"
    out.append(f"\n{piles}")
    if not compact:
        dealer = model.names[model.dealer] if 0 <= model.dealer < model.n else "?"
        out.append(f"\nHand {model.hand_number}, dealt by {dealer}")
    if model.window >= 0:
        out.append("\nUNO window on ", style="bold yellow")
        out.append(model.who(model.window), style="bold yellow")
        if model.window_closes is not None and now is not None:
            out.append(f"  closes in {seconds(model.window_closes - now)}", style="bold yellow")
    if model.match_over:
        if model.cancelled:
            out.append(f"\nMatch cancelled: {model.cancelled}", style="bold red")
        else:
            who = " and ".join(model.who(w) for w in model.winners)
            out.append(f"\nMatch over: {who} won", style="bold green")
    elif model.phase == "over":
        out.append(f"\n{model.who(model.winner, start=True)} won the hand", style="bold green")
    return out


class TableInfo:
    """:func:`table_text` fitted to the width it is drawn at."""

    def __init__(
        self, model: TableModel, *, now: float | None = None, compact: bool = False
    ) -> None:
        self.model = model
        self.now = now
        self.compact = compact

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield table_text(self.model, now=self.now, width=options.max_width, compact=self.compact)


class StatusLine:
    """A one-line status bar: ``parts`` joined, the most important first, closer together when
    the line is too long, and cut after a whole word with … at the terminal's edge (never
    wrapped onto a line that is not shown, never half a match id or an address)."""

    def __init__(self, parts: list[str]) -> None:
        self.parts = [p for p in parts if p]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        line = "  ·  ".join(self.parts)
        if len(line) > width:
            line = " · ".join(self.parts)
        if len(line) > width:
            cut = line[: max(0, width - 2)]  # room for " …"
            if line[len(cut)] != " " and " " in cut:  # the edge falls inside a word: not it
                cut = cut[: cut.rfind(" ")]
            line = cut.rstrip(" ·") + " …"
        yield Text(line, style="bold", no_wrap=True, overflow="ellipsis")


def status_line(parts: list[str]) -> StatusLine:
    """The status bar of ``parts`` (see :class:`StatusLine`)."""
    return StatusLine(parts)


def direction_arrows(model: TableModel) -> str:
    """The order of play from the seat to play: ``0 → 1 → 2 → 3`` (or downwards)."""
    playing = model.playing or list(range(model.n))  # eliminated seats are passed over
    n = len(playing)
    start = playing.index(model.current) if model.current in playing else 0
    order = [playing[(start + model.direction * k) % n] for k in range(n)]
    word = "up" if model.direction > 0 else "down"
    return " → ".join(str(s) for s in order) + f"   (seat numbers {word})"


def log_group(lines: list[LogLine]) -> RenderableType:
    return Group(*(line_text(line) for line in lines))


# ------------------------------------------------------------------ the play screen's words

COLOR_WORDS4 = ("red", "yellow", "green", "blue", "none")
_ACTION_WORDS = {
    game_pb2.ACTION_KIND_DRAW: "d draw",
    game_pb2.ACTION_KIND_PASS: "p keep it and pass",
    game_pb2.ACTION_KIND_ACCEPT: "a accept",
    game_pb2.ACTION_KIND_CHALLENGE: "x challenge",
    game_pb2.ACTION_KIND_CALL_UNO: "u call UNO",
    game_pb2.ACTION_KIND_NO_CATCH: "n let it go",
    game_pb2.ACTION_KIND_CATCH: "c catch seat {s}",
}


def action_words(a: game_pb2.LegalAction) -> str:
    """A legal action other than a play or a colour, as the key that makes it and its words."""
    target = str(a.target_seat) if a.HasField("target_seat") else ""
    return _ACTION_WORDS.get(a.kind, a.description).format(s=target)


def played_for_you(a: game_pb2.LegalAction | None) -> str:
    """What the action answered for a person whose time ran out did, in a few words."""
    if a is None:
        return "a move was played"
    if a.kind == game_pb2.ACTION_KIND_DRAW:
        return "drew a card"
    if a.kind == game_pb2.ACTION_KIND_PASS:
        return "kept the drawn card and passed"
    if a.kind == game_pb2.ACTION_KIND_ACCEPT:
        return "accepted the cards"
    if a.kind == game_pb2.ACTION_KIND_PLAY:
        return f"played {label(a.card.code)}"
    if a.kind == game_pb2.ACTION_KIND_CHOOSE_COLOR:
        return f"named {COLOR_WORDS4[a.color - 1] if 1 <= a.color <= 4 else 'a colour'}"
    return a.description or "a move was played"


def why_not(model: TableModel, prompt: int, code: int) -> str:
    """Why the card ``code`` cannot be played now (the request's ``prompt``), and what can."""
    if prompt == bot_pb2.PROMPT_DRAWN:
        return f"After drawing you may play only the card you drew ({label(model.drawn)})."
    if prompt == bot_pb2.PROMPT_WILD_DRAW_FOUR:
        return "First answer the Wild Draw Four: a to accept, x to challenge."
    if prompt == bot_pb2.PROMPT_STACK:
        return "Only a draw two goes on the stack; or a to accept the cards."
    if prompt in (bot_pb2.PROMPT_UNO_WINDOW, bot_pb2.PROMPT_LATE_UNO):
        return "A UNO window is open: c catches, n lets it go, u calls your own UNO."
    if prompt == bot_pb2.PROMPT_CHOOSE_COLOR:
        return "Name the colour of the first card first."
    return (
        f"{label(code)} matches neither the colour {COLOR_WORDS4[model.color]} nor the "
        f"top card {label(model.top)}."
    )
