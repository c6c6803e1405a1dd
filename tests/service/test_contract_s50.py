"""An examination of the bot-facing contract (session 50), over the wire: what an ActionResult
says (response_ms, field), what an answer after its match ended gets however long ago it ended,
and the words of two stream faults (a stream closed before its Hello, a bad Ping.sent_at).

Each test failed before its fix: the fix was taken out once and the test watched failing.
"""

from __future__ import annotations

import asyncio

import grpc
import pytest

from uno_server.gen.uno.v1 import admin_pb2, bot_pb2, errors_pb2, game_pb2

from .conftest import BOTS, Live, serving
from .rawbot import Outcome, RawBot, raw_play

pytestmark = pytest.mark.asyncio
HEUR = game_pb2.BUILTIN_BOT_HEURISTIC
SINGLE = game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND)
SLOW = game_pb2.TimeControl(decision_ms=60_000)  # no deadline passes during a test
E = errors_pb2


async def connected(live: Live, name: str, **kw: object) -> RawBot:
    bot = RawBot(live.port, name, BOTS[name], **kw).start()  # type: ignore[arg-type]
    await asyncio.wait_for(bot.welcomed.wait(), 30)
    return bot


async def required(bot: RawBot) -> bot_pb2.DecisionRequest:
    while True:
        dr = await asyncio.wait_for(bot.requests.get(), 30)
        if dr.required:
            return dr


async def results(bot: RawBot, n: int) -> list[Outcome]:
    """The first ``n`` outcomes of the bot's Actions (each fenced by a Ping, see RawBot)."""
    for _ in range(6000):  # a guard against a hang, not a timing
        if len(bot.results) >= n:
            return bot.results[:n]
        await asyncio.sleep(0.01)
    raise AssertionError(f"{len(bot.results)} ActionResults, {n} expected")


def wall_ms(res: bot_pb2.ActionResult, dr: bot_pb2.DecisionRequest) -> float:
    """received_at - DecisionRequest.sent_at, in milliseconds."""
    return (res.received_at.ToNanoseconds() - dr.sent_at.ToNanoseconds()) / 1e6


def late_and_faults(live: Live, bot: str) -> tuple[float, float]:
    reg = live.server.arena.metrics.registry
    late = illegal = 0.0
    for metric in reg.collect():
        for s in metric.samples:
            if s.labels.get("bot") != bot or not s.name.endswith("_total"):
                continue
            if s.name == "uno_late_actions_total":
                late += s.value
            elif s.name == "uno_illegal_actions_total":
                illegal += s.value
    return late, illegal


# ---------------------------------------------------------------- 2. ActionResult.response_ms


async def test_response_ms_is_the_servers_measure_from_sent_at_to_received_at(live: Live) -> None:
    """response_ms was always 0 (an examination: 1502 ms between sent_at and received_at)."""
    bot = await connected(live, "b0", policy=None)
    info = await live.create(["b0", HEUR, HEUR, HEUR], rules=SINGLE, tc=SLOW)
    dr = await required(bot)
    await asyncio.sleep(0.3)  # "thinking": at least 300 ms after the request was sent
    bot.answer(dr.request_id, 999_999)  # names no action: MALFORMED_ACTION, still open
    (bad,) = await results(bot, 1)
    assert (bad.code, bad.reason, bad.request_open) == (3, E.ERROR_REASON_MALFORMED_ACTION, True)
    assert bad.result is not None
    first_ms = bad.result.response_ms
    assert first_ms >= 300, bad
    ms = wall_ms(bad.result, dr)
    assert ms - 1 <= first_ms <= ms + 1, (first_ms, ms)
    bot.answer(dr.request_id, dr.default_action_id)  # accepted: the request closes
    await asyncio.sleep(0.3)
    bot.answer(dr.request_id, dr.default_action_id)  # too late: ALREADY_ANSWERED
    _, accepted, again = await results(bot, 3)
    assert accepted.accepted
    assert (again.code, again.reason) == (10, E.ERROR_REASON_ALREADY_ANSWERED), again
    assert again.result is not None
    again_ms = again.result.response_ms
    assert again_ms >= first_ms + 300, (again_ms, first_ms)
    ms = wall_ms(again.result, dr)
    assert ms - 1 <= again_ms <= ms + 1, (again_ms, ms)
    # no request of this bot is known by that id: 0, as the contract says
    bot.answer(f"{info.match_id}-99999", 0)
    (*_, unknown) = await results(bot, 4)
    assert (unknown.code, unknown.reason) == (5, E.ERROR_REASON_REQUEST_NOT_FOUND), unknown
    assert unknown.response_ms == 0
    await bot.stop()


# ---------------------------------------------------------------- 3. ActionResult.field


async def test_a_malformed_action_names_its_field_alone_and_in_a_batch(live: Live) -> None:
    """MALFORMED_ACTION (INVALID_ARGUMENT) came with an empty field."""
    bot = await connected(live, "b0", policy=None)
    await live.create(["b0", HEUR, HEUR, HEUR], rules=SINGLE, tc=SLOW)
    dr = await required(bot)
    bot.answer(dr.request_id, 999_999)
    (alone,) = await results(bot, 1)
    assert (alone.code, alone.reason) == (3, E.ERROR_REASON_MALFORMED_ACTION), alone
    assert alone.field == "action.action_id"
    # in a batch every INVALID_ARGUMENT names its entry's place, as a bad request id does
    batch = bot_pb2.ActionBatch(
        actions=[
            bot_pb2.Action(request_id=dr.request_id, action_id=999_999),
            bot_pb2.Action(request_id=dr.request_id),  # action_id missing
            bot_pb2.Action(action_id=0),  # request_id missing
        ]
    )
    bot.outbox.put_nowait(bot_pb2.PlayRequest(actions=batch))
    bot.outbox.put_nowait(bot_pb2.PlayRequest(ping=bot_pb2.Ping(nonce=4242)))
    for _ in range(3000):  # a guard against a hang: the Pong comes after the batch's results
        if any(m.WhichOneof("kind") == "pong" and m.pong.nonce == 4242 for m in bot.received):
            break
        await asyncio.sleep(0.01)
    got = [m.action_result for m in bot.received if m.WhichOneof("kind") == "action_result"]
    assert [(r.code, r.reason, r.field) for r in got[1:]] == [
        (3, E.ERROR_REASON_MALFORMED_ACTION, "actions.actions[0].action_id"),
        (3, E.ERROR_REASON_MALFORMED_MESSAGE, "actions.actions[1].action_id"),
        (3, E.ERROR_REASON_MALFORMED_MESSAGE, "actions.actions[2].request_id"),
    ]
    assert got[2].message.startswith("actions.actions[1].action_id: is required"), got[2]
    await bot.stop()


# ---------------------------------------------------------------- 4. answers after the end


@pytest.mark.parametrize("log_kept", [True, False])
async def test_after_the_end_every_answer_of_its_bots_is_stale_whether_or_not_the_log_is_kept(
    log_kept: bool,
) -> None:
    """Right after a match ended (its event log still kept) an id never issued, or another
    seat's, got REQUEST_NOT_FOUND, a fault; once the log was let go the same ids got
    STALE_REQUEST, late. errors.proto: after the end an answer from one of its bots is
    STALE_REQUEST. A bot that did not play in it still gets REQUEST_NOT_FOUND."""
    async with serving(log_linger_matches=128 if log_kept else 0) as live:
        b0 = await connected(live, "b0", policy=None)
        b1 = await connected(live, "b1", policy=None)
        b2 = await connected(live, "b2", policy=None)
        info = await live.create(["b0", "b1", HEUR, HEUR], rules=SINGLE, tc=SLOW)
        mid = info.match_id
        for _ in range(3000):  # until a bot's seat is asked (a guard against a hang)
            if not (b0.requests.empty() and b1.requests.empty()):
                break
            await asyncio.sleep(0.01)
        await live.admin.CancelMatch(
            admin_pb2.CancelMatchRequest(match_id=mid, reason="test"), metadata=live.md
        )
        await b0.wait_ended()
        f = live.server.arena.finished[mid]
        assert (f.table is not None) == log_kept
        late0, faults0 = late_and_faults(live, "b0")
        ids = [
            f"{mid}-99",  # never issued (seat 2 is a built-in bot: it is sent no requests)
            f"{mid}-2",  # seat 1's first request: b1's, not b0's
            f"{mid}-1",  # seat 0's first request: b0's own (if it was sent; closed by the end)
            f"{mid}-x",  # not even of the form the server writes
        ]
        for rid in ids:
            b0.answer(rid, 0)
        b0.answer(f"{mid}-2", None)  # a missing action_id is a fault, before anything else
        b2.answer(f"{mid}-1", 0)  # not one of its bots
        got = await results(b0, len(ids) + 1)
        for rid, r in zip(ids, got, strict=False):
            assert (r.code, r.reason) == (10, E.ERROR_REASON_STALE_REQUEST), (rid, r)
            assert r.result is not None and r.result.match_id == mid, (rid, r)
            assert not r.request_open and r.response_ms == 0, (rid, r)
            assert r.result.HasField("received_at"), (rid, r)
        missing = got[-1]
        assert (missing.code, missing.reason) == (3, E.ERROR_REASON_MALFORMED_MESSAGE), missing
        assert missing.field == "action.action_id"
        (other,) = await results(b2, 1)
        assert (other.code, other.reason) == (5, E.ERROR_REASON_REQUEST_NOT_FOUND), other
        assert other.result is not None and other.result.match_id == ""
        # the counts agree: late answers apart from faults
        assert late_and_faults(live, "b0") == (late0 + len(ids), faults0 + 1)
        listed = await live.admin.ListBots(admin_pb2.ListBotsRequest(), metadata=live.md)
        bots = {b.bot_name: b for b in listed.bots}
        assert (bots["b0"].rejected_actions, bots["b0"].stale_actions) == (1, len(ids))
        assert (bots["b2"].rejected_actions, bots["b2"].stale_actions) == (1, 0)
        for bot in (b0, b1, b2):
            await bot.stop()


# ---------------------------------------------------------------- 5. closed before its Hello


async def test_a_stream_closed_before_its_hello_is_not_told_about_a_time_limit(
    live: Live,
) -> None:
    out = await raw_play(live.port, BOTS["b0"], [], half_close=True)
    assert (out.code, out.reason) == (grpc.StatusCode.FAILED_PRECONDITION, "HELLO_REQUIRED")
    assert "closed before its Hello" in out.details, out.details
    assert "10 s" not in out.details, out.details
    errs = out.errors()
    assert errs and errs[-1].fatal and errs[-1].message == out.details


# ---------------------------------------------------------------- 6. a bad Ping.sent_at


async def test_a_bad_ping_sent_at_is_explained_once(live: Live) -> None:
    bad = []
    for seconds, nanos in ((253_402_300_800, 0), (0, -1), (0, 10**9)):
        ping = bot_pb2.PlayRequest(ping=bot_pb2.Ping(nonce=1))
        ping.ping.sent_at.seconds = seconds
        ping.ping.sent_at.nanos = nanos
        bad.append(ping.SerializeToString())
    hello = bot_pb2.PlayRequest(hello=bot_pb2.Hello(protocol_version=1)).SerializeToString()
    out = await raw_play(
        live.port,
        BOTS["b0"],
        [hello, *bad],
        half_close=False,
        until=lambda got: sum(m.WhichOneof("kind") == "error" for m in got) >= 3,
    )
    errs = out.errors()
    assert [(e.code, e.reason, e.field) for e in errs] == [
        (3, E.ERROR_REASON_LIMIT_EXCEEDED, "ping.sent_at")
    ] * 3
    for e in errs:
        assert e.message.startswith("ping.sent_at: not a valid Timestamp"), e.message
        assert e.message.count("Timestamp") == 1 and e.message.count("valid") == 1, e.message
        assert "years 1-9999" in e.message and "nanos in 0-999999999" in e.message, e.message
    assert not [m for m in out.responses if m.WhichOneof("kind") == "pong"]
