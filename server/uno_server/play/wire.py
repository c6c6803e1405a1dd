"""Messages from the bot SDK, in this package's own protocol classes.

The Python SDK may carry its own generated copy of ``uno.v1``; its messages are not instances of
``uno_server.gen`` classes, and the two must not be mixed in one message. The wire format is the
contract, so every message the play client takes from the SDK is re-read from its bytes here,
once, at the edge. The same goes for the engine's view of a seat, built from the protocol view.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar

from google.protobuf.message import Message

from uno_server.engine.hand import PHASE_NAMES
from uno_server.engine.views import SeatView as EngineView
from uno_server.gen.uno.v1 import bot_pb2, game_pb2

T = TypeVar("T")


def own(cls: type[T], msg: Message) -> T:
    """``msg`` (any generated class of the same protocol message) as an instance of ``cls``."""
    out: Any = cls()
    out.ParseFromString(msg.SerializeToString())
    return out  # type: ignore[no-any-return]


def own_events(events: Iterable[Message]) -> list[game_pb2.Event]:
    return [own(game_pb2.Event, e) for e in events]


def engine_view(req: bot_pb2.DecisionRequest) -> EngineView:
    """The engine's SeatView of a decision request, so engine bots can play over the wire."""
    v = req.view
    return EngineView(
        seat=v.seat,
        hand_number=v.hand_number,
        turn=v.turn,
        phase=PHASE_NAMES[v.phase - 1],
        hand=tuple(sorted(c.code for c in v.hand)),
        top_card=v.top_card.code if v.HasField("top_card") else -1,
        active_color=v.active_color - 1 if v.active_color else -1,
        direction=-1 if v.direction == game_pb2.DIRECTION_DECREASING else 1,
        dealer=v.dealer,
        current=v.current_seat if v.HasField("current_seat") else -1,
        card_counts=tuple(s.card_count for s in v.seats),
        uno_called=tuple(s.uno_called for s in v.seats),
        draw_pile=v.draw_pile_size,
        discard_pile=v.discard_pile_size,
        uno_window=v.uno_window.offender if v.HasField("uno_window") else -1,
        drawn_card=v.drawn_card.code if v.HasField("drawn_card") else -1,
        legal_actions=tuple(sorted(a.id for a in req.legal_actions)),
        over=v.phase == game_pb2.PHASE_OVER,
        winner=v.winner if v.HasField("winner") else -1,
    )
