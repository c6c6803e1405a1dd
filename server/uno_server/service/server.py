"""The grpc.aio server: startup, shutdown and health. What it serves lives beside it:

- :mod:`.arena`: the state of one server (connected bots, the match registry, creation);
- :mod:`.bot_stream`: the Play stream, where bots' untrusted input enters;
- :mod:`.admin`: the AdminService;
- :mod:`.table`: one match in play.

Besides the two services, the server answers gRPC health and reflection, and serves the
Prometheus metrics on their own port. Its janitor cuts streams and spectators that stopped
reading and applies the retention of finished matches.
"""

from __future__ import annotations

import asyncio
import gc
import resource
from typing import Any

import grpc
import structlog
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection, reflection_pb2_grpc

from uno_server.gen.uno.v1 import admin_pb2, bot_pb2, errors_pb2, game_pb2

from . import wire
from .admin import AdminServicer
from .arena import Arena, ServerConfig
from .bot_stream import BotServicer
from .metrics import ServiceMetrics
from .open_calls import BoundedHealth, BoundedReflection, RequestFirst, bound_accept_errors
from .rejections import identity

log = structlog.get_logger("uno.server")

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


HANDSHAKE_TIMEOUT_MS = 10_000
"""A connection that has not finished its HTTP/2 handshake (and TLS's) in this time is closed.
gRPC's default is 120 s: an examination's client opened connections that sent the preface and
nothing more, and held every one of the server's file descriptors with them."""
IDLE_CONNECTION_MS = 30_000
"""A connection with no call for this long is closed (a GOAWAY; a client's next call opens a
new one). Bots hold their Play stream, and spectators their WatchMatch calls, so only a client
that has stopped calling is cut."""
FD_RESERVE = 256
"""File descriptors kept for the server's own files, its metrics page and its logs, below the
process's limit (RLIMIT_NOFILE) when the connections are capped."""


def connection_cap() -> int:
    """The most connections the server accepts at once: the process's file descriptor limit less
    :data:`FD_RESERVE`. Without a cap, a client that opened connections by the thousand took
    every descriptor (gRPC then logged "File descriptor limit reached" and accepted nothing,
    from anyone); with it, the surplus is refused at once and the server keeps working."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY or soft > 2**30:
        return 2**30
    return max(16, soft - FD_RESERVE)


MAX_WATCH_STREAMS = 1024
"""Calls one connection may hold beyond ``max_matches`` (spectators, AwaitMatch)."""


class ArenaServer:
    """Everything one ``uno-arena serve`` runs, startable in process (tests use port 0)."""

    def __init__(self, config: ServerConfig, metrics: ServiceMetrics | None = None) -> None:
        self.config = config
        self.arena = Arena(config, metrics)
        self.health = BoundedHealth()  # calls without a token: bounded (open_calls)
        opts = [
            ("grpc.max_receive_message_length", config.max_message_bytes),
            ("grpc.max_send_message_length", config.max_message_bytes),
            ("grpc.keepalive_time_ms", 20_000),
            ("grpc.http2.min_ping_interval_without_data_ms", 5_000),
            ("grpc.keepalive_permit_without_calls", 1),
            # one connection may carry a call for each match the server runs, and as many
            # watchers again: at 1000, a runner at 1024 tables or a client's 1500 PlayMatch
            # calls on one channel had the surplus refused (RST_STREAM), unlogged, uncounted
            ("grpc.max_concurrent_streams", max(1000, config.max_matches + MAX_WATCH_STREAMS)),
            # connections from anyone who can reach the port: see the constants' notes
            ("grpc.server_handshake_timeout_ms", HANDSHAKE_TIMEOUT_MS),
            ("grpc.max_connection_idle_ms", IDLE_CONNECTION_MS),
            ("grpc.max_allowed_incoming_connections", connection_cap()),
        ]
        self.server = grpc.aio.server(options=opts)
        bots = BotServicer(self.arena)
        # every method, behind the wait for a call's request message (open_calls.RequestFirst)
        self.methods = RequestFirst(self.arena.metrics)
        self.methods.inner += [
            grpc.method_handlers_generic_handler(
                "uno.v1.BotService",
                {
                    "Play": grpc.stream_stream_rpc_method_handler(
                        bots.Play,
                        request_deserializer=identity,
                        response_serializer=wire.serialize,
                    )
                },
            ),
            AdminServicer(self.arena).handler(),
        ]
        self.methods.collect(health_pb2_grpc.add_HealthServicer_to_server, self.health)
        names = (
            bot_pb2.DESCRIPTOR.services_by_name["BotService"].full_name,
            admin_pb2.DESCRIPTOR.services_by_name["AdminService"].full_name,
            health.SERVICE_NAME,
            reflection.SERVICE_NAME,
        )
        self.methods.collect(
            reflection_pb2_grpc.add_ServerReflectionServicer_to_server, BoundedReflection(names)
        )
        self.server.add_generic_rpc_handlers((self.methods,))
        self.port = 0
        self._metrics_server: Any = None
        self._janitor: asyncio.Task[None] | None = None

    async def start(self) -> int:
        bound_accept_errors()  # a flood of failed accepts must not flood the log
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
        if c.unix_socket:  # the same service on a Unix socket: sandboxed bots reach it there
            unix = f"unix:{c.unix_socket}"
            bound = (
                self.server.add_secure_port(unix, creds)
                if c.tls_cert or c.tls_key
                else self.server.add_insecure_port(unix)
            )
            if not bound:
                raise OSError(f"could not listen on {unix}")
        await self.server.start()
        for name in ("", "uno.v1.BotService", "uno.v1.AdminService"):
            await _set_health(self.health, name, health_pb2.HealthCheckResponse.SERVING)
        if c.metrics_port is not None:
            from uno_server.web.guard import start_metrics_server

            self._metrics_server = start_metrics_server(
                c.metrics_port, c.host, self.arena.metrics.registry
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
                keep_pending=True,  # the MatchEnded of each match the drain cancelled
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


__all__ = ["GC_THRESHOLDS", "Arena", "ArenaServer", "ServerConfig", "tune_gc"]
