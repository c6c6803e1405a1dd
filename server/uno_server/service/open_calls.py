"""The calls anyone may make without a token, bounded: gRPC health (``Check``, ``Watch``) and
server reflection.

The server closes a connection with no call for 30 s (:data:`.server.IDLE_CONNECTION_MS`), so
a client that opens connections and makes no call cannot hold them. A ``Health.Watch`` or a
reflection stream is a call that never ends, needs no token, and kept its connection open: an
examination opened 200 connections with one ``Health.Watch`` each and held every connection the
server takes, so no bot, runner or admin could connect. At most :data:`MAX_OPEN_STREAMS` of each
stream run at once; past that one is refused with RESOURCE_EXHAUSTED (its connection then has
no call, and is closed when idle). ``Health.Check`` is a unary call and unbounded.
"""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterable, AsyncIterator
from typing import Any, Final

import grpc
from grpc_health.v1 import health
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha._async import ReflectionServicer

MAX_OPEN_STREAMS: Final = 64
"""``Health.Watch`` streams at once, and as many reflection streams (each)."""


def _refusal(what: str) -> str:
    return (
        f"at most {MAX_OPEN_STREAMS} {what} streams at once, and that many are open; "
        "use Health.Check (a single call), or try again later"
    )


class BoundedHealth(health.aio.HealthServicer):  # type: ignore[misc]
    """gRPC's health service with at most :data:`MAX_OPEN_STREAMS` ``Watch`` streams."""

    def __init__(self) -> None:
        super().__init__()
        self.watching = 0

    async def Watch(self, request: Any, context: grpc.aio.ServicerContext[Any, Any]) -> None:  # noqa: N802
        if self.watching >= MAX_OPEN_STREAMS:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, _refusal("Health.Watch"))
        self.watching += 1
        try:
            await super().Watch(request, context)
        finally:
            self.watching -= 1


class BoundedReflection(ReflectionServicer):  # type: ignore[misc]
    """Server reflection with at most :data:`MAX_OPEN_STREAMS` streams open."""

    def __init__(self, service_names: tuple[str, ...]) -> None:
        super().__init__(service_names)
        self.open = 0

    async def ServerReflectionInfo(  # noqa: N802
        self,
        request_iterator: AsyncIterable[reflection_pb2.ServerReflectionRequest],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[reflection_pb2.ServerReflectionResponse]:
        if self.open >= MAX_OPEN_STREAMS:
            await context.abort(grpc.StatusCode.RESOURCE_EXHAUSTED, _refusal("reflection"))
        self.open += 1
        try:
            async for answer in super().ServerReflectionInfo(request_iterator, context):
                yield answer
        finally:
            self.open -= 1


ACCEPT_FAILURE = "socket.accept() out of system resource"
"""asyncio's log message for each connection it could not accept (no file descriptor left)."""
ACCEPT_LOG_EVERY_S: Final = 10.0


class AcceptFlood(logging.Filter):
    """Lets through one of asyncio's "socket.accept() out of system resource" errors every
    :data:`ACCEPT_LOG_EVERY_S` seconds, saying how many it left out. A client that held every
    descriptor through the web view's port made asyncio log one, with its traceback, per
    connection it retried: 20,434 in 25 s, 11 MB of log (an examination)."""

    def __init__(self) -> None:
        super().__init__()
        self.last = -ACCEPT_LOG_EVERY_S
        self.left_out = 0

    def filter(self, record: logging.LogRecord) -> bool:
        if not str(record.msg).startswith(ACCEPT_FAILURE):
            return True
        now = time.monotonic()
        if now - self.last < ACCEPT_LOG_EVERY_S:
            self.left_out += 1
            return False
        self.last = now
        if self.left_out:
            record.msg = f"{record.msg} ({self.left_out} more like it left out)"
            self.left_out = 0
        return True


def bound_accept_errors() -> None:
    """Install :class:`AcceptFlood` on asyncio's logger (once)."""
    logger = logging.getLogger("asyncio")
    if not any(isinstance(f, AcceptFlood) for f in logger.filters):
        logger.addFilter(AcceptFlood())
