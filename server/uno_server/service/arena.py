"""The arena: the state of one server. Which bots are connected (their sessions), the matches
running and finished (the registry, its retention and its pages), and match creation.

Creation keeps validation apart from starting: :meth:`Arena.validate` checks a CreateMatch
request alone and gives a :class:`MatchPlan`, and only then does :meth:`Arena._start` look at
what changes over time (connected bots, room for one more match) and deal. Finished matches
shrink to a compact summary and are forgotten after the retention (see :class:`ServerConfig`).
"""

from __future__ import annotations

import asyncio
import bisect
import collections
import concurrent.futures
import hashlib
import hmac
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final

import grpc
import structlog

from uno_server.engine.errors import InvalidRulesError
from uno_server.engine.match import Match
from uno_server.engine.rules import RuleSet
from uno_server.gen.uno.v1 import admin_pb2, bot_pb2, errors_pb2, game_pb2

from . import convert
from .auth import TokenRegistry
from .metrics import ServiceMetrics
from .rejections import RejectError
from .session import BotSession
from .table import ReplayBudget, Seat, Table, TimeControl, make_builtin

log = structlog.get_logger("uno.server")
REPLAY_EVENTS_PER_MIN: Final = 100_000  # events one bot may have sent again by Resume.cursors
WELCOME_SEATS: Final = 1000  # Welcome.seats and BotInfo.seats list at most this many
_BUILTINS: Final = (game_pb2.BUILTIN_BOT_RANDOM, game_pb2.BUILTIN_BOT_HEURISTIC)
PAGE_BYTES: Final = 1024 * 1024  # a ListMatches page stops before passing this


@dataclass
class ServerConfig:
    host: str = "127.0.0.1"
    port: int = 50051
    metrics_port: int | None = None
    admin_token: str = ""
    bots: dict[str, str] = field(default_factory=dict)
    tls_cert: str = ""
    tls_key: str = ""
    unix_socket: str = ""  # also listen on this Unix socket path (same credentials)
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


@dataclass(frozen=True, slots=True)
class MatchPlan:
    """A CreateMatch request after validation and defaults: everything but the deal."""

    rules: RuleSet
    time_control: TimeControl
    dealer: int | None
    players: list[game_pb2.Player]
    seed: int | None  # as asked; None: a random one when the match starts
    labels: dict[str, str]
    key: str  # the idempotency key, "" if none
    fingerprint: bytes  # the parameters after defaults, compared between idempotent calls


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
        self.rejected: collections.Counter[str] = collections.Counter()  # bot -> faults
        self.late: collections.Counter[str] = collections.Counter()  # bot -> late answers
        self.stream_errors: collections.Counter[str] = collections.Counter()
        self.watchers: set[Watcher] = set()
        self.live: set[BotSession] = set()  # every Play stream with a session, until it ends
        self.waiting_hello: collections.Counter[str] = collections.Counter()
        self.waiting_unauthenticated = 0  # Play streams refused their token, reading their Hello
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
            self.metrics.disconnects.labels(old.bot_name).inc()  # a stream that ended
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
                stale_actions=ms.stale_actions,
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
        """Validate and start a match. Raises RejectError with a status on bad input.

        Three steps, in this order: :meth:`validate` (the request alone, no state touched), the
        idempotency key (an earlier call's match, or one being dealt), then :meth:`_start` (the
        bots must be connected, there must be room, and the deal must succeed)."""
        if self.draining:
            raise RejectError(
                grpc.StatusCode.UNAVAILABLE,
                errors_pb2.ERROR_REASON_SHUTTING_DOWN,
                "the server is shutting down and takes no new matches",
            )
        plan = self.validate(req)
        if plan.key:
            known = await self._known_key(plan.key)
            if known is not None:
                return self._idempotent(plan.key, known, plan.fingerprint)
        table = await self._start(plan)
        return table.info(), True

    def validate(self, req: admin_pb2.CreateMatchRequest) -> MatchPlan:
        """The request checked field by field against the rules, the time control and the
        registered bots; raises RejectError naming the first bad field. Changes nothing."""
        seats_given = len(req.seats)
        if seats_given < 2:  # (none at all is refused by the limits already)
            raise RejectError(
                grpc.StatusCode.INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_INVALID_SEATS,
                f"seats: {seats_given} player given; a table has 2-10 seats, one Player each",
                field="seats",
            )
        try:
            rules = convert.rules_from_proto(req.rules, default_seats=seats_given)
        except InvalidRulesError as exc:
            raise RejectError(
                grpc.StatusCode.INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_INVALID_RULES,
                str(exc),
                field=str(exc).split(":")[0],
            ) from exc
        if seats_given != rules.seats:
            raise RejectError(
                grpc.StatusCode.INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_INVALID_SEATS,
                f"seats: {seats_given} players given for rules.seats = {rules.seats}",
                field="seats",
            )
        tc = _time_control(req.time_control)
        dealer = None
        if req.HasField("dealer"):
            if not 0 <= req.dealer < rules.seats:
                raise RejectError(
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
                    raise RejectError(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        errors_pb2.ERROR_REASON_INVALID_SEATS,
                        f"seats[{i}]: no bot named {name!r} is registered with this server "
                        f"(known: {', '.join(sorted(self.tokens.bots)[:20]) or 'none'})",
                        field=f"seats[{i}]",
                    )
                players.append(game_pb2.Player(bot_name=name))
            elif kind == "builtin":
                if player.builtin not in _BUILTINS:
                    raise RejectError(
                        grpc.StatusCode.INVALID_ARGUMENT,
                        errors_pb2.ERROR_REASON_INVALID_SEATS,
                        f"seats[{i}]: unknown built-in bot {player.builtin} "
                        "(BUILTIN_BOT_RANDOM or BUILTIN_BOT_HEURISTIC)",
                        field=f"seats[{i}]",
                    )
                players.append(game_pb2.Player(builtin=player.builtin))
            else:
                raise RejectError(
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
        return MatchPlan(
            rules=rules,
            time_control=tc,
            dealer=dealer,
            players=players,
            seed=req.seed if req.HasField("seed") else None,
            labels=dict(req.labels),
            key=key,
            fingerprint=fingerprint,
        )

    async def _known_key(self, key: str) -> str | None:
        """The match an earlier CreateMatch with this idempotency key made (waiting for it if it
        is being dealt now), or None if the key is new."""
        known = self.by_key.get(key)
        if isinstance(known, asyncio.Future):
            waiting = known
            try:
                known = await asyncio.shield(waiting)
            except asyncio.CancelledError:
                if not waiting.cancelled():
                    raise
                raise RejectError(
                    grpc.StatusCode.ABORTED,
                    errors_pb2.ERROR_REASON_STALE_REQUEST,
                    "a CreateMatch with this idempotency key failed meanwhile; call again",
                ) from None
        return known

    async def _start(self, plan: MatchPlan) -> Table:
        """Deal and start a validated match: its bots must be connected and there must be room
        (checked here, not in :meth:`validate`: both change while a call waits)."""
        players = plan.players
        key = plan.key
        for i, p in enumerate(players):
            if p.HasField("bot_name") and p.bot_name not in self.sessions:
                raise RejectError(
                    grpc.StatusCode.FAILED_PRECONDITION,
                    errors_pb2.ERROR_REASON_BOT_NOT_CONNECTED,
                    f"seats[{i}]: bot {p.bot_name!r} is not connected; start it first",
                    field=f"seats[{i}]",
                )
        if len(self.running) >= self.config.max_matches:
            raise RejectError(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                errors_pb2.ERROR_REASON_TOO_MANY_MATCHES,
                too_many_matches(self.config.max_matches),
            )
        seed = plan.seed if plan.seed is not None else secrets.randbits(63)
        pending: asyncio.Future[str] | None = None
        if key:
            pending = asyncio.get_running_loop().create_future()
            self.by_key[key] = pending
        try:
            match = await self.run_deal(lambda: Match(plan.rules, seed, dealer=plan.dealer))
        except Exception as exc:
            if pending is not None:
                self.by_key.pop(key, None)
                pending.cancel()
            log.error("deal failed", rules=plan.rules.to_dict(), seed=seed, error=repr(exc))
            raise RejectError(
                grpc.StatusCode.INTERNAL,
                errors_pb2.ERROR_REASON_INTERNAL,
                f"dealing the first hand failed ({exc}); please report the rules and the "
                f"seed {seed}",
            ) from exc
        mid, number = self.new_match_id()
        seats = self._seats(players, plan.time_control, seed)
        table = Table(
            mid,
            match,
            seats,
            plan.time_control,
            self.metrics,
            self.session,
            labels=plan.labels,
            idempotency_key=key,
            on_finish=self._on_finish,
            run_deal=self.run_deal,
        )
        table.fingerprint = plan.fingerprint
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
        return table

    def _seats(self, players: list[game_pb2.Player], tc: TimeControl, seed: int) -> list[Seat]:
        """The table's seats: a connected bot's version and push preference, or a built-in AI."""
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
        return seats

    def _idempotent(
        self, key: str, mid: str, fingerprint: bytes
    ) -> tuple[admin_pb2.MatchInfo, bool]:
        t = self.running.get(mid)
        f = self.finished.get(mid)
        theirs = t.fingerprint if t is not None else f.fingerprint if f is not None else None
        if theirs is None:  # forgotten meanwhile
            self.by_key.pop(key, None)
            raise RejectError(
                grpc.StatusCode.ABORTED,
                errors_pb2.ERROR_REASON_STALE_REQUEST,
                "the match of this idempotency key was just forgotten; call again",
            )
        if theirs != fingerprint:
            raise RejectError(
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
                    if name not in self.tokens.bots:  # retired, and this was its last match
                        self.metrics.remove_bot(name)
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
        raise RejectError(
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


def too_many_matches(n: int) -> str:
    """The refusal of a match past ``server.max_matches`` (``n``): "1 match is running", never
    "1 matches are running" (an examination)."""
    if n == 1:
        return "1 match is running (server.max_matches); wait for it to end"
    return f"{n} matches are running (server.max_matches); wait for some to end"


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
            raise RejectError(
                grpc.StatusCode.INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_INVALID_TIME_CONTROL,
                f"time_control.{name}: must be {lo}-{hi}, got {v}",
                field=f"time_control.{name}",
            )
        return v

    bot = tc.takeover_bot or d.takeover_bot
    if bot not in (game_pb2.BUILTIN_BOT_RANDOM, game_pb2.BUILTIN_BOT_HEURISTIC):
        raise RejectError(
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
