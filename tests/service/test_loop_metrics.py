"""The per-move metrics (LoopCounter, LoopHistogram) expose exactly what prometheus_client's own
Counter and Histogram would for the same increments and observations."""

from __future__ import annotations

import random

import pytest
from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest

from uno_server.service.metrics import LATENCY_BUCKETS, LoopCounter, LoopHistogram, ServiceMetrics


def _lines(registry: CollectorRegistry) -> list[str]:
    # prometheus_client adds *_created series (a timestamp) that the loop metrics leave out
    return [
        line for line in generate_latest(registry).decode().splitlines() if "_created" not in line
    ]


def test_the_loop_histogram_matches_prometheus_clients_histogram() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    a = LoopHistogram("lat_seconds", "Latency.", ("bot",), LATENCY_BUCKETS, ours)
    b = Histogram("lat_seconds", "Latency.", ["bot"], buckets=LATENCY_BUCKETS, registry=theirs)
    rng = random.Random(7)
    values = [rng.choice(LATENCY_BUCKETS) for _ in range(50)]  # on a bound: le is inclusive
    values += [rng.expovariate(1 / 0.02) for _ in range(500)] + [0.0, 99.0]
    for i, v in enumerate(values):
        bot = f"b{i % 3}"
        a.labels(bot).observe(v)
        b.labels(bot).observe(v)
    a.labels("idle")  # a series created at zero is exposed at zero
    b.labels("idle")
    assert _lines(ours) == _lines(theirs)
    assert ours.get_sample_value("lat_seconds_count", {"bot": "b0"}) == len(values[::3])
    assert ours.get_sample_value("lat_seconds_bucket", {"bot": "b1", "le": "+Inf"}) == len(
        values[1::3]
    )


def test_the_loop_counter_matches_prometheus_clients_counter() -> None:
    ours, theirs = CollectorRegistry(), CollectorRegistry()
    a = LoopCounter("moves", "Moves.", ("source",), ours)
    b = Counter("moves", "Moves.", ["source"], registry=theirs)
    for src in ("bot", "builtin", "timeout"):
        a.labels(src)
        b.labels(src)
    for _ in range(1234):
        a.labels("bot").inc()
        b.labels("bot").inc()
    a.labels("timeout").inc(2.5)
    b.labels("timeout").inc(2.5)
    assert _lines(ours) == _lines(theirs)
    assert ours.get_sample_value("moves_total", {"source": "bot"}) == 1234


def test_wrong_label_counts_and_unsorted_buckets_are_refused() -> None:
    reg = CollectorRegistry()
    c = LoopCounter("x", "X.", ("a", "b"), reg)
    with pytest.raises(ValueError, match="expected labels"):
        c.labels("only-one")
    h = LoopHistogram("y_seconds", "Y.", ("a",), (0.1, 0.2), reg)
    with pytest.raises(ValueError, match="expected labels"):
        h.labels()
    with pytest.raises(ValueError, match="ascending"):
        LoopHistogram("z_seconds", "Z.", (), (0.2, 0.1), CollectorRegistry())


def test_the_service_exposes_moves_and_latency_under_their_documented_names() -> None:
    m = ServiceMetrics(process=False)
    m.add_bot("alice")
    m.moves.labels("bot").inc()
    m.decision_latency.labels("alice").observe(0.003)
    reg = m.registry
    assert reg.get_sample_value("uno_moves_total", {"source": "bot"}) == 1
    assert reg.get_sample_value("uno_moves_total", {"source": "system"}) == 0
    le = {"bot": "alice", "le": "0.005"}
    assert reg.get_sample_value("uno_decision_latency_seconds_bucket", le) == 1
    assert reg.get_sample_value("uno_decision_latency_seconds_bucket", {**le, "le": "0.0025"}) == 0


def test_tune_gc_freezes_startup_objects_and_raises_the_thresholds() -> None:
    import gc

    from uno_server.service.server import GC_THRESHOLDS, tune_gc

    before = gc.get_threshold()
    try:
        tune_gc()
        assert gc.get_threshold() == GC_THRESHOLDS
        assert gc.get_freeze_count() > 1000  # the modules' objects, out of the collector's way
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)
