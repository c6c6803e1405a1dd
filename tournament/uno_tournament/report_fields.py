"""How each bot's numbers are published in the machine-readable reports (results.json and
leaderboard.csv): which kind of interval bounds its rating, and which numbers stand for
nothing and are left out (cut from :mod:`uno_tournament.report`, at its 800-line limit)."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .report import BotStats


def interval_kind(b: BotStats, ref: str | None, tied: bool = False) -> str:
    """How the results bound a bot's rating: both ways, one way only, or not at all; the
    bot the others are measured from is the ``ref``; ``tied``: the bots are tied exactly
    (:data:`~uno_tournament.standings.TIED_NOTE`), so an interval of no width is no certainty
    (an examination: the CSV's "0.0, 0.0" looked like a collapsed fit)."""
    if math.isnan(b.ci_low) or math.isnan(b.ci_high):
        return "not rated"
    if tied and b.ci_high - b.ci_low < 1e-6:
        return "tied exactly"
    if math.isinf(b.ci_high):
        return "lower limit only"
    if math.isinf(b.ci_low):
        return "upper limit only"
    if b.bot == ref:
        # a frame of one bot (no two bots compared both ways): the others are measured from it
        return "reference"
    return "two-sided"


ONE_SIDED = ("lower limit only", "upper limit only")


def published(b: BotStats, ref: str | None, tied: bool) -> dict[str, Any]:
    """``b``'s fields as the machine-readable reports give them: a rating bound on one side
    only has no estimate and no standard error there (the weak prior's number, -1989 +- 652 for
    a bot that crashed every hand, meant nothing; an examination), only its limit."""
    d = asdict(b)
    if interval_kind(b, ref, tied) in ONE_SIDED:
        d["rating"] = d["se"] = math.nan
    return d


def plain(d: dict[str, Any]) -> dict[str, Any]:
    """``d`` with every float that is not finite (NaN, +-inf) as None: standard JSON."""
    return {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in d.items()}
