"""The leaderboard's rank column is the range of ranks the ratings allow: a bot is placed below
another only when the pair is called different at 95% (covariance-aware; for a one-sided bot,
intervals apart). Two bots of one strength stay ``1-2`` instead of swapping plain ranks from run
to run, as an examination saw the league's copies do."""

from __future__ import annotations

import dataclasses
import io

import numpy as np

from uno_tournament.engine_hands import engine_bot_names, play_engine_hands
from uno_tournament.ratings import Outcomes
from uno_tournament.report import Summary, markdown, print_leaderboard, rank_ranges
from uno_tournament.standings import fit_ratings

from .test_one_sided import NAMES as FIVE
from .test_one_sided import _strong_first, _summary_of


def _engine_summary(eps: list[float], hands: int, seed: int) -> Summary:
    names = list(engine_bot_names(eps))
    played = sorted(play_engine_hands(eps, hands, seed), key=lambda h: h.hand_id)
    out = Outcomes.from_results(played, {b: i for i, b in enumerate(names)}, "deal")
    r, note = fit_ratings(out, names)
    assert r is not None
    return _summary_of(r, note)


def test_equal_bots_share_a_range_and_the_others_are_placed() -> None:
    # engine-played hands: two bots of one strength (randomness 0.1), then 0.6 and 1
    s = _engine_summary([0.1, 0.1, 0.6, 1.0], 480, 0)
    assert rank_ranges(s) == ["1-2", "1-2", "3", "4"]
    assert {b.bot for b in s.bots[:2]} == {"e00-0.10", "e01-0.10"}
    s = _engine_summary([0.0, 0.3, 0.6, 1.0, 1.0], 240, 0)
    assert rank_ranges(s) == ["1", "2", "3", "4-5", "4-5"]


def test_every_output_shows_the_range() -> None:
    s = _engine_summary([0.1, 0.1, 0.6, 1.0], 480, 0)
    text = io.StringIO()
    print_leaderboard(s, text)
    rows = [ln for ln in text.getvalue().splitlines() if "e0" in ln and "│" in ln]
    assert [ln.split("│")[1].strip() for ln in rows] == ["1-2", "1-2", "3", "4"], rows
    names = [b.bot for b in s.bots]
    md = markdown(
        dataclasses.replace(
            s,
            cross={a: {b: (1, 1, 0) for b in names if b != a} for a in names},
            first_out={a: {b: (1, 1) for b in names if b != a} for a in names},
        )
    )
    assert f"| 1-2 | {s.bots[0].bot} |" in md and f"| 3 | {s.bots[2].bot} |" in md
    assert "2-3: not told apart from a neighbour at 95%" in md
    assert [b["ranks"] for b in s.to_json()["leaderboard"]] == ["1-2", "1-2", "3", "4"]


def test_a_one_sided_bot_and_a_bot_not_rated() -> None:
    # a bot that went out first in every hand it played: placed first only when its lower
    # limit clears every other bot's upper limit, or it finished ahead of each of them in every
    # hand of enough deals (rating_bounds.always_ahead)
    o, _ = _strong_first(40, 1001)
    r, note = fit_ratings(o, FIVE)
    assert r is not None and r.sides[0] == 1 and r.ahead_always is not None
    s = _summary_of(r, note)
    ranks = rank_ranges(s)
    top = ranks[[b.bot for b in s.bots].index(FIVE[0])]
    above = [
        float(r.ci_low[0]) > float(r.ci_high[i]) or bool(r.ahead_always[0, i]) for i in range(1, 5)
    ]
    assert (top == "1") == all(above), (top, r.ci_low, r.ci_high, r.ahead_always[0])
    # by the limits alone it is not placed first here: the sign test did it
    bare = dataclasses.replace(r, ahead_always=None)
    top_bare = rank_ranges(_summary_of(bare, note))[[b.bot for b in s.bots].index(FIVE[0])]
    others_high = max(float(r.ci_high[i]) for i in range(1, 5))
    assert (top_bare == "1") == (float(r.ci_low[0]) > others_high)
    # a bot with no rating (no deals) has no rank
    gone = dataclasses.replace(s.bots[-1], rating=float("nan"), ci_low=float("nan"))
    s2 = dataclasses.replace(s, bots=[*s.bots[:-1], gone])
    assert rank_ranges(s2)[-1] == "-"
    # without a fit no bot is rated, so none has a rank (positions 1-5 read as a ranking the
    # ratings did not give: an examination, on a run cut to one hand)
    assert rank_ranges(dataclasses.replace(s, ratings=None)) == ["-"] * 5


def test_a_one_sided_bot_is_placed_by_its_limit_not_by_its_prior_estimate() -> None:
    # the estimate of a bot rated on one side only is the prior's, not a rating: it may lie
    # anywhere, and the pair's order comes from the intervals (which called it different)
    o, _ = _strong_first(40, 1001)
    r, note = fit_ratings(o, FIVE)
    assert r is not None and r.sides[0] == 1
    before = rank_ranges(_summary_of(r, note))
    elo = r.elo.copy()
    elo[0] = float(np.min(r.elo)) - 5000.0  # below every other bot's estimate
    moved = dataclasses.replace(r, elo=elo)
    assert np.array_equal(moved.significant(), r.significant())
    s = _summary_of(moved, note)
    # listed first again, as before (its limit places it): the ranks must not move
    s = dataclasses.replace(s, bots=sorted(s.bots, key=lambda b: b.bot != FIVE[0]))
    assert [b.bot for b in s.bots] == [b.bot for b in _summary_of(r, note).bots]
    assert rank_ranges(s) == before
