"""eventjson.event_dicts makes exactly what json_format.MessageToDict makes of an event (a stored
replay's events must not change with the faster converter)."""

from __future__ import annotations

import random
from typing import Any

from google.protobuf import json_format
from google.protobuf.descriptor import FieldDescriptor

from uno_server.engine import Hand, RuleSet
from uno_server.engine.views import SPECTATOR, redact
from uno_server.gen.uno.v1 import game_pb2
from uno_server.service import convert
from uno_tournament.eventjson import event_dicts

RULES = [
    RuleSet(),
    RuleSet(seats=2),
    RuleSet(seats=3, stacking=True, stacking_wd4=True),
    RuleSet(seats=4, partners=True, jump_in=True),
    RuleSet(seats=5, seven_o=True, draw_until_playable=True),
]


def _slow(e: game_pb2.Event) -> dict[str, object]:
    return json_format.MessageToDict(e, preserving_proto_field_name=True)


def random_hand(rules: RuleSet, seed: int) -> Hand:
    """A hand played to its end (or 600 turns) by random seats that play a card 80% of the
    time they can."""
    rng = random.Random(seed)
    hand = Hand.deal(rules, seed, seed % rules.seats)
    while not hand.over and hand.turn < 600:
        seat = rng.choice(hand.pending_seats())
        legal = hand.legal_actions(seat)
        plays = [a for a in legal if a >= 1000]
        hand.apply(seat, rng.choice(plays if plays and rng.random() < 0.8 else legal))
    return hand


def _hand_events(rules: RuleSet, seed: int) -> list[game_pb2.Event]:
    hand = random_hand(rules, seed)
    out = []
    for seq, ev in enumerate(hand.log, 1):
        for view in (ev, redact(ev, SPECTATOR)):  # the owner's and a spectator's view
            if view is not None:
                wall = 1_796_000_000.000001 * (1 + seq % 3) + seq / 7
                out.append(convert.event_to_proto(view, seq, 1 + seed, convert.timestamp(wall)))
    return out


def test_every_event_of_many_hands_converts_as_message_to_dict_does() -> None:
    kinds: set[str] = set()
    for rules in RULES:
        for seed in range(12):
            events = _hand_events(rules, seed)
            assert event_dicts(events) == [_slow(e) for e in events]
            kinds.update(str(e.WhichOneof("kind")) for e in events)
    assert {"played", "drew", "hand_ended", "dealt", "hand_started"} <= kinds


def _fill(msg: object, rng: random.Random, depth: int = 0) -> None:
    """Set every field of ``msg`` (every oneof member in turn is done by the caller)."""
    d = msg.DESCRIPTOR  # type: ignore[attr-defined]
    for f in d.fields:
        if f.containing_oneof is not None and depth == 0:
            continue
        t = f.type
        if t == FieldDescriptor.TYPE_MESSAGE:
            if f.message_type.full_name == "google.protobuf.Timestamp":
                sub = getattr(msg, f.name).add() if f.is_repeated else getattr(msg, f.name)
                sub.FromNanoseconds(rng.choice([0, 1_796_000_000_000_000_000, 1_796_000_000_5]))
            elif depth < 4:
                sub = getattr(msg, f.name).add() if f.is_repeated else getattr(msg, f.name)
                _fill(sub, rng, depth + 1)
                if not f.is_repeated:
                    sub.SetInParent()
            continue
        if t == FieldDescriptor.TYPE_ENUM:
            # a named value, zero, and a number the enum does not name
            value: object = rng.choice([1, 0, 999])
        elif t == FieldDescriptor.TYPE_BOOL:
            value = rng.random() < 0.5
        elif t == FieldDescriptor.TYPE_STRING:
            value = rng.choice(["", "x", "ünï\u2028"])
        elif t in (FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64):
            value = rng.choice([0, -1, 2**62, -(2**63)])
        elif t == FieldDescriptor.TYPE_UINT64:
            value = rng.choice([0, 2**64 - 1, 7])
        else:
            value = rng.choice([0, -3, 2**31 - 1])
        if f.is_repeated:
            getattr(msg, f.name).extend([value, value])
        else:
            setattr(msg, f.name, value)


def every_kind_filled(rng: random.Random, rounds: int) -> list[game_pb2.Event]:
    """``rounds`` events of every kind, every field of each set at random."""
    kinds: list[Any] = list(game_pb2.Event.DESCRIPTOR.oneofs_by_name["kind"].fields)
    assert len(kinds) > 20
    events = []
    for _ in range(rounds):
        for f in kinds:
            e = game_pb2.Event()
            _fill(e, rng)
            sub = getattr(e, f.name)
            _fill(sub, rng, 1)
            sub.SetInParent()
            events.append(e)
    return events


def test_every_kind_with_every_field_set_converts_the_same() -> None:
    events = every_kind_filled(random.Random(5), 30)
    assert event_dicts(events) == [_slow(e) for e in events]
    assert event_dicts([game_pb2.Event()]) == [{}]


def test_a_field_it_does_not_convert_goes_to_message_to_dict() -> None:
    # a message with a float (formatted by MessageToDict's own rules) is handed over whole
    from google.protobuf import struct_pb2

    from uno_tournament import eventjson

    v = struct_pb2.ListValue(values=[struct_pb2.Value(number_value=0.1)])
    try:
        eventjson.message_dict(v)
    except eventjson._UnsupportedError:
        pass
    else:
        raise AssertionError("a well-known type other than Timestamp must not be converted here")
    got: list[object] = eventjson.event_dicts([v])
    assert got == [json_format.MessageToDict(v)]
    assert got == [[0.1]]
