"""Axis ticks shared by the report's charts (ratings, sequential timeline, league history)."""

from __future__ import annotations

import math


def nice_step(raw: float) -> float:
    """A round axis step (1, 2 or 5 times a power of ten) at least ``raw``; the charts' ticks."""
    if raw <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return float(m * mag)
    return float(10 * mag)
