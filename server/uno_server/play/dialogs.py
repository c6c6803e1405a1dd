"""The play screen's dialogs: name a colour (a Wild), choose a seat to swap hands with
(seven-o)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class ColorScreen(ModalScreen[int | None]):
    """Name a colour: for a Wild you play, or for a Wild flipped as the first card."""

    DEFAULT_CSS = """
    ColorScreen { align: center middle; }
    ColorScreen > Vertical {
        width: 60; height: auto; border: thick $accent; background: $surface; padding: 1 2;
    }
    ColorScreen Horizontal { height: auto; }
    ColorScreen Button { margin: 0 1; min-width: 10; }
    #red { background: rgb(198,40,40); color: white; }
    #yellow { background: rgb(240,200,20); color: black; }
    #green { background: rgb(30,130,60); color: white; }
    #blue { background: rgb(25,90,200); color: white; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "pick(0)", "red"),
        Binding("y", "pick(1)", "yellow"),
        Binding("g", "pick(2)", "green"),
        Binding("b", "pick(3)", "blue"),
        # Caps Lock (or Shift) on: the same colours
        *(Binding(k, f"pick({i})", show=False) for i, k in enumerate("RYGB")),
        Binding("escape", "pick(-1)", "cancel"),
    ]

    def __init__(self, title: str, suggested: int, *, can_cancel: bool = True) -> None:
        super().__init__()
        self.title_text = title
        self.suggested = suggested
        self.can_cancel = can_cancel

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text(self.title_text, style="bold"))
            with Horizontal():
                for i, name in enumerate(("red", "yellow", "green", "blue")):
                    yield Button(Text(f"{name} ({name[0]})"), id=name, name=str(i))
            hint = "You hold the most " + ("red", "yellow", "green", "blue")[self.suggested] + "."
            if self.can_cancel:
                hint += "  Esc: play something else."
            yield Static(hint)

    def action_pick(self, color: int) -> None:
        if color < 0 and not self.can_cancel:
            return
        self.dismiss(color if color >= 0 else None)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(int(event.button.name or 0))


class SeatScreen(ModalScreen[int | None]):
    """Seven-o: choose the seat to swap hands with."""

    DEFAULT_CSS = """
    SeatScreen { align: center middle; }
    SeatScreen > Vertical {
        width: 60; height: auto; border: thick $accent; background: $surface; padding: 1 2;
    }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        *(Binding(str(i), f"pick({i})", f"seat {i}", show=False) for i in range(10)),
        Binding("escape", "pick(-1)", "cancel"),
    ]

    def __init__(self, choices: list[tuple[int, str]]) -> None:
        super().__init__()
        self.choices = choices

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Your 7 swaps hands: with which seat?", style="bold"))
            for seat, text in self.choices:
                yield Static(f"{seat}: {text}")
            yield Static("Press the seat's number, Esc to play something else.")
            yield Static(id="why")

    def action_pick(self, seat: int) -> None:
        if seat < 0 or any(s == seat for s, _ in self.choices):
            self.dismiss(seat if seat >= 0 else None)
            return
        # a seat that is not a choice (your own, one out of the match, one the table lacks)
        numbers = [str(s) for s, _ in self.choices]
        among = " or ".join(numbers) if len(numbers) <= 2 else ", ".join(numbers[:-1])
        if len(numbers) > 2:
            among += f" or {numbers[-1]}"
        self.query_one("#why", Static).update(
            Text(
                f"Seat {seat} is not one to swap with: press {among}, or Esc.",
                style="bold yellow",
            )
        )


__all__ = ["ColorScreen", "SeatScreen"]
