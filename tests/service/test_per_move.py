"""The per-move contract of issue 11 over the wire: accepted actions get no reply, the server's
measure of the previous answer rides in the next request, and batching both ways (opt-in from
the server, always allowed from the bot) changes only the framing."""

from __future__ import annotations

import asyncio
import time

import pytest

from uno_server.gen.uno.v1 import admin_pb2, bot_pb2, errors_pb2, game_pb2

from .conftest import BOTS, Live
from .rawbot import RawBot

pytestmark = pytest.mark.asyncio
HEUR = game_pb2.BUILTIN_BOT_HEURISTIC
SINGLE = game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND)


def hello(name: str, max_batch: int) -> bot_pb2.Hello:
    return bot_pb2.Hello(bot_name=name, bot_version="test", protocol_version=1, max_batch=max_batch)


async def connected(live: Live, name: str, **kw: object) -> RawBot:
    bot = RawBot(live.port, name, BOTS[name], **kw).start()  # type: ignore[arg-type]
    await asyncio.wait_for(bot.welcomed.wait(), 30)
    return bot


async def test_accepted_actions_get_no_reply_and_rejections_get_one(live: Live) -> None:
    bot = await connected(live, "b0")
    info = await live.create(["b0", HEUR, HEUR, HEUR], rules=SINGLE, seed=5)
    await bot.wait_ended()
    # every answer the policy sent was accepted, and not one ActionResult came back
    assert bot.results and all(r.accepted for r in bot.results)
    assert not [m for m in bot.received if m.WhichOneof("kind") == "action_result"]
    # a bad answer still gets its ActionResult, before the Pong that fences it
    bot.answer(f"{info.match_id}-1", 1070)
    await asyncio.wait_for(_until(lambda: bot.results[-1].request_id.endswith("-1")), 30)
    late = bot.results[-1]
    assert not late.accepted and late.code == 10  # ABORTED: that request is long closed
    assert [m for m in bot.received if m.WhichOneof("kind") == "action_result"]
    await bot.stop()


async def _until(cond: object) -> None:
    while not cond():  # type: ignore[operator]
        await asyncio.sleep(0.01)


async def test_previous_response_ms_reports_the_servers_measure_of_the_last_answer(
    live: Live,
) -> None:
    def slow(dr: bot_pb2.DecisionRequest) -> int | None:
        if not dr.required:
            return None
        time.sleep(0.004)  # 4 ms of "thinking", blocking the loop the server shares
        return dr.legal_actions[-1].id

    bot = await connected(live, "b0", policy=slow)
    await live.create(["b0", HEUR, HEUR, HEUR], rules=SINGLE, seed=9)
    await bot.wait_ended()
    required = [
        m.decision_request
        for m in bot.received
        if m.WhichOneof("kind") == "decision_request" and m.decision_request.required
    ]
    assert len(required) >= 3
    assert required[0].previous_response_ms == 0  # no answer yet in this match
    assert all(dr.previous_response_ms >= 4 for dr in required[1:])
    info = await live.info(required[0].match_id)
    assert info.seats[0].response_ms[-1] >= 4
    await bot.stop()


async def test_batches_come_only_when_asked_never_hold_the_welcome_and_never_nest(
    live: Live,
) -> None:
    batcher = await connected(live, "b0", hello=hello("b0", max_batch=8))
    plain = await connected(live, "b1")
    # one bot holding three seats of a table gets several messages at the same moment
    await live.create(["b0", "b0", "b1", "b0"], rules=SINGLE, seed=21)
    await batcher.wait_ended(3)
    await plain.wait_ended()
    assert batcher.frames[0].WhichOneof("kind") == "welcome"
    batches = [f.batch for f in batcher.frames if f.WhichOneof("kind") == "batch"]
    assert batches, "three seats' MatchStarted and first messages should share a frame"
    for b in batches:
        assert 2 <= len(b.messages) <= 8
        kinds = {m.WhichOneof("kind") for m in b.messages}
        assert "batch" not in kinds and "welcome" not in kinds
    assert all(f.WhichOneof("kind") != "batch" for f in plain.frames)
    # unpacked, the batching bot saw exactly what an unbatched one sees: a whole hand
    assert len(batcher.ended) == 3
    assert all(e.cause == game_pb2.END_CAUSE_COMPLETED for e in batcher.ended)
    await batcher.stop()
    await plain.stop()


async def test_an_action_batch_applies_each_answer_as_if_alone(live: Live) -> None:
    bot = await connected(live, "b0", policy=None)
    matches = [
        (await live.create(["b0", HEUR, HEUR, HEUR], rules=SINGLE, seed=s, dealer=3)).match_id
        for s in (31, 32, 33)
    ]
    first = [await asyncio.wait_for(bot.requests.get(), 30) for _ in matches]
    assert {dr.match_id for dr in first} == set(matches)
    batch = bot_pb2.ActionBatch(
        actions=[
            bot_pb2.Action(request_id=dr.request_id, action_id=dr.default_action_id) for dr in first
        ]
        + [bot_pb2.Action(request_id=f"{matches[0]}-999", action_id=0)]  # never issued
        # a bad request id cannot name its entry: its place in the batch does
        + [bot_pb2.Action(action_id=0), bot_pb2.Action(request_id="x" * 300, action_id=0)]
    )
    bot.outbox.put_nowait(bot_pb2.PlayRequest(actions=batch))
    bot.outbox.put_nowait(bot_pb2.PlayRequest())  # empty: names every kind it may hold
    bot.outbox.put_nowait(bot_pb2.PlayRequest(ping=bot_pb2.Ping(nonce=77)))
    await asyncio.wait_for(
        _until(lambda: any(m.WhichOneof("kind") == "pong" for m in bot.received)), 5
    )
    results = [m.action_result for m in bot.received if m.WhichOneof("kind") == "action_result"]
    assert [(r.request_id, r.reason, r.field) for r in results] == [
        (f"{matches[0]}-999", errors_pb2.ERROR_REASON_REQUEST_NOT_FOUND, ""),
        ("", errors_pb2.ERROR_REASON_MALFORMED_MESSAGE, "actions.actions[4].request_id"),
        ("", errors_pb2.ERROR_REASON_LIMIT_EXCEEDED, "actions.actions[5].request_id"),
    ]
    assert results[1].message == "actions.actions[4].request_id: is required"
    assert results[2].message.startswith("actions.actions[5].request_id: 300 characters")
    (empty,) = [m.error for m in bot.received if m.WhichOneof("kind") == "error"]
    assert empty.message == "empty PlayRequest: set one of hello, action, actions or ping"
    for mid in matches:  # each answer was applied (counted once a match ends: withheld before)
        await live.admin.CancelMatch(
            admin_pb2.CancelMatchRequest(match_id=mid, reason="test"), metadata=live.md
        )
        info = await live.info(mid)
        assert info.seats[0].decisions == 1
    await bot.stop()


async def test_action_batches_out_of_bounds_are_refused_whole(live: Live) -> None:
    bot = await connected(live, "b0", policy=None)
    info = await live.create(["b0", HEUR, HEUR, HEUR], rules=SINGLE, seed=41, dealer=3)
    dr = await asyncio.wait_for(bot.requests.get(), 30)
    act = bot_pb2.Action(request_id=dr.request_id, action_id=0)
    bot.outbox.put_nowait(bot_pb2.PlayRequest(actions=bot_pb2.ActionBatch()))
    bot.outbox.put_nowait(bot_pb2.PlayRequest(actions=bot_pb2.ActionBatch(actions=[act] * 257)))
    bot.outbox.put_nowait(bot_pb2.PlayRequest(ping=bot_pb2.Ping(nonce=5)))
    await asyncio.wait_for(
        _until(lambda: any(m.WhichOneof("kind") == "pong" for m in bot.received)), 5
    )
    errors = [m.error for m in bot.received if m.WhichOneof("kind") == "error"]
    assert [(e.code, e.reason, e.field, e.fatal) for e in errors] == [
        (3, errors_pb2.ERROR_REASON_MALFORMED_MESSAGE, "actions.actions", False),
        (3, errors_pb2.ERROR_REASON_LIMIT_EXCEEDED, "actions.actions", False),
    ]
    assert (await live.info(info.match_id)).seats[0].decisions == 0  # none was applied
    await bot.stop()


async def test_max_batch_over_its_limit_ends_the_stream_naming_the_field(live: Live) -> None:
    bot = RawBot(live.port, "b0", BOTS["b0"], hello=hello("b0", max_batch=1025)).start()
    await asyncio.wait_for(bot.task, 30)  # type: ignore[arg-type]
    assert bot.error is not None
    assert bot.error.code().name == "INVALID_ARGUMENT"
    assert "hello.max_batch" in (bot.error.details() or "")


async def test_a_seat_sees_its_own_dealt_and_drawn_cards_and_only_counts_of_others(
    live: Live,
) -> None:
    """Events are encoded once per audience: the owner's version of a Dealt or Drew event
    carries the cards, everyone else's only the count."""

    def draw_first(dr: bot_pb2.DecisionRequest) -> int | None:
        if not dr.required:
            return None
        ids = [a.id for a in dr.legal_actions]
        return 0 if 0 in ids else dr.legal_actions[-1].id  # draw whenever allowed

    bots = [await connected(live, f"b{i}", policy=draw_first) for i in range(2)]
    await live.create(["b0", "b1", HEUR, HEUR], rules=SINGLE, seed=77)
    for b in bots:
        await b.wait_ended()
    for me, b in enumerate(bots):
        events = [
            e
            for m in b.received
            if m.WhichOneof("kind") == "decision_request"
            for e in m.decision_request.events
        ]
        dealt = [e.dealt for e in events if e.WhichOneof("kind") == "dealt"]
        assert {d.seat for d in dealt} == {0, 1, 2, 3}
        for d in dealt:
            assert d.amount == 7
            assert len(d.cards) == (7 if d.seat == me else 0)
        drew = [e.drew for e in events if e.WhichOneof("kind") == "drew"]
        mine = [d for d in drew if d.seat == me]
        assert mine and all(len(d.cards) == d.amount for d in mine)
        assert all(not d.cards for d in drew if d.seat != me)
    for b in bots:
        await b.stop()


async def test_the_writer_waits_about_one_gap_and_only_for_a_bot_at_two_tables_or_more() -> None:
    from uno_server.service.session import WRITE_LINGER_S, write_wait

    assert WRITE_LINGER_S == 0.002  # the documented cap (bot.proto, Hello.max_batch)
    assert write_wait(0.001, 2) == 0.001  # about the gap between the bot's messages
    assert write_wait(0.0005, 16) == 0.0005
    assert write_wait(0.001, 1) == 0.0  # one table: its next message needs the bot's answer
    assert write_wait(0.001, 0) == 0.0
    assert write_wait(WRITE_LINGER_S, 8) == 0.0  # messages this far apart: never wait
    assert write_wait(0.5, 8) == 0.0
    assert write_wait(-1.0, 8) == 0.0  # (a clock step) never a negative or odd wait


async def test_the_writer_asks_how_many_tables_the_bot_plays(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    from uno_server.service import bot_stream

    asked: list[int] = []  # the tables the bot played, at each write the writer could delay

    def record(gap: float, tables: int) -> float:
        asked.append(tables)
        return 0.0

    monkeypatch.setattr(bot_stream, "write_wait", record)
    bot = await connected(live, "b0", hello=hello("b0", max_batch=8))
    await live.create(["b0", HEUR, HEUR, HEUR], rules=SINGLE, seed=51)
    await bot.wait_ended()
    assert asked and max(asked) == 1  # one match: the writer is told 1, so never waits
    asked.clear()
    for seed in (52, 53):
        await live.create(["b0", HEUR, HEUR, HEUR], rules=SINGLE, seed=seed)
    await bot.wait_ended(3)
    assert 2 in asked  # two matches at once: the writer may wait
    await bot.stop()
