"""AdminService.AwaitMatch: one answer per finished match, with exactly the events WatchMatch
shows a spectator (the tournament runner collects every hand this way, so a stored replay is what
it was when the runner followed WatchMatch)."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from uno_server.gen.uno.v1 import admin_pb2, game_pb2
from uno_server.service import admin as admin_mod

from .conftest import Live
from .test_service import HEUR, RAND, connected, reason_of

pytestmark = pytest.mark.asyncio


async def _await(live: Live, match_id: str, after: int = 0) -> admin_pb2.AwaitMatchResponse:
    return await live.admin.AwaitMatch(
        admin_pb2.AwaitMatchRequest(match_id=match_id, after_sequence=after), metadata=live.md
    )


async def _collect(live: Live, match_id: str) -> tuple[admin_pb2.MatchInfo, list[object], int]:
    """Every event, following ``truncated``; and the number of calls it took."""
    events: list[object] = []
    after, calls = 0, 0
    while True:
        res = await asyncio.wait_for(_await(live, match_id, after), 60)
        calls += 1
        events.extend(res.events)
        if not res.truncated:
            return res.match, events, calls
        assert res.events, "a truncated answer holds at least one event"
        after = res.events[-1].sequence


async def test_the_answer_is_what_a_spectator_sees(live: Live) -> None:
    # a bot seat (its events are encoded for its DecisionRequests first) and built-in seats (a
    # bot-free match: nothing encoded before the call), over a whole multi-hand match
    bot = await connected(live, "b0")
    for seats in (["b0", HEUR, RAND, HEUR], [HEUR, RAND, HEUR, RAND]):
        info = await live.create(seats, seed=7)  # type: ignore[arg-type]
        final, events, calls = await _collect(live, info.match_id)
        assert calls == 1
        assert final.state == admin_pb2.MATCH_STATE_FINISHED
        watched = await asyncio.wait_for(live.watch(info.match_id), 60)
        assert len(events) > 50 and events == watched
        kinds = [e.WhichOneof("kind") for e in events]  # type: ignore[attr-defined]
        assert kinds[-1] == "match_ended" and "hand_ended" in kinds
        assert [e.sequence for e in events] == sorted({e.sequence for e in events})  # type: ignore[attr-defined]
        got = await live.info(info.match_id)
        assert final.last_sequence == got.last_sequence and final.winners == got.winners
    await bot.stop()


async def test_a_call_waits_for_the_end(live: Live) -> None:
    bot = await connected(live, "b0", policy=None)  # never answers: the match waits for it
    info = await live.create(
        ["b0", HEUR, HEUR, HEUR],
        rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
        tc=game_pb2.TimeControl(decision_ms=60_000),
    )
    call = asyncio.ensure_future(_await(live, info.match_id))
    # the match is still running: it has an event log, and the call has not answered
    while (await live.info(info.match_id)).last_sequence == 0:
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.2)
    assert not call.done()
    await live.admin.CancelMatch(
        admin_pb2.CancelMatchRequest(match_id=info.match_id, reason="test"), metadata=live.md
    )
    res = await asyncio.wait_for(call, 30)
    assert res.match.state == admin_pb2.MATCH_STATE_CANCELLED
    assert res.events[-1].WhichOneof("kind") == "match_cancelled"
    assert list(res.events) == await asyncio.wait_for(live.watch(info.match_id), 30)
    await bot.stop()


async def test_a_large_match_comes_in_pieces(live: Live, monkeypatch: pytest.MonkeyPatch) -> None:
    info = await live.create([HEUR, RAND, HEUR, RAND], seed=3)
    whole, events, calls = await _collect(live, info.match_id)
    monkeypatch.setattr(admin_mod, "AWAIT_EVENT_BYTES", 2000)
    final, pieces, calls = await _collect(live, info.match_id)
    assert calls > 3 and pieces == events and final == whole
    monkeypatch.setattr(admin_mod, "AWAIT_EVENT_BYTES", 1)  # still one event per answer
    res = await _await(live, info.match_id)
    assert res.truncated and len(res.events) == 1
    last = events[-1].sequence  # type: ignore[attr-defined]
    res = await _await(live, info.match_id, last)
    assert not res.truncated and not res.events  # nothing after the last event


@pytest.mark.parametrize(
    ("req", "code", "reason"),
    [
        (admin_pb2.AwaitMatchRequest(match_id="m-none"), "NOT_FOUND", "MATCH_NOT_FOUND"),
        (admin_pb2.AwaitMatchRequest(), "INVALID_ARGUMENT", "MALFORMED_MESSAGE"),
        (admin_pb2.AwaitMatchRequest(match_id="x" * 65), "INVALID_ARGUMENT", "LIMIT_EXCEEDED"),
        (
            admin_pb2.AwaitMatchRequest(match_id="m", after_sequence=-1),
            "INVALID_ARGUMENT",
            "LIMIT_EXCEEDED",
        ),
    ],
)
async def test_bad_requests_get_a_reason(
    live: Live, req: admin_pb2.AwaitMatchRequest, code: str, reason: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await live.admin.AwaitMatch(req, metadata=live.md)
    assert exc.value.code().name == code
    assert reason_of(exc.value) == reason
    with pytest.raises(grpc.aio.AioRpcError) as exc:  # the admin token is needed
        await live.admin.AwaitMatch(req)
    assert exc.value.code() == grpc.StatusCode.UNAUTHENTICATED
