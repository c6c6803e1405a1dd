"""The Play stream (BotService.Play): where bots' untrusted bytes enter the server.

Everything a bot sends is read here: the token, the Hello (within HELLO_TIMEOUT_S, at most
MAX_WAITING_HELLO waiting per bot, one session start per bot every session_interval_s), then
each PlayRequest, read at most ``stream_messages_per_s`` and STREAM_BYTES_PER_S fast (a flood is
read more slowly), decoded from raw bytes (bytes that do not decode get MALFORMED_MESSAGE, not
gRPC's generic failure) and checked against the one table of input limits (:mod:`.limits`)
before an answer reaches its table. A hostile or broken client can only hurt itself: its faults
are answered on its own stream, and a stream that does not read is cut (SLOW_CONSUMER).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from typing import Any, Final, NoReturn

import grpc
import structlog
from google.protobuf.message import DecodeError
from google.rpc import code_pb2
from grpc_status import rpc_status

from uno_server import __version__
from uno_server.gen.uno.v1 import bot_pb2, errors_pb2

from . import limits, ratelog, rejections, wire
from .arena import WELCOME_SEATS, Arena, Finished
from .auth import bearer
from .rejections import abort, status_error
from .request_desk import ABORTED, NO_SUCH_REQUEST
from .session import PROTOCOL_VERSION, BotSession, write_wait
from .table import Table

log = structlog.get_logger("uno.server")
HELLO_TIMEOUT_S: Final = 10.0
MAX_WAITING_HELLO: Final = 8  # Play streams of one bot that may wait for their Hello at once
# A stream refused its token is ended once its first message is read (see _first_hello_name):
UNAUTHENTICATED_READ_S: Final = 2.0  # the longest it waits for that message
MAX_UNAUTHENTICATED: Final = 64  # refused streams that may wait at once; more are ended at once
STREAM_BYTES_PER_S: Final = 1024 * 1024  # each Play stream is read at most this fast
# said once, plainly (limits' generic wording for a Timestamp said "a valid Timestamp" twice)
BAD_PING_SENT_AT: Final = (
    "ping.sent_at: not a valid Timestamp: seconds must lie in years 1-9999 "
    f"({limits.TIMESTAMP_MIN_S} to {limits.TIMESTAMP_MAX_S}) and nanos in 0-999999999"
)


def _request_number(request_id: str) -> tuple[str, int]:
    """Match id and request number of a request id "<match id>-<n>" (-1 if malformed)."""
    mid, _, num = request_id.rpartition("-")
    # only the form the server writes: digits without a leading zero ("-01" was read as 1 and
    # answered as a closed request, though no such id was ever issued)
    if num.isdigit() and len(num) <= 12 and (num == "0" or num[0] != "0") and num.isascii():
        return mid, int(num)
    return mid, -1


class _CallOverError(Exception):
    """The transport had already ended the call when the handler tried to answer it."""


class BotServicer:
    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    async def _fatal(
        self,
        context: grpc.aio.ServicerContext[Any, Any],
        code: grpc.StatusCode,
        reason: int,
        message: str,
        field: str = "",
        bot: str = "",
        *,
        maybe_transport: bool = False,
    ) -> NoReturn:
        """End a stream that has no session yet: a fatal StreamError, then the status.

        ``maybe_transport``: the fault was inferred from the request stream's end, which gRPC
        also reports when the transport itself ended the call (a message over gRPC's 4 MiB
        limit, a reset): if the error cannot be written either, the call is already over and
        it is counted as ``transport``, not as ``reason``."""
        out = bot_pb2.PlayResponse()
        e = out.error
        e.code = code.value[0]
        e.reason = reason
        e.message = message
        e.field = field
        e.fatal = True
        dead = ""
        try:
            await asyncio.wait_for(context.write(out), 5)
        except TimeoutError:  # the peer does not read: the status is all it gets
            pass
        except Exception as exc:  # the call is over: the peer is gone, or gRPC ended it
            dead = f"the call was already over ({type(exc).__name__})"
        if dead and maybe_transport:
            raise _CallOverError(dead)
        if bot:
            self.arena.metrics.count_stream_error(bot, reason)
        meta = {"field": field} if field else {}
        await abort(
            context, status_error(code, reason, message, **meta), self.arena.metrics, bot=bot
        )

    async def Play(  # noqa: N802 - gRPC method name
        self,
        request_iterator: AsyncIterator[bytes],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
        arena = self.arena
        token = bearer(context.invocation_metadata())
        name = arena.tokens.bot_for(token) if token is not None else None
        if name is None:
            if token is None:
                reason = errors_pb2.ERROR_REASON_MISSING_TOKEN
                hint = "send your bot token as metadata 'authorization: Bearer <token>'"
            elif arena.tokens.is_admin(token):
                reason = errors_pb2.ERROR_REASON_INVALID_TOKEN
                hint = "this is the admin token; a bot needs its own token"
            else:
                reason = errors_pb2.ERROR_REASON_INVALID_TOKEN
                hint = "unknown bot token; ask the operator for yours"
            claimed = await self._first_hello_name(request_iterator)
            if claimed:
                hint += f" (the Hello names bot {claimed!r})"
            await abort(
                context,
                status_error(grpc.StatusCode.UNAUTHENTICATED, reason, hint),
                arena.metrics,
            )
        try:
            await self._play(name, request_iterator, context)
        except asyncio.CancelledError:  # the transport ended the call (peer gone, oversized)
            arena.metrics.count_stream_error(name, "transport")
            raise
        except _CallOverError as over:  # ended before its Hello was read
            arena.metrics.count_stream_error(name, "transport")
            ratelog.CONNECTIONS.log(
                ("stream ended", name),
                log.info,
                "bot stream ended before its Hello",
                bot=name,
                error=str(over),
            )

    async def _first_hello_name(self, request_iterator: AsyncIterator[bytes]) -> str:
        """Read the first message of a stream about to be refused its token, and return the bot
        name its Hello gives ("" if none: no message within UNAUTHENTICATED_READ_S, not a Hello,
        or more than MAX_UNAUTHENTICATED streams waiting).

        Ending the call only after its first message is read is what lets the client see the
        refusal: grpcio's asyncio client reports a write that fails because the call has just
        ended as INTERNAL 'Internal error from Core', overwriting the server's status
        (grpc/grpc#36066), and every SDK writes its Hello as the stream opens. Once the Hello
        has been read its write is complete, and a bot writes nothing more before its Welcome."""
        arena = self.arena
        if arena.waiting_unauthenticated >= MAX_UNAUTHENTICATED:
            return ""
        arena.waiting_unauthenticated += 1
        try:
            raw = await asyncio.wait_for(
                request_iterator.__aiter__().__anext__(), UNAUTHENTICATED_READ_S
            )
        except (StopAsyncIteration, TimeoutError, grpc.RpcError):
            return ""
        finally:
            arena.waiting_unauthenticated -= 1
        if len(raw) > limits.MAX_REQUEST_BYTES:
            return ""
        try:
            first = bot_pb2.PlayRequest.FromString(raw)
        except DecodeError:
            return ""
        if first.WhichOneof("kind") != "hello":
            return ""
        claimed = first.hello.bot_name
        ok = len(claimed) <= (limits.BOT_NAME.max_len or 0) and limits.NAME_RE.fullmatch(claimed)
        return claimed if ok else ""

    async def _play(
        self,
        name: str,
        request_iterator: AsyncIterator[bytes],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
        """Play, once the token names bot ``name``: the Hello, then the session."""
        arena = self.arena
        if arena.waiting_hello[name] >= MAX_WAITING_HELLO:
            await self._fatal(
                context,
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                errors_pb2.ERROR_REASON_TOO_MANY_STREAMS,
                f"{MAX_WAITING_HELLO} streams of bot {name} are already waiting for their Hello",
                bot=name,
            )
        it = request_iterator.__aiter__()
        arena.waiting_hello[name] += 1
        raw: bytes | None = None
        why = f"send Hello within {HELLO_TIMEOUT_S:.0f} s of opening the stream"
        try:
            raw = await asyncio.wait_for(it.__anext__(), HELLO_TIMEOUT_S)
        except StopAsyncIteration:  # closed at once: no time limit was hit
            why = "the stream closed before its Hello: send Hello first"
        except TimeoutError:
            pass
        finally:
            arena.waiting_hello[name] -= 1
            if not arena.waiting_hello[name]:
                del arena.waiting_hello[name]
        if raw is None:
            await self._fatal(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                errors_pb2.ERROR_REASON_HELLO_REQUIRED,
                why,
                bot=name,
                maybe_transport=True,
            )
        if len(raw) > limits.MAX_REQUEST_BYTES:
            await self._fatal(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_MALFORMED_MESSAGE,
                f"a Hello of {len(raw)} bytes; at most {limits.MAX_REQUEST_BYTES} are read",
                bot=name,
            )
        try:
            first = bot_pb2.PlayRequest.FromString(raw)
        except DecodeError as exc:
            await self._fatal(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_MALFORMED_MESSAGE,
                f"the first message does not decode as a PlayRequest: {exc}"[:300],
                bot=name,
            )
        if first.WhichOneof("kind") != "hello":
            await self._fatal(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                errors_pb2.ERROR_REASON_HELLO_REQUIRED,
                "the first message on the stream must be Hello",
                bot=name,
            )
        bad = limits.check(first)
        if bad is not None:
            await self._fatal(
                context,
                grpc.StatusCode.INVALID_ARGUMENT,
                bad.reason,
                bad.message,
                bad.field,
                bot=name,
            )
        hello = first.hello
        if hello.protocol_version not in (0, PROTOCOL_VERSION):
            await self._fatal(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                errors_pb2.ERROR_REASON_UNSUPPORTED_PROTOCOL_VERSION,
                f"protocol_version {hello.protocol_version} is not supported; "
                f"this server speaks {PROTOCOL_VERSION}",
                field="hello.protocol_version",
                bot=name,
            )
        if hello.bot_name and hello.bot_name != name:
            await self._fatal(
                context,
                grpc.StatusCode.PERMISSION_DENIED,
                errors_pb2.ERROR_REASON_BOT_NAME_MISMATCH,
                f"this token belongs to bot {name!r}, not to the hello.bot_name sent; "
                "send that name or leave bot_name empty",
                field="hello.bot_name",
                bot=name,
            )
        if arena.draining:
            await self._fatal(
                context,
                grpc.StatusCode.UNAVAILABLE,
                errors_pb2.ERROR_REASON_SHUTTING_DOWN,
                "the server is shutting down",
                bot=name,
            )
        # a reconnect storm costs the server a MatchStarted and a request per seat each time:
        # one bot's sessions start at most every session_interval_s, the others wait their turn
        lock = arena.session_locks.setdefault(name, asyncio.Lock())
        async with lock:
            loop = asyncio.get_running_loop()
            wait = (
                arena.last_session.get(name, -1e9) + arena.config.session_interval_s - loop.time()
            )
            if wait > 0:
                await asyncio.sleep(wait)
            arena.last_session[name] = loop.time()
        session = BotSession(
            name, hello, context.peer(), arena.config.send_queue, arena.metrics, arena.unregister
        )
        slog = log.bind(bot=name, session=session.session_id[:8])
        welcome = bot_pb2.PlayResponse()
        w = welcome.welcome
        w.session_id = session.session_id
        w.server_version = __version__
        w.protocol_version = PROTOCOL_VERSION
        w.supported_protocol_versions.append(PROTOCOL_VERSION)
        w.bot_name = name
        prev = arena.last_seen.get(name)
        # resumed only if this server knows the session (a restarted server does not)
        w.resumed = (
            bool(hello.resume.session_id)
            and prev is not None
            and (prev.session_id == hello.resume.session_id)
        )
        w.server_time.FromNanoseconds(time.time_ns())
        for mid in list(arena.bot_tables.get(name, ()))[:WELCOME_SEATS]:
            for st in arena.running[mid].seats:
                if st.bot_name == name and len(w.seats) < WELCOME_SEATS:
                    w.seats.add(match_id=mid, seat=st.seat)
        cursors = {(c.match_id, c.seat): c.last_sequence for c in hello.resume.cursors}
        session.send(welcome)
        arena.register(session, cursors)
        ratelog.CONNECTIONS.log(
            ("bot connected", name),
            slog.info,
            "bot connected",
            peer=session.peer,
            version=hello.bot_version,
        )
        reader = asyncio.create_task(self._read(it, session))
        writer = asyncio.create_task(self._write(context, session))
        session.writer = writer
        arena.live.add(session)
        try:
            await writer  # cancelled (counted by Play) if the transport ends the call
        finally:
            reader.cancel()
            writer.cancel()
            arena.live.discard(session)
            arena.unregister(session)
            ratelog.CONNECTIONS.log(("bot disconnected", name), slog.info, "bot disconnected")
        if session.end_status is not None:
            # (logged by BotSession.kill already; counted here as the call's status)
            arena.metrics.errors.labels(code_pb2.Code.Name(session.end_status.code)).inc()
            await context.abort_with_status(rpc_status.to_status(session.end_status))

    async def _write(self, context: grpc.aio.ServicerContext[Any, Any], s: BotSession) -> None:
        """Send the session's queue. With Hello.max_batch >= 2, every message waiting when the
        writer wakes, or queued during one more turn of the loop (or the linger, see below),
        goes out in one PlayResponse.batch (at most max_batch of them); the first
        message, the Welcome, always goes alone, and so does a fatal StreamError (kill() empties
        the queue before queueing it)."""
        loop = asyncio.get_running_loop()
        queue = s.queue
        limit = s.max_batch
        tables = self.arena.bot_tables  # bot -> the matches it plays now
        first = True
        try:
            while True:
                msg: Any = await queue.get()
                if msg is None:
                    return
                last = False
                if limit > 1 and not first and queue.empty():
                    # wait a little first, so that the other tables' messages for this bot that
                    # are on their way join this write. A write costs far more than a message
                    # (sendmsg on the socket, wake-ups of gRPC's poller threads on both sides),
                    # so fewer, larger writes save CPU. A bot at two tables or more whose
                    # messages come less than WRITE_LINGER_S apart waits about one gap between
                    # them (the next message is then as likely as not to join); any other
                    # waits one turn of the loop. bench-tournament (16 tables, 8 Python bots):
                    # 0.63 -> 0.46 writes and 0.56 -> 0.43 reads per move against a fixed
                    # 0.4 ms wait, which these bots' 2 ms gaps never met.
                    await asyncio.sleep(write_wait(s.gap, len(tables.get(s.bot_name, ()))))
                if limit > 1 and not first and not queue.empty():
                    items = [msg]
                    while len(items) < limit and not queue.empty():
                        nxt = queue.get_nowait()
                        if nxt is None:
                            last = True
                            break
                        items.append(nxt)
                    if len(items) > 1:
                        msg = wire.batch(items)
                first = False
                s.writing_since = loop.time()
                await context.write(msg)
                s.writing_since = None
                if last:
                    return
        except asyncio.CancelledError:
            if s.end_status is not None:
                return  # cut by the janitor: the stream stalled; Play sends the status
            raise  # the call itself was cancelled (it reaches us through Play's await)
        except Exception as exc:  # the call is over (the peer went away)
            s.metrics.count_stream_error(s.bot_name, "transport")
            ratelog.CONNECTIONS.log(
                ("stream ended", s.bot_name),
                log.info,
                "bot stream write ended",
                bot=s.bot_name,
                error=repr(exc)[:200],
            )

    async def _read(self, it: AsyncIterator[bytes], session: BotSession) -> None:
        arena = self.arena
        loop = asyncio.get_running_loop()
        rate = arena.config.stream_messages_per_s
        tokens = rate  # token buckets: messages, and bytes (STREAM_BYTES_PER_S)
        byte_tokens = float(STREAM_BYTES_PER_S)
        last = loop.time()
        try:
            async for raw in it:
                now = loop.time()
                tokens = min(rate, tokens + (now - last) * rate)
                byte_tokens = min(
                    STREAM_BYTES_PER_S, byte_tokens + (now - last) * STREAM_BYTES_PER_S
                )
                last = now
                size = len(raw)
                if tokens < 1 or byte_tokens < size:  # a flood: read this stream more slowly
                    await asyncio.sleep(
                        max((1 - tokens) / rate, (size - byte_tokens) / STREAM_BYTES_PER_S)
                    )
                    tokens = max(tokens, 1.0)
                    byte_tokens = max(byte_tokens, float(size))
                    last = loop.time()
                tokens -= 1
                byte_tokens -= size
                if len(raw) > limits.MAX_REQUEST_BYTES:
                    session.stream_error(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        errors_pb2.ERROR_REASON_MALFORMED_MESSAGE,
                        f"a PlayRequest of {len(raw)} bytes; at most {limits.MAX_REQUEST_BYTES}",
                    )
                    continue
                try:
                    req = bot_pb2.PlayRequest.FromString(raw)
                except DecodeError as exc:
                    session.kill(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        errors_pb2.ERROR_REASON_MALFORMED_MESSAGE,
                        f"a message that does not decode as a PlayRequest: {exc}"[:300],
                    )
                    return
                kind = req.WhichOneof("kind")
                if kind == "action":
                    act = req.action
                    self._action(session, act, limits.check_action(act))
                    continue
                if kind == "actions":
                    acts = req.actions.actions
                    if not 1 <= len(acts) <= limits.MAX_ACTION_BATCH:
                        session.stream_error(
                            grpc.StatusCode.INVALID_ARGUMENT,
                            errors_pb2.ERROR_REASON_MALFORMED_MESSAGE
                            if not acts
                            else errors_pb2.ERROR_REASON_LIMIT_EXCEEDED,
                            f"actions.actions: {len(acts)} entries; 1-"
                            f"{limits.MAX_ACTION_BATCH} allowed (none was applied)",
                            "actions.actions",
                        )
                        continue
                    for i, act in enumerate(acts):  # each exactly as if it had come alone
                        self._action(session, act, limits.check_action(act), i)
                    continue
                # a second Hello is a duplicate whatever it holds (errors.proto), so it is
                # named as one before its fields are checked against their limits
                bad = limits.check(req) if kind != "hello" else None
                if bad is not None:
                    session.stream_error(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        bad.reason,
                        BAD_PING_SENT_AT if bad.field == "ping.sent_at" else bad.message,
                        bad.field,
                    )
                elif kind == "ping":
                    out = bot_pb2.PlayResponse()
                    out.pong.nonce = req.ping.nonce
                    if req.ping.HasField("sent_at"):
                        out.pong.client_sent_at.seconds = req.ping.sent_at.seconds
                        out.pong.client_sent_at.nanos = req.ping.sent_at.nanos
                    out.pong.server_time.FromNanoseconds(time.time_ns())
                    session.send(out)
                elif kind == "hello":
                    session.stream_error(
                        grpc.StatusCode.FAILED_PRECONDITION,
                        errors_pb2.ERROR_REASON_DUPLICATE_HELLO,
                        "Hello was already received on this stream",
                        "hello",
                    )
                else:
                    session.stream_error(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        errors_pb2.ERROR_REASON_MALFORMED_MESSAGE,
                        "empty PlayRequest: set one of hello, action, actions or ping",
                    )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the stream broke (the peer went away); the writer ends it
            ratelog.CONNECTIONS.log(
                ("stream ended", session.bot_name),
                log.info,
                "bot stream read ended",
                bot=session.bot_name,
                error=repr(exc)[:200],
            )
        finally:
            if session.end_status is None:
                try:
                    session.queue.put_nowait(None)
                except asyncio.QueueFull:
                    session.kill(
                        grpc.StatusCode.RESOURCE_EXHAUSTED,
                        errors_pb2.ERROR_REASON_SLOW_CONSUMER,
                        "stream closed",
                    )

    def _action(
        self,
        session: BotSession,
        act: bot_pb2.Action,
        bad: limits.Violation | None,
        entry: int | None = None,
    ) -> None:
        """Apply one Action (``entry``: its place in an ActionBatch, which a rejection for a
        field of its own names, ``actions.actions[2].request_id``; None for ``action``)."""
        arena = self.arena
        res: bot_pb2.ActionResult | None
        table: Table | None = None
        f: Finished | None = None
        number = -1
        mid = ""
        if bad is None or bad.field == "action.action_id":
            # a missing action_id alone: the request's table, if there is one, reports the
            # missing field first, naming the request's seat
            mid, number = _request_number(act.request_id)
            table, f = arena.lookup(mid)
        # a match that ended is answered from its summary alone, never from its event log
        # (f.table), which is kept only for a while (--log-linger-*): an answer must get the
        # same result before and after the log is let go
        ended = f is not None and session.bot_name in f.bots
        if table is not None:
            res = table.submit(
                session,
                act.request_id,
                number,
                act.action_id if act.HasField("action_id") else None,
            )
            if res is not None and entry is not None and res.field.startswith("action."):
                # an entry of a batch is named by its place, as the rejections below name it
                old = res.field
                res.field = f"actions.actions[{entry}]{old.removeprefix('action')}"
                if res.message.startswith(old):
                    res.message = res.field + res.message.removeprefix(old)
        elif bad is not None:  # a field over its limit or missing: before NOT_FOUND
            # an entry of a batch is named by its place (its request id may be what is bad)
            path = bad.field
            if entry is not None:  # built only for a rejection: batches are the busy path
                path = f"actions.actions[{entry}]{bad.field.removeprefix('action')}"
            res = bot_pb2.ActionResult(
                request_id=act.request_id if bad.field != "action.request_id" else "",
                match_id=mid if ended else "",
                code=3,
                reason=bad.reason,
                message=path + bad.message.removeprefix(bad.field),
                field=path,
            )
            res.received_at.FromNanoseconds(time.time_ns())
            if act.HasField("action_id"):
                res.action_id = act.action_id
            arena.metrics.illegal.labels(
                session.bot_name, errors_pb2.ErrorReason.Name(bad.reason)[13:].lower()
            ).inc()
        elif ended:
            # its match ended: every request of it is closed, whichever the id names (this
            # bot's, another seat's, one never issued: none is secret or open any more), so
            # this is a late answer (a second answer, or one that crossed MatchEnded), not a
            # fault, for as long as the summary is kept (errors.proto, STALE_REQUEST). No seat
            # and no response_ms: the summary does not know the match's requests.
            res = bot_pb2.ActionResult(
                request_id=act.request_id,
                match_id=mid,
                code=ABORTED,
                reason=errors_pb2.ERROR_REASON_STALE_REQUEST,
                message=f"match {mid} has ended: its requests are closed (a late answer)",
            )
            res.received_at.FromNanoseconds(time.time_ns())
            if act.HasField("action_id"):
                res.action_id = act.action_id
            arena.metrics.late.labels(session.bot_name, "stale_request").inc()
        else:
            res = bot_pb2.ActionResult(
                request_id=act.request_id,
                code=5,
                reason=errors_pb2.ERROR_REASON_REQUEST_NOT_FOUND,
                message=NO_SUCH_REQUEST,  # the same as for a known match's id
            )
            # stamped as a known match's answer is: without it, an id naming a running match
            # was told apart from one naming no match (an examination)
            res.received_at.FromNanoseconds(time.time_ns())
            if act.HasField("action_id"):
                res.action_id = act.action_id
            arena.metrics.illegal.labels(session.bot_name, "request_not_found").inc()
            rejections.REJECTIONS.log(
                ("action", "REQUEST_NOT_FOUND"),
                log.info,
                "action rejected",
                bot=session.bot_name,
                reason="REQUEST_NOT_FOUND",
                request_id=act.request_id[:100],
            )
        if res is None:
            return  # accepted: no reply, its effects arrive as events
        if res.code == ABORTED:  # a late answer (see MatchSeat.stale_actions), not a fault
            arena.late[session.bot_name] += 1
        else:
            arena.rejected[session.bot_name] += 1
        out = bot_pb2.PlayResponse()
        out.action_result.CopyFrom(res)
        session.send(out)
