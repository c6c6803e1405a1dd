"""Events to the JSON objects a replay stores, fast.

A stored replay keeps each event of the hand as ``json_format.MessageToDict(event,
preserving_proto_field_name=True)`` made it. That function is the runner's largest cost per hand
(about 50 µs an event in pure Python, 75 events a hand), so :func:`event_dicts` makes the same
objects with one converter per field, built once from the descriptor and cached: set fields only
(``ListFields``, which is what ``MessageToDict`` prints without defaults), field names as in the
proto, enums by name (an unknown number as the number), 64-bit integers as strings,
``google.protobuf.Timestamp`` as its RFC 3339 string, messages as objects, repeated fields as
lists. A message with a field of any other kind (float, bytes, a map, another well-known type) is
handed to ``MessageToDict`` itself, so the output never differs; ``tests/tournament/
test_eventjson.py`` compares the two on every kind of event of many hands.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Callable, Iterable
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.timestamp_pb2 import Timestamp

_Conv = Callable[[Any], Any]

_SAME = frozenset(
    {
        FieldDescriptor.TYPE_BOOL,
        FieldDescriptor.TYPE_STRING,
        FieldDescriptor.TYPE_INT32,
        FieldDescriptor.TYPE_UINT32,
        FieldDescriptor.TYPE_SINT32,
        FieldDescriptor.TYPE_FIXED32,
        FieldDescriptor.TYPE_SFIXED32,
    }
)
_STR = frozenset(
    {
        FieldDescriptor.TYPE_INT64,
        FieldDescriptor.TYPE_UINT64,
        FieldDescriptor.TYPE_SINT64,
        FieldDescriptor.TYPE_FIXED64,
        FieldDescriptor.TYPE_SFIXED64,
    }
)


class _UnsupportedError(Exception):
    """A field this module does not convert: the whole event goes to MessageToDict."""


_FIELDS: dict[Any, tuple[str, _Conv]] = {}
"""A field (its descriptor) -> (its JSON name, its converter)."""
_DAYS: dict[int, str] = {}
"""Seconds since the epoch -> the date and time Timestamp.ToJsonString writes for them."""


def _same(v: Any) -> Any:
    return v


def _timestamp(v: Any) -> str:
    """``Timestamp.ToJsonString()``, with the date and time of each second made once."""
    return timestamp_text(v.seconds, v.nanos)


def timestamp_text(seconds: int, nanos: int) -> str:
    """``Timestamp(seconds=seconds, nanos=nanos).ToJsonString()`` (the two in its range), with
    the date and time of each second made once."""
    head = _DAYS.get(seconds)
    if head is None:
        if len(_DAYS) > 4096:
            _DAYS.clear()
        head = _DAYS[seconds] = str(Timestamp(seconds=seconds).ToJsonString())[:-1]  # no "Z"
    if nanos == 0:
        return head + "Z"
    if nanos % 1_000_000 == 0:
        return f"{head}.{nanos // 1_000_000:03d}Z"
    if nanos % 1000 == 0:
        return f"{head}.{nanos // 1000:06d}Z"
    return f"{head}.{nanos:09d}Z"


def _unsupported(v: Any) -> Any:
    raise _UnsupportedError


def _enum(f: FieldDescriptor) -> _Conv:
    enum = f.enum_type
    assert enum is not None
    names = {n: v.name for n, v in enum.values_by_number.items()}

    def conv(v: int) -> Any:
        return names.get(v, v)

    return conv


def _scalar(f: FieldDescriptor) -> _Conv:
    t = f.type
    if t == FieldDescriptor.TYPE_MESSAGE:
        m = f.message_type
        assert m is not None
        if m.full_name == "google.protobuf.Timestamp":
            return _timestamp
        if m.full_name.startswith("google.protobuf.") or m.GetOptions().map_entry:
            return _unsupported
        return message_dict
    if t == FieldDescriptor.TYPE_ENUM:
        return _enum(f)
    if t in _STR:
        return str
    if t in _SAME:
        return _same
    return _unsupported  # float, double, bytes: MessageToDict's own formatting


def _field(f: FieldDescriptor) -> tuple[str, _Conv]:
    got = _FIELDS.get(f)
    if got is None:
        one = _scalar(f)
        if f.is_repeated:

            def many(v: Iterable[Any], one: _Conv = one) -> list[Any]:
                return [one(x) for x in v]

            got = (f.name, many)
        else:
            got = (f.name, one)
        _FIELDS[f] = got
    return got


def message_dict(msg: Message) -> dict[str, Any]:
    """``msg`` as MessageToDict(preserving_proto_field_name=True) makes it (raises
    :class:`_UnsupportedError` for a field kind it does not convert)."""
    out: dict[str, Any] = {}
    cache = _FIELDS
    for f, v in msg.ListFields():
        got = cache.get(f)
        if got is None:
            got = _field(f)
        out[got[0]] = got[1](v)
    return out


def event_dicts(events: Iterable[Message]) -> list[Any]:
    """Each event as ``json_format.MessageToDict(e, preserving_proto_field_name=True)`` (a dict;
    a well-known type's own JSON form for one)."""
    out: list[Any] = []
    for e in events:
        try:
            out.append(message_dict(e))
        except _UnsupportedError:
            out.append(json_format.MessageToDict(e, preserving_proto_field_name=True))
    return out


_dumps = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, check_circular=False
).encode
"""``json.dumps(v, sort_keys=True, separators=(",", ":"), ensure_ascii=False)``, the encoder made
once (``store.canonical_json``'s options; ``check_circular`` changes no output)."""

_BODIES: dict[tuple[Any, bytes], str] = {}
"""(field, the message's encoding) -> the message's canonical JSON: a hand's plays, draws and
passes repeat from hand to hand, so most events' bodies are made once per run."""
_BODY_CACHE_MAX = 16_384
_BODY_BYTES_MAX = 96
"""Messages longer than this (a hand's end, with every card) are not worth keeping."""

_TEXTS: dict[Any, tuple[str, _Conv]] = {}
"""A field (its descriptor) -> (its JSON name, quoted, and its value's canonical JSON text)."""


def _text_scalar(f: FieldDescriptor) -> _Conv:
    """The canonical JSON text of one value of ``f``: ``_dumps`` of what :func:`_scalar`'s
    converter makes, written directly where that is plain (numbers, booleans, enum names,
    64-bit integers, timestamps: ASCII with nothing to escape)."""
    t = f.type
    conv = _scalar(f)
    if conv is message_dict:

        def body(v: Any, f: FieldDescriptor = f) -> str:
            data = v.SerializeToString()
            if len(data) > _BODY_BYTES_MAX:
                return _message_text(v)
            key = (f, data)
            text = _BODIES.get(key)
            if text is None:
                if len(_BODIES) >= _BODY_CACHE_MAX:
                    _BODIES.clear()
                text = _BODIES[key] = _message_text(v)
            return text

        return body
    if conv is _timestamp:
        return lambda v: '"' + _timestamp(v) + '"'
    if t == FieldDescriptor.TYPE_ENUM:
        enum = f.enum_type
        assert enum is not None
        names = {n: f'"{v.name}"' for n, v in enum.values_by_number.items()}

        def enum_text(v: int) -> str:
            return names.get(v) or str(v)

        return enum_text
    if t in _STR:
        return lambda v: f'"{v}"'
    if t == FieldDescriptor.TYPE_BOOL:
        return lambda v: "true" if v else "false"
    if t in _SAME and t != FieldDescriptor.TYPE_STRING:
        return str  # a Python int's digits are its JSON
    if conv is _unsupported:
        return _unsupported
    return lambda v: _dumps(conv(v))  # strings: JSON's escapes


def _text_field(f: FieldDescriptor) -> tuple[str, _Conv]:
    got = _TEXTS.get(f)
    if got is None:
        one = _text_scalar(f)
        if f.is_repeated:

            def many(v: Iterable[Any], one: _Conv = one) -> str:
                return "[" + ",".join([one(x) for x in v]) + "]"

            got = (f'"{f.name}":', many)
        else:
            got = (f'"{f.name}":', one)
        _TEXTS[f] = got
    return got


def _message_text(msg: Message) -> str:
    """``_dumps(message_dict(msg))``, made from each set field's text, the fields sorted by name
    as ``sort_keys`` sorts them (a field's name is an ASCII identifier: ``"name"`` is its JSON,
    and ``"a":`` sorts before ``"b":`` as ``a`` before ``b`` since ``"`` is below every identifier
    character). Raises :class:`_UnsupportedError` as :func:`message_dict` does."""
    cache = _TEXTS
    parts: list[str] = []
    for f, v in msg.ListFields():
        got = cache.get(f)
        if got is None:
            got = _text_field(f)
        parts.append(got[0] + got[1](v))
    parts.sort()
    return "{" + ",".join(parts) + "}"


def event_text(e: Message) -> str:
    """One event's canonical JSON text, as :func:`events_json` writes it in its list."""
    try:
        return _message_text(e)
    except _UnsupportedError:
        return _dumps(json_format.MessageToDict(e, preserving_proto_field_name=True))


message_text = _message_text
BODY_BYTES_MAX = _BODY_BYTES_MAX
UnsupportedError = _UnsupportedError


def events_json(events: Iterable[Message]) -> str:
    """The events as the canonical JSON of :func:`event_dicts`' list (``_dumps(event_dicts(
    events))``, the same text), without making the dicts: each event's text is put together from
    its fields' texts, sorted by name as ``sort_keys`` sorts them (field names are plain ASCII
    identifiers, so ``"name"`` is their JSON). An event :func:`message_dict` cannot convert is
    made with ``MessageToDict``, as there."""
    return "[" + ",".join([event_text(e) for e in events]) + "]"


def replay_json(replay: dict[str, Any]) -> bytes:
    """``store.canonical_json(replay)`` (sorted keys, no spaces, UTF-8) for a replay whose
    ``events`` may still be protobuf events (or a :class:`~.wirejson.WireEvents`, whose text is
    made already): their text comes from :func:`events_json` and is
    put in the place ``sort_keys`` gives the ``events`` key. The same bytes as converting the
    events with :func:`event_dicts` and dumping the whole replay (``tests/tournament/
    test_runner_cost.py`` compares the two)."""
    events: Any = replay.get("events")
    made = None if isinstance(events, list) else getattr(events, "json", None)
    if callable(made):
        body = str(made())  # a wirejson.WireEvents: read from the wire, its text made already
    elif not events or not isinstance(events, list) or isinstance(events[0], dict):
        return _dumps(replay).encode()
    else:
        body = events_json(events)
    marker = f"events-{secrets.token_hex(16)}"
    text = _dumps({**replay, "events": marker})
    quoted = f'"events":"{marker}"'
    at = text.index(quoted)  # the marker is random: it is nowhere else in the text
    return (text[:at] + '"events":' + body + text[at + len(quoted) :]).encode()
