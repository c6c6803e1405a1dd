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


@dataclass
class Outcome:
    """What became of one Action the bot sent. The server replies only to a rejected action, so
    every Action is followed by a Ping: the stream is read in order, so a rejection arrives
    before the Pong that follows it, and a Pong with no ActionResult before it means the action
    was accepted. Reads like an ActionResult (``code``, ``reason``, ``request_open``...), plus
    ``accepted``."""

    request_id: str
    result: bot_pb2.ActionResult | None  # the rejection; None: accepted

    @property
    def accepted(self) -> bool:
        return self.result is None

    def __getattr__(self, name: str) -> object:
        res = self.result
        if res is None:
            res = bot_pb2.ActionResult(request_id=self.request_id)
        return getattr(res, name)


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
    received: list[bot_pb2.PlayResponse] = field(default_factory=list)  # batches unpacked
    frames: list[bot_pb2.PlayResponse] = field(default_factory=list)  # as they came
    results: list[Outcome] = field(default_factory=list)  # one per Action sent, in order
    ended: list[bot_pb2.MatchEnded] = field(default_factory=list)
    send_hello: bool = True
    hello_name: str | None = None
    hello: bot_pb2.Hello | None = None  # sent as is instead of the default Hello

    def __post_init__(self) -> None:
        self.outbox: asyncio.Queue[bot_pb2.PlayRequest | None] = asyncio.Queue()
        self.task: asyncio.Task[None] | None = None
        self.error: grpc.aio.AioRpcError | None = None
        self.requests: asyncio.Queue[bot_pb2.DecisionRequest] = asyncio.Queue()
        self.welcomed = asyncio.Event()
        self._fences: dict[int, str] = {}  # Ping nonce -> the request id the Action answered
        self._rejection: bot_pb2.ActionResult | None = None
        self._nonce = 0

    async def _gen(self) -> AsyncIterator[bot_pb2.PlayRequest]:
        if self.hello is not None:
            yield bot_pb2.PlayRequest(hello=self.hello)
        elif self.send_hello:
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
        self._nonce += 1
        self._fences[self._nonce] = request_id
        self.outbox.put_nowait(bot_pb2.PlayRequest(ping=bot_pb2.Ping(nonce=self._nonce)))

    async def run(self) -> None:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{self.port}") as ch:
            stub = bot_pb2_grpc.BotServiceStub(ch)
            md = [("authorization", f"Bearer {self.token}")] if self.token else []
            call = stub.Play(self._gen(), metadata=md)
            try:
                async for frame in call:
                    self.frames.append(frame)
                    if frame.WhichOneof("kind") == "batch":  # only if Hello.max_batch asked
                        msgs = list(frame.batch.messages)
                    else:
                        msgs = [frame]
                    for msg in msgs:
                        self._take(msg)
            except grpc.aio.AioRpcError as exc:
                self.error = exc

    def _take(self, msg: bot_pb2.PlayResponse) -> None:
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
            self._rejection = msg.action_result
        elif kind == "pong" and msg.pong.nonce in self._fences:
            rid = self._fences.pop(msg.pong.nonce)
            self.results.append(Outcome(rid, self._rejection))
            self._rejection = None
        elif kind == "match_ended":
            self.ended.append(msg.match_ended)

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


def _identity(raw: bytes) -> bytes:
    return raw


@dataclass
class RawOutcome:
    """What a stream of raw frames got back: every response, then the final status."""

    responses: list[bot_pb2.PlayResponse]
    code: grpc.StatusCode
    details: str
    reason: str  # ErrorInfo.reason of the final status, "" if none

    def errors(self) -> list[bot_pb2.StreamError]:
        return [r.error for r in self.responses if r.WhichOneof("kind") == "error"]

    def kinds(self) -> list[str]:
        return [str(r.WhichOneof("kind")) for r in self.responses]


def status_reason(trailing: object) -> str:
    """ErrorInfo.reason of the status in a call's trailing metadata, "" if none."""
    from google.rpc import error_details_pb2, status_pb2

    for key, value in trailing or ():  # type: ignore[attr-defined]
        if key == "grpc-status-details-bin":
            st = status_pb2.Status.FromString(value)
            for d in st.details:
                info = error_details_pb2.ErrorInfo()
                if d.Unpack(info):
                    return str(info.reason)
    return ""


async def raw_play(
    port: int,
    token: str,
    frames: list[bytes],
    *,
    half_close: bool = True,
    timeout: float = 10.0,
    until: Callable[[list[bot_pb2.PlayResponse]], bool] | None = None,
) -> RawOutcome:
    """Open BotService.Play, send ``frames`` as raw serialised messages (they need not decode),
    and read until the server ends the stream (or ``until`` says enough: the client then
    cancels)."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        method = ch.stream_stream(
            "/uno.v1.BotService/Play",
            request_serializer=_identity,
            response_deserializer=bot_pb2.PlayResponse.FromString,
        )
        md = [("authorization", f"Bearer {token}")] if token else []
        call = method(metadata=md)
        got: list[bot_pb2.PlayResponse] = []

        async def run() -> None:
            for f in frames:
                await call.write(f)
            if half_close:
                await call.done_writing()
            async for msg in call:
                got.append(msg)
                if until is not None and until(got):
                    call.cancel()
                    return

        with contextlib.suppress(grpc.aio.AioRpcError, asyncio.CancelledError):
            await asyncio.wait_for(run(), timeout)
        code = await call.code()
        details = await call.details()
        reason = status_reason(await call.trailing_metadata())
        return RawOutcome(got, code, details or "", reason)
