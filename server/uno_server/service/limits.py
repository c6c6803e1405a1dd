"""Every limit on what a client may send, in one table, and the one validator that applies it.

Each string, bytes, repeated and map field that a bot or an admin can set (everything reachable
from ``PlayRequest`` and the AdminService request messages) has an entry in :data:`LIMITS`, keyed
by the field's full protobuf name; the .proto comments state the same numbers, and the README's
"Input limits" table is checked against this table by the tests. Numbers that a client sets are
either bounded here too or validated where they are used (the rule set by the engine, the time
control by the server); :data:`CHECKED_ELSEWHERE` names those, and :data:`UNBOUNDED` the few that
may take any value, so a test can prove that no client-settable field is forgotten.

Values that the server repeats to other clients (bot versions, labels, idempotency keys, names,
cancel reasons) are capped far below any message limit, so that no input can push a message to
somebody else over a limit. :func:`check` returns the first violation as a :class:`Violation`
(field path, reason and a message that never repeats the offending value).
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any, Final

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message

from uno_server.gen.uno.v1 import errors_pb2, game_pb2

LIMIT_EXCEEDED: Final = errors_pb2.ERROR_REASON_LIMIT_EXCEEDED
MALFORMED: Final = errors_pb2.ERROR_REASON_MALFORMED_MESSAGE

MAX_REQUEST_BYTES: Final = 512 * 1024
"""Largest serialised request message (PlayRequest or an admin request) the server reads."""
MAX_ACTION_BATCH: Final = 256
"""Most Actions in one PlayRequest.actions."""
MAX_BATCH: Final = 1024
"""Largest Hello.max_batch."""

NAME_RE: Final = re.compile(r"[A-Za-z0-9_.\-]*")
LABEL_KEY_RE: Final = re.compile(r"[A-Za-z0-9_.\-/]*")
ASCII_PRINTABLE_RE: Final = re.compile(r"[\x20-\x7e]*")

# google.protobuf.Timestamp's valid range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59Z
TIMESTAMP_MIN_S: Final = -62_135_596_800
TIMESTAMP_MAX_S: Final = 253_402_300_799


@dataclass(frozen=True, slots=True)
class Limit:
    """The limit of one field. Strings: ``max_len`` characters (code points), the character set
    ``pattern`` (matched in full) or ``printable``. Repeated and map fields: ``max_len`` entries,
    with ``item`` / ``key`` / ``value`` limiting each entry. Numbers: ``lo``..``hi``."""

    max_len: int | None = None
    min_len: int = 0
    pattern: re.Pattern[str] | None = None
    printable: bool = False
    lo: int | None = None
    hi: int | None = None
    allowed: frozenset[int] | None = None  # enum values allowed
    item: Limit | None = None
    key: Limit | None = None
    value: Limit | None = None
    timestamp: bool = False
    reason: int = LIMIT_EXCEEDED
    what: str = ""  # how the README names the limit

    def describe(self) -> str:
        return self.what


def _text(n: int, *, min_len: int = 0) -> Limit:
    return Limit(
        max_len=n,
        min_len=min_len,
        printable=True,
        what=f"{min_len}-{n} printable characters",
    )


def _ascii(n: int, *, min_len: int = 0) -> Limit:
    return Limit(
        max_len=n,
        min_len=min_len,
        pattern=ASCII_PRINTABLE_RE,
        what=f"{min_len}-{n} printable ASCII characters",
    )


NAME: Final = Limit(max_len=64, pattern=NAME_RE, what="0-64 characters of [A-Za-z0-9_.-]")
BOT_NAME: Final = Limit(
    max_len=64, min_len=1, pattern=NAME_RE, what="1-64 characters of [A-Za-z0-9_.-]"
)
MATCH_ID: Final = _ascii(64, min_len=1)
LABELS: Final = Limit(
    max_len=16,
    key=Limit(
        max_len=64, min_len=1, pattern=LABEL_KEY_RE, what="1-64 characters of [A-Za-z0-9_.-/]"
    ),
    value=_text(256),
    what="at most 16 entries; keys 1-64 characters of [A-Za-z0-9_.-/], values 0-256 printable",
)
MAX_SEATS: Final = 10
SEQUENCE: Final = Limit(lo=0, hi=2**62, what="0 to 2^62 = 4611686018427387904")
"""An event sequence a client names (a cursor, an after_sequence): >= 0, and at most 2^62."""

LIMITS: Final[dict[str, Limit]] = {
    # ---- BotService.Play
    "uno.v1.Hello.bot_name": NAME,
    "uno.v1.Hello.bot_version": _text(64),
    "uno.v1.Hello.max_concurrent_matches": Limit(lo=0, hi=100_000, what="0-100000"),
    "uno.v1.Hello.max_batch": Limit(lo=0, hi=MAX_BATCH, what=f"0-{MAX_BATCH}"),
    "uno.v1.Resume.session_id": _ascii(64),
    "uno.v1.Resume.cursors": Limit(max_len=4096, what="at most 4096 entries"),
    "uno.v1.EventCursor.match_id": MATCH_ID,
    "uno.v1.EventCursor.seat": Limit(lo=0, hi=MAX_SEATS - 1, what="0-9"),
    "uno.v1.EventCursor.last_sequence": SEQUENCE,
    "uno.v1.Action.request_id": _ascii(128, min_len=1),
    "uno.v1.ActionBatch.actions": Limit(
        max_len=MAX_ACTION_BATCH, what=f"1-{MAX_ACTION_BATCH} entries"
    ),
    "uno.v1.Ping.sent_at": Limit(timestamp=True, what="a valid Timestamp (years 1-9999)"),
    # ---- AdminService
    "uno.v1.CreateMatchRequest.seats": Limit(
        max_len=MAX_SEATS,
        min_len=1,
        reason=errors_pb2.ERROR_REASON_INVALID_SEATS,
        what="2-10 entries, one per seat",
    ),
    "uno.v1.Player.bot_name": Limit(
        max_len=64,
        min_len=1,
        pattern=NAME_RE,
        reason=errors_pb2.ERROR_REASON_INVALID_SEATS,
        what="1-64 characters of [A-Za-z0-9_.-]",
    ),
    "uno.v1.CreateMatchRequest.labels": LABELS,
    "uno.v1.CreateMatchRequest.idempotency_key": _text(128),
    "uno.v1.GetMatchRequest.match_id": MATCH_ID,
    "uno.v1.ListMatchesRequest.page_size": Limit(lo=0, hi=500, what="0-500 (0 = 50)"),
    "uno.v1.ListMatchesRequest.page_token": _ascii(128),
    "uno.v1.ListMatchesRequest.states": Limit(
        max_len=3,
        item=Limit(allowed=frozenset({1, 2, 3}), what="RUNNING, FINISHED or CANCELLED"),
        what="at most 3 entries, each RUNNING, FINISHED or CANCELLED",
    ),
    "uno.v1.ListMatchesRequest.bot_name": NAME,
    "uno.v1.ListMatchesRequest.labels": LABELS,
    "uno.v1.WatchMatchRequest.match_id": MATCH_ID,
    "uno.v1.WatchMatchRequest.after_sequence": SEQUENCE,
    "uno.v1.AwaitMatchRequest.match_id": MATCH_ID,
    "uno.v1.AwaitMatchRequest.after_sequence": SEQUENCE,
    "uno.v1.CancelMatchRequest.match_id": MATCH_ID,
    "uno.v1.CancelMatchRequest.reason": _text(256),
    "uno.v1.RegisterBotRequest.bot_name": BOT_NAME,
    # exactly one of token and token_sha256 is set (RegisterBot checks it): an empty one is
    # not sent, so their minimum lengths are in their patterns, not in REQUIRED
    "uno.v1.RegisterBotRequest.token": Limit(
        max_len=128,
        pattern=re.compile(r"[A-Za-z0-9._~+/=-]{8,}"),
        what="8-128 characters of [A-Za-z0-9._~+/=-]",
    ),
    "uno.v1.RegisterBotRequest.token_sha256": Limit(
        max_len=64,
        pattern=re.compile(r"[0-9a-f]{64}"),
        what="64 characters of [0-9a-f] (lowercase hex)",
    ),
    "uno.v1.RetireBotRequest.bot_name": BOT_NAME,
}

REQUIRED: Final[dict[str, tuple[str, int]]] = {
    # field -> (what the message says, reason) for fields that must be set
    "uno.v1.EventCursor.match_id": ("is required: 1-64 printable ASCII characters", MALFORMED),
    "uno.v1.Action.request_id": ("is required", MALFORMED),
    "uno.v1.Action.action_id": ("is required (0 means draw and must be set)", MALFORMED),
    "uno.v1.ActionBatch.actions": (f"is required: 1-{MAX_ACTION_BATCH} actions", MALFORMED),
    "uno.v1.GetMatchRequest.match_id": ("is required", MALFORMED),
    "uno.v1.WatchMatchRequest.match_id": ("is required", MALFORMED),
    "uno.v1.AwaitMatchRequest.match_id": ("is required", MALFORMED),
    "uno.v1.PlayMatchRequest.create": (
        "is required: the match, as CreateMatch takes it",
        MALFORMED,
    ),
    "uno.v1.CancelMatchRequest.match_id": ("is required", MALFORMED),
    "uno.v1.RegisterBotRequest.bot_name": ("is required", MALFORMED),
    "uno.v1.RetireBotRequest.bot_name": ("is required", MALFORMED),
    "uno.v1.CreateMatchRequest.seats": (
        "is required: one Player per seat",
        errors_pb2.ERROR_REASON_INVALID_SEATS,
    ),
}

CHECKED_ELSEWHERE: Final[dict[str, str]] = {
    "uno.v1.Hello.protocol_version": "UNSUPPORTED_PROTOCOL_VERSION unless 0 or 1",
    "uno.v1.Player.builtin": "INVALID_SEATS unless RANDOM or HEURISTIC",
    "uno.v1.CreateMatchRequest.dealer": "INVALID_SEATS unless a seat of the table",
    **{
        f.full_name: "INVALID_RULES: the engine's RuleSet validation"
        for f in game_pb2.RuleSet.DESCRIPTOR.fields
    },
    **{
        f.full_name: "INVALID_TIME_CONTROL: the documented range"
        for f in game_pb2.TimeControl.DESCRIPTOR.fields
    },
}

UNBOUNDED: Final[frozenset[str]] = frozenset(
    {
        "uno.v1.Action.action_id",  # any int32: an unknown id is MALFORMED_ACTION
        "uno.v1.Ping.nonce",  # any value, echoed
        "uno.v1.Hello.push_events",
        "uno.v1.CreateMatchRequest.seed",  # any 64-bit seed
    }
)


@dataclass(frozen=True, slots=True)
class Violation:
    """A field over its limit: ``field`` is its path (e.g. ``labels[round]``, ``seats[3]``)."""

    field: str
    reason: int
    message: str


@dataclass(slots=True)
class _Walker:
    path: list[str] = field(default_factory=list)

    def fail(self, leaf: str, reason: int, message: str) -> Violation:
        name = ".".join([*self.path, leaf]) if leaf else ".".join(self.path)
        return Violation(name, reason, f"{name}: {message}")


def _check_text(lim: Limit, value: str) -> tuple[int, str] | None:
    # too long is LIMIT_EXCEEDED; missing or of the wrong form is MALFORMED_MESSAGE; a field with
    # its own reason (a seat's bot name: INVALID_SEATS) uses that reason for both
    form = MALFORMED if lim.reason == LIMIT_EXCEEDED else lim.reason
    n = len(value)
    if lim.max_len is not None and n > lim.max_len:
        return lim.reason, f"{n} characters; at most {lim.max_len} allowed"
    if n < lim.min_len:
        return form, f"at least {lim.min_len} character(s) required"
    if lim.pattern is not None and not lim.pattern.fullmatch(value):
        return form, f"must be {lim.what}"
    if lim.printable and not value.isprintable():
        return form, _not_printable(value)
    return None


_NOT_PRINTABLE: Final = frozenset(("Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"))
"""Unicode categories str.isprintable refuses, with Zs but the ASCII space."""


def _not_printable(value: str) -> str:
    """Why ``value`` is not printable: a space other than the ASCII one (U+00A0, which looks
    like a space, was refused as a control character: an examination), or the rest."""
    for i, ch in enumerate(value):  # the first character str.isprintable refuses
        kind = unicodedata.category(ch)
        if kind == "Zs" and ch != " ":
            return (
                f"U+{ord(ch):04X} at character {i + 1}: spaces other than the ASCII space "
                "are not allowed"
            )
        if kind in _NOT_PRINTABLE:
            break
    return "control or other non-printable characters are not allowed"


def _check_number(lim: Limit, value: int) -> tuple[int, str] | None:
    if lim.allowed is not None and value not in lim.allowed:
        return lim.reason, f"{value} is not allowed ({lim.what})"
    if (lim.lo is not None and value < lim.lo) or (lim.hi is not None and value > lim.hi):
        return lim.reason, f"{value} is out of range ({lim.what})"
    return None


def _check_scalar(lim: Limit | None, fd: FieldDescriptor, value: Any) -> tuple[int, str] | None:
    if lim is None:
        return None
    if fd.type == FieldDescriptor.TYPE_STRING:
        return _check_text(lim, value)
    if fd.type == FieldDescriptor.TYPE_BYTES:
        if lim.max_len is not None and len(value) > lim.max_len:
            return lim.reason, f"{len(value)} bytes; at most {lim.max_len} allowed"
        return None
    if fd.type in (FieldDescriptor.TYPE_BOOL,):
        return None
    return _check_number(lim, int(value))


_SCALAR, _MAP, _REPEATED_MESSAGE, _REPEATED_SCALAR, _TIMESTAMP, _MESSAGE = range(6)


@dataclass(frozen=True, slots=True)
class _Plan:
    """How to check one field, worked out once per field descriptor."""

    kind: int
    name: str
    limit: Limit | None
    key_fd: Any = None
    value_fd: Any = None


_PLANS: dict[Any, _Plan] = {}
_REQUIRED_PLANS: dict[str, list[tuple[str, bool, str, int]]] = {}


def _plan(fd: Any) -> _Plan:
    p = _PLANS.get(fd)
    if p is None:
        lim = LIMITS.get(fd.full_name)
        mt = fd.message_type
        if mt is not None and mt.GetOptions().map_entry:
            p = _Plan(_MAP, fd.name, lim, mt.fields_by_name["key"], mt.fields_by_name["value"])
        elif fd.is_repeated:
            p = _Plan(_REPEATED_MESSAGE if mt is not None else _REPEATED_SCALAR, fd.name, lim)
        elif mt is not None:
            timestamp = lim is not None and lim.timestamp
            p = _Plan(_TIMESTAMP if timestamp else _MESSAGE, fd.name, lim)
        else:
            p = _Plan(_SCALAR, fd.name, lim)
        _PLANS[fd] = p
    return p


def _required(desc: Any) -> list[tuple[str, bool, str, int]]:
    req = _REQUIRED_PLANS.get(desc.full_name)
    if req is None:
        req = []
        for full, (text, reason) in REQUIRED.items():
            msg, _, name = full.rpartition(".")
            if msg == desc.full_name:
                req.append((name, desc.fields_by_name[name].has_presence, text, reason))
        _REQUIRED_PLANS[desc.full_name] = req
    return req


def _walk(msg: Message, w: _Walker) -> Violation | None:
    # the fields that are set first (a value over its limit is never echoed back, even when a
    # required field is missing too), then the fields that must be set
    for fd, value in msg.ListFields():
        p = _plan(fd)
        kind = p.kind
        lim = p.limit
        if kind == _SCALAR:
            bad = _check_scalar(lim, fd, value)
            if bad is not None:
                return w.fail(p.name, bad[0], bad[1])
        elif kind == _MESSAGE:
            w.path.append(p.name)
            bad_v = _walk(value, w)
            w.path.pop()
            if bad_v is not None:
                return bad_v
        elif kind == _TIMESTAMP:
            assert lim is not None
            if not (
                TIMESTAMP_MIN_S <= value.seconds <= TIMESTAMP_MAX_S
                and 0 <= value.nanos <= 999_999_999
            ):
                return w.fail(p.name, lim.reason, f"not a valid Timestamp ({lim.what})")
        else:
            if lim is not None and lim.max_len is not None and len(value) > lim.max_len:
                return w.fail(p.name, lim.reason, f"{len(value)} entries; at most {lim.max_len}")
            if kind == _MAP:
                for k, v in value.items():
                    bad = _check_scalar(lim.key if lim else None, p.key_fd, k)
                    if bad is not None:
                        return w.fail(p.name, bad[0], f"a key: {bad[1]}")
                    bad = _check_scalar(lim.value if lim else None, p.value_fd, v)
                    if bad is not None:
                        return w.fail(f"{p.name}[{k}]", bad[0], bad[1])  # the key passed
            elif kind == _REPEATED_MESSAGE:
                for i, item in enumerate(value):
                    w.path.append(f"{p.name}[{i}]")
                    bad_v = _walk(item, w)
                    w.path.pop()
                    if bad_v is not None:
                        return bad_v
            else:
                item_lim = lim.item if lim else None
                if item_lim is not None:
                    for i, item in enumerate(value):
                        bad = _check_scalar(item_lim, fd, item)
                        if bad is not None:
                            return w.fail(f"{p.name}[{i}]", bad[0], bad[1])
    for name, has_presence, text, reason in _required(msg.DESCRIPTOR):
        present = msg.HasField(name) if has_presence else bool(getattr(msg, name))
        if not present:
            return w.fail(name, reason, text)
    return None


def check(msg: Message, prefix: str = "") -> Violation | None:
    """The first field of ``msg`` over its limit, or None. ``prefix`` starts the field path
    (``"action"`` for the Action of a PlayRequest, say)."""
    return _walk(msg, _Walker([prefix] if prefix else []))


_REQUEST_ID: Final = LIMITS["uno.v1.Action.request_id"]
assert _REQUEST_ID.max_len is not None and _REQUEST_ID.pattern is ASCII_PRINTABLE_RE


def action_ok(act: Message) -> bool:
    """The common case of the per-move path, without walking the message: True if this Action
    is certainly within its limits (else :func:`check` says what is wrong with it)."""
    rid: str = act.request_id  # type: ignore[attr-defined]
    return (
        0 < len(rid) <= _REQUEST_ID.max_len  # type: ignore[operator]
        and rid.isascii()
        and rid.isprintable()
        and act.HasField("action_id")
    )


def check_action(act: Message) -> Violation | None:
    """:func:`check` of one Action (field paths start with ``action``), deciding the common case
    with :func:`action_ok` first: this runs on every move."""
    return None if action_ok(act) else check(act, "action")
