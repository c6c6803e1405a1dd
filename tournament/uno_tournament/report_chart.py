"""The report's rating chart: one row per bot, its 95% interval as a bar and its estimate as a
dot (:func:`uno_tournament.report.svg_chart` says what each row holds).

A rating the results bound on one side only has no estimate worth drawing (the fit's number
there is the prior's: an examination's always-last bot was drawn at -2285, which also set the
axis and squeezed the other bots' bars to 20 px). Its row is its limit, with an end cap, and an
arrow running from it to the chart's edge on the open side; the axis spans the limits and the
other bots' intervals and estimates, never such an estimate.
"""

from __future__ import annotations

import html
import math
from collections.abc import Callable
from dataclasses import dataclass

from .axis import nice_step

EMPTY = "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'></svg>"


@dataclass(frozen=True)
class Bar:
    """One row of the chart."""

    label: str
    low: float
    high: float
    """The 95% interval; an infinite end is open (an arrow to the chart's edge)."""
    estimate: float | None
    """The dot; ``None`` for a rating the results bound on one side only (no estimate)."""
    title: str
    """The row's tooltip."""


def rating_chart(bars: list[Bar]) -> str:
    """The bars, top to bottom, as an inline SVG with an axis in Elo (0 always shown)."""
    if not bars:
        return EMPTY
    ends = [
        v
        for b in bars
        for v in (b.low, b.high, math.nan if b.estimate is None else b.estimate)
        if math.isfinite(v)
    ]
    lo, hi = min(ends, default=0.0), max(ends, default=0.0)
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    span = hi - lo
    pad = span * 0.05 or 10.0
    # room for an arrow on an open side (an end at -inf or +inf)
    lo -= pad + (span * 0.1 if any(math.isinf(b.low) for b in bars) else 0.0)
    hi += pad + (span * 0.1 if any(math.isinf(b.high) for b in bars) else 0.0)
    left, width, row = 170, 560, 26
    height = row * len(bars) + 50

    def x(v: float) -> float:  # an open end of an interval runs to the chart's edge
        return left + (min(max(v, lo), hi) - lo) / (hi - lo) * width

    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{left + width + 30}' height='{height}' "
        "font-family='sans-serif' font-size='12'>",
        f"<line x1='{x(0):.1f}' y1='10' x2='{x(0):.1f}' y2='{height - 30}' stroke='#bbb' "
        "stroke-dasharray='4 3'/>",
    ]
    for i, b in enumerate(bars):
        y = 22 + i * row
        parts.append(
            f"<text x='{left - 8}' y='{y + 4}' text-anchor='end'>{html.escape(b.label)}</text>"
        )
        parts.append(_open(b, y, x) if b.estimate is None else _two_sided(b, b.estimate, y, x))
    axis_y = height - 30
    parts.append(
        f"<line x1='{left}' y1='{axis_y}' x2='{left + width}' y2='{axis_y}' stroke='#333'/>"
    )
    step = nice_step((hi - lo) / 6)
    v = math.ceil(lo / step) * step
    while v <= hi:
        parts.append(
            f"<line x1='{x(v):.1f}' y1='{axis_y}' x2='{x(v):.1f}' y2='{axis_y + 5}' "
            f"stroke='#333'/><text x='{x(v):.1f}' y='{axis_y + 18}' "
            f"text-anchor='middle'>{v:+.0f}</text>"
        )
        v += step
    parts.append("</svg>")
    return "".join(parts)


def _cap(x: float, y: int) -> str:
    return f"<line x1='{x:.1f}' y1='{y - 5}' x2='{x:.1f}' y2='{y + 5}' stroke='#357'/>"


def _two_sided(b: Bar, estimate: float, y: int, x: Callable[[float], float]) -> str:
    """The bar between its end caps and the estimate's dot, which holds the tooltip."""
    return (
        f"<line x1='{x(b.low):.1f}' y1='{y}' x2='{x(b.high):.1f}' y2='{y}' "
        "stroke='#357' stroke-width='2'/>"
        f"{_cap(x(b.low), y)}{_cap(x(b.high), y)}"
        f"<circle cx='{x(estimate):.1f}' cy='{y}' r='4' fill='#c33'>"
        f"<title>{html.escape(b.title)}</title></circle>"
    )


def _open(b: Bar, y: int, x: Callable[[float], float]) -> str:
    """A bar with an open end (or two): an end cap at each finite end, an arrowhead at the
    chart's edge for each open one, no dot; the row holds the tooltip."""
    x_lo, x_hi = x(b.low), x(b.high)  # an infinite end is clamped to the chart's edge
    out = [
        f"<g><title>{html.escape(b.title)}</title>"
        f"<line x1='{x_lo:.1f}' y1='{y}' x2='{x_hi:.1f}' y2='{y}' stroke='#357' "
        "stroke-width='2'/>"
    ]
    for end, at, back in ((b.low, x_lo, 8.0), (b.high, x_hi, -8.0)):
        if math.isfinite(end):
            out.append(_cap(at, y))
        else:
            out.append(
                f"<polygon points='{at:.1f},{y} {at + back:.1f},{y - 4} {at + back:.1f},{y + 4}' "
                "fill='#357'/>"
            )
    out.append("</g>")
    return "".join(out)
