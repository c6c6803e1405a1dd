"""An examination of operating the service (session 52).

1. Calls that never send their request: a client sent the headers of ``Health.Check`` calls and
   never their message, 40,000 on four connections; gRPC held each for ever (no token asked yet,
   nothing logged or counted), and they kept their connections from the idle close. Now such a
   call ends after ``REQUEST_WAIT_S`` and at most ``MAX_WAITING_PER_HOST`` of one address wait
   at once.
2. The first dealer's draw came with ``hand_number`` 1, and game.proto says 0.

The test's steps are ordered by the server's own counts, never by sleeping."""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Callable

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc, errors_pb2, game_pb2
from uno_server.service import open_calls
from uno_server.service.server import ArenaServer, ServerConfig

ADMIN = "admin-token-s52-half-calls"
pytestmark = pytest.mark.asyncio


def _frame(kind: int, flags: int, stream: int, payload: bytes) -> bytes:
    return (
        struct.pack(">I", len(payload))[1:]
        + bytes([kind, flags])
        + struct.pack(">I", stream)
        + payload
    )


def _literal(name: str, value: str) -> bytes:
    """An HPACK header field without indexing, plain (no Huffman) strings under 127 bytes."""
    k, v = name.encode(), value.encode()
    return b"\x00" + bytes([len(k)]) + k + bytes([len(v)]) + v


def _headers(path: str) -> bytes:
    fields = (
        (":method", "POST"),
        (":scheme", "http"),
        (":path", path),
        (":authority", "127.0.0.1"),
        ("content-type", "application/grpc"),
        ("te", "trailers"),
    )
    return b"".join(_literal(k, v) for k, v in fields)


async def _until(what: str, ok: Callable[[], bool], seconds: float = 120.0) -> None:
    for _ in range(int(seconds / 0.02)):
        if ok():
            return
        await asyncio.sleep(0.02)
    raise AssertionError(f"never: {what}")


async def test_calls_that_never_send_their_request_are_bounded_and_ended(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # long enough that every call is seen waiting before the first wait ends, on a busy machine
    monkeypatch.setattr(open_calls, "REQUEST_WAIT_S", 20.0)
    cap = open_calls.MAX_WAITING_PER_HOST
    server = ArenaServer(ServerConfig(port=0, admin_token=ADMIN))
    port = await server.start()
    errors = server.arena.metrics.errors

    def count(code: str) -> float:
        return float(errors.labels(code)._value.get())

    reader, writer = await asyncio.open_connection("127.0.0.1", port)

    async def answer() -> None:  # the client's part of HTTP/2: acknowledge settings and pings
        while True:
            head = await reader.readexactly(9)
            size, kind, flags = int.from_bytes(head[:3], "big"), head[3], head[4]
            body = await reader.readexactly(size)
            if kind == 4 and not flags & 1:
                writer.write(_frame(4, 1, 0, b""))
            elif kind == 6 and not flags & 1:
                writer.write(_frame(6, 1, 0, body))

    answering = asyncio.create_task(answer())
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        writer.write(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + _frame(4, 0, 0, b""))
        half = _headers("/grpc.health.v1.Health/Check")
        for k in range(cap + 5):  # headers, END_HEADERS, and never a message
            writer.write(_frame(1, 0x4, 1 + 2 * k, half))
        await writer.drain()
        # the cap waits; the five over it are refused at once
        await _until("cap calls waiting", lambda: server.methods.waiting == {"127.0.0.1": cap})
        await _until("five refused", lambda: count("RESOURCE_EXHAUSTED") == 5)
        health = health_pb2_grpc.HealthStub(channel)
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            await health.Check(health_pb2.HealthCheckRequest(), timeout=60)
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert f"{cap} calls from this address are already waiting" in str(refused.value.details())
        # each waiting call is ended after REQUEST_WAIT_S, counted, and the address may call again
        await _until("the waiting calls ended", lambda: not server.methods.waiting)
        assert count("DEADLINE_EXCEEDED") == cap
        reply = await health.Check(health_pb2.HealthCheckRequest(), timeout=60)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING
        admin = admin_pb2_grpc.AdminServiceStub(channel)
        listed = await admin.ListMatches(
            admin_pb2.ListMatchesRequest(), metadata=(("authorization", f"Bearer {ADMIN}"),)
        )
        assert list(listed.matches) == []
        with pytest.raises(grpc.aio.AioRpcError) as no_token:  # the token is still asked
            await admin.ListMatches(admin_pb2.ListMatchesRequest())
        assert no_token.value.code() == grpc.StatusCode.UNAUTHENTICATED
    finally:
        answering.cancel()
        writer.close()
        await channel.close()
        await server.stop()


async def test_the_first_dealers_draw_is_hand_0() -> None:
    server = ArenaServer(ServerConfig(port=0, admin_token=ADMIN))
    port = await server.start()
    md = (("authorization", f"Bearer {ADMIN}"),)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            admin = admin_pb2_grpc.AdminServiceStub(channel)
            h = game_pb2.BUILTIN_BOT_HEURISTIC
            created = await admin.CreateMatch(
                admin_pb2.CreateMatchRequest(
                    seats=[game_pb2.Player(builtin=h) for _ in range(4)],
                    seed=5,
                    rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
                ),
                metadata=md,
            )
            seen = []
            async for item in admin.WatchMatch(
                admin_pb2.WatchMatchRequest(match_id=created.match.match_id), metadata=md
            ):
                if item.WhichOneof("kind") != "event":
                    continue
                kind = item.event.WhichOneof("kind")
                seen.append((kind, item.event.hand_number))
                if kind == "hand_started":
                    break
    finally:
        await server.stop()
    before = [hand for kind, hand in seen if kind in ("dealer_draw", "dealer_chosen")]
    assert len(before) >= 5 and set(before) == {0}, seen  # a card each, then the dealer
    assert seen[-1] == ("hand_started", 1), seen


# ---- 3. a shutdown's MatchEnded reaches the bot; replaced streams and shutdowns are no faults


def _sample(server: ArenaServer, name: str, **labels: str) -> float:
    value = server.arena.metrics.registry.get_sample_value(name, labels)
    return 0.0 if value is None else value


async def test_a_shutdown_sends_the_matchended_of_the_match_it_cancels() -> None:
    from tests.service.conftest import BOTS, serving
    from tests.service.rawbot import RawBot

    bot_name = "b0"
    async with serving() as live:
        bot = RawBot(live.port, bot_name, BOTS[bot_name], policy=None).start()
        await asyncio.wait_for(bot.welcomed.wait(), 60)
        info = await live.create(
            [bot_name, game_pb2.BUILTIN_BOT_HEURISTIC],
            tc=game_pb2.TimeControl(decision_ms=600_000),
        )
        await asyncio.wait_for(bot.requests.get(), 60)  # the bot holds a required decision
        await live.server.stop(drain_timeout_s=0)  # the drain ends the match at once
        await asyncio.wait_for(bot.task, 60)  # type: ignore[arg-type]
        assert [(e.match_id, e.cause) for e in bot.ended] == [
            (info.match_id, game_pb2.END_CAUSE_SHUTDOWN)
        ], bot.ended
        kinds = [m.WhichOneof("kind") for m in bot.received]
        assert kinds.index("match_ended") < len(kinds) - 1  # then the stream's end ...
        assert bot.received[-1].error.reason == errors_pb2.ERROR_REASON_SHUTTING_DOWN
        assert bot.error is not None and bot.error.code() == grpc.StatusCode.UNAVAILABLE
        # ... which is no fault of the bot's: a disconnect, not a stream error
        metric = "uno_stream_errors_total"
        assert _sample(live.server, metric, bot=bot_name, reason="shutting_down") == 0
        assert _sample(live.server, "uno_disconnects_total", bot=bot_name) == 1


async def test_a_replaced_stream_is_a_disconnect_not_a_fault() -> None:
    from tests.service.conftest import BOTS, serving
    from tests.service.rawbot import RawBot

    async with serving() as live:
        first = RawBot(live.port, "b1", BOTS["b1"]).start()
        await asyncio.wait_for(first.welcomed.wait(), 60)
        second = RawBot(live.port, "b1", BOTS["b1"]).start()
        await asyncio.wait_for(second.welcomed.wait(), 60)
        await asyncio.wait_for(first.task, 60)  # type: ignore[arg-type]
        assert first.error is not None and first.error.code() == grpc.StatusCode.ABORTED
        server = live.server
        metric = "uno_stream_errors_total"
        assert _sample(server, metric, bot="b1", reason="session_replaced") == 0
        assert _sample(server, "uno_disconnects_total", bot="b1") == 1
        assert server.arena.stream_errors["b1"] == 0
        await second.stop()
