"""how-to-play-uno.txt, part 2: the settled table arguments, the variants and house rules, the
teaching lines, ages and group size, "Check yourself", the FAQ and the edition notes."""

from __future__ import annotations

import pytest

from uno_server.engine import actions as A
from uno_server.engine import cards as C
from uno_server.engine import events as E
from uno_server.engine.errors import IllegalActionError, InvalidRulesError, WrongSeatError
from uno_server.engine.hand import CHALLENGE, DRAWN, OVER, STACK, TURN, Hand
from uno_server.engine.match import Match
from uno_server.engine.rules import RuleSet
from uno_server.engine.views import redact, seat_view

from .helpers import (
    BLUE,
    GREEN,
    RED,
    YELLOW,
    c,
    close_window_unanswered,
    deal,
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


SPARE = ["yellow_9", "yellow_8", "green_6"]
HOUSE_RULES = (
    "stacking",
    "stacking_wd4",
    "jump_in",
    "seven_o",
    "draw_until_playable",
    "partners",
    "challenge_uno",
)


# ---------------------------------------------------------------------------- settled arguments


@rule("When a Draw Two is played on you, you draw two and lose your turn.")
def test_argument_no_stacking_draw_two_victim_draws_two_even_holding_draw_two() -> None:
    """ "Can I stack a Draw Two on a Draw Two to pass the penalty on?": Not in the classic rules.
    When a Draw Two is played on you, you draw two and lose your turn."""
    h = position(
        [["red_draw_two", *SPARE], ["blue_draw_two", "red_draw_two", "red_1"], 3, 3], "red_7"
    )
    ev = play(h, 0, "red_draw_two")
    assert len(drew(ev, 1)) == 2
    assert one(ev, E.Skipped).seat == 1
    assert h.phase == TURN
    assert h.current == 2
    with pytest.raises(WrongSeatError):
        play(h, 1, "blue_draw_two")


@rule("You can play a Draw Two on a Draw Two only as a normal match on your own turn.")
def test_argument_draw_two_on_draw_two_as_normal_match_on_own_turn() -> None:
    """You can play a Draw Two on a Draw Two only as a normal match on your own turn."""
    h = position([SPARE, 3, ["blue_draw_two", "green_1", "green_2"], 3], "red_draw_two", current=2)
    assert "blue_draw_two" in legal_plays(h, 2)
    ev = play(h, 2, "blue_draw_two")
    assert len(drew(ev, 3)) == 2
    assert h.current == 0


@rule("Stacking is a popular house rule; agree on it before dealing.")
def test_argument_stacking_is_an_off_by_default_rule_fixed_at_the_deal() -> None:
    """Stacking is a popular house rule; agree on it before dealing."""
    assert RuleSet().stacking is False
    rules = RuleSet(stacking=True)
    h = position([["red_draw_two", *SPARE], ["blue_draw_two", "red_1"], 3, 3], "red_7", rules=rules)
    play(h, 0, "red_draw_two")
    assert h.phase == STACK
    with pytest.raises(AttributeError):
        rules.stacking = False  # type: ignore[misc]
    assert h.to_dict()["rules"]["stacking"] is True


@rule(
    '"If I can\'t play, do I keep drawing until I can?": No. Draw one card. Play it if it is '
    "legal; otherwise your turn ends."
)
def test_argument_draw_one_card_only() -> None:
    """ "If I can't play, do I keep drawing until I can?": No. Draw one card. Play it if it is
    legal; otherwise your turn ends."""
    h = position([["blue_1", "blue_2"], 3, 3, 3], "red_7", draws=["blue_3", "red_4"])
    ev = draw(h, 0)
    assert drew(ev, 0) == ["blue_3"]
    assert h.current == 1
    assert h.draw_pile[-1] == c("red_4")


@rule('"Draw until you can play" is a house rule that makes rounds much longer.')
def test_argument_draw_until_playable_is_a_house_rule() -> None:
    """ "Draw until you can play" is a house rule that makes rounds much longer."""
    assert RuleSet().draw_until_playable is False
    h = position(
        [["blue_1", "blue_2"], 3, 3, 3],
        "red_7",
        draws=["blue_3", "green_4", "red_4"],
        rules=RuleSet(draw_until_playable=True),
    )
    ev = draw(h, 0)
    assert drew(ev, 0) == ["blue_3", "green_4", "red_4"]
    assert (h.phase, h.drawn) == (DRAWN, c("red_4"))


@rule(
    '"Can I play a Wild Draw Four whenever I want?": Only when you have no card of the current '
    "color."
)
@pytest.mark.parametrize(("hand", "bluff"), [(["red_1", "blue_2"], True), (["blue_2"], False)])
def test_argument_wd4_only_without_current_color(hand: list[str], bluff: bool) -> None:
    """ "Can I play a Wild Draw Four whenever I want?": Only when you have no card of the current
    color."""
    h = position([["wild_draw_four", *hand, "yellow_9"], 3, 3, 3], "red_7")
    play(h, 0, "wild_draw_four", GREEN)
    assert one(h.apply(1, A.CHALLENGE), E.Challenged).bluff is bluff


@rule("If someone suspects you broke that rule, they may challenge.")
def test_argument_suspected_wd4_may_be_challenged() -> None:
    """If someone suspects you broke that rule, they may challenge."""
    h = position([["wild_draw_four", "red_1", "yellow_9"], 3, 3, 3], "red_7")
    play(h, 0, "wild_draw_four", GREEN)
    assert h.phase == CHALLENGE
    assert h.legal_actions(1) == [A.ACCEPT, A.CHALLENGE]
    ev = h.apply(1, A.CHALLENGE)
    assert one(ev, E.Challenged) == E.Challenged(1, 0, True)


@rule("You show your hand to the challenger.")
def test_argument_hand_shown_to_the_challenger_only() -> None:
    """You show your hand to the challenger."""
    h = position([["wild_draw_four", "red_1", "yellow_9"], 3, 3, 3], "red_7")
    play(h, 0, "wild_draw_four", GREEN)
    ev = h.apply(1, A.CHALLENGE)
    evidence = one(ev, E.ChallengeEvidence)
    assert sorted(evidence.hand) == sorted([c("red_1"), c("yellow_9")])
    assert redact(evidence, 1) == evidence
    for viewer in (0, 2, 3, -1):
        assert redact(evidence, viewer) is None


@rule("If you were guilty, you draw the four instead.")
def test_argument_guilty_wd4_player_draws_four_instead() -> None:
    """If you were guilty, you draw the four instead."""
    h = position([["wild_draw_four", "red_1", "yellow_9"], ["green_1", "blue_5"], 3, 3], "red_7")
    play(h, 0, "wild_draw_four", GREEN)
    ev = h.apply(1, A.CHALLENGE)
    assert len(drew(ev, 0)) == 4
    assert drew(ev, 1) == []
    assert len(h.hands[0]) == 6
    assert (h.phase, h.current, h.color) == (TURN, 1, GREEN)
    assert legal_plays(h, 1) == {"green_1"}


@rule("If you were innocent, the challenger draws six.")
def test_argument_innocent_wd4_challenger_draws_six() -> None:
    """If you were innocent, the challenger draws six."""
    h = position([["wild_draw_four", "blue_1", "yellow_9"], ["green_1", "blue_5"], 3, 3], "red_7")
    play(h, 0, "wild_draw_four", GREEN)
    ev = h.apply(1, A.CHALLENGE)
    assert len(drew(ev, 1)) == 6
    assert drew(ev, 0) == []
    assert one(ev, E.Skipped).seat == 1
    assert h.current == 2


@rule(
    '"Can I end the game on an action card?": Yes. If your last card is a Draw Two or Wild '
    "Draw Four, the next player draws, and those cards count in your score."
)
@pytest.mark.parametrize(
    ("last", "drawn"),
    [("red_draw_two", 2), ("wild_draw_four", 4), ("red_skip", 0), ("red_reverse", 0)],
)
def test_argument_end_the_game_on_an_action_card(last: str, drawn: int) -> None:
    """ "Can I end the game on an action card?": Yes. If your last card is a Draw Two or Wild Draw
    Four, the next player draws, and those cards count in your score."""
    m = Match(RuleSet(), seed=5, dealer=3)
    m.hand = position(
        [[last], ["blue_1"], ["blue_2"], ["blue_3"]],
        "red_7",
        draws=["wild", "wild", "green_skip", "green_skip"],
        rules=m.rules,
    )
    ev = m.apply(0, play_action(last, BLUE))
    assert one(ev, E.HandEnded).winner == 0
    assert len(drew(ev, 1)) == drawn
    bonus = [0, 0, 50 + 50, 0, 50 + 50 + 20 + 20][drawn]
    assert m.totals[0] == 1 + 2 + 3 + bonus


@rule(
    '"When is it too late to catch someone who forgot to say UNO?": Once the next player '
    "begins their turn."
)
def test_argument_too_late_to_catch_once_next_player_begins() -> None:
    """ "When is it too late to catch someone who forgot to say UNO?": Once the next player begins
    their turn."""
    h = position([["red_1", "red_2"], ["red_5", "red_6", "blue_1"], 3, 3], "red_7")
    play(h, 0, "red_1")
    assert h.legal_actions(1) == [A.NO_CATCH, A.catch_id(0)]
    close_window_unanswered(h)
    play(h, 1, "red_5")
    for seat in (1, 2, 3):
        with pytest.raises(IllegalActionError):
            h.apply(seat, A.catch_id(0))
    assert len(h.hands[0]) == 1


@rule("Before that, catching them costs them two cards.")
def test_argument_catch_before_next_turn_costs_two_cards() -> None:
    """Before that, catching them costs them two cards."""
    h = position([["red_1", "red_2"], ["red_5", "red_6", "blue_1"], 3, 3], "red_7")
    play(h, 0, "red_1")
    h.apply(2, A.NO_CATCH)
    ev = h.apply(3, A.catch_id(0))
    assert len(drew(ev, 0)) == 2
    assert len(h.hands[0]) == 3


@rule(
    '"Can I draw a card even when I have a playable one?": Yes. You may choose not to play and '
    "draw instead."
)
def test_argument_may_draw_while_holding_a_playable_card() -> None:
    """ "Can I draw a card even when I have a playable one?": Yes. You may choose not to play and
    draw instead."""
    h = position([["red_1", "wild"], 3, 3, 3], "red_7", draws=["blue_2"])
    assert legal_plays(h, 0) == {"red_1", "wild"}
    assert A.DRAW in h.legal_actions(0)
    draw(h, 0)
    assert held(h, 0) == ["blue_2", "red_1", "wild"]


@rule("You may still play the drawn card if it matches, but nothing else from your hand.")
def test_argument_after_voluntary_draw_only_the_drawn_card() -> None:
    """You may still play the drawn card if it matches, but nothing else from your hand."""
    h = position([["red_1", "wild"], 3, 3, 3], "red_7", draws=["red_2"])
    draw(h, 0)
    assert legal_plays(h, 0) == {"red_2"}
    with pytest.raises(IllegalActionError):
        play(h, 0, "red_1")
    play(h, 0, "red_2")
    assert h.current == 1


# ---------------------------------------------------------------------------- variants


@rule(
    "Everything in this section is optional. Announce it before the first deal so nobody feels "
    "ambushed."
)
@pytest.mark.parametrize("option", HOUSE_RULES)
def test_variants_are_optional_and_off_by_default(option: str) -> None:
    """Everything in this section is optional. Announce it before the first deal so nobody feels
    ambushed."""
    assert getattr(RuleSet(), option) is False
    m = Match(RuleSet(), seed=1)
    assert m.hand.rules.to_dict()[option] is False


@rule(
    "Mattel's 30th Anniversary sheet says a Reverse works like a Skip, the player of a Reverse "
    "or Skip plays again immediately, and after a Draw Two or Wild Draw Four the turn comes back "
    "to you."
)
@pytest.mark.parametrize("card", ["red_reverse", "red_skip", "red_draw_two", "wild_draw_four"])
def test_two_player_action_cards_give_the_turn_back(card: str) -> None:
    """Two-player UNO (from older Mattel rule sheets). Mattel's 30th Anniversary sheet says a
    Reverse works like a Skip, the player of a Reverse or Skip plays again immediately, and after
    a Draw Two or Wild Draw Four the turn comes back to you."""
    h = position([[card, "red_1", "red_2"], ["blue_1", "blue_2"]], "red_7")
    ev = play(h, 0, card, BLUE)
    if card == "wild_draw_four":
        ev = h.apply(1, A.ACCEPT)
    assert one(ev, E.Skipped).seat == 1
    assert not of_type(ev, E.Reversed)
    assert h.current == 0
    assert h.phase == TURN
    assert h.direction == 1


@rule("W2085 has no two-player section, so agree on this before you start.")
def test_two_player_rules_recorded_with_the_rule_set() -> None:
    """W2085 has no two-player section, so agree on this before you start."""
    assert RuleSet(seats=2).two_seat_rules is True
    assert RuleSet(seats=2).to_dict()["two_seat_rules"] is True
    with pytest.raises(InvalidRulesError, match=r"rules\.two_seat_rules"):
        RuleSet(seats=2, two_seat_rules=False)


@rule("Partners (from older Mattel rule sheets). Four players, partners sitting across.")
@pytest.mark.parametrize("seats", [2, 3, 5, 6])
def test_partners_needs_four_players(seats: int) -> None:
    """Partners (from older Mattel rule sheets). Four players, partners sitting across."""
    assert RuleSet(seats=4, partners=True).partners
    with pytest.raises(InvalidRulesError, match=r"rules\.partners"):
        RuleSet(seats=seats, partners=True)


@rule("When either partner goes out, the team scores the cards in both opponents' hands.")
@pytest.mark.parametrize("winner", range(4))
def test_partners_team_scores_both_opponents_hands(winner: int) -> None:
    """When either partner goes out, the team scores the cards in both opponents' hands."""
    m = Match(RuleSet(partners=True), seed=1, dealer=0)
    hands: list[list[str] | int] = [["red_9"], ["wild"], ["red_skip"], ["red_3"]]
    hands[winner] = ["red_1"]
    m.hand = position(hands, "red_7", current=winner, rules=m.rules)
    ev = m.apply(winner, play_action("red_1"))
    held_pts = one(ev, E.HandEnded).points_held
    partner = (winner + 2) % 4
    won = sum(p for s, p in enumerate(held_pts) if s % 2 != winner % 2)
    assert m.totals[winner] == m.totals[partner] == won
    assert all(m.totals[s] == 0 for s in range(4) if s % 2 != winner % 2)


@rule(
    "Challenge UNO (from older Mattel rule sheets). Keep a running total of what each player is "
    "caught holding."
)
def test_challenge_uno_running_total_of_points_held() -> None:
    """Challenge UNO (from older Mattel rule sheets). Keep a running total of what each player is
    caught holding."""
    rules = RuleSet(scoring="lowest", challenge_uno=True)
    m = Match(rules, seed=1, dealer=0)
    m.hand = position([["red_1"], ["wild"], ["red_skip"], ["red_3"]], "red_7", rules=rules)
    m.apply(0, play_action("red_1"))
    assert m.totals == [0, 50, 20, 3]
    with pytest.raises(InvalidRulesError, match=r"rules\.challenge_uno"):
        RuleSet(challenge_uno=True)


@rule("Anyone who reaches 500 is eliminated, and the last two play head to head.")
def test_challenge_uno_eliminated_at_500_last_two_head_to_head() -> None:
    """Anyone who reaches 500 is eliminated, and the last two play head to head."""
    rules = RuleSet(scoring="lowest", challenge_uno=True)
    m = Match(rules, seed=1, dealer=0)
    m.totals = [0, 480, 100, 200]
    m.hand = position([["red_1"], ["wild"], ["red_skip"], ["red_3"]], "red_7", rules=rules)
    ev = m.apply(0, play_action("red_1"))
    assert one(ev, E.SeatEliminated) == E.SeatEliminated(1, 530)
    assert m.active == [0, 2, 3]
    assert not m.over
    h = m.next_hand()
    assert h.n == 3
    m.totals = [0, 530, 100, 490]
    small = RuleSet(seats=3, scoring="lowest", challenge_uno=True)
    m.hand = position([["red_1"], ["red_2"], ["wild"]], "red_7", rules=small)
    ev = m.apply(0, play_action("red_1"))
    assert one(ev, E.SeatEliminated).seat == 3
    assert m.active == [0, 2]
    h = m.next_hand()
    assert h.n == 2  # head to head
    m.totals = [0, 530, 499, 540]
    m.hand = position(
        [["red_1"], ["red_2"]],
        "red_7",
        rules=RuleSet(seats=2, scoring="lowest", challenge_uno=True),
    )
    ev = m.apply(0, play_action("red_1"))
    assert one(ev, E.SeatEliminated).seat == 2
    assert one(ev, E.MatchEnded).winners == (0,)


@rule(
    "Stacking (house rule). A player hit with a Draw Two may add their own Draw Two so the next "
    "player draws four."
)
def test_stacking_add_draw_two_next_player_draws_four() -> None:
    """Stacking (house rule). A player hit with a Draw Two may add their own Draw Two so the next
    player draws four."""
    rules = RuleSet(stacking=True)
    h = position(
        [["red_draw_two", *SPARE], ["blue_draw_two", "red_1", "green_9"], ["red_5", "blue_5"], 3],
        "red_7",
        rules=rules,
    )
    play(h, 0, "red_draw_two")
    assert (h.phase, h.current) == (STACK, 1)
    assert h.legal_actions(1) == [A.ACCEPT, play_action("blue_draw_two")]
    play(h, 1, "blue_draw_two")
    assert (h.phase, h.current) == (STACK, 2)
    assert h.legal_actions(2) == [A.ACCEPT]
    ev = h.apply(2, A.ACCEPT)
    assert len(drew(ev, 2)) == 4
    assert one(ev, E.Skipped).seat == 2
    assert h.current == 3


@rule("Many tables also allow Wild Draw Four on top.")
@pytest.mark.parametrize("allowed", [True, False])
def test_stacking_wild_draw_four_on_top(allowed: bool) -> None:
    """Many tables also allow Wild Draw Four on top."""
    rules = RuleSet(stacking=True, stacking_wd4=allowed)
    h = position(
        [["red_draw_two", *SPARE], ["wild_draw_four", "blue_1", "green_9"], ["green_5"], 3],
        "red_7",
        rules=rules,
    )
    play(h, 0, "red_draw_two")
    assert (play_action("wild_draw_four", BLUE) in h.legal_actions(1)) is allowed
    if not allowed:
        with pytest.raises(IllegalActionError):
            play(h, 1, "wild_draw_four", BLUE)
        return
    play(h, 1, "wild_draw_four", BLUE)
    assert (h.phase, h.current) == (CHALLENGE, 2)
    ev = h.apply(2, A.ACCEPT)
    assert len(drew(ev, 2)) == 6
    assert h.current == 3


@rule(
    "Jump-in (house rule). If you hold the exact card on top of the discard (same color and same "
    "number), you may play it out of turn, and play continues from you."
)
def test_jump_in_exact_card_out_of_turn_play_continues_from_you() -> None:
    """Jump-in (house rule). If you hold the exact card on top of the discard (same color and same
    number), you may play it out of turn, and play continues from you."""
    rules = RuleSet(jump_in=True)
    h = position(
        [SPARE, ["blue_5", "red_6"], ["red_5", "green_1"], ["blue_1", "blue_2"]],
        "red_5",
        rules=rules,
    )
    assert h.pending_seats() == [0, 2]
    assert h.legal_actions(2) == [play_action("red_5"), play_action("red_5", uno=True)]
    assert h.legal_actions(1) == []
    with pytest.raises(WrongSeatError):
        play(h, 1, "blue_5")
    ev = play(h, 2, "red_5")
    assert one(ev, E.Played).out_of_turn is True
    assert h.current == 3
    assert held(h, 2) == ["green_1"]
    plain = position([SPARE, 3, ["red_5", "green_1"], 3], "red_5")
    with pytest.raises(WrongSeatError):
        play(plain, 2, "red_5")


@rule(
    "Seven-O (house rule). Playing a 7 lets you swap hands with any player; playing a 0 makes "
    "everyone pass hands in the direction of play."
)
@pytest.mark.parametrize("target", [1, 2, 3])
def test_seven_o_seven_swaps_with_any_player(target: int) -> None:
    """Seven-O (house rule). Playing a 7 lets you swap hands with any player; playing a 0 makes
    everyone pass hands in the direction of play."""
    rules = RuleSet(seven_o=True)
    hands: list[list[str] | int] = [
        ["red_7", "red_1", "red_2"],
        ["blue_1"],
        ["blue_2", "blue_3"],
        ["green_1", "green_2", "green_3", "green_4"],
    ]
    h = position(hands, "red_4", rules=rules)
    before = [list(x) for x in h.hands]
    assert A.swap_id(c("red_7"), target) in h.legal_actions(0)
    ev = h.apply(0, A.swap_id(c("red_7"), target))
    assert one(ev, E.HandsSwapped) == E.HandsSwapped(0, target)
    assert h.hands[0] == before[target]
    assert h.hands[target] == [c("red_1"), c("red_2")]
    assert h.current == 1


@rule(
    "Seven-O (house rule). Playing a 7 lets you swap hands with any player; playing a 0 makes "
    "everyone pass hands in the direction of play."
)
@pytest.mark.parametrize("direction", [1, -1])
def test_seven_o_zero_passes_hands_in_direction_of_play(direction: int) -> None:
    """Seven-O (house rule). Playing a 7 lets you swap hands with any player; playing a 0 makes
    everyone pass hands in the direction of play."""
    rules = RuleSet(seven_o=True)
    hands: list[list[str] | int] = [
        ["red_0", "red_1", "red_2"],
        ["blue_1"],
        ["blue_2", "blue_3"],
        ["green_1", "green_2", "green_3", "green_4"],
    ]
    h = position(hands, "red_4", rules=rules, direction=direction)
    ev = play(h, 0, "red_0")
    assert one(ev, E.HandsRotated).direction == direction
    after_play = [
        [c("red_1"), c("red_2")],
        [c("blue_1")],
        [c("blue_2"), c("blue_3")],
        [c(f"green_{i}") for i in range(1, 5)],
    ]
    for s in range(4):
        assert h.hands[(s + direction) % 4] == after_play[s]
    assert h.current == direction % 4


@rule("Single-round game (house rule). First player out wins.")
def test_single_round_game_first_out_wins() -> None:
    """Single-round game (house rule). First player out wins."""
    rules = RuleSet(scoring="single_hand")
    m = Match(rules, seed=3, dealer=0)
    m.hand = position([["red_9", "wild"], ["red_1"], 3, 3], "red_7", current=1, rules=rules)
    ev = m.apply(1, play_action("red_1"))
    assert one(ev, E.MatchEnded).winners == (1,)
    assert m.over


# ---------------------------------------------------------------------------- teaching


@rule('"You have seven cards. First person with none wins the round."')
def test_teaching_seven_cards_first_with_none_wins() -> None:
    """ "You have seven cards. First person with none wins the round.\""""
    h = Hand.deal(RuleSet(), seed=8, dealer=0)
    assert h.card_counts() == [7, 7, 7, 7]
    h = position([["red_1"], 3, 3, 3], "red_7")
    play(h, 0, "red_1")
    assert (h.phase, h.winner) == (OVER, 0)


@rule(
    '"On your turn, play one card that matches the top card by color, by number, or by the '
    'picture."'
)
def test_teaching_match_color_number_or_picture() -> None:
    """ "On your turn, play one card that matches the top card by color, by number, or by the
    picture.\""""
    h = position(
        [["red_1", "blue_skip", "green_7", "yellow_2"], 3, 3, 3], "blue_7", under=["red_skip"]
    )
    assert legal_plays(h, 0) == {"blue_skip", "green_7"}
    h = position([["red_1", "blue_skip", "green_7", "yellow_2"], 3, 3, 3], "red_skip")
    assert legal_plays(h, 0) == {"red_1", "blue_skip"}


@rule("\"Can't match? Draw one. If it fits, you can play it. If not, your turn's over.\"")
@pytest.mark.parametrize(("drawn", "fits"), [("red_2", True), ("blue_2", False)])
def test_teaching_cant_match_draw_one(drawn: str, fits: bool) -> None:
    """ "Can't match? Draw one. If it fits, you can play it. If not, your turn's over.\""""
    h = position([["green_1", "blue_9"], 3, 3, 3], "red_7", draws=[drawn])
    assert h.legal_actions(0) == [A.DRAW]
    draw(h, 0)
    if fits:
        assert h.legal_actions(0) == [A.PASS, play_action(drawn)]
    else:
        assert h.current == 1


@rule(
    '"Skip makes the next person miss a turn. Reverse flips direction. Draw Two makes the next '
    'person draw two and miss their turn."'
)
@pytest.mark.parametrize(
    ("card", "nxt", "direction", "cards1"),
    [("red_skip", 2, 1, 3), ("red_reverse", 3, -1, 3), ("red_draw_two", 2, 1, 5)],
)
def test_teaching_skip_reverse_draw_two(card: str, nxt: int, direction: int, cards1: int) -> None:
    """ "Skip makes the next person miss a turn. Reverse flips direction. Draw Two makes the next
    person draw two and miss their turn.\""""
    h = position([[card, *SPARE], 3, 3, 3], "red_7")
    play(h, 0, card)
    assert (h.current, h.direction, len(h.hands[1])) == (nxt, direction, cards1)


@rule(
    '"Black Wilds go on anything and you pick the color. The Draw Four version is only legal if '
    "you don't have the color that's showing. Get caught cheating with it and you draw four "
    'yourself."'
)
def test_teaching_black_wilds_and_cheating_draw_four() -> None:
    """ "Black Wilds go on anything and you pick the color. The Draw Four version is only legal if
    you don't have the color that's showing. Get caught cheating with it and you draw four
    yourself.\""""
    h = position([["wild", "wild_draw_four", "red_1"], 3, 3, 3], "red_7")
    assert {"wild", "wild_draw_four"} <= legal_plays(h, 0)
    play(h, 0, "wild_draw_four", YELLOW)
    ev = h.apply(1, A.CHALLENGE)
    assert len(drew(ev, 0)) == 4
    assert h.color == YELLOW


@rule(
    "\"When you're down to one card, say UNO. If we catch you before the next person goes, you "
    'draw two."'
)
def test_teaching_say_uno_or_draw_two_if_caught() -> None:
    """ "When you're down to one card, say UNO. If we catch you before the next person goes, you
    draw two.\""""
    h = position([["red_1", "red_2"], 3, 3, 3], "red_7")
    play(h, 0, "red_1")
    ev = h.apply(1, A.catch_id(0))
    assert len(drew(ev, 0)) == 2


@rule("Leave scoring until the first round ends.")
def test_teaching_scores_written_only_when_the_round_ends() -> None:
    """Leave scoring until the first round ends. Count one hand out loud as the example, and
    everyone gets it."""
    m = Match(RuleSet(), seed=6, dealer=0)
    assert m.totals == [0, 0, 0, 0]
    m.hand = position([["red_1", "red_2"], ["blue_5"], 3, 3], "red_7", rules=m.rules)
    ev = m.apply(0, play_action("red_1", uno=True))
    assert not of_type(ev, E.HandScored)
    assert m.totals == [0, 0, 0, 0]


# ---------------------------------------------------------------------------- ages and group size


@rule("The deck handles 2 to 10 players.")
@pytest.mark.parametrize("seats", [2, 10])
def test_deck_handles_two_to_ten_players(seats: int) -> None:
    """The deck handles 2 to 10 players."""
    h = deal({}, first=["blue_3"], rules=RuleSet(seats=seats), dealer=seats - 1)
    assert len(h.draw_pile) == 108 - 7 * seats - 1
    assert h.card_counts() == [7] * seats
    assert h.current == 0


@rule(
    "With eight or more, play single rounds or the low-score variant so the game ends before "
    "attention does, and consider using two decks shuffled together if the draw pile empties too "
    "often."
)
@pytest.mark.parametrize("scoring", ["single_hand", "lowest"])
def test_eight_or_more_single_rounds_low_score_or_two_decks(scoring: str) -> None:
    """With eight or more, play single rounds or the low-score variant so the game ends before
    attention does, and consider using two decks shuffled together if the draw pile empties too
    often."""
    rules = RuleSet(seats=8, decks=2, scoring=scoring)
    h = Hand.deal(rules, seed=2, dealer=0)
    assert len(h.draw_pile) + len(h.discard) + 8 * 7 == 216
    assert sorted(h.draw_pile + h.discard + [x for hs in h.hands for x in hs]) == sorted(
        C.full_deck(2)
    )


@rule("With two players, use the two-player rules above; otherwise a Reverse does nothing useful.")
def test_two_players_reverse_acts_as_skip() -> None:
    """With two players, use the two-player rules above; otherwise a Reverse does nothing useful."""
    h = position([["red_reverse", "red_1"], ["red_2", "red_3"]], "red_7")
    play(h, 0, "red_reverse")
    assert h.current == 0
    assert h.direction == 1


# ---------------------------------------------------------------------------- check yourself


@rule("The discard is a red 4. You hold a red 9 and a Wild Draw Four. Can you play the Draw Four?")
def test_check_yourself_red_4_red_9_wd4_is_a_bluff() -> None:
    """The discard is a red 4. You hold a red 9 and a Wild Draw Four. Can you play the Draw Four?

    No. You hold a red card, so the Wild Draw Four is illegal right now. Play the red 9, or a
    regular Wild if you have one. (The engine lets the bluff be played; a challenge proves it.)"""
    h = position([["red_9", "wild_draw_four", "wild"], 3, 3, 3], "red_4")
    assert {"red_9", "wild"} <= legal_plays(h, 0)
    play(h, 0, "wild_draw_four", BLUE)
    ev = h.apply(1, A.CHALLENGE)
    assert one(ev, E.Challenged).bluff is True
    assert len(drew(ev, 0)) == 4


@rule(
    "No. You hold a red card, so the Wild Draw Four is illegal right now. Play the red 9, or a "
    "regular Wild if you have one."
)
@pytest.mark.parametrize("card", ["red_9", "wild"])
def test_check_yourself_play_the_red_9_or_a_regular_wild(card: str) -> None:
    """No. You hold a red card, so the Wild Draw Four is illegal right now. Play the red 9, or a
    regular Wild if you have one."""
    h = position([["red_9", "wild_draw_four", "wild"], 3, 3, 3], "red_4")
    ev = play(h, 0, card, GREEN)
    assert one(ev, E.Played).card == c(card)
    assert (h.phase, h.current) == (TURN, 1)


@rule("You draw a card because you can't play. It's a playable Skip. Can you play it?")
def test_check_yourself_drawn_playable_skip_can_be_played() -> None:
    """You draw a card because you can't play. It's a playable Skip. Can you play it?

    Yes. A card drawn on your turn can be played immediately if it matches."""
    h = position([["blue_1", "green_2"], 3, 3, 3], "red_4", draws=["red_skip"])
    assert h.legal_actions(0) == [A.DRAW]
    draw(h, 0)
    ev = play(h, 0, "red_skip")
    assert one(ev, E.Skipped).seat == 1
    assert h.current == 2


@rule("Yes. A card drawn on your turn can be played immediately if it matches.")
def test_check_yourself_drawn_card_played_immediately() -> None:
    """Yes. A card drawn on your turn can be played immediately if it matches."""
    h = position([["blue_1", "green_2"], 3, 3, 3], "red_4", draws=["yellow_4"])
    draw(h, 0)
    assert h.current == 0 and h.phase == DRAWN
    play(h, 0, "yellow_4")
    assert h.top == c("yellow_4")


@rule("The first card flipped at the start is a Reverse. Who plays first?")
@pytest.mark.parametrize("dealer", [0, 2])
def test_check_yourself_first_card_reverse_dealer_first_moving_right(dealer: int) -> None:
    """The first card flipped at the start is a Reverse. Who plays first?

    The dealer, and play moves to the right."""
    h = deal({dealer: ["yellow_2", *SPARE]}, first=["yellow_reverse"], dealer=dealer)
    assert (h.current, h.direction) == (dealer, -1)
    play(h, dealer, "yellow_2")
    assert h.current == (dealer - 1) % 4


@rule("The dealer, and play moves to the right.")
def test_check_yourself_reverse_answer_dealer_then_right() -> None:
    """The dealer, and play moves to the right."""
    h = deal({}, first=["red_reverse"], dealer=1)
    assert one(h.log, E.Reversed).direction == -1
    assert seat_view(h, 1).current == 1
    assert seat_view(h, 1).direction == -1


# ---------------------------------------------------------------------------- FAQ


@rule(
    "How many cards do you start with in UNO? Seven each. The rest of the deck becomes the draw "
    "pile."
)
def test_faq_seven_each_rest_is_draw_pile() -> None:
    """How many cards do you start with in UNO? Seven each. The rest of the deck becomes the draw
    pile."""
    h = Hand.deal(RuleSet(), seed=9, dealer=2)
    assert h.card_counts() == [7, 7, 7, 7]
    assert len(h.draw_pile) == 108 - 28 - len(h.discard)


@rule(
    "Yes. A regular Wild can be played on anything, including another Wild. The color that "
    "matters is the one the previous player named."
)
def test_faq_wild_on_wild_and_named_color_matters() -> None:
    """Can you play a Wild card on top of a Wild card? Yes. A regular Wild can be played on
    anything, including another Wild. The color that matters is the one the previous player
    named."""
    h = position(
        [["wild", "blue_1", "green_2"], ["wild", "blue_3", "green_4", "yellow_5"], 3, 3], "red_7"
    )
    play(h, 0, "wild", BLUE)
    assert legal_plays(h, 1) == {"wild", "blue_3"}
    play(h, 1, "wild", GREEN)
    assert h.top == C.WILD and h.color == GREEN
    assert legal_plays(h, 2) == {x for x in held(h, 2) if x.startswith("green") or "wild" in x}


@rule(
    "Not under the classic W2085 rules. A player hit with a Draw Two draws and loses the turn. "
    "Stacking is a common house rule."
)
def test_faq_no_draw_two_stacking_by_default() -> None:
    """Can you stack Draw Two cards in UNO? Not under the classic W2085 rules. A player hit with a
    Draw Two draws and loses the turn. Stacking is a common house rule."""
    h = position([["red_draw_two", *SPARE], ["red_draw_two", "blue_draw_two"], 3, 3], "red_7")
    ev = play(h, 0, "red_draw_two")
    assert len(drew(ev, 1)) == 2 and h.current == 2
    stack = position(
        [["red_draw_two", *SPARE], ["red_draw_two", "blue_draw_two"], 3, 3],
        "red_7",
        rules=RuleSet(stacking=True),
    )
    play(stack, 0, "red_draw_two")
    assert stack.phase == STACK and stack.current == 1


@rule(
    "What happens if you challenge a Wild Draw Four and lose? You draw six cards: the four from "
    "the card plus two as a penalty."
)
def test_faq_losing_challenge_draws_six() -> None:
    """What happens if you challenge a Wild Draw Four and lose? You draw six cards: the four from
    the card plus two as a penalty."""
    h = position([["wild_draw_four", "blue_1", "green_2"], ["red_1"], 3, 3], "red_7")
    play(h, 0, "wild_draw_four", RED)
    ev = h.apply(1, A.CHALLENGE)
    assert one(ev, E.Drew).reason == "challenge_failed"
    assert len(drew(ev, 1)) == 6
    assert len(h.hands[1]) == 7
    assert h.current == 2


@rule("Does a Reverse act like a Skip with two players? Older Mattel rule sheets say yes.")
@pytest.mark.parametrize("dealer", [0, 1])
def test_faq_reverse_is_skip_with_two_players(dealer: int) -> None:
    """Does a Reverse act like a Skip with two players? Older Mattel rule sheets say yes. The
    current W2085 sheet does not include two-player rules, so agree before you start. Most tables
    use the Skip reading."""
    h = position([["red_reverse", "red_1"], ["red_2", "red_3"]], "red_7", dealer=dealer)
    ev = play(h, 0, "red_reverse")
    assert one(ev, E.Skipped).seat == 1
    assert h.current == 0
    first = deal({}, first=["blue_reverse"], dealer=dealer, rules=RuleSet(seats=2))
    assert first.current == dealer  # the non-dealer is skipped


@rule(
    "Can you win UNO on a Wild card? Yes. Any legal card can be your last card, including a Wild "
    "or Wild Draw Four."
)
@pytest.mark.parametrize("last", ["wild", "wild_draw_four"])
def test_faq_win_on_a_wild_card(last: str) -> None:
    """Can you win UNO on a Wild card? Yes. Any legal card can be your last card, including a Wild
    or Wild Draw Four."""
    h = position([[last], ["blue_1", "blue_2"], 3, 3], "red_7")
    ev = play(h, 0, last, GREEN)
    assert one(ev, E.HandEnded).winner == 0
    assert h.phase == OVER


# ---------------------------------------------------------------------------- edition notes


@rule(
    "Classic 108-card UNO, Mattel W2085. New decks with customizable or Shuffle Hands cards add "
    "rules not covered here."
)
def test_edition_classic_108_card_deck_only() -> None:
    """Classic 108-card UNO, Mattel W2085. New decks with customizable or Shuffle Hands cards add
    rules not covered here."""
    assert len(C.one_deck()) == 108
    assert {C.rank_of(x) for x in C.one_deck()} == set(range(15))


@rule("Stacking and jump-ins are house rules.")
def test_edition_stacking_and_jump_in_are_off_by_default() -> None:
    """Stacking and jump-ins are house rules."""
    rules = RuleSet()
    assert (rules.stacking, rules.stacking_wd4, rules.jump_in) == (False, False, False)
    h = position([SPARE, ["red_5", "blue_1"], 3, 3], "red_5", rules=rules)
    assert h.pending_seats() == [0]


@rule(
    "The two-player, partners and Challenge UNO notes come from Mattel's older 30th Anniversary "
    "rule sheet (42885), which also uses a four-card penalty for a missed UNO call; this guide "
    "follows W2085's two-card penalty."
)
@pytest.mark.parametrize(("penalty", "default"), [(2, True), (4, False)])
def test_edition_missed_uno_penalty_two_by_default_four_optional(
    penalty: int, default: bool
) -> None:
    """The two-player, partners and Challenge UNO notes come from Mattel's older 30th Anniversary
    rule sheet (42885), which also uses a four-card penalty for a missed UNO call; this guide
    follows W2085's two-card penalty."""
    rules = RuleSet() if default else RuleSet(uno_penalty=penalty)
    h = position([["red_1", "red_2"], 3, 3, 3], "red_7", rules=rules)
    play(h, 0, "red_1")
    ev = h.apply(2, A.catch_id(0))
    assert one(ev, E.Caught).penalty == penalty
    assert len(drew(ev, 0)) == penalty
