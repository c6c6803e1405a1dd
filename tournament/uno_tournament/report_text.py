"""The reports' prose: the sentences that explain a leaderboard's columns, its gaps, its
going-out table and its forfeits, shared by the Markdown, the HTML and the terminal report (cut
from :mod:`uno_tournament.report`, which was at its 800-line limit)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .plural import count
from .ratings import first_out_probability

if TYPE_CHECKING:
    from .report import Summary

GAP_EXAMPLES = (50, 100, 200, 400)
CROSS_LEGEND = (
    "Row bot finished ahead-behind(-tied) of the column bot, in the hands as the ratings count "
    "them: a seat a stand-in played is a forfeit under the policy (Forfeits above)."
)


def gap_meaning(gaps: tuple[int, ...] = GAP_EXAMPLES) -> str:
    """One sentence: what a rating gap means, in odds a reader can check."""
    odds = ", ".join(f"{100 * first_out_probability(g):.0f}% for +{g}" for g in gaps)
    return (
        "What a gap means: of the hands two bots share in which one of the two goes out first, "
        f"the stronger goes out first in {odds} (check it in the 'going out first' table)."
    )


COLUMNS_TEXT = (
    "Columns: # is the rank, or the ranks the ratings allow (2-3: not told apart from a "
    "neighbour at 95%); hands, win % and points count the hands a bot played itself (a seat a "
    "stand-in played is a forfeit, not the bot's result); illegal: actions rejected as malformed "
    "or not legal; late: answers that arrived after their chance had closed (a race, not a "
    "fault); mean ms and p99 ms time the answers a bot gave (- where it answered none in time)."
)


def header_lines(s: Summary) -> list[str]:
    lines = [
        f"{s.hands} of {count(s.planned, 'hand')}.",
        s.model_text,
        gap_meaning(),
        s.policy_text,
        COLUMNS_TEXT,
    ]
    if s.given_up:
        lines.append(s.given_up_note())
    if s.note:
        lines.append(f"Note: {s.note}")
    return lines


def first_note(s: Summary) -> str:
    """Under "last", what going out first means in a hand a stand-in won (rating_model's
    first_rated); nothing when no hand had a stand-in."""
    if s.forfeit_policy != "last" or not s.forfeited_hands:
        return ""
    return (
        ' Under the "last" forfeit policy, in a hand a stand-in won the best of the others '
        "by points counts as going out first, and no one does when several tie for it."
    )


GOING_OUT_TEXT = (
    "Of the hands the row and column bots share in which one of the two went out first: row "
    "first - column first (the row's share vs the share the ratings predict)."
)
