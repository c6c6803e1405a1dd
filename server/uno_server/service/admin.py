"""The AdminService: create, get, list, cancel and watch matches; list, register and retire
bots.

Every call needs the admin token; its request is decoded and checked against the limits
(:func:`.rejections.parse`) before a method sees it. A spectator (WatchMatch) pulls the table's
event log with a cursor of its own, so nothing is dropped, and is cut by the janitor when it
does not read.
"""

from __future__ import annotations

import asyncio
import hmac
from collections.abc import Awaitable, Callable
from typing import Any, Final

import grpc
import structlog
from google.protobuf.message import Message
from google.rpc import error_details_pb2, status_pb2

from uno_server.gen.uno.v1 import admin_pb2, errors_pb2, game_pb2

from . import wire
from .arena import WELCOME_SEATS, Arena, Watcher
from .auth import SHA256_PREFIX, bearer, digest_of, sha256_problem, token_clashes, token_problem
from .rejections import RejectError, abort, identity, parse, status_error
from .table import Table

log = structlog.get_logger("uno.server")
LIST_BOTS_BYTES: Final = 1024 * 1024  # ListBots stops listing seats past this
AWAIT_EVENT_BYTES: Final = 1024 * 1024  # AwaitMatch's encoded events per answer, at most


def _nested(rej: RejectError, prefix: str) -> RejectError:
    """``rej`` with the field its ErrorInfo names (if any) as a path under ``prefix``, in the
    metadata and where the message starts with it."""
    status = status_pb2.Status()
    status.CopyFrom(rej.status)
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if not (detail.Unpack(info) and info.metadata.get("field")):
            continue
        name = info.metadata["field"]
        info.metadata["field"] = f"{prefix}.{name}"
        detail.Pack(info)
        if status.message.startswith(name):
            status.message = f"{prefix}.{status.message}"
        break
    out = RejectError(rej.code, rej.reason, status.message)
    out.status = status
    return out


class AdminServicer:
    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    async def _auth(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        token = bearer(context.invocation_metadata())
        if token is None:
            raise RejectError(
                grpc.StatusCode.UNAUTHENTICATED,
                errors_pb2.ERROR_REASON_MISSING_TOKEN,
                "send the admin token as metadata 'authorization: Bearer <token>'",
            )
        if self.arena.tokens.is_admin(token):
            return
        if self.arena.tokens.bot_for(token) is not None:
            raise RejectError(
                grpc.StatusCode.PERMISSION_DENIED,
                errors_pb2.ERROR_REASON_ADMIN_REQUIRED,
                "this is a bot token; the admin service needs the admin token",
            )
        raise RejectError(
            grpc.StatusCode.UNAUTHENTICATED,
            errors_pb2.ERROR_REASON_INVALID_TOKEN,
            "unknown token; the admin service needs the server's admin token",
        )

    def handler(self) -> grpc.GenericRpcHandler:
        def unary(
            fn: Callable[[Any, Any], Awaitable[Any]],
            req: type[Message],
            res: type[Message] | None,
        ) -> grpc.RpcMethodHandler:
            """``res`` None: ``fn`` answers with the response already encoded."""

            async def call(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Any:
                try:
                    await self._auth(context)
                    return await fn(parse(raw, req), context)
                except RejectError as rej:
                    await abort(context, rej.status, self.arena.metrics)
                except Exception as exc:
                    if isinstance(exc, grpc.aio.AbortError):
                        raise
                    log.exception("admin call failed", method=fn.__name__)
                    await abort(
                        context,
                        status_error(
                            grpc.StatusCode.INTERNAL,
                            errors_pb2.ERROR_REASON_INTERNAL,
                            f"server bug in {fn.__name__}: {type(exc).__name__}; please report",
                        ),
                        self.arena.metrics,
                    )

            return grpc.unary_unary_rpc_method_handler(
                call,
                request_deserializer=identity,
                response_serializer=identity if res is None else res.SerializeToString,
            )

        async def watch(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> None:
            try:
                await self._auth(context)
                req = parse(raw, admin_pb2.WatchMatchRequest)
            except RejectError as rej:
                await abort(context, rej.status, self.arena.metrics)
            await self.WatchMatch(req, context)

        return grpc.method_handlers_generic_handler(
            "uno.v1.AdminService",
            {
                "CreateMatch": unary(
                    self.CreateMatch, admin_pb2.CreateMatchRequest, admin_pb2.CreateMatchResponse
                ),
                "GetMatch": unary(
                    self.GetMatch, admin_pb2.GetMatchRequest, admin_pb2.GetMatchResponse
                ),
                "ListMatches": unary(
                    self.ListMatches, admin_pb2.ListMatchesRequest, admin_pb2.ListMatchesResponse
                ),
                "WatchMatch": grpc.unary_stream_rpc_method_handler(
                    watch,
                    request_deserializer=identity,
                    response_serializer=admin_pb2.WatchMatchResponse.SerializeToString,
                ),
                "AwaitMatch": unary(self.AwaitMatch, admin_pb2.AwaitMatchRequest, None),
                "PlayMatch": unary(self.PlayMatch, admin_pb2.PlayMatchRequest, None),
                "CancelMatch": unary(
                    self.CancelMatch, admin_pb2.CancelMatchRequest, admin_pb2.CancelMatchResponse
                ),
                "ListBots": unary(
                    self.ListBots, admin_pb2.ListBotsRequest, admin_pb2.ListBotsResponse
                ),
                "RegisterBot": unary(
                    self.RegisterBot, admin_pb2.RegisterBotRequest, admin_pb2.RegisterBotResponse
                ),
                "RetireBot": unary(
                    self.RetireBot, admin_pb2.RetireBotRequest, admin_pb2.RetireBotResponse
                ),
            },
        )

    def _not_found(self, match_id: str) -> RejectError:
        return RejectError(
            grpc.StatusCode.NOT_FOUND,
            errors_pb2.ERROR_REASON_MATCH_NOT_FOUND,
            f"no match {match_id!r}: unknown, or ended longer ago than the server keeps matches; "
            "ListMatches shows the ones it knows",
            match_id=match_id,
        )

    async def CreateMatch(  # noqa: N802
        self, request: admin_pb2.CreateMatchRequest, context: Any
    ) -> admin_pb2.CreateMatchResponse:
        self.arena.prune()
        info, created = await self.arena.create(request)
        return admin_pb2.CreateMatchResponse(match=info, created=created)

    async def GetMatch(  # noqa: N802
        self, request: admin_pb2.GetMatchRequest, context: Any
    ) -> admin_pb2.GetMatchResponse:
        self.arena.prune()
        info = self.arena.info(request.match_id)
        if info is None:
            raise self._not_found(request.match_id)
        return admin_pb2.GetMatchResponse(match=info)

    async def ListMatches(  # noqa: N802
        self, request: admin_pb2.ListMatchesRequest, context: Any
    ) -> admin_pb2.ListMatchesResponse:
        self.arena.prune()
        return self.arena.list_page(request)

    async def CancelMatch(  # noqa: N802
        self, request: admin_pb2.CancelMatchRequest, context: Any
    ) -> admin_pb2.CancelMatchResponse:
        self.arena.prune()
        table, f = self.arena.lookup(request.match_id)
        if table is None and f is None:
            raise self._not_found(request.match_id)
        if table is None or table.cancelling:
            raise RejectError(
                grpc.StatusCode.FAILED_PRECONDITION,
                errors_pb2.ERROR_REASON_MATCH_ALREADY_ENDED,
                f"match {request.match_id} has already ended (or is being cancelled)",
                match_id=request.match_id,
            )
        table.cancelling = True
        table.cancel(game_pb2.END_CAUSE_CANCELLED, request.reason or "cancelled by an admin")
        if table.task is not None:
            try:
                await asyncio.shield(table.task)
            except (asyncio.CancelledError, Exception):
                pass
        return admin_pb2.CancelMatchResponse(match=table.info())

    async def ListBots(  # noqa: N802
        self, request: admin_pb2.ListBotsRequest, context: Any
    ) -> admin_pb2.ListBotsResponse:
        arena = self.arena
        res = admin_pb2.ListBotsResponse()
        used = 0
        for name in sorted(arena.tokens.bots):
            s = arena.last_seen.get(name)
            b = res.bots.add(
                bot_name=name,
                connected=name in arena.sessions,
                rejected_actions=arena.rejected[name],
                stale_actions=arena.late[name],
                stream_errors=arena.stream_errors[name],
            )
            if s is not None:
                b.bot_version = s.bot_version
                b.session_id = s.session_id
                b.protocol_version = s.protocol_version
                b.connected_at.FromNanoseconds(int(s.connected_at * 1e9))
                if s.disconnected_at and name not in arena.sessions:
                    b.disconnected_at.FromNanoseconds(int(s.disconnected_at * 1e9))
                b.peer = s.peer
                b.max_concurrent_matches = s.max_concurrent
            for mid in arena.bot_tables.get(name, ()):
                for st in arena.running[mid].seats:
                    if st.bot_name == name:
                        b.running_seats += 1
                        b.open_requests += st.open is not None
                        if len(b.seats) < WELCOME_SEATS and used < LIST_BOTS_BYTES:
                            b.seats.add(match_id=mid, seat=st.seat)
                            used += len(mid) + 8
            used += 200
        return res

    async def RegisterBot(  # noqa: N802
        self, request: admin_pb2.RegisterBotRequest, context: Any
    ) -> admin_pb2.RegisterBotResponse:
        """A bot's token, learnt while the server runs (the rules of ``serve --bot``: the
        token's form is checked with the limits; here, that it is nobody else's)."""
        tokens = self.arena.tokens
        name = request.bot_name
        if bool(request.token) == bool(request.token_sha256):
            raise RejectError(
                grpc.StatusCode.INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_MALFORMED_MESSAGE,
                "token, token_sha256: set exactly one of them (the token, or its SHA-256 as 64 "
                "lowercase hex characters)",
                field="token",
            )
        if request.token_sha256:
            problem = sha256_problem(request.token_sha256)
            if problem is not None:  # the limits check the same
                raise RejectError(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    errors_pb2.ERROR_REASON_MALFORMED_MESSAGE,
                    f"token_sha256: {problem}",
                    field="token_sha256",
                )
            token = SHA256_PREFIX + request.token_sha256
        else:
            token = request.token
            problem = token_problem(token)
            if problem is not None:  # the limits check the same; kept in step with serve's rule
                raise RejectError(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    errors_pb2.ERROR_REASON_LIMIT_EXCEEDED,
                    f"token: {problem}",
                    field="token",
                )
        known = tokens.bots.get(name)
        if known is not None:
            if hmac.compare_digest(known.encode(), token.encode()):
                return admin_pb2.RegisterBotResponse(created=False)
            raise RejectError(
                grpc.StatusCode.ALREADY_EXISTS,
                errors_pb2.ERROR_REASON_BOT_ALREADY_REGISTERED,
                f"bot {name} is registered with another token; RetireBot it first, or choose "
                "another name",
                field="bot_name",
            )
        clash = token_clashes({**tokens.bots, name: token}, tokens.admin_token)
        if clash is not None:
            admin = tokens.admin_token and hmac.compare_digest(
                digest_of(token).encode(), digest_of(tokens.admin_token).encode()
            )
            what = "the admin token" if admin else "another bot's token"
            fld = "token_sha256" if request.token_sha256 else "token"
            raise RejectError(
                grpc.StatusCode.ALREADY_EXISTS,
                errors_pb2.ERROR_REASON_TOKEN_IN_USE,
                f"{fld}: it is {what}; give bot {name} a token of its own",
                field=fld,
            )
        tokens.bots[name] = token
        self.arena.metrics.add_bot(name)
        log.info("bot registered", bot=name)
        return admin_pb2.RegisterBotResponse(created=True)

    async def RetireBot(  # noqa: N802
        self, request: admin_pb2.RetireBotRequest, context: Any
    ) -> admin_pb2.RetireBotResponse:
        """Forget a bot's token: it can start no new stream and be seated in no new match;
        what it plays now runs to its end."""
        name = request.bot_name
        if self.arena.tokens.bots.pop(name, None) is None:
            raise RejectError(
                grpc.StatusCode.NOT_FOUND,
                errors_pb2.ERROR_REASON_BOT_NOT_FOUND,
                f"no bot {name!r} is registered with this server; ListBots shows the connected "
                "ones",
                field="bot_name",
            )
        if name not in self.arena.bot_tables:  # it plays no match now: its series go
            self.arena.metrics.remove_bot(name)  # (else when its last match ends, in arena)
        log.info("bot retired", bot=name)
        return admin_pb2.RetireBotResponse(connected=name in self.arena.sessions)

    async def WatchMatch(  # noqa: N802
        self, request: admin_pb2.WatchMatchRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> None:
        arena = self.arena
        arena.prune()
        mid = request.match_id
        table, f = arena.lookup(mid)
        if table is None and f is not None:
            table = f.table
            if table is None:
                await context.write(
                    admin_pb2.WatchMatchResponse(match=admin_pb2.MatchInfo.FromString(f.info))
                )
                await abort(
                    context,
                    status_error(
                        grpc.StatusCode.NOT_FOUND,
                        errors_pb2.ERROR_REASON_EVENTS_EXPIRED,
                        f"match {mid} ended and its event log was freed; GetMatch has its summary",
                        match_id=mid,
                    ),
                    arena.metrics,
                )
        if table is None:
            await abort(context, self._not_found(mid).status, arena.metrics)
        watcher = Watcher(mid)
        writer = asyncio.create_task(self._watch(table, request.after_sequence, context, watcher))
        watcher.task = writer
        arena.watchers.add(watcher)
        arena.metrics.watchers.set(len(arena.watchers))
        try:
            await writer
        finally:
            writer.cancel()
            arena.watchers.discard(watcher)
            arena.metrics.watchers.set(len(arena.watchers))
        if watcher.cut:
            await abort(
                context,
                status_error(
                    grpc.StatusCode.RESOURCE_EXHAUSTED,
                    errors_pb2.ERROR_REASON_SLOW_CONSUMER,
                    f"the spectator read nothing for {arena.config.stall_seconds:g} s; resume "
                    "with after_sequence = the last Event.sequence received",
                    match_id=mid,
                ),
                arena.metrics,
            )

    async def AwaitMatch(  # noqa: N802
        self, request: admin_pb2.AwaitMatchRequest, context: Any
    ) -> bytes:
        """Wait for the match to stop running; answer with its final MatchInfo and its spectator
        events after ``after_sequence``, encoded once: each event is the encoding the seats'
        DecisionRequests already carry (field 16 in both messages), so nothing is converted
        again. At most :data:`AWAIT_EVENT_BYTES` of events per answer (``truncated``)."""
        arena = self.arena
        arena.prune()
        mid = request.match_id
        table, f = arena.lookup(mid)
        if table is None and f is not None:
            table = f.table
            if table is None:
                raise RejectError(
                    grpc.StatusCode.NOT_FOUND,
                    errors_pb2.ERROR_REASON_EVENTS_EXPIRED,
                    f"match {mid} ended and its event log was freed; GetMatch has its summary",
                    match_id=mid,
                )
        if table is None:
            raise self._not_found(mid)
        task = table.task
        if table.state == 1 and task is not None:
            try:  # one wake-up at the end, not one per event
                await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.done():  # this call was cancelled, not the table
                    raise
            except Exception:  # the table's failure: it is logged, and the match cancelled
                pass
        while table.state == 1:  # shielded: the future is shared (see _watch)
            await asyncio.shield(table.changed())
        records = table.records
        fields: list[bytes] = []
        size = 0
        truncated = False
        field = table.seat_log.spectator_field
        for i in range(max(0, min(request.after_sequence, len(records))), len(records)):
            b = field(records[i])
            if b is None:
                continue
            if fields and size + len(b) > AWAIT_EVENT_BYTES:
                truncated = True
                break
            fields.append(b)
            size += len(b)
        head = wire.ld(1, bytes(table.info().SerializeToString()))
        return head + (b"\x10\x01" if truncated else b"") + b"".join(fields)

    async def PlayMatch(  # noqa: N802
        self, request: admin_pb2.PlayMatchRequest, context: Any
    ) -> bytes:
        """CreateMatch, then AwaitMatch from the first event: one call per match (the runner's
        per hand) instead of two. PlayMatchResponse has AwaitMatchResponse's field numbers, so
        AwaitMatch's encoded answer is this call's too. The match's own refusals (bots, rules,
        time control) name their field by its path in this request, ``create.``..."""
        self.arena.prune()
        try:
            info, _ = await self.arena.create(request.create)
        except RejectError as rej:
            raise _nested(rej, "create") from None
        return await self.AwaitMatch(admin_pb2.AwaitMatchRequest(match_id=info.match_id), context)

    async def _watch(
        self,
        table: Table,
        after: int,
        context: grpc.aio.ServicerContext[Any, Any],
        watcher: Watcher,
    ) -> None:
        """Pull the table's event log with this watcher's own cursor: nothing is dropped."""
        loop = asyncio.get_running_loop()

        async def write(msg: admin_pb2.WatchMatchResponse) -> None:
            watcher.writing_since = loop.time()
            await context.write(msg)
            watcher.writing_since = None

        try:
            await write(admin_pb2.WatchMatchResponse(match=table.info()))
            records = table.records  # held here: the log outlives the arena's copy if need be
            cursor = after
            while True:
                while cursor < len(records):
                    rec = records[cursor]
                    cursor += 1
                    ev = table.spectator_event(rec)
                    if ev is not None:
                        await write(admin_pb2.WatchMatchResponse(event=ev))
                if table.state != 1:
                    break
                # shielded: every watcher of the table awaits the same future, and a watcher
                # that left (a closed tab, a killed curl) cancelled it for all of them, whose
                # calls then ended as if the match had (an examination's spectators froze)
                await asyncio.shield(table.changed())
            await write(admin_pb2.WatchMatchResponse(match=table.info()))
        except asyncio.CancelledError:  # cut by the janitor, or the call ended
            return
