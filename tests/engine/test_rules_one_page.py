"""uno-one-page.txt: the printable one-page summary, one test per rule sentence."""

from __future__ import annotations

import pytest

from uno_server.engine import actions as A
from uno_server.engine import cards as C
from uno_server.engine import events as E
from uno_server.engine.errors import IllegalActionError, InvalidRulesError
from uno_server.engine.hand import CHALLENGE, CHOOSE_COLOR, DRAWN, OVER, TURN, Hand
from uno_server.engine.match import Match, choose_first_dealer
from uno_server.engine.rules import RuleSet
from uno_server.engine.views import redact

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
    legal_plays,
    of_type,
    one,
    play,
    play_action,
    position,
    stacked_deck,
)


def rule(sentence: str) -> pytest.MarkDecorator:
    return pytest.mark.rule("one-page", sentence)


SPARE = ["yellow_9", "yellow_8", "green_6"]
ACTIONS_AND_WILDS = ["red_skip", "blue_reverse", "green_draw_two", "wild", "wild_draw_four"]


@rule("2\u201310 players \u00b7 1 UNO deck \u00b7 paper for scores")
@pytest.mark.parametrize("seats", [2, 6, 10])
def test_two_to_ten_players_one_deck_scores_kept(seats: int) -> None:
    """2–10 players · 1 UNO deck · paper for scores"""  # noqa: RUF002
    rules = RuleSet(seats=seats)
    assert rules.decks == 1
    m = Match(rules, seed=seats)
    assert deck_total(m.hand) == 108
    assert m.totals == [0] * seats
    with pytest.raises(InvalidRulesError):
        RuleSet(seats=seats + 9)


@rule("Each player gets 7 cards.")
@pytest.mark.parametrize("seats", [2, 4, 10])
def test_each_player_gets_seven_cards(seats: int) -> None:
    """Each player gets 7 cards."""
    h = deal({}, first=["red_4"], rules=RuleSet(seats=seats))
    assert h.card_counts() == [7] * seats


@rule(
    "On your turn, play one card that matches the top of the discard pile by color, number, or "
    "symbol, or play a Wild; if you can't, draw a card."
)
def test_play_a_match_or_a_wild_otherwise_draw() -> None:
    """On your turn, play one card that matches the top of the discard pile by color, number, or
    symbol, or play a Wild; if you can't, draw a card."""
    h = position(
        [["blue_7", "blue_skip", "wild", "green_1"], 3, 3, 3], "blue_skip", under=["yellow_7"]
    )
    assert legal_plays(h, 0) == {"blue_7", "blue_skip", "wild"}
    stuck = position([["green_1", "yellow_2"], 3, 3, 3], "blue_skip", draws=["red_3"])
    assert stuck.legal_actions(0) == [A.DRAW]
    ev = draw(stuck, 0)
    assert drew(ev, 0) == ["red_3"]


@rule(
    "Say 'UNO' when you have one card left, and the first player to empty their hand wins the "
    "round and scores points for the cards left in everyone else's hands."
)
def test_say_uno_first_out_wins_and_scores_others_cards() -> None:
    """Say 'UNO' when you have one card left, and the first player to empty their hand wins the
    round and scores points for the cards left in everyone else's hands."""
    m = Match(RuleSet(), seed=1, dealer=3)
    m.hand = position(
        [["red_1", "red_2"], ["blue_5", "wild", "green_3"], ["red_skip", "blue_1", "blue_2"], 3],
        "red_7",
        rules=m.rules,
    )
    ev = m.apply(0, play_action("red_1", uno=True))
    assert one(ev, E.UnoCalled).seat == 0
    m.apply(1, play_action("wild", RED))
    m.apply(2, play_action("red_skip"))
    ev = m.apply(0, play_action("red_2"))
    assert one(ev, E.HandEnded).winner == 0
    assert m.totals[0] == m.hand.points_held(1) + m.hand.points_held(2) + m.hand.points_held(3)
    assert m.totals[0] == (5 + 3) + (1 + 2) + m.hand.points_held(3)


# ---------------------------------------------------------------------------- in brief


@rule("Deal 7 each; flip one card to start the discard pile")
def test_brief_deal_seven_each_flip_one_card() -> None:
    """Deal 7 each; flip one card to start the discard pile"""
    h = deal({}, first=["yellow_5"])
    assert h.card_counts() == [7, 7, 7, 7]
    assert h.discard == [c("yellow_5")]
    assert len(h.draw_pile) == 108 - 29


@rule("Match color, number, or symbol, or play a Wild")
@pytest.mark.parametrize(
    ("card", "ok"),
    [
        ("green_2", True),
        ("blue_9", True),
        ("red_draw_two", False),
        ("wild", True),
        ("yellow_reverse", False),
    ],
)
def test_brief_match_color_number_symbol_or_wild(card: str, ok: bool) -> None:
    """Match color, number, or symbol, or play a Wild"""
    h = position([[card, *SPARE], 3, 3, 3], "green_9")
    assert (card in legal_plays(h, 0)) is ok


@rule("Can't play? Draw 1; play it if it matches")
def test_brief_cant_play_draw_one_play_it_if_it_matches() -> None:
    """Can't play? Draw 1; play it if it matches"""
    h = position([["blue_1", "blue_2"], 3, 3, 3], "red_4", draws=["red_8"])
    draw(h, 0)
    assert len(h.hands[0]) == 3
    play(h, 0, "red_8")
    assert h.top == c("red_8")


@rule("Skip: next player loses turn. Reverse: change direction")
@pytest.mark.parametrize(("card", "nxt", "direction"), [("red_skip", 2, 1), ("red_reverse", 3, -1)])
def test_brief_skip_and_reverse(card: str, nxt: int, direction: int) -> None:
    """Skip: next player loses turn. Reverse: change direction"""
    h = position([[card, *SPARE], 3, 3, 3], "red_4")
    play(h, 0, card)
    assert (h.current, h.direction) == (nxt, direction)


@rule("Draw Two: next draws 2 and loses turn")
def test_brief_draw_two_next_draws_two_loses_turn() -> None:
    """Draw Two: next draws 2 and loses turn"""
    h = position([["blue_draw_two", *SPARE], 3, 3, 3], "red_draw_two")
    ev = play(h, 0, "blue_draw_two")
    assert len(drew(ev, 1)) == 2
    assert h.current == 2


@rule("Wild Draw 4: only if no card matches the discard color")
@pytest.mark.parametrize(("other", "bluff"), [("red_9", True), ("green_4", False), ("wild", False)])
def test_brief_wild_draw_four_only_without_discard_color(other: str, bluff: bool) -> None:
    """Wild Draw 4: only if no card matches the discard color"""
    h = position([["wild_draw_four", other, "blue_4"], 3, 3, 3], "red_4")
    play(h, 0, "wild_draw_four", GREEN)
    assert one(h.apply(1, A.CHALLENGE), E.Challenged).bluff is bluff


@rule("Challenge a Wild Draw 4: guilty draws 4, wrong challenger draws 6")
@pytest.mark.parametrize("guilty", [True, False])
def test_brief_challenge_guilty_draws_four_wrong_challenger_six(guilty: bool) -> None:
    """Challenge a Wild Draw 4: guilty draws 4, wrong challenger draws 6"""
    h = position([["wild_draw_four", "red_9" if guilty else "blue_9", "blue_4"], 3, 3, 3], "red_4")
    play(h, 0, "wild_draw_four", GREEN)
    ev = h.apply(1, A.CHALLENGE)
    assert (len(drew(ev, 0)), len(drew(ev, 1))) == ((4, 0) if guilty else (0, 6))


@rule("Say UNO on your next-to-last card or draw 2 if caught")
@pytest.mark.parametrize("called", [True, False])
def test_brief_say_uno_or_draw_two_if_caught(called: bool) -> None:
    """Say UNO on your next-to-last card or draw 2 if caught"""
    h = position([["red_9", "red_1"], 3, 3, 3], "red_4")
    play(h, 0, "red_9", uno=called)
    if called:
        assert h.window == -1
        assert A.catch_id(0) not in h.legal_actions(1)
    else:
        ev = h.apply(3, A.catch_id(0))
        assert len(drew(ev, 0)) == 2


@rule("Scoring: numbers face value, action cards 20, Wilds 50")
def test_brief_scoring_values() -> None:
    """Scoring: numbers face value, action cards 20, Wilds 50"""
    h = position(
        [
            [
                "red_0",
                "blue_9",
                "green_5",
                "yellow_skip",
                "red_reverse",
                "blue_draw_two",
                "wild",
                "wild_draw_four",
            ],
            3,
            3,
            3,
        ],
        "red_4",
    )
    assert h.points_held(0) == 0 + 9 + 5 + 20 * 3 + 50 * 2


@rule("First to 500 wins; no stacking in official rules")
def test_brief_first_to_500_wins_no_stacking() -> None:
    """First to 500 wins; no stacking in official rules"""
    m = Match(RuleSet(), seed=1, dealer=3)
    m.totals = [490, 499, 0, 0]
    m.hand = position([["red_1"], ["blue_5"], ["red_2"], ["red_3"]], "red_4", rules=m.rules)
    ev = m.apply(0, play_action("red_1"))
    assert one(ev, E.MatchEnded).winners == (0,)
    assert m.totals[0] == 500
    h = position([["red_draw_two", *SPARE], ["blue_draw_two", "red_1"], 3, 3], "red_4")
    play(h, 0, "red_draw_two")
    assert h.current == 2
    assert len(h.hands[1]) == 4


# ---------------------------------------------------------------------------- setup


@rule("Each player draws a card to pick the dealer.")
def test_setup_each_player_draws_a_card_to_pick_dealer() -> None:
    """1. Each player draws a card to pick the dealer."""
    dealer, events = choose_first_dealer(StackedRandom([cs("red_1", "red_2", "red_3")]), 3)
    assert [(e.seat, e.card) for e in of_type(events, E.DealerDraw)] == [
        (0, c("red_1")),
        (1, c("red_2")),
        (2, c("red_3")),
    ]
    assert dealer == 2


@rule("The highest number deals, and any card with a symbol counts as zero.")
@pytest.mark.parametrize("symbol", ACTIONS_AND_WILDS)
def test_setup_highest_number_deals_symbols_count_zero(symbol: str) -> None:
    """The highest number deals, and any card with a symbol counts as zero."""
    dealer, _ = choose_first_dealer(StackedRandom([cs("red_1", symbol, "blue_0", "green_1")]), 4)
    assert dealer != 1
    dealer, _ = choose_first_dealer(StackedRandom([cs("red_0", symbol, "blue_2", "green_1")]), 4)
    assert dealer == 2


@rule("The dealer shuffles and deals 7 cards to each player, one at a time, face down.")
@pytest.mark.parametrize("dealer", [0, 2])
def test_setup_deal_seven_one_at_a_time_from_dealers_left(dealer: int) -> None:
    """2. The dealer shuffles and deals 7 cards to each player, one at a time, face down."""
    deck = stacked_deck({}, first=["red_4"], dealer=dealer)
    h = Hand.deal(RuleSet(), 0, dealer, stacked_deck=deck)
    for k in range(28):
        seat = (dealer + 1 + k) % 4
        assert h.hands[seat][k // 4] == deck[k]
    for d in of_type(h.log, E.Dealt):
        seen = redact(d, (d.seat + 1) % 4)
        assert isinstance(seen, E.Dealt)
        assert seen.cards == ()
    a = Hand.deal(RuleSet(), 1, dealer)
    b = Hand.deal(RuleSet(), 2, dealer)
    assert a.hands != b.hands


@rule(
    "Place the rest of the deck face down in the middle as the draw pile. Turn the top card face "
    "up next to it to start the discard pile."
)
def test_setup_rest_is_draw_pile_top_card_starts_discard() -> None:
    """3. Place the rest of the deck face down in the middle as the draw pile. Turn the top card
    face up next to it to start the discard pile."""
    deck = stacked_deck({}, first=["blue_6"])
    h = Hand.deal(RuleSet(), 0, 0, stacked_deck=deck)
    assert h.discard == [deck[28]] == [c("blue_6")]
    assert list(reversed(h.draw_pile)) == deck[29:]


@rule(
    "If the first card turned up is an action card or a Wild, current Mattel sheets say to put "
    "it back and turn up another."
)
@pytest.mark.parametrize("flip", ACTIONS_AND_WILDS)
def test_setup_redraw_action_or_wild_goes_back_and_another_is_turned(flip: str) -> None:
    """4. If the first card turned up is an action card or a Wild, current Mattel sheets say to put
    it back and turn up another."""
    h = deal({}, first=[flip], rules=RuleSet(first_flip="redraw"), seed=3)
    flips = of_type(h.log, E.FirstCard)
    assert flips[0] == E.FirstCard(c(flip), True)
    assert all(f.returned for f in flips[:-1])
    assert not flips[-1].returned
    assert C.rank_of(h.top) <= 9 and not C.is_wild(h.top)
    assert (h.current, h.direction, h.phase) == (1, 1, TURN)
    assert h.card_counts() == [7, 7, 7, 7]
    assert not of_type(h.log, E.Skipped) and not of_type(h.log, E.Reversed)
    assert deck_total(h) == 108


@rule("Older sheets had it take effect right away, except a Wild Draw 4, which always goes back.")
@pytest.mark.parametrize(
    ("flip", "current", "direction", "phase", "left_cards"),
    [
        ("red_skip", 2, 1, TURN, 7),
        ("blue_reverse", 0, -1, TURN, 7),
        ("green_draw_two", 2, 1, TURN, 9),
        ("wild", 1, 1, CHOOSE_COLOR, 7),
    ],
)
def test_setup_apply_action_takes_effect(
    flip: str, current: int, direction: int, phase: int, left_cards: int
) -> None:
    """Older sheets had it take effect right away, except a Wild Draw 4, which always goes back."""
    h = deal({}, first=[flip], rules=RuleSet(first_flip="apply"))
    assert h.discard == [c(flip)]
    assert (h.current, h.direction, h.phase) == (current, direction, phase)
    assert len(h.hands[1]) == left_cards


@rule("Older sheets had it take effect right away, except a Wild Draw 4, which always goes back.")
@pytest.mark.parametrize("mode", ["apply", "redraw"])
def test_setup_wild_draw_four_always_goes_back(mode: str) -> None:
    """Older sheets had it take effect right away, except a Wild Draw 4, which always goes back."""
    for seed in range(5):
        h = deal({}, first=["wild_draw_four"], rules=RuleSet(first_flip=mode), seed=seed)
        assert of_type(h.log, E.FirstCard)[0] == E.FirstCard(C.WILD_DRAW_FOUR, True)
        assert h.top != C.WILD_DRAW_FOUR
        assert h.phase != CHALLENGE
        assert deck_total(h) == 108


@rule("The player to the dealer's left goes first, and play moves to the left (clockwise).")
@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_setup_dealers_left_first_play_moves_left(dealer: int) -> None:
    """5. The player to the dealer's left goes first, and play moves to the left (clockwise)."""
    left = (dealer + 1) % 4
    h = deal({left: ["red_5", *SPARE]}, first=["red_4"], dealer=dealer)
    assert (h.current, h.direction) == (left, 1)
    play(h, left, "red_5")
    assert h.current == (left + 1) % 4


# ---------------------------------------------------------------------------- on your turn


@rule("Match the top card of the discard pile by color, by number, or by symbol.")
@pytest.mark.parametrize(("card", "ok"), [("blue_1", True), ("red_6", True), ("green_2", False)])
def test_turn_match_by_color_number_or_symbol(card: str, ok: bool) -> None:
    """1. Match the top card of the discard pile by color, by number, or by symbol."""
    h = position([[card, *SPARE], 3, 3, 3], "blue_6")
    if ok:
        play(h, 0, card)
        assert h.top == c(card)
    else:
        with pytest.raises(IllegalActionError, match="matches neither"):
            play(h, 0, card)


@rule("A red 7 can go on any red card or on any 7.")
@pytest.mark.parametrize(
    ("top", "ok"), [("red_2", True), ("red_skip", True), ("blue_7", True), ("blue_2", False)]
)
def test_turn_red_7_on_any_red_or_any_7(top: str, ok: bool) -> None:
    """A red 7 can go on any red card or on any 7."""
    h = position([["red_7", *SPARE], 3, 3, 3], top)
    assert ("red_7" in legal_plays(h, 0)) is ok


@rule("A blue Skip can go on any blue card or on any Skip.")
@pytest.mark.parametrize(
    ("top", "ok"),
    [("blue_2", True), ("blue_reverse", True), ("red_skip", True), ("red_reverse", False)],
)
def test_turn_blue_skip_on_any_blue_or_any_skip(top: str, ok: bool) -> None:
    """A blue Skip can go on any blue card or on any Skip."""
    h = position([["blue_skip", *SPARE], 3, 3, 3], top)
    assert ("blue_skip" in legal_plays(h, 0)) is ok


@rule("You can also play a Wild at any time.")
@pytest.mark.parametrize("top", ["red_2", "blue_skip", "green_draw_two"])
def test_turn_wild_at_any_time(top: str) -> None:
    """2. You can also play a Wild at any time."""
    h = position([["wild", "red_9", "blue_9", "green_9"], 3, 3, 3], top)
    assert "wild" in legal_plays(h, 0)


@rule("Name the color that play continues in.")
@pytest.mark.parametrize("named", [RED, YELLOW, GREEN, BLUE])
def test_turn_wild_names_color_play_continues_in(named: int) -> None:
    """Name the color that play continues in."""
    h = position([["wild", *SPARE], ["red_1", "yellow_1", "green_1", "blue_1"], 3, 3], "red_2")
    play(h, 0, "wild", named)
    assert h.color == named
    assert legal_plays(h, 1) == {C.name(C.card(named, 1))}


@rule(
    "A Wild Draw 4 does the same, but you may only play it when you have no card matching the "
    "color on the discard pile."
)
@pytest.mark.parametrize(("other", "bluff"), [("green_1", True), ("red_2", False)])
def test_turn_wd4_names_color_only_without_discard_color(other: str, bluff: bool) -> None:
    """A Wild Draw 4 does the same, but you may only play it when you have no card matching the
    color on the discard pile."""
    h = position([["wild_draw_four", other, "blue_4"], 3, 3, 3], "green_2")
    play(h, 0, "wild_draw_four", YELLOW)
    assert h.color == YELLOW
    assert one(h.apply(1, A.CHALLENGE), E.Challenged).bluff is bluff


@rule("If you have no playable card, draw one card from the draw pile.")
def test_turn_no_playable_card_draw_one() -> None:
    """3. If you have no playable card, draw one card from the draw pile."""
    h = position([["blue_1", "yellow_2"], 3, 3, 3], "red_4", draws=["green_5", "green_6"])
    assert h.legal_actions(0) == [A.DRAW]
    ev = draw(h, 0)
    assert drew(ev, 0) == ["green_5"]


@rule("If that card can be played, you may play it right away.")
def test_turn_drawn_card_playable_right_away() -> None:
    """If that card can be played, you may play it right away."""
    h = position([["blue_1", "yellow_2"], 3, 3, 3], "red_4", draws=["wild"])
    draw(h, 0)
    assert h.phase == DRAWN
    play(h, 0, "wild", BLUE)
    assert h.color == BLUE


@rule("Otherwise your turn ends.")
def test_turn_otherwise_turn_ends() -> None:
    """Otherwise your turn ends."""
    h = position([["blue_1", "yellow_2"], 3, 3, 3], "red_4", draws=["green_5"])
    ev = draw(h, 0)
    assert one(ev, E.Passed).seat == 0
    assert h.current == 1


@rule("Action cards: Draw Two makes the next player draw 2 cards and lose their turn.")
def test_turn_draw_two_next_player_draws_two_loses_turn() -> None:
    """4. Action cards: Draw Two makes the next player draw 2 cards and lose their turn."""
    h = position([["red_draw_two", *SPARE], 3, 3, 3], "red_4", direction=-1)
    ev = play(h, 0, "red_draw_two")
    assert len(drew(ev, 3)) == 2
    assert one(ev, E.Skipped).seat == 3
    assert h.current == 2


@rule("Skip makes the next player lose their turn.")
def test_turn_skip_next_player_loses_turn() -> None:
    """Skip makes the next player lose their turn."""
    h = position([SPARE, 3, ["red_skip", "red_1", "red_2"], 3], "red_4", current=2)
    ev = play(h, 2, "red_skip")
    assert one(ev, E.Skipped).seat == 3
    assert h.current == 0


@rule("Reverse switches the direction of play.")
def test_turn_reverse_switches_direction() -> None:
    """Reverse switches the direction of play."""
    h = position([SPARE, 3, ["red_reverse", "red_1", "red_2"], 3], "red_4", current=2)
    play(h, 2, "red_reverse")
    assert (h.direction, h.current) == (-1, 1)


@rule("Wild Draw 4 makes the next player draw 4 and lose their turn, and you name the color.")
def test_turn_wd4_next_draws_four_loses_turn_color_named() -> None:
    """Wild Draw 4 makes the next player draw 4 and lose their turn, and you name the color."""
    h = position([["wild_draw_four", "blue_4", "blue_5"], 3, 3, 3], "red_4")
    play(h, 0, "wild_draw_four", BLUE)
    ev = h.apply(1, A.ACCEPT)
    assert len(drew(ev, 1)) == 4
    assert (h.current, h.color) == (2, BLUE)


@rule("When you play your next-to-last card, say 'UNO' out loud.")
def test_turn_say_uno_with_next_to_last_card() -> None:
    """5. When you play your next-to-last card, say 'UNO' out loud."""
    h = position([["red_9", "red_1"], 3, 3, 3], "red_4")
    ev = play(h, 0, "red_9", uno=True)
    assert one(ev, E.UnoCalled) == E.UnoCalled(0, False)
    assert all(redact(one(ev, E.UnoCalled), v) is not None for v in range(4))


@rule(
    "If another player catches you before the next player begins their turn, you draw 2 cards as "
    "a penalty."
)
def test_turn_caught_before_next_turn_draws_two() -> None:
    """If another player catches you before the next player begins their turn, you draw 2 cards as a
    penalty."""
    h = position([["red_9", "red_1"], ["red_5", "red_6"], 3, 3], "red_4")
    play(h, 0, "red_9")
    with pytest.raises(IllegalActionError):
        play(h, 1, "red_5")  # the next player cannot begin before the window closes
    with pytest.raises(IllegalActionError):
        h.apply(0, A.catch_id(0))  # the offender cannot catch itself
    ev = h.apply(2, A.catch_id(0))
    assert one(ev, E.Drew).reason == "uno_caught"
    assert len(drew(ev, 0)) == 2
    late = position([["red_9", "red_1"], ["red_5", "red_6"], 3, 3], "red_4")
    play(late, 0, "red_9")
    close_window_unanswered(late)
    play(late, 1, "red_5")
    assert A.catch_id(0) not in late.legal_actions(2)


@rule(
    "If the draw pile runs out, set aside the top card of the discard pile, shuffle the rest, "
    "and turn them face down as the new draw pile."
)
def test_turn_empty_draw_pile_reshuffles_rest_of_discards() -> None:
    """6. If the draw pile runs out, set aside the top card of the discard pile, shuffle the rest,
    and turn them face down as the new draw pile."""
    under = ["blue_1", "blue_2", "blue_3", "blue_4", "blue_5", "blue_6", "blue_7", "blue_8"]
    h = position([["red_9", "wild"], 3, 3, 3], "red_4", under=under, pile=["green_1"])
    draw(h, 0)  # the last card of the draw pile; green 1 does not match, the turn ends
    assert h.draw_pile == []
    ev = draw(h, 1)
    assert one(ev, E.Reshuffled)[0] == 8
    assert h.discard == [c("red_4")]
    got = drew(ev, 1)
    assert len(got) == 1 and got[0].startswith("blue")
    assert sorted(h.draw_pile + cs(*got)) == sorted(cs(*under))


# ---------------------------------------------------------------------------- winning


@rule("In the standard scoring, the first player to reach 500 points wins the game.")
def test_winning_standard_first_to_500() -> None:
    """In the standard scoring, the first player to reach 500 points wins the game."""
    m = Match(RuleSet(scoring="standard"), seed=1, dealer=3)
    m.totals = [450, 0, 0, 0]
    m.hand = position([["red_1"], ["blue_9"], ["red_9"], ["wild"]], "red_4", rules=m.rules)
    ev = m.apply(0, play_action("red_1"))
    assert m.totals == [518, 0, 0, 0]
    assert one(ev, E.MatchEnded) == E.MatchEnded((0,), (518, 0, 0, 0))


@rule(
    "With the alternate scoring, the game ends when anyone reaches 500 and the lowest total wins."
)
def test_winning_alternate_lowest_total_wins() -> None:
    """With the alternate scoring, the game ends when anyone reaches 500 and the lowest total
    wins."""
    m = Match(RuleSet(scoring="lowest"), seed=1, dealer=3)
    m.totals = [100, 480, 300, 50]
    m.hand = position([["red_1"], ["wild"], ["red_9"], ["blue_9"]], "red_4", rules=m.rules)
    ev = m.apply(0, play_action("red_1"))
    assert m.totals == [100, 530, 309, 59]
    assert one(ev, E.MatchEnded).winners == (3,)


@rule("If you are playing a single round for fun, the first player to empty their hand wins.")
def test_winning_single_round_first_out_wins() -> None:
    """If you are playing a single round for fun, the first player to empty their hand wins."""
    m = Match(RuleSet(scoring="single_hand"), seed=1, dealer=3)
    m.hand = position([["red_1"], ["wild"], ["red_9"], ["blue_9"]], "red_4", rules=m.rules)
    ev = m.apply(0, play_action("red_1"))
    assert one(ev, E.MatchEnded).winners == (0,)
    assert m.hand.phase == OVER
