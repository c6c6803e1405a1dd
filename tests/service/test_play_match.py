"""AdminService.PlayMatch: CreateMatch and AwaitMatch in one call (the runner's one call per
hand). It must create exactly what CreateMatch creates, refuse exactly what CreateMatch refuses
(naming the field by its path in this request), and answer exactly what AwaitMatch answers."""

from __future__ import annotations

import asyncio

import grpc
import pytest
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from uno_server.gen.uno.v1 import admin_pb2, game_pb2
from uno_server.service import admin as admin_mod

from .conftest import Live
from .test_service import HEUR, RAND, connected, reason_of

pytestmark = pytest.mark.asyncio

BUILTIN = [game_pb2.Player(builtin=b) for b in (HEUR, RAND, HEUR, RAND)]


def _request(seats: list[game_pb2.Player], **kw: object) -> admin_pb2.PlayMatchRequest:
    return admin_pb2.PlayMatchRequest(
        create=admin_pb2.CreateMatchRequest(seats=seats, **kw)  # type: ignore[arg-type]
    )


async def _play(live: Live, req: admin_pb2.PlayMatchRequest) -> admin_pb2.PlayMatchResponse:
    return await asyncio.wait_for(live.admin.PlayMatch(req, metadata=live.md), 60)


def _field_of(err: grpc.aio.AioRpcError) -> str:
    status = rpc_status.from_call(err)
    assert status is not None
    info = error_details_pb2.ErrorInfo()
    assert status.details[0].Unpack(info)
    return str(info.metadata.get("field", ""))


async def test_one_call_creates_the_match_and_answers_as_await_match(live: Live) -> None:
    bot = await connected(live, "b0")
    req = _request(
        [game_pb2.Player(bot_name="b0"), *BUILTIN[1:]],
        seed=11,
        dealer=0,
        idempotency_key="hand-1",
        labels={"table": "3"},
    )
    res = await _play(live, req)
    assert res.match.state == admin_pb2.MATCH_STATE_FINISHED and not res.truncated
    assert res.match.labels["table"] == "3" and res.match.seed == 11
    # the same answer AwaitMatch gives for the match, and what a spectator sees
    awaited = await live.admin.AwaitMatch(
        admin_pb2.AwaitMatchRequest(match_id=res.match.match_id), metadata=live.md
    )
    assert list(res.events) == list(awaited.events) and res.match == awaited.match
    assert list(res.events) == await asyncio.wait_for(live.watch(res.match.match_id), 60)
    kinds = [e.WhichOneof("kind") for e in res.events]
    assert kinds[-1] == "match_ended" and "hand_ended" in kinds
    # the same idempotency key: the same match again, not a second one
    again = await _play(live, req)
    assert again.match.match_id == res.match.match_id and list(again.events) == list(res.events)
    listed = await live.admin.ListMatches(admin_pb2.ListMatchesRequest(), metadata=live.md)
    assert [m.match_id for m in listed.matches] == [res.match.match_id]
    await bot.stop()


async def test_the_call_waits_for_the_end_and_leaves_the_match_to_cancel_match(
    live: Live,
) -> None:
    bot = await connected(live, "b0", policy=None)  # never answers: the match waits for it
    req = _request(
        [game_pb2.Player(bot_name="b0"), *BUILTIN[1:]],
        rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
        time_control=game_pb2.TimeControl(decision_ms=60_000),
        idempotency_key="waits",
    )
    first = asyncio.ensure_future(live.admin.PlayMatch(req, metadata=live.md))
    while not (
        await live.admin.ListMatches(admin_pb2.ListMatchesRequest(), metadata=live.md)
    ).matches:
        await asyncio.sleep(0.01)
    first.cancel()  # the caller gives up: the match plays on
    with pytest.raises(asyncio.CancelledError):
        await first
    listed = await live.admin.ListMatches(admin_pb2.ListMatchesRequest(), metadata=live.md)
    (info,) = listed.matches
    assert info.state == admin_pb2.MATCH_STATE_RUNNING
    second = asyncio.ensure_future(live.admin.PlayMatch(req, metadata=live.md))
    await asyncio.sleep(0.2)
    assert not second.done()  # the same key waits for the same, still running match
    await live.admin.CancelMatch(
        admin_pb2.CancelMatchRequest(match_id=info.match_id, reason="test"), metadata=live.md
    )
    res = await asyncio.wait_for(second, 30)
    assert res.match.match_id == info.match_id
    assert res.match.state == admin_pb2.MATCH_STATE_CANCELLED
    assert res.events[-1].WhichOneof("kind") == "match_cancelled"
    await bot.stop()


async def test_a_large_match_is_finished_with_await_match(
    live: Live, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = await _play(live, _request(BUILTIN, seed=3, idempotency_key="big"))
    monkeypatch.setattr(admin_mod, "AWAIT_EVENT_BYTES", 2000)
    first = await _play(live, _request(BUILTIN, seed=3, idempotency_key="big"))
    assert first.truncated and 0 < len(first.events) < len(whole.events)
    events = list(first.events)
    while True:
        res = await live.admin.AwaitMatch(
            admin_pb2.AwaitMatchRequest(
                match_id=first.match.match_id, after_sequence=events[-1].sequence
            ),
            metadata=live.md,
        )
        events += list(res.events)
        if not res.truncated:
            break
    assert events == list(whole.events)


@pytest.mark.parametrize(
    ("req", "code", "reason", "field"),
    [
        (admin_pb2.PlayMatchRequest(), "INVALID_ARGUMENT", "MALFORMED_MESSAGE", "create"),
        (_request([]), "INVALID_ARGUMENT", "INVALID_SEATS", "create.seats"),
        (
            _request([*BUILTIN[:3], game_pb2.Player(bot_name="no-such-bot")]),
            "INVALID_ARGUMENT",
            "INVALID_SEATS",
            "create.seats[3]",
        ),
        (
            _request([*BUILTIN[:3], game_pb2.Player(bot_name="bad name!")]),
            "INVALID_ARGUMENT",
            "INVALID_SEATS",
            "create.seats[3].bot_name",
        ),
        (
            _request(BUILTIN, rules=game_pb2.RuleSet(hand_size=99)),
            "INVALID_ARGUMENT",
            "INVALID_RULES",
            "create.rules.hand_size",
        ),
        (
            _request(BUILTIN, idempotency_key="k" * 129),
            "INVALID_ARGUMENT",
            "LIMIT_EXCEEDED",
            "create.idempotency_key",
        ),
        (
            _request([game_pb2.Player(bot_name="b1"), *BUILTIN[1:]]),
            "FAILED_PRECONDITION",
            "BOT_NOT_CONNECTED",
            "create.seats[0]",
        ),
    ],
)
async def test_refusals_are_create_match_s_with_the_field_s_path(
    live: Live, req: admin_pb2.PlayMatchRequest, code: str, reason: str, field: str
) -> None:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await live.admin.PlayMatch(req, metadata=live.md)
    assert (exc.value.code().name, reason_of(exc.value)) == (code, reason), exc.value.details()
    assert _field_of(exc.value) == field
    assert (exc.value.details() or "").startswith(field), exc.value.details()
    # CreateMatch refuses the same match for the same reason, naming the field without create.
    if req.HasField("create"):
        with pytest.raises(grpc.aio.AioRpcError) as plain:
            await live.admin.CreateMatch(req.create, metadata=live.md)
        assert (plain.value.code().name, reason_of(plain.value)) == (code, reason)
        assert _field_of(plain.value) == field.removeprefix("create.")
    with pytest.raises(grpc.aio.AioRpcError) as exc:  # the admin token is needed
        await live.admin.PlayMatch(req)
    assert exc.value.code() == grpc.StatusCode.UNAUTHENTICATED
    listed = await live.admin.ListMatches(admin_pb2.ListMatchesRequest(), metadata=live.md)
    assert not listed.matches  # nothing was created
