"""wango-rules-and-setup.txt: one test per distinct rule sentence (the page repeats several
sentences word for word; each is tested once)."""

from __future__ import annotations

import pytest

from uno_server.engine import actions as A
from uno_server.engine import cards as C
from uno_server.engine import events as E
from uno_server.engine.bots import HeuristicBot, RandomBot
from uno_server.engine.errors import IllegalActionError, InvalidRulesError, WrongSeatError
from uno_server.engine.hand import CHALLENGE, OVER, STACK, TURN, Hand
from uno_server.engine.match import Match
from uno_server.engine.rules import RuleSet
from uno_server.engine.simulate import play_hand, play_match
from uno_server.engine.views import SPECTATOR, redact, redact_all, seat_view

from .helpers import (
    BLUE,
    GREEN,
    RED,
    YELLOW,
    c,
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
    system_close,
)


def rule(sentence: str) -> pytest.MarkDecorator:
    return pytest.mark.rule("wango", sentence)


SPARE = ["yellow_9", "yellow_8", "green_6"]
WANGO = RuleSet.wango()


@rule(
    "Match color, number or symbol, call UNO with one card left, and empty your hand first to win."
)
def test_match_call_uno_and_empty_hand_first_to_win() -> None:
    """Match color, number or symbol, call UNO with one card left, and empty your hand first to
    win."""
    h = position(
        [
            ["red_1", "blue_7"],
            ["blue_2", "green_5", "green_6"],
            ["blue_3", "green_7", "green_8"],
            ["blue_1", "yellow_5", "yellow_6"],
        ],
        "red_7",
        rules=WANGO,
    )
    assert legal_plays(h, 0) == {"red_1", "blue_7"}
    play(h, 0, "blue_7", uno=True)
    assert h.uno_called[0]
    play(h, 1, "blue_2")
    play(h, 2, "blue_3")
    play(h, 3, "blue_1")
    ev = play(h, 0, "red_1")
    assert one(ev, E.HandEnded).winner == 0


@rule("Physical multi-hand scoring normally races to 500; WANGO resolves the current hand.")
def test_physical_races_to_500_wango_resolves_current_hand() -> None:
    """Physical multi-hand scoring normally races to 500; WANGO resolves the current hand."""
    classic = Match(RuleSet(), seed=1, dealer=3)
    classic.hand = position([["red_1"], ["wild"], 3, 3], "red_7", rules=classic.rules)
    classic.apply(0, play_action("red_1"))
    assert not classic.over and classic.rules.target_score == 500
    wango = Match(WANGO, seed=1, dealer=3)
    wango.hand = position([["red_1"], ["wild"], 3, 3], "red_7", rules=WANGO)
    ev = wango.apply(0, play_action("red_1"))
    assert wango.over
    assert one(ev, E.MatchEnded).winners == (0,)


@rule("2\u201310 players \u00b7 Physical duration varies; WANGO uses four-player rounds")
def test_two_to_ten_players_wango_four_player_rounds() -> None:
    """2–10 players · Physical duration varies; WANGO uses four-player rounds"""  # noqa: RUF002
    assert WANGO.seats == 4
    for seats in (2, 10):
        assert Hand.deal(RuleSet(seats=seats), 1, 0).n == seats


@rule("Classic 108; WANGO four seats, no stacking, single hand")
def test_classic_108_wango_four_seats_no_stacking_single_hand() -> None:
    """Classic 108; WANGO four seats, no stacking, single hand"""
    assert len(C.full_deck(WANGO.decks)) == 108
    assert (WANGO.seats, WANGO.stacking, WANGO.stacking_wd4, WANGO.scoring) == (
        4,
        False,
        False,
        "single_hand",
    )


@rule("Deal seven cards each and start draw and discard piles.")
def test_deal_seven_each_start_draw_and_discard_piles() -> None:
    """Deal seven cards each and start draw and discard piles."""
    h = deal({}, first=["blue_3"], rules=WANGO)
    assert h.card_counts() == [7, 7, 7, 7]
    assert h.discard == [c("blue_3")]
    assert len(h.draw_pile) == 79


@rule("Check the active color, top number or symbol, and direction.")
def test_view_shows_active_color_top_card_and_direction() -> None:
    """Check the active color, top number or symbol, and direction."""
    h = position([["red_reverse", *SPARE], 3, 3, 3], "wild", color="red", rules=WANGO)
    play(h, 0, "red_reverse")
    for seat in range(4):
        v = seat_view(h, seat)
        assert (v.active_color, v.top_card, v.direction) == (RED, c("red_reverse"), -1)


@rule("Based on Mattel\u2019s classic 108-card rules and the current WANGO implementation.")
def test_based_on_classic_108_card_rules() -> None:
    """Based on Mattel's classic 108-card rules and the current WANGO implementation."""
    h = Hand.deal(WANGO, seed=3, dealer=0)
    assert deck_total(h) == 108
    assert RuleSet.wango().to_dict() == {**RuleSet().to_dict(), "scoring": "single_hand"}


@rule(
    "Physical play supports 2\u201310 players; WANGO uses four seats, either one human plus "
    "three AI or 1\u20134 friends with AI filling vacancies."
)
@pytest.mark.parametrize("humans", [1, 2, 3, 4])
def test_four_seats_with_ai_filling_vacancies(humans: int) -> None:
    """Physical play supports 2–10 players; WANGO uses four seats, either one human plus three AI or
    1–4 friends with AI filling vacancies."""  # noqa: RUF002
    h = Hand.deal(WANGO, seed=humans, dealer=0)
    bots = [RandomBot(s) if s < humans else HeuristicBot(s) for s in range(4)]
    play_hand(h, bots)
    assert h.phase == OVER
    assert h.hands[h.winner] == []


@rule(
    "WANGO ends each hand without an automatic race to 500; no penalty stacking, seven swaps or "
    "zero rotation."
)
def test_wango_no_race_no_stacking_no_seven_swaps_no_zero_rotation() -> None:
    """WANGO ends each hand without an automatic race to 500; no penalty stacking, seven swaps or
    zero rotation."""
    assert (WANGO.scoring, WANGO.stacking, WANGO.seven_o) == ("single_hand", False, False)
    hands: list[list[str] | int] = [
        ["red_7", "red_0", "red_draw_two", "blue_1"],
        ["red_draw_two", "green_1", "green_2"],
        3,
        3,
    ]
    h = position(hands, "red_5", rules=WANGO)
    assert play_action("red_7") in h.legal_actions(0)
    assert not any(a >= A.SWAP_BASE for a in h.legal_actions(0))
    before = [list(x) for x in h.hands]
    ev = play(h, 0, "red_0")
    assert not of_type(ev, E.HandsRotated)
    assert h.hands[1:] == before[1:]
    h = position(hands, "red_5", rules=WANGO)
    play(h, 0, "red_draw_two")
    assert h.phase != STACK
    assert len(h.hands[1]) == 5


@rule(
    "Each player gets 7 cards, the remaining cards form the draw pile, and one card is flipped "
    "to establish the discard pile."
)
def test_turn_sequence_seven_cards_draw_pile_one_flipped() -> None:
    """Each player gets 7 cards, the remaining cards form the draw pile, and one card is flipped to
    establish the discard pile."""
    h = deal({}, first=["green_8"], rules=WANGO)
    assert h.card_counts() == [7] * 4
    assert len(h.discard) == 1
    assert len(h.draw_pile) == 108 - 28 - 1


@rule(
    "Match color, number, or symbol; a wild card chooses a color, and +4 has additional usage "
    "restrictions."
)
def test_turn_sequence_match_wild_chooses_color_plus_four_restricted() -> None:
    """Match color, number, or symbol; a wild card chooses a color, and +4 has additional usage
    restrictions."""
    h = position([["wild", "wild_draw_four", "green_3"], 3, 3, 3], "green_7", rules=WANGO)
    assert legal_plays(h, 0) == {"wild", "wild_draw_four", "green_3"}
    play(h, 0, "wild_draw_four", BLUE)
    assert one(h.apply(1, A.CHALLENGE), E.Challenged).bluff is True


@rule(
    "After choosing to draw 1 card, you may only immediately play the card just drawn; if you do "
    "not play it, your turn ends."
)
def test_turn_sequence_after_drawing_only_the_drawn_card() -> None:
    """After choosing to draw 1 card, you may only immediately play the card just drawn; if you do
    not play it, your turn ends."""
    h = position([["green_3", "wild"], 3, 3, 3], "green_7", draws=["green_9"], rules=WANGO)
    draw(h, 0)
    assert legal_plays(h, 0) == {"green_9"}
    ev = h.apply(0, A.PASS)
    assert one(ev, E.Passed).seat == 0
    assert h.current == 1
    assert c("green_9") in h.hands[0]


@rule("The recipient of a +4 may accept or challenge it.")
@pytest.mark.parametrize("answer", [A.ACCEPT, A.CHALLENGE])
def test_turn_sequence_recipient_accepts_or_challenges(answer: int) -> None:
    """The recipient of a +4 may accept or challenge it."""
    h = position([["wild_draw_four", "blue_1", "blue_2"], 3, 3, 3], "red_7", rules=WANGO)
    play(h, 0, "wild_draw_four", GREEN)
    assert h.legal_actions(1) == [A.ACCEPT, A.CHALLENGE]
    ev = h.apply(1, answer)
    assert len(drew(ev, 1)) == (4 if answer == A.ACCEPT else 6)
    assert h.current == 2


@rule("Shout UNO in time when down to 1 card; the first to empty their hand wins.")
def test_turn_sequence_shout_uno_in_time() -> None:
    """Shout UNO in time when down to 1 card; the first to empty their hand wins."""
    h = position([["red_1", "red_2"], ["blue_1", "blue_2", "blue_3"], 3, 3], "red_7", rules=WANGO)
    play(h, 0, "red_1")
    ev = h.apply(0, A.CALL_UNO)
    assert one(ev, E.UnoCalled) == E.UnoCalled(0, True)
    assert h.window == -1
    assert A.catch_id(0) not in h.legal_actions(1)


@rule("Match color, number or symbol; wilds choose color, and Wild Draw Four has a restriction.")
@pytest.mark.parametrize("named", [RED, YELLOW, GREEN, BLUE])
def test_play_one_legal_card_wild_chooses_color(named: int) -> None:
    """Match color, number or symbol; wilds choose color, and Wild Draw Four has a restriction."""
    h = position([["wild", *SPARE], 3, 3, 3], "red_7", rules=WANGO)
    ev = play(h, 0, "wild", named)
    assert one(ev, E.Played).color == named == h.color


@rule("Play one card, resolve its effect, then pass the turn.")
def test_play_one_card_resolve_effect_pass_turn() -> None:
    """Play one card, resolve its effect, then pass the turn."""
    h = position([["red_draw_two", "red_1", "red_2"], 3, 3, 3], "red_7", rules=WANGO)
    ev = play(h, 0, "red_draw_two")
    kinds = [type(e) for e in ev]
    assert kinds == [E.Played, E.Drew, E.Skipped]
    assert h.current == 2
    with pytest.raises(WrongSeatError):
        play(h, 0, "red_1")


@rule("After drawing one, only that newly drawn card may be played immediately; otherwise pass.")
def test_after_drawing_one_only_new_card_or_pass() -> None:
    """After drawing one, only that newly drawn card may be played immediately; otherwise pass."""
    h = position([["red_1", "wild"], 3, 3, 3], "red_7", draws=["red_2"], rules=WANGO)
    draw(h, 0)
    assert h.legal_actions(0) == [A.PASS, play_action("red_2")]


@rule("The recipient of a Wild Draw Four may accept or challenge.")
def test_recipient_of_wd4_may_accept_or_challenge_no_one_else() -> None:
    """The recipient of a Wild Draw Four may accept or challenge."""
    h = position([["wild_draw_four", "blue_1", "blue_2"], 3, 3, 3], "red_7", rules=WANGO)
    play(h, 0, "wild_draw_four", GREEN)
    assert h.phase == CHALLENGE
    assert h.pending_seats() == [1]
    assert h.legal_actions(1) == [A.ACCEPT, A.CHALLENGE]
    assert h.default_action(1) == A.ACCEPT


@rule("Do not draw repeatedly or substitute another card from your hand.")
def test_no_repeated_draw_no_substitution() -> None:
    """Do not draw repeatedly or substitute another card from your hand."""
    h = position([["red_1", "wild"], 3, 3, 3], "red_7", draws=["red_2"], rules=WANGO)
    draw(h, 0)
    with pytest.raises(IllegalActionError):
        draw(h, 0)
    with pytest.raises(IllegalActionError) as err:
        play(h, 0, "red_1")
    assert err.value.reason == "ONLY_DRAWN_CARD"


@rule("Call UNO when your play leaves one card; the first empty hand wins.")
def test_call_uno_when_play_leaves_one_card() -> None:
    """Call UNO when your play leaves one card; the first empty hand wins."""
    h = position([["red_1", "red_2", "red_3"], 3, 3, 3], "red_7", rules=WANGO)
    assert play_action("red_1", uno=True) not in h.legal_actions(0)
    h = position([["red_1", "red_2"], 3, 3, 3], "red_7", rules=WANGO)
    assert play_action("red_1", uno=True) in h.legal_actions(0)
    play(h, 0, "red_1", uno=True)
    assert h.uno_called[0]


@rule(
    "A missed call may cost two cards; the normal window is two seconds and slow local practice "
    "uses five."
)
@pytest.mark.parametrize("ms", [2000, 5000])
def test_missed_call_costs_two_window_two_or_five_seconds(ms: int) -> None:
    """A missed call may cost two cards; the normal window is two seconds and slow local practice
    uses five."""
    assert WANGO.uno_window_ms == 2000
    rules = RuleSet(seats=4, scoring="single_hand", uno_window_ms=ms)
    h = position([["red_1", "red_2"], 3, 3, 3], "red_7", rules=rules)
    play(h, 0, "red_1")
    ev = h.apply(1, A.catch_id(0))
    assert len(drew(ev, 0)) == 2
    h = position([["red_1", "red_2"], 3, 3, 3], "red_7", rules=rules)
    play(h, 0, "red_1")
    ev = system_close(h)  # the window's time ran out
    assert one(ev, E.UnoWindowClosed) == E.UnoWindowClosed(0, False)
    assert h.legal_actions(2) == []
    assert len(h.hands[0]) == 1


@rule("Only the recipient may challenge.")
@pytest.mark.parametrize("other", [0, 2, 3])
def test_only_the_recipient_may_challenge(other: int) -> None:
    """Only the recipient may challenge."""
    h = position([["wild_draw_four", "red_1", "red_2"], 3, 3, 3], "red_7", rules=WANGO)
    play(h, 0, "wild_draw_four", GREEN)
    assert h.legal_actions(other) == []
    with pytest.raises(WrongSeatError):
        h.apply(other, A.CHALLENGE)


@rule(
    "If the offender had a matching color, the offender draws four; otherwise the challenger "
    "draws six."
)
@pytest.mark.parametrize("had_color", [True, False])
def test_offender_with_matching_color_draws_four_else_challenger_six(had_color: bool) -> None:
    """If the offender had a matching color, the offender draws four; otherwise the challenger draws
    six."""
    h = position(
        [["wild_draw_four", "red_1" if had_color else "blue_1", "blue_2"], 3, 3, 3],
        "red_7",
        rules=WANGO,
    )
    play(h, 0, "wild_draw_four", GREEN)
    ev = h.apply(1, A.CHALLENGE)
    if had_color:
        assert (len(drew(ev, 0)), len(drew(ev, 1))) == (4, 0)
        assert h.current == 1
    else:
        assert (len(drew(ev, 0)), len(drew(ev, 1))) == (0, 6)
        assert h.current == 2


@rule("Accepting means drawing four and skipping.")
def test_accepting_means_drawing_four_and_skipping() -> None:
    """Accepting means drawing four and skipping."""
    h = position([["wild_draw_four", "red_1", "red_2"], 3, 3, 3], "red_7", rules=WANGO)
    play(h, 0, "wild_draw_four", GREEN)
    ev = h.apply(1, A.ACCEPT)
    assert [type(e) for e in ev] == [E.Accepted, E.Drew, E.Skipped]
    assert len(drew(ev, 1)) == 4
    assert h.current == 2


@rule("WANGO reveals evidence only to the challenger, not the entire table.")
@pytest.mark.parametrize("challenger_bluff", [True, False])
def test_evidence_revealed_only_to_challenger(challenger_bluff: bool) -> None:
    """WANGO reveals evidence only to the challenger, not the entire table."""
    hand = ["wild_draw_four", "red_1" if challenger_bluff else "blue_1", "blue_2"]
    h = position([hand, 3, 3, 3], "red_7", rules=WANGO)
    play(h, 0, "wild_draw_four", GREEN)
    ev = h.apply(1, A.CHALLENGE)
    evidence = one(ev, E.ChallengeEvidence)
    assert evidence.challenger == 1 and evidence.offender == 0
    assert sorted(evidence.hand) == sorted(c(x) for x in hand[1:])
    assert one(redact_all(ev, 1), E.ChallengeEvidence) == evidence
    for viewer in (0, 2, 3, SPECTATOR):
        seen = redact_all(ev, viewer)
        assert not of_type(seen, E.ChallengeEvidence)
        assert one(seen, E.Challenged).bluff is challenger_bluff
        for e in seen:
            if isinstance(e, E.Drew) and e.seat != viewer:
                assert e.cards == ()


@rule("Classic 108: 25 in each color plus four Wild and four Wild Draw Four.")
@pytest.mark.parametrize("color", [RED, YELLOW, GREEN, BLUE])
def test_classic_108_is_25_per_color_plus_eight_wilds(color: int) -> None:
    """Classic 108: 25 in each color plus four Wild and four Wild Draw Four."""
    deck = C.one_deck()
    assert sum(1 for x in deck if C.color_of(x) == color) == 25
    assert deck.count(C.WILD) == 4 and deck.count(C.WILD_DRAW_FOUR) == 4
    assert 4 * 25 + 8 == len(deck) == 108


@rule("Numbers score face value; Draw Two, Skip and Reverse score 20; wilds score 50.")
@pytest.mark.parametrize(
    ("card", "value"),
    [
        ("red_0", 0),
        ("blue_5", 5),
        ("green_9", 9),
        ("yellow_draw_two", 20),
        ("red_skip", 20),
        ("blue_reverse", 20),
        ("wild", 50),
        ("wild_draw_four", 50),
    ],
)
def test_card_scores(card: str, value: int) -> None:
    """Numbers score face value; Draw Two, Skip and Reverse score 20; wilds score 50."""
    assert C.points(c(card)) == value


@rule("Extra cards from 112-card decks, UNO Flip and No Mercy are excluded.")
def test_extra_edition_cards_excluded() -> None:
    """Extra cards from 112-card decks, UNO Flip and No Mercy are excluded."""
    assert len(C.one_deck()) == 108
    assert all(C.is_valid_code(x) for x in C.one_deck())
    assert not any(C.is_valid_code(x) for x in range(80) if x not in C.ALL_CODES)
    for name in (
        "wild_shuffle_hands",
        "wild_customizable",
        "red_flip",
        "wild_draw_six",
        "red_skip_everyone",
    ):
        with pytest.raises(ValueError):
            C.parse(name)


@rule("WANGO does not automatically run a 500-point match.")
def test_wango_no_automatic_500_point_match() -> None:
    """WANGO does not automatically run a 500-point match."""
    m = Match(WANGO, seed=2, dealer=0)
    m.hand = position([["red_1"], ["red_2"], 3, 3], "red_7", current=0, rules=WANGO)
    m.apply(0, play_action("red_1"))
    assert m.over and m.totals[0] < 500
    with pytest.raises(IllegalActionError):
        m.next_hand()


@rule("No. Resolve the draw penalty and skipped turn; another penalty card cannot pass it on.")
@pytest.mark.parametrize("answer", ["blue_draw_two", "wild_draw_four"])
def test_draw_penalty_cannot_be_passed_on(answer: str) -> None:
    """Can Draw Two and Wild Draw Four stack? No. Resolve the draw penalty and skipped turn; another
    penalty card cannot pass it on."""
    h = position([["red_draw_two", *SPARE], [answer, "red_1", "red_2"], 3, 3], "red_7", rules=WANGO)
    ev = play(h, 0, "red_draw_two")
    assert len(drew(ev, 1)) == 2
    assert one(ev, E.Skipped).seat == 1
    with pytest.raises(WrongSeatError):
        play(h, 1, answer, BLUE)


@rule("This guide excludes stacking house rules.")
def test_guide_excludes_stacking() -> None:
    """This guide excludes stacking house rules."""
    assert not WANGO.stacking and not WANGO.stacking_wd4
    with pytest.raises(InvalidRulesError, match=r"rules\.stacking_wd4"):
        RuleSet(stacking_wd4=True)


@rule("Wild Draw Four is legal only if your hand had no card of the active color.")
@pytest.mark.parametrize(("hand", "legal"), [(["green_1"], False), (["blue_1"], True)])
def test_wd4_legal_only_without_active_color(hand: list[str], legal: bool) -> None:
    """Wild Draw Four is legal only if your hand had no card of the active color."""
    h = position([["wild_draw_four", *hand, "blue_9"], 3, 3, 3], "wild", color="green", rules=WANGO)
    play(h, 0, "wild_draw_four", RED)
    assert one(h.apply(1, A.CHALLENGE), E.Challenged).bluff is not legal


@rule("A matching number in a different color does not prohibit it.")
def test_wd4_matching_number_other_color_allowed() -> None:
    """A matching number in a different color does not prohibit it."""
    h = position([["wild_draw_four", "blue_7", "yellow_7"], 3, 3, 3], "red_7", rules=WANGO)
    play(h, 0, "wild_draw_four", RED)
    ev = h.apply(1, A.CHALLENGE)
    assert one(ev, E.Challenged).bluff is False
    assert len(drew(ev, 1)) == 6


@rule("WANGO permits a bluff that the recipient may challenge.")
def test_bluff_permitted_and_challengeable() -> None:
    """WANGO permits a bluff that the recipient may challenge."""
    h = position([["wild_draw_four", "red_1", "red_2"], 3, 3, 3], "red_7", rules=WANGO)
    assert play_action("wild_draw_four", BLUE) in h.legal_actions(0)
    play(h, 0, "wild_draw_four", BLUE)
    assert A.CHALLENGE in h.legal_actions(1)
    bluffed = Hand.from_dict(h.to_dict())
    ev = h.apply(1, A.CHALLENGE)
    assert one(ev, E.Challenged).bluff is True
    ev = bluffed.apply(1, A.ACCEPT)
    assert len(drew(ev, 1)) == 4  # an unchallenged bluff stands


@rule("You may draw one voluntarily, then play only that newly drawn card or pass.")
def test_voluntary_draw_then_only_new_card_or_pass() -> None:
    """May I draw despite having a playable card? You may draw one voluntarily, then play only that
    newly drawn card or pass."""
    h = position([["red_1", "red_2"], 3, 3, 3], "red_7", draws=["blue_7"], rules=WANGO)
    draw(h, 0)
    assert h.legal_actions(0) == [A.PASS, play_action("blue_7")]
    h.apply(0, A.PASS)
    assert h.current == 1


@rule("Forced draws resolve their card effects instead.")
@pytest.mark.parametrize("penalty", ["red_draw_two", "wild_draw_four"])
def test_forced_draws_do_not_offer_a_play(penalty: str) -> None:
    """Forced draws resolve their card effects instead."""
    h = position(
        [[penalty, *SPARE], ["blue_1", "blue_2", "blue_3"], 3, 3],
        "red_7",
        draws=["red_5", "red_6", "red_8", "red_9"],
        rules=WANGO,
    )
    ev = play(h, 0, penalty, RED)
    if penalty == "wild_draw_four":
        ev = h.apply(1, A.ACCEPT)
    assert drew(ev, 1)[0] == "red_5"  # playable, yet
    assert h.current == 2
    assert h.legal_actions(1) == []


@rule("Call UNO with one card left.")
def test_call_uno_with_one_card_left() -> None:
    """Call UNO with one card left."""
    h = position([["red_1", "red_2"], 3, 3, 3], "red_7", rules=WANGO)
    play(h, 0, "red_1")
    assert h.legal_actions(0) == [A.CALL_UNO]
    h.apply(0, A.CALL_UNO)
    assert h.uno_called[0] and len(h.hands[0]) == 1


@rule("Physical rules allow catching a missed call before the next player begins.")
def test_catching_before_next_player_begins() -> None:
    """Physical rules allow catching a missed call before the next player begins."""
    h = position([["red_1", "red_2"], ["red_5", "red_6", "red_8"], 3, 3], "red_7", rules=WANGO)
    play(h, 0, "red_1")
    assert h.pending_seats()[-1] == 0
    assert set(h.pending_seats()) == {0, 1, 2, 3}
    with pytest.raises(IllegalActionError):
        play(h, 1, "red_5")
    ev = h.apply(1, A.catch_id(0))
    assert len(drew(ev, 0)) == 2
    play(h, 1, "red_5")


@rule(
    "WANGO uses two seconds normally and five in slow local practice; friend rooms use normal "
    "timing."
)
def test_window_two_seconds_normally_five_in_practice() -> None:
    """WANGO uses two seconds normally and five in slow local practice; friend rooms use normal
    timing."""
    assert WANGO.uno_window_ms == 2000
    assert RuleSet().uno_window_ms == 2000
    assert RuleSet(uno_window_ms=5000).uno_window_ms == 5000
    assert RuleSet.from_dict({"uno_window_ms": 5000}).to_dict()["uno_window_ms"] == 5000


@rule("Follow the displayed timer; fixed seconds are not a physical rule.")
@pytest.mark.parametrize(
    ("ms", "ok"), [(0, True), (500, True), (60000, True), (-1, False), (60001, False)]
)
def test_window_length_is_a_table_option(ms: int, ok: bool) -> None:
    """Follow the displayed timer; fixed seconds are not a physical rule."""
    if ok:
        assert RuleSet(uno_window_ms=ms).uno_window_ms == ms
    else:
        with pytest.raises(InvalidRulesError, match=r"rules\.uno_window_ms"):
            RuleSet(uno_window_ms=ms)


@rule("Skip skips the next player.")
def test_skip_skips_next_player() -> None:
    """Skip skips the next player."""
    h = position([["red_skip", *SPARE], 3, 3, 3], "red_7", rules=WANGO)
    ev = play(h, 0, "red_skip")
    assert one(ev, E.Skipped).seat == 1 and h.current == 2


@rule("Reverse changes direction.")
def test_reverse_changes_direction() -> None:
    """Reverse changes direction."""
    h = position([["red_reverse", *SPARE], 3, 3, 3], "red_7", rules=WANGO)
    play(h, 0, "red_reverse")
    assert h.direction == -1 and h.current == 3


@rule("Draw Two makes the next player draw two and lose their turn.")
def test_draw_two_next_draws_two_loses_turn() -> None:
    """Draw Two makes the next player draw two and lose their turn."""
    h = position([["red_draw_two", *SPARE], 3, 3, 3], "red_7", rules=WANGO)
    ev = play(h, 0, "red_draw_two")
    assert len(drew(ev, 1)) == 2 and h.current == 2


@rule("A normal Wild chooses the next color without a draw penalty.")
def test_normal_wild_no_draw_penalty() -> None:
    """A normal Wild chooses the next color without a draw penalty."""
    h = position([["wild", *SPARE], 3, 3, 3], "red_7", rules=WANGO)
    ev = play(h, 0, "wild", YELLOW)
    assert not of_type(ev, E.Drew) and not of_type(ev, E.Skipped)
    assert (h.current, h.phase, h.color) == (1, TURN, YELLOW)
    assert len(h.hands[1]) == 3


@rule(
    "In physical two-player play Reverse acts as Skip; WANGO uses four seats and reverses "
    "direction."
)
@pytest.mark.parametrize("seats", [2, 4])
def test_two_player_reverse_is_skip_four_seats_reverse(seats: int) -> None:
    """In physical two-player play Reverse acts as Skip; WANGO uses four seats and reverses
    direction."""
    hands: list[list[str] | int] = [["red_reverse", *SPARE]] + [3] * (seats - 1)
    h = position(hands, "red_7", rules=RuleSet(seats=seats, scoring="single_hand"))
    play(h, 0, "red_reverse")
    if seats == 2:
        assert (h.current, h.direction) == (0, 1)
    else:
        assert (h.current, h.direction) == (3, -1)


# ---------------------------------------------------------------------------- a real sequence


@rule("The top card is red seven; you hold blue seven and red Skip.")
def test_sequence_red_seven_top_blue_seven_and_red_skip_both_playable() -> None:
    """The top card is red seven; you hold blue seven and red Skip."""
    h = position([["blue_7", "red_skip", "green_1"], 3, 3, 3], "red_7", rules=WANGO)
    assert legal_plays(h, 0) == {"blue_7", "red_skip"}


@rule("Either is playable, but only one may be played.")
def test_sequence_only_one_may_be_played() -> None:
    """Either is playable, but only one may be played."""
    h = position([["blue_7", "red_skip", "green_1"], 3, 3, 3], "red_7", rules=WANGO)
    play(h, 0, "blue_7")
    with pytest.raises(WrongSeatError):
        play(h, 0, "red_skip")


@rule("Color and number are separate matches.")
@pytest.mark.parametrize(("card", "by"), [("blue_7", "number"), ("red_skip", "color")])
def test_sequence_color_and_number_separate_matches(card: str, by: str) -> None:
    """Color and number are separate matches."""
    h = position([["blue_7", "red_skip", "green_1"], 3, 3, 3], "red_7", rules=WANGO)
    play(h, 0, card)
    assert h.color == (BLUE if by == "number" else RED)


@rule("You draw a green three while the active color remains red.")
def test_sequence_draw_green_three_while_red_active() -> None:
    """You draw a green three while the active color remains red."""
    h = position(
        [["blue_7", "red_skip", "green_1"], 3, 3, 3], "red_7", draws=["green_3"], rules=WANGO
    )
    ev = draw(h, 0)
    assert drew(ev, 0) == ["green_3"]
    assert h.color == RED


@rule("You cannot switch back to the old blue seven; pass.")
def test_sequence_cannot_switch_back_to_blue_seven() -> None:
    """You cannot switch back to the old blue seven; pass."""
    h = position(
        [["blue_7", "red_skip", "green_1"], 3, 3, 3], "red_7", draws=["green_3"], rules=WANGO
    )
    ev = draw(h, 0)
    assert one(ev, E.Passed).seat == 0  # the green three does not match: the turn ends
    with pytest.raises(WrongSeatError):
        play(h, 0, "blue_7")


@rule("Only the newly drawn card may be played immediately.")
def test_sequence_only_newly_drawn_card() -> None:
    """Only the newly drawn card may be played immediately."""
    h = position(
        [["blue_7", "red_skip", "green_1"], 3, 3, 3], "red_7", draws=["red_3"], rules=WANGO
    )
    draw(h, 0)
    assert legal_plays(h, 0) == {"red_3"}
    with pytest.raises(IllegalActionError):
        play(h, 0, "blue_7")


@rule("An opponent plays +4 while holding a red card and red is active; you challenge.")
def test_sequence_opponent_plus_four_holding_red_you_challenge() -> None:
    """An opponent plays +4 while holding a red card and red is active; you challenge."""
    h = position([3, 3, ["wild_draw_four", "red_2", "blue_2"], 3], "red_7", current=2, rules=WANGO)
    play(h, 2, "wild_draw_four", BLUE)
    assert A.CHALLENGE in h.legal_actions(3)
    ev = h.apply(3, A.CHALLENGE)
    assert one(ev, E.Challenged) == E.Challenged(3, 2, True)


@rule("The challenge succeeds; the offender draws four.")
def test_sequence_challenge_succeeds_offender_draws_four() -> None:
    """The challenge succeeds; the offender draws four."""
    h = position(
        [3, 3, ["wild_draw_four", "red_2", "blue_2"], ["blue_5", "green_5"]],
        "red_7",
        current=2,
        rules=WANGO,
    )
    play(h, 2, "wild_draw_four", BLUE)
    ev = h.apply(3, A.CHALLENGE)
    assert len(drew(ev, 2)) == 4 and len(h.hands[2]) == 6
    assert (h.current, h.color) == (3, BLUE)
    play(h, 3, "blue_5")


@rule("Check the active color before the play.")
def test_sequence_check_active_color_before_the_play() -> None:
    """Check the active color before the play."""
    h = position(
        [["wild_draw_four", "red_2", "blue_2"], 3, 3, 3], "wild", color="blue", rules=WANGO
    )
    assert seat_view(h, 0).active_color == BLUE
    play(h, 0, "wild_draw_four", GREEN)
    assert one(h.apply(1, A.CHALLENGE), E.Challenged).bluff is True


# ---------------------------------------------------------------------------- questions


@rule("Hand sizes are public; color preferences remain uncertain.")
def test_hand_sizes_public_cards_private() -> None:
    """Hand sizes are public; color preferences remain uncertain."""
    h = Hand.deal(WANGO, seed=4, dealer=0)
    for viewer in range(4):
        v = seat_view(h, viewer)
        assert v.card_counts == tuple(len(x) for x in h.hands)
        assert v.hand == tuple(sorted(h.hands[viewer]))
    for e in h.log:
        for viewer in range(4):
            seen = redact(e, viewer)
            if isinstance(seen, E.Dealt | E.Drew) and seen.seat != viewer:
                assert seen.cards == ()


@rule(
    "Classic 108 cards; WANGO four seats, no stacking, single game; the player count and "
    "duration on this page are shown according to this site's trial-play mode."
)
def test_classic_108_four_seats_no_stacking_single_game() -> None:
    """Classic 108 cards; WANGO four seats, no stacking, single game; the player count and duration
    on this page are shown according to this site's trial-play mode."""
    m = play_match(WANGO, 9, [HeuristicBot(s) for s in range(4)])
    assert m.over and m.hand_number == 1
    assert deck_total(m.hand) == 108
    assert m.hand.n == 4
