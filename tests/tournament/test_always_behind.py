"""A bot behind every other bot in every hand is ranked below them (rating_bounds.always_ahead).

An examination's bot that finished last in all 24 hands of a tournament (behind each of three
bots 24 times out of 24) was ranked "1-4", and so was every bot above it: its one-sided upper
limit reads going out first only, one hand a deal, and with six deals it stayed above the
others' lower limits. Pairs with a one-sided bot are now also called different by a sign test
on deals that assumes no model: ``o`` ahead of ``i`` in every hand they shared in ``k`` of ``n``
deals, with P(Binomial(n, 1/2) >= k) <= 2.5%.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest

from uno_tournament.engine_hands import engine_bot_names, play_engine_hands
from uno_tournament.rating_bounds import _half_tail, always_ahead, going_out_sides
from uno_tournament.rating_model import HandResult, Outcomes
from uno_tournament.report import ranks_allowed
from uno_tournament.standings import fit_ratings


def _last_always(hands: list[HandResult], bot: str) -> list[HandResult]:
    """``hands`` with ``bot`` moved to last place in each (what the "last" forfeit policy does
    with a bot that crashed every hand), the others' order kept."""
    out = []
    for h in hands:
        rest = sorted((f for f in h.finishes if f.bot != bot), key=lambda f: f.place)
        mine = next(f for f in h.finishes if f.bot == bot)
        order = [(f.bot, f.seat) for f in rest] + [(mine.bot, mine.seat)]
        out.append(HandResult.from_order(h.hand_id, h.deal_id, order))
    return out


def _outcomes(hands: list[HandResult], names: tuple[str, ...]) -> Outcomes:
    ordered = sorted(hands, key=lambda h: h.hand_id)
    return Outcomes.from_results(ordered, {b: i for i, b in enumerate(names)}, "deal")


def _engine(deals: int, seed: int) -> tuple[tuple[str, ...], list[HandResult]]:
    eps = (0.0, 0.3, 0.6, 1.0)
    names = engine_bot_names(eps)
    return names, _last_always(play_engine_hands(eps, 4 * deals, seed), names[3])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_an_engine_played_bot_last_in_every_hand_is_ranked_last(seed: int) -> None:
    names, hands = _engine(6, seed)  # the examination's size: 24 hands, 6 deals
    o = _outcomes(hands, names)
    assert going_out_sides(o, 4, names).tolist()[3] == -1
    r, note = fit_ratings(o, names)
    assert r is not None and r.side is not None and r.side[3] == -1, note
    assert r.ahead_always is not None and r.ahead_always[:3, 3].all()
    assert not r.ahead_always[3].any()
    ranks = ranks_allowed(r, list(names), set(names))
    assert ranks[3] == "4", ranks
    assert all(not x.endswith("4") for x in ranks[:3]), ranks
    # the limit alone did not say it: without the sign test the always-last bot is not placed
    # below all three (the examination's 1-4)
    bare = dataclasses.replace(r, ahead_always=None)
    assert ranks_allowed(bare, list(names), set(names))[3] != "4"


def test_five_deals_are_too_few_to_call_a_sweep() -> None:
    # 2^-5 = 3.1% > 2.5%: five deals swept do not call the pair; six (1.6%) do
    names, hands = _engine(5, 4)
    o = _outcomes(hands, names)
    side = going_out_sides(o, 4, names)
    assert side[3] == -1
    assert not always_ahead(o, 4, side).any()
    names, hands = _engine(6, 4)
    o = _outcomes(hands, names)
    assert always_ahead(o, 4, going_out_sides(o, 4, names))[:3, 3].all()


def test_a_deal_with_one_hand_lost_does_not_count_as_swept() -> None:
    # seven rotated deals; bot 3 never goes out first and is last, except that in one hand of
    # deals 0 and 1 it finishes ahead of bot 0: bot 0 swept it in 5 of 7 deals (22.7%), bots 1
    # and 2 in 7 of 7 (0.8%)
    names = ("a", "b", "c", "d")
    hands = []
    for d in range(7):
        for rot in range(4):
            seat = {names[i]: (i + rot) % 4 for i in range(4)}
            w = (d + rot) % 3
            order = [w] + [i for i in range(3) if i != w] + [3]
            if d < 2 and rot == 0:
                order = [1, 2, 3, 0]
            hands.append(
                HandResult.from_order(
                    f"h{d}-r{rot}", f"d{d}", [(names[i], seat[names[i]]) for i in order]
                )
            )
    o = _outcomes(hands, names)
    side = going_out_sides(o, 4, names)
    assert side.tolist() == [0, 0, 0, -1]
    got = always_ahead(o, 4, side)
    assert got[1, 3] and got[2, 3]
    assert not got[0, 3] and not got[3].any()
    r, _ = fit_ratings(o, names)
    assert r is not None
    ranks = ranks_allowed(r, list(names), set(names))
    assert not ranks[3].startswith("1"), ranks  # below b and c
    assert ranks[3] != "4" or r.ci_low[0] > r.ci_high[3], ranks  # a: only if the limits say so


@pytest.mark.parametrize(("n", "k"), [(6, 6), (6, 5), (24, 18), (100, 60), (7, 0), (3, 4)])
def test_the_binomial_tail_is_exact(n: int, k: int) -> None:
    exact = sum(math.comb(n, j) for j in range(max(k, 0), n + 1)) / 2**n
    assert _half_tail(n, k) == pytest.approx(exact, rel=1e-12, abs=1e-300)


def test_two_sided_fields_are_untouched() -> None:
    # seed 10: every bot went out first somewhere, so no bot is one-sided and the sign test is
    # not run (seed 9 of this size has a one-sided bot, and the test asserted nothing there)
    eps = (0.0, 0.3, 0.6, 1.0)
    names = engine_bot_names(eps)
    o = _outcomes(play_engine_hands(eps, 48, 10), names)
    r, _ = fit_ratings(o, names)
    assert r is not None
    assert r.side is None or not np.asarray(r.side).any()
    assert r.ahead_always is None
