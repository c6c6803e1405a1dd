"""Hand-rolled protobuf encoding of the per-move messages (the hot path).

Building a DecisionRequest with the protobuf runtime costs tens of microseconds a move, most of
it in ``extend`` of repeated message fields and in Python-level well-known-type helpers. The
protobuf wire format lets a message be written as the concatenation of its encoded fields, in
any order, and a repeated message field as one length-delimited record per element, so almost
everything a seat receives can be cached as bytes and joined:

- every card, every legal action and the match's rule set are encoded once;
- every event of the match log is encoded once per audience (the owner of a private event,
  everyone else), and reused for each seat and spectator that receives it;
- only the view's small scalars and the request's own fields are encoded per request.

What this module writes is parsed by the generated classes like any other message:
tests/service/test_wire.py checks, over thousands of real hand states, that every encoding parses
to exactly the message the protobuf runtime builds. The module knows the field numbers of
``proto/uno/v1``; that test fails if the two ever drift apart.
"""

from __future__ import annotations

from typing import Any, Final

from uno_server.engine import cards as C
from uno_server.engine.hand import OVER, Hand
from uno_server.gen.uno.v1 import cards_pb2, game_pb2

# wire types
_VARINT: Final = 0
_LEN: Final = 2

_SMALL: Final[list[bytes]] = []


def _encode_varint(n: int) -> bytes:
    if n < 0:
        n += 1 << 64  # int32/int64 negatives are ten-byte two's complement varints
    out = bytearray()
    while True:
        bits = n & 0x7F
        n >>= 7
        if n:
            out.append(bits | 0x80)
        else:
            out.append(bits)
            return bytes(out)


_SMALL.extend(_encode_varint(i) for i in range(16384))


def varint(n: int) -> bytes:
    """The varint encoding of ``n`` (negative values as 64-bit two's complement)."""
    if 0 <= n < 16384:
        return _SMALL[n]
    return _encode_varint(n)


def key(field: int, wire_type: int) -> bytes:
    return varint((field << 3) | wire_type)


def ld(field: int, payload: bytes) -> bytes:
    """A length-delimited field: a string, bytes, a message or a packed repeated scalar."""
    return key(field, _LEN) + varint(len(payload)) + payload


def uint(field: int, value: int) -> bytes:
    """A varint scalar field, omitted when it holds the proto3 default (0 / false)."""
    if not value:
        return b""
    return key(field, _VARINT) + varint(value)


def opt(field: int, value: int) -> bytes:
    """A varint field with explicit presence (``optional``): written even when 0."""
    return key(field, _VARINT) + varint(value)


def string(field: int, value: str) -> bytes:
    if not value:
        return b""
    return ld(field, value.encode())


def timestamp_ns(field: int, ns: int) -> bytes:
    """A google.protobuf.Timestamp field from nanoseconds since the epoch."""
    seconds, nanos = divmod(ns, 1_000_000_000)
    return ld(field, uint(1, seconds) + uint(2, nanos))


def timestamp(field: int, seconds: float) -> bytes:
    return timestamp_ns(field, int(seconds * 1e9))


# ---------------------------------------------------------------------------- cached fragments


def _card_message(code: int) -> bytes:
    return bytes(
        cards_pb2.Card(
            color=(code >> 4) + 1, rank=(code & 15) + 1, code=code, name=C.name(code)
        ).SerializeToString()
    )


CARD: Final[dict[int, bytes]] = {code: _card_message(code) for code in C.ALL_CODES}
"""Card.code -> the encoded Card message."""

# SeatView fields
_V_HAND: Final[dict[int, bytes]] = {code: ld(2, b) for code, b in CARD.items()}
_V_TOP: Final[dict[int, bytes]] = {code: ld(3, b) for code, b in CARD.items()}
_V_DRAWN: Final[dict[int, bytes]] = {code: ld(13, b) for code, b in CARD.items()}
_DIRECTION: Final = {1: game_pb2.DIRECTION_INCREASING, -1: game_pb2.DIRECTION_DECREASING}


_K = {f: key(f, _VARINT) for f in range(1, 20)}
_SEAT_STATE: dict[tuple[int, int, int, bool, bool, bool], bytes] = {}
_PLAY_ORDER: dict[tuple[int, int, int], bytes] = {}


def _seat_state(i: int, count: int, score: int, uno: bool, partners: bool, taken: bool) -> bytes:
    k = (i, count, score, uno, partners, taken)
    b = _SEAT_STATE.get(k)
    if b is None:
        if len(_SEAT_STATE) > 200_000:
            _SEAT_STATE.clear()
        b = _SEAT_STATE[k] = ld(
            8,
            uint(1, i)
            + uint(2, count)
            + uint(3, score)
            + uint(4, uno)
            + (opt(6, i % 2) if partners else b"")
            + uint(7, taken),
        )
    return b


def _play_order(current: int, d: int, n: int) -> bytes:
    k = (current, d, n)
    b = _PLAY_ORDER.get(k)
    if b is None:
        b = _PLAY_ORDER[k] = ld(7, b"".join([_SMALL[(current + d * j) % n] for j in range(n)]))
    return b


_V_COLOR: Final = [_K[4] + _SMALL[c + 1] for c in range(4)]
_V_DIRECTION: Final = {1: _K[5] + _SMALL[1], -1: _K[5] + _SMALL[2]}
_V_PHASE: Final = [_K[12] + _SMALL[p + 1] for p in range(6)]


def seat_view(
    hand: Hand,
    seat: int,
    totals: list[int],
    taken_over: list[bool],
    window_closes_at_ns: int,
    window_opened_at_ns: int = 0,
) -> bytes:
    """The encoded SeatView of ``seat``: the same message as ``convert.seat_view``.

    ``window_closes_at_ns`` / ``window_opened_at_ns``: the open UNO window's closing and opening
    times in nanoseconds since the epoch (0: not set)."""
    n = hand.n
    d = hand.direction
    current = hand.current
    hands = hand.hands
    small = _SMALL
    k = _K
    parts = [k[1] + small[seat]] if seat else []
    parts += [_V_HAND[c] for c in sorted(hands[seat])]
    discard = hand.discard
    if discard:
        parts.append(_V_TOP[discard[-1]])
    if hand.color >= 0:
        parts.append(_V_COLOR[hand.color])
    parts.append(_V_DIRECTION[d])
    phase = hand.phase
    over = phase == OVER
    if not over:
        parts.append(k[6] + small[current])
    parts.append(_play_order(current, d, n))
    partners = hand.rules.partners
    uno_called = hand.uno_called
    for i in range(n):
        parts.append(
            _seat_state(i, len(hands[i]), totals[i], uno_called[i], partners, taken_over[i])
        )
    np = len(hand.draw_pile)
    if np:
        parts.append(k[9] + small[np])
    parts.append(k[10] + small[len(discard)])
    if hand.dealer:
        parts.append(k[11] + small[hand.dealer])
    parts.append(_V_PHASE[phase])
    if hand.drawn >= 0 and current == seat:
        parts.append(_V_DRAWN[hand.drawn])
    if hand.window >= 0:
        w = uint(1, hand.window)
        if window_opened_at_ns:
            w += timestamp_ns(2, window_opened_at_ns)
        if window_closes_at_ns:
            w += timestamp_ns(3, window_closes_at_ns)
        awaiting = hand.window_awaiting()
        if awaiting:
            w += ld(4, b"".join([varint(s) for s in awaiting]))
        parts.append(ld(14, w))
    owed = hand.penalty_owed
    if owed:
        off = hand.wd4_offender
        if off >= 0:
            p = uint(1, game_pb2.PENALTY_KIND_WILD_DRAW_FOUR) + uint(2, owed) + opt(3, off)
        else:
            p = uint(1, game_pb2.PENALTY_KIND_DRAW_TWO_STACK) + uint(2, owed)
        parts.append(ld(15, p))
    parts.append(k[16] + varint(hand.hand_number))
    if hand.turn:
        parts.append(k[17] + varint(hand.turn))
    if over:
        parts.append(k[18] + small[hand.winner])
    return b"".join(parts)


# ---------------------------------------------------------------------------- framing


def serialize(msg: Any) -> bytes:
    """The gRPC serializer of PlayResponse: messages the hot path encoded itself are bytes
    already; anything else is a PlayResponse message."""
    if type(msg) is bytes:
        return msg
    return bytes(msg.SerializeToString())


def batch(items: list[Any]) -> bytes:
    """One PlayResponse{batch: ResponseBatch{messages: items}}, each item a PlayResponse or its
    encoding."""
    return ld(10, b"".join([ld(1, serialize(m)) for m in items]))


# ---------------------------------------------------------------------------- decision requests

_LEGAL: dict[int, bytes] = {}


def legal_action(action_id: int) -> bytes:
    """DecisionRequest.legal_actions entry (field 15) of one action id, encoded once."""
    b = _LEGAL.get(action_id)
    if b is None:
        from .convert import legal_action as build

        b = _LEGAL[action_id] = ld(15, bytes(build(action_id).SerializeToString()))
    return b


_PROMPT: Final = [key(6, _VARINT) + varint(p) for p in range(16)]
_TRUE_7: Final = key(7, _VARINT) + b"\x01"
_TRUE_19: Final = key(19, _VARINT) + b"\x01"


def decision_request(
    *,
    request_id: str,
    match_id: str,
    seat: int,
    hand_number: int,
    turn: int,
    prompt: int,
    required: bool,
    deadline_ns: int,
    time_left_ms: int,
    decision_ms: int,
    time_bank_ms: int,
    strikes: int,
    default_action_id: int | None,
    view: bytes,
    legal: list[int],
    events: list[bytes],
    rules: bytes,
    sent_at_ns: int,
    resent: bool,
    previous_response_ms: int,
) -> bytes:
    """A whole PlayResponse{decision_request}. ``view`` is an encoded SeatView, ``events`` the
    encoded Event messages, ``rules`` the encoded RuleSet (all as this module makes them)."""
    parts = [
        ld(1, request_id.encode()),
        ld(2, match_id.encode()),
        uint(3, seat),
        uint(4, hand_number),
        uint(5, turn),
        _PROMPT[prompt],
    ]
    if required:
        parts.append(_TRUE_7)
        parts.append(timestamp_ns(8, deadline_ns))
    parts.append(uint(9, time_left_ms))
    parts.append(uint(10, decision_ms))
    parts.append(uint(11, time_bank_ms))
    parts.append(uint(12, strikes))
    if default_action_id is not None:
        parts.append(opt(13, default_action_id))
    parts.append(ld(14, view))
    cache = _LEGAL
    for a in legal:
        b = cache.get(a)
        parts.append(b if b is not None else legal_action(a))
    for e in events:
        parts.append(ld(16, e))
    parts.append(ld(17, rules))
    parts.append(timestamp_ns(18, sent_at_ns))
    if resent:
        parts.append(_TRUE_19)
    parts.append(uint(20, previous_response_ms))
    return ld(2, b"".join(parts))
