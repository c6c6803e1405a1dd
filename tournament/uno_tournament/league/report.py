"""``league report DIR`` and the standings of ``league status``.

Everything comes from the league's store (``league.sqlite``): the versions, the rating history
that ``league run`` records after every refit, and the replacements with their verdicts. The
standings are the last refit's ratings (95% intervals, deal-clustered), strongest first; a
version that was never rated (no league hands yet) is listed after them.

``league report`` writes four files into ``DIR/report`` (or ``--out``): ``league.md``,
``league.csv`` (the standings), ``league.json`` (standings, history, replacements, refusals) and
``league.html`` (the standings and a chart of every version's rating with its interval over the
refits, one colour per bot, each new version marked where it starts; inline SVG, no network
assets, as the tournament report).
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..axis import nice_step
from ..fileread import write_text_atomic
from ..rating_bounds import reference_of
from .store import LeagueStore, Version

__all__ = ["LeagueSummary", "Standing", "summarize", "write_report"]

COLS = ["rank", "version", "author", "state", "hands", "rating", "95% interval", "note"]
PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2")


@dataclass
class Standing:
    version: Version
    rating: float = math.nan
    low: float = math.nan
    high: float = math.nan
    hands: int = 0
    note: str = ""
    history: list[tuple[int, int, float, float, float]] = field(default_factory=list)
    """``(refit, hands in the fit, rating, low, high)``."""


@dataclass
class LeagueSummary:
    folder: str
    refits: list[tuple[int, float, int, str]]
    standings: list[Standing]
    """Rated versions strongest first, then the unrated; refused versions are not here."""
    refused: list[Version]
    replacements: list[dict[str, Any]]

    @property
    def hands(self) -> int:
        return self.refits[-1][2] if self.refits else 0


def summarize(store: LeagueStore, folder: str = "") -> LeagueSummary:
    versions = store.versions()
    by_id = {v.id: v for v in versions}
    refits = store.refits()
    fit_hands = {r[0]: r[2] for r in refits}
    rows: dict[int, Standing] = {
        v.id: Standing(v) for v in versions if v.state in ("active", "retired")
    }
    for refit, vid, rating, low, high, hands in store.history():
        st = rows.get(vid)
        if st is None:
            continue
        st.history.append((refit, fit_hands.get(refit, 0), rating, low, high))
        st.rating, st.low, st.high, st.hands = rating, low, high, hands
    last = refits[-1][0] if refits else None
    for st in rows.values():  # a version absent from the last refit has no current rating
        if st.history and st.history[-1][0] != last:
            st.note = "not in the last refit"
    replacements = []
    for old_id, new_id, at, verdict, test in store.replacements():
        old, new = by_id.get(old_id), by_id.get(new_id)
        if old is None or new is None:
            continue
        replacements.append(
            {
                "old": old.key,
                "new": new.key,
                "retired_at": at,
                "verdict": verdict,
                "llr": test.get("llr"),
                "gap": test.get("gap"),
                "se": test.get("se"),
                "hands": test.get("hands", 0),
            }
        )
        if old_id in rows:
            rows[old_id].note = f"replaced by {new.key}: {verdict}"
    for st in rows.values():
        v = st.version
        if v.state == "retired" and not st.note:
            st.note = v.reason
    rated = sorted((s for s in rows.values() if not math.isnan(s.rating)), key=lambda s: -s.rating)
    unrated = [s for s in rows.values() if math.isnan(s.rating)]
    for s in unrated:
        s.note = s.note or "no league hands yet"
    refused = [v for v in versions if v.state == "refused"]
    return LeagueSummary(folder, refits, rated + unrated, refused, replacements)


def _num(v: float) -> str:
    return "" if math.isnan(v) else f"{v:+.0f}"


def _rating_text(st: Standing) -> str:
    """The rating column: the estimate, or a one-sided rating's limit (the fit's number there is
    its prior's, an artefact)."""
    if math.isinf(st.low) and not math.isinf(st.high) and not math.isnan(st.high):
        return f"≤ {st.high:+.0f}"
    if math.isinf(st.high) and not math.isinf(st.low) and not math.isnan(st.low):
        return f"≥ {st.low:+.0f}"
    return _num(st.rating)


def rank_ranges(standings: list[Standing]) -> list[str]:
    """Each version's rank as the range the 95% intervals allow, strongest first: ``"1"`` when
    its interval lies apart from every other's, ``"1-2"`` when it overlaps a neighbour's (the
    hands have not ordered the two yet, and the order may swap at the next refit); ``""`` for a
    version not rated. A version is placed below another only when its interval lies wholly
    below the other's (an open end, a one-sided rating, reaches as far as it says)."""
    rated = [s for s in standings if not (math.isnan(s.rating) or math.isnan(s.low))]
    ids = {id(s) for s in rated}
    out = []
    for st in standings:
        if id(st) not in ids:
            out.append("")
            continue
        above = sum(1 for o in rated if o is not st and o.low > st.high)
        below = sum(1 for o in rated if o is not st and o.high < st.low)
        best, worst = 1 + above, len(rated) - below
        out.append(str(best) if best == worst else f"{best}-{worst}")
    return out


def reference(s: LeagueSummary) -> str | None:
    """The key of the version the others are measured from, if the last refit has one."""
    return reference_of([(st.version.key, st.low, st.high) for st in s.standings])


def interval_text(s: Standing, ref: str | None) -> str:
    """The 95% interval as the report, ``league.json`` and the page show it: an open end (a
    one-sided rating) as infinity, the version the others are measured from (``ref``: a frame
    of one bot, :func:`reference_of`) as "reference", "" for a version not rated."""
    if math.isnan(s.low):
        return ""
    if s.version.key == ref:
        return "reference"
    left = "(-inf" if math.isinf(s.low) else f"[{s.low:+.0f}"
    right = "+inf)" if math.isinf(s.high) else f"{s.high:+.0f}]"
    return f"{left}, {right}"


def rows(s: LeagueSummary) -> list[list[str]]:
    out = []
    ref = reference(s)
    for rank, st in zip(rank_ranges(s.standings), s.standings, strict=True):
        v = st.version
        out.append(
            [
                rank,
                v.key,
                v.author,
                v.state,
                str(st.hands),
                _rating_text(st),
                interval_text(st, ref),
                st.note,
            ]
        )
    return out


def _header(s: LeagueSummary) -> list[str]:
    when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(s.refits[-1][1])) if s.refits else "-"
    active = sum(1 for st in s.standings if st.version.state == "active")
    return [
        f"{s.hands} hands, {len(s.refits)} refits (last: {when}); {active} active versions, "
        f"{len(s.standings) - active} retired, {len(s.refused)} refused.",
        "Ratings: Elo, one Plackett-Luce fit over every league hand with each version its own "
        "player; 95% intervals from deal-clustered standard errors, centred at the mean. A rank "
        "such as 2-3 is a range: that version's interval overlaps another's, so the hands have "
        "not ordered them yet.",
    ]


def markdown(s: LeagueSummary) -> str:
    lines = [f"# League {s.folder}", "", *_header(s), "", "## Standings", ""]
    lines.append("| " + " | ".join(COLS) + " |")
    lines.append("|" + "---|" * len(COLS))
    for r in rows(s):
        lines.append("| " + " | ".join(_md(c).replace("|", "/") for c in r) + " |")
    if s.replacements:
        lines += ["", "## New versions", "", "| old | new | verdict | gap (Elo) | hands |"]
        lines.append("|---|---|---|---|---|")
        for rp in s.replacements:
            gap = "" if rp["gap"] is None else f"{rp['gap']:+.0f} +- {1.96 * rp['se']:.0f}"
            lines.append(f"| {rp['old']} | {rp['new']} | {rp['verdict']} | {gap} | {rp['hands']} |")
    if s.refused:
        lines += ["", "## Refused", ""]
        for v in s.refused:
            reason = " ".join(v.reason.split())[:300]
            lines.append(f"- {v.key} ({_md(v.author)}): {_md(reason)}")
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    """A stranger's text (an author, a refusal's log tail) in the markdown report: its HTML is
    shown, not rendered (a viewer renders <script> or <img onerror=...> in markdown)."""
    return html.escape(text, quote=False)


def csv_text(s: LeagueSummary) -> str:
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(
        ["rank", "version", "author", "state", "hands", "rating", "low", "high", "note", "ranks"]
    )
    ranges = rank_ranges(s.standings)
    for i, (st, ranks) in enumerate(zip(s.standings, ranges, strict=True), 1):
        v = st.version
        w.writerow(
            [
                i if not math.isnan(st.rating) else "",
                v.key,
                v.author,
                v.state,
                st.hands,
                "" if math.isnan(st.rating) else f"{st.rating:.2f}",
                "" if math.isnan(st.low) else f"{st.low:.2f}",  # an open end: inf / -inf
                "" if math.isnan(st.high) else f"{st.high:.2f}",
                st.note,
                ranks,
            ]
        )
    return buf.getvalue()


def _f(v: float) -> float | None:
    """A number for JSON: NaN and an open end (a one-sided interval) are null."""
    return round(v, 3) if math.isfinite(v) else None


def json_data(s: LeagueSummary) -> dict[str, Any]:
    ref = reference(s)
    return {
        "league": s.folder,
        "hands": s.hands,
        "refits": [{"refit": r, "at": at, "hands": n, "note": note} for r, at, n, note in s.refits],
        "standings": [
            {
                "ranks": ranks,
                "version": st.version.key,
                "name": st.version.name,
                "author": st.version.author,
                "language": st.version.language,
                "state": st.version.state,
                "hands": st.hands,
                "rating": _f(st.rating),
                "low": _f(st.low),
                "high": _f(st.high),
                "interval": interval_text(st, ref),
                "note": st.note,
                "history": [
                    {"refit": r, "hands": n, "rating": _f(x), "low": _f(lo), "high": _f(hi)}
                    for r, n, x, lo, hi in st.history
                ],
            }
            for st, ranks in zip(s.standings, rank_ranges(s.standings), strict=True)
        ],
        "replacements": s.replacements,
        "refused": [{"version": v.key, "author": v.author, "reason": v.reason} for v in s.refused],
    }


def svg_history(s: LeagueSummary) -> str:
    """Each version's rating and 95% interval after every refit (x: hands in the fit), one
    colour per bot; a new version starts with a marked point and its version label."""
    series = [st for st in s.standings if st.history]
    if not series or not s.refits:
        return "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'></svg>"
    xs = [n for _, _, n, _ in s.refits]
    x0, x1 = min(xs), max(xs)
    if x1 == x0:
        x1 = x0 + 1
    # an open end (a one-sided interval) runs to the plot's edge
    ends = [v for st in series for h in st.history for v in h[2:5] if math.isfinite(v)]
    lo, hi = min([*ends, 0.0]), max([*ends, 0.0])
    pad = (hi - lo) * 0.05 or 10.0
    lo, hi = lo - pad, hi + pad
    left, width, top, height = 60, 640, 20, 320
    names = sorted({st.version.name for st in series})
    colour = {  # beyond the palette, hues spread by the golden angle: no two bots alike
        n: PALETTE[i] if len(names) <= len(PALETTE) else f"hsl({i * 137.5 % 360:.0f},70%,42%)"
        for i, n in enumerate(names)
    }

    def px(n: float) -> float:
        return left + (n - x0) / (x1 - x0) * width

    def py(v: float) -> float:
        return top + (hi - min(max(v, lo), hi)) / (hi - lo) * height

    legend_h = 18 * len(names)
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{left + width + 190}' "
        f"height='{top + height + 50 + max(0, legend_h - height)}' font-family='sans-serif' "
        "font-size='12'>",
        f"<line x1='{left}' y1='{py(0):.1f}' x2='{left + width}' y2='{py(0):.1f}' "
        "stroke='#bbb' stroke-dasharray='4 3'/>",
        f"<line x1='{left}' y1='{top + height}' x2='{left + width}' y2='{top + height}' "
        "stroke='#333'/>",
        f"<line x1='{left}' y1='{top}' x2='{left}' y2='{top + height}' stroke='#333'/>",
        f"<text x='{left + width / 2}' y='{top + height + 34}' text-anchor='middle'>"
        "hands in the fit</text>",
    ]
    step = nice_step((hi - lo) / 6)
    v = math.ceil(lo / step) * step
    while v <= hi:
        parts.append(
            f"<text x='{left - 6}' y='{py(v) + 4:.1f}' text-anchor='end'>{v:+.0f}</text>"
            f"<line x1='{left - 4}' y1='{py(v):.1f}' x2='{left}' y2='{py(v):.1f}' stroke='#333'/>"
        )
        v += step
    xstep = nice_step((x1 - x0) / 6)
    n = math.ceil(x0 / xstep) * xstep
    while n <= x1:
        parts.append(
            f"<text x='{px(n):.1f}' y='{top + height + 16}' text-anchor='middle'>{n:.0f}</text>"
        )
        n += xstep
    for st in sorted(series, key=lambda t: t.version.id):
        c = colour[st.version.name]
        pts = [(px(h[1]), py(h[2]), py(h[3]), py(h[4]), h) for h in st.history]
        band = (
            " ".join(f"{x:.1f},{yh:.1f}" for x, _, _, yh, _ in pts)
            + " "
            + " ".join(f"{x:.1f},{yl:.1f}" for x, _, yl, _, _ in reversed(pts))
        )
        key = html.escape(st.version.key)
        parts.append(f"<g class='version' data-version='{key}'>")
        parts.append(f"<polygon points='{band}' fill='{c}' fill-opacity='0.15' stroke='none'/>")
        line = " ".join(f"{x:.1f},{y:.1f}" for x, y, _, _, _ in pts)
        dash = " stroke-dasharray='5 3'" if st.version.state == "retired" else ""
        parts.append(f"<polyline points='{line}' fill='none' stroke='{c}' stroke-width='2'{dash}/>")
        for x, y, _, _, h in pts:
            parts.append(
                f"<circle cx='{x:.1f}' cy='{y:.1f}' r='2.5' fill='{c}'><title>{key} after "
                f"refit {h[0]} ({h[1]} hands): {h[2]:+.0f} [{h[3]:+.0f}, {h[4]:+.0f}]"
                "</title></circle>"
            )
        x, y = pts[0][0], pts[0][1]
        parts.append(  # the version's start, marked and labelled
            f"<line class='version-start' x1='{x:.1f}' y1='{top}' x2='{x:.1f}' "
            f"y2='{top + height}' stroke='{c}' stroke-opacity='0.4'/>"
            f"<text x='{x + 3:.1f}' y='{y - 6:.1f}' fill='{c}'>"
            f"v{html.escape(st.version.version)}</text>"
        )
        parts.append("</g>")
    for i, name in enumerate(names):
        y = top + 10 + 18 * i
        parts.append(
            f"<rect x='{left + width + 20}' y='{y - 9}' width='12' height='12' "
            f"fill='{colour[name]}'/><text x='{left + width + 38}' y='{y + 1}'>"
            f"{html.escape(name)}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def html_report(s: LeagueSummary) -> str:
    def table(head: list[str], body_rows: list[list[str]]) -> str:
        th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in body_rows
        )
        return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"

    repl = table(
        ["old", "new", "verdict", "gap (Elo)", "hands"],
        [
            [
                rp["old"],
                rp["new"],
                rp["verdict"],
                "" if rp["gap"] is None else f"{rp['gap']:+.0f} ± {1.96 * rp['se']:.0f}",
                str(rp["hands"]),
            ]
            for rp in s.replacements
        ],
    )
    refused = "".join(
        f"<li>{html.escape(v.key)} ({html.escape(v.author)}): "
        f"{html.escape(' '.join(v.reason.split())[:300])}</li>"
        for v in s.refused
    )
    header = "".join(f"<p>{html.escape(line)}</p>" for line in _header(s))
    title = html.escape(f"League {s.folder}")
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>{title}</title>
<style>
body{{font-family:sans-serif;margin:2em;color:#222}}
table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}
td:nth-child(2),th:nth-child(2),td:last-child{{text-align:left}}
th{{background:#f2f2f2}}
</style></head><body>
<h1>{title}</h1>
{header}
<h2>Ratings over time</h2>
<p>Each version's rating after every refit, with its 95% interval (shaded); one colour per bot,
a new version starts at its marked line; retired versions dashed.</p>
{svg_history(s)}
<h2>Standings</h2>
{table(COLS, rows(s))}
<h2>New versions</h2>
{repl if s.replacements else "<p>none yet</p>"}
<h2>Refused</h2>
{"<ul>" + refused + "</ul>" if s.refused else "<p>none</p>"}
</body></html>
"""


def write_report(store: LeagueStore, out: Path, folder: str) -> list[Path]:
    """The four files, each written whole and renamed into place."""
    s = summarize(store, folder)
    out.mkdir(parents=True, exist_ok=True)
    files = {
        "league.md": markdown(s),
        "league.csv": csv_text(s),
        "league.json": json.dumps(json_data(s), indent=1) + "\n",
        "league.html": html_report(s),
    }
    written = []
    for name, text in files.items():
        path = out / name
        write_text_atomic(path, text)  # a link or a pipe at the name is replaced, not opened
        written.append(path)
    return written
