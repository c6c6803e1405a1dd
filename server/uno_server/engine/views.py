"""What one seat may see. Every per-seat view and every redacted event comes from this module.

A seat sees its own cards, public facts (counts, top card, colour, direction, scores, UNO status)
and public events. Another seat's cards never appear, with two exceptions the rules require:
the Wild Draw Four evidence shown to the challenger alone, and every hand revealed once the hand
is over (for counting the score).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from . import events as E
from .hand import CHOOSE_COLOR, OVER, PHASE_NAMES, Hand

SPECTATOR: Final = -1
"""Viewer id of a spectator: public events only until the hand ends, then every hand."""


def redact(event: E.Event, viewer: int) -> E.Event | None:
    """The event as ``viewer`` may see it, or ``None`` if it must not see it at all."""
    if isinstance(event, (E.Drew, E.Dealt)):
        if event.seat != viewer and event.cards:
            return event._replace(cards=())
        return event
    if isinstance(event, E.ChallengeEvidence):
        return event if event.challenger == viewer else None
    if isinstance(event, E.HandStarted):
        # the seed with the rules would reveal every hand; it is published once the hand ends
        return event._replace(seed=-1)
    return event


def redact_all(events: list[E.Event], viewer: int) -> list[E.Event]:
    out = []
    for e in events:
        r = redact(e, viewer)
        if r is not None:
            out.append(r)
    return out


@dataclass(frozen=True, slots=True)
class SeatView:
    """Everything one seat knows at one moment."""

    seat: int
    hand_number: int
    turn: int
    phase: str
    hand: tuple[int, ...]
    top_card: int
    active_color: int
    direction: int
    dealer: int
    current: int
    card_counts: tuple[int, ...]
    uno_called: tuple[bool, ...]
    draw_pile: int
    discard_pile: int
    uno_window: int
    drawn_card: int
    legal_actions: tuple[int, ...]
    over: bool
    winner: int


def seat_view(hand: Hand, seat: int) -> SeatView:
    """The view of ``seat`` (0..n-1). Contains no other seat's cards."""
    return SeatView(
        seat=seat,
        hand_number=hand.hand_number,
        turn=hand.public_turn,
        phase=PHASE_NAMES[hand.phase],
        hand=tuple(sorted(hand.hands[seat])),
        top_card=hand.discard[-1] if hand.discard else -1,
        active_color=hand.color if hand.phase != CHOOSE_COLOR else -1,
        direction=hand.direction,
        dealer=hand.dealer,
        current=hand.current if hand.phase != OVER else -1,
        card_counts=tuple(len(h) for h in hand.hands),
        uno_called=tuple(hand.uno_called),
        draw_pile=len(hand.draw_pile),
        discard_pile=len(hand.discard),
        uno_window=hand.window,
        drawn_card=hand.drawn if hand.current == seat else -1,
        legal_actions=tuple(hand.legal_actions(seat)),
        over=hand.phase == OVER,
        winner=hand.winner,
    )
