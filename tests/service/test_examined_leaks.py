"""Examined leaks: what a spectator or a bot could learn of cards it must not see.

1. The match seed deals every hand: MatchInfo.seed is withheld while the match runs, in every
   admin reply (CreateMatch, GetMatch, ListMatches, WatchMatch, AwaitMatch), and set once the
   match has ended.
2. Request ids: an Action naming another seat's request (open or closed) gets the same
   ActionResult as an id never issued, so probing ids tells a bot nothing about which seat was
   asked, or when; a bot's own ids are numbered per seat.
3. A seat that keeps a playable drawn card makes a decision that one drawing an unplayable card
   does not: MatchSeat.decisions and its response times are withheld while the match runs (an
   examination counted them with GetMatch and found every kept card).
"""

from __future__ import annotations

import asyncio

import pytest

from uno_server.gen.uno.v1 import admin_pb2, bot_pb2, errors_pb2, game_pb2
from uno_server.service.request_desk import NO_SUCH_REQUEST, SEAT_STRIDE

from .conftest import BOTS, Live
from .rawbot import Outcome, RawBot

pytestmark = pytest.mark.asyncio
HEUR = game_pb2.BUILTIN_BOT_HEURISTIC
SINGLE = game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND)
SEED = 424242


async def connected(live: Live, name: str) -> RawBot:
    bot = RawBot(live.port, name, BOTS[name], policy=None).start()
    await asyncio.wait_for(bot.welcomed.wait(), 30)
    return bot


async def results(bot: RawBot, n: int) -> list[Outcome]:
    for _ in range(6000):  # a guard against a hang, not a timing
        if len(bot.results) >= n:
            return bot.results
        await asyncio.sleep(0.01)
    raise AssertionError(f"{len(bot.results)} ActionResults, {n} expected")


async def first_watched(live: Live, match_id: str) -> admin_pb2.MatchInfo:
    call = live.admin.WatchMatch(admin_pb2.WatchMatchRequest(match_id=match_id), metadata=live.md)
    try:
        async for msg in call:
            assert msg.WhichOneof("kind") == "match", msg
            return msg.match
    finally:
        call.cancel()
    raise AssertionError("WatchMatch sent nothing")


async def test_the_seed_of_a_running_match_is_withheld_from_every_admin_reply(live: Live) -> None:
    bot = await connected(live, "b0")  # never answers: the match runs until it is cancelled
    created = await live.create(
        ["b0", HEUR, HEUR, HEUR], seed=SEED, tc=game_pb2.TimeControl(decision_ms=600_000)
    )
    mid = created.match_id
    await asyncio.wait_for(bot.requests.get(), 30)  # dealt: the hand is in play
    running = [
        created,
        await live.info(mid),
        *(await live.admin.ListMatches(admin_pb2.ListMatchesRequest(), metadata=live.md)).matches,
        await first_watched(live, mid),
    ]
    for info in running:
        assert info.state == admin_pb2.MATCH_STATE_RUNNING, info
        assert info.seed == 0, info
    await live.admin.CancelMatch(
        admin_pb2.CancelMatchRequest(match_id=mid, reason="test"), metadata=live.md
    )
    awaited = await live.admin.AwaitMatch(
        admin_pb2.AwaitMatchRequest(match_id=mid), metadata=live.md
    )
    ended = [
        awaited.match,
        await live.info(mid),
        *(await live.admin.ListMatches(admin_pb2.ListMatchesRequest(), metadata=live.md)).matches,
        await first_watched(live, mid),
    ]
    for info in ended:
        assert info.state == admin_pb2.MATCH_STATE_CANCELLED, info
        assert info.seed == SEED, info
    await bot.stop()


def _seen(r: Outcome) -> tuple[object, ...]:
    """Everything of an ActionResult but the echoes of the Action and the clock."""
    res = r.result
    assert res is not None, "accepted"
    return (
        res.code,
        res.reason,
        res.message,
        res.seat,
        res.match_id,
        res.request_open,
        res.field,
        res.time_bank_ms,
    )


async def test_another_seats_request_is_answered_as_one_never_issued(live: Live) -> None:
    b0, b1 = await connected(live, "b0"), await connected(live, "b1")
    # the bots at seats 1 and 2, so that a seat named (any but 0, the unset value) shows
    info = await live.create(
        [HEUR, "b0", "b1", HEUR], rules=SINGLE, tc=game_pb2.TimeControl(decision_ms=60_000)
    )
    mid = info.match_id
    asked: tuple[RawBot, RawBot, bot_pb2.DecisionRequest] | None = None
    while asked is None:
        for me, other in ((b0, b1), (b1, b0)):
            while not me.requests.empty():
                dr = me.requests.get_nowait()
                if dr.required and asked is None:
                    asked = (me, other, dr)
        await asyncio.sleep(0.01)
    me, thief, dr = asked
    legal = dr.legal_actions[0].id
    thief.answer(dr.request_id, legal)  # the other bot's open request
    thief.answer(f"{mid}-99999", legal)  # never issued
    thief.answer(f"{mid}-{int(dr.request_id.rpartition('-')[2]) + 1}", legal)  # a next one
    thief.answer(dr.request_id, None)  # a missing action id: still no seat named
    thief.answer(f"{mid}-99999", None)
    got = await results(thief, 5)
    me.answer(dr.request_id, legal)  # still open for its owner...
    assert (await results(me, 1))[0].accepted
    thief.answer(dr.request_id, legal)  # ...and once closed, still as if never issued
    got = await results(thief, 6)
    open_, never, nxt, missing_theirs, missing_never, closed = got
    assert _seen(open_) == _seen(never) == _seen(nxt) == _seen(closed), got
    assert (open_.code, open_.reason, open_.message) == (
        5,
        errors_pb2.ERROR_REASON_REQUEST_NOT_FOUND,
        NO_SUCH_REQUEST,
    )
    assert (open_.seat, open_.match_id) == (0, mid)
    assert _seen(missing_theirs) == _seen(missing_never), got
    assert missing_theirs.field == "action.action_id"
    # a match the bot does not sit in, or no match at all: the same again (no match id)
    other_match = await live.create([HEUR, HEUR], rules=SINGLE)
    thief.answer(f"{other_match.match_id}-1", 0)
    thief.answer("m999999-000000-1", 0)
    _, _, _, _, _, _, elsewhere, nowhere = await results(thief, 8)
    assert (elsewhere.code, elsewhere.reason, elsewhere.message) == (
        5,
        errors_pb2.ERROR_REASON_REQUEST_NOT_FOUND,
        NO_SUCH_REQUEST,
    )
    assert _seen(elsewhere) == _seen(nowhere) and elsewhere.match_id == "", got
    # every one of them is stamped: a missing received_at told a running match's id apart
    # from a made-up one (an examination)
    for r in (open_, never, nxt, closed, elsewhere, nowhere):
        assert r.result is not None and r.result.HasField("received_at"), r
    await b0.stop()
    await b1.stop()


async def test_a_bots_request_ids_are_numbered_per_seat(live: Live) -> None:
    """The id of a seat's k-th request does not depend on how many the other seats were sent
    (the global count gave away a kept drawn card or a jump-in chance)."""
    b0 = RawBot(live.port, "b0", BOTS["b0"]).start()  # answers every request
    await asyncio.wait_for(b0.welcomed.wait(), 30)
    info = await live.create(["b0", HEUR, HEUR, HEUR], rules=SINGLE, dealer=0)
    await b0.wait_ended(1, 120)
    ids = [
        m.decision_request.request_id
        for m in b0.received
        if m.WhichOneof("kind") == "decision_request" and not m.decision_request.resent
    ]
    assert len(ids) >= 2, ids
    assert ids == [f"{info.match_id}-{k * SEAT_STRIDE + 1}" for k in range(len(ids))]
    await b0.stop()


async def test_the_seats_decision_counts_are_withheld_while_the_match_runs(live: Live) -> None:
    answered = 0

    def three_then_silence(dr: bot_pb2.DecisionRequest) -> int | None:
        nonlocal answered
        if not dr.required or answered >= 3:
            return None
        answered += 1
        return dr.legal_actions[-1].id

    bot = RawBot(live.port, "b0", BOTS["b0"], policy=three_then_silence).start()
    await asyncio.wait_for(bot.welcomed.wait(), 30)
    created = await live.create(
        ["b0", HEUR, HEUR, HEUR], seed=SEED, tc=game_pb2.TimeControl(decision_ms=600_000)
    )
    mid = created.match_id
    for _ in range(4):  # the fourth request is left unanswered: the match waits on it
        await asyncio.wait_for(bot.requests.get(), 30)
    info = await live.info(mid)
    assert info.state == admin_pb2.MATCH_STATE_RUNNING
    for seat in info.seats:
        assert (seat.decisions, seat.mean_response_ms, list(seat.response_ms)) == (0, 0, []), seat
    await live.admin.CancelMatch(
        admin_pb2.CancelMatchRequest(match_id=mid, reason="test"), metadata=live.md
    )
    ended = (
        await live.admin.AwaitMatch(admin_pb2.AwaitMatchRequest(match_id=mid), metadata=live.md)
    ).match
    assert ended.seats[0].decisions == 3 and len(ended.seats[0].response_ms) == 3, ended.seats[0]
    await bot.stop()
