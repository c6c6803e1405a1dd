"""how-to-play-uno.txt, part 1: the deck, the setup, the turn, going out, scoring and the strategy
section's statements of fact. One test per rule sentence; the sentence is in the docstring and in
the ``rule`` marker. (The sample round is in test_sample_round.py; the settled arguments, variants,
teaching lines, quiz and FAQ are in test_rules_how_to_play_faq.py.)"""

from __future__ import annotations

from collections import Counter

import pytest

from uno_server.engine import actions as A
from uno_server.engine import cards as C
from uno_server.engine import events as E
from uno_server.engine.errors import (
    HandOverError,
    IllegalActionError,
    InvalidRulesError,
    WrongSeatError,
)
from uno_server.engine.hand import CHALLENGE, CHOOSE_COLOR, DRAWN, OVER, TURN, Hand
from uno_server.engine.match import Match, choose_first_dealer
from uno_server.engine.rules import RuleSet
from uno_server.engine.views import redact, seat_view

from .helpers import (
    BLUE,
    GREEN,
    RED,
    YELLOW,
    StackedRandom,
    c,
    close_window_unanswered,
    cs,
    deal,
    deck_total,
    draw,
    drew,
    held,
    legal_plays,
    of_type,
    one,
    play,
    play_action,
    position,
)


def rule(sentence: str) -> pytest.MarkDecorator:
    return pytest.mark.rule("how-to-play", sentence)


COLORS = ("red", "yellow", "green", "blue")
SPARE = ["yellow_9", "yellow_8", "green_6"]
"""Cards seat 0 keeps besides the ones a test is about."""


# ---------------------------------------------------------------------------- the game


@rule(
    "Match the top card by color, number or symbol, use action cards to slow your neighbors, and "
    "be first to empty your hand."
)
def test_match_by_color_number_symbol_and_first_to_empty_hand_wins() -> None:
    """Match the top card by color, number or symbol, use action cards to slow your neighbors, and
    be first to empty your hand."""
    h = position(
        [["red_2", "blue_7", "blue_skip", "green_1"], 3, 3, 3],
        "red_7",
    )
    assert legal_plays(h, 0) == {"red_2", "blue_7"}
    h = position([["red_skip"], 3, 3, 3], "blue_skip")
    ev = play(h, 0, "red_skip")
    assert one(ev, E.HandEnded).winner == 0


@rule(
    "The classic match is a race to 500 points scored from what your opponents are still holding."
)
def test_classic_match_is_race_to_500_from_opponents_holdings() -> None:
    """The classic match is a race to 500 points scored from what your opponents are still
    holding."""
    assert RuleSet().target_score == 500
    assert RuleSet().scoring == "standard"
    m = Match(RuleSet(), seed=3, dealer=0)
    m.totals = [480, 0, 0, 0]
    m.hand = position([["red_5"], ["blue_9"], ["wild"], ["green_skip"]], "red_7", rules=m.rules)
    ev = m.apply(0, play_action("red_5"))
    assert one(ev, E.HandScored).gained == (9 + 50 + 20, 0, 0, 0)
    assert one(ev, E.MatchEnded).winners == (0,)


@rule("2\u201310 players")
@pytest.mark.parametrize("seats", range(2, 11))
def test_two_to_ten_players_can_be_dealt(seats: int) -> None:
    """2–10 players"""  # noqa: RUF002
    h = Hand.deal(RuleSet(seats=seats), seed=seats, dealer=0)
    assert h.card_counts() == [7] * seats
    assert deck_total(h) == 108


@rule("2\u201310 players")
@pytest.mark.parametrize("seats", [0, 1, 11, 12])
def test_fewer_than_two_or_more_than_ten_players_rejected(seats: int) -> None:
    """2–10 players"""  # noqa: RUF002
    with pytest.raises(InvalidRulesError, match=r"rules\.seats"):
        RuleSet(seats=seats)


# ---------------------------------------------------------------------------- the deck


@rule("The deck has 108 cards, and knowing what is in it helps you judge risk later in a round:")
def test_deck_has_108_cards() -> None:
    """The deck has 108 cards, and knowing what is in it helps you judge risk later in a round:"""
    assert len(C.one_deck()) == 108
    assert len(C.full_deck(1)) == 108
    h = Hand.deal(RuleSet(), seed=1, dealer=0)
    assert deck_total(h) == 108


@rule("76 number cards.")
def test_deck_has_76_number_cards() -> None:
    """76 number cards."""
    assert sum(1 for x in C.one_deck() if C.rank_of(x) <= 9 and not C.is_wild(x)) == 76


@rule(
    "Each of the four colors (red, yellow, green, blue) has one 0 and two each of 1 through 9, "
    "for 19 cards per color."
)
@pytest.mark.parametrize("color", COLORS)
def test_each_color_has_one_zero_and_two_each_of_1_to_9(color: str) -> None:
    """Each of the four colors (red, yellow, green, blue) has one 0 and two each of 1 through 9, for
    19 cards per color."""
    counts = Counter(C.one_deck())
    assert counts[c(f"{color}_0")] == 1
    for n in range(1, 10):
        assert counts[c(f"{color}_{n}")] == 2
    numbers = [x for x in C.one_deck() if C.name(x).startswith(color) and C.rank_of(x) <= 9]
    assert len(numbers) == 19


@rule("24 colored action cards. Two Draw Two, two Reverse and two Skip in each color.")
@pytest.mark.parametrize("color", COLORS)
@pytest.mark.parametrize("action", ["draw_two", "reverse", "skip"])
def test_two_of_each_action_card_in_each_color(color: str, action: str) -> None:
    """24 colored action cards. Two Draw Two, two Reverse and two Skip in each color."""
    counts = Counter(C.one_deck())
    assert counts[c(f"{color}_{action}")] == 2
    assert sum(1 for x in C.one_deck() if 10 <= C.rank_of(x) <= 12 and not C.is_wild(x)) == 24


@rule("8 black cards. Four Wild and four Wild Draw Four.")
def test_eight_black_cards_four_wild_four_wild_draw_four() -> None:
    """8 black cards. Four Wild and four Wild Draw Four."""
    counts = Counter(C.one_deck())
    assert counts[C.WILD] == 4
    assert counts[C.WILD_DRAW_FOUR] == 4
    assert sum(1 for x in C.one_deck() if C.color_of(x) == C.Color.BLACK) == 8


@rule(
    "If your box says 112 cards, you probably have an edition with blank customizable cards or a "
    "special card added. Pull those out for a classic game, or read the extra rule sheet before "
    "you use them."
)
def test_no_blank_or_special_cards_in_the_classic_deck() -> None:
    """If your box says 112 cards, you probably have an edition with blank customizable cards or a
    special card added. Pull those out for a classic game, or read the extra rule sheet before you
    use them."""
    assert set(C.one_deck()) == set(C.ALL_CODES)
    assert len(set(C.one_deck())) == 54
    for text in ("blank", "wild_shuffle_hands", "red_10", "black_wild"):
        with pytest.raises(ValueError):
            C.parse(text)
    with pytest.raises(ValueError, match="stacked_deck"):
        Hand.deal(RuleSet(), 0, 0, stacked_deck=[*C.one_deck(), C.WILD, C.WILD, C.WILD, C.WILD])


# ---------------------------------------------------------------------------- setup


@rule("Pick the dealer. Everyone draws one card.")
@pytest.mark.parametrize("seats", [2, 4, 10])
def test_pick_dealer_everyone_draws_one_card(seats: int) -> None:
    """Pick the dealer. Everyone draws one card."""
    m = Match(RuleSet(seats=seats), seed=seats)
    draws = of_type(m.log, E.DealerDraw)
    assert sorted(d.seat for d in draws[:seats]) == list(range(seats))
    assert one(m.log, E.DealerChosen).seat == m.dealer == m.hand.dealer


@rule("The highest number deals.")
def test_highest_number_deals() -> None:
    """The highest number deals."""
    rng = StackedRandom([cs("red_3", "blue_9", "green_8", "yellow_1")])
    dealer, events = choose_first_dealer(rng, 4)
    assert dealer == 1
    assert events[-1] == E.DealerChosen(1)
    assert [e.card for e in of_type(events, E.DealerDraw)] == cs(
        "red_3", "blue_9", "green_8", "yellow_1"
    )


@rule("Any action or Wild card counts as zero for this draw.")
@pytest.mark.parametrize(
    "high", ["wild", "wild_draw_four", "red_skip", "blue_reverse", "green_draw_two"]
)
def test_action_and_wild_cards_count_as_zero_for_dealer_draw(high: str) -> None:
    """Any action or Wild card counts as zero for this draw."""
    assert C.dealer_draw_value(c(high)) == 0
    rng = StackedRandom([cs(high, "yellow_1", "red_0")])
    dealer, _ = choose_first_dealer(rng, 3)
    assert dealer == 1


@rule("Shuffle and deal seven. The dealer deals seven cards face down to each player.")
@pytest.mark.parametrize("seats", [2, 4, 7])
def test_dealer_deals_seven_cards_face_down_to_each_player(seats: int) -> None:
    """Shuffle and deal seven. The dealer deals seven cards face down to each player."""
    h = Hand.deal(RuleSet(seats=seats), seed=11, dealer=0)
    assert h.card_counts() == [7] * seats
    for d in of_type(h.log, E.Dealt):
        assert len(d.cards) == 7
        for viewer in range(seats):
            seen = redact(d, viewer)
            assert isinstance(seen, E.Dealt)
            assert seen.cards == (d.cards if viewer == d.seat else ())
    other = Hand.deal(RuleSet(seats=seats), seed=12, dealer=0)
    assert [sorted(x) for x in h.hands] != [sorted(x) for x in other.hands]  # shuffled


@rule("Hold your hand so neighbors cannot see it; a fanned hand tilted toward you is enough.")
def test_neighbors_cannot_see_your_hand() -> None:
    """Hold your hand so neighbors cannot see it; a fanned hand tilted toward you is enough."""
    h = Hand.deal(RuleSet(), seed=5, dealer=0)
    for seat in range(4):
        v = seat_view(h, seat)
        assert v.hand == tuple(sorted(h.hands[seat]))
        assert v.card_counts == (7, 7, 7, 7)
        assert not any(hasattr(v, f) for f in ("hands", "draw_pile_cards"))


@rule("Make the draw pile. Put the rest of the deck face down in the middle.")
def test_rest_of_deck_is_the_face_down_draw_pile() -> None:
    """Make the draw pile. Put the rest of the deck face down in the middle."""
    h = deal(
        {1: ["red_1", "red_2", "red_3", "red_4", "red_5", "red_6", "red_7"]},
        first=["green_4"],
        draws=["blue_5"],
    )
    assert len(h.draw_pile) == 108 - 4 * 7 - 1
    assert seat_view(h, 0).draw_pile == 79
    ev = draw(h, 1)
    d = one(ev, E.Drew)
    assert d.cards == (c("blue_5"),)
    assert redact(d, 2) == d._replace(cards=())
    assert redact(d, 1) == d


@rule(
    "Flip the first discard. Turn the top card of the draw pile face up next to it. That card "
    "starts the discard pile."
)
def test_top_card_of_draw_pile_flipped_to_start_discard_pile() -> None:
    """Flip the first discard. Turn the top card of the draw pile face up next to it. That card
    starts the discard pile."""
    h = deal({}, first=["yellow_6"], draws=["blue_2"])
    assert h.discard == [c("yellow_6")]
    assert h.color == YELLOW
    assert h.draw_pile[-1] == c("blue_2")
    fc = one(h.log, E.FirstCard)
    assert fc == E.FirstCard(c("yellow_6"), False)
    assert all(redact(fc, v) == fc for v in (-1, 0, 1, 2, 3))


@rule(
    "Handle an action card on the flip. If the first card is a Draw Two, the player to the "
    "dealer's left draws two and loses the turn."
)
@pytest.mark.parametrize("dealer", [0, 3])
def test_first_card_draw_two_dealers_left_draws_two_and_loses_turn(dealer: int) -> None:
    """Handle an action card on the flip. If the first card is a Draw Two, the player to the
    dealer's left draws two and loses the turn."""
    left = (dealer + 1) % 4
    h = deal({}, first=["red_draw_two"], draws=["blue_1", "blue_2"], dealer=dealer)
    assert h.card_counts()[left] == 9
    d = one(h.log, E.Drew)
    assert (d.seat, d.cards) == (left, (c("blue_1"), c("blue_2")))
    assert one(h.log, E.Skipped).seat == left
    assert h.current == (left + 1) % 4
    assert h.phase == TURN


@rule("A Skip means that player is skipped.")
def test_first_card_skip_dealers_left_is_skipped() -> None:
    """A Skip means that player is skipped."""
    h = deal({}, first=["green_skip"], dealer=2)
    assert one(h.log, E.Skipped).seat == 3
    assert h.current == 0
    assert h.direction == 1
    assert h.card_counts() == [7, 7, 7, 7]


@rule("A Reverse means the dealer plays first and play moves to the right.")
def test_first_card_reverse_dealer_plays_first_and_play_moves_right() -> None:
    """A Reverse means the dealer plays first and play moves to the right."""
    h = deal({1: ["blue_5", *SPARE]}, first=["blue_reverse"], dealer=1)
    assert h.current == 1
    assert h.direction == -1
    play(h, 1, "blue_5")
    assert h.current == 0  # to the dealer's right


@rule("A Wild means the player to the dealer's left picks the starting color.")
def test_first_card_wild_dealers_left_picks_starting_color() -> None:
    """A Wild means the player to the dealer's left picks the starting color."""
    h = deal({2: ["blue_5", "red_1", *SPARE]}, first=["wild"], dealer=1)
    assert h.phase == CHOOSE_COLOR
    assert h.current == 2
    assert h.legal_actions(2) == [A.choose_color_id(x) for x in range(4)]
    assert h.legal_actions(3) == []
    ev = h.apply(2, A.choose_color_id(BLUE))
    assert one(ev, E.ColorChosen) == E.ColorChosen(2, BLUE)
    assert h.color == BLUE
    assert h.current == 2  # then plays its turn
    assert legal_plays(h, 2) == {"blue_5"}


@rule("A Wild Draw Four goes back into the deck, and you flip again.")
def test_first_card_wild_draw_four_goes_back_and_flip_again() -> None:
    """A Wild Draw Four goes back into the deck, and you flip again."""
    h = deal({}, first=["wild_draw_four"], seed=7)
    flips = of_type(h.log, E.FirstCard)
    assert flips[0] == E.FirstCard(C.WILD_DRAW_FOUR, True)
    assert flips[-1].returned is False
    assert h.top != C.WILD_DRAW_FOUR
    assert h.discard == [flips[-1].card]
    held_wd4 = sum(x.count(C.WILD_DRAW_FOUR) for x in h.hands)
    assert h.draw_pile.count(C.WILD_DRAW_FOUR) == 4 - held_wd4
    assert deck_total(h) == 108


@rule(
    "Start play. Unless the first card changed it, the player to the dealer's left goes first "
    "and play moves to the left (clockwise)."
)
@pytest.mark.parametrize("dealer", [0, 1, 3])
def test_dealers_left_goes_first_and_play_moves_left(dealer: int) -> None:
    """Start play. Unless the first card changed it, the player to the dealer's left goes first and
    play moves to the left (clockwise)."""
    left = (dealer + 1) % 4
    h = deal({left: ["green_7", *SPARE]}, first=["green_4"], dealer=dealer)
    assert h.current == left
    assert h.direction == 1
    play(h, left, "green_7")
    assert h.current == (left + 1) % 4


# ---------------------------------------------------------------------------- a turn


@rule(
    "Match the top card. Play one card that matches the discard by color, by number, or by symbol."
)
@pytest.mark.parametrize(
    ("top", "card", "ok"),
    [
        ("red_7", "red_2", True),
        ("red_7", "blue_7", True),
        ("red_skip", "green_skip", True),
        ("blue_draw_two", "yellow_draw_two", True),
        ("red_7", "blue_2", False),
        ("red_skip", "green_reverse", False),
        ("green_0", "yellow_draw_two", False),
    ],
)
def test_play_one_card_matching_color_number_or_symbol(top: str, card: str, ok: bool) -> None:
    """Match the top card. Play one card that matches the discard by color, by number, or by
    symbol."""
    h = position([[card, "yellow_9", "yellow_8"], 3, 3, 3], top)
    if ok:
        play(h, 0, card)
        assert h.top == c(card)
        assert h.current != 0  # one card per turn
        with pytest.raises(WrongSeatError):
            play(h, 0, "yellow_9")
    else:
        with pytest.raises(IllegalActionError) as err:
            play(h, 0, card)
        assert err.value.reason == "NO_MATCH"
        assert h.top == c(top)


@rule("On a red 7 you may play any red card or any 7.")
def test_on_red_7_any_red_card_or_any_7() -> None:
    """On a red 7 you may play any red card or any 7."""
    hand = ["red_0", "red_skip", "red_draw_two", "blue_7", "green_7", "blue_1", "yellow_reverse"]
    h = position([hand, 3, 3, 3], "red_7")
    assert legal_plays(h, 0) == {"red_0", "red_skip", "red_draw_two", "blue_7", "green_7"}


@rule(
    "A Draw Two can go on a card of its own color or on another Draw Two; Skip and Reverse work "
    "the same way."
)
@pytest.mark.parametrize("symbol", ["draw_two", "skip", "reverse"])
@pytest.mark.parametrize(
    ("top", "ok"), [("blue_3", True), ("green_{s}", True), ("red_3", False), ("wild", False)]
)
def test_action_card_on_own_color_or_same_symbol(symbol: str, top: str, ok: bool) -> None:
    """A Draw Two can go on a card of its own color or on another Draw Two; Skip and Reverse work
    the same way."""
    top_card = top.format(s=symbol)
    color = "yellow" if top_card == "wild" else None
    h = position([[f"blue_{symbol}", "yellow_9", "yellow_8"], 3, 3, 3], top_card, color=color)
    assert (f"blue_{symbol}" in legal_plays(h, 0)) is ok


@rule("Wilds can go on anything.")
@pytest.mark.parametrize("top", ["red_7", "blue_skip", "green_draw_two", "yellow_0", "wild"])
def test_wild_can_go_on_anything(top: str) -> None:
    """Wilds can go on anything."""
    h = position(
        [["wild", "green_9", "yellow_8"], 3, 3, 3], top, color="blue" if top == "wild" else None
    )
    assert "wild" in legal_plays(h, 0)
    play(h, 0, "wild", RED)
    assert h.color == RED


@rule("A regular Wild can be played even when you hold a card that matches.")
def test_regular_wild_playable_while_holding_a_match() -> None:
    """A regular Wild can be played even when you hold a card that matches."""
    h = position([["wild", "red_9", "red_8"], 3, 3, 3], "red_7")
    assert {"wild", "red_9", "red_8"} <= legal_plays(h, 0)
    ev = play(h, 0, "wild", GREEN)
    assert one(ev, E.Played).color == GREEN
    assert h.phase == TURN
    assert h.current == 1  # no challenge for a regular Wild


@rule("You name the next color, and you may name the color that was already in play.")
@pytest.mark.parametrize("named", range(4))
def test_wild_names_next_color_including_the_current_one(named: int) -> None:
    """You name the next color, and you may name the color that was already in play."""
    h = position([["wild", "red_9", "red_8"], 3, 3, 3], "red_7")
    assert A.play_id(C.WILD, named) in h.legal_actions(0)
    play(h, 0, "wild", named)
    assert h.color == named


@rule(
    "Wild Draw Four has a condition. You may play it only if you have no card matching the "
    "current color."
)
@pytest.mark.parametrize(("other", "bluff"), [("red_2", True), ("blue_2", False)])
def test_wild_draw_four_only_without_current_color(other: str, bluff: bool) -> None:
    """Wild Draw Four has a condition. You may play it only if you have no card matching the current
    color. (Playing it anyway is a bluff that a challenge punishes; see DECISIONS.md.)"""
    h = position([["wild_draw_four", other, "yellow_8"], 3, 3, 3], "red_7")
    play(h, 0, "wild_draw_four", BLUE)
    ev = h.apply(1, A.CHALLENGE)
    assert one(ev, E.Challenged).bluff is bluff
    d = one(ev, E.Drew)
    assert (d.seat, len(d.cards)) == ((0, 4) if bluff else (1, 6))


@rule("Matching numbers or symbols in other colors do not count against you.")
def test_wd4_other_color_numbers_and_symbols_do_not_count() -> None:
    """Matching numbers or symbols in other colors do not count against you."""
    h = position(
        [["wild_draw_four", "blue_7", "green_skip", "wild"], 3, 3, 3],
        "red_skip",
        under=["red_7"],
    )
    play(h, 0, "wild_draw_four", BLUE)
    ev = h.apply(1, A.CHALLENGE)
    assert one(ev, E.Challenged).bluff is False
    assert len(drew(ev, 1)) == 6


@rule("Name the color; the next player draws four and loses the turn.")
def test_wd4_names_color_next_player_draws_four_and_loses_turn() -> None:
    """Name the color; the next player draws four and loses the turn."""
    h = position(
        [["wild_draw_four", "blue_1", "yellow_8"], 3, 3, 3],
        "red_7",
        draws=["green_1", "green_2", "green_3", "green_4"],
    )
    play(h, 0, "wild_draw_four", YELLOW)
    assert h.color == YELLOW
    assert (h.phase, h.current) == (CHALLENGE, 1)
    ev = h.apply(1, A.ACCEPT)
    assert drew(ev, 1) == ["green_1", "green_2", "green_3", "green_4"]
    assert one(ev, E.Skipped).seat == 1
    assert h.current == 2
    assert len(h.hands[1]) == 7


@rule("Can't play, or don't want to? Draw one.")
@pytest.mark.parametrize("hand", [["blue_1", "blue_2"], ["red_1", "wild"]])
def test_draw_one_when_you_cannot_or_do_not_want_to_play(hand: list[str]) -> None:
    """Can't play, or don't want to? Draw one."""
    h = position([hand, 3, 3, 3], "red_7", draws=["yellow_4"])
    assert A.DRAW in h.legal_actions(0)
    ev = draw(h, 0)
    assert drew(ev, 0) == ["yellow_4"]


@rule("Take one card from the draw pile.")
def test_draw_takes_one_card_from_top_of_draw_pile() -> None:
    """Take one card from the draw pile."""
    h = position([["blue_1", "blue_2"], 3, 3, 3], "red_7", draws=["green_5", "green_6"])
    before = len(h.draw_pile)
    draw(h, 0)
    assert len(h.draw_pile) == before - 1
    assert held(h, 0) == ["blue_1", "blue_2", "green_5"]
    assert h.draw_pile[-1] == c("green_6")


@rule("If that card is playable, you may play it right away.")
def test_drawn_playable_card_may_be_played_right_away() -> None:
    """If that card is playable, you may play it right away."""
    h = position([["blue_1", "blue_2"], 3, 3, 3], "red_7", draws=["red_3"])
    draw(h, 0)
    assert (h.phase, h.current) == (DRAWN, 0)
    assert h.legal_actions(0) == [A.PASS, play_action("red_3")]
    play(h, 0, "red_3")
    assert h.top == c("red_3")
    assert h.current == 1


@rule("You may not play a different card from your hand after drawing.")
def test_may_not_play_a_different_card_after_drawing() -> None:
    """You may not play a different card from your hand after drawing."""
    h = position([["red_1", "wild", "blue_2"], 3, 3, 3], "red_7", draws=["red_3"])
    draw(h, 0)
    for other in ("red_1", "wild"):
        with pytest.raises(IllegalActionError) as err:
            play(h, 0, other)
        assert err.value.reason == "ONLY_DRAWN_CARD"
    assert legal_plays(h, 0) == {"red_3"}


@rule("If the drawn card is not playable, your turn is over.")
def test_unplayable_drawn_card_ends_turn() -> None:
    """If the drawn card is not playable, your turn is over."""
    h = position([["red_1", "blue_2"], 3, 3, 3], "red_7", draws=["blue_3"])
    ev = draw(h, 0)
    assert one(ev, E.Passed).seat == 0
    assert (h.phase, h.current) == (TURN, 1)
    assert c("blue_3") in h.hands[0]
    assert h.legal_actions(0) == []


@rule("Apply action cards. Skip: the next player loses a turn.")
@pytest.mark.parametrize("direction", [1, -1])
def test_skip_next_player_loses_a_turn(direction: int) -> None:
    """Apply action cards. Skip: the next player loses a turn."""
    h = position([["red_skip", *SPARE], 3, 3, 3], "red_7", direction=direction)
    ev = play(h, 0, "red_skip")
    skipped = direction % 4
    assert one(ev, E.Skipped).seat == skipped
    assert h.current == (2 * direction) % 4


@rule("Reverse: direction flips.")
@pytest.mark.parametrize("direction", [1, -1])
def test_reverse_direction_flips(direction: int) -> None:
    """Reverse: direction flips."""
    h = position([["red_reverse", *SPARE], 3, 3, 3], "red_7", direction=direction)
    ev = play(h, 0, "red_reverse")
    assert one(ev, E.Reversed).direction == -direction
    assert h.direction == -direction
    assert h.current == (-direction) % 4


@rule("Draw Two: the next player draws two and loses the turn.")
def test_draw_two_next_player_draws_two_and_loses_turn() -> None:
    """Draw Two: the next player draws two and loses the turn."""
    h = position([["red_draw_two", *SPARE], 3, 3, 3], "red_7", draws=["red_1", "red_2"])
    ev = play(h, 0, "red_draw_two")
    assert drew(ev, 1) == ["red_1", "red_2"]
    assert one(ev, E.Skipped).seat == 1
    assert h.current == 2
    assert len(h.hands[1]) == 5


@rule('Say "UNO" with your next-to-last card.')
def test_say_uno_with_next_to_last_card() -> None:
    """Say "UNO" with your next-to-last card."""
    h = position([["red_1", "red_2"], 3, 3, 3], "red_7")
    assert play_action("red_1", uno=True) in h.legal_actions(0)
    ev = play(h, 0, "red_1", uno=True)
    assert one(ev, E.UnoCalled) == E.UnoCalled(0, False)
    assert h.window == -1
    assert h.uno_called[0] is True
    assert A.catch_id(0) not in h.legal_actions(1)
    h2 = position([["red_1", "red_2", "red_3"], 3, 3, 3], "red_7")
    with pytest.raises(IllegalActionError) as err:
        play(h2, 0, "red_1", uno=True)
    assert err.value.reason == "UNO_NOT_ALLOWED"


@rule(
    "If you go down to one card without saying it and someone catches you before the next player "
    "begins their turn, draw two."
)
@pytest.mark.parametrize("catcher", [1, 2, 3])
def test_caught_without_uno_before_next_turn_draws_two(catcher: int) -> None:
    """If you go down to one card without saying it and someone catches you before the next player
    begins their turn, draw two."""
    h = position([["red_1", "red_2"], 3, 3, 3], "red_7", draws=["blue_8", "blue_9"])
    play(h, 0, "red_1")
    assert h.window == 0
    ev = h.apply(catcher, A.catch_id(0))
    assert one(ev, E.Caught) == E.Caught(catcher, 0, 2)
    assert drew(ev, 0) == ["blue_8", "blue_9"]
    assert len(h.hands[0]) == 3
    assert h.window == -1
    assert h.current == 1


@rule("Go out. The round ends the moment someone plays their last card.")
def test_round_ends_when_last_card_played() -> None:
    """Go out. The round ends the moment someone plays their last card."""
    h = position([["red_1"], 3, 3, 3], "red_7")
    ev = play(h, 0, "red_1")
    ended = one(ev, E.HandEnded)
    assert ended.winner == 0
    assert h.phase == OVER
    assert h.pending_seats() == []
    assert all(h.legal_actions(s) == [] for s in range(4))
    with pytest.raises(HandOverError):
        draw(h, 1)


@rule(
    "If that card was a Draw Two or Wild Draw Four, the next player still draws those cards, and "
    "they count against that player in scoring."
)
@pytest.mark.parametrize(
    ("last", "n", "pts"), [("red_draw_two", 2, 70), ("wild_draw_four", 4, 140)]
)
def test_going_out_on_draw_card_next_player_draws_and_they_score(
    last: str, n: int, pts: int
) -> None:
    """If that card was a Draw Two or Wild Draw Four, the next player still draws those cards, and
    they count against that player in scoring."""
    m = Match(RuleSet(), seed=1, dealer=3)
    m.hand = position(
        [[last], ["blue_1"], ["blue_2"], ["blue_3"]],
        "red_7",
        draws=["wild", "red_skip", "wild_draw_four", "yellow_reverse"],
        rules=m.rules,
    )
    ev = m.apply(0, play_action(last, GREEN))
    assert len(drew(ev, 1)) == n
    assert not of_type(ev, E.Challenged)
    ended = one(ev, E.HandEnded)
    assert ended.winner == 0
    assert ended.points_held[1] == 1 + pts
    assert one(ev, E.HandScored).gained == (1 + pts + 2 + 3, 0, 0, 0)


@rule(
    "If the draw pile runs out before anyone goes out, keep the top discard in place, shuffle "
    "the rest of the discard pile and turn it face down as a new draw pile."
)
def test_empty_draw_pile_reshuffles_discards_under_top_card() -> None:
    """If the draw pile runs out before anyone goes out, keep the top discard in place, shuffle the
    rest of the discard pile and turn it face down as a new draw pile."""
    under = ["blue_1", "blue_2", "green_3", "yellow_4", "wild"]
    h = position([["blue_9", "blue_8"], 3, 3, 3], "red_7", under=under, pile=[])
    ev = draw(h, 0)
    assert one(ev, E.Reshuffled)[0] == 5
    assert h.discard == [c("red_7")]
    got = drew(ev, 0)
    assert len(got) == 1
    assert sorted(names_of(h.draw_pile) + got) == sorted(under)


def names_of(codes: list[int]) -> list[str]:
    return [C.name(x) for x in codes]


# ---------------------------------------------------------------------------- scoring


@rule("The player who goes out scores the cards left in everyone else's hand.")
def test_player_going_out_scores_everyone_elses_cards() -> None:
    """The player who goes out scores the cards left in everyone else's hand."""
    m = Match(RuleSet(), seed=2, dealer=1)
    m.hand = position(
        [["blue_1", "blue_2"], ["red_9", "wild"], ["blue_skip"], ["red_1"]],
        "blue_7",
        current=2,
        rules=m.rules,
    )
    m.apply(2, play_action("blue_skip"))
    assert m.totals == [0, 0, 1 + 2 + 9 + 50 + 1, 0]


@rule(
    "Number cards are worth their face value, colored action cards are worth 20, and both kinds "
    "of Wild are worth 50."
)
@pytest.mark.parametrize("code", C.ALL_CODES, ids=C.name)
def test_card_values_face_value_action_20_wild_50(code: int) -> None:
    """Number cards are worth their face value, colored action cards are worth 20, and both kinds of
    Wild are worth 50."""
    rank = C.rank_of(code)
    want = 50 if C.is_wild(code) else 20 if rank >= 10 else rank
    assert C.points(code) == want
    h = position([[C.name(code)], 3, 3, 3], "red_7", color="red")
    assert h.points_held(0) == want


@rule("The first player to reach 500 points across several rounds wins.")
def test_first_to_500_across_rounds_wins() -> None:
    """The first player to reach 500 points across several rounds wins."""
    m = Match(RuleSet(), seed=2, dealer=3)
    m.hand = position([["red_1"], ["wild"], ["wild"], ["blue_9"]], "red_7", rules=m.rules)
    ev = m.apply(0, play_action("red_1"))
    assert m.totals == [109, 0, 0, 0]
    assert not m.over and not of_type(ev, E.MatchEnded)
    m.next_hand()
    m.totals = [420, 495, 0, 0]
    m.hand = position(
        [["wild_draw_four"], ["red_skip", "red_skip"], ["blue_9"], ["red_1"]],
        "red_7",
        rules=m.rules,
    )
    ev = m.apply(0, play_action("wild_draw_four"))
    assert m.totals[0] >= 500
    assert one(ev, E.MatchEnded).winners == (0,)
    assert m.over
    with pytest.raises(HandOverError):
        m.next_hand()


@rule(
    "W2085 also prints an alternative: keep a running total of the points each player is caught "
    "holding at the end of each round."
)
def test_lowest_scoring_running_total_of_points_held() -> None:
    """W2085 also prints an alternative: keep a running total of the points each player is caught
    holding at the end of each round."""
    m = Match(RuleSet(scoring="lowest"), seed=2, dealer=3)
    m.hand = position(
        [["red_1"], ["wild", "red_2"], ["blue_9"], ["green_skip"]], "red_7", rules=m.rules
    )
    m.apply(0, play_action("red_1"))
    assert m.totals == [0, 52, 9, 20]
    m.next_hand()
    m.hand = position(
        [["red_4", "red_5"], ["blue_1"], ["blue_9"], ["green_3", "red_2"]],
        "blue_7",
        current=1,
        rules=m.rules,
    )
    m.apply(1, play_action("blue_1"))
    assert m.totals == [9, 52, 18, 25]


@rule("When anyone reaches 500, the player with the lowest total wins.")
def test_lowest_scoring_lowest_total_wins_when_anyone_reaches_500() -> None:
    """When anyone reaches 500, the player with the lowest total wins."""
    m = Match(RuleSet(scoring="lowest"), seed=2, dealer=3)
    m.totals = [300, 460, 120, 200]
    m.hand = position([["red_1"], ["wild"], ["blue_9"], ["green_skip"]], "red_7", rules=m.rules)
    ev = m.apply(0, play_action("red_1"))
    assert m.totals == [300, 510, 129, 220]
    assert one(ev, E.MatchEnded).winners == (2,)


@rule("This version keeps everyone in the scoring every round, which suits mixed-age tables.")
def test_lowest_scoring_keeps_everyone_in_the_scoring() -> None:
    """This version keeps everyone in the scoring every round, which suits mixed-age tables."""
    m = Match(RuleSet(scoring="lowest"), seed=2, dealer=3)
    m.hand = position([["red_1"], ["blue_2"], ["blue_9"], ["green_skip"]], "red_7", rules=m.rules)
    ev = m.apply(0, play_action("red_1"))
    gained = one(ev, E.HandScored).gained
    assert gained == (0, 2, 9, 20)
    assert all(g > 0 for s, g in enumerate(gained) if s != 0)


# ---------------------------------------------------------------------------- strategy facts


@rule("A Wild in your hand is a 50-point liability if someone else goes out.")
def test_strategy_wild_held_costs_50_points() -> None:
    """A Wild in your hand is a 50-point liability if someone else goes out."""
    m = Match(RuleSet(), seed=4, dealer=0)
    m.hand = position(
        [["red_1"], ["wild"], ["wild_draw_four"], ["green_0"]], "red_7", rules=m.rules
    )
    ev = m.apply(0, play_action("red_1"))
    assert one(ev, E.HandEnded).points_held == (0, 50, 50, 0)


@rule(
    "A hand that is all blue is strong while blue is in play and dead the moment someone changes "
    "it."
)
def test_strategy_one_color_hand_dead_when_color_changes() -> None:
    """Keep more than one color. A hand that is all blue is strong while blue is in play and dead
    the moment someone changes it."""
    blues = ["blue_1", "blue_2", "blue_3"]
    h = position([blues, 3, 3, 3], "blue_7")
    assert legal_plays(h, 0) == set(blues)
    h = position([blues, 3, 3, 3], "wild", color="red")
    assert legal_plays(h, 0) == set()
    assert h.legal_actions(0) == [A.DRAW]


@rule("If you have three reds and one green, red is the answer, even if green feels sneakier.")
def test_strategy_timeout_colour_choice_is_the_colour_held_most() -> None:
    """Name the color you hold most, not the color you like. When you play a Wild, count. If you
    have three reds and one green, red is the answer, even if green feels sneakier. (The service's
    default for a seat that does not name the colour of a flipped Wild follows this advice.)"""
    h = deal(
        {1: ["red_1", "red_2", "red_3", "green_4", "wild", "wild", "wild_draw_four"]},
        first=["wild"],
    )
    assert h.default_action(1) == A.choose_color_id(RED)


@rule(
    "Save a Draw Two or Skip for the UNO caller. The best time to use a penalty card is right "
    "before the player with one card gets to play."
)
@pytest.mark.parametrize("card", ["red_draw_two", "red_skip"])
def test_strategy_penalty_card_stops_the_uno_caller(card: str) -> None:
    """Save a Draw Two or Skip for the UNO caller. The best time to use a penalty card is right
    before the player with one card gets to play."""
    h = position([[card, *SPARE], ["red_5"], 3, 3], "red_7")
    ev = play(h, 0, card)
    assert one(ev, E.Skipped).seat == 1
    assert h.current == 2
    assert len(h.hands[1]) == (3 if card == "red_draw_two" else 1)


@rule("It is a clue, not proof, because he may have chosen to draw.")
def test_strategy_drawing_while_holding_the_color_is_allowed() -> None:
    """Watch what people draw on. If Cal draws when yellow is up, he probably has no yellow. It is a
    clue, not proof, because he may have chosen to draw."""
    h = position([["yellow_1", "yellow_2"], 3, 3, 3], "yellow_7", draws=["blue_4"])
    assert "yellow_1" in legal_plays(h, 0)
    ev = draw(h, 0)
    assert drew(ev, 0) == ["blue_4"]
    assert h.current == 1


@rule(
    "You cannot play it while you have the current color. Keep it until the color has moved away "
    "from your hand, and it becomes both legal and nasty."
)
def test_strategy_wd4_becomes_honest_once_color_moves_away() -> None:
    """Hold the Wild Draw Four for a legal moment. You cannot play it while you have the current
    color. Keep it until the color has moved away from your hand, and it becomes both legal and
    nasty."""
    hand = ["wild_draw_four", "red_1", "red_2"]
    h = position([hand, 3, 3, 3], "red_7")
    play(h, 0, "wild_draw_four", RED)
    assert one(h.apply(1, A.CHALLENGE), E.Challenged).bluff is True
    h = position([hand, 3, 3, 3], "blue_7")
    play(h, 0, "wild_draw_four", RED)
    ev = h.apply(1, A.CHALLENGE)
    assert one(ev, E.Challenged).bluff is False
    assert len(drew(ev, 1)) == 6


@rule(
    "A Reverse can protect you by pointing the next turn away from a player who is about to go out."
)
def test_strategy_reverse_points_next_turn_away() -> None:
    """Think about who is next. A Reverse can protect you by pointing the next turn away from a
    player who is about to go out."""
    h = position([["red_reverse", *SPARE], ["red_5"], 3, 3], "red_7")
    play(h, 0, "red_reverse")
    assert h.current == 3
    assert h.current != 1


def test_position_helper_conserves_the_deck() -> None:
    """(helper check) A built position holds the 108 cards exactly once, like a dealt hand."""
    h = position([["red_1", "wild"], 3, 3, 3], "red_7", under=["blue_7"])
    assert deck_total(h) == 108
    h.apply(0, A.DRAW)
    assert deck_total(h) == 108
    assert isinstance(h, Hand)
    close = position([["red_1", "red_2"], 3, 3, 3], "red_7")
    play(close, 0, "red_1")
    close_window_unanswered(close)
    assert close.window == -1


@rule(
    "One classic UNO deck, paper and a pencil for scoring, and a table where everyone can reach "
    "the middle."
)
def test_one_classic_deck_and_a_score_sheet() -> None:
    """One classic UNO deck, paper and a pencil for scoring, and a table where everyone can reach
    the middle."""
    m = Match(RuleSet(), seed=7)
    assert m.rules.decks == 1
    assert deck_total(m.hand) == 108
    assert m.totals == [0, 0, 0, 0]


@rule("Black cards are the most expensive cards to get stuck holding.")
def test_black_cards_are_the_most_expensive() -> None:
    """Every card in a classic 108-card deck and what it is worth to the player who goes out. Black
    cards are the most expensive cards to get stuck holding."""
    top = max(C.points(x) for x in C.one_deck())
    assert {C.name(x) for x in C.one_deck() if C.points(x) == top} == {"wild", "wild_draw_four"}
    assert sum(C.points(x) for x in C.one_deck()) == 4 * (2 * 45 + 6 * 20) + 8 * 50
