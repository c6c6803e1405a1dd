"""Play hands on one shard: start (or reach) the shard's game server, launch its bots, play each
hand as a single-hand match and follow it to its end, retry what a restart cancelled, and keep the
bots' incidents (crashes, restarts, give-ups).

One hand is one single-hand match created with AdminService.CreateMatch (seed = the deal's seed,
dealer 0, idempotency key = the hand id), followed with WatchMatch until it ends. A match
cancelled by a server restart is replayed under the key ``<hand id>#<attempt>``. A server that
stays unreachable for ``faults.startup_timeout_s`` stops the run with a one-line error that says
how to resume (hands in play are not stored). Faults: a seat a stand-in played (the server's
takeover after strikes or a disconnect, or the player's fallback for a bot it gave up on) is
marked ``taken_over``. :class:`Player` is shared by the :class:`~uno_tournament.runner.Runner`
(which stores each hand) and a shard worker of ``--shards N``
(:class:`uno_tournament.worker.ShardWorker`, which sends each hand to the runner).
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import secrets
import socket
import sys
import time
from collections import deque
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO

import grpc
from google.protobuf.message import DecodeError
from google.rpc import error_details_pb2, status_pb2

from uno_server.gen.uno.v1 import admin_pb2, game_pb2
from uno_server.service.convert import rules_to_proto
from uno_server.service.tlsclient import connection_hint

from . import schedule
from .config import TournamentConfig
from .deals_in_play import DealsInPlay
from .endless import ENDLESS_MARK, ENDLESS_TRIES, endless_stop, idle_seats
from .host_relay import HostRelay
from .metrics import TournamentMetrics
from .procs import BotProcess, announce_sandbox
from .progress import LagMonitor, Progress, say_to
from .replay import REPLAY_FORMAT
from .runlog import LOG_NAME, RunLog
from .sandbox import SandboxError
from .shard import ServerProcess, ServerProcessError, Shard
from .standings import places
from .store import HandRecord, SeatRecord
from .wirejson import WireEvents

FALLBACK = {"heuristic": game_pb2.BUILTIN_BOT_HEURISTIC, "random": game_pb2.BUILTIN_BOT_RANDOM}
CAUSES = {
    game_pb2.END_CAUSE_STRIKES: "strikes",
    game_pb2.END_CAUSE_DISCONNECTED: "disconnected",
}
AWAIT_METHOD = "/uno.v1.AdminService/AwaitMatch"
PLAY_METHOD = "/uno.v1.AdminService/PlayMatch"

_TRANSIENT = {
    grpc.StatusCode.UNAVAILABLE,
    grpc.StatusCode.DEADLINE_EXCEEDED,
    grpc.StatusCode.CANCELLED,
    grpc.StatusCode.RESOURCE_EXHAUSTED,
    grpc.StatusCode.NOT_FOUND,
    grpc.StatusCode.INTERNAL,
    grpc.StatusCode.UNKNOWN,
}
_UNREACHABLE = {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED}
INCIDENT_EVENTS = {
    "crash": "bot crashed",
    "restart": "bot restarted",
    "given_up": "bot given up",
}
"""The JSON log's event for each kind of bot incident."""


class RunnerError(Exception):
    """A failure that stops the tournament (bad server, bot that cannot start, ...)."""


def error_reason(err: grpc.aio.AioRpcError) -> str:
    """The ErrorInfo reason of a failed call, or ''."""
    md = err.trailing_metadata() or ()
    for key, value in md:
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            st = status_pb2.Status.FromString(value)
            for d in st.details:
                info = error_details_pb2.ErrorInfo()
                if d.Unpack(info):
                    return str(info.reason)
    return ""


@dataclasses.dataclass(frozen=True)
class Cancelled:
    """A match that ended without its hand: why (its end message) and, for one the server
    ended for never ending, the seats that played no card in it."""

    why: str = ""
    idle: tuple[int, ...] = ()


class Player:
    """Plays hands on one shard: starts (or reaches) its game server, launches the bots, and
    plays each hand spec it is given, handing every finished hand to :meth:`_record`. The
    :class:`Runner` records them in the store; a shard worker of ``--shards N``
    (:class:`uno_tournament.worker.ShardWorker`) sends them to the runner."""

    def __init__(
        self,
        out: Path,
        config: TournamentConfig,
        tournament_id: str,
        *,
        server: str | None = None,
        admin_token: str | None = None,
        server_ca: str | None = None,
        metrics_port: int | None = None,
        metrics_host: str = "127.0.0.1",
        metrics_linger_s: float = 0.0,
        progress: bool = True,
        stream: TextIO | None = None,
        host: str = "127.0.0.1",
        port: int = 0,
        advertise: str = "",
        shard_name: str = "0/1",
        log_dir: Path | None = None,
    ) -> None:
        self.out = out
        self.log_dir = log_dir or out / "logs"
        self.hide: list[Path] = []
        """More folders no bot may see (the league's, for a submission's gate)."""
        self.config = config
        self.tid = tournament_id
        self.server_addr = server
        self.admin_token = admin_token or ""
        self.server_ca = server_ca
        """``--tls-ca`` with ``--server``: the server speaks TLS (uno_server.service.tlsclient)."""
        self.metrics_port = metrics_port
        self.show_progress = progress
        self.stream = stream or sys.stdout
        self.metrics_host = metrics_host
        self.host = host
        self.port = port
        self.advertise = advertise
        """The host name external bots use to reach this shard's server (default: ``host``,
        or this machine's name when ``host`` is 0.0.0.0)."""
        self.shard_name = shard_name
        self.log = RunLog(
            self.log_dir / LOG_NAME, tournament=tournament_id, shard=shard_name, pid=os.getpid()
        )
        """The run's JSON log (:mod:`uno_tournament.runlog`), beside the server's log."""
        self.metrics = TournamentMetrics(tournament_id)
        self.metrics_linger_s = metrics_linger_s
        self.lag = LagMonitor(self.metrics)
        self.names = [b.name for b in config.bots]
        for n in self.names:  # at zero from the start, so that rate() sees a first crash
            self.metrics.bot_crashes.labels(n)
        self.tokens: dict[str, str] = {}
        self.shard: Shard | None = None
        self.channel: grpc.aio.Channel | None = None
        self.admin: Any = None
        self.stop_requested = False
        self.interrupted = False
        self.fatal: BaseException | None = None
        self.server_seen = time.monotonic()
        """When the server last answered (a reply, an event, or an error it sent)."""
        self.rules = rules_to_proto(config.rule_set())
        self._rules_dict = config.rule_set().to_dict()
        """The rules as each replay records them (made once, copied per hand)."""
        tc = config.time_control
        self.time_control = game_pb2.TimeControl(
            decision_ms=tc.decision_ms,
            time_bank_ms=tc.time_bank_ms,
            reconnect_grace_ms=tc.reconnect_grace_ms,
            strikes_before_takeover=config.faults.strikes,
            takeover_bot=FALLBACK[config.faults.fallback],
        )
        self.progress: Progress | None = None
        self.given_up: dict[str, str] = {}
        self._workers: list[asyncio.Task[None]] = []
        self.deals = DealsInPlay()
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="store-writer")
        self._await_match = True
        """Collect each finished match with one AwaitMatch call (False: the server has none, so
        follow it with WatchMatch)."""
        self._play_match = True
        """Create and collect each hand with one PlayMatch call (False: the server has none, so
        CreateMatch, then AwaitMatch)."""
        self._raw_await_for: grpc.aio.Channel | None = None
        self._raw_await_call: Any = None
        self._raw_play_call: Any = None
        self.needed: set[str] | None = None
        """The bots this shard's hands seat (None: every bot); only these are launched."""

    @property
    def public_addr(self) -> str:
        """This shard's server as external bots reach it."""
        addr = self.shard.addr if self.shard is not None else ""
        if not addr:
            return ""
        host, _, port = addr.rpartition(":")
        if self.advertise:
            return f"{self.advertise}:{port}"
        if host in ("0.0.0.0", "::", "[::]"):
            return f"{socket.getfqdn()}:{port}"
        return addr

    async def _record(self, rec: HandRecord) -> None:
        raise NotImplementedError

    def _note_incident(self, bot: str, kind: str, detail: str) -> None:
        """Keep a bot incident (the runner: in the store)."""

    def _stored_note(self) -> str:
        return ""

    def say(self, msg: str) -> None:
        self.stream = say_to(self.stream, msg)  # a reader gone: on without output

    @property
    def bots(self) -> dict[str, BotProcess]:
        return self.shard.bots if self.shard is not None else {}

    @property
    def md(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.admin_token}"),)

    # ------------------------------------------------------------------ setup

    async def _start_shard(self) -> Shard:
        logs = self.log_dir
        logs.mkdir(parents=True, exist_ok=True)
        for b in self.config.bots:
            self.tokens[b.name] = b.token or secrets.token_hex(16)
        if self.server_addr:
            if not self.admin_token:
                raise RunnerError("--server needs --admin-token (or UNO_ARENA_ADMIN_TOKEN)")
            for b in self.config.bots:
                if not b.token and not b.external:
                    raise RunnerError(
                        f"bot {b.name!r}: with --server a launched bot needs a token in the "
                        "config (bots[].token) that the server knows"
                    )
            return Shard(self.server_addr, self.admin_token)
        # the server also listens on a private Unix socket, where sandboxed bots reach it
        server = ServerProcess(
            logs, self.tokens, metrics=True, host=self.host, port=self.port, unix_socket=True
        )
        try:
            addr = await server.start(timeout_s=max(30.0, self.config.faults.startup_timeout_s))
        except ServerProcessError as exc:
            raise RunnerError(str(exc)) from exc
        HostRelay.serve_direct(addr, server.socket_dir)
        self.admin_token = server.admin_token
        return Shard(addr, server.admin_token, server=server)

    async def _connected(self) -> set[str]:
        res = await self.admin.ListBots(admin_pb2.ListBotsRequest(), metadata=self.md, timeout=10)
        self.server_seen = time.monotonic()
        return {b.bot_name for b in res.bots if b.connected}

    async def _launch_bots(self, shard: Shard) -> None:
        want = {b.name for b in self.config.bots} - self.given_up.keys()  # a resume's given up
        if self.needed is not None:
            want &= self.needed
        launched = [b for b in self.config.bots if not b.external and b.name in want]
        try:  # one line: the protections the bots get here (and one per missing one)
            for line in announce_sandbox([b.sandbox for b in launched]):
                self.say(line)
        except SandboxError as exc:
            raise RunnerError(str(exc)) from exc
        for b in launched:
            if self.stop_requested:  # Ctrl-C while the bots start: start no more
                return
            p = BotProcess(
                b,
                self.tokens[b.name],
                shard.addr,
                self.log_dir,
                max_restarts=self.config.faults.max_restarts,
                on_incident=self._incident,
                hide=[
                    *(o.cwd for o in self.config.bots if o.cwd and o.name != b.name),
                    *self.hide,
                ],
            )
            shard.bots[b.name] = p
            try:
                await p.start()
            except OSError as exc:
                raise RunnerError(p.failure(f"cannot run its command ({exc})")) from exc
        deadline = time.monotonic() + self.config.faults.startup_timeout_s
        while not self.stop_requested:  # Ctrl-C: wait for no more of them
            for p in shard.bots.values():
                if p.crashes:
                    raise RunnerError(p.failure(p.last_exit))
            try:
                connected = await self._connected()
            except grpc.aio.AioRpcError as exc:
                raise RunnerError(
                    f"server {shard.addr}: {exc.code().name}: {exc.details()}"
                ) from exc
            missing = sorted(want - connected)
            if not missing:
                return
            if time.monotonic() > deadline:
                name = missing[0]
                if name in shard.bots:
                    raise RunnerError(
                        shard.bots[name].failure(
                            f"did not connect within {self.config.faults.startup_timeout_s:g} s"
                        )
                    )
                raise RunnerError(
                    f"external bot {name!r} did not connect to {shard.addr} within "
                    f"{self.config.faults.startup_timeout_s:g} s"
                )
            await asyncio.sleep(0.2)

    def _incident(
        self, bot: str, kind: str, detail: str, *, count: bool = True, shard: str = ""
    ) -> None:
        """A bot incident: kept, shown, logged and counted (``count``; not when a shard worker
        reports it: the worker's own series counts it)."""
        log = self.log.bind(shard=shard) if shard else self.log
        log.warning(INCIDENT_EVENTS.get(kind, f"bot {kind}"), bot=bot, detail=detail)
        self._note_incident(bot, kind, detail)
        if kind == "crash" and count:
            self.metrics.bot_crashes.labels(bot).inc()
        if kind == "given_up":
            self._give_up(bot, detail, record=False)
        self.say(f"bot {bot}: {kind} ({detail})")

    def _give_up(self, bot: str, why: str, *, record: bool = True) -> None:
        if bot in self.given_up:
            return
        self.given_up[bot] = why
        self.metrics.bot_given_up.labels(bot).set(1)
        if record:
            self.log.warning(INCIDENT_EVENTS["given_up"], bot=bot, detail=why)
            self._note_incident(bot, "given_up", why)
            self.say(f"bot {bot}: given up ({why}); a stand-in plays its seats, each a forfeit")

    # ------------------------------------------------------------------ one hand

    def _unavailable(self, bot: str) -> bool:
        p = self.bots.get(bot)
        return bot in self.given_up or (p is not None and p.given_up)

    async def play(self, spec: schedule.HandSpec) -> HandRecord:
        attempt = 0
        endless = 0  # tries of this hand the server cancelled for never ending
        waited_since: float | None = None
        delay = 0.2
        while True:
            fallback = {b for b in spec.bots if self._unavailable(b)}
            key = spec.hand_id if attempt == 0 else f"{spec.hand_id}#{attempt}"
            req = admin_pb2.CreateMatchRequest(
                seats=[
                    game_pb2.Player(builtin=FALLBACK[self.config.faults.fallback])
                    if b in fallback
                    else game_pb2.Player(bot_name=b)
                    for b in spec.bots
                ],
                rules=self.rules,
                seed=spec.seed,
                dealer=0,
                time_control=self.time_control,
                labels={
                    "tournament": self.tid,
                    "table": str(spec.table),
                    "block": str(spec.block),
                    "deal": str(spec.deal),
                    "rotation": str(spec.rotation),
                },
                idempotency_key=key,
            )
            t0 = time.monotonic()
            raw_play = self._raw_play() if self._play_match else None
            try:
                if raw_play is not None:
                    rec = await self._play_once(spec, req, raw_play, fallback, t0)
                else:
                    res = await self.admin.CreateMatch(req, metadata=self.md, timeout=30)
                    self.server_seen = time.monotonic()
                    rec = await self._follow(spec, res.match, fallback, t0)
            except grpc.aio.AioRpcError as err:
                if raw_play is not None and err.code() == grpc.StatusCode.UNIMPLEMENTED:
                    self._play_match = False  # a server older than PlayMatch: two calls a hand
                    self.log.info("server has no PlayMatch; creating and collecting in two calls")
                    continue
                self._check_server(err)
                reason = error_reason(err)
                if reason == "BOT_NOT_CONNECTED":
                    now = time.monotonic()
                    waited_since = waited_since or now
                    if now - waited_since > self.config.faults.startup_timeout_s:
                        # a bot that stays away: the runner gives up on it
                        connected = await self._connected()
                        for b in spec.bots:
                            if b not in connected:
                                self._give_up(
                                    b,
                                    f"not connected for {self.config.faults.startup_timeout_s:g} s",
                                )
                        waited_since = None
                    await asyncio.sleep(0.25)
                    continue
                if reason == "MATCH_ALREADY_EXISTS":
                    attempt += 1
                    continue
                if err.code() in _TRANSIENT:
                    self.log.info(
                        "hand retried",
                        hand=spec.hand_id,
                        error=f"{err.code().name}: {(err.details() or '')[:200]}",
                    )
                    self._retry()
                    await asyncio.sleep(delay)
                    delay = min(5.0, delay * 2)
                    continue
                raise RunnerError(
                    f"hand {spec.hand_id}: {err.code().name}: {err.details()}"
                ) from err
            if isinstance(rec, Cancelled):  # (server shutdown or an operator): play it again
                why, idle = rec.why, rec.idle
                endless += ENDLESS_MARK in why
                if endless >= ENDLESS_TRIES:
                    # the bots that played no card held it open: given up on, as a crashing
                    # bot is, their seats played by stand-ins (each a forfeit), so it ends
                    idlers = [spec.bots[s] for s in idle if not self._unavailable(spec.bots[s])]
                    if not idlers:
                        raise RunnerError(endless_stop(spec, why))
                    for b in idlers:
                        self._give_up(
                            b,
                            f"held hand {spec.hand_id} open without playing a card ({why}, "
                            f"{ENDLESS_TRIES} tries)",
                        )
                    endless = 0
                self.log.info(
                    "hand played again", hand=spec.hand_id, why=why[:200] or "match cancelled"
                )
                self._retry()
                attempt += 1
                continue
            return rec

    def _check_server(self, err: grpc.aio.AioRpcError) -> None:
        """Note an answer of the server; stop the run when it has been unreachable too long."""
        now = time.monotonic()
        if err.code() not in _UNREACHABLE:
            self.server_seen = now
            return
        grace = self.config.faults.startup_timeout_s
        if now - self.server_seen <= grace:
            return
        done = self.progress.done if self.progress is not None else 0
        planned = self.progress.planned if self.progress is not None else 0
        why = " ".join(f"{err.code().name}: {err.details()}".split())
        why += connection_hint(why, self.server_ca)  # a TLS mistake: what to give
        own = self.shard is not None and self.shard.server is not None
        # the address it knows; the token never (TOKEN, or the environment's, left as it is)
        env = bool(self.admin_token) and os.environ.get("UNO_ARENA_ADMIN_TOKEN") == self.admin_token
        ca = f" --tls-ca {self.server_ca}" if self.server_ca else ""
        token = " (the admin token from UNO_ARENA_ADMIN_TOKEN)" if env else " --admin-token TOKEN"
        hint = "" if own else f" --server {self.server_addr}{ca}{token}"
        raise RunnerError(
            f"lost the server {self.server_addr or 'embedded'}: unreachable for more than "
            f"{grace:g} s ({why}); {done} of {planned} hands stored "
            "(hands in play are played again). "
            f"Start the server again, then: uno-arena tournament resume {self.out}{hint}"
        )

    def _retry(self, *, count: bool = True) -> None:
        if count:
            self.metrics.hand_retries.inc()
        if self.progress is not None:
            self.progress.retries += 1

    def _raw_calls(self) -> bool:
        """Whether the raw calls are made on this player's channel (False without a channel of
        our own: a test's stub, which answers with decoded messages)."""
        channel = self.channel
        if channel is None:
            return False
        if self._raw_await_for is not channel:
            self._raw_await_call = channel.unary_unary(
                AWAIT_METHOD,
                request_serializer=admin_pb2.AwaitMatchRequest.SerializeToString,
                response_deserializer=None,
            )
            self._raw_play_call = channel.unary_unary(
                PLAY_METHOD,
                request_serializer=admin_pb2.PlayMatchRequest.SerializeToString,
                response_deserializer=None,
            )
            self._raw_await_for = channel
        return True

    def _raw_await(self) -> Any:
        """AwaitMatch answering with its encoding, read by :class:`~.wirejson.WireEvents`
        without making a protobuf object per event (None through a test's stub)."""
        return self._raw_await_call if self._raw_calls() else None

    def _raw_play(self) -> Any:
        """PlayMatch answering with its encoding (None through a test's stub)."""
        return self._raw_play_call if self._raw_calls() else None

    async def _answer(self, call: Callable[..., Awaitable[Any]], req: Any) -> Any:
        """``call(req)``'s answer, for an admin call that lasts as long as a match, noting that
        the server was there: when it answers, and when the call fails after it was open over
        a second."""
        sent = time.monotonic()
        try:
            out = await call(req, metadata=self.md)
        except grpc.aio.AioRpcError:
            if time.monotonic() - sent > 1.0:  # the call was open: the server was there
                self.server_seen = time.monotonic()
            raise
        self.server_seen = time.monotonic()
        return out

    def _read(self, wire: WireEvents, answer: bytes, what: str) -> tuple[admin_pb2.MatchInfo, bool]:
        """One AwaitMatch or PlayMatch answer into ``wire``: the MatchInfo and ``truncated``."""
        try:
            head, truncated = wire.feed(answer)
            return admin_pb2.MatchInfo.FromString(head), truncated
        except (ValueError, DecodeError) as exc:
            raise RunnerError(
                f"{what}: the server's answer cannot be read ({exc}); is the server the same "
                "version as the runner?"
            ) from exc

    async def _play_once(
        self,
        spec: schedule.HandSpec,
        req: admin_pb2.CreateMatchRequest,
        raw: Any,
        fallback: set[str],
        t0: float,
    ) -> HandRecord | Cancelled:
        """Create the hand's match and collect it in one PlayMatch call (AwaitMatch for the
        rest of a match of more than 1 MiB of events), then make its record."""
        answer = await self._answer(raw, admin_pb2.PlayMatchRequest(create=req))
        wire = WireEvents()
        final, truncated = self._read(wire, answer, f"hand {spec.hand_id}")
        if truncated and wire.count:
            final, _ = await self._await(final, wire)
        return await self._follow(spec, final, fallback, t0, collected=wire)

    async def _await(
        self, info: admin_pb2.MatchInfo, started: WireEvents | None = None
    ) -> tuple[admin_pb2.MatchInfo, list[game_pb2.Event] | WireEvents]:
        """The match once it stopped running, with its events: one AwaitMatch call per hand (a
        second one only for a match of more than 1 MiB of events). The server sends the events
        in the encoding it made for the seats; :class:`~.wirejson.WireEvents` reads them from
        it (their replay text, and the few the hand record needs), or, through a stub, they
        are decoded in one piece. ``started``: the events read so far (a PlayMatch answer cut
        short), continued after its last sequence."""
        events: list[game_pb2.Event] = []
        raw = self._raw_await()
        wire = WireEvents() if raw is not None else None
        after = 0
        if started is not None and raw is not None:
            wire, after = started, started.last_sequence
        while True:
            req = admin_pb2.AwaitMatchRequest(match_id=info.match_id, after_sequence=after)
            if raw is not None:
                answer = await self._answer(raw, req)
            else:
                res = await self._answer(self.admin.AwaitMatch, req)
            if wire is not None:
                before = wire.count
                final, truncated = self._read(wire, answer, f"match {info.match_id}")
                if not truncated or wire.count == before:
                    return final, wire
                after = wire.last_sequence
                continue
            events.extend(res.events)
            if not res.truncated or not res.events:
                return res.match, events
            after = res.events[-1].sequence

    async def _watch(
        self, info: admin_pb2.MatchInfo
    ) -> tuple[admin_pb2.MatchInfo, list[game_pb2.Event]]:
        """The match's events as a spectator follows them (WatchMatch), for a server without
        AwaitMatch: every event is a message of its own."""
        events: list[game_pb2.Event] = []
        last_seq = 0
        final = info
        for _ in range(20):
            call = self.admin.WatchMatch(
                admin_pb2.WatchMatchRequest(match_id=info.match_id, after_sequence=last_seq),
                metadata=self.md,
            )
            try:
                async for msg in call:
                    self.server_seen = time.monotonic()
                    if msg.WhichOneof("kind") == "match":
                        final = msg.match
                    else:
                        events.append(msg.event)
                        last_seq = msg.event.sequence
                break
            except grpc.aio.AioRpcError as err:
                if err.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                    raise
        return final, events

    async def _follow(
        self,
        spec: schedule.HandSpec,
        info: admin_pb2.MatchInfo,
        fallback: set[str],
        t0: float,
        collected: WireEvents | None = None,
    ) -> HandRecord | Cancelled:
        """The hand record of a match once it stopped running, or why it was cancelled.
        ``collected``: its events, read already (``info`` is then its final MatchInfo)."""
        events: list[game_pb2.Event] | WireEvents
        final = info
        if collected is not None:
            events = collected
        elif self._await_match:
            try:
                final, events = await self._await(info)
            except grpc.aio.AioRpcError as err:
                if err.code() != grpc.StatusCode.UNIMPLEMENTED:
                    raise
                self._await_match = False  # a server older than AwaitMatch: follow instead
                self.log.info("server has no AwaitMatch; following matches with WatchMatch")
        if collected is None and not self._await_match:
            final, events = await self._watch(info)
        if final.state == admin_pb2.MATCH_STATE_RUNNING:
            got = await self.admin.GetMatch(
                admin_pb2.GetMatchRequest(match_id=info.match_id), metadata=self.md, timeout=30
            )
            final = got.match
        if final.state != admin_pb2.MATCH_STATE_FINISHED:
            why = final.end_message
            idle = idle_seats(events, len(final.seats)) if ENDLESS_MARK in why else []
            return Cancelled(why, tuple(idle))
        ended: game_pb2.HandEndedEvent | None = None
        scored: game_pb2.HandScoredEvent | None = None
        timed_out: list[int] = []
        if isinstance(events, WireEvents):  # read on the way in
            if events.ended is not None:
                ended = game_pb2.HandEndedEvent.FromString(events.ended)
            if events.scored is not None:
                scored = game_pb2.HandScoredEvent.FromString(events.scored)
            timed_out = events.timed_out
        else:
            for e in events:  # one pass: the first HandEnded and HandScored, every TimedOut
                kind = e.WhichOneof("kind")
                if kind == "hand_ended":
                    if ended is None:
                        ended = e.hand_ended
                elif kind == "hand_scored":
                    if scored is None:
                        scored = e.hand_scored
                elif kind == "timed_out":
                    timed_out.append(e.timed_out.seat)
        if ended is None:
            return Cancelled()
        points = list(ended.points_held)
        winner = ended.winner
        if scored is not None:
            gained = list(scored.gained)
        else:
            gained = [sum(points) if s == winner else 0 for s in range(len(points))]
        place = places(winner, points)
        timeouts = [0] * len(points)
        for seat in timed_out:
            timeouts[seat] += 1
        seats = []
        for s, bot in enumerate(spec.bots):
            ms = final.seats[s]
            unavailable = bot in fallback
            seats.append(
                SeatRecord(
                    seat=s,
                    bot=bot,
                    place=place[s],
                    points_left=points[s],
                    points_won=gained[s],
                    timeouts=timeouts[s],
                    strikes=ms.strikes,
                    illegal=ms.rejected_actions,  # real faults only: never a late answer
                    late=ms.stale_actions,
                    taken_over=ms.taken_over or unavailable,
                    takeover_cause="unavailable"
                    if unavailable
                    else CAUSES.get(ms.takeover_cause, ""),
                    decisions=ms.decisions,
                    response_ms=list(ms.response_ms),
                )
            )
        actions = [[a.seat, a.action_id] for a in ended.actions]
        replay = {
            "format": REPLAY_FORMAT,
            "tournament": self.tid,
            "hand_id": spec.hand_id,
            "match_id": final.match_id,
            "rules": dict(self._rules_dict),
            "seed": ended.seed,
            "match_seed": spec.seed,
            "dealer": ended.dealer,
            # no tournament seed: it deals every hand of the run (a secret one, or a league's,
            # kept in the 0600 database), and a replay file is what gets handed out
            "schedule": {
                "table": spec.table,
                "block": spec.block,
                "deal": spec.deal,
                "rotation": spec.rotation,
                "table_bots": list(spec.table_bots),
            },
            "bots": list(spec.bots),
            "fallback_seats": [s for s, b in enumerate(spec.bots) if b in fallback],
            "stand_in_seats": [r.seat for r in seats if r.taken_over],
            "actions": actions,
            "result": {"winner": winner, "points_held": points},
            # protobuf events (converted to JSON on the writer thread), or a WireEvents (read from
            # the AwaitMatch answer's encoding: its JSON text is made already)
            "events": events,
        }
        return HandRecord(
            hand_id=spec.hand_id,
            table=spec.table,
            block=spec.block,
            deal=spec.deal,
            rotation=spec.rotation,
            deal_id=spec.deal_id,
            match_seed=spec.seed,
            hand_seed=ended.seed,
            dealer=ended.dealer,
            match_id=final.match_id,
            winner_seat=winner,
            moves=sum(1 for a in ended.actions if a.seat >= 0),
            duration_s=time.monotonic() - t0,
            seats=seats,
            replay=replay,
        )

    async def _skip(self, spec: schedule.HandSpec) -> bool:  # a subclass's (league.remote)
        return False

    async def _worker(self, queue: deque[schedule.HandSpec]) -> None:
        while queue and not self.stop_requested:
            spec = self.deals.pick(queue)  # never two hands of one deal at once (deals_in_play)
            if spec is None:
                await self.deals.wait()
                continue
            try:
                if await self._skip(spec):
                    continue
                await self._record(await self.play(spec))
            except RunnerError as exc:
                self._fail(exc)
                return
            except Exception as exc:  # never a silent stop: one line, and the log has it
                self._fail(RunnerError(f"hand {spec.hand_id}: {type(exc).__name__}: {exc}"))
                return
            finally:  # stored (its end published), skipped, or given up: the deal is free
                self.deals.release(spec)

    def _fail(self, exc: BaseException) -> None:
        if self.fatal is None:
            self.fatal = exc
            self.log.error("run stopped", error=str(exc))
        self.stop_requested = True
        for w in self._workers:
            if w is not asyncio.current_task():
                w.cancel()

    async def _watch_server(self, server: ServerProcess) -> None:
        await server.wait()
        if not self.stop_requested:
            self._fail(
                RunnerError(
                    f"{server.exit_reason()}{self._stored_note()}. "
                    f"Resume with: uno-arena tournament resume {self.out}"
                )
            )

    def _interrupt(self) -> None:
        if self.stop_requested:
            os._exit(130)  # second Ctrl-C: leave at once
        self.interrupted = True
        self.stop_requested = True
        self.say("\nstopping (Ctrl-C again to quit at once) ...")
        for w in self._workers:
            w.cancel()
