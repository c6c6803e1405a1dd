"""Prometheus metrics of the game service.

Names follow Prometheus conventions (base units, ``_total`` counters). Labels are bounded: bot
names come from the server's token file, never from a client, and no label carries a match or
hand id.

Every label set that can be known in advance is created at zero (:meth:`ServiceMetrics.add_bot`
for each bot of the token file, every reason and cause from the protocol's enums), so that
``rate()`` and ``increase()`` see a bot's first timeout, takeover or error: a series born at its
first increment has no earlier sample to rise from.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
)
from prometheus_client.metrics_core import Metric
from prometheus_client.registry import Collector

from uno_server.gen.uno.v1 import errors_pb2, game_pb2

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)

# label values known in advance: created at zero (see the module docstring)
REASONS: tuple[str, ...] = tuple(
    v.name[13:].lower() for v in errors_pb2.ErrorReason.DESCRIPTOR.values if v.number
)
STREAM_REASONS: tuple[str, ...] = (*REASONS, "transport")
TAKEOVER_CAUSES: tuple[str, ...] = ("strikes", "disconnected")
MATCH_OUTCOMES: tuple[str, ...] = tuple(
    v.name[10:].lower() for v in game_pb2.EndCause.DESCRIPTOR.values if v.number
)
MOVE_SOURCES: tuple[str, ...] = ("bot", "builtin", "timeout", "system")
ERROR_CODES: tuple[str, ...] = (
    "CANCELLED",
    "UNKNOWN",
    "INVALID_ARGUMENT",
    "DEADLINE_EXCEEDED",
    "NOT_FOUND",
    "ALREADY_EXISTS",
    "PERMISSION_DENIED",
    "RESOURCE_EXHAUSTED",
    "FAILED_PRECONDITION",
    "ABORTED",
    "OUT_OF_RANGE",
    "UNIMPLEMENTED",
    "INTERNAL",
    "UNAVAILABLE",
    "DATA_LOSS",
    "UNAUTHENTICATED",
)


class Labelled:
    """A collector's series with ``labels`` added to every sample."""

    def __init__(self, inner: Collector, labels: dict[str, str]) -> None:
        self.inner = inner
        self.labels = labels

    def collect(self) -> Iterator[Metric]:
        for fam in self.inner.collect():
            out = Metric(fam.name, fam.documentation, fam.type, fam.unit)
            for smp in fam.samples:
                out.samples.append(smp._replace(labels={**smp.labels, **self.labels}))
            yield out


def add_process_collectors(registry: CollectorRegistry, process: str) -> None:
    """``process_*`` (CPU, memory, open files) and ``python_*`` (GC, version) series of this
    process, as the default registry has them, labelled ``process`` (``server``, ``runner``):
    the runner's metrics page carries its own and its embedded server's, which must not clash."""
    for c in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
        registry.register(Labelled(c, {"process": process}))


class ServiceMetrics:
    """All metrics of one server, on their own registry (so tests can run several servers)."""

    def __init__(self, registry: CollectorRegistry | None = None, *, process: bool = True) -> None:
        self.registry = r = registry or CollectorRegistry()
        if process:
            add_process_collectors(r, "server")
        self.hands = Counter("uno_hands_total", "Hands finished.", registry=r)
        self.matches = Counter(
            "uno_matches_total", "Matches finished, by how they ended.", ["outcome"], registry=r
        )
        self.moves = Counter(
            "uno_moves_total", "Actions applied, by who decided them.", ["source"], registry=r
        )
        self.decision_latency = Histogram(
            "uno_decision_latency_seconds",
            "Time from sending a decision request to receiving the accepted answer, per bot; "
            "a decision that timed out counts at its deadline (the time the bot was given).",
            ["bot"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.timeouts = Counter(
            "uno_timeouts_total", "Decisions a bot did not answer in time.", ["bot"], registry=r
        )
        self.illegal = Counter(
            "uno_illegal_actions_total",
            "Actions rejected, per bot and reason: every kind (malformed, over a limit, not "
            "legal, another bot's seat, a closed or unknown request).",
            ["bot", "reason"],
            registry=r,
        )
        self.stream_errors = Counter(
            "uno_stream_errors_total",
            "Faults on a bot's Play stream not tied to one action, per bot and reason "
            "(StreamErrors, fatal ones included; 'transport': the stream ended without a "
            "status from the server, e.g. the peer vanished or sent a message over "
            "max_message_bytes).",
            ["bot", "reason"],
            registry=r,
        )
        self.retained_matches = Gauge(
            "uno_retained_matches", "Finished matches kept as summaries.", registry=r
        )
        self.match_logs = Gauge(
            "uno_match_logs", "Finished matches whose full event log is still kept.", registry=r
        )
        self.watchers = Gauge("uno_watchers", "WatchMatch calls in progress.", registry=r)
        self.on_stream_error: Callable[[str], None] | None = None
        self.disconnects = Counter(
            "uno_disconnects_total", "Bot streams that ended, per bot.", ["bot"], registry=r
        )
        self.takeovers = Counter(
            "uno_takeovers_total",
            "Seats handed to the built-in AI, per bot and cause.",
            ["bot", "cause"],
            registry=r,
        )
        self.active_matches = Gauge("uno_active_matches", "Matches in play.", registry=r)
        self.connected_bots = Gauge(
            "uno_connected_bots", "Bot streams currently connected.", registry=r
        )
        self.errors = Counter(
            "uno_server_errors_total",
            "Requests answered with a gRPC error, by status code.",
            ["code"],
            registry=r,
        )

        for outcome in MATCH_OUTCOMES:
            self.matches.labels(outcome)
        for source in MOVE_SOURCES:
            self.moves.labels(source)
        for code in ERROR_CODES:
            self.errors.labels(code)

    def add_bot(self, bot: str) -> None:
        """Create every per-bot series of ``bot`` at zero (when the bot is registered)."""
        self.decision_latency.labels(bot)
        self.timeouts.labels(bot)
        self.disconnects.labels(bot)
        for reason in REASONS:
            self.illegal.labels(bot, reason)
        for reason in STREAM_REASONS:
            self.stream_errors.labels(bot, reason)
        for cause in TAKEOVER_CAUSES:
            self.takeovers.labels(bot, cause)

    def count_stream_error(self, bot: str, reason: int | str) -> None:
        """One fault on a bot's stream (``reason``: an ErrorReason number or a name)."""
        name = (
            errors_pb2.ErrorReason.Name(reason)[13:].lower() if isinstance(reason, int) else reason
        )
        self.stream_errors.labels(bot, name).inc()
        if self.on_stream_error is not None:
            self.on_stream_error(bot)
