"""The grpc.aio server: bot streams, the admin service, health, reflection and metrics.

Requests arrive as raw bytes and are decoded here, so that bytes that do not decode (invalid
UTF-8 in a string, a corrupt message) get a documented status (INVALID_ARGUMENT /
MALFORMED_MESSAGE) instead of gRPC's generic failure, and every decoded request passes the one
table of input limits (:mod:`.limits`) before anything else looks at it.

A hostile or broken client can only hurt itself: its inputs are bounded, its faults are answered
on its own stream, a stream that does not read is cut (SLOW_CONSUMER) without waiting for it,
and a stream that floods is read more slowly. Finished matches shrink to a compact summary and
are forgotten after the retention (see :class:`ServerConfig`).
"""

from __future__ import annotations

import asyncio
import bisect
import collections
import concurrent.futures
import gc
import hashlib
import hmac
import secrets
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, NoReturn, TypeVar

import grpc
import structlog
from google.protobuf import any_pb2
from google.protobuf.message import DecodeError, Message
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from grpc_status import rpc_status

from uno_server import __version__
from uno_server.engine.errors import InvalidRulesError
from uno_server.engine.match import Match
from uno_server.gen.uno.v1 import admin_pb2, bot_pb2, errors_pb2, game_pb2

from . import convert, limits, wire
from .auth import TokenRegistry, bearer
from .metrics import ServiceMetrics
from .ratelog import RateLimitedLog
from .table import ReplayBudget, Seat, Table, TimeControl, make_builtin

log = structlog.get_logger("uno.server")
PROTOCOL_VERSION: Final = 1
HELLO_TIMEOUT_S: Final = 10.0
MAX_WAITING_HELLO: Final = 8  # Play streams of one bot that may wait for their Hello at once
STREAM_BYTES_PER_S: Final = 1024 * 1024  # each Play stream is read at most this fast
REPLAY_EVENTS_PER_MIN: Final = 100_000  # events one bot may have sent again by Resume.cursors
WELCOME_SEATS: Final = 1000  # Welcome.seats and BotInfo.seats list at most this many
_BUILTINS: Final = (game_pb2.BUILTIN_BOT_RANDOM, game_pb2.BUILTIN_BOT_HEURISTIC)
PAGE_BYTES: Final = 1024 * 1024  # a ListMatches page stops before passing this
LIST_BOTS_BYTES: Final = 1024 * 1024  # ListBots stops listing seats past this

M = TypeVar("M", bound=Message)


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


class _RejectError(Exception):
    def __init__(self, code: grpc.StatusCode, reason: int, message: str, **meta: str) -> None:
        super().__init__(message)
        self.code = code
        self.reason = reason
        self.status = status_error(code, reason, message, **meta)


def _violation(v: limits.Violation) -> _RejectError:
    return _RejectError(grpc.StatusCode.INVALID_ARGUMENT, v.reason, v.message, field=v.field)


def _parse(raw: bytes, cls: type[M]) -> M:
    """Decode a request, or raise INVALID_ARGUMENT (MALFORMED_MESSAGE / a limit's reason)."""
    if len(raw) > limits.MAX_REQUEST_BYTES:
        raise _RejectError(
            grpc.StatusCode.INVALID_ARGUMENT,
            errors_pb2.ERROR_REASON_MALFORMED_MESSAGE,
            f"the request is {len(raw)} bytes; at most {limits.MAX_REQUEST_BYTES} are read",
        )
    try:
        msg = cls.FromString(raw)
    except DecodeError as exc:
        raise _RejectError(
            grpc.StatusCode.INVALID_ARGUMENT,
            errors_pb2.ERROR_REASON_MALFORMED_MESSAGE,
            f"the request does not decode as {cls.DESCRIPTOR.full_name}: {exc}"[:300],
        ) from exc
    bad = limits.check(msg)
    if bad is not None:
        raise _violation(bad)
    return msg


def _identity(raw: bytes) -> bytes:
    return raw


GC_THRESHOLDS = (50_000, 20, 20)
"""The server process's garbage collector thresholds (CPython's default: 700, 10, 10)."""


def tune_gc() -> None:
    """Set the garbage collector up for a long-running server process, once it has started.

    Every move allocates a few dozen short-lived containers (events, records, requests), so
    CPython's default young-generation threshold (700 allocations) ran a collection every few
    moves and promoted live tables' objects into older generations that are scanned again and
    again: about 3% of the event loop's samples in bench-server-profile. Everything allocated
    at startup (modules, descriptors, the config) is frozen out of the collector's sight, and
    collections run about 70 times less often; the young generation then holds at most
    50,000 objects, a few MiB. Measured: +3% moves/s in bench-server at 16 tables.

    A process-wide setting, so only the server's own entry points call it (``uno-server serve``,
    which the tournament's embedded and shard servers run too, and bench-server), never the
    ArenaServer library class."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLDS)


WRITE_LINGER_S = 0.0004
"""How long a bot stream's writer waits for more messages before a write, when the bot's
messages come faster than that (see BotServicer._write): at most 0.4 ms added to a request's
delivery, only while the bot plays many tables at once."""


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
        # for more messages only when the next one is likely to come within WRITE_LINGER_S
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

    def kill(self, code: grpc.StatusCode, reason: int, message: str, field: str = "") -> None:
        """End the stream with a fatal StreamError and the given status. The session leaves the
        arena at once: its seats enter the reconnect grace period."""
        if self.end_status is not None:
            return
        meta = {"field": field} if field else {}
        self.end_status = status_error(code, reason, message, **meta)
        self.metrics.count_stream_error(self.bot_name, reason)
        log_rejection(self.end_status, peer=self.peer, bot=self.bot_name)
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


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 50051
    metrics_port: int | None = None
    admin_token: str = ""
    bots: dict[str, str] = field(default_factory=dict)
    tls_cert: str = ""
    tls_key: str = ""
    max_message_bytes: int = 4 * 1024 * 1024  # gRPC's own hard limit, both directions
    send_queue: int = 16384  # messages waiting for one bot before it is a slow consumer
    drain_timeout_s: float = 10.0
    max_matches: int = 10_000  # running matches at once
    retain_matches: int = 1000  # finished matches kept as summaries
    retain_seconds: float = 3600.0  # ... for at most this long
    log_linger_seconds: float = 120.0  # a finished match's full event log is kept this long
    log_linger_matches: int = 128  # ... for at most this many matches
    deal_timeout_s: float = 10.0  # a deal that takes longer is a failure (INTERNAL)
    stall_seconds: float = 30.0  # a stream whose reader takes nothing this long is cut
    stream_messages_per_s: float = 1000.0  # each Play stream is read at most this fast
    session_interval_s: float = 0.1  # one bot's sessions start at most this often


@dataclass
class Finished:
    """A match that ended: its summary (a serialised MatchInfo) for the retention, and its
    table, with the full event log, while that may still be asked for."""

    match_id: str
    number: int
    state: int
    bots: frozenset[str]
    labels: dict[str, str]
    info: bytes
    ended: float  # loop time
    key: str
    fingerprint: bytes
    table: Table | None
    pending: dict[str, list[int]]  # bot -> seats whose MatchEnded did not reach it


@dataclass(eq=False)
class Watcher:
    """One WatchMatch call, for the janitor: a write that waits too long is cut."""

    match_id: str
    writing_since: float | None = None
    task: asyncio.Task[None] | None = None
    cut: bool = False


class Arena:
    """The state of one server: connected bots and matches."""

    def __init__(self, config: ServerConfig, metrics: ServiceMetrics | None = None) -> None:
        self.config = config
        self.metrics = metrics or ServiceMetrics()
        self.tokens = TokenRegistry(admin_token=config.admin_token)
        for name, token in config.bots.items():
            self.tokens.add_bot(name, token)
            self.metrics.add_bot(name)
        self.sessions: dict[str, BotSession] = {}
        self.last_seen: dict[str, BotSession] = {}
        self.running: dict[str, Table] = {}
        self.finished: collections.OrderedDict[str, Finished] = collections.OrderedDict()
        self.lingering: collections.deque[str] = collections.deque()
        self.by_key: dict[str, str | asyncio.Future[str]] = {}
        self.bot_tables: dict[str, dict[str, None]] = {}  # bot -> running match ids, in order
        self.pending_ended: dict[str, set[str]] = {}  # bot -> finished matches to tell it
        self.numbers: dict[str, int] = {}  # match id -> creation number
        self.order: list[tuple[int, str]] = []  # (number, match id), ascending; lazily pruned
        self.rejected: collections.Counter[str] = collections.Counter()
        self.stream_errors: collections.Counter[str] = collections.Counter()
        self.watchers: set[Watcher] = set()
        self.live: set[BotSession] = set()  # every Play stream with a session, until it ends
        self.waiting_hello: collections.Counter[str] = collections.Counter()
        self.session_locks: dict[str, asyncio.Lock] = {}
        self.last_session: dict[str, float] = {}
        self.replays: dict[str, tuple[float, float]] = {}  # bot -> (budget left, at loop time)
        self.draining = False
        self._counter = 0
        self._page_key = secrets.token_bytes(16)
        self.deal_pool = concurrent.futures.ThreadPoolExecutor(2, thread_name_prefix="uno-deal")
        self.metrics.on_stream_error = self._count_stream_error

    # ------------------------------------------------------------------ bots

    def _count_stream_error(self, bot: str) -> None:
        self.stream_errors[bot] += 1

    def session(self, bot_name: str) -> BotSession | None:
        return self.sessions.get(bot_name)

    def register(self, s: BotSession, cursors: dict[tuple[str, int], int]) -> None:
        old = self.sessions.get(s.bot_name)
        self.sessions[s.bot_name] = s
        self.last_seen[s.bot_name] = s
        if old is not None:
            old.kill(
                grpc.StatusCode.ABORTED,
                errors_pb2.ERROR_REASON_SESSION_REPLACED,
                "a newer stream of the same bot replaced this one",
            )
        self.metrics.connected_bots.set(len(self.sessions))
        # replaying events costs the server; a bot may have REPLAY_EVENTS_PER_MIN sent again
        now = asyncio.get_running_loop().time()
        left, at = self.replays.get(s.bot_name, (REPLAY_EVENTS_PER_MIN, now))
        budget = ReplayBudget(
            min(REPLAY_EVENTS_PER_MIN, left + (now - at) * REPLAY_EVENTS_PER_MIN / 60)
        )
        for mid in list(self.bot_tables.get(s.bot_name, ())):
            self.running[mid].bot_connected(s, cursors, budget)
        for mid in sorted(self.pending_ended.pop(s.bot_name, ())):
            f = self.finished.get(mid)
            if f is not None:
                self._tell_ended(f, s, cursors, budget)
        self.replays[s.bot_name] = (budget.left, now)

    def _tell_ended(
        self,
        f: Finished,
        s: BotSession,
        cursors: dict[tuple[str, int], int],
        budget: ReplayBudget,
    ) -> None:
        """MatchEnded for seats of ``s`` that were away when the match ended (with the events
        they missed, from their cursors, while the log is kept)."""
        for seat in f.pending.pop(s.bot_name, []):
            if f.table is not None:
                st = f.table.seats[seat]
                f.table.rewind(st, cursors.get((f.match_id, seat)), budget)
                f.table.send_match_ended(st, s)
                continue
            info = admin_pb2.MatchInfo.FromString(f.info)
            ms = info.seats[seat]
            me = bot_pb2.MatchEnded(
                match_id=f.match_id,
                seat=seat,
                cause=info.end_cause,
                winners=info.winners,
                totals=info.totals,
                won=seat in info.winners,
                strikes=ms.strikes,
                rejected_actions=ms.rejected_actions,
                taken_over=ms.taken_over,
            )
            s.send(bot_pb2.PlayResponse(match_ended=me))

    def unregister(self, s: BotSession) -> None:
        if self.sessions.get(s.bot_name) is not s:
            return
        del self.sessions[s.bot_name]
        s.disconnected_at = time.time()
        self.metrics.connected_bots.set(len(self.sessions))
        self.metrics.disconnects.labels(s.bot_name).inc()
        for mid in list(self.bot_tables.get(s.bot_name, ())):
            self.running[mid].bot_disconnected(s.bot_name)

    # ------------------------------------------------------------------ matches

    def new_match_id(self) -> tuple[str, int]:
        self._counter += 1
        return f"m{self._counter:06d}-{secrets.token_hex(3)}", self._counter

    async def run_deal(self, fn: Callable[[], Any]) -> Any:
        """Run a deal in a worker thread, so that it cannot freeze the event loop."""
        loop = asyncio.get_running_loop()
        fut = loop.run_in_executor(self.deal_pool, fn)
        try:
            return await asyncio.wait_for(fut, self.config.deal_timeout_s)
        except TimeoutError:
            raise RuntimeError(
                f"the deal did not finish within {self.config.deal_timeout_s:g} s"
            ) from None

    async def create(self, req: admin_pb2.CreateMatchRequest) -> tuple[admin_pb2.MatchInfo, bool]:
        """Validate and start a match. Raises _RejectError with a status on bad input."""
        if self.draining:
            raise _RejectError(
                grpc.StatusCode.UNAVAILABLE,
                errors_pb2.ERROR_REASON_SHUTTING_DOWN,
                "the server is shutting down and takes no new matches",
            )
        seats_given = len(req.seats)
        if seats_given < 2:  # (none at all is refused by the limits already)
            raise _RejectError(
                grpc.StatusCode.INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_INVALID_SEATS,
                f"seats: {seats_given} player given; a table has 2-10 seats, one Player each",
                field="seats",
            )
        try:
            rules = convert.rules_from_proto(req.rules, default_seats=seats_given)
        except InvalidRulesError as exc:
            raise _RejectError(
                grpc.StatusCode.INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_INVALID_RULES,
                str(exc),
                field=str(exc).split(":")[0],
            ) from exc
        if seats_given != rules.seats:
            raise _RejectError(
                grpc.StatusCode.INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_INVALID_SEATS,
                f"seats: {seats_given} players given for rules.seats = {rules.seats}",
                field="seats",
            )
        tc = _time_control(req.time_control)
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
        players: list[game_pb2.Player] = []
        for i, player in enumerate(req.seats):
            kind = player.WhichOneof("kind")
            if kind == "bot_name":
                name = player.bot_name
                if name not in self.tokens.bots:
                    raise _RejectError(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        errors_pb2.ERROR_REASON_INVALID_SEATS,
                        f"seats[{i}]: no bot named {name!r} is registered with this server "
                        f"(known: {', '.join(sorted(self.tokens.bots)[:20]) or 'none'})",
                        field=f"seats[{i}]",
                    )
                players.append(game_pb2.Player(bot_name=name))
            elif kind == "builtin":
                if player.builtin not in _BUILTINS:
                    raise _RejectError(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        errors_pb2.ERROR_REASON_INVALID_SEATS,
                        f"seats[{i}]: unknown built-in bot {player.builtin} "
                        "(BUILTIN_BOT_RANDOM or BUILTIN_BOT_HEURISTIC)",
                        field=f"seats[{i}]",
                    )
                players.append(game_pb2.Player(builtin=player.builtin))
            else:
                raise _RejectError(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    errors_pb2.ERROR_REASON_INVALID_SEATS,
                    f"seats[{i}]: an empty Player; set bot_name or builtin",
                    field=f"seats[{i}]",
                )
        key = req.idempotency_key
        fingerprint = b""  # only an idempotent call is ever compared
        if key:
            fingerprint = _fingerprint(
                players,
                convert.rules_to_proto(rules),
                tc.to_proto(),
                req.seed if req.HasField("seed") else None,
                dealer,
                dict(req.labels),
            )
            known = self.by_key.get(key)
            if isinstance(known, asyncio.Future):
                waiting = known
                try:
                    known = await asyncio.shield(waiting)
                except asyncio.CancelledError:
                    if not waiting.cancelled():
                        raise
                    raise _RejectError(
                        grpc.StatusCode.ABORTED,
                        errors_pb2.ERROR_REASON_STALE_REQUEST,
                        "a CreateMatch with this idempotency key failed meanwhile; call again",
                    ) from None
            if known is not None:
                return self._idempotent(key, known, fingerprint)
        for i, p in enumerate(players):
            if p.HasField("bot_name") and p.bot_name not in self.sessions:
                raise _RejectError(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    errors_pb2.ERROR_REASON_BOT_NOT_CONNECTED,
                    f"seats[{i}]: bot {p.bot_name!r} is not connected; start it first",
                    field=f"seats[{i}]",
                )
        if len(self.running) >= self.config.max_matches:
            raise _RejectError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                errors_pb2.ERROR_REASON_TOO_MANY_MATCHES,
                f"{self.config.max_matches} matches are running; wait for some to end",
            )
        seed = req.seed if req.HasField("seed") else secrets.randbits(63)
        pending: asyncio.Future[str] | None = None
        if key:
            pending = asyncio.get_running_loop().create_future()
            self.by_key[key] = pending
        try:
            match = await self.run_deal(lambda: Match(rules, seed, dealer=dealer))
        except Exception as exc:
            if pending is not None:
                self.by_key.pop(key, None)
                pending.cancel()
            log.error("deal failed", rules=rules.to_dict(), seed=seed, error=repr(exc))
            raise _RejectError(
                grpc.StatusCode.INTERNAL,
                errors_pb2.ERROR_REASON_INTERNAL,
                f"dealing the first hand failed ({exc}); please report the rules and the "
                f"seed {seed}",
            ) from exc
        mid, number = self.new_match_id()
        seats: list[Seat] = []
        for i, p in enumerate(players):
            if p.HasField("bot_name"):
                s = self.sessions.get(p.bot_name)
                seats.append(
                    Seat(
                        i,
                        p.bot_name,
                        0,
                        None,
                        tc.time_bank_ms,
                        bot_version=s.bot_version if s is not None else "",
                        push=s is not None and s.push_events,
                    )
                )
            else:
                seats.append(
                    Seat(i, "", p.builtin, make_builtin(p.builtin, seed * 16 + i), tc.time_bank_ms)
                )
        table = Table(
            mid,
            match,
            seats,
            tc,
            self.metrics,
            self.session,
            labels=dict(req.labels),
            idempotency_key=key,
            on_finish=self._on_finish,
            run_deal=self.run_deal,
        )
        table.fingerprint = fingerprint
        self.running[mid] = table
        self.numbers[mid] = number
        self.order.append((number, mid))
        for name in table.bot_names():
            self.bot_tables.setdefault(name, {})[mid] = None
        if pending is not None:
            self.by_key[key] = mid
            pending.set_result(mid)
        table.task = asyncio.get_running_loop().create_task(table.run(), name=f"table-{mid}")
        table.task.add_done_callback(_log_task_failure)
        return table.info(), True

    def _idempotent(
        self, key: str, mid: str, fingerprint: bytes
    ) -> tuple[admin_pb2.MatchInfo, bool]:
        t = self.running.get(mid)
        f = self.finished.get(mid)
        theirs = t.fingerprint if t is not None else f.fingerprint if f is not None else None
        if theirs is None:  # forgotten meanwhile
            self.by_key.pop(key, None)
            raise _RejectError(
                grpc.StatusCode.ABORTED,
                errors_pb2.ERROR_REASON_STALE_REQUEST,
                "the match of this idempotency key was just forgotten; call again",
            )
        if theirs != fingerprint:
            raise _RejectError(
                grpc.StatusCode.ALREADY_EXISTS,
                errors_pb2.ERROR_REASON_MATCH_ALREADY_EXISTS,
                f"idempotency_key: match {mid} was created with this key and other parameters",
                field="idempotency_key",
                match_id=mid,
            )
        if t is not None:
            return t.info(), False
        assert f is not None
        return admin_pb2.MatchInfo.FromString(f.info), False

    def _on_finish(self, table: Table) -> None:
        mid = table.match_id
        self.running.pop(mid, None)
        for name in table.bot_names():
            tables = self.bot_tables.get(name)
            if tables is not None:
                tables.pop(mid, None)
                if not tables:
                    del self.bot_tables[name]
        pending: dict[str, list[int]] = {}
        for st in table.seats:
            if st.bot_name and not st.ended_sent:
                pending.setdefault(st.bot_name, []).append(st.seat)
                self.pending_ended.setdefault(st.bot_name, set()).add(mid)
        self.finished[mid] = Finished(
            match_id=mid,
            number=self.numbers.get(mid, 0),
            state=table.state,
            bots=table.bot_names(),
            labels=table.labels,
            info=table.info().SerializeToString(),
            ended=time.monotonic(),
            key=table.idempotency_key,
            fingerprint=table.fingerprint,
            table=table,
            pending=pending,
        )
        self.lingering.append(mid)
        self.prune()

    def prune(self, now: float | None = None) -> None:
        """Apply the retention: summaries by count and age, full logs by count and age."""
        now = time.monotonic() if now is None else now
        cfg = self.config
        finished = self.finished
        while finished:
            mid, f = next(iter(finished.items()))
            if len(finished) <= cfg.retain_matches and now - f.ended <= cfg.retain_seconds:
                break
            finished.popitem(last=False)
            self.numbers.pop(mid, None)
            if f.key and self.by_key.get(f.key) == mid:
                del self.by_key[f.key]
            for bot in f.pending:
                left = self.pending_ended.get(bot)
                if left is not None:
                    left.discard(mid)
                    if not left:
                        del self.pending_ended[bot]
        lingering = self.lingering
        while lingering:
            f_old = finished.get(lingering[0])
            if f_old is not None and (
                len(lingering) <= cfg.log_linger_matches
                and now - f_old.ended <= cfg.log_linger_seconds
            ):
                break
            lingering.popleft()
            if f_old is not None:
                f_old.table = None  # a watcher still reading holds its own reference
        if len(self.order) > 2 * (len(self.running) + len(finished)) + 64:
            self.order = [(n, m) for n, m in self.order if m in self.numbers]
        self.metrics.retained_matches.set(len(finished))
        self.metrics.match_logs.set(len(lingering))

    def lookup(self, mid: str) -> tuple[Table | None, Finished | None]:
        t = self.running.get(mid)
        return (t, None) if t is not None else (None, self.finished.get(mid))

    def info(self, mid: str) -> admin_pb2.MatchInfo | None:
        t, f = self.lookup(mid)
        if t is not None:
            return t.info()
        if f is not None:
            return admin_pb2.MatchInfo.FromString(f.info)
        return None

    # ------------------------------------------------------------------ listing

    def page_token(self, number: int) -> str:
        mac = hmac.new(self._page_key, str(number).encode(), hashlib.sha256).hexdigest()[:16]
        return f"{number}.{mac}"

    def page_start(self, token: str) -> int:
        """The creation number a page token continues below; raises on a foreign token."""
        number = token.partition(".")[0]
        if (
            number.isdigit()
            and len(number) <= 18
            and hmac.compare_digest(self.page_token(int(number)), token)
        ):
            return int(number)
        raise _RejectError(
            grpc.StatusCode.INVALID_ARGUMENT,
            errors_pb2.ERROR_REASON_INVALID_PAGE_TOKEN,
            "page_token: pass back next_page_token unchanged",
            field="page_token",
        )

    def list_page(self, req: admin_pb2.ListMatchesRequest) -> admin_pb2.ListMatchesResponse:
        size = req.page_size or 50
        below = self.page_start(req.page_token) if req.page_token else None
        states = set(req.states)
        labels = dict(req.labels)
        order = self.order
        i = len(order) if below is None else bisect.bisect_left(order, (below, ""))
        res = admin_pb2.ListMatchesResponse()
        used = 0
        last = -1
        while i > 0:
            i -= 1
            number, mid = order[i]
            t, f = self.lookup(mid)
            if t is not None:
                state, bots, lab = t.state, t.bot_names(), t.labels
            elif f is not None:
                state, bots, lab = f.state, f.bots, f.labels
            else:
                continue
            if states and state not in states:
                continue
            if req.bot_name and req.bot_name not in bots:
                continue
            if any(lab.get(k) != v for k, v in labels.items()):
                continue
            if len(res.matches) >= size:
                res.next_page_token = self.page_token(last)
                break
            info = t.info() if t is not None else admin_pb2.MatchInfo.FromString(f.info)  # type: ignore[union-attr]
            n = info.ByteSize() + 8
            if res.matches and used + n > PAGE_BYTES:
                res.next_page_token = self.page_token(last)
                break
            res.matches.append(info)
            used += n
            last = number
        return res


def _fingerprint(
    players: list[game_pb2.Player],
    rules: game_pb2.RuleSet,
    tc: game_pb2.TimeControl,
    seed: int | None,
    dealer: int | None,
    labels: dict[str, str],
) -> bytes:
    """The parameters of a CreateMatch after defaults, for comparing idempotent calls."""
    m = admin_pb2.CreateMatchRequest(seats=players, rules=rules, time_control=tc, labels=labels)
    if seed is not None:
        m.seed = seed
    if dealer is not None:
        m.dealer = dealer
    return bytes(m.SerializeToString(deterministic=True))


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
        decision_ms=get("decision_ms", d.decision_ms, 50, 600_000),
        time_bank_ms=get("time_bank_ms", d.time_bank_ms, 0, 3_600_000),
        strikes_before_takeover=get("strikes_before_takeover", d.strikes_before_takeover, 1, 1000),
        reconnect_grace_ms=get("reconnect_grace_ms", d.reconnect_grace_ms, 0, 600_000),
        takeover_bot=bot,
    )


REJECTIONS = RateLimitedLog()
"""Rejected RPCs and streams are logged, at most ``BURST`` a minute per status code and reason."""


def _reason(status: status_pb2.Status) -> str:
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return str(info.reason)
    return ""


def log_rejection(status: status_pb2.Status, *, peer: str = "", bot: str = "") -> None:
    code = code_pb2.Code.Name(status.code)
    reason = _reason(status)
    level = log.error if status.code == code_pb2.INTERNAL else log.warning
    REJECTIONS.log(
        (code, reason),
        level,
        "rpc rejected",
        code=code,
        reason=reason,
        detail=status.message[:300],
        bot=bot or None,
        peer=peer[:200] or None,
    )


async def _abort(
    context: grpc.aio.ServicerContext[Any, Any],
    status: status_pb2.Status,
    metrics: ServiceMetrics,
    bot: str = "",
) -> NoReturn:
    metrics.errors.labels(code_pb2.Code.Name(status.code)).inc()
    log_rejection(status, peer=context.peer(), bot=bot)
    await context.abort_with_status(rpc_status.to_status(status))
    raise AssertionError("unreachable")  # pragma: no cover


def _request_number(request_id: str) -> tuple[str, int]:
    """Match id and request number of a request id "<match id>-<n>" (-1 if malformed)."""
    mid, _, num = request_id.rpartition("-")
    if num.isdigit() and len(num) <= 12:
        return mid, int(num)
    return mid, -1


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
    ) -> NoReturn:
        """End a stream that has no session yet: a fatal StreamError, then the status."""
        if bot:
            self.arena.metrics.count_stream_error(bot, reason)
        out = bot_pb2.PlayResponse()
        e = out.error
        e.code = code.value[0]
        e.reason = reason
        e.message = message
        e.field = field
        e.fatal = True
        try:
            await asyncio.wait_for(context.write(out), 5)
        except Exception:  # the peer is gone or does not read: the status is all it gets
            pass
        meta = {"field": field} if field else {}
        await _abort(
            context, status_error(code, reason, message, **meta), self.arena.metrics, bot=bot
        )

    async def Play(  # noqa: N802 - gRPC method name
        self,
        request_iterator: AsyncIterator[bytes],
        context: grpc.aio.ServicerContext[Any, Any],
    ) -> None:
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
            hint = (
                "this is the admin token; a bot needs its own token"
                if arena.tokens.is_admin(token)
                else "unknown bot token; ask the operator for yours"
            )
            await _abort(
                context,
                status_error(
                    grpc.StatusCode.UNAUTHENTICATED, errors_pb2.ERROR_REASON_INVALID_TOKEN, hint
                ),
                arena.metrics,
            )
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
        try:
            raw = await asyncio.wait_for(it.__anext__(), HELLO_TIMEOUT_S)
        except (StopAsyncIteration, TimeoutError):
            raw = None
        finally:
            arena.waiting_hello[name] -= 1
            if not arena.waiting_hello[name]:
                del arena.waiting_hello[name]
        if raw is None:
            await self._fatal(
                context,
                grpc.StatusCode.FAILED_PRECONDITION,
                errors_pb2.ERROR_REASON_HELLO_REQUIRED,
                f"send Hello within {HELLO_TIMEOUT_S:.0f} s of opening the stream",
                bot=name,
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
                f"this token belongs to bot {name!r}, not {hello.bot_name!r}",
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
        slog.info("bot connected", peer=session.peer, version=hello.bot_version)
        reader = asyncio.create_task(self._read(it, session))
        writer = asyncio.create_task(self._write(context, session))
        session.writer = writer
        arena.live.add(session)
        try:
            await writer
        except asyncio.CancelledError:  # the transport ended the call (peer gone, oversized)
            arena.metrics.count_stream_error(name, "transport")
            raise
        finally:
            reader.cancel()
            writer.cancel()
            arena.live.discard(session)
            arena.unregister(session)
            slog.info("bot disconnected")
        if session.end_status is not None:
            # (logged by BotSession.kill already; counted here as the call's status)
            arena.metrics.errors.labels(code_pb2.Code.Name(session.end_status.code)).inc()
            await context.abort_with_status(rpc_status.to_status(session.end_status))

    async def _write(self, context: grpc.aio.ServicerContext[Any, Any], s: BotSession) -> None:
        """Send the session's queue. With Hello.max_batch >= 2, every message waiting when the
        writer wakes, or queued during one more turn of the loop, goes out in one
        PlayResponse.batch (at most max_batch of them); the first
        message, the Welcome, always goes alone, and so does a fatal StreamError (kill() empties
        the queue before queueing it)."""
        loop = asyncio.get_running_loop()
        queue = s.queue
        limit = s.max_batch
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
                    # so fewer, larger writes save CPU. A bot whose messages come less than
                    # WRITE_LINGER_S apart (many tables at once) waits that long; any other
                    # waits one turn of the loop. At 16 tables: 0.63 -> 0.51 writes per move
                    # with one turn, 0.51 -> 0.37 with the linger, and about 10% less server
                    # CPU per move.
                    await asyncio.sleep(WRITE_LINGER_S if s.gap < WRITE_LINGER_S else 0)
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
            log.info("bot stream write ended", bot=s.bot_name, error=repr(exc)[:200])

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
                    for act in acts:  # each exactly as if it had come alone
                        self._action(session, act, limits.check_action(act))
                    continue
                bad = limits.check(req)
                if bad is not None:
                    session.stream_error(
                        grpc.StatusCode.INVALID_ARGUMENT, bad.reason, bad.message, bad.field
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
                        "empty PlayRequest: set hello, action or ping",
                    )
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the stream broke (the peer went away); the writer ends it
            log.info("bot stream read ended", bot=session.bot_name, error=repr(exc)[:200])
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
        self, session: BotSession, act: bot_pb2.Action, bad: limits.Violation | None
    ) -> None:
        arena = self.arena
        res: bot_pb2.ActionResult | None
        if bad is not None and bad.field != "action.action_id":
            res = bot_pb2.ActionResult(
                request_id=act.request_id if bad.field != "action.request_id" else "",
                code=3,
                reason=bad.reason,
                message=bad.message,
                field=bad.field,
            )
            if act.HasField("action_id"):
                res.action_id = act.action_id
            arena.metrics.illegal.labels(
                session.bot_name, errors_pb2.ErrorReason.Name(bad.reason)[13:].lower()
            ).inc()
        else:
            mid, number = _request_number(act.request_id)
            table, f = arena.lookup(mid)
            if table is None and f is not None:
                table = f.table  # answers after the end: stale, already answered...
            if table is None:
                res = bot_pb2.ActionResult(
                    request_id=act.request_id,
                    code=5,
                    reason=errors_pb2.ERROR_REASON_REQUEST_NOT_FOUND,
                    message="this server has no such request (nor a match it would belong to)",
                )
                if act.HasField("action_id"):
                    res.action_id = act.action_id
                arena.metrics.illegal.labels(session.bot_name, "request_not_found").inc()
                REJECTIONS.log(
                    ("action", "REQUEST_NOT_FOUND"),
                    log.info,
                    "action rejected",
                    bot=session.bot_name,
                    reason="REQUEST_NOT_FOUND",
                    request_id=act.request_id[:100],
                )
            else:
                res = table.submit(
                    session,
                    act.request_id,
                    number,
                    act.action_id if act.HasField("action_id") else None,
                )
        if res is None:
            return  # accepted: no reply, its effects arrive as events
        arena.rejected[session.bot_name] += 1
        out = bot_pb2.PlayResponse()
        out.action_result.CopyFrom(res)
        session.send(out)


class AdminServicer:
    def __init__(self, arena: Arena) -> None:
        self.arena = arena

    async def _auth(self, context: grpc.aio.ServicerContext[Any, Any]) -> None:
        token = bearer(context.invocation_metadata())
        if token is None:
            raise _RejectError(
                grpc.StatusCode.UNAUTHENTICATED,
                errors_pb2.ERROR_REASON_MISSING_TOKEN,
                "send the admin token as metadata 'authorization: Bearer <token>'",
            )
        if self.arena.tokens.is_admin(token):
            return
        if self.arena.tokens.bot_for(token) is not None:
            raise _RejectError(
                grpc.StatusCode.PERMISSION_DENIED,
                errors_pb2.ERROR_REASON_ADMIN_REQUIRED,
                "this is a bot token; the admin service needs the admin token",
            )
        raise _RejectError(
            grpc.StatusCode.UNAUTHENTICATED,
            errors_pb2.ERROR_REASON_INVALID_TOKEN,
            "unknown token; the admin service needs the server's admin token",
        )

    def handler(self) -> grpc.GenericRpcHandler:
        def unary(
            fn: Callable[[Any, Any], Awaitable[Message]], req: type[Message], res: type[Message]
        ) -> grpc.RpcMethodHandler:
            async def call(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> Message:
                try:
                    await self._auth(context)
                    return await fn(_parse(raw, req), context)
                except _RejectError as rej:
                    await _abort(context, rej.status, self.arena.metrics)
                except Exception as exc:
                    if isinstance(exc, grpc.aio.AbortError):
                        raise
                    log.exception("admin call failed", method=fn.__name__)
                    await _abort(
                        context,
                        status_error(
                            grpc.StatusCode.INTERNAL,
                            errors_pb2.ERROR_REASON_INTERNAL,
                            f"server bug in {fn.__name__}: {type(exc).__name__}; please report",
                        ),
                        self.arena.metrics,
                    )

            return grpc.unary_unary_rpc_method_handler(
                call, request_deserializer=_identity, response_serializer=res.SerializeToString
            )

        async def watch(raw: bytes, context: grpc.aio.ServicerContext[Any, Any]) -> None:
            try:
                await self._auth(context)
                req = _parse(raw, admin_pb2.WatchMatchRequest)
            except _RejectError as rej:
                await _abort(context, rej.status, self.arena.metrics)
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
                    request_deserializer=_identity,
                    response_serializer=admin_pb2.WatchMatchResponse.SerializeToString,
                ),
                "CancelMatch": unary(
                    self.CancelMatch, admin_pb2.CancelMatchRequest, admin_pb2.CancelMatchResponse
                ),
                "ListBots": unary(
                    self.ListBots, admin_pb2.ListBotsRequest, admin_pb2.ListBotsResponse
                ),
            },
        )

    def _not_found(self, match_id: str) -> _RejectError:
        return _RejectError(
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
            raise _RejectError(
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
                await _abort(
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
            await _abort(context, self._not_found(mid).status, arena.metrics)
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
            await _abort(
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
                await table.changed()
            await write(admin_pb2.WatchMatchResponse(match=table.info()))
        except asyncio.CancelledError:  # cut by the janitor, or the call ended
            return


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
            ("grpc.max_concurrent_streams", 1000),
        ]
        self.server = grpc.aio.server(options=opts)
        bots = BotServicer(self.arena)
        self.server.add_generic_rpc_handlers(
            (
                grpc.method_handlers_generic_handler(
                    "uno.v1.BotService",
                    {
                        "Play": grpc.stream_stream_rpc_method_handler(
                            bots.Play,
                            request_deserializer=_identity,
                            response_serializer=wire.serialize,
                        )
                    },
                ),
                AdminServicer(self.arena).handler(),
            )
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
        self._janitor: asyncio.Task[None] | None = None

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
        self._janitor = asyncio.get_running_loop().create_task(self._janitor_loop())
        return self.port

    async def _janitor_loop(self) -> None:
        """Once a second: cut streams whose reader took nothing for stall_seconds while a
        message waited, and apply the retention."""
        arena = self.arena
        loop = asyncio.get_running_loop()
        limit = self.config.stall_seconds
        while True:
            await asyncio.sleep(min(1.0, limit / 4))
            try:
                now = loop.time()
                # every live stream, also one already ended (killed) whose last write is stuck
                for s in list(arena.live):
                    since = s.writing_since
                    if since is not None and now - since > limit:
                        s.kill(
                            grpc.StatusCode.RESOURCE_EXHAUSTED,
                            errors_pb2.ERROR_REASON_SLOW_CONSUMER,
                            f"bot {s.bot_name} read nothing for {limit:g} s while messages waited",
                        )
                        if s.writer is not None:
                            s.writer.cancel()
                for w in list(arena.watchers):
                    since = w.writing_since
                    if since is not None and now - since > limit and not w.cut:
                        w.cut = True
                        if w.task is not None:
                            w.task.cancel()
                arena.prune()
            except Exception:  # never let a bug here stop the janitor
                log.exception("janitor failed")

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
        running = [t for t in arena.running.values() if t.task is not None]
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
        if self._janitor is not None:
            self._janitor.cancel()
        await self.server.stop(grace=2)
        if self._metrics_server is not None:
            self._metrics_server.shutdown()
            self._metrics_server.server_close()
        arena.deal_pool.shutdown(wait=False, cancel_futures=True)
        log.info("server stopped", running=len(arena.running), finished=len(arena.finished))


async def _set_health(servicer: Any, name: str, status: Any) -> None:
    result = servicer.set(name, status)
    if asyncio.iscoroutine(result):
        await result
