"""RegisterBot by the token's SHA-256 (issue 26, remote bots): a league keeps only the hash of a
remote bot's token; the server registers the bot by that hash and admits the bot that presents
the token, compares in constant time, and refuses bad input with a status and a reason."""

from __future__ import annotations

import asyncio
import hashlib

import grpc
import pytest

from tests.service.conftest import ADMIN, BOTS, serving
from tests.service.rawbot import RawBot
from tests.service.test_hardening import error_info
from uno_server.gen.uno.v1 import admin_pb2, game_pb2
from uno_server.service.auth import SHA256_PREFIX, TokenRegistry

TOKEN = "remote-token-0123456789"
DIGEST = hashlib.sha256(TOKEN.encode()).hexdigest()


async def _refused(call: object) -> tuple[grpc.StatusCode, str, str, str]:
    with pytest.raises(grpc.aio.AioRpcError) as exc:
        await call  # type: ignore[misc]
    info = error_info(exc.value)
    return exc.value.code(), info.reason, info.metadata.get("field", ""), exc.value.details() or ""


@pytest.mark.asyncio
async def test_a_bot_registered_by_its_hash_plays_with_its_token_then_is_refused_retired() -> None:
    async with serving() as live:
        reg = admin_pb2.RegisterBotRequest(bot_name="remote-1", token_sha256=DIGEST)
        assert (await live.admin.RegisterBot(reg, metadata=live.md)).created
        assert not (await live.admin.RegisterBot(reg, metadata=live.md)).created  # a retry
        # the hash itself is no token: presenting it plays as nobody
        wrong = RawBot(live.port, "remote-1", DIGEST).start()
        assert wrong.task is not None
        await asyncio.wait_for(wrong.task, 10)
        assert wrong.error is not None and error_info(wrong.error).reason == "INVALID_TOKEN"
        bot = RawBot(live.port, "remote-1", TOKEN).start()
        await asyncio.wait_for(bot.welcomed.wait(), 10)
        info = await live.create(
            ["remote-1", *[game_pb2.BUILTIN_BOT_RANDOM] * 3],
            rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
        )
        assert info.seats[0].player.bot_name == "remote-1"
        await bot.wait_ended(1, 60)
        await bot.stop()
        await live.admin.RetireBot(
            admin_pb2.RetireBotRequest(bot_name="remote-1"), metadata=live.md
        )
        late = RawBot(live.port, "remote-1", TOKEN).start()  # a revoked token
        assert late.task is not None
        await asyncio.wait_for(late.task, 10)
        assert late.error is not None
        assert late.error.code() == grpc.StatusCode.UNAUTHENTICATED
        assert error_info(late.error).reason == "INVALID_TOKEN"


def _sha(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


@pytest.mark.parametrize(
    ("name", "token", "digest", "want"),
    [
        ("x1", "", "", (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE", "token")),
        ("x1", TOKEN, DIGEST, (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE", "token")),
        (
            "x1",
            "",
            DIGEST.upper(),
            (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE", "token_sha256"),
        ),
        (
            "x1",
            "",
            DIGEST[:63],
            (grpc.StatusCode.INVALID_ARGUMENT, "MALFORMED_MESSAGE", "token_sha256"),
        ),
        (
            "x1",
            "",
            DIGEST + "0",
            (grpc.StatusCode.INVALID_ARGUMENT, "LIMIT_EXCEEDED", "token_sha256"),
        ),
        ("x1", "", _sha(ADMIN), (grpc.StatusCode.ALREADY_EXISTS, "TOKEN_IN_USE", "token_sha256")),
        (
            "x1",
            "",
            _sha(BOTS["b0"]),
            (grpc.StatusCode.ALREADY_EXISTS, "TOKEN_IN_USE", "token_sha256"),
        ),
        ("b1", "", DIGEST, (grpc.StatusCode.ALREADY_EXISTS, "BOT_ALREADY_REGISTERED", "bot_name")),
    ],
)
@pytest.mark.asyncio
async def test_register_by_hash_refuses_bad_input_with_a_reason(
    name: str, token: str, digest: str, want: tuple[grpc.StatusCode, str, str]
) -> None:
    async with serving() as live:
        req = admin_pb2.RegisterBotRequest(bot_name=name, token=token, token_sha256=digest)
        got = await _refused(live.admin.RegisterBot(req, metadata=live.md))
        assert got[:3] == want, got
        assert not token or token not in got[3]
        listed = await live.admin.ListBots(admin_pb2.ListBotsRequest(), metadata=live.md)
        assert {b.bot_name for b in listed.bots} <= set(BOTS)


@pytest.mark.asyncio
async def test_a_plain_token_whose_hash_is_registered_is_in_use() -> None:
    async with serving() as live:
        await live.admin.RegisterBot(
            admin_pb2.RegisterBotRequest(bot_name="remote-1", token_sha256=DIGEST),
            metadata=live.md,
        )
        got = await _refused(
            live.admin.RegisterBot(
                admin_pb2.RegisterBotRequest(bot_name="x2", token=TOKEN), metadata=live.md
            )
        )
        assert got[:3] == (grpc.StatusCode.ALREADY_EXISTS, "TOKEN_IN_USE", "token")


def test_the_registry_matches_a_hash_entry_only_with_its_token() -> None:
    reg = TokenRegistry({"plain": "plain-token-123", "hashed": SHA256_PREFIX + DIGEST})
    assert reg.bot_for(TOKEN) == "hashed"
    assert reg.bot_for("plain-token-123") == "plain"
    assert reg.bot_for(DIGEST) is None
    assert reg.bot_for(SHA256_PREFIX + DIGEST) is None
