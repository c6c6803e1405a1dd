"""SeatView.turn counts public moves only.

Drawing a card that cannot be played ends the turn by itself (one action); keeping a drawn card
that can be played is a second action, a pass. The public events of the two are the same (drew,
passed), but the action counter each request and view carried rose by one in the first case and
by two in the second, so a bot saw which of its opponents' draws had been playable and kept (an
examination, 2026-12-05, inferred every such keep of a match from its own requests)."""

from __future__ import annotations

from uno_server.engine import Hand, RuleSet
from uno_server.engine import actions as A
from uno_server.engine.hand import DRAWN, TURN
from uno_server.engine.views import seat_view


def _after_a_draw(keep: bool) -> tuple[Hand, int, int]:
    """A hand just after its current seat drew, kept (``keep``) a playable card or had an
    unplayable one pass by itself; with the public turn before the draw and the watching seat."""
    for seed in range(2000):
        hand = Hand.deal(RuleSet(), seed, 0)
        if hand.phase != TURN or hand.window >= 0:
            continue
        seat = hand.current
        if hand.legal_actions(seat) != [A.DRAW]:  # nothing to play: it must draw
            continue
        before = hand.public_turn
        hand.apply(seat, A.DRAW)
        if keep and hand.phase == DRAWN and hand.current == seat:
            hand.apply(seat, A.PASS)
            return hand, before, (seat + 1) % hand.n
        if not keep and not (hand.phase == DRAWN and hand.current == seat):
            return hand, before, (seat + 1) % hand.n
    raise AssertionError("no such deal in 2,000 seeds")


def test_a_kept_drawn_card_and_an_unplayable_one_move_the_public_turn_alike() -> None:
    kept, kept_before, watcher = _after_a_draw(keep=True)
    passed, passed_before, _ = _after_a_draw(keep=False)
    assert kept.public_turn - kept_before == passed.public_turn - passed_before == 1
    assert kept.turn - kept_before == 2  # the actions themselves: the replay still has both
    assert seat_view(kept, watcher).turn == kept.public_turn


def test_a_saved_hand_counts_its_kept_cards_again() -> None:
    kept, _, _ = _after_a_draw(keep=True)
    again = Hand.from_dict(kept.to_dict())
    assert again.kept == kept.kept == 1 and again.public_turn == kept.public_turn
