"""Rich renderables of a :class:`~uno_server.play.model.TableModel`, shared by the play and the
watch screens. Pure functions of the model and the time, so screens can be snapshot-tested."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from .cards import TEXT_STYLES, Flow, chips, color_text, face
from .model import CardRef, ColorRef, LogLine, TableModel

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


def seats_table(model: TableModel, *, show_hands: bool = True) -> RenderableType:
    """Every seat: who plays it, how many cards, UNO, points; an arrow at the seat to play.
    Once a hand has ended, each seat's revealed cards below."""
    t = Table(box=None, expand=True, pad_edge=False, show_edge=False)
    t.add_column("", width=2, no_wrap=True)
    t.add_column("seat", justify="right", width=4)
    t.add_column("player", ratio=3, no_wrap=True, overflow="ellipsis")
    t.add_column("cards", justify="right", width=5)
    t.add_column("", width=4)
    t.add_column("points", justify="right", width=6)
    for s in model.seats:
        marker = ""
        if model.in_hand and s.seat == model.current:
            marker = "▶"
        if model.match_over and s.seat in model.winners:
            marker = "★"
        name = Text(model.names[s.seat])
        if s.seat == model.viewer:
            name.stylize("bold")
            if model.names[s.seat] != "you":
                name.append(" (you)")
        if s.eliminated:
            name.append(" (eliminated)", style="dim")
        elif not s.connected:
            name.append(" (offline)", style="italic red")
        elif s.taken_over:
            name.append(" (AI plays)", style="italic red")
        uno = Text("")
        if model.window == s.seat:
            uno = Text("1!", style="bold reverse yellow")
        elif s.uno and s.cards == 1:
            uno = Text("UNO", style="bold magenta")
        count = Text(str(s.cards), style="bold red" if s.cards == 1 and model.in_hand else "")
        t.add_row(marker, str(s.seat), name, count, uno, str(s.total))
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


def table_text(model: TableModel, *, now: float | None = None) -> Text:
    """Top card, active colour, direction, piles, hand number, UNO window and its clock.
    ``now`` is the server time in Unix seconds (for the UNO window clock)."""
    out = Text()
    if model.phase == "waiting":
        out.append("No hand dealt yet.", style="italic")
        return out
    out.append("Top card  ")
    out.append_text(face(model.top) if model.top >= 0 else Text("none", style="italic"))
    out.append("\nColour    ")
    out.append_text(color_text(model.color))
    if model.penalty and model.in_hand:
        out.append(f"   penalty waiting: {model.penalty} cards", style="bold red")
    out.append("\nDirection ")
    out.append(direction_arrows(model), style="bold")
    out.append(f"\nDraw pile {model.draw_pile}   discard pile {model.discard}")
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
