from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest_asyncio

from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc, game_pb2
from uno_server.service.server import ArenaServer, ServerConfig

ADMIN = "admin-token-1234"
BOTS = {f"b{i}": f"token-of-b{i}-secret" for i in range(4)}


@dataclass
class Live:
    server: ArenaServer
    port: int
    channel: grpc.aio.Channel
    admin: admin_pb2_grpc.AdminServiceStub

    md = (("authorization", f"Bearer {ADMIN}"),)

    async def create(
        self,
        seats: list[str | int],
        *,
        seed: int = 1,
        rules: game_pb2.RuleSet | None = None,
        tc: game_pb2.TimeControl | None = None,
        dealer: int | None = None,
    ) -> admin_pb2.MatchInfo:
        players = [
            game_pb2.Player(bot_name=s) if isinstance(s, str) else game_pb2.Player(builtin=s)  # type: ignore[arg-type]
            for s in seats
        ]
        req = admin_pb2.CreateMatchRequest(seats=players, seed=seed, dealer=dealer)
        if rules is not None:
            req.rules.CopyFrom(rules)
        if tc is not None:
            req.time_control.CopyFrom(tc)
        res = await self.admin.CreateMatch(req, metadata=self.md)
        return res.match

    async def info(self, match_id: str) -> admin_pb2.MatchInfo:
        res = await self.admin.GetMatch(
            admin_pb2.GetMatchRequest(match_id=match_id), metadata=self.md
        )
        return res.match

    async def watch(self, match_id: str) -> list[game_pb2.Event]:
        out: list[game_pb2.Event] = []
        call = self.admin.WatchMatch(
            admin_pb2.WatchMatchRequest(match_id=match_id), metadata=self.md
        )
        async for msg in call:
            if msg.WhichOneof("kind") == "event":
                out.append(msg.event)
        return out


@contextlib.asynccontextmanager
async def serving(**config: Any) -> AsyncIterator[Live]:
    """A server on port 0 with ServerConfig overrides, and an admin stub on it."""
    server = ArenaServer(ServerConfig(port=0, admin_token=ADMIN, bots=dict(BOTS), **config))
    port = await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    try:
        yield Live(server, port, channel, admin_pb2_grpc.AdminServiceStub(channel))
    finally:
        await channel.close()
        await server.stop(drain_timeout_s=0.5)


@pytest_asyncio.fixture
async def live() -> AsyncIterator[Live]:
    async with serving() as lv:
        yield lv
