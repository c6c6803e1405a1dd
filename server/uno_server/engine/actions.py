"""Actions and their stable integer ids.

Every action a seat can take has one id, the same in every hand, every language and every version
of the protocol, so the simplest bot may answer with an id taken from its legal-action list.

==========  ============================================================================
id          action
==========  ============================================================================
0           DRAW: draw one card from the draw pile (also voluntary)
1           PASS: keep the card just drawn and end the turn
2           ACCEPT: take the Wild Draw Four (or a stacked) penalty and lose the turn
3           CHALLENGE: challenge the Wild Draw Four just played on you
4           CALL_UNO: call UNO late, after a play that left you one card without the call
5           NO_CATCH: answer an open UNO window without catching anybody
10 + s      CATCH seat s (0-9), who went down to one card without calling UNO
20 + c      CHOOSE_COLOR c (0 red, 1 yellow, 2 green, 3 blue) for a Wild flipped at the start
1000 + 10 * card + 2 * colour + uno
            PLAY ``card`` (a card code, see cards.py); ``colour`` is the colour named for a
            Wild (0 for any other card); ``uno`` is 1 when the play carries the UNO call
3000 + 10 * card + s
            PLAY a 7 under the seven-o house rule, swapping hands with seat s
==========  ============================================================================
"""

from __future__ import annotations

from enum import IntEnum
from typing import Final, NamedTuple

from . import cards as C
from .errors import MalformedActionError

DRAW: Final = 0
PASS: Final = 1
ACCEPT: Final = 2
CHALLENGE: Final = 3
CALL_UNO: Final = 4
NO_CATCH: Final = 5
CATCH_BASE: Final = 10
CHOOSE_COLOR_BASE: Final = 20
PLAY_BASE: Final = 1000
SWAP_BASE: Final = 3000


class Kind(IntEnum):
    DRAW = 0
    PASS = 1
    ACCEPT = 2
    CHALLENGE = 3
    CALL_UNO = 4
    NO_CATCH = 5
    CATCH = 6
    CHOOSE_COLOR = 7
    PLAY = 8


class Action(NamedTuple):
    """A decoded action; ``card``, ``color``, ``uno`` and ``target`` are -1/False if unused."""

    id: int
    kind: Kind
    card: int = -1
    color: int = -1
    uno: bool = False
    target: int = -1

    def describe(self) -> str:
        k = self.kind
        if k is Kind.PLAY:
            text = f"play {C.name(self.card)}"
            if C.is_wild(self.card):
                text += f" naming {C.color_name(self.color)}"
            if self.target >= 0:
                text += f" swapping with seat {self.target}"
            return text + (" + UNO" if self.uno else "")
        if k is Kind.CATCH:
            return f"catch seat {self.target}"
        if k is Kind.CHOOSE_COLOR:
            return f"choose {C.color_name(self.color)}"
        return k.name.lower().replace("_", " ")


def play_id(card: int, color: int = 0, uno: bool = False) -> int:
    return PLAY_BASE + card * 10 + (color if card >= C.WILD else 0) * 2 + (1 if uno else 0)


def swap_id(card: int, target: int) -> int:
    return SWAP_BASE + card * 10 + target


def catch_id(seat: int) -> int:
    return CATCH_BASE + seat


def choose_color_id(color: int) -> int:
    return CHOOSE_COLOR_BASE + color


_SIMPLE: Final = {
    DRAW: Kind.DRAW,
    PASS: Kind.PASS,
    ACCEPT: Kind.ACCEPT,
    CHALLENGE: Kind.CHALLENGE,
    CALL_UNO: Kind.CALL_UNO,
    NO_CATCH: Kind.NO_CATCH,
}


def decode(action_id: int) -> Action:
    """Decode an id, or raise :class:`MalformedActionError` if no action has that id."""
    if not isinstance(action_id, int) or isinstance(action_id, bool):
        raise MalformedActionError(f"action id must be an integer, got {action_id!r}")
    kind = _SIMPLE.get(action_id)
    if kind is not None:
        return Action(action_id, kind)
    if CATCH_BASE <= action_id < CATCH_BASE + 10:
        return Action(action_id, Kind.CATCH, target=action_id - CATCH_BASE)
    if CHOOSE_COLOR_BASE <= action_id < CHOOSE_COLOR_BASE + 4:
        return Action(action_id, Kind.CHOOSE_COLOR, color=action_id - CHOOSE_COLOR_BASE)
    if PLAY_BASE <= action_id < SWAP_BASE:
        code, rest = divmod(action_id - PLAY_BASE, 10)
        color, uno = divmod(rest, 2)
        if not C.is_valid_code(code) or color > 3 or (color and code < C.WILD):
            raise MalformedActionError(f"action id {action_id} names no card play")
        return Action(
            action_id, Kind.PLAY, card=code, color=color if code >= C.WILD else -1, uno=bool(uno)
        )
    if SWAP_BASE <= action_id < SWAP_BASE + 800:
        code, target = divmod(action_id - SWAP_BASE, 10)
        if not C.is_valid_code(code) or code & 15 != 7:
            raise MalformedActionError(f"action id {action_id} names no seven-o swap")
        return Action(action_id, Kind.PLAY, card=code, target=target)
    raise MalformedActionError(f"action id {action_id} is not an action id")
