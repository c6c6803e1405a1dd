"""DECISIONS.md: every settled rule and every option of the rule set, including the house rules."""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any

import pytest

from uno_server.engine import actions as A
from uno_server.engine import cards as C
from uno_server.engine import events as E
from uno_server.engine.errors import IllegalActionError, InvalidRulesError, WrongSeatError
from uno_server.engine.hand import CHALLENGE, CHOOSE_COLOR, DRAWN, OVER, STACK, TURN, Hand
from uno_server.engine.match import Match, choose_first_dealer
from uno_server.engine.rules import RuleSet
from uno_server.engine.views import SPECTATOR, redact, seat_view

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
    pass_,
    play,
    play_action,
    position,
    stacked_deck,
    system_close,
)


def rule(sentence: str) -> pytest.MarkDecorator:
    return pytest.mark.rule("decisions", sentence)


SPARE = ["yellow_9", "yellow_8", "green_6"]


# ---------------------------------------------------------------------------- options in general


@rule(
    'Every "option" below is a named field of the table\'s rule set, carried in the protocol, '
    "recorded with every hand, and shown in replays; the default is the first value listed."
)
def test_options_are_named_fields_recorded_with_every_hand_defaults_first_listed() -> None:
    """Every "option" below is a named field of the table's rule set, carried in the protocol,
    recorded with every hand, and shown in replays; the default is the first value listed."""
    r = RuleSet()
    assert (r.decks, r.first_flip, r.scoring, r.uno_penalty, r.uno_window_ms) == (
        1,
        "apply",
        "standard",
        2,
        2000,
    )
    assert (r.target_score, r.seats) == (500, 4)
    custom = RuleSet(
        seats=6,
        decks=2,
        first_flip="redraw",
        scoring="lowest",
        uno_penalty=4,
        uno_window_ms=5000,
        stacking=True,
        stacking_wd4=True,
        jump_in=True,
        seven_o=True,
        draw_until_playable=True,
        challenge_uno=True,
    )
    assert RuleSet.from_dict(custom.to_dict()) == custom
    h = Hand.deal(custom, seed=5, dealer=2)
    saved = h.to_dict()
    assert saved["rules"] == custom.to_dict()
    assert Hand.from_dict(saved).rules == custom
    bots_actions = [(s, h.default_action(s)) for s in h.pending_seats()[:1]]
    for seat, action in bots_actions:
        assert action is not None
        h.apply(seat, action)
    again = Hand.replay(custom, 5, 2, h.actions)
    assert again.to_dict() == h.to_dict()
    with pytest.raises(InvalidRulesError, match=r"rules\.no_such_option"):
        RuleSet.from_dict({"no_such_option": True})


# ---------------------------------------------------------------------------- deck and deal


@rule(
    "Classic 108-card deck (per colour: one 0, two each of 1-9, two each of Skip, Reverse, Draw "
    "Two; four Wild, four Wild Draw Four)."
)
def test_classic_108_card_deck_composition() -> None:
    """Classic 108-card deck (per colour: one 0, two each of 1-9, two each of Skip, Reverse, Draw
    Two; four Wild, four Wild Draw Four)."""
    counts = Counter(C.one_deck())
    for color in range(4):
        assert counts[C.card(color, 0)] == 1
        for rank in range(1, 13):
            assert counts[C.card(color, rank)] == 2
    assert counts[C.WILD] == counts[C.WILD_DRAW_FOUR] == 4
    assert sum(counts.values()) == 108


@rule("Option `decks`: 1 | 2 (two decks shuffled together, for 7+ seats).")
@pytest.mark.parametrize("decks", [1, 2])
def test_option_decks_one_or_two(decks: int) -> None:
    """Option `decks`: 1 | 2 (two decks shuffled together, for 7+ seats)."""
    rules = RuleSet(seats=10, decks=decks)
    h = Hand.deal(rules, seed=1, dealer=0)
    everything = h.draw_pile + h.discard + [x for hs in h.hands for x in hs]
    assert sorted(everything) == sorted(C.one_deck() * decks)
    assert len(everything) == 108 * decks


@rule("Option `decks`: 1 | 2 (two decks shuffled together, for 7+ seats).")
@pytest.mark.parametrize("decks", [0, 3])
def test_option_decks_other_values_rejected(decks: int) -> None:
    """Option `decks`: 1 | 2 (two decks shuffled together, for 7+ seats)."""
    with pytest.raises(InvalidRulesError, match=r"rules\.decks"):
        RuleSet(decks=decks)


@rule("Seats: 2-10 in the engine; the service's default table has 4 seats.")
@pytest.mark.parametrize(("seats", "ok"), [(1, False), (2, True), (10, True), (11, False)])
def test_seats_two_to_ten_default_four(seats: int, ok: bool) -> None:
    """Seats: 2-10 in the engine; the service's default table has 4 seats."""
    assert RuleSet().seats == 4
    if ok:
        assert Hand.deal(RuleSet(seats=seats), 1, 0).n == seats
    else:
        with pytest.raises(InvalidRulesError, match=r"rules\.seats"):
            RuleSet(seats=seats)


@rule(
    "First dealer: every seat draws one card, highest number deals, action and Wild cards count "
    "as 0; ties draw again among the tied seats."
)
def test_first_dealer_highest_number_actions_zero_ties_redraw() -> None:
    """First dealer: every seat draws one card, highest number deals, action and Wild cards count as
    0; ties draw again among the tied seats."""
    order = cs("red_9", "wild", "blue_9", "green_skip", "yellow_3", "red_5")
    dealer, events = choose_first_dealer(StackedRandom([order]), 4)
    draws = [(e.seat, e.card) for e in of_type(events, E.DealerDraw)]
    assert draws == [
        (0, c("red_9")),
        (1, C.WILD),
        (2, c("blue_9")),
        (3, c("green_skip")),
        (0, c("yellow_3")),
        (2, c("red_5")),
    ]
    assert dealer == 2
    assert events[-1] == E.DealerChosen(2)


@rule(
    "First dealer: every seat draws one card, highest number deals, action and Wild cards count "
    "as 0; ties draw again among the tied seats."
)
@pytest.mark.parametrize("seed", range(6))
def test_first_dealer_chosen_by_the_match(seed: int) -> None:
    """First dealer: every seat draws one card, highest number deals, action and Wild cards count as
    0; ties draw again among the tied seats."""
    m = Match(RuleSet(seats=5), seed=seed)
    draws = of_type(m.log, E.DealerDraw)
    contenders = list(range(5))
    while len(contenders) > 1:
        chunk, draws = draws[: len(contenders)], draws[len(contenders) :]
        assert [d.seat for d in chunk] == contenders
        best = max(C.dealer_draw_value(d.card) for d in chunk)
        contenders = [d.seat for d in chunk if C.dealer_draw_value(d.card) == best]
    assert draws == []
    assert contenders == [m.dealer] == [one(m.log, E.DealerChosen).seat]
    assert m.hand.dealer == m.dealer


@rule("Later hands: the deal passes one seat to the left.")
@pytest.mark.parametrize("seats", [2, 3, 4])
def test_deal_passes_one_seat_to_the_left(seats: int) -> None:
    """Later hands: the deal passes one seat to the left."""
    m = Match(RuleSet(seats=seats), seed=1, dealer=seats - 1)
    dealers = [m.hand.dealer]
    for _ in range(seats):
        hands: list[list[str] | int] = [["red_1"]]
        hands += [[f"blue_{k + 2}"] for k in range(seats - 1)]
        m.hand = position(hands, "red_7", rules=m.rules, dealer=m.dealer, current=0)
        m.apply(0, play_action("red_1"))
        m.next_hand()
        dealers.append(m.hand.dealer)
    assert dealers == [(seats - 1 + k) % seats for k in range(seats + 1)]


@rule("Deal 7 cards each, one at a time, starting at the dealer's left.")
@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_deal_seven_one_at_a_time_from_dealers_left(dealer: int) -> None:
    """Deal 7 cards each, one at a time, starting at the dealer's left."""
    deck = stacked_deck({}, first=["red_4"], dealer=dealer)
    h = Hand.deal(RuleSet(), 0, dealer, stacked_deck=deck)
    for k in range(28):
        assert h.hands[(dealer + 1 + k) % 4][k // 4] == deck[k]
    assert h.card_counts() == [7, 7, 7, 7]


# ---------------------------------------------------------------------------- the first card


@rule("`apply` (default, as in how-to-play-uno.txt)")
def test_first_flip_apply_is_the_default() -> None:
    """Option `first_flip`: `apply` (default, as in how-to-play-uno.txt)"""
    assert RuleSet().first_flip == "apply"
    h = deal({}, first=["red_skip"])
    assert h.discard == [c("red_skip")] and h.current == 2
    with pytest.raises(InvalidRulesError, match=r"rules\.first_flip"):
        RuleSet(first_flip="ignore")


@rule("Draw Two: the seat at the dealer's left draws 2 and loses its turn.")
def test_first_flip_apply_draw_two() -> None:
    """`apply`: Draw Two: the seat at the dealer's left draws 2 and loses its turn."""
    h = deal({}, first=["blue_draw_two"], draws=["red_1", "red_2"], dealer=2)
    assert drew(h.log, 3) == ["red_1", "red_2"]
    assert one(h.log, E.Skipped).seat == 3
    assert h.current == 0


@rule("Skip: that seat is skipped.")
def test_first_flip_apply_skip() -> None:
    """`apply`: Skip: that seat is skipped."""
    h = deal({}, first=["blue_skip"], dealer=2)
    assert one(h.log, E.Skipped).seat == 3
    assert h.current == 0
    assert h.card_counts() == [7] * 4


@rule("Reverse: the dealer plays first and play moves right.")
def test_first_flip_apply_reverse() -> None:
    """`apply`: Reverse: the dealer plays first and play moves right."""
    h = deal({2: ["blue_1", *SPARE]}, first=["blue_reverse"], dealer=2)
    assert (h.current, h.direction) == (2, -1)
    play(h, 2, "blue_1")
    assert h.current == 1


@rule("Wild: the seat at the dealer's left names the colour, then plays its turn.")
@pytest.mark.parametrize("named", [RED, YELLOW, GREEN, BLUE])
def test_first_flip_apply_wild(named: int) -> None:
    """`apply`: Wild: the seat at the dealer's left names the colour, then plays its turn."""
    h = deal({3: ["red_1", "yellow_1", "green_1", "blue_1"]}, first=["wild"], dealer=2)
    assert (h.phase, h.current) == (CHOOSE_COLOR, 3)
    assert seat_view(h, 3).active_color == -1
    with pytest.raises(IllegalActionError):
        h.apply(3, A.DRAW)
    h.apply(3, A.choose_color_id(named))
    assert (h.phase, h.current, h.color) == (TURN, 3, named)
    plays = legal_plays(h, 3)
    assert C.name(C.card(named, 1)) in plays
    assert all(x.startswith(("wild", C.color_name(named))) for x in plays)


@rule(
    "Wild Draw Four: it goes back into the deck, the deck is reshuffled, and another card is "
    "flipped."
)
@pytest.mark.parametrize("seed", range(4))
def test_first_flip_apply_wild_draw_four_back_reshuffled_reflipped(seed: int) -> None:
    """`apply`: Wild Draw Four: it goes back into the deck, the deck is reshuffled, and another card
    is flipped."""
    deck = stacked_deck({}, first=["wild_draw_four"], seed=seed)
    h = Hand.deal(RuleSet(), seed, 0, stacked_deck=deck)
    flips = of_type(h.log, E.FirstCard)
    assert flips[0] == E.FirstCard(C.WILD_DRAW_FOUR, True)
    assert flips[-1].card == h.top != C.WILD_DRAW_FOUR
    assert deck_total(h) == 108
    unshuffled = list(reversed(deck[29:]))  # the pile as stacked, under the returned card
    assert h.draw_pile != unshuffled[: len(h.draw_pile)]


@rule(
    "`redraw` (current Mattel sheets, per uno-one-page.txt): any action or Wild card flipped "
    "goes back, and another card is flipped until a number card shows."
)
@pytest.mark.parametrize("seed", range(8))
def test_first_flip_redraw_until_number_card(seed: int) -> None:
    """`redraw` (current Mattel sheets, per uno-one-page.txt): any action or Wild card flipped goes
    back, and another card is flipped until a number card shows."""
    first = ["red_skip", "blue_reverse", "green_draw_two", "wild", "wild_draw_four"][seed % 5]
    h = deal({}, first=[first], rules=RuleSet(first_flip="redraw"), seed=seed)
    flips = of_type(h.log, E.FirstCard)
    assert flips[0] == E.FirstCard(c(first), True)
    for f in flips[:-1]:
        assert f.returned and (C.rank_of(f.card) >= 10)
    assert not flips[-1].returned and C.rank_of(flips[-1].card) <= 9
    assert h.discard == [flips[-1].card]
    assert (h.current, h.direction, h.phase) == (1, 1, TURN)
    assert h.card_counts() == [7] * 4


# ---------------------------------------------------------------------------- a turn


@rule(
    "Play one card that matches the active colour, the number, or the symbol; or any Wild; or a "
    "Wild Draw Four (see below)."
)
def test_turn_play_matching_card_or_any_wild_or_wd4() -> None:
    """Play one card that matches the active colour, the number, or the symbol; or any Wild; or a
    Wild Draw Four (see below)."""
    hand = ["green_1", "blue_7", "yellow_skip", "red_2", "wild", "wild_draw_four", "blue_skip"]
    h = position([hand, 3, 3, 3], "wild", under=["yellow_7"], color="green")
    assert legal_plays(h, 0) == {"green_1", "wild", "wild_draw_four"}
    h = position([hand, 3, 3, 3], "green_7")
    assert legal_plays(h, 0) == {"green_1", "blue_7", "wild", "wild_draw_four"}
    h = position([hand, 3, 3, 3], "red_skip")
    assert legal_plays(h, 0) == {"yellow_skip", "blue_skip", "red_2", "wild", "wild_draw_four"}


@rule("A Wild names a colour, which may be the colour already active.")
def test_turn_wild_may_name_active_colour() -> None:
    """A Wild names a colour, which may be the colour already active."""
    h = position([["wild", *SPARE], 3, 3, 3], "blue_7")
    ev = play(h, 0, "wild", BLUE)
    assert one(ev, E.Played).color == BLUE and h.color == BLUE


@rule("Or draw one card (allowed even when holding a playable card).")
def test_turn_draw_allowed_when_holding_playable() -> None:
    """Or draw one card (allowed even when holding a playable card)."""
    h = position([["blue_1", "wild"], 3, 3, 3], "blue_7", draws=["red_3"])
    assert h.legal_actions(0)[0] == A.DRAW
    ev = draw(h, 0)
    assert drew(ev, 0) == ["red_3"]


@rule(
    "If the drawn card is playable, the seat may play that card at once and no other; otherwise, "
    "or by choice, the turn ends."
)
@pytest.mark.parametrize("how", ["play", "pass", "unplayable"])
def test_turn_after_draw_play_it_or_turn_ends(how: str) -> None:
    """If the drawn card is playable, the seat may play that card at once and no other; otherwise,
    or by choice, the turn ends."""
    drawn = "red_3" if how == "unplayable" else "blue_3"
    h = position([["blue_1", "wild"], 3, 3, 3], "blue_7", draws=[drawn])
    draw(h, 0)
    if how == "unplayable":
        assert (h.current, h.phase) == (1, TURN)
        return
    assert h.legal_actions(0) == [A.PASS, play_action(drawn)]
    with pytest.raises(IllegalActionError):
        play(h, 0, "blue_1")
    if how == "play":
        play(h, 0, drawn)
        assert h.top == c(drawn)
    else:
        pass_(h, 0)
        assert c(drawn) in h.hands[0]
    assert (h.current, h.phase) == (1, TURN)


@rule(
    "If the draw pile is empty, the discard pile except its top card is shuffled into a new draw "
    "pile."
)
@pytest.mark.parametrize("seed", [0, 1])
def test_turn_empty_pile_reshuffles_discard_except_top(seed: int) -> None:
    """If the draw pile is empty, the discard pile except its top card is shuffled into a new draw
    pile."""
    under = [f"blue_{k}" for k in range(1, 10)] + ["green_skip", "wild"]
    h = position([["red_9", "red_1"], 3, 3, 3], "red_4", under=under, pile=[], seed=seed)
    ev = draw(h, 0)
    assert one(ev, E.Reshuffled)[0] == 11
    assert h.discard == [c("red_4")]
    assert sorted(h.draw_pile + h.hands[0]) == sorted(cs(*under, "red_9", "red_1"))
    assert deck_total(h) == 2 + 11 + 1 + 9  # what the position holds


@rule("If there is still nothing to draw, the draw does nothing and the turn ends.")
@pytest.mark.parametrize("what", ["draw", "draw_two"])
def test_turn_nothing_to_draw_draw_does_nothing(what: str) -> None:
    """If there is still nothing to draw, the draw does nothing and the turn ends."""
    if what == "draw":
        h = position([["red_9", "red_1"], 3, 3, 3], "blue_4", pile=[])
        ev = draw(h, 0)
        assert one(ev, E.Drew).cards == ()
        assert one(ev, E.Passed).seat == 0
        assert (h.current, h.phase) == (1, TURN)
        assert len(h.hands[0]) == 2
    else:
        h = position([["red_draw_two", *SPARE], 3, 3, 3], "red_4", pile=[])
        ev = play(h, 0, "red_draw_two")
        assert drew(ev, 1) == ["red_4"]  # only what the reshuffle could give; then nothing
        assert h.discard == [c("red_draw_two")]
        assert one(ev, E.Skipped).seat == 1
        assert h.current == 2


@rule(
    "Skip: next seat loses its turn. Reverse: direction flips. Draw Two: next seat draws 2 and "
    "loses its turn. No stacking by default (see house rules)."
)
@pytest.mark.parametrize(
    ("card", "current", "direction", "drawn"),
    [("red_skip", 2, 1, 0), ("red_reverse", 3, -1, 0), ("red_draw_two", 2, 1, 2)],
)
def test_turn_action_cards(card: str, current: int, direction: int, drawn: int) -> None:
    """Skip: next seat loses its turn. Reverse: direction flips. Draw Two: next seat draws 2 and
    loses its turn. No stacking by default (see house rules)."""
    h = position([[card, *SPARE], ["blue_draw_two", "blue_1", "blue_2"], 3, 3], "red_4")
    ev = play(h, 0, card)
    assert (h.current, h.direction, len(drew(ev, 1))) == (current, direction, drawn)
    assert h.phase == TURN


# ---------------------------------------------------------------------------- Wild Draw Four


@rule("A seat may play Wild Draw Four at any time.")
@pytest.mark.parametrize("top", ["red_4", "blue_skip", "green_draw_two", "wild"])
def test_wd4_playable_at_any_time(top: str) -> None:
    """A seat may play Wild Draw Four at any time."""
    h = position(
        [["wild_draw_four", "red_1", "blue_1", "green_1", "yellow_1"], 3, 3, 3],
        top,
        color="green" if top == "wild" else None,
    )
    assert "wild_draw_four" in legal_plays(h, 0)
    play(h, 0, "wild_draw_four", RED)
    assert h.phase == CHALLENGE


@rule(
    "It is honest only if the seat held no card of the active colour when playing it (numbers or "
    "symbols of other colours, and Wild cards, do not count)."
)
@pytest.mark.parametrize(
    ("others", "honest"),
    [
        (["red_1"], False),
        (["red_skip"], False),
        (["red_draw_two", "blue_3"], False),
        (["blue_4", "green_4"], True),
        (["blue_skip", "yellow_skip"], True),
        (["wild", "wild_draw_four"], True),
        ([], True),
    ],
)
def test_wd4_honest_only_without_active_colour(others: list[str], honest: bool) -> None:
    """It is honest only if the seat held no card of the active colour when playing it (numbers or
    symbols of other colours, and Wild cards, do not count)."""
    h = position(
        [["wild_draw_four", *others, "yellow_9", "yellow_8"], 3, 3, 3], "red_skip", under=["red_4"]
    )
    play(h, 0, "wild_draw_four", RED)
    assert one(h.apply(1, A.CHALLENGE), E.Challenged).bluff is not honest


@rule(
    "It is honest only if the seat held no card of the active colour when playing it (numbers or "
    "symbols of other colours, and Wild cards, do not count)."
)
def test_wd4_honesty_judged_on_active_colour_named_by_a_wild() -> None:
    """It is honest only if the seat held no card of the active colour when playing it (the colour a
    Wild named, not the Wild's own colour)."""
    h = position([["wild_draw_four", "green_1", "red_1"], 3, 3, 3], "wild", color="blue")
    play(h, 0, "wild_draw_four", RED)
    assert one(h.apply(1, A.CHALLENGE), E.Challenged).bluff is False
    h = position([["wild_draw_four", "blue_1", "red_1"], 3, 3, 3], "wild", color="blue")
    play(h, 0, "wild_draw_four", RED)
    assert one(h.apply(1, A.CHALLENGE), E.Challenged).bluff is True


@rule("A dishonest play is a bluff: allowed, and open to challenge.")
def test_wd4_bluff_allowed_and_open_to_challenge() -> None:
    """A dishonest play is a bluff: allowed, and open to challenge."""
    h = position([["wild_draw_four", "red_1", "red_2"], 3, 3, 3], "red_4")
    assert play_action("wild_draw_four", GREEN) in h.legal_actions(0)
    ev = play(h, 0, "wild_draw_four", GREEN)
    assert one(ev, E.Played).card == C.WILD_DRAW_FOUR
    assert h.legal_actions(1) == [A.ACCEPT, A.CHALLENGE]


@rule("Only the next seat may respond: accept (draw 4, lose the turn) or challenge.")
@pytest.mark.parametrize("direction", [1, -1])
def test_wd4_only_next_seat_responds(direction: int) -> None:
    """Only the next seat may respond: accept (draw 4, lose the turn) or challenge."""
    h = position([["wild_draw_four", "red_1", "red_2"], 3, 3, 3], "red_4", direction=direction)
    play(h, 0, "wild_draw_four", GREEN)
    nxt = direction % 4
    assert h.pending_seats() == [nxt]
    for other in range(4):
        if other != nxt:
            assert h.legal_actions(other) == []
            with pytest.raises(WrongSeatError):
                h.apply(other, A.ACCEPT)
    with pytest.raises(IllegalActionError):
        draw(h, nxt)
    ev = h.apply(nxt, A.ACCEPT)
    assert len(drew(ev, nxt)) == 4
    assert h.current == (2 * direction) % 4


@rule(
    "Challenge: the offender's hand is revealed to the challenger alone (no other seat's view "
    "may show it)."
)
def test_challenge_hand_revealed_to_challenger_alone() -> None:
    """Challenge: the offender's hand is revealed to the challenger alone (no other seat's view may
    show it)."""
    h = position([["wild_draw_four", "red_1", "blue_2"], 3, 3, 3], "red_4")
    play(h, 0, "wild_draw_four", GREEN)
    ev = h.apply(1, A.CHALLENGE)
    evidence = one(ev, E.ChallengeEvidence)
    assert evidence == E.ChallengeEvidence(1, 0, evidence.hand)
    assert sorted(evidence.hand) == cs("red_1", "blue_2")
    assert redact(evidence, 1) is evidence
    for viewer in (0, 2, 3, SPECTATOR):
        assert redact(evidence, viewer) is None
    for viewer in (0, 2, 3):
        v = seat_view(h, viewer)
        assert v.hand == tuple(sorted(h.hands[viewer]))
        fields = {f.name for f in dataclasses.fields(v)}
        assert not fields & {"evidence", "hands", "other_hands", "revealed"}


@rule(
    "Bluff proven: the offender draws 4; the challenger draws nothing and plays its turn "
    "normally in the named colour."
)
def test_challenge_bluff_offender_draws_four_challenger_plays() -> None:
    """Bluff proven: the offender draws 4; the challenger draws nothing and plays its turn normally
    in the named colour."""
    h = position(
        [["wild_draw_four", "red_1", "blue_2"], ["green_5", "red_5", "blue_9"], 3, 3], "red_4"
    )
    play(h, 0, "wild_draw_four", GREEN)
    ev = h.apply(1, A.CHALLENGE)
    assert len(drew(ev, 0)) == 4 and drew(ev, 1) == []
    assert one(ev, E.Drew).reason == "bluff_caught"
    assert (h.current, h.phase, h.color) == (1, TURN, GREEN)
    assert legal_plays(h, 1) == {"green_5"}
    play(h, 1, "green_5")
    assert h.current == 2


@rule("Honest: the challenger draws 6 and loses its turn.")
def test_challenge_honest_challenger_draws_six_loses_turn() -> None:
    """Honest: the challenger draws 6 and loses its turn."""
    h = position(
        [["wild_draw_four", "blue_1", "blue_2"], ["green_5", "red_5", "blue_9"], 3, 3], "red_4"
    )
    play(h, 0, "wild_draw_four", GREEN)
    ev = h.apply(1, A.CHALLENGE)
    assert len(drew(ev, 1)) == 6 and drew(ev, 0) == []
    assert one(ev, E.Skipped).seat == 1
    assert (h.current, h.color) == (2, GREEN)


# ---------------------------------------------------------------------------- calling UNO


@rule("A play that leaves its seat with one card may carry the UNO call.")
@pytest.mark.parametrize("card", ["red_1", "wild", "red_skip", "wild_draw_four"])
def test_uno_call_carried_by_play_leaving_one_card(card: str) -> None:
    """A play that leaves its seat with one card may carry the UNO call."""
    h = position([[card, "blue_9"], 3, 3, 3], "red_4")
    ev = play(h, 0, card, GREEN, uno=True)
    assert one(ev, E.Played).uno is True
    assert one(ev, E.UnoCalled) == E.UnoCalled(0, False)
    assert h.window == -1 and h.uno_called[0]


@rule("The call may also be made late, until someone catches the seat.")
def test_uno_late_call_until_caught() -> None:
    """The call may also be made late, until someone catches the seat."""
    h = position([["red_1", "red_2"], 3, 3, 3], "red_4")
    play(h, 0, "red_1")
    h.apply(1, A.NO_CATCH)
    h.apply(2, A.NO_CATCH)
    ev = h.apply(0, A.CALL_UNO)
    assert one(ev, E.UnoCalled) == E.UnoCalled(0, True)
    assert one(ev, E.UnoWindowClosed) == E.UnoWindowClosed(0, False)
    assert h.uno_called[0]
    caught = position([["red_1", "red_2"], 3, 3, 3], "red_4")
    play(caught, 0, "red_1")
    caught.apply(2, A.catch_id(0))
    assert caught.legal_actions(0) == []
    with pytest.raises(IllegalActionError):
        caught.apply(0, A.CALL_UNO)


@rule("If the call was not made, any other seat may catch it until the next seat begins its turn.")
@pytest.mark.parametrize("catcher", [1, 2, 3])
def test_uno_any_other_seat_may_catch_until_next_turn(catcher: int) -> None:
    """If the call was not made, any other seat may catch it until the next seat begins its turn."""
    h = position([["red_1", "red_2"], ["red_5", "red_6", "red_7"], 3, 3], "red_4")
    play(h, 0, "red_1")
    assert sorted(h.pending_seats()) == [0, 1, 2, 3]
    for s in (1, 2, 3):
        assert A.catch_id(0) in h.legal_actions(s)
    assert h.legal_actions(0) == [A.CALL_UNO]
    with pytest.raises(IllegalActionError):
        play(h, 1, "red_5")
    h.apply(catcher, A.catch_id(0))
    assert len(h.hands[0]) == 3
    later = position([["red_1", "red_2"], ["red_5", "red_6", "red_7"], 3, 3], "red_4")
    play(later, 0, "red_1")
    close_window_unanswered(later)
    play(later, 1, "red_5")
    assert all(A.catch_id(0) not in later.legal_actions(s) for s in range(4))


@rule("A catch makes the offender draw 2 (option `uno_penalty`: 2 | 4, the older 42885 sheet).")
@pytest.mark.parametrize("penalty", [2, 4])
def test_uno_penalty_option(penalty: int) -> None:
    """A catch makes the offender draw 2 (option `uno_penalty`: 2 | 4, the older 42885 sheet)."""
    h = position([["red_1", "red_2"], 3, 3, 3], "red_4", rules=RuleSet(uno_penalty=penalty))
    play(h, 0, "red_1")
    ev = h.apply(1, A.catch_id(0))
    assert one(ev, E.Caught) == E.Caught(1, 0, penalty)
    assert len(drew(ev, 0)) == penalty
    assert len(h.hands[0]) == 1 + penalty


@rule("A catch makes the offender draw 2 (option `uno_penalty`: 2 | 4, the older 42885 sheet).")
@pytest.mark.parametrize("penalty", [0, 1, 3, 6])
def test_uno_penalty_other_values_rejected(penalty: int) -> None:
    """A catch makes the offender draw 2 (option `uno_penalty`: 2 | 4, the older 42885 sheet)."""
    with pytest.raises(InvalidRulesError, match=r"rules\.uno_penalty"):
        RuleSet(uno_penalty=penalty)


@rule("Only the first catch counts.")
def test_uno_only_first_catch_counts() -> None:
    """Only the first catch counts."""
    h = position([["red_1", "red_2"], 3, 3, 3], "red_4")
    play(h, 0, "red_1")
    ev = h.apply(3, A.catch_id(0))
    assert one(ev, E.Caught).catcher == 3
    assert h.window == -1
    for s in (1, 2):
        with pytest.raises(IllegalActionError):
            h.apply(s, A.catch_id(0))
    assert len(h.hands[0]) == 3


@rule("A seat that has called cannot be caught.")
def test_uno_seat_that_called_cannot_be_caught() -> None:
    """A seat that has called cannot be caught."""
    h = position([["red_1", "red_2"], ["red_5", "red_6", "red_7"], 3, 3], "red_4")
    play(h, 0, "red_1", uno=True)
    assert h.window == -1
    for s in (1, 2, 3):
        assert A.catch_id(0) not in h.legal_actions(s)
    with pytest.raises(IllegalActionError):
        h.apply(2, A.catch_id(0))
    assert len(h.hands[0]) == 1


@rule(
    "The window is time-bound in the service: option `uno_window_ms` (2000 normal, 5000 slow "
    "practice; tournaments may use less)."
)
@pytest.mark.parametrize("ms", [2000, 5000, 250])
def test_uno_window_ms_option_and_system_close(ms: int) -> None:
    """The window is time-bound in the service: option `uno_window_ms` (2000 normal, 5000 slow
    practice; tournaments may use less)."""
    assert RuleSet().uno_window_ms == 2000
    rules = RuleSet(uno_window_ms=ms)
    h = position([["red_1", "red_2"], ["red_5", "red_6", "red_7"], 3, 3], "red_4", rules=rules)
    play(h, 0, "red_1")
    h.apply(3, A.NO_CATCH)
    ev = system_close(h)
    assert one(ev, E.UnoWindowClosed) == E.UnoWindowClosed(0, False)
    assert h.window == -1
    play(h, 1, "red_5")
    with pytest.raises(IllegalActionError):
        system_close(h)


@rule("It closes early once every other seat has answered.")
def test_uno_window_closes_once_every_other_seat_answered() -> None:
    """It closes early once every other seat has answered."""
    h = position([["red_1", "red_2"], ["red_5", "red_6", "red_7"], 3, 3], "red_4")
    play(h, 0, "red_1")
    h.apply(1, A.NO_CATCH)
    assert h.window == 0 and h.legal_actions(1) == []
    with pytest.raises(WrongSeatError):
        h.apply(1, A.NO_CATCH)
    h.apply(2, A.NO_CATCH)
    assert h.window == 0
    ev = h.apply(3, A.NO_CATCH)
    assert one(ev, E.UnoWindowClosed) == E.UnoWindowClosed(0, False)
    assert h.window == -1
    assert h.pending_seats() == [1]


# ---------------------------------------------------------------------------- going out, scoring


@rule("The hand ends the moment a seat plays its last card.")
@pytest.mark.parametrize("card", ["red_1", "red_skip", "red_reverse", "wild"])
def test_hand_ends_when_last_card_played(card: str) -> None:
    """The hand ends the moment a seat plays its last card."""
    h = position([[card], 3, 3, 3], "red_4")
    ev = play(h, 0, card, BLUE)
    assert type(ev[-1]) is E.HandEnded
    assert not of_type(ev, E.Skipped) and not of_type(ev, E.Reversed)
    assert (h.phase, h.winner) == (OVER, 0)


@rule(
    "If that card is a Draw Two or Wild Draw Four, the next seat still draws the cards (no "
    "challenge is possible), and they count in scoring."
)
@pytest.mark.parametrize(("card", "n"), [("red_draw_two", 2), ("wild_draw_four", 4)])
@pytest.mark.parametrize("direction", [1, -1])
def test_going_out_on_draw_card(card: str, n: int, direction: int) -> None:
    """If that card is a Draw Two or Wild Draw Four, the next seat still draws the cards (no
    challenge is possible), and they count in scoring."""
    m = Match(RuleSet(), seed=1, dealer=1)
    nxt = direction % 4
    m.hand = position(
        [[card], ["blue_1"], ["blue_2"], ["blue_3"]],
        "red_4",
        direction=direction,
        draws=["green_9", "green_8", "green_7", "green_6"],
        rules=m.rules,
    )
    ev = m.apply(0, play_action(card, RED))
    got = drew(ev, nxt)
    assert got == ["green_9", "green_8", "green_7", "green_6"][:n]
    assert m.hand.phase == OVER and m.hand.pending_seats() == []
    assert not of_type(ev, E.Challenged)
    assert one(ev, E.HandEnded).points_held[nxt] == nxt + sum(C.points(c(x)) for x in got)
    assert m.totals[0] == 1 + 2 + 3 + sum(C.points(c(x)) for x in got)


@rule(
    "Card values: number cards face value; Skip, Reverse, Draw Two 20; Wild and Wild Draw Four 50."
)
@pytest.mark.parametrize("code", C.ALL_CODES, ids=C.name)
def test_card_values(code: int) -> None:
    """Card values: number cards face value; Skip, Reverse, Draw Two 20; Wild and Wild Draw Four
    50."""
    r = C.rank_of(code)
    assert C.points(code) == (r if r <= 9 else 20 if r <= 12 else 50)
    assert C.POINTS[code] == C.points(code)


@rule(
    "`standard` (default): the seat that goes out scores the total of every other hand; the "
    "first seat to reach `target_score` (default 500) wins the match."
)
@pytest.mark.parametrize("target", [500, 100])
def test_scoring_standard(target: int) -> None:
    """`standard` (default): the seat that goes out scores the total of every other hand; the first
    seat to reach `target_score` (default 500) wins the match."""
    rules = RuleSet() if target == 500 else RuleSet(target_score=target)
    assert rules.scoring == "standard"
    m = Match(rules, seed=1, dealer=3)
    m.totals = [target - 60, target - 1, 0, 0]
    m.hand = position(
        [["red_1", "red_2"], ["wild"], ["red_9"], ["blue_skip"]], "red_4", current=2, rules=rules
    )
    ev = m.apply(2, play_action("red_9"))
    assert one(ev, E.HandScored).gained == (0, 0, 3 + 50 + 20, 0)
    assert not m.over
    m.next_hand()
    m.hand = position([["red_1"], ["wild"], ["red_9"], ["blue_skip"]], "red_4", rules=rules)
    ev = m.apply(0, play_action("red_1"))
    assert m.totals[0] == target - 60 + 50 + 9 + 20
    assert one(ev, E.MatchEnded).winners == (0,)


@rule(
    "`lowest`: every seat adds the points it is caught holding; when any seat reaches "
    "`target_score`, the lowest total wins."
)
def test_scoring_lowest() -> None:
    """`lowest`: every seat adds the points it is caught holding; when any seat reaches
    `target_score`, the lowest total wins."""
    rules = RuleSet(scoring="lowest", target_score=100)
    m = Match(rules, seed=1, dealer=3)
    m.hand = position(
        [["red_1"], ["wild"], ["red_9"], ["blue_skip", "green_5"]], "red_4", rules=rules
    )
    ev = m.apply(0, play_action("red_1"))
    assert one(ev, E.HandScored).gained == (0, 50, 9, 25)
    assert not m.over
    m.next_hand()
    m.hand = position([["red_1"], ["wild"], ["red_9"], ["blue_skip"]], "red_4", rules=rules)
    ev = m.apply(0, play_action("red_1"))
    assert m.totals == [0, 100, 18, 45]
    assert one(ev, E.MatchEnded).winners == (0,)


@rule("`single_hand` (WANGO): the match is one hand; first out wins.")
def test_scoring_single_hand() -> None:
    """`single_hand` (WANGO): the match is one hand; first out wins."""
    rules = RuleSet(scoring="single_hand")
    m = Match(rules, seed=1, dealer=3)
    m.hand = position([3, 3, ["red_1"], 3], "red_4", current=2, rules=rules)
    ev = m.apply(2, play_action("red_1"))
    assert one(ev, E.MatchEnded).winners == (2,)
    assert m.over
    with pytest.raises(IllegalActionError):
        m.next_hand()


@rule("Option `scoring`")
@pytest.mark.parametrize("scoring", ["highest", "", "STANDARD"])
def test_scoring_other_values_rejected(scoring: str) -> None:
    """Option `scoring`: `standard` | `lowest` | `single_hand`."""
    with pytest.raises(InvalidRulesError, match=r"rules\.scoring"):
        RuleSet(scoring=scoring)


# ---------------------------------------------------------------------------- two seats


@rule(
    "Reverse acts as Skip; after Skip, Reverse, Draw Two or Wild Draw Four, the same seat plays "
    "again (older Mattel sheet; W2085 has no two-player section)."
)
@pytest.mark.parametrize(
    ("card", "answer"),
    [
        ("red_skip", None),
        ("red_reverse", None),
        ("red_draw_two", None),
        ("wild_draw_four", A.ACCEPT),
        ("wild_draw_four", A.CHALLENGE),  # honest: the challenger draws 6 and loses its turn
    ],
)
@pytest.mark.parametrize("seat", [0, 1])
def test_two_seats_same_seat_plays_again(card: str, answer: int | None, seat: int) -> None:
    """Reverse acts as Skip; after Skip, Reverse, Draw Two or Wild Draw Four, the same seat plays
    again (older Mattel sheet; W2085 has no two-player section)."""
    hands: list[list[str] | int] = [3, 3]
    hands[seat] = [card, "blue_1", "blue_2"]
    h = position(hands, "red_4", current=seat)
    ev = play(h, seat, card, BLUE)
    if answer is not None:
        ev = h.apply(1 - seat, answer)
    assert one(ev, E.Skipped).seat == 1 - seat
    assert (h.current, h.phase, h.direction) == (seat, TURN, 1)
    assert not of_type(ev, E.Reversed)


# ---------------------------------------------------------------------------- house rules


HOUSE = (
    "stacking",
    "stacking_wd4",
    "jump_in",
    "seven_o",
    "draw_until_playable",
    "partners",
    "challenge_uno",
)


@rule("Each is a named option that tables can switch on.")
@pytest.mark.parametrize("option", HOUSE)
def test_house_rules_off_by_default_and_can_be_switched_on(option: str) -> None:
    """House rules (all off by default). Each is a named option that tables can switch on."""
    assert getattr(RuleSet(), option) is False
    needs: dict[str, dict[str, Any]] = {
        "stacking_wd4": {"stacking": True},
        "challenge_uno": {"scoring": "lowest"},
    }
    rules = RuleSet.from_dict({option: True, **needs.get(option, {})})
    assert getattr(rules, option) is True
    assert dataclasses.replace(rules).to_dict()[option] is True


@rule("stacking (Draw Two on Draw Two, optionally Wild Draw Four on top)")
def test_house_stacking_chain_grows() -> None:
    """Listed in how-to-play-uno.txt: stacking (Draw Two on Draw Two, optionally Wild Draw Four on
    top)."""
    rules = RuleSet(stacking=True)
    h = position(
        [
            ["red_draw_two", *SPARE],
            ["blue_draw_two", "red_1", "red_2"],
            ["green_draw_two", "red_3", "red_5"],
            ["blue_9", "blue_8", "red_6"],
        ],
        "red_4",
        rules=rules,
    )
    play(h, 0, "red_draw_two")
    play(h, 1, "blue_draw_two")
    with pytest.raises(IllegalActionError):
        play(h, 2, "red_3")  # only a Draw Two (or accepting) answers a stack
    play(h, 2, "green_draw_two")
    assert (h.phase, h.current) == (STACK, 3)
    assert h.default_action(3) == A.ACCEPT
    ev = h.apply(3, A.ACCEPT)
    assert len(drew(ev, 3)) == 6
    assert h.current == 0 and h.phase == TURN


@rule("stacking (Draw Two on Draw Two, optionally Wild Draw Four on top)")
def test_house_stacking_wd4_on_top_of_draw_two_stack() -> None:
    """Listed in how-to-play-uno.txt: stacking (Draw Two on Draw Two, optionally Wild Draw Four on
    top)."""
    rules = RuleSet(stacking=True, stacking_wd4=True)
    h = position(
        [["red_draw_two", *SPARE], ["wild_draw_four", "blue_1", "blue_2"], 3, 3],
        "red_4",
        rules=rules,
    )
    play(h, 0, "red_draw_two")
    assert play_action("wild_draw_four", GREEN) in h.legal_actions(1)
    play(h, 1, "wild_draw_four", GREEN)
    assert (h.phase, h.current, h.color) == (CHALLENGE, 2, GREEN)
    ev = h.apply(2, A.ACCEPT)
    assert len(drew(ev, 2)) == 6
    assert h.current == 3


@rule("jump-in (an exact match may be played out of turn)")
def test_house_jump_in() -> None:
    """jump-in (an exact match may be played out of turn)"""
    rules = RuleSet(jump_in=True)
    h = position(
        [
            SPARE,
            ["red_4", "blue_9", "blue_8"],
            ["green_4", "red_5", "red_6"],
            ["blue_1", "blue_2", "blue_3"],
        ],
        "red_4",
        current=3,
        rules=rules,
    )
    assert h.pending_seats() == [3, 1]
    assert legal_plays(h, 2) == set()
    with pytest.raises(WrongSeatError):
        play(h, 2, "green_4")
    ev = play(h, 1, "red_4")
    assert one(ev, E.Played) == E.Played(1, c("red_4"), RED, False, True)
    assert h.current == 2  # play continues from the seat that jumped in
    with pytest.raises(WrongSeatError):
        play(h, 3, "blue_1")
    wild = position([SPARE, ["wild", "red_1", "red_2"], 3, 3], "wild", color="red", rules=rules)
    assert wild.pending_seats() == [0]


@rule("seven-o (7 swaps hands with a chosen seat, 0 passes all hands in the direction of play)")
def test_house_seven_o_seven_needs_a_chosen_seat() -> None:
    """seven-o (7 swaps hands with a chosen seat, 0 passes all hands in the direction of play)"""
    rules = RuleSet(seven_o=True)
    h = position(
        [["red_7", "red_1", "red_2"], ["blue_1"], ["blue_2", "blue_3"], ["green_1"]],
        "red_4",
        rules=rules,
    )
    legal = h.legal_actions(0)
    assert [a for a in legal if a >= A.SWAP_BASE] == [A.swap_id(c("red_7"), t) for t in (1, 2, 3)]
    with pytest.raises(IllegalActionError):
        play(h, 0, "red_7")
    h.apply(0, A.swap_id(c("red_7"), 2))
    assert held(h, 0) == ["blue_2", "blue_3"]
    assert held(h, 2) == ["red_1", "red_2"]


@rule("seven-o (7 swaps hands with a chosen seat, 0 passes all hands in the direction of play)")
@pytest.mark.parametrize("direction", [1, -1])
def test_house_seven_o_zero_passes_all_hands(direction: int) -> None:
    """seven-o (7 swaps hands with a chosen seat, 0 passes all hands in the direction of play)"""
    rules = RuleSet(seven_o=True)
    h = position(
        [
            ["red_0", "red_1", "red_2"],
            ["blue_1", "blue_5"],
            ["blue_2", "blue_3"],
            ["green_1", "green_2"],
        ],
        "red_4",
        rules=rules,
        direction=direction,
    )
    before = [list(x) for x in h.hands]
    before[0].remove(c("red_0"))
    play(h, 0, "red_0")
    for s in range(4):
        assert h.hands[(s + direction) % 4] == before[s]


@rule("draw until playable")
@pytest.mark.parametrize("on", [True, False])
def test_house_draw_until_playable(on: bool) -> None:
    """draw until playable"""
    rules = RuleSet(draw_until_playable=on)
    h = position(
        [["blue_1", "blue_2"], 3, 3, 3],
        "red_4",
        draws=["green_1", "yellow_2", "green_4", "blue_5"],
        rules=rules,
    )
    ev = draw(h, 0)
    if on:
        assert drew(ev, 0) == ["green_1", "yellow_2", "green_4"]
        assert (h.phase, h.drawn) == (DRAWN, c("green_4"))
        assert h.legal_actions(0) == [A.PASS, play_action("green_4")]
    else:
        assert drew(ev, 0) == ["green_1"]
        assert h.current == 1


@rule("draw until playable")
def test_house_draw_until_playable_stops_when_nothing_left() -> None:
    """draw until playable (and nothing is left to draw: the turn ends)"""
    rules = RuleSet(draw_until_playable=True)
    h = position(
        [["blue_1", "blue_2"], 3, 3, 3], "red_4", pile=["green_1", "yellow_2"], rules=rules
    )
    ev = draw(h, 0)
    assert drew(ev, 0) == ["green_1", "yellow_2"]
    assert one(ev, E.Passed).seat == 0
    assert h.current == 1


@rule("partners (seats across are a team)")
@pytest.mark.parametrize("winner", [0, 1])
def test_house_partners_team_scores_and_wins_together(winner: int) -> None:
    """partners (seats across are a team)"""
    rules = RuleSet(partners=True)
    m = Match(rules, seed=1, dealer=3)
    m.totals = [450, 450, 450, 450]
    hands: list[list[str] | int] = [["wild"], ["wild_draw_four"], ["blue_skip"], ["wild"]]
    hands[winner] = ["red_1"]
    m.hand = position(hands, "red_4", current=winner, rules=rules)
    ev = m.apply(winner, play_action("red_1"))
    gained = one(ev, E.HandScored).gained
    partner = (winner + 2) % 4
    assert gained[winner] == gained[partner] > 0
    assert gained[(winner + 1) % 4] == gained[(winner + 3) % 4] == 0
    won = one(ev, E.MatchEnded).winners
    assert sorted(won) == sorted([winner, partner])


@rule("Challenge UNO (elimination at 500)")
def test_house_challenge_uno_elimination() -> None:
    """Challenge UNO (elimination at 500)"""
    rules = RuleSet(scoring="lowest", challenge_uno=True)
    assert rules.target_score == 500
    m = Match(rules, seed=1, dealer=0)
    m.totals = [0, 499, 10, 10]
    m.hand = position([["red_1"], ["red_2"], ["red_3"], ["red_5"]], "red_4", rules=rules)
    ev = m.apply(0, play_action("red_1"))
    assert [e.seat for e in of_type(ev, E.SeatEliminated)] == [1]
    assert m.eliminated == [1] and m.active == [0, 2, 3]
    h = m.next_hand()
    assert h.n == 3
    assert m.dealer in m.active
