"""RULINGS.md, "Seven-o: calls and catches stay with the play" (issue 9, item 8).

A UNO call belongs to the seat that made it, for the hand it holds: a 0 that passes every hand
on ends every call, a 7 ends the calls of the two seats that swap, and neither opens a catch
window. The log says the same as the state.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

import pytest

from uno_server.engine import actions as A
from uno_server.engine import events as E
from uno_server.engine.hand import Hand
from uno_server.engine.rules import RuleSet

from .helpers import c, held, of_type, play, position


def rule(sentence: str) -> pytest.MarkDecorator:
    return pytest.mark.rule("rulings", sentence)


ROTATION = (
    "When a 0 passes every hand on, every call lapses, a call made with the 0 itself included."
)
SWAP = (
    "When a 7 swaps two hands, the calls of those two seats lapse; every other seat keeps its call."
)
NO_WINDOW = (
    "A 0 or 7 that moves hands opens no UNO window, even when the seat that played it went down "
    "to one card without calling, and even when it receives a one-card hand."
)
LOG = (
    "The log says the same: HandsRotated and HandsSwapped mean that the calls of the seats whose "
    "hands moved lapse, and no UnoCalled or UnoWindowOpened follows them for that play."
)
SEVEN_O = RuleSet(seven_o=True)


def calls_from_log(events: Sequence[E.Event], n: int) -> list[bool]:
    """Who has called UNO, read from the events alone as a client following the log would."""
    called = [False] * n
    for e in events:
        if isinstance(e, E.Played):
            called[e.seat] = False  # a UnoCalled follows a play that carries a standing call
        elif isinstance(e, E.UnoCalled):
            called[e.seat] = True
        elif isinstance(e, E.Drew) and e.amount:
            called[e.seat] = False
        elif isinstance(e, E.HandsSwapped):
            called[e.seat] = called[e.target] = False
        elif isinstance(e, E.HandsRotated):
            called = [False] * n
    return called


def no_one_can_catch(hand: Hand) -> bool:
    return all(
        not A.CATCH_BASE <= a < A.CATCH_BASE + 10
        for s in range(hand.n)
        for a in hand.legal_actions(s)
    )


@rule(ROTATION)
@rule(LOG)
@pytest.mark.parametrize("direction", [1, -1])
def test_zero_played_with_the_call_from_two_cards_ends_every_call(direction: int) -> None:
    """The issue's case: seat 0 plays a 0 from two cards with the UNO call and receives a
    one-card hand whose seat had called. No call stands afterwards, and the log shows none."""
    giver = (0 - direction) % 4
    hands: list[list[str] | int] = [["red_0", "red_1"], 3, 3, 3]
    hands[giver] = ["blue_9"]
    h = position(hands, "red_4", rules=SEVEN_O, direction=direction)
    h.uno_called[giver] = True  # the giver called UNO when it went down to one card
    events = play(h, 0, "red_0", uno=True)
    assert one_played(events).uno
    assert of_type(events, E.HandsRotated) == [E.HandsRotated(direction)]
    assert held(h, 0) == ["blue_9"] and held(h, direction % 4) == ["red_1"]
    assert h.uno_called == [False] * 4
    assert not of_type(events, E.UnoCalled) and not of_type(events, E.UnoWindowOpened)
    assert calls_from_log(events, 4) == h.uno_called
    assert (h.window, h.pending_seats()) == (-1, [direction % 4])
    assert no_one_can_catch(h)


@rule(NO_WINDOW)
@pytest.mark.parametrize("direction", [1, -1])
def test_zero_played_without_the_call_from_two_cards_opens_no_window(direction: int) -> None:
    """Seat 0 goes down to one card without calling, but the 0 passes that card on, and seat 0
    receives a one-card hand: nobody can be caught, the next seat begins its turn at once."""
    giver = (0 - direction) % 4
    hands: list[list[str] | int] = [["red_0", "red_1"], 3, 3, 3]
    hands[giver] = ["blue_9"]
    h = position(hands, "red_4", rules=SEVEN_O, direction=direction)
    events = play(h, 0, "red_0")
    assert not of_type(events, E.UnoWindowOpened)
    assert h.window == -1 and h.window_awaiting() == []
    assert h.pending_seats() == [direction % 4]
    assert no_one_can_catch(h)
    # the seat that received one card may go out with it on its next turn, uncaught
    assert [len(x) for x in h.hands].count(1) == 2


@rule(SWAP)
@rule(NO_WINDOW)
def test_seven_swap_ends_the_calls_of_the_two_seats_only() -> None:
    """Seat 0 swaps its last card but one away to seat 2, which had called UNO; seat 3, which
    also had called, keeps its call. No window opens on seat 2, now holding one card."""
    h = position(
        [["red_7", "red_1"], ["blue_1", "blue_2"], ["green_5"], ["yellow_5"]],
        "red_4",
        rules=SEVEN_O,
    )
    h.uno_called[2] = h.uno_called[3] = True
    events = h.apply(0, A.swap_id(c("red_7"), 2))
    assert of_type(events, E.HandsSwapped) == [E.HandsSwapped(0, 2)]
    assert held(h, 0) == ["green_5"] and held(h, 2) == ["red_1"]
    assert h.uno_called == [False, False, False, True]
    assert not of_type(events, E.UnoCalled) and not of_type(events, E.UnoWindowOpened)
    called = calls_from_log([E.UnoCalled(2, False), E.UnoCalled(3, False), *events], 4)
    assert called == h.uno_called
    assert (h.window, h.pending_seats()) == (-1, [1])
    assert no_one_can_catch(h)


@rule(ROTATION)
@pytest.mark.parametrize("uno", [True, False])
def test_without_seven_o_a_zero_keeps_the_call_or_opens_the_window(uno: bool) -> None:
    """The ruling changes only hands that move: a plain 0 from two cards keeps its call, or,
    without the call, opens the catch window as DECISIONS.md says."""
    h = position([["red_0", "red_1"], 3, 3, 3], "red_4")
    events = play(h, 0, "red_0", uno=uno)
    assert h.uno_called[0] is uno
    assert bool(of_type(events, E.UnoCalled)) is uno
    assert (h.window == 0) is (not uno)
    assert calls_from_log(events, 4) == h.uno_called


def one_played(events: Sequence[E.Event]) -> E.Played:
    (p,) = of_type(events, E.Played)
    return p


@rule(LOG)
def test_calls_read_from_the_log_match_the_state_in_random_seven_o_hands() -> None:
    """Short seven-o hands (two and three cards each) between random bots that always call UNO
    when they may: after every action the calls a client reads from the log are the state's."""
    rotations_with_call = 0
    for seed in range(400):
        rng = random.Random(seed)
        rules = RuleSet(
            seats=rng.choice([2, 3, 4]),
            hand_size=rng.choice([2, 3]),
            seven_o=True,
            jump_in=rng.random() < 0.5,
        )
        h = Hand.deal(rules, seed, seed % rules.seats)
        log = list(h.log)
        for _ in range(2000):
            if h.over:
                break
            pending = h.pending_seats()
            seat = rng.choice(pending)
            legal = h.legal_actions(seat)
            calls = [a for a in legal if A.PLAY_BASE <= a < A.SWAP_BASE and a & 1]
            plays = [a for a in legal if a != A.DRAW]  # draw only when nothing else is legal
            action = rng.choice(calls or plays or legal)
            events = h.apply(seat, action)
            log += events
            if of_type(events, E.HandsRotated) and one_played(events).uno:
                rotations_with_call += 1
            assert calls_from_log(log, rules.seats) == h.uno_called, (seed, h.turn, events)
            for w in (e.seat for e in of_type(events, E.UnoWindowOpened)):
                assert len(h.hands[w]) == 1
        assert h.over, seed
    assert rotations_with_call >= 20
