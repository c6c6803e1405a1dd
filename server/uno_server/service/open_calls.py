"""The calls anyone may make without a token, bounded: gRPC health (``Check``, ``Watch``) and
server reflection.

The server closes a connection with no call for 30 s (:data:`.server.IDLE_CONNECTION_MS`), so
a client that opens connections and makes no call cannot hold them. A ``Health.Watch`` or a
reflection stream is a call that never ends, needs no token, and kept its connection open: an
examination opened 200 connections with one ``Health.Watch`` each and held every connection the
server takes, so no bot, runner or admin could connect. At most :data:`MAX_OPEN_STREAMS` of each
stream run at once; past that one is refused with RESOURCE_EXHAUSTED (its connection then has
no call, and is closed when idle). ``Health.Check`` is a unary call and unbounded.

**Calls that never send their request.** A call that takes one request message (every call but
``Play`` and reflection) is opened by its headers; gRPC held it until the message came, for
ever, with no token asked yet: an examination opened 40,000 such ``Health.Check`` calls on four
connections (they kept the connections from the idle close, and their memory: 86 to 212 MB),
unlogged and uncounted. :class:`RequestFirst` serves every such method as a client stream that
must bring its message within :data:`REQUEST_WAIT_S` (``DEADLINE_EXCEEDED``,
``REQUEST_TIMEOUT``), and lets at most :data:`MAX_WAITING_PER_HOST` calls of one address (an
IPv6 /64) wait at once; the next is refused at once (``RESOURCE_EXHAUSTED``,
``TOO_MANY_CALLS``). Every gRPC library sends a unary call's message with its headers, so no
client that works is slowed or refused.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator, Callable, Sequence
from typing import Any, Final

import grpc
from grpc_health.v1 import health
from grpc_reflection.v1alpha import reflection_pb2
from grpc_reflection.v1alpha._async import ReflectionServicer

from uno_server.gen.uno.v1 import errors_pb2

from .metrics import ServiceMetrics
from .rejections import abort, status_error

MAX_OPEN_STREAMS: Final = 64
"""``Health.Watch`` streams at once, and as many reflection streams (each)."""

REQUEST_WAIT_S: Final = 10.0
"""Seconds a call that takes one request message may wait for it after its headers."""
MAX_WAITING_PER_HOST: Final = 256
"""Calls of one address (an IPv6 /64) waiting for their request message at once."""


def host_of(peer: str) -> str:
    """The address a call comes from (``ipv4:1.2.3.4:5678`` -> ``1.2.3.4``; an IPv6 address
    by its /64, what one machine is commonly given; a Unix socket -> ``unix``)."""
    kind, _, rest = peer.partition(":")
    if kind == "ipv4":
        return rest.rpartition(":")[0] or rest
    if kind == "ipv6":
        addr = rest.rpartition(":")[0].strip("[]") if "]" in rest else rest
        groups = addr.split("::")[0].split(":")
        return ":".join(groups[:4]) + "::/64"
    return kind


class _Collect:
    """Stands in for the server while generated ``add_*_to_server`` functions register."""

    def __init__(self) -> None:
        self.handlers: list[grpc.GenericRpcHandler] = []

    def add_generic_rpc_handlers(self, handlers: Sequence[grpc.GenericRpcHandler]) -> None:
        self.handlers.extend(handlers)

    def add_registered_method_handlers(self, name: str, handlers: Any) -> None:
        """The same methods again (gRPC's faster lookup): the generic handler has them."""


class RequestFirst(grpc.GenericRpcHandler):  # type: ignore[misc]
    """The server's handlers, with each method that takes one request message served as a client
    stream whose first message must come within :data:`REQUEST_WAIT_S` (see the module
    docstring). Streaming requests (``Play``, reflection) are passed on as they are."""

    def __init__(self, metrics: ServiceMetrics) -> None:
        self.metrics = metrics
        self.inner: list[grpc.GenericRpcHandler] = []
        self.waiting: dict[str, int] = {}
        """Calls waiting for their message, by :func:`host_of` their peer."""

    def collect(self, add: Callable[[Any, Any], None], servicer: Any) -> None:
        """Register ``servicer`` with a generated ``add_*_to_server`` function, here."""
        into = _Collect()
        add(servicer, into)
        self.inner.extend(into.handlers)

    def service(self, details: grpc.HandlerCallDetails) -> grpc.RpcMethodHandler | None:
        for h in self.inner:
            found = h.service(details)
            if found is not None:
                return found if found.request_streaming else self._streamed(found)
        return None

    def _streamed(self, h: grpc.RpcMethodHandler) -> grpc.RpcMethodHandler:
        first = self._first
        if h.response_streaming:
            inner_stream = h.unary_stream

            async def stream(requests: Any, context: Any) -> None:
                answer = inner_stream(await first(requests, context), context)
                if inspect.isasyncgen(answer):
                    async for item in answer:
                        await context.write(item)
                else:
                    await answer

            return grpc.stream_stream_rpc_method_handler(
                stream, h.request_deserializer, h.response_serializer
            )
        inner_unary = h.unary_unary

        async def unary(requests: Any, context: Any) -> Any:
            return await inner_unary(await first(requests, context), context)

        return grpc.stream_unary_rpc_method_handler(
            unary, h.request_deserializer, h.response_serializer
        )

    async def _first(self, requests: Any, context: Any) -> Any:
        host = host_of(context.peer())
        waiting = self.waiting.get(host, 0)
        if waiting >= MAX_WAITING_PER_HOST:
            await abort(context, _too_many(), self.metrics)
        self.waiting[host] = waiting + 1
        try:
            return await asyncio.wait_for(anext(requests), REQUEST_WAIT_S)
        except TimeoutError:
            await abort(context, _no_request(), self.metrics)
        except StopAsyncIteration:
            await abort(
                context,
                status_error(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    errors_pb2.ERROR_REASON_MALFORMED_MESSAGE,
                    "the call ended without its request message",
                ),
                self.metrics,
            )
        finally:
            left = self.waiting[host] - 1
            if left:
                self.waiting[host] = left
            else:
                del self.waiting[host]


def _too_many() -> Any:
    return status_error(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        errors_pb2.ERROR_REASON_TOO_MANY_CALLS,
        f"{MAX_WAITING_PER_HOST} calls from this address are already waiting for their request "
        "message; send each call's request with it (every gRPC library does)",
    )


def _no_request() -> Any:
    return status_error(
        grpc.StatusCode.DEADLINE_EXCEEDED,
        errors_pb2.ERROR_REASON_REQUEST_TIMEOUT,
        f"no request message within {REQUEST_WAIT_S:g} s of the call's headers; send the "
        "request with the call",
    )


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
