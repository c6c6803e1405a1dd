"""The grpc.aio server: bot streams, the admin service, health, reflection and metrics."""

from __future__ import annotations

import asyncio
import secrets
import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any, Final, NoReturn

import grpc
import structlog
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from grpc_status import rpc_status

from uno_server import __version__
from uno_server.engine.errors import InvalidRulesError
from uno_server.engine.match import Match
from uno_server.gen.uno.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    bot_pb2,
    bot_pb2_grpc,
    errors_pb2,
    game_pb2,
)

from . import convert
from .auth import TokenRegistry, bearer
from .metrics import ServiceMetrics
from .table import Seat, Table, TimeControl, make_builtin

log = structlog.get_logger("uno.server")
PROTOCOL_VERSION: Final = 1
HELLO_TIMEOUT_S: Final = 10.0


def status_error(
    code: grpc.StatusCode, reason: int, message: str, **meta: str
) -> status_pb2.Status:
    """A google.rpc.Status with an ErrorInfo detail (domain ``uno-arena``)."""
    info = error_details_pb2.ErrorInfo(
        reason=errors_pb2.ErrorReason.Name(reason).removeprefix("ERROR_REASON_"),
        domain="uno-arena",
        metadata=meta,
    )
    detail = any_pb2.Any()
    detail.Pack(info)
    return status_pb2.Status(code=getattr(code_pb2, code.name), message=message, details=[detail])


class BotSession:
    """One connected bot stream. Messages to the bot go through a bounded queue: a bot that does
    not read is cut off (RESOURCE_EXHAUSTED), never allowed to stall a table."""

    def __init__(self, bot_name: str, hello: bot_pb2.Hello, peer: str, queue_size: int) -> None:
        self.bot_name = bot_name
        self.bot_version = hello.bot_version
        self.protocol_version = hello.protocol_version or PROTOCOL_VERSION
        self.max_concurrent = hello.max_concurrent_matches
        self.peer = peer
        self.session_id = uuid.uuid4().hex
        self.connected_at = time.time()
        self.queue: asyncio.Queue[bot_pb2.PlayResponse | None] = asyncio.Queue(queue_size)
        self.end_status: status_pb2.Status | None = None

    def send(self, msg: bot_pb2.PlayResponse) -> None:
        if self.end_status is not None:
            return
        try:
            self.queue.put_nowait(msg)
        except asyncio.QueueFull:
            self.kill(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                errors_pb2.ERROR_REASON_SLOW_CONSUMER,
                f"bot {self.bot_name} did not read its stream; {self.queue.maxsize} "
                "messages were waiting",
            )

    def kill(self, code: grpc.StatusCode, reason: int, message: str) -> None:
        """End the stream with a fatal StreamError and the given status."""
        if self.end_status is not None:
            return
        self.end_status = status_error(code, reason, message)
        while not self.queue.empty():
            self.queue.get_nowait()
        err = bot_pb2.PlayResponse()
        err.error.code = code.value[0]
        err.error.reason = reason
        err.error.message = message
        err.error.fatal = True
        self.queue.put_nowait(err)
        self.queue.put_nowait(None)


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 50051
    metrics_port: int | None = None
    admin_token: str = ""
    bots: dict[str, str] = field(default_factory=dict)
    tls_cert: str = ""
    tls_key: str = ""
    max_message_bytes: int = 4 * 1024 * 1024
    send_queue: int = 4096
    drain_timeout_s: float = 10.0
    max_matches: int = 10_000


class Arena:
    """The state of one server: connected bots and matches."""

    def __init__(self, config: ServerConfig, metrics: ServiceMetrics | None = None) -> None:
        self.config = config
        self.metrics = metrics or ServiceMetrics()
        self.tokens = TokenRegistry(admin_token=config.admin_token)
        for name, token in config.bots.items():
            self.tokens.add_bot(name, token)
        self.sessions: dict[str, BotSession] = {}
        self.last_seen: dict[str, BotSession] = {}
        self.tables: dict[str, Table] = {}
        self.by_key: dict[str, str] = {}
        self.draining = False
        self._counter = 0

    def session(self, bot_name: str) -> BotSession | None:
        return self.sessions.get(bot_name)

    def register(self, s: BotSession) -> None:
        old = self.sessions.get(s.bot_name)
        if old is not None:
            old.kill(
                grpc.StatusCode.ABORTED,
                errors_pb2.ERROR_REASON_SESSION_REPLACED,
                "a newer stream of the same bot replaced this one",
            )
        self.sessions[s.bot_name] = s
        self.last_seen[s.bot_name] = s
        self.metrics.connected_bots.set(len(self.sessions))
        for t in self.tables.values():
            if t.state == 1 and t.uses_bot(s.bot_name):
                t.bot_connected(s.bot_name)

    def unregister(self, s: BotSession) -> None:
        if self.sessions.get(s.bot_name) is not s:
            return
        del self.sessions[s.bot_name]
        self.metrics.connected_bots.set(len(self.sessions))
        self.metrics.disconnects.labels(s.bot_name).inc()
        for t in self.tables.values():
            if t.state == 1 and t.uses_bot(s.bot_name):
                t.bot_disconnected(s.bot_name)

    def new_match_id(self) -> str:
        self._counter += 1
        return f"m{self._counter:06d}-{secrets.token_hex(3)}"

    def create(self, req: admin_pb2.CreateMatchRequest) -> tuple[Table, bool]:
        """Validate and start a match. Raises _RejectError with a status on bad input."""
        if self.draining:
            raise _RejectError(
                grpc.StatusCode.UNAVAILABLE,
                errors_pb2.ERROR_REASON_SHUTTING_DOWN,
                "the server is shutting down and takes no new matches",
            )
        if req.idempotency_key and req.idempotency_key in self.by_key:
            return self.tables[self.by_key[req.idempotency_key]], False
        if len(self.tables) >= self.config.max_matches:
            self._evict()
        seats_given = len(req.seats)
        default_seats = seats_given or 4
        try:
            rules = convert.rules_from_proto(req.rules, default_seats=default_seats)
        except InvalidRulesError as exc:
            raise _RejectError(
                grpc.StatusCode.INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_INVALID_RULES,
                str(exc),
                field=str(exc).split(":")[0],
            ) from exc
        if rules.challenge_uno:
            raise _RejectError(
                grpc.StatusCode.INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_INVALID_RULES,
                "rules.challenge_uno: the service does not run elimination matches yet; "
                "the engine does (uno_server.engine.Match)",
                field="rules.challenge_uno",
            )
        if seats_given and seats_given != rules.seats:
            raise _RejectError(
                grpc.StatusCode.INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_INVALID_SEATS,
                f"seats: {seats_given} players given for rules.seats = {rules.seats}",
                field="seats",
            )
        tc = _time_control(req.time_control)
        seed = req.seed if req.HasField("seed") else secrets.randbits(63)
        dealer = None
        if req.HasField("dealer"):
            if not 0 <= req.dealer < rules.seats:
                raise _RejectError(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    errors_pb2.ERROR_REASON_INVALID_SEATS,
                    f"dealer: {req.dealer} is not a seat of a {rules.seats}-seat table",
                    field="dealer",
                )
            dealer = req.dealer
        seats: list[Seat] = []
        for i in range(rules.seats):
            player = req.seats[i] if i < seats_given else game_pb2.Player()
            kind = player.WhichOneof("kind")
            if kind == "bot_name":
                name = player.bot_name
                if name not in self.tokens.bots:
                    raise _RejectError(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        errors_pb2.ERROR_REASON_INVALID_SEATS,
                        f"seats[{i}]: no bot named {name!r} is registered with this "
                        f"server (known: {', '.join(sorted(self.tokens.bots)) or 'none'})",
                        field=f"seats[{i}]",
                    )
                if name not in self.sessions:
                    raise _RejectError(
                        grpc.StatusCode.FAILED_PRECONDITION,
                        errors_pb2.ERROR_REASON_BOT_NOT_CONNECTED,
                        f"seats[{i}]: bot {name!r} is not connected; start it first",
                        field=f"seats[{i}]",
                    )
                seats.append(
                    Seat(
                        i,
                        name,
                        0,
                        None,
                        tc.time_bank_ms,
                        bot_version=self.sessions[name].bot_version,
                    )
                )
            else:
                builtin = player.builtin if kind == "builtin" else game_pb2.BUILTIN_BOT_HEURISTIC
                if builtin not in (game_pb2.BUILTIN_BOT_RANDOM, game_pb2.BUILTIN_BOT_HEURISTIC):
                    raise _RejectError(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        errors_pb2.ERROR_REASON_INVALID_SEATS,
                        f"seats[{i}]: unknown built-in bot {builtin}",
                        field=f"seats[{i}]",
                    )
                seats.append(
                    Seat(i, "", builtin, make_builtin(builtin, seed * 16 + i), tc.time_bank_ms)
                )
        match = Match(rules, seed, dealer=dealer)
        mid = self.new_match_id()
        table = Table(
            mid,
            match,
            seats,
            tc,
            self.metrics,
            self.session,
            labels=dict(req.labels),
            idempotency_key=req.idempotency_key,
        )
        self.tables[mid] = table
        if req.idempotency_key:
            self.by_key[req.idempotency_key] = mid
        table.task = asyncio.get_running_loop().create_task(table.run(), name=f"table-{mid}")
        table.task.add_done_callback(_log_task_failure)
        return table, True

    def _evict(self) -> None:
        for mid, t in list(self.tables.items()):
            if t.state != 1:
                del self.tables[mid]
                if t.idempotency_key:
                    self.by_key.pop(t.idempotency_key, None)
                if len(self.tables) < self.config.max_matches:
                    return
        raise _RejectError(
            grpc.StatusCode.RESOURCE_EXHAUSTED,
            errors_pb2.ERROR_REASON_INTERNAL,
            f"{self.config.max_matches} matches are running; wait for some to end",
        )


def _log_task_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("table task failed", task=task.get_name(), error=repr(task.exception()))


def _time_control(tc: game_pb2.TimeControl) -> TimeControl:
    d = TimeControl()

    def get(name: str, default: int, lo: int, hi: int) -> int:
        if not tc.HasField(name):
            return default
        v = int(getattr(tc, name))
        if not lo <= v <= hi:
            raise _RejectError(
                grpc.StatusCode.INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_INVALID_TIME_CONTROL,
                f"time_control.{name}: must be {lo}-{hi}, got {v}",
                field=f"time_control.{name}",
            )
        return v

    bot = tc.takeover_bot or d.takeover_bot
    if bot not in (game_pb2.BUILTIN_BOT_RANDOM, game_pb2.BUILTIN_BOT_HEURISTIC):
        raise _RejectError(
            grpc.StatusCode.INVALID_ARGUMENT,
            errors_pb2.ERROR_REASON_INVALID_TIME_CONTROL,
            f"time_control.takeover_bot: unknown built-in bot {bot}",
            field="time_control.takeover_bot",
        )
    return TimeControl(
        decision_ms=get("decision_ms", d.decision_ms, 1, 600_000),
        time_bank_ms=get("time_bank_ms", d.time_bank_ms, 0, 3_600_000),
        strikes_before_takeover=get("strikes_before_takeover", d.strikes_before_takeover, 1, 1000),
        reconnect_grace_ms=get("reconnect_grace_ms", d.reconnect_grace_ms, 0, 600_000),
        takeover_bot=bot,
    )


class _RejectError(Exception):
    def __init__(self, code: grpc.StatusCode, reason: int, message: str, **meta: str) -> None:
        super().__init__(message)
        self.status = status_error(code, reason, message, **meta)


async def _abort(
    context: grpc.aio.ServicerContext[Any, Any], status: status_pb2.Status, metrics: ServiceMetrics
) -> NoReturn:
    metrics.errors.labels(code_pb2.Code.Name(status.code)).inc()
    await context.abort_with_status(rpc_status.to_status(status))
    raise AssertionError("unreachable")  # pragma: no cover


class BotServicer(bot_pb2_grpc.BotServiceServicer):
    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    async def Play(  # noqa: N802 - gRPC method name
        self,
        request_iterator: AsyncIterator[bot_pb2.PlayRequest],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> AsyncIterator[bot_pb2.PlayResponse]:
        arena = self.arena
        token = bearer(context.invocation_metadata())
        if token is None:
            await _abort(
                context,
                status_error(
                    grpc.StatusCode.UNAUTHENTICATED,
                    errors_pb2.ERROR_REASON_MISSING_TOKEN,
                    "send your bot token as metadata 'authorization: Bearer <token>'",
                ),
                arena.metrics,
            )
        name = arena.tokens.bot_for(token)
        if name is None:
            await _abort(
                context,
                status_error(
                    grpc.StatusCode.UNAUTHENTICATED,
                    errors_pb2.ERROR_REASON_INVALID_TOKEN,
                    "unknown bot token; ask the operator for yours",
                ),
                arena.metrics,
            )
        it = request_iterator.__aiter__()
        try:
            first = await asyncio.wait_for(it.__anext__(), HELLO_TIMEOUT_S)
        except (StopAsyncIteration, TimeoutError):
            await _abort(
                context,
                status_error(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    errors_pb2.ERROR_REASON_HELLO_REQUIRED,
                    f"send Hello within {HELLO_TIMEOUT_S:.0f} s of opening the stream",
                ),
                arena.metrics,
            )
        if first.WhichOneof("kind") != "hello":
            await _abort(
                context,
                status_error(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    errors_pb2.ERROR_REASON_HELLO_REQUIRED,
                    "the first message on the stream must be Hello",
                ),
                arena.metrics,
            )
        hello = first.hello
        if hello.protocol_version not in (0, PROTOCOL_VERSION):
            await _abort(
                context,
                status_error(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    errors_pb2.ERROR_REASON_UNSUPPORTED_PROTOCOL_VERSION,
                    f"protocol_version {hello.protocol_version} is not supported; "
                    f"this server speaks {PROTOCOL_VERSION}",
                ),
                arena.metrics,
            )
        if hello.bot_name and hello.bot_name != name:
            await _abort(
                context,
                status_error(
                    grpc.StatusCode.PERMISSION_DENIED,
                    errors_pb2.ERROR_REASON_BOT_NAME_MISMATCH,
                    f"this token belongs to bot {name!r}, not {hello.bot_name!r}",
                ),
                arena.metrics,
            )
        if arena.draining:
            await _abort(
                context,
                status_error(
                    grpc.StatusCode.UNAVAILABLE,
                    errors_pb2.ERROR_REASON_SHUTTING_DOWN,
                    "the server is shutting down",
                ),
                arena.metrics,
            )
        session = BotSession(name, hello, context.peer(), arena.config.send_queue)
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
        for t in arena.tables.values():
            if t.state == 1:
                for st in t.seats:
                    if st.bot_name == name:
                        w.seats.add(match_id=t.match_id, seat=st.seat)
        session.send(welcome)
        arena.register(session)
        slog.info("bot connected", peer=session.peer, version=hello.bot_version)
        reader = asyncio.create_task(self._read(it, session))
        try:
            while True:
                msg = await session.queue.get()
                if msg is None:
                    break
                yield msg
        finally:
            reader.cancel()
            arena.unregister(session)
            slog.info("bot disconnected")
        if session.end_status is not None:
            await _abort(context, session.end_status, arena.metrics)

    async def _read(self, it: AsyncIterator[bot_pb2.PlayRequest], session: BotSession) -> None:
        arena = self.arena
        try:
            async for req in it:
                kind = req.WhichOneof("kind")
                if kind == "action":
                    act = req.action
                    mid = act.request_id.rpartition("-")[0]
                    table = arena.tables.get(mid)
                    if table is None:
                        res = bot_pb2.ActionResult(
                            request_id=act.request_id,
                            accepted=False,
                            code=5,
                            reason=errors_pb2.ERROR_REASON_MATCH_NOT_FOUND,
                            message=f"no match for request {act.request_id!r}",
                        )
                    else:
                        res = table.submit(
                            session,
                            act.request_id,
                            act.action_id if act.HasField("action_id") else None,
                        )
                    out = bot_pb2.PlayResponse()
                    out.action_result.CopyFrom(res)
                    session.send(out)
                elif kind == "ping":
                    out = bot_pb2.PlayResponse()
                    out.pong.nonce = req.ping.nonce
                    out.pong.client_sent_at.CopyFrom(req.ping.sent_at)
                    out.pong.server_time.FromNanoseconds(time.time_ns())
                    session.send(out)
                else:
                    out = bot_pb2.PlayResponse()
                    e = out.error
                    e.code = 9
                    e.reason = (
                        errors_pb2.ERROR_REASON_DUPLICATE_HELLO
                        if kind == "hello"
                        else errors_pb2.ERROR_REASON_MALFORMED_MESSAGE
                    )
                    e.message = (
                        "Hello was already received on this stream"
                        if kind == "hello"
                        else "empty PlayRequest: set hello, action or ping"
                    )
                    session.send(out)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the stream broke; the writer side ends it
            log.info("bot stream read ended", bot=session.bot_name, error=repr(exc))
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


class AdminServicer(admin_pb2_grpc.AdminServiceServicer):
    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    async def _auth(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        token = bearer(context.invocation_metadata())
        if token is None:
            await _abort(
                context,
                status_error(
                    grpc.StatusCode.UNAUTHENTICATED,
                    errors_pb2.ERROR_REASON_MISSING_TOKEN,
                    "send the admin token as metadata 'authorization: Bearer <token>'",
                ),
                self.arena.metrics,
            )
        if not self.arena.tokens.is_admin(token):
            await _abort(
                context,
                status_error(
                    grpc.StatusCode.UNAUTHENTICATED,
                    errors_pb2.ERROR_REASON_ADMIN_REQUIRED,
                    "this call needs the admin token",
                ),
                self.arena.metrics,
            )

    async def _table(self, match_id: str, context: grpc.aio.ServicerContext[Any, Any]) -> Table:
        t = self.arena.tables.get(match_id)
        if t is None:
            await _abort(
                context,
                status_error(
                    grpc.StatusCode.NOT_FOUND,
                    errors_pb2.ERROR_REASON_MATCH_NOT_FOUND,
                    f"no match {match_id!r}; ListMatches shows the ones this server knows",
                ),
                self.arena.metrics,
            )
        return t

    async def CreateMatch(  # noqa: N802
        self, request: admin_pb2.CreateMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.CreateMatchResponse:
        await self._auth(context)
        try:
            table, created = self.arena.create(request)
        except _RejectError as rej:
            await _abort(context, rej.status, self.arena.metrics)
        return admin_pb2.CreateMatchResponse(match=table.info(), created=created)

    async def GetMatch(  # noqa: N802
        self, request: admin_pb2.GetMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.GetMatchResponse:
        await self._auth(context)
        return admin_pb2.GetMatchResponse(
            match=(await self._table(request.match_id, context)).info()
        )

    async def ListMatches(  # noqa: N802
        self, request: admin_pb2.ListMatchesRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.ListMatchesResponse:
        await self._auth(context)
        start = 0
        if request.page_token:
            try:
                start = int(request.page_token)
                if start < 0:
                    raise ValueError
            except ValueError:
                await _abort(
                    context,
                    status_error(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        errors_pb2.ERROR_REASON_INVALID_PAGE_TOKEN,
                        "page_token: pass back next_page_token unchanged",
                    ),
                    self.arena.metrics,
                )
        size = request.page_size if 0 < request.page_size <= 1000 else 100
        tables = [
            t
            for t in self.arena.tables.values()
            if (not request.states or t.state in request.states)
            and (not request.bot_name or t.uses_bot(request.bot_name))
            and all(t.labels.get(k) == v for k, v in request.labels.items())
        ]
        page = tables[start : start + size]
        res = admin_pb2.ListMatchesResponse(matches=[t.info() for t in page])
        if start + size < len(tables):
            res.next_page_token = str(start + size)
        return res

    async def WatchMatch(  # noqa: N802
        self, request: admin_pb2.WatchMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> AsyncIterator[admin_pb2.WatchMatchResponse]:
        await self._auth(context)
        table = await self._table(request.match_id, context)
        q = table.spectate(int(request.after_sequence))
        try:
            yield admin_pb2.WatchMatchResponse(match=table.info())
            while True:
                ev = await q.get()
                if ev is None:
                    break
                yield admin_pb2.WatchMatchResponse(event=ev)
            yield admin_pb2.WatchMatchResponse(match=table.info())
        finally:
            table.unspectate(q)

    async def CancelMatch(  # noqa: N802
        self, request: admin_pb2.CancelMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.CancelMatchResponse:
        await self._auth(context)
        table = await self._table(request.match_id, context)
        if table.state == 1 and table.task is not None:
            table.cancel(game_pb2.END_CAUSE_CANCELLED, request.reason or "cancelled by an admin")
            try:
                await asyncio.shield(table.task)
            except (asyncio.CancelledError, Exception):
                pass
        return admin_pb2.CancelMatchResponse(match=table.info())

    async def ListBots(  # noqa: N802
        self, request: admin_pb2.ListBotsRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> admin_pb2.ListBotsResponse:
        await self._auth(context)
        res = admin_pb2.ListBotsResponse()
        for name in sorted(self.arena.tokens.bots):
            s = self.arena.last_seen.get(name)
            b = res.bots.add(bot_name=name, connected=name in self.arena.sessions)
            if s is not None:
                b.bot_version = s.bot_version
                b.session_id = s.session_id
                b.protocol_version = s.protocol_version
                b.connected_at.FromNanoseconds(int(s.connected_at * 1e9))
                b.peer = s.peer
                b.max_concurrent_matches = s.max_concurrent
            for t in self.arena.tables.values():
                if t.state == 1:
                    for st in t.seats:
                        if st.bot_name == name:
                            b.seats.add(match_id=t.match_id, seat=st.seat)
                            b.open_requests += st.open is not None
        return res


class ArenaServer:
    """Everything one ``uno-arena serve`` runs, startable in process (tests use port 0)."""

    def __init__(self, config: ServerConfig, metrics: ServiceMetrics | None = None) -> None:
        self.config = config
        self.arena = Arena(config, metrics)
        self.health = (
            health.aio.HealthServicer() if hasattr(health, "aio") else health.HealthServicer()
        )
        opts = [
            ("grpc.max_receive_message_length", config.max_message_bytes),
            ("grpc.max_send_message_length", config.max_message_bytes),
            ("grpc.keepalive_time_ms", 20_000),
            ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
            ("grpc.keepalive_permit_without_calls", 1),
        ]
        self.server = grpc.aio.server(options=opts)
        bot_pb2_grpc.add_BotServiceServicer_to_server(  # type: ignore[no-untyped-call]
            BotServicer(self.arena), self.server
        )
        admin_pb2_grpc.add_AdminServiceServicer_to_server(  # type: ignore[no-untyped-call]
            AdminServicer(self.arena), self.server
        )
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        names = (
            bot_pb2.DESCRIPTOR.services_by_name["BotService"].full_name,
            admin_pb2.DESCRIPTOR.services_by_name["AdminService"].full_name,
            health.SERVICE_NAME,
            reflection.SERVICE_NAME,
        )
        reflection.enable_server_reflection(names, self.server)
        self.port = 0
        self._metrics_server: Any = None

    async def start(self) -> int:
        c = self.config
        addr = f"{c.host}:{c.port}"
        if c.tls_cert or c.tls_key:
            with open(c.tls_key, "rb") as fk, open(c.tls_cert, "rb") as fc:
                creds = grpc.ssl_server_credentials([(fk.read(), fc.read())])
            self.port = self.server.add_secure_port(addr, creds)
        else:
            self.port = self.server.add_insecure_port(addr)
        if self.port == 0:
            raise OSError(f"could not listen on {addr}")
        await self.server.start()
        for name in ("", "uno.v1.BotService", "uno.v1.AdminService"):
            await _set_health(self.health, name, health_pb2.HealthCheckResponse.SERVING)
        if c.metrics_port is not None:
            from prometheus_client import start_http_server

            self._metrics_server, _ = start_http_server(
                c.metrics_port, addr=c.host, registry=self.arena.metrics.registry
            )
        return self.port

    @property
    def metrics_port(self) -> int | None:
        if self._metrics_server is None:
            return None
        return int(self._metrics_server.server_address[1])

    async def stop(self, drain_timeout_s: float | None = None) -> None:
        """Stop taking matches, let hands in play finish (up to the drain timeout), cancel what
        is left cleanly, tell every bot, then stop the gRPC server."""
        arena = self.arena
        arena.draining = True
        for name in ("", "uno.v1.BotService", "uno.v1.AdminService"):
            await _set_health(self.health, name, health_pb2.HealthCheckResponse.NOT_SERVING)
        running = [t for t in arena.tables.values() if t.state == 1 and t.task is not None]
        for t in running:
            t.draining = True
        timeout = self.config.drain_timeout_s if drain_timeout_s is None else drain_timeout_s
        tasks = [t.task for t in running if t.task is not None]
        if tasks:
            _done, pending = await asyncio.wait(tasks, timeout=timeout)
            for t in running:
                if t.task in pending:
                    t.cancel(game_pb2.END_CAUSE_SHUTDOWN, "the server is shutting down")
            if pending:
                await asyncio.wait(pending, timeout=5)
        for s in list(arena.sessions.values()):
            s.kill(
                grpc.StatusCode.UNAVAILABLE,
                errors_pb2.ERROR_REASON_SHUTTING_DOWN,
                "the server is shutting down; reconnect later",
            )
        await self.server.stop(grace=2)
        if self._metrics_server is not None:
            self._metrics_server.shutdown()
            self._metrics_server.server_close()
        log.info("server stopped", matches=len(arena.tables))


async def _set_health(servicer: Any, name: str, status: Any) -> None:
    result = servicer.set(name, status)
    if asyncio.iscoroutine(result):
        await result
