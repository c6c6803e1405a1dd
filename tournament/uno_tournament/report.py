"""Final reports: leaderboard (terminal, Markdown, CSV, JSON), cross-table, likelihood of
superiority and a self-contained HTML report with an inline SVG rating chart.

Ratings are the Plackett-Luce fit of :mod:`uno_tournament.ratings` over every stored hand's
finishing order (first out, then by points left), with seat terms, 95% CIs and standard errors
clustered by deal.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from .config import TournamentConfig
from .ratings import HandResult, Ratings, fit_plackett_luce, likelihood_of_superiority
from .store import HandRecord, Store

FILES = ("leaderboard.md", "leaderboard.csv", "results.json", "report.html")


@dataclass
class BotStats:
    bot: str
    rating: float
    se: float
    ci_low: float
    ci_high: float
    hands: int
    wins: int
    win_rate: float
    mean_points_left: float
    mean_points_won: float
    timeouts: int
    strikes: int
    illegal_actions: int
    crashes: int
    seats_taken_over: int
    decisions: int
    mean_decision_ms: float
    p99_decision_ms: float


@dataclass
class Summary:
    tournament_id: str
    hands: int
    planned: int
    ratings: Ratings | None
    bots: list[BotStats]
    cross: dict[str, dict[str, tuple[int, int, int]]]
    """cross[a][b] = (hands a finished ahead of b, behind, tied)."""
    los: dict[str, dict[str, float]]
    note: str

    def to_json(self) -> dict[str, Any]:
        r = self.ratings
        return {
            "tournament_id": self.tournament_id,
            "hands": self.hands,
            "planned": self.planned,
            "model": {
                "kind": "plackett-luce",
                "places": r.places if r else None,
                "cluster": r.cluster if r else None,
                "clusters": r.n_clusters if r else 0,
                "converged": r.converged if r else False,
                "seat_elo": [float(x) for x in r.seat_elo] if r else [],
                "note": self.note,
            },
            "leaderboard": [asdict(b) for b in self.bots],
            "cross_table": {
                a: {b: {"ahead": v[0], "behind": v[1], "tied": v[2]} for b, v in row.items()}
                for a, row in self.cross.items()
            },
            "likelihood_of_superiority": self.los,
        }


def _results(hands: list[HandRecord]) -> list[HandResult]:
    return [
        HandResult.from_points(
            h.hand_id, h.deal_id, h.winner, [(s.bot, s.seat, s.points_left) for s in h.seats]
        )
        for h in hands
    ]


def fit(results: list[HandResult], names: list[str]) -> tuple[Ratings | None, str]:
    """The Plackett-Luce fit; falls back to a weak prior (sd 1000 Elo) if a bot's rating is
    unbounded (it never or always wins)."""
    if not results:
        return None, "no hands"
    r = fit_plackett_luce(results, names)
    if r.converged and bool(np.all(np.isfinite(r.elo))) and bool(np.all(np.isfinite(r.se))):
        return r, ""
    r = fit_plackett_luce(results, names, prior_sd_elo=1000.0)
    return r, "maximum likelihood did not converge; fitted with a N(0, 1000 Elo) prior"


def summarize(store: Store, config: TournamentConfig, tid: str, planned: int = 0) -> Summary:
    hands = list(store.hands())
    names_all = [b.name for b in config.bots]
    seen = {s.bot for h in hands for s in h.seats}
    names = [n for n in names_all if n in seen]
    ratings, note = fit(_results(hands), names)
    crashes: dict[str, int] = {}
    for _, bot, _, _ in store.incidents(["crash"]):
        crashes[bot] = crashes.get(bot, 0) + 1
    per: dict[str, dict[str, Any]] = {
        n: {
            "hands": 0,
            "wins": 0,
            "left": 0,
            "won": 0,
            "timeouts": 0,
            "strikes": 0,
            "illegal": 0,
            "taken": 0,
            "decisions": 0,
            "ms": [],
        }
        for n in names_all
    }
    cross = {a: {b: (0, 0, 0) for b in names_all if b != a} for a in names_all}
    for h in hands:
        for s in h.seats:
            p = per[s.bot]
            p["hands"] += 1
            p["wins"] += s.seat == h.winner_seat
            p["left"] += s.points_left
            p["won"] += s.points_won
            p["timeouts"] += s.timeouts
            p["strikes"] += s.strikes
            p["illegal"] += s.illegal
            p["taken"] += s.taken_over
            p["decisions"] += s.decisions
            p["ms"].extend(s.response_ms)
        for x in h.seats:
            for y in h.seats:
                if x.bot == y.bot:
                    continue
                ahead, behind, tied = cross[x.bot][y.bot]
                if x.place < y.place:
                    ahead += 1
                elif x.place > y.place:
                    behind += 1
                else:
                    tied += 1
                cross[x.bot][y.bot] = (ahead, behind, tied)
    stats = []
    for n in names_all:
        p = per[n]
        ms = np.array(p["ms"], dtype=np.float64)
        if ratings is not None and n in ratings.bots:
            i = ratings.index(n)
            rating, se = float(ratings.elo[i]), float(ratings.se[i])
            lo, hi = float(ratings.ci_low[i]), float(ratings.ci_high[i])
        else:
            rating = se = lo = hi = math.nan
        k = max(1, p["hands"])
        stats.append(
            BotStats(
                bot=n,
                rating=rating,
                se=se,
                ci_low=lo,
                ci_high=hi,
                hands=p["hands"],
                wins=p["wins"],
                win_rate=p["wins"] / k,
                mean_points_left=p["left"] / k,
                mean_points_won=p["won"] / k,
                timeouts=p["timeouts"],
                strikes=p["strikes"],
                illegal_actions=p["illegal"],
                crashes=crashes.get(n, 0),
                seats_taken_over=p["taken"],
                decisions=p["decisions"],
                mean_decision_ms=float(ms.mean()) if ms.size else 0.0,
                p99_decision_ms=float(np.percentile(ms, 99)) if ms.size else 0.0,
            )
        )
    stats.sort(key=lambda b: (-(b.rating if not math.isnan(b.rating) else -1e18), b.bot))
    los: dict[str, dict[str, float]] = {}
    if ratings is not None:
        m = likelihood_of_superiority(ratings)
        for i, a in enumerate(ratings.bots):
            los[a] = {b: float(m[i, j]) for j, b in enumerate(ratings.bots) if j != i}
    return Summary(tid, len(hands), planned or len(hands), ratings, stats, cross, los, note)


# ------------------------------------------------------------------------------ formats

_COLS = [
    ("#", None),
    ("bot", "bot"),
    ("Elo", "rating"),
    ("95% CI", None),
    ("hands", "hands"),
    ("win %", "win_rate"),
    ("pts left", "mean_points_left"),
    ("pts won", "mean_points_won"),
    ("timeouts", "timeouts"),
    ("illegal", "illegal_actions"),
    ("crashes", "crashes"),
    ("taken over", "seats_taken_over"),
    ("mean ms", "mean_decision_ms"),
    ("p99 ms", "p99_decision_ms"),
]


def _row(rank: int, b: BotStats) -> list[str]:
    return [
        str(rank),
        b.bot,
        f"{b.rating:+.1f}",
        f"[{b.ci_low:+.0f}, {b.ci_high:+.0f}]",
        str(b.hands),
        f"{100 * b.win_rate:.1f}",
        f"{b.mean_points_left:.1f}",
        f"{b.mean_points_won:.1f}",
        str(b.timeouts),
        str(b.illegal_actions),
        str(b.crashes),
        str(b.seats_taken_over),
        f"{b.mean_decision_ms:.1f}",
        f"{b.p99_decision_ms:.0f}",
    ]


def _cell(v: tuple[int, int, int]) -> str:
    n = sum(v)
    return f"{v[0]}-{v[1]}" + (f"-{v[2]}" if v[2] else "") if n else "."


def markdown(s: Summary) -> str:
    out = io.StringIO()
    out.write(f"# Tournament {s.tournament_id}\n\n{s.hands} of {s.planned} hands. ")
    out.write(
        "Ratings: Plackett-Luce over each hand's finishing order with seat terms, Elo scale, "
        "95% CIs with standard errors clustered by deal.\n\n"
    )
    if s.note:
        out.write(f"Note: {s.note}\n\n")
    out.write("| " + " | ".join(c for c, _ in _COLS) + " |\n")
    out.write("|" + "|".join("---" for _ in _COLS) + "|\n")
    for i, b in enumerate(s.bots, start=1):
        out.write("| " + " | ".join(_row(i, b)) + " |\n")
    names = [b.bot for b in s.bots]
    out.write("\n## Cross-table\n\nRow bot finished ahead-behind(-tied) of the column bot.\n\n")
    out.write("| | " + " | ".join(names) + " |\n|" + "---|" * (len(names) + 1) + "\n")
    for a in names:
        cells = ["" if a == b else _cell(s.cross[a][b]) for b in names]
        out.write(f"| {a} | " + " | ".join(cells) + " |\n")
    if s.los:
        out.write("\n## Likelihood of superiority\n\nP(row bot stronger than column bot).\n\n")
        out.write("| | " + " | ".join(names) + " |\n|" + "---|" * (len(names) + 1) + "\n")
        for a in names:
            cells = ["" if a == b else f"{s.los.get(a, {}).get(b, math.nan):.2f}" for b in names]
            out.write(f"| {a} | " + " | ".join(cells) + " |\n")
    return out.getvalue()


def csv_text(s: Summary) -> str:
    out = io.StringIO()
    w = csv.writer(out)
    fields = list(asdict(s.bots[0]).keys()) if s.bots else []
    w.writerow(["rank", *fields])
    for i, b in enumerate(s.bots, start=1):
        w.writerow([i, *asdict(b).values()])
    return out.getvalue()


def svg_chart(s: Summary) -> str:
    """Ratings with 95% error bars, one row per bot, strongest first."""
    bots = [b for b in s.bots if not math.isnan(b.rating)]
    if not bots:
        return "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'></svg>"
    lo = min(b.ci_low for b in bots)
    hi = max(b.ci_high for b in bots)
    lo, hi = min(lo, 0.0), max(hi, 0.0)
    pad = (hi - lo) * 0.05 or 10.0
    lo, hi = lo - pad, hi + pad
    left, width, row = 170, 560, 26
    height = row * len(bots) + 50

    def x(v: float) -> float:
        return left + (v - lo) / (hi - lo) * width

    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{left + width + 30}' height='{height}' "
        "font-family='sans-serif' font-size='12'>",
        f"<line x1='{x(0):.1f}' y1='10' x2='{x(0):.1f}' y2='{height - 30}' stroke='#bbb' "
        "stroke-dasharray='4 3'/>",
    ]
    for i, b in enumerate(bots):
        y = 22 + i * row
        parts.append(
            f"<text x='{left - 8}' y='{y + 4}' text-anchor='end'>{html.escape(b.bot)}</text>"
            f"<line x1='{x(b.ci_low):.1f}' y1='{y}' x2='{x(b.ci_high):.1f}' y2='{y}' "
            "stroke='#357' stroke-width='2'/>"
            f"<line x1='{x(b.ci_low):.1f}' y1='{y - 5}' x2='{x(b.ci_low):.1f}' y2='{y + 5}' "
            "stroke='#357'/>"
            f"<line x1='{x(b.ci_high):.1f}' y1='{y - 5}' x2='{x(b.ci_high):.1f}' y2='{y + 5}' "
            "stroke='#357'/>"
            f"<circle cx='{x(b.rating):.1f}' cy='{y}' r='4' fill='#c33'>"
            f"<title>{html.escape(b.bot)}: {b.rating:+.1f} [{b.ci_low:+.1f}, "
            f"{b.ci_high:+.1f}]</title></circle>"
        )
    axis_y = height - 30
    parts.append(
        f"<line x1='{left}' y1='{axis_y}' x2='{left + width}' y2='{axis_y}' stroke='#333'/>"
    )
    step = _nice_step((hi - lo) / 6)
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


def _nice_step(raw: float) -> float:
    if raw <= 0:
        return 1.0
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 5, 10):
        if raw <= m * mag:
            return float(m * mag)
    return float(10 * mag)


def html_report(s: Summary) -> str:
    names = [b.bot for b in s.bots]

    def table(head: list[str], rows: list[list[str]]) -> str:
        th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows
        )
        return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"

    board = table([c for c, _ in _COLS], [_row(i, b) for i, b in enumerate(s.bots, 1)])
    cross = table(
        ["", *names],
        [[a, *("" if a == b else _cell(s.cross[a][b]) for b in names)] for a in names],
    )
    los = table(
        ["", *names],
        [
            [a, *("" if a == b else f"{s.los.get(a, {}).get(b, math.nan):.2f}" for b in names)]
            for a in names
        ],
    )
    seat = ""
    if s.ratings is not None:
        seat = ", ".join(f"seat {i}: {v:+.1f}" for i, v in enumerate(s.ratings.seat_elo))
    return f"""<!doctype html>
<html><head><meta charset="utf-8"><title>Tournament {html.escape(s.tournament_id)}</title>
<style>
body{{font-family:sans-serif;margin:2em;color:#222}}
table{{border-collapse:collapse;margin:1em 0}}
td,th{{border:1px solid #ccc;padding:3px 8px;text-align:right}}
td:first-child,th:first-child{{text-align:left}}
th{{background:#f2f2f2}}
</style></head><body>
<h1>Tournament {html.escape(s.tournament_id)}</h1>
<p>{s.hands} of {s.planned} hands. Plackett-Luce ratings over each hand's finishing order (first
out, then by points left) with seat terms, on the Elo scale; 95% confidence intervals with
standard errors clustered by deal. Seat terms: {html.escape(seat)}. {html.escape(s.note)}</p>
<h2>Ratings</h2>
{svg_chart(s)}
<h2>Leaderboard</h2>
{board}
<h2>Cross-table</h2>
<p>Row bot finished ahead-behind(-tied) of the column bot.</p>
{cross}
<h2>Likelihood of superiority</h2>
<p>P(row bot stronger than column bot).</p>
{los}
</body></html>
"""


def print_leaderboard(s: Summary, stream: TextIO) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"Tournament {s.tournament_id}: {s.hands} hands")
    for c, _ in _COLS:
        t.add_column(c, justify="left" if c == "bot" else "right")
    for i, b in enumerate(s.bots, start=1):
        t.add_row(*_row(i, b))
    Console(file=stream, width=max(160, 0)).print(t)
    if s.note:
        print(f"note: {s.note}", file=stream)


def write_all(
    out: Path,
    store: Store,
    config: TournamentConfig,
    tid: str,
    *,
    stream: TextIO | None = None,
    planned: int = 0,
) -> Summary:
    s = summarize(store, config, tid, planned)
    (out / "leaderboard.md").write_text(markdown(s))
    (out / "leaderboard.csv").write_text(csv_text(s))
    (out / "results.json").write_text(json.dumps(s.to_json(), indent=1))
    (out / "report.html").write_text(html_report(s))
    if stream is not None:
        print_leaderboard(s, stream)
        print(f"reports: {', '.join(str(out / f) for f in FILES)}", file=stream)
    return s
