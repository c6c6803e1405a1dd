"""bench-tournament's cost figures (issue 25): CPU-ms per hand and the harness ratio."""

from __future__ import annotations

import pytest

from uno_server.benchmarks.server import measure_floor_cpu
from uno_tournament.bench import Measured


def test_per_hand_figures_and_the_harness_ratio() -> None:
    # 100 hands of 50 moves; server 2.0 s and runner 0.5 s of CPU while the tables ran (the
    # runner's whole-process 9 s includes its start-up and is not per-hand work)
    m = Measured("x", 1, 100, 5000, 0, 10.0, 1.0, 2.0, 9.0, 30.0, 0.5)
    assert m.server_ms_per_hand == pytest.approx(20.0)
    assert m.runner_ms_per_hand == pytest.approx(5.0)
    # 25 ms a hand against 50 moves x 100 us of floor = 5 ms
    assert m.harness_ratio(100.0) == pytest.approx(5.0)
    assert m.harness_ratio(250.0) == pytest.approx(2.0)


def test_no_hands_gives_no_division_by_zero() -> None:
    m = Measured("x", 1, 0, 0, 3, 1.0, 1.0, 0.0, 0.0)
    assert m.server_ms_per_hand == m.runner_ms_per_hand == 0.0
    assert m.harness_ratio(70.0) == 0.0


def test_a_paced_floor_keeps_its_pace_and_a_saturated_one_outruns_it() -> None:
    """The floor at a tournament's pace (issue 25): 4 streams asked for 80 round trips a second
    together never go faster than that, while the same floor unpaced, measured right after,
    goes faster than the paced one did (an order, not a quiet-machine margin)."""
    paced_rate, paced_us = measure_floor_cpu(2.0, rate=80.0, streams=4)
    assert 0 < paced_rate <= 80.0 * 1.05
    assert paced_us > 0
    free_rate, free_us = measure_floor_cpu(1.0, streams=4)
    assert free_rate > paced_rate
    assert free_us > 0


@pytest.mark.parametrize("kw", [{"rate": 0.0}, {"rate": -5.0}, {"streams": 0}])
def test_a_floor_refuses_a_pace_it_cannot_keep(kw: dict[str, float]) -> None:
    with pytest.raises(ValueError, match="must be"):
        measure_floor_cpu(1.0, **kw)  # type: ignore[arg-type]
