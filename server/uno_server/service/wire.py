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
from uno_server.engine import events as E
from uno_server.engine.hand import OVER, Hand
from uno_server.gen.uno.v1 import cards_pb2, game_pb2

# wire types
_VARINT: Final = 0
_LEN: Final = 2

_SMALL: Final[list[bytes]] = []


def _varint_slow(n: int) -> bytes:
    if 0 <= n < 0x800000000:  # up to 35 bits (timestamps' seconds and nanos), unrolled
        if n < 0x200000:
            if n < 0x80:
                return bytes((n,))
            if n < 0x4000:
                return bytes((n & 0x7F | 0x80, n >> 7))
            return bytes((n & 0x7F | 0x80, n >> 7 & 0x7F | 0x80, n >> 14))
        if n < 0x10000000:
            return bytes((n & 0x7F | 0x80, n >> 7 & 0x7F | 0x80, n >> 14 & 0x7F | 0x80, n >> 21))
        return bytes(
            (
                n & 0x7F | 0x80,
                n >> 7 & 0x7F | 0x80,
                n >> 14 & 0x7F | 0x80,
                n >> 21 & 0x7F | 0x80,
                n >> 28,
            )
        )
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


_SMALL.extend(_varint_slow(i) for i in range(16384))


def varint(n: int) -> bytes:
    """The varint encoding of ``n`` (negative values as 64-bit two's complement)."""
    if 0 <= n < 16384:
        return _SMALL[n]
    return _varint_slow(n)


_encode_varint = varint


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
    turn = hand.public_turn  # without the passes that kept a drawn card (Hand.public_turn)
    if turn:
        parts.append(k[17] + varint(turn))
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
_K8: Final = ld(8, b"")[:1]  # the key bytes of fields 8 and 18 (length-delimited)
_K18: Final = key(18, _LEN)
_TRUE_7: Final = key(7, _VARINT) + b"\x01"
_TRUE_19: Final = key(19, _VARINT) + b"\x01"
_KV: Final = {f: key(f, _VARINT) for f in (3, 4, 5, 9, 11, 12, 13, 20)}
_K1: Final = key(1, _LEN)


def _ts_body(ns: int) -> bytes:
    """The body of a google.protobuf.Timestamp (seconds, nanos) for ``ns`` nanoseconds."""
    seconds, nanos = divmod(ns, 1_000_000_000)
    body = b"\x08" + _encode_varint(seconds) if seconds else b""
    if nanos:
        body += b"\x10" + _encode_varint(nanos)
    return body


def request_static(match_id: str, decision_ms: int, rules: bytes) -> tuple[bytes, bytes, bytes]:
    """The parts of every DecisionRequest of one match that never change: its match id, its
    decision_ms and its rule set, as encoded fields."""
    return ld(2, match_id.encode()), uint(10, decision_ms), ld(17, rules)


def event_field(event: bytes) -> bytes:
    """An encoded Event as a DecisionRequest.events entry (field 16)."""
    return ld(16, event)


def decision_request(
    static: tuple[bytes, bytes, bytes],
    request_id: str,
    seat: int,
    hand_number: int,
    turn: int,
    prompt: int,
    required: bool,
    deadline_ns: int,
    time_left_ms: int,
    time_bank_ms: int,
    strikes: int,
    default_action_id: int | None,
    view: bytes,
    legal: list[int],
    events: list[bytes],
    sent_at_ns: int,
    resent: bool,
    previous_response_ms: int,
) -> bytes:
    """A whole PlayResponse{decision_request}: ``static`` from :func:`request_static`, ``view``
    an encoded SeatView, ``events`` entries made by :func:`event_field`. (The hot path: written
    out by hand; tests/service/test_wire.py holds it to the protobuf runtime.)"""
    rid = request_id.encode()
    kv = _KV
    enc = _encode_varint
    match_f, decision_f, rules_f = static
    parts = [_K1, enc(len(rid)), rid, match_f]
    if seat:
        parts += (kv[3], enc(seat))
    if hand_number:
        parts += (kv[4], enc(hand_number))
    if turn:
        parts += (kv[5], enc(turn))
    parts.append(_PROMPT[prompt])
    if required:
        body = _ts_body(deadline_ns)
        parts += (_TRUE_7, _K8, enc(len(body)), body)
    if time_left_ms:
        parts += (kv[9], enc(time_left_ms))
    parts.append(decision_f)
    if time_bank_ms:
        parts += (kv[11], enc(time_bank_ms))
    if strikes:
        parts += (kv[12], enc(strikes))
    if default_action_id is not None:
        parts += (kv[13], enc(default_action_id))
    parts += (b"\x72", enc(len(view)), view)  # field 14, length-delimited
    cache = _LEGAL
    for a in legal:
        b = cache.get(a)
        parts.append(b if b is not None else legal_action(a))
    parts += events
    parts.append(rules_f)
    body = _ts_body(sent_at_ns)
    parts += (_K18, enc(len(body)), body)
    if resent:
        parts.append(_TRUE_19)
    if previous_response_ms:
        parts += (kv[20], enc(previous_response_ms))
    msg = b"".join(parts)
    return b"\x12" + enc(len(msg)) + msg  # PlayResponse field 2


def match_ended(head: bytes, events: list[bytes], tail: bytes) -> bytes:
    """A whole PlayResponse{match_ended}: ``head`` the encoded MatchEnded fields 1-6, ``tail``
    fields 8-10, and between them ``events`` (field 7) from DecisionRequest.events entries made
    by :func:`event_field` (the same Event bytes under another field number)."""
    body = head + b"".join([b"\x3a" + e[2:] for e in events]) + tail  # 0x82 0x01: field 16
    return b"\x32" + _encode_varint(len(body)) + body  # PlayResponse field 6


# ---------------------------------------------------------------------------- events

_DRAW_REASON: Final = {
    "draw": game_pb2.DRAW_REASON_DRAW,
    "draw_two": game_pb2.DRAW_REASON_DRAW_TWO,
    "wild_draw_four": game_pb2.DRAW_REASON_WILD_DRAW_FOUR,
    "stack": game_pb2.DRAW_REASON_STACK,
    "bluff_caught": game_pb2.DRAW_REASON_BLUFF_CAUGHT,
    "challenge_failed": game_pb2.DRAW_REASON_CHALLENGE_FAILED,
    "uno_caught": game_pb2.DRAW_REASON_UNO_CAUGHT,
}
FAST_EVENTS: Final = frozenset(
    {
        E.Played,
        E.Drew,
        E.Passed,
        E.Skipped,
        E.Reversed,
        E.Accepted,
        E.UnoCalled,
        E.UnoWindowClosed,
        E.NoCatch,
        E.Dealt,
        E.DealerDraw,
        E.DealerChosen,
        E.FirstCard,
        E.ColorChosen,
        E.Challenged,
    }
)
"""The engine events :func:`public_event` encodes itself: the ones of nearly every move, and
those every hand or match starts with."""


def public_event(
    sequence: int, hand_number: int, wall_ns: int, ev: object, show_cards: bool = True
) -> bytes | None:
    """The encoded Event message of one of :data:`FAST_EVENTS`, or None for any other event: the
    same message as ``convert.event_to_proto`` of ``ev``. Pass the redacted event for every seat
    but the owner (a Drew without its cards), the engine's own Drew for its owner. A Dealt is
    always the engine's own: ``show_cards`` False (every seat but the owner) leaves its cards out
    and keeps their number, as the table's conversion does."""
    t = type(ev)
    if t is E.Played:
        assert isinstance(ev, E.Played)
        kind = ld(
            13,
            uint(1, ev.seat)
            + ld(2, CARD[ev.card])
            + uint(3, ev.color + 1)
            + uint(4, ev.uno)
            + uint(5, ev.out_of_turn),
        )
    elif t is E.Drew:
        assert isinstance(ev, E.Drew)
        cards = b"".join([ld(3, CARD[c]) for c in ev.cards])  # empty unless the owner's view
        kind = ld(
            15, uint(1, ev.seat) + uint(2, ev.amount) + cards + uint(4, _DRAW_REASON[ev.reason])
        )
    elif t is E.Passed or t is E.Skipped or t is E.Accepted or t is E.NoCatch:
        field = 16 if t is E.Passed else 17 if t is E.Skipped else 20 if t is E.Accepted else 26
        kind = ld(field, uint(1, ev.seat))  # type: ignore[attr-defined]
    elif t is E.Reversed:
        assert isinstance(ev, E.Reversed)
        kind = ld(18, uint(1, _DIRECTION[ev.direction]))
    elif t is E.UnoCalled:
        assert isinstance(ev, E.UnoCalled)
        kind = ld(23, uint(1, ev.seat) + uint(2, ev.late))
    elif t is E.UnoWindowClosed:
        assert isinstance(ev, E.UnoWindowClosed)
        kind = ld(25, uint(1, ev.seat) + uint(2, ev.caught))
    elif t is E.Dealt:
        assert isinstance(ev, E.Dealt)
        cards = b"".join([ld(3, CARD[c]) for c in ev.cards]) if show_cards else b""
        kind = ld(11, uint(1, ev.seat) + uint(2, len(ev.cards)) + cards)
    elif t is E.DealerDraw:
        assert isinstance(ev, E.DealerDraw)
        kind = ld(32, uint(1, ev.seat) + ld(2, CARD[ev.card]))
    elif t is E.DealerChosen:
        assert isinstance(ev, E.DealerChosen)
        kind = ld(33, uint(1, ev.seat))
    elif t is E.FirstCard:
        assert isinstance(ev, E.FirstCard)
        kind = ld(12, ld(1, CARD[ev.card]) + uint(2, ev.returned))
    elif t is E.ColorChosen:
        assert isinstance(ev, E.ColorChosen)
        kind = ld(14, uint(1, ev.seat) + uint(2, ev.color + 1))
    elif t is E.Challenged:
        assert isinstance(ev, E.Challenged)
        kind = ld(21, uint(1, ev.challenger) + uint(2, ev.offender) + uint(3, ev.bluff))
    else:
        return None
    cache = _EVENT_TIME
    if cache[0] == wall_ns:  # the events of one action share their time: encode it once
        stamp: bytes = cache[1]
    else:
        stamp = timestamp_ns(3, wall_ns)
        cache[0], cache[1] = wall_ns, stamp
    return uint(1, sequence) + uint(2, hand_number) + stamp + kind


_EVENT_TIME: Final[list[Any]] = [-1, b""]  # [wall_ns, its encoded Timestamp field]
