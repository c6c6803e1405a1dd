"""bench-tournament's cost figures (issue 25): CPU-ms per hand and the harness ratio."""

from __future__ import annotations

import pytest

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
