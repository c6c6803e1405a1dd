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

from collections.abc import Callable, Iterable
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

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
    seconds = v.seconds
    head = _DAYS.get(seconds)
    if head is None:
        if len(_DAYS) > 4096:
            _DAYS.clear()
        whole = type(v)(seconds=seconds)
        head = _DAYS[seconds] = str(whole.ToJsonString())[:-1]  # without its "Z"
    nanos = v.nanos
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
