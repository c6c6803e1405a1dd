"""The fit's frame (examination of 2026-12-04): bots the hands cannot rate must not move the
bots they do rate.

* A bot with no rated seat (every one forfeited under ``exclude``: a bot that crashed at its
  first decision) made maximum likelihood fail through its free parameter; the prior fit then
  widened every other interval about tenfold, and only when the bot was listed first.
* A bot rated on one deal only (not rated: an interval needs two) was in the mean-0 centring,
  and its uncertain estimate moved every other rating and widened every other interval.

The same hands must give the same table whatever the listing order, and the same intervals as a
fit without the bot that cannot be rated.
"""

from __future__ import annotations

import random
import re

import numpy as np

from uno_tournament.rating_model import Outcomes, Ratings, apply_forfeits
from uno_tournament.standings import fit_ratings

BOTS = ["A", "B", "C", "D"]


def _rows(deals: int, seed: int, strength: dict[str, float]) -> list[list[tuple[str, int]]]:
    """Hands of four seats rotated over each deal; places drawn by strength (Plackett-Luce)."""
    rnd = random.Random(seed)
    rows = []
    for _ in range(deals):
        for r in range(4):
            seated = [BOTS[(s + r) % 4] for s in range(4)]
            left, order = list(seated), []
            while left:
                weights = [10 ** (strength[b] / 400) for b in left]
                pick = rnd.choices(left, weights)[0]
                order.append(pick)
                left.remove(pick)
            rows.append([(b, order.index(b) + 1) for b in seated])
    return rows


def _fit(
    rows: list[list[tuple[str, int]]], names: list[str], forfeit: set[str]
) -> tuple[Ratings, str]:
    ix = {b: i for i, b in enumerate(names)}
    bots = np.array([[ix[b] for b, _ in h] for h in rows], dtype=np.int64)
    places = np.array([[p for _, p in h] for h in rows], dtype=np.int64)
    lost = np.isin(bots, [ix[b] for b in forfeit])
    bots, places = apply_forfeits(bots, places, lost, "exclude")
    cluster = np.repeat(np.arange(len(rows) // 4), 4)
    r, note = fit_ratings(Outcomes(bots, places, cluster, len(rows) // 4), names)
    assert r is not None
    return r, note


def _table(r: Ratings) -> dict[str, tuple[float, float, float, bool]]:
    return {
        b: (float(r.elo[i]), float(r.ci_low[i]), float(r.ci_high[i]), bool(r.rated[i]))
        for i, b in enumerate(r.bots)
    }


STRENGTH = {"A": 120.0, "B": 40.0, "C": -40.0, "D": -120.0}


def test_a_bot_with_no_rated_seat_moves_nobody_whatever_its_place_in_the_list() -> None:
    rows = _rows(12, 2, STRENGTH)
    first, note_first = _fit(rows, ["D", "A", "B", "C"], {"D"})
    last, note_last = _fit(rows, ["A", "B", "C", "D"], {"D"})
    assert "did not converge" not in note_first and note_first == note_last
    t1, t2 = _table(first), _table(last)
    assert not t1["D"][3] and not t2["D"][3]  # not rated, in either order
    for b in "ABC":
        assert np.allclose(t1[b], t2[b], rtol=1e-6, atol=1e-6), (b, t1[b], t2[b])
        low, high = t1[b][1], t1[b][2]
        assert high - low < 300, (b, low, high)  # not the prior's +-600


def test_a_bot_rated_on_one_deal_is_not_in_the_centring() -> None:
    """The other bots' intervals are those of their own frame: the one-deal bot's estimate
    (several hundred Elo from the mean, with a standard error of hundreds) shifts and widens
    nothing."""
    rows = _rows(12, 5, STRENGTH)
    alone, _ = _fit(rows, BOTS, set())
    extra = [[("E" if b == "D" else b, p) for b, p in h] for h in _rows(1, 9, STRENGTH)]
    names = [*BOTS, "E"]
    with_e, _ = _fit(rows + extra, names, set())
    e_first, _ = _fit(rows + extra, ["E", *BOTS], set())
    assert not with_e.rated[names.index("E")]
    ta, tb, tc = _table(alone), _table(with_e), _table(e_first)
    rated = [i for i, b in enumerate(names) if with_e.rated[i]]
    assert abs(float(np.mean(with_e.elo[rated]))) < 1e-9  # centred on the rated bots
    for b in BOTS:
        assert np.allclose(tb[b], tc[b], rtol=1e-6, atol=1e-6), (b, tb[b], tc[b])
        width_alone, width = ta[b][2] - ta[b][1], tb[b][2] - tb[b][1]
        # one more deal's hands can tell the others a little more or less; not twice as wide
        assert width < 1.3 * width_alone, (b, width_alone, width)


def test_one_bot_going_out_first_in_every_hand_gets_one_table_whatever_the_order() -> None:
    """No two bots were compared both ways (A went out first in all 24 hands): the frame is
    chosen from the results, so A is the reference and the others lie below it in any listing
    (listed after B, A had been "lower limit only" and unranked, B, C, D "two-sided")."""
    rnd = random.Random(1)
    rows = []
    for _ in range(6):
        for rot in range(4):
            rest = ["B", "C", "D"]
            rnd.shuffle(rest)
            order = ["A", *rest]
            rows.append([(b, order.index(b) + 1) for b in (BOTS[(s + rot) % 4] for s in range(4))])
    tables = []
    for names in (BOTS, ["B", "A", "C", "D"], ["D", "C", "B", "A"]):
        r, note = _fit(rows, names, set())
        t = _table(r)
        tables.append((t, note))
        assert t["A"][1] == t["A"][2] == 0.0  # the frame: A
        for b in "BCD":
            assert t[b][1] == -np.inf and t[b][2] < 0.0, (names, b, t[b])
    for t, note in tables[1:]:  # the note names the bots in the listing's order
        assert sorted(re.findall(r"\w+", note)) == sorted(re.findall(r"\w+", tables[0][1]))
        for b in BOTS:
            assert np.allclose(t[b], tables[0][0][b], rtol=1e-6, atol=1e-6), b


def test_groups_that_never_met_are_each_measured_among_themselves() -> None:
    """8 bots at two tables that never shared a bot (a run of 48 hands): the prior fixed the
    groups' offset and charged it to every interval (+-910 Elo, where each table's hands alone
    give about +-200), under a note that blamed convergence. Each group is now centred among
    itself, with the intervals of its own fit, and no pair across groups is called."""
    strength = {"A": 120.0, "B": 40.0, "C": -40.0, "D": -120.0}
    first, second = _rows(12, 3, strength), _rows(12, 4, strength)
    names = [*BOTS, *(b.lower() for b in BOTS)]
    rows = first + [[(b.lower(), p) for b, p in h] for h in second]
    both, note = _fit(rows, names, set())
    alone, _ = _fit(first, BOTS, set())
    t, ta = _table(both), _table(alone)
    for b in BOTS:
        width, width_alone = t[b][2] - t[b][1], ta[b][2] - ta[b][1]
        assert width < 1.2 * width_alone, (b, width, width_alone)
    assert abs(float(np.mean(both.elo[:4]))) < 1e-6 and abs(float(np.mean(both.elo[4:]))) < 1e-6
    sig = both.significant()
    assert not sig[:4, 4:].any() and not sig[4:, :4].any()  # nothing across the groups
    assert "did not converge" not in note and "2 groups of bots that never met" in note, note
