"""Copies of one deterministic bot, dealt duplicate deals, play every deal alike from every seat.

The fit then has nothing to estimate: every deal's scores cancel, so the ratings come out as
rounding noise (1e-14 Elo, either sign, which ordered the leaderboard and printed "-0") and the
clustered intervals have no width. That looked like the collapse the first examiners reported
("every rating +0.0"). The report now says what it is, and the ratings are exactly 0.
"""

from __future__ import annotations

import csv
import io
import json
from types import SimpleNamespace
from typing import Any

import numpy as np

from uno_tournament.engine_hands import engine_bot_names, play_engine_hands
from uno_tournament.rating_bounds import reference_of, tied_exactly
from uno_tournament.ratings import Outcomes
from uno_tournament.report import csv_text
from uno_tournament.standings import TIED_NOTE, fit_played, fit_ratings

from .test_one_sided import _summary_of


def _outcomes(eps: list[float], hands: int = 96, seed: int = 3) -> tuple[Outcomes, list[str]]:
    names = list(engine_bot_names(eps))
    played = sorted(play_engine_hands(eps, hands, seed), key=lambda h: h.hand_id)
    return Outcomes.from_results(played, {b: i for i, b in enumerate(names)}, "deal"), names


def _columns(o: Outcomes, names: list[str]) -> Any:
    """What :func:`fit_played` reads of the stored columns: the seats' bots and their names."""
    return SimpleNamespace(bots=o.bots, bot_names=names)


def test_copies_of_one_deterministic_bot_are_tied_exactly_and_the_report_says_so() -> None:
    o, names = _outcomes([0.0] * 5)  # the engine's heuristic bot, never random: five copies
    assert tied_exactly(o)
    plain, _ = fit_ratings(o, names)
    assert plain is not None
    assert float(np.max(np.abs(plain.elo))) < 1e-6  # the fit's own answer: noise around 0
    r, note = fit_played(_columns(o, names), o)
    assert r is not None
    assert note == TIED_NOTE
    assert "tied exactly" in note and "cannot tell these bots apart" in note
    assert [float(x) for x in r.elo] == [0.0] * 5  # exactly, so the order is by name
    assert all(
        lo <= 0.0 <= hi and hi - lo < 1e-6 for lo, hi in zip(r.ci_low, r.ci_high, strict=True)
    )
    # every interval has no width, so none of them is the one the others are measured from
    assert reference_of(list(zip(r.bots, r.ci_low, r.ci_high, strict=True))) is None
    assert plain.unmeasured > 0 and r.unmeasured == 0  # the tie's note, not the few-deals one
    # the machine-readable files say it: "0.0, 0.0" and "two-sided" read as a collapsed fit
    s = _summary_of(r, note)
    rows = list(csv.DictReader(io.StringIO(csv_text(s))))
    assert [row["interval"] for row in rows] == ["tied exactly"] * 5
    assert [row["ranks"] for row in rows] == ["1-5"] * 5
    data = json.loads(json.dumps(s.to_json(), allow_nan=False))
    assert [b["interval"] for b in data["leaderboard"]] == ["tied exactly"] * 5


def test_bots_that_play_differently_are_not_called_tied() -> None:
    o, names = _outcomes([0.1] * 4)  # equal bots, but each plays a random action 10% of the time
    assert not tied_exactly(o)
    r, note = fit_played(_columns(o, names), o)
    assert r is not None and "tied exactly" not in note
    assert float(np.min(r.ci_high - r.ci_low)) > 50.0  # real intervals


def test_one_hand_played_differently_breaks_the_tie() -> None:
    o, names = _outcomes([0.0] * 4, hands=48)
    assert tied_exactly(o)
    places = o.places.copy()
    places[17, [0, 1]] = places[17, [1, 0]]  # two seats of one hand swap places
    edited = Outcomes(o.bots, places, o.cluster, o.n_clusters)
    assert not tied_exactly(edited)
    _, note = fit_played(_columns(edited, names), edited)
    assert "tied exactly" not in note


def test_deals_of_one_hand_cannot_show_a_tie() -> None:
    o, _ = _outcomes([0.0] * 4, hands=48)
    alone = Outcomes(o.bots, o.places, np.arange(o.n_hands), o.n_hands)  # every hand its own deal
    assert not tied_exactly(alone)
    empty = Outcomes(o.bots[:0], o.places[:0], o.cluster[:0], 0)
    assert not tied_exactly(empty)
