"""Events: immutable records of what an action caused.

Events carry full information (drawn cards, challenge evidence, hands at the end). What a given
seat may see of them is decided in one place only, :func:`uno_server.engine.views.redact`.
"""

from __future__ import annotations

from typing import NamedTuple


class HandStarted(NamedTuple):
    hand_number: int
    dealer: int
    seats: int
    seed: int


class Dealt(NamedTuple):
    """``cards`` are visible to ``seat`` alone; others see only the count."""

    seat: int
    cards: tuple[int, ...]


class FirstCard(NamedTuple):
    """The card flipped to start the discard pile. ``returned`` if it went back into the deck."""

    card: int
    returned: bool


class Played(NamedTuple):
    """``color`` is the active colour after the play (the named colour for a Wild)."""

    seat: int
    card: int
    color: int
    uno: bool
    out_of_turn: bool


class ColorChosen(NamedTuple):
    """A colour named for a Wild flipped as the first card."""

    seat: int
    color: int


class Drew(NamedTuple):
    """``cards`` are visible to ``seat`` alone. ``reason`` is one of draw, draw_two, wild_draw_four,
    stack, bluff_caught, challenge_failed, uno_caught. ``amount`` may be short of what was owed
    when the draw and discard piles run out."""

    seat: int
    amount: int
    cards: tuple[int, ...]
    reason: str


class Passed(NamedTuple):
    """The seat kept the card it drew (or drew nothing) and its turn ended."""

    seat: int


class Skipped(NamedTuple):
    """The seat loses its turn (Skip, Draw Two, accepted penalty, failed challenge)."""

    seat: int


class Reversed(NamedTuple):
    direction: int


class Reshuffled(NamedTuple):
    """The discard pile except its top card became the new draw pile of ``amount`` cards."""

    amount: int


class Accepted(NamedTuple):
    """``seat`` took a Wild Draw Four or stacked penalty without challenging."""

    seat: int


class Challenged(NamedTuple):
    """Public result of a Wild Draw Four challenge."""

    challenger: int
    offender: int
    bluff: bool


class ChallengeEvidence(NamedTuple):
    """The offender's hand when the Wild Draw Four was played; visible to the challenger alone."""

    challenger: int
    offender: int
    hand: tuple[int, ...]


class UnoCalled(NamedTuple):
    seat: int
    late: bool


class UnoWindowOpened(NamedTuple):
    """``seat`` went down to one card without calling UNO; others may catch it."""

    seat: int


class UnoWindowClosed(NamedTuple):
    seat: int
    caught: bool


class NoCatch(NamedTuple):
    """``seat`` answered an open UNO window without catching."""

    seat: int


class Caught(NamedTuple):
    catcher: int
    offender: int
    penalty: int


class HandsSwapped(NamedTuple):
    """Seven-o: ``seat`` swapped hands with ``target``. Neither of the two has called UNO after
    it, and the play of the 7 opens no UNO window (RULINGS.md)."""

    seat: int
    target: int


class HandsRotated(NamedTuple):
    """Seven-o: every hand passed one seat along ``direction``. No seat has called UNO after it
    (a call made with the 0 lapses too), and the play of the 0 opens no UNO window
    (RULINGS.md)."""

    direction: int


class HandEnded(NamedTuple):
    """``points_held`` is the value of the cards each seat holds; ``hands`` reveals them and is
    shown to seats only after the hand is over."""

    winner: int
    points_held: tuple[int, ...]
    hands: tuple[tuple[int, ...], ...]


class HandScored(NamedTuple):
    """Match-level: points each seat gained this hand and the running totals."""

    hand_number: int
    gained: tuple[int, ...]
    totals: tuple[int, ...]


class DealerDraw(NamedTuple):
    """Match-level: a card drawn to choose the first dealer."""

    seat: int
    card: int


class DealerChosen(NamedTuple):
    seat: int


class SeatEliminated(NamedTuple):
    """Challenge UNO house rule: the seat reached the target score and is out."""

    seat: int
    total: int


class MatchEnded(NamedTuple):
    winners: tuple[int, ...]
    totals: tuple[int, ...]


Event = (
    HandStarted
    | Dealt
    | FirstCard
    | Played
    | ColorChosen
    | Drew
    | Passed
    | Skipped
    | Reversed
    | Reshuffled
    | Accepted
    | Challenged
    | ChallengeEvidence
    | UnoCalled
    | UnoWindowOpened
    | UnoWindowClosed
    | NoCatch
    | Caught
    | HandsSwapped
    | HandsRotated
    | HandEnded
    | HandScored
    | DealerDraw
    | DealerChosen
    | SeatEliminated
    | MatchEnded
)


def event_name(event: Event) -> str:
    """snake_case name of an event's type, as used in transcripts and the protocol."""
    return _NAMES[type(event)]


_NAMES: dict[type, str] = {}
for _cls in Event.__args__:
    _n = _cls.__name__
    _NAMES[_cls] = "".join("_" + ch.lower() if ch.isupper() else ch for ch in _n).lstrip("_")
