"""The runner's cheaper path per hand (issue 25) stores exactly what the old one stored.

``eventjson.replay_json`` writes a replay's canonical JSON straight from the protobuf events; it
must give the bytes ``store.canonical_json`` gives once the events are converted with
``event_dicts`` (which tests/tournament/test_eventjson.py holds to ``MessageToDict``): the content
hash, the stored replay and the replay file depend on them. The stored replay's zlib level
changed; the stored bytes must still decompress to that canonical JSON."""

from __future__ import annotations

import hashlib
import json
import random
import sqlite3
import zlib
from pathlib import Path
from typing import Any

import pytest

from uno_server.engine import RuleSet
from uno_server.gen.uno.v1 import game_pb2
from uno_tournament import eventjson
from uno_tournament.eventjson import event_dicts, events_json, replay_json
from uno_tournament.replay import REPLAY_FORMAT, check, load, store_hand
from uno_tournament.store import (
    DB_NAME,
    REPLAY_ZLIB_LEVEL,
    HandRecord,
    SeatRecord,
    Store,
    canonical_json,
)

from .test_eventjson import RULES, _hand_events, every_kind_filled


def _old(replay: dict[str, Any]) -> bytes:
    """What the runner stored before: the events as dicts, then the canonical JSON."""
    events = replay.get("events") or []
    return canonical_json({**replay, "events": event_dicts(events)} if events else replay)


def _replay(events: list[Any], **extra: Any) -> dict[str, Any]:
    replay: dict[str, Any] = {
        "format": REPLAY_FORMAT,
        "tournament": "t-1",
        "hand_id": "t-1/b0000/t00/d0/r0",
        "match_id": "m-1",
        "rules": RuleSet().to_dict(),
        "seed": 2**64 - 1,
        "match_seed": 7,
        "dealer": 0,
        "schedule": {"table": 0, "table_bots": ["a", "b", "c", "d"]},
        "bots": ["a", "b", "c", "d"],
        "fallback_seats": [],
        "stand_in_seats": [],
        "actions": [[0, 1000], [1, 3]],
        "result": {"winner": 0, "points_held": [0, 5, 9, 12]},
        "events": events,
    }
    replay.update(extra)
    return replay


def test_engine_played_hands_give_the_same_bytes() -> None:
    seen = 0
    for rules in RULES:
        for seed in range(10):
            events = _hand_events(rules, seed)
            replay = _replay(events)
            assert replay_json(replay) == _old(replay)
            assert events_json(events) == json.dumps(
                event_dicts(events), sort_keys=True, separators=(",", ":"), ensure_ascii=False
            )
            seen += len(events)
    assert seen > 1000
    assert eventjson._BODIES, "the bodies seen were kept for the next hands"


def test_every_kind_with_every_field_set_gives_the_same_bytes() -> None:
    events = every_kind_filled(random.Random(11), 20)
    events.append(game_pb2.Event())  # nothing set: {}
    replay = _replay(events)
    # twice: the second time every body comes from the cache
    assert replay_json(replay) == _old(replay)
    assert replay_json(replay) == _old(replay)


ODD = [
    "ünïcødé 名前 🂡",
    "tab\tnew\nline\rcr\x00nul\x1fus\x7fdel\u2028\u2029",
    'quote " backslash \\ slash /',
    '"events":"x"',
    "events-" + "0" * 32,
    "",
]


@pytest.mark.parametrize("name", ODD)
def test_odd_strings_give_the_same_bytes(name: str) -> None:
    events = _hand_events(RuleSet(), 3)
    ended = game_pb2.Event(sequence=9, hand_number=1)
    ended.hand_ended.winner = 0
    events.append(ended)
    odd = game_pb2.Event(sequence=10)
    kinds: list[Any] = list(game_pb2.Event.DESCRIPTOR.oneofs_by_name["kind"].fields)
    text_fields = [f for f in kinds if any(g.type == g.TYPE_STRING for g in f.message_type.fields)]
    assert text_fields, "some event carries a string"
    for f in text_fields:
        sub = getattr(odd, f.name)
        for g in f.message_type.fields:
            if g.type == g.TYPE_STRING and not g.is_repeated:
                setattr(sub, g.name, name)
        events.append(game_pb2.Event.FromString(odd.SerializeToString()))
        odd = game_pb2.Event(sequence=10)
    replay = _replay(
        events,
        bots=[name, "b", "c", name + "x"],
        tournament=name,
        **{name or "empty": name, "events2": name},
    )
    assert replay_json(replay) == _old(replay)


def test_a_lone_surrogate_is_refused_as_before() -> None:
    events = _hand_events(RuleSet(), 1)
    replay = _replay(events, bots=["\ud800", "b", "c", "d"])
    with pytest.raises(UnicodeEncodeError):
        _old(replay)
    with pytest.raises(UnicodeEncodeError):
        replay_json(replay)


def test_replays_without_protobuf_events_are_dumped_as_they_are() -> None:
    for replay in (
        _replay([]),
        _replay(event_dicts(_hand_events(RuleSet(), 2))),
        {k: v for k, v in _replay([]).items() if k != "events"},
    ):
        assert replay_json(replay) == canonical_json(replay)


def test_a_message_it_does_not_convert_goes_to_message_to_dict() -> None:
    from google.protobuf import json_format, struct_pb2

    v = struct_pb2.ListValue(values=[struct_pb2.Value(number_value=0.1)])
    assert events_json([v]) == "[[0.1]]" == json.dumps([json_format.MessageToDict(v)])


def _record(i: int, events: list[Any]) -> HandRecord:
    hid = f"t-1/b{i:04d}/t00/d0/r0"
    seats = [
        SeatRecord(seat=s, bot=b, place=s + 1, points_left=3, points_won=0, response_ms=[4, 5])
        for s, b in enumerate("abcd")
    ]
    return HandRecord(
        hand_id=hid,
        table=0,
        block=i,
        deal=0,
        rotation=0,
        deal_id=f"d{i}",
        match_seed=7,
        hand_seed=9,
        dealer=0,
        match_id=f"m-{i}",
        winner_seat=0,
        moves=2,
        duration_s=0.5,
        seats=seats,
        replay=_replay(events, hand_id=hid),
    )


def test_stored_replays_hold_the_old_bytes_and_the_file_matches(tmp_path: Path) -> None:
    store = Store.create(tmp_path, {"tournament_id": "t-1"})
    try:
        wants = {}
        for i in range(6):
            events = _hand_events(RULES[i % len(RULES)], 40 + i)
            rec = _record(i, events)
            wants[rec.hand_id] = _old(rec.replay)
            assert store_hand(store, rec, tmp_path / "replays")
            assert rec.content_hash == hashlib.sha256(wants[rec.hand_id]).hexdigest()
            assert not store_hand(store, _record(i, events), tmp_path / "replays")  # once only
        for hid, want in wants.items():
            assert store.replay_bytes(hid) == want
            name = hid.split("/", 1)[1].replace("/", "-") + ".json"
            assert (tmp_path / "replays" / name).read_bytes() == want
            row = store.hand_row(hid)
            assert row is not None and row.content_hash == hashlib.sha256(want).hexdigest()
    finally:
        store.close()
    conn = sqlite3.connect(tmp_path / DB_NAME)
    blobs = conn.execute("SELECT hand_id, data FROM replays").fetchall()
    conn.close()
    assert len(blobs) == 6
    for hid, blob in blobs:
        assert zlib.decompress(blob) == wants[hid]
        assert blob == zlib.compress(wants[hid], REPLAY_ZLIB_LEVEL)


def test_a_stored_engine_hand_still_verifies(tmp_path: Path) -> None:
    """A replay written by the new path is one the engine re-runs and confirms (the actions
    and the events are the hand's own, so the check reaches the end)."""
    from uno_server.engine import Hand

    rng = random.Random(4)
    rules = RuleSet()
    hand = Hand.deal(rules, 12345, 0)
    actions = []
    while not hand.over:
        seat = rng.choice(hand.pending_seats())
        a = rng.choice(hand.legal_actions(seat))
        hand.apply(seat, a)
        actions.append([seat, a])
    from .test_replay_events import spectator_protos

    rec = _record(0, spectator_protos(hand))  # the hand's own events, as a spectator saw them
    rec.replay.update(
        seed=12345,
        dealer=0,
        actions=actions,
        result={"winner": hand.winner, "points_held": [hand.points_held(s) for s in range(4)]},
    )
    for key in ("schedule", "match_seed"):
        rec.replay.pop(key)
    store = Store.create(tmp_path, {"tournament_id": "t-1"})
    try:
        assert store_hand(store, rec, tmp_path / "replays")
    finally:
        store.close()
    (path,) = (tmp_path / "replays").iterdir()
    verdict = check(load(path))
    assert verdict.ok, verdict.message


def test_a_shard_workers_hand_reaches_the_store_with_the_same_bytes(tmp_path: Path) -> None:
    """A shard worker sends the replay's canonical JSON as one string (worker._emit); the
    runner stores those bytes, the same as the hand played in the runner itself."""
    from uno_tournament.store import hand_from_json, hand_to_json

    events = _hand_events(RuleSet(seats=3, stacking=True), 8)
    here = _record(0, events)
    want = _old(here.replay)
    sent = _record(0, events)
    sent.replay_raw = replay_json(sent.replay)  # what the worker does
    line = json.dumps({"type": "hand", "hand": hand_to_json(sent)}, separators=(",", ":"))
    assert '"events"' not in json.loads(line)["hand"]["replay"]
    got = hand_from_json(json.loads(line)["hand"])
    assert got.replay_raw == want
    store = Store.create(tmp_path, {"tournament_id": "t-1"})
    try:
        assert store_hand(store, got, tmp_path / "replays")
        assert store.replay_bytes(got.hand_id) == want
        assert got.content_hash == hashlib.sha256(want).hexdigest()
    finally:
        store.close()
    # a hand sent without its text (converted events) still round-trips
    old = _record(1, event_dicts(events))
    back = hand_from_json(json.loads(json.dumps(hand_to_json(old))))
    assert back.replay_raw == b"" and back.replay == old.replay
