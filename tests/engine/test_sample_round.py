"""The four-player sample round of how-to-play-uno.txt, replayed move by move from a stacked deck,
and its 147-point scoring example.

Ana (seat 0) deals; Ben (1), Cal (2) and Dee (3) follow to her left. The story has Ben go down to
one card after playing only three, so the replay deals four cards each (``hand_size=4``); with the
seven cards of a classic deal Ben would still hold four cards at that point. Every other move,
draw and final holding is exactly the story's:

- Ana: red 5, blue 8, green 5, Wild (ends with blue 8, green 5, Wild: 63)
- Ben: green Skip, yellow 9, red 2, red 6 (+ yellow Skip, green 0 as penalty: 26)
- Cal: Wild, red 7, red 1, red 3 ("three red cards"; draws a blue 9, later a Wild Draw Four: 58)
- Dee: yellow Skip, blue Reverse, red 9, yellow 3 (goes out on the yellow 3)

The "few turns later" are: Dee plays red 9 calling UNO; Cal draws a Wild Draw Four and keeps it;
Ben draws a red Reverse and plays it; Cal plays red 3; Dee plays her last card, the yellow 3.
"""

from __future__ import annotations

from typing import Any

import pytest

from uno_server.engine import actions as A
from uno_server.engine import cards as C
from uno_server.engine import events as E
from uno_server.engine.errors import IllegalActionError, WrongSeatError
from uno_server.engine.hand import CHALLENGE, OVER, Hand
from uno_server.engine.match import Match
from uno_server.engine.rules import RuleSet

from .helpers import BLUE, GREEN, RED, YELLOW, c, deal, held, legal_plays, of_type, one, play_action

ANA, BEN, CAL, DEE = 0, 1, 2, 3
RULES = RuleSet(seats=4, hand_size=4)
HANDS = {
    ANA: ["red_5", "blue_8", "green_5", "wild"],
    BEN: ["green_skip", "yellow_9", "red_2", "red_6"],
    CAL: ["wild", "red_7", "red_1", "red_3"],
    DEE: ["yellow_skip", "blue_reverse", "red_9", "yellow_3"],
}
DRAWS = ["blue_9", "yellow_skip", "green_0", "wild_draw_four", "red_reverse"]

STEPS: list[tuple[str, int, int]] = [
    ("ben green skip", BEN, play_action("green_skip")),
    ("dee yellow skip", DEE, play_action("yellow_skip")),
    ("ben yellow 9", BEN, play_action("yellow_9")),
    ("cal draws", CAL, A.DRAW),
    ("cal blue 9", CAL, play_action("blue_9")),
    ("dee blue reverse", DEE, play_action("blue_reverse")),
    ("cal wild red", CAL, play_action("wild", RED)),
    ("ben red 2", BEN, play_action("red_2")),
    ("ana catches ben", ANA, A.catch_id(BEN)),
    ("ana red 5", ANA, play_action("red_5")),
    ("dee red 9 uno", DEE, play_action("red_9", uno=True)),
    ("cal draws wd4", CAL, A.DRAW),
    ("cal keeps it", CAL, A.PASS),
    ("ben draws", BEN, A.DRAW),
    ("ben red reverse", BEN, play_action("red_reverse")),
    ("cal red 3", CAL, play_action("red_3")),
    ("dee yellow 3 out", DEE, play_action("yellow_3")),
]
LABELS = [s[0] for s in STEPS]


def new_hand() -> Hand:
    return deal(HANDS, first=["green_4"], draws=DRAWS, rules=RULES, dealer=ANA)


def replay(until: str | None = None, *, through: bool = True) -> tuple[Hand, dict[str, list[Any]]]:
    """Deal and apply the story's moves up to step ``until`` (included when ``through``)."""
    h = new_hand()
    out: dict[str, list[Any]] = {}
    for label, seat, action in STEPS:
        if label == until and not through:
            break
        out[label] = h.apply(seat, action)
        if label == until:
            break
    return h, out


def rule(sentence: str) -> pytest.MarkDecorator:
    return pytest.mark.rule("how-to-play", sentence)


@rule("Ana deals to Ben, Cal and Dee.")
def test_sample_ana_deals_to_ben_cal_and_dee() -> None:
    """Ana deals to Ben, Cal and Dee."""
    h = new_hand()
    assert h.dealer == ANA
    dealt = of_type(h.log, E.Dealt)
    assert [d.seat for d in dealt] == [ANA, BEN, CAL, DEE]
    for seat, cards in HANDS.items():
        assert sorted(h.hands[seat]) == sorted(c(x) for x in cards)


@rule("The flip is a green 4.")
def test_sample_flip_is_green_4() -> None:
    """The flip is a green 4."""
    h = new_hand()
    assert h.discard == [c("green_4")]
    assert h.color == GREEN
    assert one(h.log, E.FirstCard) == E.FirstCard(c("green_4"), False)


@rule("Ben sits to Ana's left, so he starts, and play goes Ben, Cal, Dee, Ana.")
def test_sample_ben_starts_and_play_goes_ben_cal_dee_ana() -> None:
    """Ben sits to Ana's left, so he starts, and play goes Ben, Cal, Dee, Ana."""
    h = new_hand()
    assert h.current == BEN
    assert h.direction == 1
    order = [(h.current + k * h.direction) % 4 for k in range(4)]
    assert order == [BEN, CAL, DEE, ANA]


@rule("Ben holds a green Skip, so he plays it.")
def test_sample_ben_plays_green_skip() -> None:
    """Ben holds a green Skip, so he plays it."""
    h = new_hand()
    assert "green_skip" in legal_plays(h, BEN)
    _, ev = replay("ben green skip")
    assert one(ev["ben green skip"], E.Played).card == c("green_skip")


@rule("Cal is skipped.")
def test_sample_cal_is_skipped() -> None:
    """Cal is skipped."""
    h, ev = replay("ben green skip")
    assert one(ev["ben green skip"], E.Skipped).seat == CAL
    assert h.current == DEE
    with pytest.raises(WrongSeatError):
        h.apply(CAL, A.DRAW)


@rule("The discard is now a green Skip.")
def test_sample_discard_is_now_green_skip() -> None:
    """The discard is now a green Skip."""
    h, _ = replay("ben green skip")
    assert h.top == c("green_skip")
    assert h.color == GREEN


@rule("Dee has no green card, but she has a yellow Skip.")
def test_sample_dee_has_no_green_but_a_yellow_skip() -> None:
    """Dee has no green card, but she has a yellow Skip."""
    h, _ = replay("ben green skip")
    assert not any(C.color_of(x) == GREEN for x in h.hands[DEE])
    assert legal_plays(h, DEE) == {"yellow_skip"}


@rule("Symbols match, so she plays it, and the color becomes yellow.")
def test_sample_symbols_match_color_becomes_yellow() -> None:
    """Symbols match, so she plays it, and the color becomes yellow."""
    h, ev = replay("dee yellow skip")
    assert one(ev["dee yellow skip"], E.Played).card == c("yellow_skip")
    assert h.color == YELLOW


@rule("Ana is skipped.")
def test_sample_ana_is_skipped() -> None:
    """Ana is skipped."""
    h, ev = replay("dee yellow skip")
    assert one(ev["dee yellow skip"], E.Skipped).seat == ANA
    assert h.current == BEN


@rule("Ben plays a yellow 9.")
def test_sample_ben_plays_yellow_9() -> None:
    """Ben plays a yellow 9."""
    h, ev = replay("ben yellow 9")
    assert one(ev["ben yellow 9"], E.Played).card == c("yellow_9")
    assert h.current == CAL


@rule("Cal has no yellow and no 9.")
def test_sample_cal_has_no_yellow_and_no_9() -> None:
    """Cal has no yellow and no 9."""
    h, _ = replay("ben yellow 9")
    assert not any(C.color_of(x) == YELLOW or C.rank_of(x) == 9 for x in h.hands[CAL])
    assert legal_plays(h, CAL) == {"wild"}  # only his Wild; he chooses to draw instead


@rule("He draws one card: a blue 9.")
def test_sample_cal_draws_blue_9() -> None:
    """He draws one card: a blue 9."""
    h, ev = replay("cal draws")
    d = one(ev["cal draws"], E.Drew)
    assert (d.seat, d.cards) == (CAL, (c("blue_9"),))
    assert len(h.hands[CAL]) == 5


@rule("It matches the number, so he plays it straight away.")
def test_sample_cal_plays_drawn_blue_9_straight_away() -> None:
    """It matches the number, so he plays it straight away."""
    h, _ = replay("cal draws")
    assert h.current == CAL
    assert legal_plays(h, CAL) == {"blue_9"}
    _, ev = replay("cal blue 9")
    assert one(ev["cal blue 9"], E.Played).card == c("blue_9")


@rule("Color is now blue.")
def test_sample_color_is_now_blue() -> None:
    """Color is now blue."""
    h, _ = replay("cal blue 9")
    assert h.color == BLUE
    assert h.current == DEE


@rule("Dee plays a blue Reverse.")
def test_sample_dee_plays_blue_reverse() -> None:
    """Dee plays a blue Reverse."""
    _, ev = replay("dee blue reverse")
    assert one(ev["dee blue reverse"], E.Played).card == c("blue_reverse")


@rule("Direction flips, so the turn goes back to Cal.")
def test_sample_direction_flips_turn_back_to_cal() -> None:
    """Direction flips, so the turn goes back to Cal."""
    h, ev = replay("dee blue reverse")
    assert one(ev["dee blue reverse"], E.Reversed).direction == -1
    assert h.direction == -1
    assert h.current == CAL


@rule("Cal plays a Wild and names red, because he holds three red cards.")
def test_sample_cal_plays_wild_names_red_holding_three_reds() -> None:
    """Cal plays a Wild and names red, because he holds three red cards."""
    h, _ = replay("cal wild red", through=False)
    assert sum(1 for x in h.hands[CAL] if C.color_of(x) == RED) == 3
    h, ev = replay("cal wild red")
    p = one(ev["cal wild red"], E.Played)
    assert (p.card, p.color) == (C.WILD, RED)
    assert h.color == RED


@rule("Ben is next in the new direction.")
def test_sample_ben_is_next_in_new_direction() -> None:
    """Ben is next in the new direction."""
    h, _ = replay("cal wild red")
    assert h.current == BEN


@rule("He holds a red 2, so a Wild Draw Four would be illegal.")
def test_sample_ben_holding_red_2_makes_wd4_a_bluff() -> None:
    """He holds a red 2, so a Wild Draw Four would be illegal.

    Ben holds no Wild Draw Four in the story; give him one in a copy of the position: played while
    holding red it is a bluff, and Cal's challenge makes Ben draw four."""
    h, _ = replay("cal wild red")
    assert c("red_2") in h.hands[BEN]
    what_if = Hand.from_dict(h.to_dict())
    what_if.hands[BEN].append(C.WILD_DRAW_FOUR)
    what_if.apply(BEN, A.play_id(C.WILD_DRAW_FOUR, BLUE))
    assert what_if.phase == CHALLENGE
    ev = what_if.apply(ANA, A.CHALLENGE)
    assert one(ev, E.Challenged).bluff is True
    assert len(one(ev, E.Drew).cards) == 4
    assert one(ev, E.Drew).seat == BEN


@rule('He plays the red 2, leaving one card, and forgets to say "UNO".')
def test_sample_ben_plays_red_2_leaving_one_card_without_uno() -> None:
    """He plays the red 2, leaving one card, and forgets to say "UNO"."""
    h, ev = replay("ben red 2")
    p = one(ev["ben red 2"], E.Played)
    assert (p.card, p.uno) == (c("red_2"), False)
    assert len(h.hands[BEN]) == 1
    assert h.window == BEN
    assert one(ev["ben red 2"], E.UnoWindowOpened).seat == BEN


@rule('Ana is next, and before she plays she points at Ben: "You didn\'t say UNO."')
def test_sample_ana_is_next_and_may_catch_before_she_plays() -> None:
    """Ana is next, and before she plays she points at Ben: "You didn't say UNO."."""
    h, _ = replay("ben red 2")
    assert h.current == ANA
    assert A.catch_id(BEN) in h.legal_actions(ANA)
    assert not legal_plays(h, ANA)  # she cannot begin her turn while the window is open
    with pytest.raises(IllegalActionError):
        h.apply(ANA, play_action("red_5"))


@rule("She caught him before her own turn began, so Ben draws two penalty cards.")
def test_sample_ben_draws_two_penalty_cards() -> None:
    """She caught him before her own turn began, so Ben draws two penalty cards."""
    h, ev = replay("ana catches ben")
    caught = one(ev["ana catches ben"], E.Caught)
    assert (caught.catcher, caught.offender, caught.penalty) == (ANA, BEN, 2)
    d = one(ev["ana catches ben"], E.Drew)
    assert (d.seat, d.cards) == (BEN, (c("yellow_skip"), c("green_0")))
    assert held(h, BEN) == ["green_0", "red_6", "yellow_skip"]
    assert h.window == -1


@rule("Then Ana plays a red 5.")
def test_sample_then_ana_plays_red_5() -> None:
    """Then Ana plays a red 5."""
    h, ev = replay("ana red 5")
    assert one(ev["ana red 5"], E.Played).card == c("red_5")
    assert h.current == DEE


@rule("Play continues.")
def test_sample_play_continues() -> None:
    """Play continues."""
    h, _ = replay("cal red 3")
    assert not h.over
    assert h.current == DEE
    assert held(h, DEE) == ["yellow_3"]


@rule("A few turns later Dee plays her last card, a yellow 3, and the round ends.")
def test_sample_dee_plays_last_card_yellow_3_round_ends() -> None:
    """A few turns later Dee plays her last card, a yellow 3, and the round ends."""
    h, ev = replay()
    assert one(ev["dee yellow 3 out"], E.Played).card == c("yellow_3")
    ended = one(ev["dee yellow 3 out"], E.HandEnded)
    assert ended.winner == DEE
    assert h.phase == OVER
    assert h.pending_seats() == []


@rule(
    "Cal used the free play after drawing instead of passing, and Ana spoke up at the right moment."
)
def test_sample_cal_used_free_play_instead_of_passing() -> None:
    """Two habits stand out in that round. Cal used the free play after drawing instead of passing,
    and Ana spoke up at the right moment."""
    h, _ = replay("cal draws")
    assert h.legal_actions(CAL)[0] == A.PASS  # passing was open to him
    passed = Hand.from_dict(h.to_dict())
    passed.apply(CAL, A.PASS)
    assert passed.current == DEE
    assert c("blue_9") in passed.hands[CAL]
    h, _ = replay("ana catches ben")
    assert len(h.hands[BEN]) == 3


@rule("Once Ana had started her turn, Ben would have been safe.")
def test_sample_once_ana_started_her_turn_ben_was_safe() -> None:
    """Once Ana had started her turn, Ben would have been safe."""
    h, _ = replay("ben red 2")
    for seat in (ANA, DEE, CAL):
        h.apply(seat, A.NO_CATCH)
    assert h.window == -1
    h.apply(ANA, play_action("red_5"))
    for seat in (ANA, CAL, DEE):
        assert A.catch_id(BEN) not in h.legal_actions(seat)
    with pytest.raises(IllegalActionError):
        h.apply(DEE, A.catch_id(BEN))
    assert len(h.hands[BEN]) == 1


# ---------------------------------------------------------------------------- the 147 points


def finished_match() -> tuple[Match, list[Any]]:
    m = Match(RULES, seed=1, dealer=ANA)
    m.hand = new_hand()
    events: list[Any] = []
    for _, seat, action in STEPS:
        events += m.apply(seat, action)
    return m, events


@rule("Back to the sample round. Dee went out.")
def test_scoring_example_dee_went_out() -> None:
    """Back to the sample round. Dee went out. Here is what the others were holding:"""
    h, _ = replay()
    assert h.winner == DEE
    assert h.hands[DEE] == []


@rule("Ana: blue 8, green 5, Wild. That is 8 + 5 + 50 = 63.")
def test_scoring_example_ana_holds_63() -> None:
    """Ana: blue 8, green 5, Wild. That is 8 + 5 + 50 = 63."""
    h, _ = replay()
    assert held(h, ANA) == ["blue_8", "green_5", "wild"]
    assert h.points_held(ANA) == 8 + 5 + 50 == 63


@rule(
    "Ben: red 6 plus his two penalty cards, a yellow Skip and a green 0. That is 6 + 20 + 0 = 26."
)
def test_scoring_example_ben_holds_26() -> None:
    """Ben: red 6 plus his two penalty cards, a yellow Skip and a green 0.
    That is 6 + 20 + 0 = 26."""
    h, _ = replay()
    assert held(h, BEN) == ["green_0", "red_6", "yellow_skip"]
    assert h.points_held(BEN) == 6 + 20 + 0 == 26


@rule("Cal: Wild Draw Four, red 7, red 1. That is 50 + 7 + 1 = 58.")
def test_scoring_example_cal_holds_58() -> None:
    """Cal: Wild Draw Four, red 7, red 1. That is 50 + 7 + 1 = 58."""
    h, _ = replay()
    assert held(h, CAL) == ["red_1", "red_7", "wild_draw_four"]
    assert h.points_held(CAL) == 50 + 7 + 1 == 58


@rule("Dee scores 63 + 26 + 58 = 147 points for the round.")
def test_scoring_example_dee_scores_147() -> None:
    """Dee scores 63 + 26 + 58 = 147 points for the round."""
    m, events = finished_match()
    ended = one(events, E.HandEnded)
    assert ended.points_held == (63, 26, 58, 0)
    scored = one(events, E.HandScored)
    assert scored.gained == (0, 0, 0, 147)
    assert m.totals == [0, 0, 0, 147]
    assert not m.over  # 147 is short of 500


@rule("Write it down, reshuffle all 108 cards, and the deal passes.")
def test_scoring_example_reshuffle_all_108_and_deal_passes() -> None:
    """Write it down, reshuffle all 108 cards, and the deal passes."""
    m, _ = finished_match()
    nxt = m.next_hand()
    assert nxt.dealer == BEN
    assert nxt.hand_number == 2
    everything = nxt.draw_pile + nxt.discard + [x for hs in nxt.hands for x in hs]
    assert sorted(everything) == sorted(C.full_deck(1))
    assert m.totals == [0, 0, 0, 147]
