"""What the reports show must be what the results say (three findings of an examination):

* the rating chart drew a bot the results bound on one side only at the fit's estimate (the
  prior's, -2285 for an always-last bot), which also set the axis and squeezed the other bots'
  bars to about 20 px, and capped its open end at the chart's edge as if it were finite;
* the weight of places 2-4 read "0.00 ± 0.50", though the weight is never negative;
* ``tournament verify`` showed two digests that differ at their 41st character as the same
  37 characters, quotes left open.
"""

from __future__ import annotations

import json
import re
from types import SimpleNamespace
from typing import Any

from uno_tournament.report import BotStats, Summary, loser_weight_text, svg_chart
from uno_tournament.verify_reports import _difference

from .helpers import bot_stats

INF = float("inf")


def _bot(name: str, rating: float, low: float, high: float) -> BotStats:
    return bot_stats(name, rating, 50.0, low, high, hands=40, wins=10, win_rate=0.25, decisions=100)


def _summary(bots: list[BotStats], ratings: Any = None) -> Summary:
    return Summary("t", 160, 160, ratings, bots, {}, {}, {}, "")


def _rows(svg: str) -> dict[str, str]:
    """The SVG of each bot's row (from its label to the next label or the axis)."""
    labels = list(re.finditer(r"<text x='162' y='(\d+)' text-anchor='end'>([^<]+)</text>", svg))
    axis = svg.index("<line x1='170' y1=")
    ends = [m.start() for m in labels[1:]] + [axis]
    return {m.group(2): svg[m.end() : end] for m, end in zip(labels, ends, strict=True)}


def _caps(row: str) -> list[float]:
    """The x of each end cap in a row (a short vertical line)."""
    return [
        float(m.group(1))
        for m in re.finditer(r"<line x1='([\d.]+)' y1='\d+' x2='\1' y2='\d+' stroke='#357'/>", row)
    ]


def test_the_chart_draws_a_one_sided_rating_as_its_limit_and_an_arrow_not_an_estimate() -> None:
    s = _summary(
        [
            _bot("top1", 180.0, 95.0, +INF),  # the results bound it below only
            _bot("a", 60.0, -40.0, 160.0),
            _bot("b", -20.0, -120.0, 80.0),
            _bot("c", -70.0, -170.0, 30.0),
            _bot("last1", -2285.0, -INF, -300.0),  # above only; -2285 is the prior's
        ]
    )
    svg = svg_chart(s)
    # the prior's estimates are nowhere: no dot, no tooltip, no axis tick near them
    assert "2285" not in svg and "+180.0" not in svg
    ticks = [int(t) for t in re.findall(r"text-anchor='middle'>([-+]\d+)</text>", svg)]
    assert ticks and min(ticks) >= -400 and max(ticks) <= 300, ticks
    rows = _rows(svg)
    assert set(rows) == {"top1", "a", "b", "c", "last1"}
    for name in ("top1", "last1"):
        assert "<circle" not in rows[name] and "<polygon" in rows[name], rows[name]
    for name in ("a", "b", "c"):
        assert rows[name].count("<circle") == 1 and "<polygon" not in rows[name]
    # the tooltips read like the leaderboard: the limit, the interval, which side is open
    assert "<title>last1: ≤ -300 (-inf, -300] (one-sided: the results bound it above only)" in svg
    assert "<title>top1: ≥ +95 [+95, +inf) (one-sided: the results bound it below only)" in svg
    assert "<title>a: +60.0 [-40, +160]</title>" in svg  # two-sided bots as before
    # the axis spans the limits and the other intervals: a's bar is wide, not ~20 px
    a_caps = _caps(rows["a"])
    assert len(a_caps) == 2 and a_caps[1] - a_caps[0] > 150, a_caps
    # an open end is an arrowhead at the chart's edge (x 170 or 730), not an end cap there
    left, right = 170.0, 730.0
    last_caps, top_caps = _caps(rows["last1"]), _caps(rows["top1"])
    assert len(last_caps) == 1 and left < last_caps[0] < right
    assert len(top_caps) == 1 and left < top_caps[0] < right
    assert re.search(r"<polygon points='170\.0,", rows["last1"]), rows["last1"]
    assert re.search(r"<polygon points='730\.0,", rows["top1"]), rows["top1"]


def _ratings(weight: float, se: float) -> Any:
    return SimpleNamespace(
        places="discounted",
        loser_weight=weight,
        loser_weight_se=se,
        loser_weight_prior=None,
        unmeasured=0,
    )


def test_the_weight_of_places_2_to_4_is_never_shown_below_0() -> None:
    text = _summary([], _ratings(0.0, 0.255)).model_text
    assert "±" not in text, text
    assert "Places 2-4 weigh 0.00 (95% interval 0.00 to 0.50, clipped at 0" in text, text
    # away from the boundary the numbers are the same as before, as an interval
    text = _summary([], _ratings(0.46, 0.19)).model_text
    assert "Places 2-4 weigh 0.46 (95% interval 0.09 to 0.83) of going out" in text, text
    assert loser_weight_text(0.1, 0.1) == (
        "0.10 (95% interval 0.00 to 0.30, clipped at 0: a weight is never negative)"
    )


def _json_bytes(data: dict[str, Any]) -> bytes:
    return json.dumps(data, indent=1).encode()


def _quoted(line: str) -> list[str]:
    """The quoted values of a verify line, closed quotes and all."""
    return re.findall(r'"[^"]*"', line)


def test_verify_shows_where_two_long_strings_differ() -> None:
    digests = "98c5604c8fc682621f783a7d68f01bea2490c9f3e7a1" + "0123456789ab" * 4
    edited = digests[:40] + "0" + digests[41:]  # the 41st character, in the 4th hand
    assert digests[40] == "e" and len(digests) == 92
    theirs = _json_bytes({"chain": {"hands_digests": edited, "head": "x"}})
    ours = _json_bytes({"chain": {"hands_digests": digests, "head": "x"}})
    line = _difference("results.json", theirs, ours)
    assert line is not None
    assert line.startswith("chain.hands_digests is "), line
    shown = _quoted(line)
    assert len(shown) == 2 and shown[0] != shown[1], line
    assert "[0]" in shown[0] and "[e]" in shown[1], line
    assert "character 41 of 92" in line and "hand 4 in schedule order" in line, line
    assert line.count('"') % 2 == 0 and "..." not in line, line


def test_verify_names_the_entry_of_a_list_or_a_key_whose_string_differs() -> None:
    long = "x" * 30 + "0123456789" * 3
    theirs = _json_bytes({"names": [long, long[:-1] + "!"], "chain": {}})
    ours = _json_bytes({"names": [long, long], "chain": {}})
    line = _difference("results.json", theirs, ours)
    assert line is not None and line.startswith("names[1] is "), line
    assert "[!]" in line and "[9]" in line and "character 60 of 60" in line, line
    col = "ab" * 30
    theirs = _json_bytes(
        {"chain": {"column_digests": {"hands.points": col[:44] + "zz" + col[46:]}}}
    )
    ours = _json_bytes({"chain": {"column_digests": {"hands.points": col}}})
    line = _difference("results.json", theirs, ours)
    assert line is not None and line.startswith("chain.column_digests.hands.points is "), line
    assert "character 45 of 60" in line and "hand 23 in schedule order" in line, line
    # a string that ends where the other goes on
    line = _difference("results.json", _json_bytes({"k": long[:50]}), _json_bytes({"k": long}))
    assert line is not None and "(its end)" in line and "(50 characters, not 60)" in line, line
    # a short string is still shown in full
    line = _difference("results.json", _json_bytes({"k": "abc"}), _json_bytes({"k": "abd"}))
    assert line == 'k is "abc", not "abd":', line
