"""Cards and colours for people: names in words and the colours to draw them in.

Cards are the engine's integer codes (``Card.code`` in the protocol): ``colour * 16 + rank``.
"""

from __future__ import annotations

from typing import Final

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from uno_server.engine import cards as C

COLOR_WORDS: Final = ("red", "yellow", "green", "blue", "wild")

# Rich styles of a card face, by engine colour (4 = the black of the Wilds).
CARD_STYLES: Final = (
    "bold white on rgb(198,40,40)",
    "bold black on rgb(240,200,20)",
    "bold white on rgb(30,130,60)",
    "bold white on rgb(25,90,200)",
    "bold white on rgb(50,50,50)",
)
# Rich styles of a colour named in text (the active colour, a colour chosen).
TEXT_STYLES: Final = (
    "bold rgb(230,60,60)",
    "bold rgb(240,200,20)",
    "bold rgb(40,170,80)",
    "bold rgb(60,130,240)",
    "bold",
)
# CSS colours of the web view use the same palette (see web/static/style.css).


def label(code: int) -> str:
    """``red 7``, ``blue skip``, ``green draw two``, ``wild``, ``wild draw four``: the
    engine's card name, in words."""
    return C.name(code).replace("_", " ")


def color_word(color: int) -> str:
    """Engine colour 0-3 in words; ``none`` for -1 (no active colour yet)."""
    return COLOR_WORDS[color] if 0 <= color < 4 else "none"


def color_of(code: int) -> int:
    return code >> 4


def face(
    code: int, *, prefix: str = "", dim: bool = False, selected: bool = False, pad: bool = True
) -> Text:
    """A card as a coloured chip, e.g. `` red 7 ``; ``prefix`` goes inside (a key number)."""
    style = CARD_STYLES[min(code >> 4, 4)]
    if dim:
        style = "dim " + style
    if selected:
        style = "reverse " + style
    space = " " if pad else ""
    return Text(f"{space}{prefix}{label(code)}{space}", style=style)


def color_text(color: int) -> Text:
    """An active or named colour as styled text."""
    if not 0 <= color < 4:
        return Text("none yet", style="italic")
    return Text(COLOR_WORDS[color].upper(), style=TEXT_STYLES[color])


def chips(codes: list[int] | tuple[int, ...]) -> list[Text]:
    """Several cards as chips (lay them out with :class:`Flow`)."""
    return [face(c) for c in codes]


class Flow:
    """Pieces of text laid out left to right, wrapping between pieces only (a card chip is
    never split over two lines)."""

    def __init__(self, items: list[Text], sep: str = " ") -> None:
        self.items = items
        self.sep = sep

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        line = Text()
        for item in self.items:
            if line.cell_len and line.cell_len + len(self.sep) + item.cell_len > width:
                yield line
                line = Text()
            if line.cell_len:
                line.append(self.sep)
            line.append_text(item)
        yield line
