"""Prometheus metrics of the game service.

Names follow Prometheus conventions (base units, ``_total`` counters). Labels are bounded: bot
names come from the server's token file, never from a client, and no label carries a match or
hand id.

Every label set that can be known in advance is created at zero (:meth:`ServiceMetrics.add_bot`
for each bot of the token file, every reason and cause from the protocol's enums), so that
``rate()`` and ``increase()`` see a bot's first timeout, takeover or error: a series born at its
first increment has no earlier sample to rise from.

A bot's series go with the bot: :meth:`ServiceMetrics.remove_bot` removes every series labelled
with it (a retired bot's), so that a server on which bots come and go (``league run``) keeps a
page the size of the bots it has now.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar

from prometheus_client import (
    GC_COLLECTOR,
    PLATFORM_COLLECTOR,
    PROCESS_COLLECTOR,
    CollectorRegistry,
    Counter,
    Gauge,
)
from prometheus_client.metrics_core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from uno_server.gen.uno.v1 import errors_pb2, game_pb2

LATENCY_BUCKETS = (
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0,
    7.5, 10.0, 15.0, 30.0, 60.0, 120.0, 300.0, 600.0,
)  # fmt: skip
"""Bounds of uno_decision_latency_seconds, up to the longest decision a match may give
(TimeControl.decision_ms, 50-600000 ms): a decision that timed out counts at its deadline, so
``histogram_quantile`` must be able to answer with any ``decision_ms``. They stopped at 5 s, and
with ``decision_ms`` 7000 a p99 of timeouts read 5 (an examination). A deadline the time bank
lengthened past 600 s counts in +Inf only."""

# label values known in advance: created at zero (see the module docstring)
REASONS: tuple[str, ...] = tuple(
    v.name[13:].lower() for v in errors_pb2.ErrorReason.DESCRIPTOR.values if v.number
)
STREAM_REASONS: tuple[str, ...] = (*REASONS, "transport")
LATE_REASONS: tuple[str, ...] = ("stale_request", "already_answered", "deadline_passed")
"""The reasons of late answers (ActionResult code ABORTED): uno_late_actions_total's."""
FAULT_REASONS: tuple[str, ...] = tuple(r for r in REASONS if r not in LATE_REASONS)
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


_Child = TypeVar("_Child")


class LoopCount:
    """One series of a :class:`LoopCounter`: a plain number, no lock."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value = 0.0

    def inc(self, amount: float = 1.0) -> None:
        self.value += amount


class _LoopFamily(Generic[_Child]):
    """What :class:`LoopCounter` and :class:`LoopHistogram` share: a name, label names, and one
    child per label set, created on first use (at zero) and registered as a collector."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: tuple[str, ...],
        registry: CollectorRegistry,
    ) -> None:
        self.name = name
        self.documentation = documentation
        self.labelnames = labelnames
        self._children: dict[tuple[str, ...], _Child] = {}
        registry.register(self)

    def _new_child(self) -> _Child:
        raise NotImplementedError

    gone: set[str] | frozenset[str] = frozenset()
    """Values of the label ``bot`` whose series were removed (:meth:`remove_where`): a new
    child of one is handed out, not kept (see :class:`BotCounter`)."""

    def labels(self, *values: str) -> _Child:
        child = self._children.get(values)
        if child is None:
            if len(values) != len(self.labelnames):
                raise ValueError(f"{self.name}: expected labels {self.labelnames}, got {values}")
            if self.gone and "bot" in self.labelnames:
                if values[self.labelnames.index("bot")] in self.gone:
                    return self._new_child()
            child = self._children[values] = self._new_child()
        return child

    def remove_where(self, label: str, value: str) -> None:
        """Drop every series whose ``label`` is ``value`` (none: nothing happens). A child
        someone still holds keeps counting, unseen: it is no longer exported."""
        i = self.labelnames.index(label)
        for key in [k for k in self._children if k[i] == value]:
            del self._children[key]


class LoopCounter(_LoopFamily[LoopCount]):
    """A labelled counter for the per-move path, written only by the event loop's thread.

    prometheus_client's Counter takes a lock and checks its state on every ``inc``, which costs
    about a microsecond a move; this one adds to a plain number and builds the samples only when
    Prometheus scrapes (from another thread: a reader sees each number before or after an
    update, never a torn one). Same exposition: ``<name>_total`` per label set, created at zero
    by :meth:`labels`."""

    def _new_child(self) -> LoopCount:
        return LoopCount()

    def describe(self) -> list[Metric]:
        return [CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)]

    def collect(self) -> Iterator[Metric]:
        fam = CounterMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for values, child in list(self._children.items()):
            fam.add_metric(list(values), child.value)
        yield fam


class LoopObservations:
    """One series of a :class:`LoopHistogram`: counts per bucket (not cumulative) and a sum."""

    __slots__ = ("bounds", "counts", "sum")

    def __init__(self, bounds: tuple[float, ...]) -> None:
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last: above every bound (+Inf only)
        self.sum = 0.0

    def observe(self, amount: float) -> None:
        # bisect_left: the first bound >= amount, as Prometheus' "le" (less or equal) wants
        self.counts[bisect_left(self.bounds, amount)] += 1
        self.sum += amount


class LoopHistogram(_LoopFamily[LoopObservations]):
    """A labelled histogram for the per-move path, written only by the event loop's thread: an
    observation is one bisect and two additions, no lock (see :class:`LoopCounter`). Same
    exposition as prometheus_client's Histogram: cumulative ``_bucket`` samples with ``le``,
    ``_count`` and ``_sum``."""

    def __init__(
        self,
        name: str,
        documentation: str,
        labelnames: tuple[str, ...],
        buckets: tuple[float, ...],
        registry: CollectorRegistry,
    ) -> None:
        if list(buckets) != sorted(set(buckets)):
            raise ValueError(f"{name}: buckets must be distinct and ascending, got {buckets}")
        self.buckets = buckets
        super().__init__(name, documentation, labelnames, registry)

    def _new_child(self) -> LoopObservations:
        return LoopObservations(self.buckets)

    def describe(self) -> list[Metric]:
        return [HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)]

    def collect(self) -> Iterator[Metric]:
        fam = HistogramMetricFamily(self.name, self.documentation, labels=self.labelnames)
        for values, child in list(self._children.items()):
            counts = child.counts[:]  # one consistent copy: _count is the +Inf bucket
            total = child.sum
            cumulative = []
            acc = 0
            for bound, n in zip(self.buckets, counts, strict=False):
                acc += n
                cumulative.append((_le(bound), acc))
            cumulative.append(("+Inf", acc + counts[-1]))
            fam.add_metric(list(values), cumulative, total)
        yield fam


def _le(bound: float) -> str:
    """A bucket bound as prometheus_client writes it (``0.005``, ``1.0``)."""
    return str(floatToGoString(bound))  # type: ignore[no-untyped-call]


def add_process_collectors(registry: CollectorRegistry, process: str) -> None:
    """``process_*`` (CPU, memory, open files) and ``python_*`` (GC, version) series of this
    process, as the default registry has them, labelled ``process`` (``server``, ``runner``):
    the runner's metrics page carries its own and its embedded server's, which must not clash."""
    for c in (PROCESS_COLLECTOR, PLATFORM_COLLECTOR, GC_COLLECTOR):
        registry.register(Labelled(c, {"process": process}))


class BotCounter(Counter):
    """A prometheus_client Counter whose first label is ``bot``, whose series of a removed bot
    stay removed (:meth:`ServiceMetrics.remove_bot`).

    A retired bot's stream may outlive its series: its end counts a disconnect and perhaps a
    ``transport`` stream error, its last answers a fault or a late answer. Each would create a
    series again, a few per bot, on and on in a league. Such a count goes to a series of its own
    that is never exported, until the name is registered again (:meth:`ServiceMetrics.add_bot`).
    """

    gone: set[str] | frozenset[str] = frozenset()
    """The removed bots (shared by every counter of one ServiceMetrics)."""
    detached: BotCounter | None = None
    """Where a removed bot's counts go: unlabelled, on no registry."""
    label_order: tuple[str, ...] = ()

    def labels(self, *labelvalues: Any, **labelkwargs: Any) -> BotCounter:
        bot = labelvalues[0] if labelvalues else labelkwargs.get("bot")
        if bot in self.gone and self.detached is not None:
            return self.detached
        return super().labels(*labelvalues, **labelkwargs)

    def remove_bot(self, bot: str) -> None:
        """Remove every series of ``bot`` (each label set this counter has with it)."""
        keys = {
            tuple(smp.labels[n] for n in self.label_order)
            for fam in self.collect()
            for smp in fam.samples
            if smp.labels.get("bot") == bot
        }
        for key in keys:
            self.remove(*key)


class ServiceMetrics:
    """All metrics of one server, on their own registry (so tests can run several servers)."""

    def __init__(self, registry: CollectorRegistry | None = None, *, process: bool = True) -> None:
        self.registry = r = registry or CollectorRegistry()
        self._removed: set[str] = set()  # bots whose series remove_bot removed
        self._per_bot: list[BotCounter] = []  # every counter labelled with a bot
        if process:
            add_process_collectors(r, "server")
        self.hands = Counter("uno_hands_total", "Hands finished.", registry=r)
        self.matches = Counter(
            "uno_matches_total", "Matches finished, by how they ended.", ["outcome"], registry=r
        )
        # the two metrics of every move: lock-free, written by the event loop's thread only
        self.moves = LoopCounter(
            "uno_moves", "Actions applied, by who decided them.", ("source",), registry=r
        )
        self.decision_latency = LoopHistogram(
            "uno_decision_latency_seconds",
            "Time from sending a decision request to receiving the accepted answer, per bot; "
            "a decision that timed out counts at its deadline (the time the bot was given).",
            ("bot",),
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.decision_latency.gone = self._removed
        self.timeouts = self._bot_counter(
            "uno_timeouts_total", "Decisions a bot did not answer in time.", ["bot"], registry=r
        )
        self.illegal = self._bot_counter(
            "uno_illegal_actions_total",
            "Faults: actions rejected for any reason but lateness, per bot and reason (malformed, "
            "over a limit, not legal now, another bot's seat, an unknown request, a seat taken "
            "over); late answers are in uno_late_actions_total.",
            ["bot", "reason"],
            registry=r,
        )
        self.late = self._bot_counter(
            "uno_late_actions_total",
            "Late answers, per bot and reason: answers to a request that had already closed "
            "(stale_request: superseded, expired or the hand moved on; already_answered; "
            "deadline_passed). A correct bot gets some; not faults.",
            ["bot", "reason"],
            registry=r,
        )
        self.stream_errors = self._bot_counter(
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
        self.disconnects = self._bot_counter(
            "uno_disconnects_total", "Bot streams that ended, per bot.", ["bot"], registry=r
        )
        self.takeovers = self._bot_counter(
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

    def _bot_counter(
        self,
        name: str,
        documentation: str,
        labelnames: list[str],
        registry: CollectorRegistry,
    ) -> BotCounter:
        """A counter labelled ``bot`` first, which :meth:`remove_bot` empties of a bot."""
        assert labelnames[0] == "bot", labelnames
        c = BotCounter(name, documentation, labelnames, registry=registry)
        c.gone = self._removed
        c.detached = BotCounter(name, documentation, registry=None)
        c.label_order = tuple(labelnames)
        self._per_bot.append(c)
        return c

    def add_bot(self, bot: str) -> None:
        """Create every per-bot series of ``bot`` at zero (when the bot is registered)."""
        self._removed.discard(bot)
        self.decision_latency.labels(bot)
        self.timeouts.labels(bot)
        self.disconnects.labels(bot)
        for reason in FAULT_REASONS:
            self.illegal.labels(bot, reason)
        for reason in LATE_REASONS:
            self.late.labels(bot, reason)
        for reason in STREAM_REASONS:
            self.stream_errors.labels(bot, reason)
        for cause in TAKEOVER_CAUSES:
            self.takeovers.labels(bot, cause)

    def remove_bot(self, bot: str) -> None:
        """Remove every series labelled with ``bot`` (when the bot is gone for good: retired,
        and playing no match). Nothing happens for a bot without series. Counts for it that
        come later (its stream's end) are not exported, until :meth:`add_bot` registers the
        name again; a match still in play keeps its own latency series, unseen, so call this
        once the bot's last match has ended."""
        self._removed.add(bot)
        self.decision_latency.remove_where("bot", bot)
        for c in self._per_bot:
            c.remove_bot(bot)

    def count_stream_error(self, bot: str, reason: int | str) -> None:
        """One fault on a bot's stream (``reason``: an ErrorReason number or a name)."""
        name = (
            errors_pb2.ErrorReason.Name(reason)[13:].lower() if isinstance(reason, int) else reason
        )
        self.stream_errors.labels(bot, name).inc()
        if self.on_stream_error is not None:
            self.on_stream_error(bot)
