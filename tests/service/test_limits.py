"""The input limits (issue 9, item 1): one table covers every field a client can set, the .proto
comments and docs/service.md state the same numbers, and the largest messages the server builds from
inputs at their limits stay far below the message size limit."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pool
from hypothesis import given, settings
from hypothesis import strategies as st

from uno_server.gen.uno.v1 import admin_pb2, bot_pb2, cards_pb2, game_pb2
from uno_server.service import limits
from uno_server.service.arena import PAGE_BYTES, WELCOME_SEATS, ServerConfig
from uno_server.service.table import CHUNK_BYTES, EVENTS_INLINE, MAX_HAND_ACTIONS

ROOT = Path(__file__).resolve().parents[2]
CLIENT_ROOTS = [
    bot_pb2.PlayRequest.DESCRIPTOR,
    # every AdminService call's request, so a new call cannot come without its limits
    *(m.input_type for m in admin_pb2.DESCRIPTOR.services_by_name["AdminService"].methods),
]
MIN_MESSAGE_BYTES = 2 * 1024 * 1024  # the lowest max_message_bytes the server accepts


def client_fields() -> list[Any]:
    """Every field a bot or an admin can set, through nested messages (not Timestamp's own)."""
    out: list[Any] = []
    seen: set[str] = set()

    def walk(d: Any) -> None:
        if d.full_name in seen or d.full_name.startswith("google.protobuf."):
            return
        seen.add(d.full_name)
        for f in d.fields:
            mt = f.message_type
            if mt is not None and mt.GetOptions().map_entry:
                out.append(f)
                continue
            out.append(f)
            if mt is not None:
                walk(mt)

    for root in CLIENT_ROOTS:
        walk(root)
    return out


def test_every_client_settable_field_has_a_limit_or_a_named_check() -> None:
    missing = []
    for f in client_fields():
        name = f.full_name
        if f.message_type is not None and not f.is_repeated:
            if f.message_type.full_name == "google.protobuf.Timestamp":
                assert name in limits.LIMITS, f"{name}: a Timestamp needs a range check"
            continue  # a plain sub-message: its own fields are checked
        sized = f.is_repeated or f.type in (f.TYPE_STRING, f.TYPE_BYTES)
        if name in limits.LIMITS:
            lim = limits.LIMITS[name]
            if sized:
                assert lim.max_len is not None, f"{name}: a size limit is needed"
            continue
        if sized or (name not in limits.CHECKED_ELSEWHERE and name not in limits.UNBOUNDED):
            missing.append(name)
    assert not missing, f"fields without a limit: {missing}"
    stale = set(limits.LIMITS) - {f.full_name for f in client_fields()}
    assert not stale, f"limits of fields that do not exist: {stale}"


def _comment_of(full_name: str) -> str:
    """The comment above a field in the .proto file that defines it."""
    _pkg, _, rest = full_name.partition(".")
    _v, _, rest = rest.partition(".")
    message, _, field_name = rest.rpartition(".")
    for proto in sorted((ROOT / "proto" / "uno" / "v1").glob("*.proto")):
        text = proto.read_text()
        m = re.search(rf"\nmessage {message} \{{\n(.*?)\n\}}", text, re.S)
        if m is None:
            continue
        body = m.group(1)
        f = re.search(rf"((?:[ \t]*//[^\n]*\n)+)[ \t]*[\w.<>, ]+ {field_name} = \d+;", body)
        assert f is not None, f"{full_name}: no comment in {proto.name}"
        return " ".join(line.strip().lstrip("/").strip() for line in f.group(1).splitlines())
    raise AssertionError(f"{full_name}: message not found")


@pytest.mark.parametrize("name", sorted(limits.LIMITS))
def test_every_limit_is_written_next_to_its_field(name: str) -> None:
    lim = limits.LIMITS[name]
    text = _comment_of(name)
    if lim.timestamp:
        assert "valid Timestamp" in text, text
        return
    numbers = {lim.max_len, lim.hi if lim.hi is not None and lim.hi < 2**31 else None}
    if lim.key is not None and lim.key.max_len is not None:
        numbers.add(lim.key.max_len)
    wanted = [n for n in numbers if n is not None]
    for n in wanted:
        assert re.search(rf"\b{n}\b", text.replace(",", "")), f"{name}: {n} not in: {text}"
    if lim.lo is not None and lim.lo >= 0 and lim.hi and lim.hi >= 2**31:
        assert ">= 0" in text, text


def test_the_service_page_lists_every_limit() -> None:
    page = (ROOT / "docs" / "service.md").read_text()
    section = page[page.index("## Input limits") :]
    for name in limits.LIMITS:
        short = ".".join(name.split(".")[-2:])
        assert f"`{short}`" in section, f"docs/service.md's input limits table lacks {short}"


def _card(code: int) -> cards_pb2.Card:
    return cards_pb2.Card(
        color=cards_pb2.COLOR_WILD, rank=cards_pb2.RANK_WILD_DRAW_FOUR, code=code, name="w"
    )


def test_the_largest_messages_built_from_inputs_at_their_limits_stay_small() -> None:
    wide = "\U0001f600"  # 4 bytes in UTF-8: the worst case per character
    labels = {f"k{i:02d}" + "x" * 61: wide * 256 for i in range(16)}
    at_limit = admin_pb2.CreateMatchRequest(
        seats=[game_pb2.Player(builtin=game_pb2.BUILTIN_BOT_RANDOM)], labels=labels
    )
    assert limits.check(at_limit) is None
    # MatchInfo: 10 seats, 10,000 response times each of the longest possible decision
    info = admin_pb2.MatchInfo(
        match_id="m999999-ffffff",
        labels=labels,
        idempotency_key=wide * 128,
        end_message=wide * 256,
        totals=[100_000] * 10,
        winners=list(range(10)),
        last_sequence=2**40,
    )
    for s in range(10):
        seat = info.seats.add(seat=s, bot_version=wide * 64, strikes=1000, rejected_actions=2**30)
        seat.player.bot_name = "b" * 64
        seat.response_ms.extend([600_000 + 3_600_000] * 10_000)
    assert info.ByteSize() < PAGE_BYTES // 2, info.ByteSize()
    # a ListMatches page stops before PAGE_BYTES, plus one MatchInfo at most
    assert PAGE_BYTES + info.ByteSize() < MIN_MESSAGE_BYTES
    started = bot_pb2.MatchStarted(match_id="m999999-ffffff", labels=labels)
    for s in range(10):
        a = started.seats.add(seat=s, bot_version=wide * 64)
        a.player.bot_name = "b" * 64
    assert started.ByteSize() < 64 * 1024
    welcome = bot_pb2.Welcome(session_id="f" * 32, bot_name="b" * 64)
    for _ in range(WELCOME_SEATS):
        welcome.seats.add(match_id="m999999-ffffff", seat=9)
    assert welcome.ByteSize() < 64 * 1024
    # a DecisionRequest: a hand of every card of two decks, legal plays of all of them, and the
    # most events it may carry, each a hand's end with the most actions a hand may have
    dr = bot_pb2.DecisionRequest(request_id="m999999-ffffff-" + "9" * 12)
    dr.view.hand.extend(_card(78) for _ in range(216))
    dr.legal_actions.extend(
        game_pb2.LegalAction(
            id=3000 + i, kind=game_pb2.ACTION_KIND_PLAY, card=_card(78), description="x" * 40
        )
        for i in range(600)
    )
    ended = game_pb2.Event(sequence=2**40)
    he = ended.hand_ended
    he.points_held.extend([5000] * 10)
    for _ in range(10):
        he.hands.add().cards.extend(_card(78) for _ in range(22))
    he.actions.extend(game_pb2.SeatAction(seat=9, action_id=3789) for _ in range(MAX_HAND_ACTIONS))
    dr.events.extend([ended] * 2)  # a hand has 10+ events, so 64 events hold 2 hands' ends
    dr.events.extend(game_pb2.Event(sequence=2**40) for _ in range(EVENTS_INLINE - 2))
    assert dr.ByteSize() < MIN_MESSAGE_BYTES // 4, dr.ByteSize()
    # a SeatEvents chunk: at most CHUNK_BYTES, or one event (a hand's end) when bigger
    assert max(CHUNK_BYTES, ended.ByteSize()) < MIN_MESSAGE_BYTES // 4
    assert ServerConfig().max_message_bytes >= MIN_MESSAGE_BYTES


@pytest.mark.parametrize(
    ("msg", "field", "reason"),
    [
        (bot_pb2.PlayRequest(hello=bot_pb2.Hello(bot_version="v" * 65)), "hello.bot_version", 7),
        (bot_pb2.PlayRequest(hello=bot_pb2.Hello(bot_name="a b")), "hello.bot_name", 1),
        (bot_pb2.PlayRequest(action=bot_pb2.Action(request_id="r", action_id=0)), None, None),
        (bot_pb2.PlayRequest(action=bot_pb2.Action(request_id="r")), "action.action_id", 1),
        (bot_pb2.PlayRequest(action=bot_pb2.Action(action_id=1)), "action.request_id", 1),
        (
            bot_pb2.PlayRequest(
                hello=bot_pb2.Hello(
                    resume=bot_pb2.Resume(
                        cursors=[
                            bot_pb2.EventCursor(match_id="m1", seat=0),
                            bot_pb2.EventCursor(match_id="", seat=1, last_sequence=3),
                        ]
                    )
                )
            ),
            "hello.resume.cursors[1].match_id",
            1,
        ),
        (  # an oversized value is reported before a missing field, so it is never echoed
            bot_pb2.PlayRequest(action=bot_pb2.Action(request_id="r" * 129)),
            "action.request_id",
            7,
        ),
        (
            admin_pb2.ListMatchesRequest(states=[admin_pb2.MATCH_STATE_UNSPECIFIED]),
            "states[0]",
            7,
        ),
        (admin_pb2.ListMatchesRequest(page_size=501), "page_size", 7),
        (admin_pb2.CreateMatchRequest(seats=[game_pb2.Player()] * 11), "seats", 4),
        (
            admin_pb2.CreateMatchRequest(seats=[game_pb2.Player(bot_name="é")]),
            "seats[0].bot_name",
            4,
        ),
        (admin_pb2.CancelMatchRequest(match_id="m", reason="a\nb"), "reason", 1),
        (admin_pb2.WatchMatchRequest(match_id="m", after_sequence=-1), "after_sequence", 7),
    ],
)
def test_the_validator_names_the_field(msg: Any, field: str | None, reason: int | None) -> None:
    bad = limits.check(msg)
    if field is None:
        assert bad is None
    else:
        assert bad is not None and (bad.field, bad.reason) == (field, reason), bad
        assert len(bad.message) < 200


def test_every_field_that_needs_a_character_is_required_when_it_has_no_presence() -> None:
    """A proto3 string without presence that is empty is not even listed by the message, so
    its minimum length can only be enforced through REQUIRED (issue 21 section 2: an empty
    EventCursor.match_id went through although documented as 1-64 characters)."""
    pool = descriptor_pool.Default()
    for name, lim in limits.LIMITS.items():
        if lim.min_len < 1:
            continue
        msg, _, field_name = name.rpartition(".")
        fd = pool.FindMessageTypeByName(msg).fields_by_name[field_name]
        if fd.has_presence and fd.containing_oneof is not None:
            continue  # a oneof member set to "" is listed, and its minimum checked
        assert name in limits.REQUIRED, f"{name}: min_len {lim.min_len} but not REQUIRED"


@settings(max_examples=500, deadline=None, database=None)
@given(
    rid=st.one_of(st.text(max_size=140), st.text(alphabet="m0-1", max_size=140)),
    action_id=st.one_of(st.none(), st.integers(-(2**31), 2**31 - 1)),
)
def test_the_fast_action_check_agrees_with_the_table(rid: str, action_id: int | None) -> None:
    act = bot_pb2.Action(request_id=rid)
    if action_id is not None:
        act.action_id = action_id
    assert limits.action_ok(act) == (limits.check(bot_pb2.PlayRequest(action=act)) is None)
