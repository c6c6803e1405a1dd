"""The hand-rolled encodings of the per-move path (service/wire.py) against the protobuf
runtime: over real hand states of every rule set, each parses to exactly the message the
runtime builds field by field."""

from __future__ import annotations

import asyncio
import random
import time
from collections.abc import Iterator
from typing import Any

import pytest
from google.protobuf.timestamp_pb2 import Timestamp

from uno_server.engine import Hand, RuleSet
from uno_server.gen.uno.v1 import bot_pb2, game_pb2
from uno_server.service import convert, wire

RULE_SETS = [
    RuleSet(),
    RuleSet(seats=2),
    RuleSet(seats=3, stacking=True, stacking_wd4=True),
    RuleSet(seats=4, partners=True, jump_in=True),
    RuleSet(seats=5, seven_o=True, draw_until_playable=True),
    RuleSet(seats=10, decks=2, first_flip="redraw", uno_penalty=4),
]


def _states(rules: RuleSet, seed: int) -> Iterator[Hand]:
    """The live hand after each action of one hand played at random (plays preferred, so
    hands end), the deal included."""
    rng = random.Random(seed)
    hand = Hand.deal(rules, seed, seed % rules.seats)
    yield hand
    while not hand.over and hand.turn < 600:
        seat = rng.choice(hand.pending_seats())
        legal = hand.legal_actions(seat)
        plays = [a for a in legal if a >= 1000]
        hand.apply(seat, rng.choice(plays if plays and rng.random() < 0.8 else legal))
        yield hand


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.seats}seats")
def test_seat_views_parse_to_what_the_runtime_builds(rules: RuleSet) -> None:
    rng = random.Random(rules.seats)
    checked = 0
    for seed in range(20):
        for hand in _states(rules, seed):
            n = hand.n
            totals = [rng.randrange(0, 2000) for _ in range(n)]
            taken = [rng.random() < 0.2 for _ in range(n)]
            closes = time.time_ns() if hand.window >= 0 else 0
            opened = closes - 2_000_000_000 if closes and rng.random() < 0.5 else 0
            for seat in range(n):
                want = convert.seat_view(
                    hand,
                    seat,
                    totals,
                    taken,
                    _ts(closes),
                    _ts(opened),
                )
                got = game_pb2.SeatView.FromString(
                    wire.seat_view(hand, seat, totals, taken, closes, opened)
                )
                assert got == want, (seed, hand.turn, seat)
                checked += 1
    assert checked > 1000


def _ts(ns: int) -> Timestamp | None:
    if not ns:
        return None
    ts = Timestamp()
    ts.FromNanoseconds(ns)
    return ts


def test_a_decision_request_parses_to_what_the_runtime_builds() -> None:
    states = _states(RuleSet(), 3)
    for _ in range(12):
        hand = next(states)
    seat = hand.pending_seats()[0]
    legal = hand.legal_actions(seat)
    view = wire.seat_view(hand, seat, [0, 5, 0, 9], [False] * 4, 0)
    events = [
        convert.event_to_proto(e, i + 1, 1, convert.timestamp(time.time()))
        for i, e in enumerate(hand.log[-5:])
    ]
    rules = convert.rules_to_proto(RuleSet())
    for required, resent, default in ((True, False, 0), (False, True, None), (True, True, 1230)):
        now = time.time_ns()
        raw = wire.decision_request(
            wire.request_static("m000001-abcdef", 1000, rules.SerializeToString()),
            "m000001-abcdef-17",
            seat,
            3,
            hand.turn,
            bot_pb2.PROMPT_TURN,
            required,
            now + 900_000_000 if required else 0,
            900 if required else 0,
            250,
            2,
            default,
            view,
            legal,
            [wire.event_field(e.SerializeToString()) for e in events],
            now,
            resent,
            7,
        )
        want = bot_pb2.PlayResponse()
        dr = want.decision_request
        dr.request_id = "m000001-abcdef-17"
        dr.match_id = "m000001-abcdef"
        dr.seat = seat
        dr.hand_number = 3
        dr.turn = hand.turn
        dr.prompt = bot_pb2.PROMPT_TURN
        if required:
            dr.required = True
            dr.deadline.FromNanoseconds(now + 900_000_000)
            dr.time_left_ms = 900
        dr.decision_ms = 1000
        dr.time_bank_ms = 250
        dr.strikes = 2
        if default is not None:
            dr.default_action_id = default
        dr.view.CopyFrom(game_pb2.SeatView.FromString(view))
        dr.legal_actions.extend(convert.legal_action(a) for a in legal)
        dr.events.extend(events)
        dr.rules.CopyFrom(rules)
        dr.sent_at.FromNanoseconds(now)
        dr.resent = resent
        dr.previous_response_ms = 7
        assert bot_pb2.PlayResponse.FromString(raw) == want


def test_a_batch_parses_to_its_messages_in_order() -> None:
    a = bot_pb2.PlayResponse(pong=bot_pb2.Pong(nonce=1))
    b = bot_pb2.PlayResponse(request_closed=bot_pb2.RequestClosed(request_id="x-1", seat=2))
    raw = wire.batch([a, b.SerializeToString(), a])
    got = bot_pb2.PlayResponse.FromString(raw)
    assert got.WhichOneof("kind") == "batch"
    assert list(got.batch.messages) == [a, b, a]


@pytest.mark.parametrize("n", [0, 1, 127, 128, 16383, 16384, 2**31 - 1, 2**63, -1, -(2**31)])
def test_varints_match_the_runtime(n: int) -> None:
    if n < 0 or n >= 2**63:
        msg = game_pb2.SeatState(score=n) if -(2**31) <= n < 2**31 else None
        if msg is None:
            assert wire.varint(n)[-1] < 0x80  # still a well-formed varint
            return
        assert wire.uint(3, n) == msg.SerializeToString()
        return
    if n < 2**31:
        assert wire.uint(3, n) == game_pb2.SeatState(score=n).SerializeToString()


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.seats}seats")
def test_the_common_events_encode_as_the_runtime_does(rules: RuleSet) -> None:
    """wire.public_event for every event of random hands, as every seat but the owner sees it,
    and as the owner sees its own draws."""
    from uno_server.engine.views import SPECTATOR, redact

    seen: set[str] = set()
    for seed in range(8):
        *_, hand = _states(rules, seed)  # the hand played to its end
        for seq, ev in enumerate(hand.log, 1):
            pub = redact(ev, SPECTATOR)
            if pub is None:
                continue
            wall = 1_796_000_000.123456 + seq
            raw = wire.public_event(seq, 2, int(wall * 1e9), pub)
            if raw is None:
                assert type(ev) not in wire.FAST_EVENTS
                continue
            seen.add(type(ev).__name__)
            want = convert.event_to_proto(pub, seq, 2, convert.timestamp(wall))
            assert game_pb2.Event.FromString(raw) == want, ev
            if pub != ev and type(ev) in wire.FAST_EVENTS:  # the owner's view: its drawn cards
                own = wire.public_event(seq, 2, int(wall * 1e9), ev)
                assert own is not None
                mine = convert.event_to_proto(ev, seq, 2, convert.timestamp(wall))
                assert game_pb2.Event.FromString(own) == mine, ev
                seen.add("own " + type(ev).__name__)
    assert {"Played", "Drew", "own Drew", "Passed", "Skipped"} <= seen


@pytest.mark.parametrize(
    "n", [0, 1, 127, 128, 16383, 16384, 2**21 - 1, 2**21, 2**28 - 1, 2**28, 2**35 - 1, 2**35, 2**40]
)
def test_large_varints_match_the_runtime(n: int) -> None:
    msg = game_pb2.Event(sequence=n)
    assert wire.uint(1, n) == msg.SerializeToString()


def _played_table(rules: RuleSet, seed: int, hands: int) -> Any:
    """A Table whose match was played at random for up to ``hands`` hands (no bot connected:
    the table only records), as Table.run plays it."""
    from uno_server.engine.hand import OVER
    from uno_server.engine.match import Match
    from uno_server.service.metrics import ServiceMetrics
    from uno_server.service.table import Seat, Table, TimeControl

    match = Match(rules, seed)
    seats = [Seat(i, f"b{i}", 0, None, 0) for i in range(rules.seats)]
    table = Table(
        f"m{seed}", match, seats, TimeControl(), ServiceMetrics(process=False), lambda _: None
    )
    rng = random.Random(seed)
    for played in range(1, hands + 1):
        hand = match.hand
        while hand.phase != OVER and hand.turn < 600:
            seat = rng.choice(hand.pending_seats())
            legal = hand.legal_actions(seat)
            if not legal:
                continue
            plays = [a for a in legal if a >= 1000]
            table._apply(seat, rng.choice(plays if plays and rng.random() < 0.8 else legal), "bot")
        if match.over or played == hands or hand.phase != OVER:
            break
        new = match.next_hand()
        match.log.clear()
        table._begin_hand()
        table.seat_log.record_all(new.log)
    return table


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"{r.seats}seats")
def test_every_event_entry_is_the_tables_own_conversion_for_every_seat(rules: RuleSet) -> None:
    """SeatLog._event_field (hand-encoded where wire.FAST_EVENTS allow) against SeatLog._to_proto
    (the protobuf runtime), for every event of played matches as every seat sees it: the
    owner's own cards, everyone else's redacted view, and what no one else may see."""
    seen: set[str] = set()

    async def check() -> None:
        for seed in range(3):
            table = _played_table(rules, seed, hands=3)
            for rec in table.records:
                for viewer in range(rules.seats):
                    field = table.seat_log._event_field(rec, viewer)
                    want = table.seat_log._to_proto(rec, viewer)
                    if field is None:
                        assert want is None, rec
                        continue
                    got = list(bot_pb2.DecisionRequest.FromString(field).events)
                    assert got == [want], (rec, viewer)
                    seen.add(type(rec.event).__name__)

    asyncio.run(check())
    assert {"Dealt", "DealerDraw", "DealerChosen", "FirstCard", "Played", "Drew"} <= seen


def test_match_ended_from_event_entries_is_the_runtimes_message() -> None:
    """The hand-built MatchEnded (wire.match_ended) parses to the message the protobuf path
    builds, for every seat, with the events each seat had not had."""
    from uno_server.gen.uno.v1 import game_pb2 as g

    sent: list[Any] = []

    class Box:
        bot_name = "b0"

        def send(self, msg: Any) -> None:
            sent.append(msg)

    async def check() -> None:
        table = _played_table(RuleSet(), 5, hands=1)
        table.seats[2].strikes, table.seats[3].taken_over = 2, True
        table._finish(g.END_CAUSE_COMPLETED)
        for st in table.seats:
            st.cursor = max(0, len(table.records) - 5 - st.seat)  # some events still to deliver
            start = st.cursor
            table.send_match_ended(st, Box())
            table._ident, st.cursor, st.ended_sent = False, start, False
            table.send_match_ended(st, Box())
            table._ident = True
            fast, slow = sent[-2], sent[-1]
            assert isinstance(fast, bytes) and not isinstance(slow, bytes)
            got = bot_pb2.PlayResponse.FromString(fast)
            assert got == slow, st.seat
            assert len(got.match_ended.events) == 5 + st.seat
            assert got.match_ended.strikes == st.strikes

    asyncio.run(check())
