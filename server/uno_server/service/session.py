"""One connected bot stream's session: the bounded queue of messages to the bot.

The arena keeps sessions by bot, tables send through them (they are the tables' ``Outbox``), and
the bot stream (:mod:`.bot_stream`) creates them and writes their queue to the wire. A bot that
does not read is cut off (RESOURCE_EXHAUSTED), never allowed to stall a table.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable
from typing import Final

import grpc
from google.rpc import status_pb2

from uno_server.gen.uno.v1 import bot_pb2, errors_pb2

from .metrics import ServiceMetrics
from .rejections import log_rejection, status_error

PROTOCOL_VERSION: Final = 1

WRITE_LINGER_S = 0.002
"""The longest a bot stream's writer waits for more messages before a write (see
bot_stream.BotServicer._write). It waits about the time between the bot's messages (their
moving average, ``BotSession.gap``), and only while the bot plays two tables or more and its
messages come less than this far apart: at most 2 ms added to a request's delivery, counted in
the bot's decision time (``decision_ms`` is at least 50 ms). A bot at one table never waits:
its next message there needs its own answer first."""


def write_wait(gap: float, tables: int) -> float:
    """Seconds a bot stream's writer waits for more messages before a write that would carry
    one (WRITE_LINGER_S): about ``gap``, the moving average of seconds between the bot's
    messages, when that is under WRITE_LINGER_S and the bot plays ``tables`` >= 2 matches;
    else 0 (one turn of the loop)."""
    if tables < 2 or not 0 <= gap < WRITE_LINGER_S:
        return 0.0
    return gap


_NOT_FAULTS: Final = frozenset(
    {errors_pb2.ERROR_REASON_SESSION_REPLACED, errors_pb2.ERROR_REASON_SHUTTING_DOWN}
)
"""Ends of a stream that are no fault of the bot's: not counted in ``uno_stream_errors_total``
(an examination read a replaced stream there, which docs/service.md says costs nothing)."""


class BotSession:
    """One connected bot stream. Messages to the bot go through a bounded queue: a bot that does
    not read is cut off (RESOURCE_EXHAUSTED), never allowed to stall a table."""

    def __init__(
        self,
        bot_name: str,
        hello: bot_pb2.Hello,
        peer: str,
        queue_size: int,
        metrics: ServiceMetrics,
        on_end: Callable[[BotSession], None],
    ) -> None:
        self.bot_name = bot_name
        self.bot_version = hello.bot_version
        self.protocol_version = hello.protocol_version or PROTOCOL_VERSION
        self.max_concurrent = hello.max_concurrent_matches
        self.push_events = hello.push_events
        self.max_batch = hello.max_batch  # 0 or 1: never batch (limits.py bounds it)
        self.peer = peer[:200]
        self.session_id = uuid.uuid4().hex
        self.connected_at = time.time()
        self.disconnected_at = 0.0
        self.queue: asyncio.Queue[bot_pb2.PlayResponse | None] = asyncio.Queue(queue_size)
        self.end_status: status_pb2.Status | None = None
        self.metrics = metrics
        self.on_end = on_end
        self.writing_since: float | None = None  # loop time a write started, while it waits
        self.writer: asyncio.Task[None] | None = None
        # seconds between messages queued for this bot, a moving average: the writer lingers
        # about this long for more messages, when it is under WRITE_LINGER_S
        self.gap = 1.0
        self._last_send = 0.0

    def send(self, msg: bot_pb2.PlayResponse) -> None:
        if self.end_status is not None:
            return
        now = time.monotonic()
        self.gap += (now - self._last_send - self.gap) * 0.25
        self._last_send = now
        try:
            self.queue.put_nowait(msg)
        except asyncio.QueueFull:
            self.kill(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                errors_pb2.ERROR_REASON_SLOW_CONSUMER,
                f"bot {self.bot_name} did not read its stream; {self.queue.maxsize} "
                "messages were waiting",
            )

    def stream_error(
        self, code: grpc.StatusCode, reason: int, message: str, field: str = ""
    ) -> None:
        """A StreamError that leaves the stream open."""
        self.metrics.count_stream_error(self.bot_name, reason)
        out = bot_pb2.PlayResponse()
        e = out.error
        e.code = code.value[0]
        e.reason = reason
        e.message = message
        e.field = field
        self.send(out)

    def kill(
        self,
        code: grpc.StatusCode,
        reason: int,
        message: str,
        field: str = "",
        keep_pending: bool = False,
    ) -> None:
        """End the stream with a fatal StreamError and the given status. The session leaves the
        arena at once: its seats enter the reconnect grace period. ``keep_pending``: the
        messages already queued go first (a shutdown's MatchEnded of the matches it cancelled;
        an examination found them thrown away), where the queue has room for the end."""
        if self.end_status is not None:
            return
        meta = {"field": field} if field else {}
        self.end_status = status_error(code, reason, message, **meta)
        if reason not in _NOT_FAULTS:
            self.metrics.count_stream_error(self.bot_name, reason)
        log_rejection(self.end_status, peer=self.peer, bot=self.bot_name)
        if not keep_pending or self.queue.maxsize - self.queue.qsize() < 2:
            while not self.queue.empty():
                self.queue.get_nowait()
        err = bot_pb2.PlayResponse()
        err.error.code = code.value[0]
        err.error.reason = reason
        err.error.message = message
        err.error.field = field
        err.error.fatal = True
        self.queue.put_nowait(err)
        self.queue.put_nowait(None)
        self.on_end(self)
