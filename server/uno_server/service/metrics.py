"""Prometheus metrics of the game service.

Names follow Prometheus conventions (base units, ``_total`` counters). Labels are bounded: bot
names come from the server's token file, never from a client, and no label carries a match or
hand id.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

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
            "Actions rejected as malformed or not legal, per bot and reason.",
            ["bot", "reason"],
            registry=r,
        )
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
