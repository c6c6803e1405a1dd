"""Final reports: leaderboard (terminal, Markdown, CSV, JSON), cross-tables, likelihood of
superiority and a self-contained HTML report with an inline SVG rating chart.

Ratings are the Plackett-Luce fit of :mod:`uno_tournament.ratings` over every stored hand's
finishing order (first out, then by points left): places 2-4 weigh a fitted fraction of going
out, seat terms, 95% CIs with standard errors clustered by deal, and the tournament's forfeit
policy applied to seats a stand-in played. Everything is computed from the store's columns
(:meth:`Store.columns`); no replay is read, so a report on 100,000 hands takes seconds.

Every output states what a rating gap means in odds the reader can check in the "going out
first" table: of the hands two bots share in which one of the two goes out first, the stronger
goes out first with probability ``1 / (1 + 10 ** (-gap / 400))``.
"""

from __future__ import annotations

import csv
import html
import io
import json
import math
import shutil
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from . import report_text
from .config import FORFEIT_DESCRIPTIONS, TournamentConfig
from .fileread import write_text_atomic
from .plural import count, plural
from .rating_bounds import comparison_groups, reference_of
from .ratings import Ratings, likelihood_of_superiority
from .report_chart import Bar, rating_chart
from .report_fields import interval_kind, plain, published
from .report_text import (
    CROSS_LEGEND,
    GOING_OUT_TEXT,
    first_note,
    gap_meaning,
    header_lines,
)
from .standings import TIED_NOTE, fit_played, rated_outcomes
from .store import ResultStore

NONE_RATED = (
    "Not rated yet: no bot has rated hands in two deals or more, and a rating's interval needs two."
)
FILES = ("leaderboard.md", "leaderboard.csv", "results.json", "report.html")
GIVEN_UP_MARK = "†"


@dataclass
class BotStats:
    bot: str
    rating: float
    se: float
    ci_low: float
    ci_high: float
    hands: int
    """Hands the bot played itself, to the end: a seat a stand-in played (in whole or in part)
    is not among them, nor in wins, win %, points left or won; it counts in ``forfeits`` and
    ``seats_taken_over``."""
    wins: int
    win_rate: float
    mean_points_left: float
    mean_points_won: float
    timeouts: int
    strikes: int
    illegal_actions: int
    """Real faults: actions the server rejected as malformed or not legal."""
    late_answers: int
    """Answers that arrived after their request had closed (an optional chance another seat's
    action ended while the answer was in flight): a race, not a fault."""
    crashes: int
    seats_taken_over: int
    forfeits: int
    """Hands rated as forfeits (a stand-in played the seat) under the forfeit policy."""
    given_up: bool
    """The runner gave up on this bot (it kept crashing, or never connected): a stand-in
    played its remaining seats."""
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
    first_out: dict[str, dict[str, tuple[int, int]]]
    """first_out[a][b] = (hands a went out first, hands b went out first) among the hands they
    share, in the rated results (forfeits as the policy says)."""
    los: dict[str, dict[str, float]]
    note: str
    forfeit_policy: str = "last"
    forfeited_hands: int = 0
    given_up: dict[str, str] = field(default_factory=dict)
    """bot -> why the runner gave up on it."""

    @property
    def reference(self) -> str | None:
        """The bot the others are measured from, if the ratings have one: the only bot whose
        interval has no width (a frame of one bot, :mod:`uno_tournament.rating_bounds`). Bots
        tied exactly (:data:`~uno_tournament.standings.TIED_NOTE`) all have intervals of no
        width, and none of them is a reference."""
        return reference_of([(b.bot, b.ci_low, b.ci_high) for b in self.bots])

    @property
    def tied(self) -> bool:
        """The bots are tied exactly (every rating 0, no interval of any width)."""
        return TIED_NOTE in self.note

    @property
    def policy_text(self) -> str:
        return (
            f"Forfeits: {self.forfeit_policy} ({FORFEIT_DESCRIPTIONS[self.forfeit_policy]}); "
            f"{count(self.forfeited_hands, 'hand')} had a stand-in."
        )

    @property
    def model_text(self) -> str:
        r = self.ratings
        lam = ""
        if r is not None and r.places == "discounted":
            lam = (
                f" Places 2-4 weigh {loser_weight_text(r.loser_weight, r.loser_weight_se)} of "
                "going out (fitted with the ratings; its uncertainty is in every interval)."
                + (" A weak prior keeps it finite." if r.loser_weight_prior else "")
            )
        few = f" {few_deals_note(r)}" if r is not None and r.unmeasured else ""
        return (
            "Ratings: Plackett-Luce over each hand's finishing order (first out, then by points "
            "left) with seat terms, on the Elo scale of going out; 95% CIs with standard errors "
            "clustered by deal (Student's t over the deals a bot played: wider when they are "
            f"few).{lam}{few}"
        )

    def given_up_note(self) -> str:
        if not self.given_up:
            return ""
        who = "; ".join(f"{b}: {why}" for b, why in sorted(self.given_up.items()))
        return (
            f"{GIVEN_UP_MARK} given up on ({who}): a stand-in played its seats from then on, "
            "each a forfeit under the policy."
        )

    def to_json(self) -> dict[str, Any]:
        r = self.ratings
        ref = self.reference
        return {
            "tournament_id": self.tournament_id,
            "hands": self.hands,
            "planned": self.planned,
            "model": {
                "kind": "plackett-luce",
                "places": r.places if r else None,
                "loser_weight": r.loser_weight if r else None,
                "loser_weight_se": r.loser_weight_se if r else None,
                "cluster": r.cluster if r else None,
                "clusters": r.n_clusters if r else 0,
                "unmeasured_directions": r.unmeasured if r else 0,
                "converged": r.converged if r else False,
                "seat_elo": [float(x) for x in r.seat_elo] if r else [],
                "later_seat_elo": [float(x) for x in r.later_seat_elo] if r else [],
                "note": self.note,
                "gap_meaning": gap_meaning(),
            },
            "forfeits": {
                "policy": self.forfeit_policy,
                "description": FORFEIT_DESCRIPTIONS[self.forfeit_policy],
                "hands_with_a_stand_in": self.forfeited_hands,
            },
            "given_up": self.given_up,
            # plain JSON: an open end or a missing number is null ("interval" says which)
            "leaderboard": [
                {
                    **plain(published(b, ref, self.tied)),
                    "interval": interval_kind(b, ref, self.tied),
                    "ranks": rank,
                }
                for b, rank in zip(self.bots, rank_ranges(self), strict=True)
            ],
            "cross_table": {
                a: {b: {"ahead": v[0], "behind": v[1], "tied": v[2]} for b, v in row.items()}
                for a, row in self.cross.items()
            },
            "going_out_first": {
                a: {b: {"won": v[0], "lost": v[1]} for b, v in row.items()}
                for a, row in self.first_out.items()
            },
            "likelihood_of_superiority": {a: plain(row) for a, row in self.los.items()},
        }


def loser_weight_text(w: float, se: float) -> str:
    """The weight of places 2-4 with its 95% interval, clipped at 0: the weight is
    ``tan(omega)`` with ``omega >= 0``, never negative, and a symmetric "0.00 ± 0.50" at that
    boundary read as if it could be (an examination)."""
    lo, hi = w - 1.96 * se, w + 1.96 * se
    clip = ", clipped at 0: a weight is never negative" if lo < 0 else ""
    return f"{w:.2f} (95% interval {max(lo, 0.0):.2f} to {hi:.2f}{clip})"


def few_deals_note(r: Ratings) -> str:
    """What the fit did where its deals measured nothing (:attr:`Ratings.unmeasured`)."""
    return (
        f"{count(r.n_clusters, 'deal')} {plural(r.n_clusters, 'is', 'are')} too few to measure "
        f"every direction of the fit: in {r.unmeasured} of its directions the clustered error "
        "is (nearly) 0, and the "
        "model-based one stands in."
    )


def summarize(
    store: ResultStore,
    config: TournamentConfig,
    tid: str,
    planned: int = 0,
    *,
    given_up: dict[str, str] | None = None,
) -> Summary:
    names_all = [b.name for b in config.bots]
    cols = store.columns(names_all)
    names_cols = cols.bot_names
    n_hands = cols.n_hands
    real = cols.bots >= 0
    policy = config.faults.forfeit
    outcomes = rated_outcomes(
        cols.hand_ids, cols.deal_ids, cols.bots, cols.places, cols.taken_over, policy
    )
    ratings, note = fit_played(cols, outcomes)  # over the bots that played
    # no bot has rated hands in two deals: the fit's notes (limits, a reference bot) and its
    # predicted shares would describe ratings the table does not show (an examination)
    none_rated = ratings is not None and not ratings.rated.any()
    if none_rated:
        note = NONE_RATED
    if given_up is None:
        given_up = {}
        for _, bot, _, detail in store.incidents(["given_up"]):
            given_up[bot] = detail
    crashes: dict[str, int] = {}
    for _, bot, _, _ in store.incidents(["crash"]):
        crashes[bot] = crashes.get(bot, 0) + 1

    nb = len(names_cols)
    flat = np.where(real, cols.bots, nb).ravel()
    own = real & ~cols.taken_over  # seats the bot played itself, to the end
    flat_own = np.where(own, cols.bots, nb).ravel()

    def per_bot(values: np.ndarray[Any, Any], seats: Any = flat) -> np.ndarray[Any, Any]:
        out: np.ndarray[Any, Any] = np.bincount(
            seats, weights=values.ravel().astype(np.float64), minlength=nb + 1
        )[:nb]
        return out

    # a bot's row counts its own play: a stand-in's results are not the bot's (the ratings
    # count those hands as the forfeit policy says; the row shows them as forfeits)
    hands_of = per_bot(np.ones_like(cols.places), flat_own)
    winner_mask = np.zeros_like(real)
    if n_hands:
        winner_mask[np.arange(n_hands), cols.winner_seat] = True
    wins = per_bot(winner_mask, flat_own)
    left = per_bot(cols.points_left, flat_own)
    won = per_bot(cols.points_won, flat_own)
    # the bot's own actions, also in a hand a stand-in finished (before the takeover)
    timeouts = per_bot(cols.timeouts)
    strikes = per_bot(cols.strikes)
    illegal = per_bot(cols.illegal)
    late = per_bot(cols.late)
    taken = per_bot(cols.taken_over)
    decisions = per_bot(cols.decisions)
    forfeit_seats = cols.taken_over & real if policy != "count" else np.zeros_like(real)
    forfeits = per_bot(forfeit_seats)
    forfeited_hands = int(np.count_nonzero((cols.taken_over & real).any(axis=1)))

    # pairwise records over every ordered pair of seats
    rated_b = outcomes.bots  # hand-id order, policy applied ("exclude" blanks seats)
    rated_p = outcomes.places
    ahead = np.zeros((nb, nb), dtype=np.int64)
    tied = np.zeros((nb, nb), dtype=np.int64)
    first = np.zeros((nb, nb), dtype=np.int64)
    width = cols.bots.shape[1]
    if n_hands:
        best = np.where(rated_b >= 0, rated_p, np.iinfo(np.int64).max).min(axis=1)
        for sa in range(width):
            for sb in range(width):
                if sa == sb:
                    continue
                # the cross-table counts the hands as the ratings do: a seat a stand-in played
                # is the forfeit the policy makes it (the raw places credited a given-up bot
                # with its stand-in's wins over the others)
                rb = (rated_b[:, sa] >= 0) & (rated_b[:, sb] >= 0)
                ia, ib = rated_b[rb, sa], rated_b[rb, sb]
                np.add.at(ahead, (ia, ib), rated_p[rb, sa] < rated_p[rb, sb])
                np.add.at(tied, (ia, ib), rated_p[rb, sa] == rated_p[rb, sb])
                went_out = rb & (rated_p[:, sa] == best) & outcomes.went_out
                np.add.at(first, (rated_b[went_out, sa], rated_b[went_out, sb]), 1)
    cross: dict[str, dict[str, tuple[int, int, int]]] = {}
    first_out: dict[str, dict[str, tuple[int, int]]] = {}
    for a in names_all:
        cross[a] = {}
        first_out[a] = {}
        for b in names_all:
            if a == b:
                continue
            i, j = names_cols.index(a), names_cols.index(b)
            cross[a][b] = (int(ahead[i, j]), int(ahead[j, i]), int(tied[i, j]))
            first_out[a][b] = (int(first[i, j]), int(first[j, i]))

    stats = []
    for n in names_all:
        i = names_cols.index(n)
        ms = cols.response_ms.get(n, np.zeros(0, dtype=np.int64))
        if ratings is not None and n in ratings.bots and bool(ratings.rated[ratings.index(n)]):
            k = ratings.index(n)
            rating, se = float(ratings.elo[k]), float(ratings.se[k])
            lo, hi = float(ratings.ci_low[k]), float(ratings.ci_high[k])
        else:  # no rated hand, or rated hands from a single deal: no rating to stand behind
            rating = se = lo = hi = math.nan
        h = int(hands_of[i])
        stats.append(
            BotStats(
                bot=n,
                rating=rating,
                se=se,
                ci_low=lo,
                ci_high=hi,
                hands=h,
                wins=int(wins[i]),
                # no hand played itself (a stand-in played every seat): no share, no mean
                # (0.0 points left read as the best possible; an examination)
                win_rate=wins[i] / h if h else math.nan,
                mean_points_left=left[i] / h if h else math.nan,
                mean_points_won=won[i] / h if h else math.nan,
                timeouts=int(timeouts[i]),
                strikes=int(strikes[i]),
                illegal_actions=int(illegal[i]),
                late_answers=int(late[i]),
                crashes=crashes.get(n, 0),
                seats_taken_over=int(taken[i]),
                forfeits=int(forfeits[i]),
                given_up=n in given_up,
                decisions=int(decisions[i]),
                # no answer timed (every decision timed out): no figure, not 0.0 ms, which read
                # as the fastest bot of the field (an examination)
                mean_decision_ms=float(ms.mean()) if ms.size else math.nan,
                p99_decision_ms=float(np.percentile(ms, 99)) if ms.size else math.nan,
            )
        )
    stats.sort(key=lambda b: (-(b.rating if not math.isnan(b.rating) else -1e18), b.bot))
    los: dict[str, dict[str, float]] = {}
    if ratings is not None:
        m = likelihood_of_superiority(ratings)
        groups = comparison_groups(outcomes, len(names_cols))
        rated_names = [b for k, b in enumerate(ratings.bots) if bool(ratings.rated[k])]
        group_of = {names_cols[i]: g for g, members in enumerate(groups) for i in members}
        for i, a in enumerate(ratings.bots):
            los[a] = {
                # bots that never met, directly or through others, are not compared
                b: float(m[i, j]) if group_of.get(a) == group_of.get(b) else math.nan
                for j, b in enumerate(ratings.bots)
                if j != i
            }
        unrated = sorted(set(ratings.bots) - set(rated_names))
        if none_rated:
            los = {}
        elif unrated:
            note = _join(
                note,
                f"not rated: {', '.join(unrated)} (rated hands in fewer than two deals; an "
                "interval needs at least two).",
            )
        linked = [sorted(names_cols[i] for i in members) for members in groups]
        if len(linked) > 1:
            shown = "; ".join(", ".join(m[:6]) + (", ..." if len(m) > 6 else "") for m in linked)
            note = _join(
                note,
                f"the bots form {len(linked)} groups that never shared a rated hand, directly "
                f"or through other bots ({shown}): ratings compare bots within a group only, "
                "and no pair across groups is compared.",
            )
    return Summary(
        tid,
        n_hands,
        planned or n_hands,
        None if none_rated else ratings,
        stats,
        cross,
        first_out,
        los,
        note,
        forfeit_policy=policy,
        forfeited_hands=forfeited_hands,
        given_up=given_up,
    )


# ------------------------------------------------------------------------------ formats

_COLS = [
    "#",
    "bot",
    "Elo",
    "95% CI",
    "hands",
    "win %",
    "pts left",
    "pts won",
    "timeouts",
    "illegal",
    "late",
    "crashes",
    "taken over",
    "forfeits",
    "mean ms",
    "p99 ms",
]


def _name(b: BotStats) -> str:
    return f"{b.bot} {GIVEN_UP_MARK}" if b.given_up else b.bot


def _join(note: str, more: str) -> str:
    """Two sentences of a note, the second capitalised."""
    more = more[0].upper() + more[1:]
    if not note:
        return more
    return f"{note.rstrip()}{'' if note.rstrip().endswith(('.', '!', '?')) else '.'} {more}"


def interval_text(lo: float, hi: float, ref: bool = False) -> str:
    """A 95% interval; an open end (a rating the results bound on one side only) as infinity;
    the bot the others are measured from (``ref``, :attr:`Summary.reference`) as "reference",
    not an interval of certainty."""
    if ref:
        return "reference"
    left = "(-inf" if math.isinf(lo) else f"[{lo:+.0f}"
    right = "+inf)" if math.isinf(hi) else f"{hi:+.0f}]"
    return f"{left}, {right}"


def rank_ranges(s: Summary) -> list[str]:
    """Each bot's rank, in the order of ``s.bots``, as the range the fit allows: a bot is placed
    below another only when the pair is called different (the covariance-aware 95% comparison of
    :meth:`~uno_tournament.ratings.Ratings.significant`; for a one-sided bot, intervals that do
    not overlap). ``"1"`` for a bot apart from every other, ``"1-2"`` while it and a neighbour
    are not told apart (two copies of one bot stay ``1-2``), ``"-"`` for a bot not rated."""
    names = [b.bot for b in s.bots]
    if s.ratings is None:  # no bot rated (or no hand): no rank either (an examination saw 1-4)
        return ["-"] * len(names)
    rated = {b.bot for b in s.bots if not (math.isnan(b.rating) or math.isnan(b.ci_low))}
    return ranks_allowed(s.ratings, names, rated)


def ranks_allowed(r: Ratings | None, names: list[str], rated_names: set[str]) -> list[str]:
    """:func:`rank_ranges` of the bots ``names`` (in display order) under the fit ``r``, the
    ``rated_names`` among them ranked (the others ``"-"``); also the live view's ranks
    (:mod:`uno_tournament.watch`), so the two never disagree on what the ratings allow."""
    if r is None:
        return [str(i) for i in range(1, len(names) + 1)]
    idx = {b: i for i, b in enumerate(r.bots)}
    sig = r.significant()
    lo, hi, side = r.ci_low, r.ci_high, r.sides

    def ahead(o: int, i: int) -> bool:
        """``o`` is called better than ``i``: by the estimates for two-sided bots; by the
        intervals when either is one-sided (its estimate is the prior's, not a rating)."""
        if not sig[o, i]:
            return False
        if side[o] or side[i]:
            always = r.ahead_always is not None and bool(r.ahead_always[o, i])
            return bool(lo[o] > hi[i]) or always
        return bool(r.elo[o] > r.elo[i])

    rated = {idx[b] for b in rated_names if b in idx}
    out = []
    for b in names:
        i = idx.get(b, -1)
        if i not in rated:
            out.append("-")
            continue
        above = sum(1 for o in rated if o != i and ahead(o, i))
        below = sum(1 for o in rated if o != i and ahead(i, o))
        best, worst = 1 + above, len(rated) - below
        out.append(str(best) if best == worst else f"{best}-{worst}")
    return out


def _estimate(b: BotStats) -> str:
    """The rating column: the estimate, or for a rating the results bound on one side only its
    limit (the fit's number there is the prior's, an artefact: an examination's always-last
    bot read -1933.9)."""
    if math.isinf(b.ci_low) and not math.isinf(b.ci_high):
        return f"≤ {b.ci_high:+.0f}"
    if math.isinf(b.ci_high) and not math.isinf(b.ci_low):
        return f"≥ {b.ci_low:+.0f}"
    return f"{b.rating:+.1f}"


def _row(rank: str, b: BotStats, ref: str | None) -> list[str]:
    rated = not (math.isnan(b.rating) or math.isnan(b.ci_low) or math.isnan(b.ci_high))
    return [
        rank,
        _name(b),
        _estimate(b) if rated else "-",
        interval_text(b.ci_low, b.ci_high, b.bot == ref) if rated else "not rated",
        str(b.hands),
        "-" if math.isnan(b.win_rate) else f"{100 * b.win_rate:.1f}",
        "-" if math.isnan(b.mean_points_left) else f"{b.mean_points_left:.1f}",
        "-" if math.isnan(b.mean_points_won) else f"{b.mean_points_won:.1f}",
        str(b.timeouts),
        str(b.illegal_actions),
        str(b.late_answers),
        str(b.crashes),
        str(b.seats_taken_over),
        str(b.forfeits),
        "-" if math.isnan(b.mean_decision_ms) else f"{b.mean_decision_ms:.1f}",
        "-" if math.isnan(b.p99_decision_ms) else f"{b.p99_decision_ms:.0f}",
    ]


def _los_cell(s: Summary, a: str, b: str) -> str:
    p = s.los.get(a, {}).get(b, math.nan)
    return "-" if math.isnan(p) else f"{p:.2f}"


def _cell(v: tuple[int, int, int]) -> str:
    n = sum(v)
    return f"{v[0]}-{v[1]}" + (f"-{v[2]}" if v[2] else "") if n else "."


def _first_cell(s: Summary, a: str, b: str) -> str:
    won, lost = s.first_out[a][b]
    if won + lost == 0:
        return "."
    pred = ""
    if s.ratings is not None and a in s.ratings.bots and b in s.ratings.bots:
        pred = f" ({100 * won / (won + lost):.0f}% vs {100 * s.ratings.first_out(a, b):.0f}%)"
    return f"{won}-{lost}{pred}"


def markdown(s: Summary) -> str:
    out = io.StringIO()
    out.write(f"# Tournament {s.tournament_id}\n\n")
    out.write("\n\n".join(header_lines(s)) + "\n\n")
    out.write("| " + " | ".join(_COLS) + " |\n")
    out.write("|" + "|".join("---" for _ in _COLS) + "|\n")
    ref = s.reference
    for rank, b in zip(rank_ranges(s), s.bots, strict=True):
        out.write("| " + " | ".join(_row(rank, b, ref)) + " |\n")
    names = [b.bot for b in s.bots]
    out.write("\n## Going out first\n\n")
    out.write(f"{GOING_OUT_TEXT}{first_note(s)}\n\n")
    out.write("| | " + " | ".join(names) + " |\n|" + "---|" * (len(names) + 1) + "\n")
    for a in names:
        cells = ["" if a == b else _first_cell(s, a, b) for b in names]
        out.write(f"| {a} | " + " | ".join(cells) + " |\n")
    out.write(f"\n## Cross-table\n\n{CROSS_LEGEND}\n\n")
    out.write("| | " + " | ".join(names) + " |\n|" + "---|" * (len(names) + 1) + "\n")
    for a in names:
        cells = ["" if a == b else _cell(s.cross[a][b]) for b in names]
        out.write(f"| {a} | " + " | ".join(cells) + " |\n")
    if s.los:
        out.write("\n## Likelihood of superiority\n\nP(row bot stronger than column bot).\n\n")
        out.write("| | " + " | ".join(names) + " |\n|" + "---|" * (len(names) + 1) + "\n")
        for a in names:
            cells = ["" if a == b else _los_cell(s, a, b) for b in names]
            out.write(f"| {a} | " + " | ".join(cells) + " |\n")
    return out.getvalue()


def csv_text(s: Summary) -> str:
    out = io.StringIO()
    w = csv.writer(out)
    fields = list(asdict(s.bots[0]).keys()) if s.bots else []
    # ranks: the range the ratings allow, as the leaderboard shows it; interval: how the
    # results bound the rating (two-sided, reference, one side only, tied exactly, not rated)
    w.writerow(["rank", *fields, "forfeit_policy", "ranks", "interval"])
    ref = s.reference
    for i, (b, ranks) in enumerate(zip(s.bots, rank_ranges(s), strict=True), start=1):
        # a missing number (not rated; no answer timed) is an empty cell, not "nan"
        row = [
            "" if isinstance(v, float) and math.isnan(v) else v
            for v in published(b, ref, s.tied).values()
        ]
        w.writerow([i, *row, s.forfeit_policy, ranks, interval_kind(b, ref, s.tied)])
    return out.getvalue()


def svg_chart(s: Summary) -> str:
    """Ratings with 95% error bars, one row per bot, strongest first
    (:func:`~uno_tournament.report_chart.rating_chart`). A rating the results bound on one side
    only is drawn as the leaderboard shows it: its limit and an arrow to the chart's edge, no
    estimate (the fit's number there is the prior's), and the axis leaves that number out."""
    ref = s.reference
    bars = []
    for b in s.bots:
        if math.isnan(b.rating):
            continue
        shown = interval_text(b.ci_low, b.ci_high, b.bot == ref)
        open_low, open_high = math.isinf(b.ci_low), math.isinf(b.ci_high)
        if not (open_low or open_high):
            bars.append(
                Bar(_name(b), b.ci_low, b.ci_high, b.rating, f"{b.bot}: {b.rating:+.1f} {shown}")
            )
            continue
        if open_low and open_high:
            title = f"{b.bot}: {shown} (the results bound it on neither side)"
        else:
            side = "below" if open_high else "above"
            title = f"{b.bot}: {_estimate(b)} {shown} (one-sided: the results bound it {side} only)"
        bars.append(Bar(_name(b), b.ci_low, b.ci_high, None, title))
    return rating_chart(bars)


def html_report(s: Summary) -> str:
    names = [b.bot for b in s.bots]

    def table(head: list[str], rows: list[list[str]]) -> str:
        th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
        body = "".join(
            "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in r) + "</tr>" for r in rows
        )
        return f"<table><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>"

    ref = s.reference
    board = table(_COLS, [_row(r, b, ref) for r, b in zip(rank_ranges(s), s.bots, strict=True)])
    first_note = html.escape(report_text.first_note(s))
    first = table(
        ["", *names],
        [[a, *("" if a == b else _first_cell(s, a, b) for b in names)] for a in names],
    )
    cross = table(
        ["", *names],
        [[a, *("" if a == b else _cell(s.cross[a][b]) for b in names)] for a in names],
    )
    los = table(
        ["", *names],
        [[a, *("" if a == b else _los_cell(s, a, b) for b in names)] for a in names],
    )
    seat = ""
    if s.ratings is not None:
        seat = "Seat terms (going out): " + ", ".join(
            f"seat {i}: {v:+.1f}" for i, v in enumerate(s.ratings.seat_elo)
        )
    header = "".join(f"<p>{html.escape(line)}</p>" for line in header_lines(s))
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
{header}
<p>{html.escape(seat)}</p>
<h2>Ratings</h2>
{svg_chart(s)}
<h2>Leaderboard</h2>
{board}
<h2>Going out first</h2>
<p>{html.escape(GOING_OUT_TEXT)}{first_note}</p>
{first}
<h2>Cross-table</h2>
<p>{html.escape(CROSS_LEGEND)}</p>
{cross}
<h2>Likelihood of superiority</h2>
<p>P(row bot stronger than column bot).</p>
{los}
</body></html>
"""


def print_leaderboard(s: Summary, stream: TextIO) -> None:
    from rich.console import Console
    from rich.measure import Measurement
    from rich.table import Table

    t = Table(title=f"Tournament {s.tournament_id}: {count(s.hands, 'hand')}")
    ref = s.reference
    rows = [_row(r, b, ref) for r, b in zip(rank_ranges(s), s.bots, strict=True)]
    for k, c in enumerate(_COLS):
        # a bot's name and its interval are never cut or wrapped (they are what a reader looks
        # up); the counters' headers wrap instead when the table is wider than the console
        whole = c in ("bot", "95% CI")
        t.add_column(
            c,
            justify="left" if c == "bot" else "right",
            no_wrap=whole,
            min_width=max([len(c)] + [len(r[k]) for r in rows]) if whole else None,
        )
    for r in rows:
        t.add_row(*r)
    # a terminal gets the table at its own width; a file or a pipe gets the whole table, as
    # wide as its columns need (at least 100 columns, for the notes under it)
    if stream.isatty():
        width = shutil.get_terminal_size((160, 24)).columns
    else:
        width = max(
            100, Measurement.get(Console(width=1000), Console(width=1000).options, t).maximum
        )
    console = Console(file=stream, width=width)
    console.print(t)
    for line in header_lines(s)[1:]:
        console.print(line, markup=False, highlight=False)


def write_all(
    out: Path,
    store: ResultStore,
    config: TournamentConfig,
    tid: str,
    *,
    stream: TextIO | None = None,
    planned: int = 0,
    given_up: dict[str, str] | None = None,
) -> Summary:
    s = summarize(store, config, tid, planned, given_up=given_up)
    from . import chain  # the hash chain verify recomputes (issue 20)

    plan_ids = [h.hand_id for h in config.plan(tid)]
    ch = chain.compute(store, plan_ids)
    chain.unchanged(out, tid, plan_ids, store, ch)
    seq_md = seq_html = ""
    seq_json: dict[str, Any] = {}
    if config.sequential:  # why a sequential run stopped, and its pairs over time
        from . import report_settled

        rec = report_settled.load(store.meta())
        if rec is not None:
            seq_md, seq_html = report_settled.markdown(rec), report_settled.html_section(rec)
            seq_json = {"sequential": report_settled.to_json(rec)}
    # each file is written beside its name and renamed over it (write_text_atomic): a link or
    # a pipe a stranger left at one of these names is replaced, not written through or waited on
    again = f"uno-arena tournament report {out}"
    write_text_atomic(out / "leaderboard.md", markdown(s) + seq_md + chain.markdown_line(ch), again)
    write_text_atomic(out / "leaderboard.csv", csv_text(s), again)
    write_text_atomic(
        out / "results.json",
        json.dumps({**s.to_json(), **seq_json, "chain": ch.to_json()}, indent=1),
        again,
    )
    write_text_atomic(
        out / "report.html",
        html_report(s).replace("</body>", seq_html + chain.html_line(ch) + "</body>", 1),
        again,
    )
    if stream is not None:
        print_leaderboard(s, stream)
        print(f"reports: {', '.join(str(out / f) for f in FILES)}", file=stream)
    return s
