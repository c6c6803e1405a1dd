"""Cards as small integers.

A card is ``color * 16 + rank``. Colours 0-3 are red, yellow, green and blue; colour 4 is black
(the two kinds of Wild). Ranks 0-9 are number cards, then Skip, Reverse, Draw Two, Wild and Wild
Draw Four. Two decks shuffled together simply hold every code twice: physical copies of the same
card are indistinguishable, so the engine accounts for cards as a multiset of codes.
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final


class Color(IntEnum):
    """A card colour. ``BLACK`` is only ever the colour of a Wild card, never an active colour."""

    RED = 0
    YELLOW = 1
    GREEN = 2
    BLUE = 3
    BLACK = 4


class Rank(IntEnum):
    """What is printed on a card: a number 0-9 or a symbol."""

    ZERO = 0
    ONE = 1
    TWO = 2
    THREE = 3
    FOUR = 4
    FIVE = 5
    SIX = 6
    SEVEN = 7
    EIGHT = 8
    NINE = 9
    SKIP = 10
    REVERSE = 11
    DRAW_TWO = 12
    WILD = 13
    WILD_DRAW_FOUR = 14


COLORS: Final = (Color.RED, Color.YELLOW, Color.GREEN, Color.BLUE)
SKIP: Final = 10
REVERSE: Final = 11
DRAW_TWO: Final = 12
WILD_RANK: Final = 13
WD4_RANK: Final = 14
WILD: Final = 4 * 16 + 13
WILD_DRAW_FOUR: Final = 4 * 16 + 14
ALL_CODES: Final = tuple([c * 16 + r for c in range(4) for r in range(13)] + [WILD, WILD_DRAW_FOUR])

_COLOR_NAMES: Final = ("red", "yellow", "green", "blue", "black")
_RANK_NAMES: Final = (
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "8",
    "9",
    "skip",
    "reverse",
    "draw_two",
    "wild",
    "wild_draw_four",
)


def card(color: int, rank: int) -> int:
    """The code of the card of ``color`` and ``rank``; Wild cards are always black."""
    if rank >= WILD_RANK:
        return 4 * 16 + rank
    if not 0 <= color < 4 or not 0 <= rank < WILD_RANK:
        raise ValueError(f"no such card: colour {color}, rank {rank}")
    return color * 16 + rank


def color_of(code: int) -> int:
    return code >> 4


def rank_of(code: int) -> int:
    return code & 15


def is_wild(code: int) -> bool:
    return code >= WILD


def is_valid_code(code: int) -> bool:
    return code in _VALID


_VALID: Final = frozenset(ALL_CODES)


def points(code: int) -> int:
    """Scoring value: numbers at face value, Skip/Reverse/Draw Two 20, both Wilds 50."""
    r = code & 15
    if r < 10:
        return r
    return 20 if r < 13 else 50


POINTS: Final = tuple(points(c) if c in _VALID else 0 for c in range(80))


def dealer_draw_value(code: int) -> int:
    """Value of a card drawn to pick the first dealer: action and Wild cards count as zero."""
    r = code & 15
    return r if r < 10 else 0


def name(code: int) -> str:
    """A stable, human-readable name such as ``red_7``, ``blue_skip`` or ``wild_draw_four``."""
    r = code & 15
    if code >= WILD:
        return _RANK_NAMES[r]
    return f"{_COLOR_NAMES[code >> 4]}_{_RANK_NAMES[r]}"


def parse(text: str) -> int:
    """Inverse of :func:`name`."""
    t = text.strip().lower()
    if t in ("wild", "wild_draw_four"):
        return WILD if t == "wild" else WILD_DRAW_FOUR
    col, _, rk = t.partition("_")
    if col not in _COLOR_NAMES[:4] or rk not in _RANK_NAMES[:13]:
        raise ValueError(f"not a card name: {text!r}")
    return card(_COLOR_NAMES.index(col), _RANK_NAMES.index(rk))


def color_name(color: int) -> str:
    return _COLOR_NAMES[color]


def one_deck() -> list[int]:
    """The classic 108-card deck in a fixed order (shuffle it with the hand's generator)."""
    deck: list[int] = []
    for c in range(4):
        base = c * 16
        deck.append(base)
        for r in range(1, 13):
            deck.append(base + r)
            deck.append(base + r)
    deck.extend([WILD] * 4)
    deck.extend([WILD_DRAW_FOUR] * 4)
    return deck


def full_deck(decks: int) -> list[int]:
    return one_deck() * decks
