"""RegisterBot and RetireBot (issue 26): a running server learns a league's new version's token
and forgets a retired one's, with serve's token rules, each refusal a gRPC status and reason."""

from __future__ import annotations

import asyncio

import grpc
import pytest

from tests.service.conftest import ADMIN, BOTS, serving
from tests.service.rawbot import RawBot
from tests.service.test_hardening import error_info
from uno_server.gen.uno.v1 import admin_pb2, game_pb2

pytestmark = pytest.mark.asyncio


async def _refused(call: object) -> tuple[grpc.StatusCode, str, str, str]:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await call  # type: ignore[misc]
    info = error_info(exc.value)
    return exc.value.code(), info.reason, info.metadata.get("field", ""), exc.value.details() or ""


async def test_a_registered_bot_connects_plays_and_is_retired() -> None:
    async with serving() as live:
        reg = admin_pb2.RegisterBotRequest(bot_name="newbie.7", token="newbie-token-1234")
        res = await live.admin.RegisterBot(reg, metadata=live.md)
        assert res.created
        again = await live.admin.RegisterBot(reg, metadata=live.md)  # a retry changes nothing
        assert not again.created
        bot = RawBot(live.port, "newbie.7", "newbie-token-1234").start()
        await asyncio.wait_for(bot.welcomed.wait(), 10)
        info = await live.create(
            ["newbie.7", *[game_pb2.BUILTIN_BOT_RANDOM] * 3],
            rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
        )
        assert info.seats[0].player.bot_name == "newbie.7"
        await bot.wait_ended(1, 60)
        gone = await live.admin.RetireBot(
            admin_pb2.RetireBotRequest(bot_name="newbie.7"), metadata=live.md
        )
        assert gone.connected  # its stream still open; it plays what it has to its end
        code, reason, field, _ = await _refused(
            live.admin.CreateMatch(
                admin_pb2.CreateMatchRequest(
                    seats=[game_pb2.Player(bot_name="newbie.7")]
                    + [game_pb2.Player(builtin=game_pb2.BUILTIN_BOT_RANDOM)] * 3,
                    seed=1,
                ),
                metadata=live.md,
            )
        )
        assert (code, reason) == (grpc.StatusCode.INVALID_ARGUMENT, "INVALID_SEATS")
        await bot.stop()
        late = RawBot(live.port, "newbie.7", "newbie-token-1234").start()  # token forgotten
        assert late.task is not None
        await asyncio.wait_for(late.task, 10)
        assert late.error is not None and error_info(late.error).reason == "INVALID_TOKEN"
        code, reason, field, _ = await _refused(
            live.admin.RetireBot(admin_pb2.RetireBotRequest(bot_name="newbie.7"), metadata=live.md)
        )
        assert (code, reason, field) == (grpc.StatusCode.NOT_FOUND, "BOT_NOT_FOUND", "bot_name")


@pytest.mark.parametrize(
    ("name", "token", "want"),
    [
        ("x1", ADMIN, (grpc.StatusCode.ALREADY_EXISTS, "TOKEN_IN_USE", "token")),
        ("x1", BOTS["b0"], (grpc.StatusCode.ALREADY_EXISTS, "TOKEN_IN_USE", "token")),
        (
            "b1",
            "a-fresh-token-999",
            (grpc.StatusCode.ALREADY_EXISTS, "BOT_ALREADY_REGISTERED", "bot_name"),
        ),
        ("x1", "short", (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE", "token")),
        ("x1", "t" * 129, (grpc.StatusCode.INVALID_ARGUMENT, "LIMIT_EXCEEDED", "token")),
        ("x1", "has space in it", (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE", "token")),
        (
            "",
            "a-fresh-token-999",
            (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE", "bot_name"),
        ),
        (
            "x@1",
            "a-fresh-token-999",
            (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE", "bot_name"),
        ),
        (
            "x" * 65,
            "a-fresh-token-999",
            (grpc.StatusCode.INVALID_ARGUMENT, "LIMIT_EXCEEDED", "bot_name"),
        ),
    ],
)
async def test_register_bot_refuses_what_serve_refuses(
    name: str, token: str, want: tuple[grpc.StatusCode, str, str]
) -> None:
    async with serving() as live:
        got = await _refused(
            live.admin.RegisterBot(
                admin_pb2.RegisterBotRequest(bot_name=name, token=token), metadata=live.md
            )
        )
        assert got[:3] == want, got
        assert token not in got[3]  # a token is a secret: never echoed
        listed = await live.admin.ListBots(admin_pb2.ListBotsRequest(), metadata=live.md)
        assert {b.bot_name for b in listed.bots} <= set(BOTS)


async def test_register_bot_needs_the_admin_token() -> None:
    async with serving() as live:
        code, reason, _, _ = await _refused(
            live.admin.RegisterBot(
                admin_pb2.RegisterBotRequest(bot_name="x1", token="a-fresh-token-999"),
                metadata=(("authorization", f"Bearer {BOTS['b0']}"),),
            )
        )
        assert (code, reason) == (grpc.StatusCode.PERMISSION_DENIED, "ADMIN_REQUIRED")
