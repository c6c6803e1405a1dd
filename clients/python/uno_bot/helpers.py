"""Small helpers every bot author would otherwise write by hand. The same four exist, with the
same meaning, in every UNO Arena SDK (Go, TypeScript, Rust, Java: modulo case conventions).

>>> from uno_bot.helpers import card_points, is_play_of, wild_color, last_played_seat
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from .proto import cards_pb2, game_pb2

__all__ = ["card_points", "is_play_of", "last_played_seat", "wild_color"]

_ACTION_POINTS: Final = 20
_WILD_POINTS: Final = 50


def _rank(card: cards_pb2.Card) -> int:
    """The protocol Rank of a card; from its code when the rank field is unset."""
    if card.rank != cards_pb2.RANK_UNSPECIFIED:
        return int(card.rank)
    return (card.code & 15) + 1  # engine rank 0..14 -> protocol Rank 1..15


def card_points(card: cards_pb2.Card) -> int:
    """What the card scores in a hand left at the end: a number card its face value (0-9),
    Skip, Reverse and Draw Two 20, Wild and Wild Draw Four 50."""
    rank = _rank(card)
    if cards_pb2.RANK_ZERO <= rank <= cards_pb2.RANK_NINE:
        return rank - cards_pb2.RANK_ZERO
    if rank in (cards_pb2.RANK_SKIP, cards_pb2.RANK_REVERSE, cards_pb2.RANK_DRAW_TWO):
        return _ACTION_POINTS
    if rank in (cards_pb2.RANK_WILD, cards_pb2.RANK_WILD_DRAW_FOUR):
        return _WILD_POINTS
    raise ValueError(f"card has no rank: {card}")


def is_play_of(action: game_pb2.LegalAction, card_code: int) -> bool:
    """True if the legal action plays the card with this ``Card.code`` (any named colour, with
    or without the UNO call)."""
    return action.kind == game_pb2.ACTION_KIND_PLAY and action.card.code == card_code


def wild_color(action: game_pb2.LegalAction) -> cards_pb2.Color | None:
    """The colour a Wild or Wild Draw Four play names; None for any other action."""
    if action.kind != game_pb2.ACTION_KIND_PLAY or not action.HasField("card"):
        return None
    if _rank(action.card) not in (cards_pb2.RANK_WILD, cards_pb2.RANK_WILD_DRAW_FOUR):
        return None
    return action.color


def last_played_seat(events: Iterable[game_pb2.Event]) -> int | None:
    """The seat of the latest PlayedEvent among ``events`` (oldest first, as the server sends
    them); None if none of them is a play."""
    seat: int | None = None
    for event in events:
        if event.WhichOneof("kind") == "played":
            seat = event.played.seat
    return seat
