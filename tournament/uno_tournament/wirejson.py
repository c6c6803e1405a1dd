"""A hand's events to replay JSON straight from their encoding (the runner's per-hand path).

The runner collects every hand with AwaitMatch, whose answer carries the events in the encoding
the server already made for the seats (``AwaitMatchResponse.events``, field 16). Decoding them
into protobuf objects and walking each one's fields in Python (:func:`.eventjson.events_json`)
was the runner's largest cost per hand (issue 25: about 9 us an event on the project's machine,
100 events a hand). :class:`WireEvents` reads the encoding itself: an event's envelope
(sequence, hand number, time) is three varints, and its body (a play, a draw, a pass) repeats
from hand to hand, so its text is looked up by its bytes. It also keeps what the hand record
needs (the first HandEnded and HandScored, every TimedOut seat), so the runner never decodes the
other events at all.

The text is exactly :func:`.eventjson.events_json`'s for the decoded events (the replay's
canonical JSON, hence its content hash, cannot change): anything this reader does not expect
(a field twice, two members of ``kind``, an unknown field, another wire type or field order, a
time outside Timestamp's range) sends that one event through protobuf and
:func:`.eventjson.event_text`. ``tests/tournament/test_wirejson.py`` holds both builds to
``events_json`` on engine-played hands of every rule set and on every kind of event with every
field set.

setup.py compiles this module with mypyc (``uno_tournament._build``); the compiled reader is
about four times the pure one's speed (varints and slices are native there).
"""

from __future__ import annotations

from typing import Any, Final

from google.protobuf import message_factory
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import DecodeError

from uno_server.gen.uno.v1 import cards_pb2, game_pb2

from .eventjson import (
    BODY_BYTES_MAX,
    UnsupportedError,
    event_text,
    message_text,
    timestamp_text,
)

_KINDS: Final[dict[int, tuple[str, Any]]] = {
    f.number: (f'"{f.name}":', message_factory.GetMessageClass(f.message_type))  # type: ignore[arg-type]
    for f in game_pb2.Event.DESCRIPTOR.oneofs_by_name["kind"].fields
    if f.type == FieldDescriptor.TYPE_MESSAGE
}
"""An Event field number of the ``kind`` oneof -> (its quoted JSON key, its message class)."""
_HAND_ENDED: Final = 30
_HAND_SCORED: Final = 31
_TIMED_OUT: Final = 50
_EVENTS_TAG: Final = (16 << 3) | 2
_INFO_TAG: Final = (1 << 3) | 2
_TRUNCATED_TAG: Final = 2 << 3
_TWO63: Final = 1 << 63
_TWO64: Final = 1 << 64
_MASK64: Final = _TWO64 - 1
_CACHE_MAX: Final = 16_384
_TIME_MAX: Final = 253402300800
"""Timestamp's range ends before 10000-01-01."""

_HEADS: dict[int, str] = {}
"""Seconds since the epoch -> ``"time":"<date>T<time>`` (the events of a hand share a few)."""
_BODIES: dict[tuple[int, bytes], str] = {}
"""(kind field number, body encoding) -> ``"name":{...}``."""


class OddEventError(Exception):
    """An event this reader does not take apart: protobuf decodes it instead."""


def varint(buf: bytes, i: int) -> tuple[int, int]:
    """The varint at ``buf[i]`` and the index after it (IndexError past the end)."""
    b = buf[i]
    if b < 0x80:
        return b, i + 1
    value = b & 0x7F
    shift = 7
    i += 1
    while True:
        b = buf[i]
        i += 1
        value |= (b & 0x7F) << shift
        if b < 0x80:
            return value, i
        shift += 7
        if shift > 63:
            raise IndexError("varint longer than ten bytes")


def _signed(v: int) -> int:
    """An int64 from its varint, as protobuf reads it: the low 64 bits, two's complement."""
    v &= _MASK64
    return v - _TWO64 if v >= _TWO63 else v


def _signed32(v: int) -> int:
    """An int32 from its varint, as protobuf reads it: the low 32 bits, two's complement."""
    v &= 0xFFFFFFFF
    return v - 0x100000000 if v >= 0x80000000 else v


def _time_text(ts: bytes) -> str:
    """``"time":"<RFC 3339>"`` of a Timestamp's encoding (seconds 1, nanos 2, in that order,
    each at most once), as ``Timestamp.ToJsonString`` writes it; anything else raises
    :class:`OddEventError`."""
    seconds = 0
    nanos = 0
    i = 0
    end = len(ts)
    if i < end and ts[i] == 0x08:
        seconds, i = varint(ts, i + 1)
        seconds = _signed(seconds)
    if i < end and ts[i] == 0x10:
        nanos, i = varint(ts, i + 1)
        nanos = _signed32(nanos)
    if i != end or not 0 <= nanos < 1_000_000_000 or not 0 <= seconds < _TIME_MAX:
        raise OddEventError  # out of Timestamp's range or another layout: protobuf decides
    head = _HEADS.get(seconds)
    if head is None:
        if len(_HEADS) >= 4096:
            _HEADS.clear()
        head = '"time":"' + timestamp_text(seconds, 0)[:-1]  # the date and time, no "Z"
        _HEADS[seconds] = head
    if nanos == 0:
        return head + 'Z"'
    if nanos % 1_000_000 == 0:
        return head + "." + str(nanos // 1_000_000).zfill(3) + 'Z"'
    if nanos % 1000 == 0:
        return head + "." + str(nanos // 1000).zfill(6) + 'Z"'
    return head + "." + str(nanos).zfill(9) + 'Z"'


_PARTS: dict[tuple[int, bytes], str] = {}
"""(1 for a SeatAction, 2 for a Card; its encoding) -> its text: the pieces of a HandEnded,
which is new every hand (every action and every card left) while its pieces repeat."""


def _part_text(which: int, data: bytes) -> str:
    key = (which, data)
    text = _PARTS.get(key)
    if text is None:
        try:
            msg: Any = (game_pb2.SeatAction if which == 1 else cards_pb2.Card).FromString(data)
        except DecodeError:
            raise OddEventError from None  # protobuf refuses the event: _slow says how
        if len(_PARTS) >= _CACHE_MAX:
            _PARTS.clear()
        text = message_text(msg)
        _PARTS[key] = text
    return text


def _card_list_text(data: bytes) -> str:
    """A CardList's text from its encoding (cards, field 1, only)."""
    i = 0
    end = len(data)
    cards: list[str] = []
    while i < end:
        if data[i] != 0x0A:
            raise OddEventError
        n, i = varint(data, i + 1)
        if i + n > end:
            raise OddEventError
        cards.append(_part_text(2, data[i : i + n]))
        i += n
    return '{"cards":[' + ",".join(cards) + "]}" if cards else "{}"


def _hand_ended_text(data: bytes) -> str:
    """A HandEndedEvent's text (its fields, sorted by name, inside braces) from its encoding,
    in the layout the server writes: each field in number order, the scalars once, the points
    packed; its pieces (a seat's action, a card) are looked up by their bytes. Anything else
    raises :class:`OddEventError`. This is most of a hand's text that no cache holds: 18.5 us
    a hand here against 95.5 through protobuf (compiled, 55 actions; issue 25)."""
    i = 0
    end = len(data)
    last = 0
    winner = dealer = seed = 0
    points: list[str] = []
    hands: list[str] = []
    actions: list[str] = []
    while i < end:
        tag, i = varint(data, i)
        num = tag >> 3
        wt = tag & 7
        if num < last or (num == last and num not in (3, 6)):
            raise OddEventError  # out of order, or a field twice: protobuf decides
        last = num
        if num == 1 and wt == 0:
            v, i = varint(data, i)
            winner = _signed32(v)
        elif num == 4 and wt == 0:
            seed, i = varint(data, i)
            seed &= _MASK64
        elif num == 5 and wt == 0:
            v, i = varint(data, i)
            dealer = _signed32(v)
        elif wt == 2 and num in (2, 3, 6):
            n, i = varint(data, i)
            k = i + n
            if k > end:
                raise OddEventError
            if num == 2:
                while i < k:
                    v, i = varint(data, i)
                    points.append(str(_signed32(v)))
                if i != k:
                    raise OddEventError
            elif num == 3:
                hands.append(_card_list_text(data[i:k]))
            else:
                actions.append(_part_text(1, data[i:k]))
            i = k
        else:
            raise OddEventError
    parts: list[str] = []
    if actions:
        parts.append('"actions":[' + ",".join(actions) + "]")
    if dealer:
        parts.append('"dealer":' + str(dealer))
    if hands:
        parts.append('"hands":[' + ",".join(hands) + "]")
    if points:
        parts.append('"points_held":[' + ",".join(points) + "]")
    if seed:
        parts.append('"seed":"' + str(seed) + '"')
    if winner:
        parts.append('"winner":' + str(winner))
    return "{" + ",".join(parts) + "}"


class WireEvents:
    """The events of a hand as AwaitMatch answers carry them, read once: their canonical JSON
    text, the sequence of the last one, the first HandEnded and HandScored bodies (encoded),
    and the seat of every TimedOut event. :meth:`feed` takes one answer; the answers of a hand
    cut in parts (``truncated``) add up."""

    def __init__(self) -> None:
        self.parts: list[str] = []
        self.count = 0
        self.last_sequence = 0
        self.ended: bytes | None = None
        self.scored: bytes | None = None
        self.timed_out: list[int] = []

    def json(self) -> str:
        """The events as the canonical JSON of their list."""
        return "[" + ",".join(self.parts) + "]"

    def feed(self, answer: bytes) -> tuple[bytes, bool]:
        """Read one AwaitMatchResponse's encoding: its events (field 16) into this object.
        Returns its MatchInfo's encoding (field 1) and ``truncated`` (field 2); other fields
        are skipped, as protobuf keeps them unknown. Raises ValueError for an encoding that
        ends inside a field or holds MatchInfo twice."""
        info = b""
        have_info = False
        truncated = False
        i = 0
        end = len(answer)
        try:
            while i < end:
                tag, i = varint(answer, i)
                wt = tag & 7
                if wt == 2:
                    n, i = varint(answer, i)
                    if i + n > end:
                        raise ValueError("an AwaitMatch answer that ends inside a field")
                    if tag == _EVENTS_TAG:
                        self._event(answer[i : i + n])
                    elif tag == _INFO_TAG:
                        if have_info:
                            raise ValueError("an AwaitMatch answer with MatchInfo twice")
                        info = answer[i : i + n]
                        have_info = True
                    i += n
                elif wt == 0:
                    v, i = varint(answer, i)
                    if tag == _TRUNCATED_TAG:
                        truncated = v != 0
                elif wt == 1:
                    i += 8
                elif wt == 5:
                    i += 4
                else:
                    raise ValueError(f"an AwaitMatch answer with wire type {wt}")
        except IndexError:
            raise ValueError("an AwaitMatch answer that ends inside a field") from None
        if i != end:
            raise ValueError("an AwaitMatch answer that ends inside a field")
        return info, truncated

    def _event(self, data: bytes) -> None:
        try:
            text, seq = self._fast(data)
        except (OddEventError, IndexError, UnicodeDecodeError, UnsupportedError):
            text, seq = self._slow(data)
        self.parts.append(text)
        self.count += 1
        self.last_sequence = seq

    def _fast(self, data: bytes) -> tuple[str, int]:
        """One event's text from its encoding, in the layout the server writes: sequence,
        hand number, time, then one member of ``kind`` last; anything else raises
        :class:`OddEventError` (:meth:`_slow` then decides, as protobuf would)."""
        end = len(data)
        seq = 0
        parts: list[str] = []
        i = 0
        b = data[0] if end else 0
        if b == 0x08:  # sequence, int64: a string in JSON
            v, i = varint(data, 1)
            seq = _signed(v)
            if seq:  # a zero sent anyway is not set, for protobuf
                parts.append('"sequence":"' + str(seq) + '"')
            b = data[i] if i < end else 0
        if b == 0x10:  # hand_number, int32
            v, i = varint(data, i + 1)
            hand = _signed32(v)
            if hand:
                parts.append('"hand_number":' + str(hand))
            b = data[i] if i < end else 0
        if b == 0x1A:  # time, a Timestamp
            n, j = varint(data, i + 1)
            k = j + n
            if k > end:
                raise OddEventError
            parts.append(_time_text(data[j:k]))
            i = k
            b = data[i] if i < end else 0
        if i < end:  # the kind: a tag, a length, the body, and nothing after it
            tag, i = varint(data, i)
            num = tag >> 3
            kind = _KINDS.get(num)
            if kind is None or tag & 7 != 2:
                raise OddEventError
            n, i = varint(data, i)
            if i + n != end:
                raise OddEventError
            body = data[i:end]
            if num == _HAND_ENDED:
                text = kind[0] + _hand_ended_text(body)
            elif n <= BODY_BYTES_MAX:
                key = (num, body)
                known = _BODIES.get(key)
                if known is None:
                    if len(_BODIES) >= _CACHE_MAX:
                        _BODIES.clear()
                    known = kind[0] + message_text(kind[1].FromString(body))
                    _BODIES[key] = known
                text = known
            else:
                text = kind[0] + message_text(kind[1].FromString(body))
            parts.append(text)
            if num == _HAND_ENDED:
                if self.ended is None:
                    self.ended = body
            elif num == _HAND_SCORED:
                if self.scored is None:
                    self.scored = body
            elif num == _TIMED_OUT:
                self.timed_out.append(int(kind[1].FromString(body).seat))
        parts.sort()
        return "{" + ",".join(parts) + "}", seq

    def _slow(self, data: bytes) -> tuple[str, int]:
        """One event through protobuf (its DecodeError, for a broken encoding, goes up)."""
        e = game_pb2.Event.FromString(data)
        kind = e.WhichOneof("kind")
        if kind == "hand_ended" and self.ended is None:
            self.ended = e.hand_ended.SerializeToString()
        elif kind == "hand_scored" and self.scored is None:
            self.scored = e.hand_scored.SerializeToString()
        elif kind == "timed_out":
            self.timed_out.append(int(e.timed_out.seat))
        return event_text(e), int(e.sequence)
