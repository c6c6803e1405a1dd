"""A bare test client of BotService: records every message it receives and answers through a
policy function. Deliberately not the SDK, so the service is tested against the wire alone."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import grpc

from uno_server.gen.uno.v1 import bot_pb2, bot_pb2_grpc

Policy = Callable[[bot_pb2.DecisionRequest], int | None]


def first_legal(dr: bot_pb2.DecisionRequest) -> int | None:
    """Answer required requests with the last legal id (a play when there is one)."""
    if not dr.required:
        return None
    return dr.legal_actions[-1].id


@dataclass
class RawBot:
    port: int
    name: str
    token: str
    policy: Policy | None = first_legal
    received: list[bot_pb2.PlayResponse] = field(default_factory=list)
    results: list[bot_pb2.ActionResult] = field(default_factory=list)
    ended: list[bot_pb2.MatchEnded] = field(default_factory=list)
    send_hello: bool = True
    hello_name: str | None = None

    def __post_init__(self) -> None:
        self.outbox: asyncio.Queue[bot_pb2.PlayRequest | None] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self.error: grpc.aio.AioRpcError | None = None
        self.requests: asyncio.Queue[bot_pb2.DecisionRequest] = asyncio.Queue()
        self.welcomed = asyncio.Event()

    async def _gen(self) -> AsyncIterator[bot_pb2.PlayRequest]:
        if self.send_hello:
            yield bot_pb2.PlayRequest(
                hello=bot_pb2.Hello(
                    bot_name=self.hello_name if self.hello_name is not None else self.name,
                    bot_version="test",
                    protocol_version=1,
                )
            )
        while True:
            msg = await self.outbox.get()
            if msg is None:
                return
            yield msg

    def answer(self, request_id: str, action_id: int | None) -> None:
        act = bot_pb2.Action(request_id=request_id)
        if action_id is not None:
            act.action_id = action_id
        self.outbox.put_nowait(bot_pb2.PlayRequest(action=act))

    async def run(self) -> None:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{self.port}") as ch:
            stub = bot_pb2_grpc.BotServiceStub(ch)
            md = [("authorization", f"Bearer {self.token}")] if self.token else []
            call = stub.Play(self._gen(), metadata=md)
            try:
                async for msg in call:
                    self.received.append(msg)
                    kind = msg.WhichOneof("kind")
                    if kind == "welcome":
                        self.welcomed.set()
                    elif kind == "decision_request":
                        dr = msg.decision_request
                        self.requests.put_nowait(dr)
                        if self.policy is not None:
                            a = self.policy(dr)
                            if a is not None:
                                self.answer(dr.request_id, a)
                    elif kind == "action_result":
                        self.results.append(msg.action_result)
                    elif kind == "match_ended":
                        self.ended.append(msg.match_ended)
            except grpc.aio.AioRpcError as exc:
                self.error = exc

    def start(self) -> RawBot:
        self.task = asyncio.get_running_loop().create_task(self.run())
        return self

    async def stop(self) -> None:
        self.outbox.put_nowait(None)
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task

    async def wait_ended(self, n: int = 1, timeout: float = 60) -> None:
        async def _w() -> None:
            while len(self.ended) < n:
                await asyncio.sleep(0.01)

        await asyncio.wait_for(_w(), timeout)
