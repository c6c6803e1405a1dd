"""The report's section on a run that stopped by a sequential decision: why it stopped, each
adjacent pair's status over time (an SVG timeline in report.html, in the style of the ratings
chart, and a table in leaderboard.md), or the new-version test's LLR over the hands."""

from __future__ import annotations

import html
import math
from typing import Any

from .axis import nice_step
from .plural import count
from .settled_budget import no_look_note
from .settled_run import SequentialRecord, pair_history

COLORS = {"open": "#bbb", "better": "#3a7", "tied": "#37c"}
"""A pair's colour in the timeline: open, one bot better, tied within delta."""


def load(meta: dict[str, Any]) -> SequentialRecord | None:
    from .settled_run import META_KEY

    raw = meta.get(META_KEY)
    if raw is None:
        return None
    try:
        return SequentialRecord.from_dict(raw)
    except (KeyError, ValueError, TypeError):
        return None


def why_line(rec: SequentialRecord) -> str:
    """Why the run stopped (or that it has not yet)."""
    if rec.stop is None:
        return f"Not stopped yet: {rec.status_line()}."
    reason = rec.stop["reason"]
    why = {
        "settled": "every adjacent pair of the ranking is decided (one bot better, or the two "
        "tied within the indifference)",
        "budget": "the budget (max_hands) was reached with pairs still open",
        "H1": "the new-version test accepted H1",
        "H0": "the new-version test accepted H0",
        "given_up": "the new-version test's candidate or baseline was given up on, so no later "
        "hand could move it",
    }.get(reason, reason)
    nv = rec.newversion
    if reason == "budget" and nv is None and not any(k.get("looked") for k in rec.looks):
        # a budget below the first look's hands: the open pairs were never looked at (an
        # examination's 24-hand run listed three open pairs and an empty pair table)
        note = str((rec.looks[-1].get("note") if rec.looks else "") or "none was due")
        why = (
            "the budget (max_hands) was reached before the sequential test could take a look "
            f"({note.removesuffix('; look skipped')}; the first look needs "
            f"{rec.state.min_hands_per_bot if rec.state else 0} hands of every bot)"
        )
    if reason == "budget" and nv is not None:  # one question, no pairs (an examination)
        if nv.unrated:
            why = f"the budget (max_hands) was reached before the test could look: {nv.unrated}"
            why += " has no rated hand (every seat played by the stand-in)"
        elif nv.bounded:
            why = "the budget (max_hands) was reached before the test decided (the gap's "
            why += "one-sided limits, read instead of an LLR, decided nothing)"
        else:
            why = "the budget (max_hands) was reached before the test decided (LLR "
            why += f"{nv.llr:.2f} within its bounds {nv.lower:.2f} and {nv.upper:.2f})"
    return f"Stopped after {count(rec.stop['hands'], 'hand')} because {why}: {rec.stop_text()}."


def _method(rec: SequentialRecord) -> str:
    if rec.kind == "settled" and rec.state is not None:
        st = rec.state
        looks = f"a look every {rec.look_every} hands of the plan's order"
        # a budget of 24 hands said "a look every 24 hands" of a run that could take none
        looks = no_look_note(rec) or looks
        return (
            f"Sequential test: normal-mixture confidence sequences for every pair, Bonferroni over "
            f"all {st.n_pairs} pairs (alpha {st.alpha:g}, indifference {st.indifference_elo:g} "
            f"Elo), {looks}; every claim holds at every look at once."
        )
    assert rec.newversion is not None
    nv = rec.newversion
    return (
        f"New-version test: GSPRT on the fitted gap {nv.candidate} - {nv.baseline}, H0: gap <= "
        f"{nv.delta0:g}, H1: gap >= {nv.delta1:g} Elo, alpha {nv.alpha:g}, beta {nv.beta:g} "
        f"(Wald bounds {nv.lower:.2f}, {nv.upper:.2f}), a look every {rec.look_every} hands."
    )


def _ranked(rec: SequentialRecord) -> dict[str, int]:
    """Each bot's place in the last look's ranking (the order the stop line names pairs in)."""
    last = rec.last_look()
    ranking = list(last.get("ranking") or []) if last else []
    return {b: k for k, b in enumerate(ranking)}


def _in_order(key: str, place: dict[str, int]) -> tuple[str, str]:
    """A pair ``"a~b"`` as the ranking orders it, the higher first (by name if unranked)."""
    a, b = key.split("~")
    return (a, b) if (place.get(a, len(place)), a) <= (place.get(b, len(place)), b) else (b, a)


def _pair_rows(rec: SequentialRecord) -> list[list[str]]:
    """One row per pair that was ever adjacent: final claim, when, interval, statuses; each
    pair in the ranking's order, the higher first (the stop line's order), its interval of
    the first bot's rating minus the second's."""
    hist = pair_history(rec)
    rows: list[list[str]] = []
    if rec.state is None:
        return rows
    place = _ranked(rec)
    for key, seq in hist.items():
        x, y = _in_order(key, place)
        p = rec.state.pair(x, y)
        low, high = (p.low, p.high) if p.a == x else (-p.high, -p.low)  # of x - y
        sign = {"better": ">" if low > 0 else "<", "tied": "~"}.get(p.status, "?")
        when = str(p.claimed_at) if p.claimed_at is not None else "-"
        lo = f"{low:+.0f}" if math.isfinite(low) else "-inf"
        hi = f"{high:+.0f}" if math.isfinite(high) else "+inf"
        changes = [seq[0]] + [s for i, s in enumerate(seq[1:], 1) if s[1] != seq[i - 1][1]]
        rows.append(
            [
                f"{x} {sign} {y}",
                p.status,
                when,
                f"[{lo}, {hi}]",
                ", ".join(f"{h}: {s}" for h, s in changes),
            ]
        )
    return rows


PAIR_COLS = [
    "pair (higher ranked first)",
    "status",
    "claimed at hands",
    "gap, first minus second: interval (Elo)",
    "status while adjacent in the ranking (hands: status)",
]


def markdown(rec: SequentialRecord) -> str:
    out = ["\n## Why the run stopped\n", why_line(rec), "", _method(rec), ""]
    if rec.kind == "settled":
        out.append("| " + " | ".join(PAIR_COLS) + " |")
        out.append("|" + "---|" * len(PAIR_COLS))
        for r in _pair_rows(rec):
            out.append("| " + " | ".join(r) + " |")
        out += _block_rows(rec)
    else:
        # the gap with its 95% range, as the progress line gives it (it was +- one standard
        # error, unlabelled, beside the progress line's 95%; an examination)
        out.append("| hands | LLR | gap (Elo, 95%) | verdict |")
        out.append("|---|---|---|---|")
        looked = [look for look in rec.looks if look.get("looked")]
        for k, look in enumerate(looked):
            gap = look.get("gap")
            se = look.get("se")
            g = f"{gap:+.1f} +- {1.96 * se:.1f}" if gap is not None and se is not None else "-"
            llr = f"{look['llr']:.2f}"
            if look.get("bounded"):  # a one-sided fit: its limits were read, not an LLR
                g, llr = str(look["bounded"]).replace("|", "/"), "-"
            verdict = str(look["verdict"])
            if k == len(looked) - 1 and rec.stop is not None and verdict == "continue":
                verdict = f"{rec.stop['reason']}: stopped"  # the budget, undecided
            out.append(f"| {look['through']} | {llr} | {g} | {verdict} |")
    return "\n".join(out) + "\n"


MAX_BLOCK_ROWS = 40
"""The block table shows at most this many blocks (the first and the last ones)."""


def _block_rows(rec: SequentialRecord) -> list[str]:
    """Where the hands went: for each block of an adaptive run, the tables seating each bot
    (24 hands a table), the bots in the last look's ranking order."""
    blocks = rec.tables()
    if not blocks:
        return []
    last = rec.last_look()
    ranking = list(last["ranking"]) if last and last.get("ranking") else []
    bots = ranking + sorted({b for blk in blocks for t in blk for b in t} - set(ranking))
    played = _block_hands_played(rec, blocks)
    cut = [k for k, n in enumerate(played) if 0 < n < 24 * len(blocks[k])]
    full = "24 hands a table" + (" in a full block" if cut else "")
    out = [
        "",
        f"Tables each bot sat at, block by block ({full}; block 0 balanced, each later "
        "block chosen at the look before it for the pairs still open):",
        "",
        "| block | " + " | ".join(bots) + " |",
        "|" + "---|" * (len(bots) + 1),
    ]
    shown = [k for k in range(len(blocks)) if played[k] or not k]  # not the unplayed ones
    if len(shown) > MAX_BLOCK_ROWS:
        half = MAX_BLOCK_ROWS // 2
        shown = [*shown[:half], -1, *shown[-half:]]
    for k in shown:
        if k < 0:
            out.append("| ... |" + " |" * len(bots))
            continue
        tables = blocks[k][: _tables_reached(played[k], len(blocks[k]))]
        counts = [sum(b in t for t in tables) for b in bots]
        mark = "*" if k in cut else ""
        out.append(f"| {k}{mark} | " + " | ".join(str(c) for c in counts) + " |")
    for k in cut:  # a 24-hand budget's 24 hands were said to be "24 hands a table" of 8
        n, reached = played[k], _tables_reached(played[k], len(blocks[k]))
        out.append(
            f"\n\\* Block {k} was cut short by the stop: {n} of its {24 * len(blocks[k])} hands "
            f"were played, deal by deal across {reached} of its {len(blocks[k])} tables (the "
            "row counts those)."
        )
    return out


def _block_hands_played(rec: SequentialRecord, blocks: list[list[tuple[str, ...]]]) -> list[int]:
    """Hands of each recorded block the run played up to its stop (all of them before it)."""
    end = rec.stop_hands
    out, start = [], 0
    for blk in blocks:
        size = 24 * len(blk)
        out.append(size if end is None else max(0, min(size, end - start)))
        start += size
    return out


def _tables_reached(hands: int, n_tables: int) -> int:
    """Tables a block's first ``hands`` hands reach (deal by deal: 4 hands a table a deal)."""
    return min(n_tables, math.ceil(hands / 4))


def svg_timeline(rec: SequentialRecord) -> str:
    """Each pair that was ever adjacent: a row, its status at each look as coloured segments
    over the hands (grey open, green one better, blue tied)."""
    hist = pair_history(rec)
    if not hist:
        return "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'></svg>"
    end = max(h for seq in hist.values() for h, _ in seq)
    left, width, row = 170, 560, 22
    height = row * len(hist) + 60

    def x(v: float) -> float:
        return left + v / max(end, 1) * width

    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{left + width + 30}' height='{height}' "
        "font-family='sans-serif' font-size='12'>"
    ]
    place = _ranked(rec)
    for i, (key, seq) in enumerate(hist.items()):
        y = 20 + i * row
        label = html.escape("~".join(_in_order(key, place)))  # the stop line's order
        parts.append(f"<text x='{left - 8}' y='{y + 4}' text-anchor='end'>{label}</text>")
        prev = 0
        for h, status in seq:
            parts.append(
                f"<rect x='{x(prev):.1f}' y='{y - 7}' width='{max(x(h) - x(prev), 1.0):.1f}' "
                f"height='14' fill='{COLORS.get(status, '#bbb')}'><title>{label} "
                f"at {h} hands: {status}</title></rect>"
            )
            prev = h
    axis_y = height - 36
    parts.append(
        f"<line x1='{left}' y1='{axis_y}' x2='{left + width}' y2='{axis_y}' stroke='#333'/>"
    )
    step = nice_step(end / 6)
    v = 0.0
    while v <= end:
        parts.append(
            f"<line x1='{x(v):.1f}' y1='{axis_y}' x2='{x(v):.1f}' y2='{axis_y + 5}' "
            f"stroke='#333'/><text x='{x(v):.1f}' y='{axis_y + 18}' "
            f"text-anchor='middle'>{v:.0f}</text>"
        )
        v += step
    legend = "".join(
        f"<rect x='{left + 120 * k}' y='{height - 12}' width='10' height='10' fill='{c}'/>"
        f"<text x='{left + 120 * k + 14}' y='{height - 3}'>{s}</text>"
        for k, (s, c) in enumerate(COLORS.items())
    )
    parts.append(legend)
    if rec.stop is not None:
        sx = x(float(rec.stop["hands"]))
        parts.append(
            f"<line x1='{sx:.1f}' y1='8' x2='{sx:.1f}' y2='{axis_y}' stroke='#c33' "
            "stroke-dasharray='4 3'><title>stop</title></line>"
        )
    parts.append("</svg>")
    return "".join(parts)


def svg_llr(rec: SequentialRecord) -> str:
    """The new-version test's LLR at each look, with Wald's bounds."""
    assert rec.newversion is not None
    nv = rec.newversion
    pts = [
        (int(lk["through"]), float(lk["llr"]))
        for lk in rec.looks
        if lk.get("looked") and not lk.get("bounded")  # a one-sided look has no LLR
    ]
    if not pts:
        return "<svg xmlns='http://www.w3.org/2000/svg' width='10' height='10'></svg>"
    end = max(h for h, _ in pts)
    lo = min(nv.lower, *(v for _, v in pts)) - 0.5
    hi = max(nv.upper, *(v for _, v in pts)) + 0.5
    left, width, height = 60, 640, 240

    def x(v: float) -> float:
        return left + v / max(end, 1) * width

    def y(v: float) -> float:
        return 10 + (hi - v) / (hi - lo) * (height - 40)

    path = " ".join(f"{x(h):.1f},{y(v):.1f}" for h, v in pts)
    parts = [
        f"<svg xmlns='http://www.w3.org/2000/svg' width='{left + width + 30}' height='{height}' "
        "font-family='sans-serif' font-size='12'>",
        f"<polyline points='{path}' fill='none' stroke='#357' stroke-width='2'/>",
    ]
    for bound, name in ((nv.upper, "H1"), (nv.lower, "H0"), (0.0, "")):
        parts.append(
            f"<line x1='{left}' y1='{y(bound):.1f}' x2='{left + width}' y2='{y(bound):.1f}' "
            f"stroke='{'#c33' if name else '#bbb'}' stroke-dasharray='4 3'/>"
            f"<text x='{left - 6}' y='{y(bound) + 4:.1f}' text-anchor='end'>"
            f"{name} {bound:.2f}</text>"
        )
    parts.append(
        f"<text x='{left + width / 2}' y='{height - 6}' text-anchor='middle'>hands (0 to "
        f"{end})</text></svg>"
    )
    return "".join(parts)


def html_section(rec: SequentialRecord) -> str:
    body = [
        "<h2>Why the run stopped</h2>",
        f"<p>{html.escape(why_line(rec))}</p>",
        f"<p>{html.escape(_method(rec))}</p>",
    ]
    if rec.kind == "settled":
        body.append("<h3>Adjacent pairs over time</h3>")
        body.append(svg_timeline(rec))
        th = "".join(f"<th>{html.escape(c)}</th>" for c in PAIR_COLS)
        rows = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>"
            for r in _pair_rows(rec)
        )
        body.append(f"<table><thead><tr>{th}</tr></thead><tbody>{rows}</tbody></table>")
    else:
        body.append("<h3>LLR over the hands</h3>")
        body.append(svg_llr(rec))
    return "\n".join(body) + "\n"


def to_json(rec: SequentialRecord) -> dict[str, Any]:
    """What results.json says about the decision (``verify`` compares the stop)."""
    return {
        "kind": rec.kind,
        "stop": rec.stop,
        "why": why_line(rec),
        "looks": sum(1 for k in rec.looks if k.get("looked")),  # not the skipped ones
        "through": rec.through,
        "pairs": {k: v for k, v in pair_history(rec).items()},
        "blocks": rec.blocks,
    }
