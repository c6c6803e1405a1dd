"""Protocol messages -> the rules engine's own types, so the engine's bots can play over the
wire as SDK bots (:mod:`uno_tournament.bots.engine_heuristic`). This lives with the tournament,
not in the SDK: the SDK (``uno-arena-bot``) knows nothing of the engine.

The engine (``uno_server.engine``) numbers colours, ranks and phases from 0; the protocol's enums
start at ``*_UNSPECIFIED = 0``, so every protocol number is the engine number plus one. Card codes
(``Card.code``) and action ids are the same on both sides.

>>> view = to_engine_view(request)          # a uno_server.engine.views.SeatView
>>> HeuristicBot().choose(view)             # any engine bot works on it
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from uno_bot.proto import bot_pb2, cards_pb2, game_pb2
from uno_server.engine.hand import PHASE_NAMES
from uno_server.engine.views import SeatView as EngineSeatView

__all__ = [
    "card_code",
    "engine_color",
    "engine_direction",
    "engine_phase",
    "to_engine_view",
    "view_to_engine",
]

_NO_CARD: Final = -1


def engine_color(color: int) -> int:
    """Protocol Color -> engine colour (0 red .. 3 blue, 4 black); -1 for COLOR_UNSPECIFIED."""
    return color - 1 if color != cards_pb2.COLOR_UNSPECIFIED else -1


def engine_direction(direction: int) -> int:
    """Protocol Direction -> engine direction (+1 increasing, -1 decreasing)."""
    return -1 if direction == game_pb2.DIRECTION_DECREASING else 1


def engine_phase(phase: int) -> str:
    """Protocol Phase -> engine phase name ("turn", "drawn", ..., "over")."""
    if not 1 <= phase <= len(PHASE_NAMES):
        raise ValueError(f"unknown phase {phase}")
    return PHASE_NAMES[phase - 1]


def card_code(card: cards_pb2.Card) -> int:
    """The engine card code of a Card (its ``code`` field)."""
    return card.code


def view_to_engine(view: game_pb2.SeatView, legal_actions: Iterable[int]) -> EngineSeatView:
    """Build the engine's SeatView from a protocol SeatView and the legal action ids."""
    phase = engine_phase(view.phase)
    return EngineSeatView(
        seat=view.seat,
        hand_number=view.hand_number,
        turn=view.turn,
        phase=phase,
        hand=tuple(sorted(c.code for c in view.hand)),
        top_card=view.top_card.code if view.HasField("top_card") else _NO_CARD,
        active_color=engine_color(view.active_color),
        direction=engine_direction(view.direction),
        dealer=view.dealer,
        current=view.current_seat if view.HasField("current_seat") else -1,
        card_counts=tuple(s.card_count for s in view.seats),
        uno_called=tuple(s.uno_called for s in view.seats),
        draw_pile=view.draw_pile_size,
        discard_pile=view.discard_pile_size,
        uno_window=view.uno_window.offender if view.HasField("uno_window") else -1,
        drawn_card=view.drawn_card.code if view.HasField("drawn_card") else _NO_CARD,
        legal_actions=tuple(sorted(legal_actions)),
        over=phase == "over",
        winner=view.winner if view.HasField("winner") else -1,
    )


def to_engine_view(request: bot_pb2.DecisionRequest) -> EngineSeatView:
    """The engine SeatView of a DecisionRequest (its view plus its legal action ids)."""
    return view_to_engine(request.view, (a.id for a in request.legal_actions))
