"""Prometheus metrics of the game service.

Names follow Prometheus conventions (base units, ``_total`` counters). Labels are bounded: bot
names come from the server's token file, never from a client, and no label carries a match or
hand id.
"""

from __future__ import annotations

from collections.abc import Callable

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

from uno_server.gen.uno.v1 import errors_pb2

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0)


class ServiceMetrics:
    """All metrics of one server, on their own registry (so tests can run several servers)."""

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.hands = Counter("uno_hands_total", "Hands finished.", registry=r)
        self.matches = Counter(
            "uno_matches_total", "Matches finished, by how they ended.", ["outcome"], registry=r
        )
        self.moves = Counter(
            "uno_moves_total", "Actions applied, by who decided them.", ["source"], registry=r
        )
        self.decision_latency = Histogram(
            "uno_decision_latency_seconds",
            "Time from sending a decision request to receiving the accepted answer, per bot.",
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

    def count_stream_error(self, bot: str, reason: int | str) -> None:
        """One fault on a bot's stream (``reason``: an ErrorReason number or a name)."""
        name = (
            errors_pb2.ErrorReason.Name(reason)[13:].lower() if isinstance(reason, int) else reason
        )
        self.stream_errors.labels(bot, name).inc()
        if self.on_stream_error is not None:
            self.on_stream_error(bot)
