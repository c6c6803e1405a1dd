"""The table model, fed only the events a viewer receives, agrees with the engine's truth after
every action, under the classic rules and every house rule the service runs."""

from __future__ import annotations

import pytest

from uno_server.engine.hand import CHOOSE_COLOR, PHASE_NAMES
from uno_server.engine.rules import RuleSet
from uno_server.play.model import SPECTATOR, TableModel, unique_names

from .helpers import random_match, to_proto

RULES = {
    "classic": RuleSet(),
    "stacking": RuleSet(stacking=True, stacking_wd4=True),
    "draw_until_playable": RuleSet(draw_until_playable=True),
    "redraw_first": RuleSet(first_flip="redraw"),
    "two_seats": RuleSet(seats=2),
    "seven_o": RuleSet(seven_o=True),
    "jump_in": RuleSet(jump_in=True),
    "eight_seats": RuleSet(seats=8, decks=2, uno_penalty=4),
}


@pytest.mark.parametrize("name", sorted(RULES))
@pytest.mark.parametrize("viewer", [SPECTATOR, 0])
def test_model_follows_the_engine(name: str, viewer: int) -> None:
    rules = RULES[name]
    checked = 0
    for seed in range(6):
        model = TableModel([f"p{i}" for i in range(rules.seats)], viewer=viewer, decks=rules.decks)
        model.stacking = rules.stacking
        seq = 0
        for match, events in random_match(
            rules.__class__(**{**rules.to_dict(), "target_score": 150}), seed
        ):
            for e in events:
                seq += 1
                msg = to_proto(e, seq, match.hand_number, viewer)
                if msg is not None:
                    model.apply(msg)
            hand = match.hand
            assert model.hand_number == hand.hand_number
            assert [s.cards for s in model.seats] == [len(h) for h in hand.hands]
            if hand.over:
                assert model.phase == "over"
                assert model.winner == hand.winner
                for seat, held in zip(model.seats, hand.hands, strict=True):
                    assert sorted(seat.revealed or ()) == sorted(held)
                continue
            ctx = f"rules {name}, seed {seed}, hand {hand.hand_number}, turn {hand.turn}"
            assert model.phase == PHASE_NAMES[hand.phase], ctx
            assert model.top == hand.discard[-1], ctx
            assert model.color == (hand.color if hand.phase != CHOOSE_COLOR else -1), ctx
            assert model.direction == hand.direction, ctx
            assert model.current == hand.current, ctx
            assert model.window == hand.window, ctx
            assert model.penalty == hand.penalty_owed, ctx
            assert model.discard == len(hand.discard), ctx
            assert model.draw_pile == len(hand.draw_pile), ctx
            assert [s.uno for s in model.seats] == hand.uno_called, ctx
            assert all(s.revealed is None for s in model.seats), ctx
            if viewer >= 0 and not rules.seven_o:
                assert model.hand == sorted(hand.hands[viewer]), ctx
                drawn = hand.drawn if hand.current == viewer else -1
                assert model.drawn == drawn, ctx
            if viewer == SPECTATOR:
                assert model.hand == [] and model.drawn == -1 and model.evidence is None
            checked += 1
    assert checked > 500  # the random matches really played


def test_duplicate_names_get_their_seat() -> None:
    assert unique_names(["you", "heuristic", "random", "heuristic"]) == [
        "you",
        "heuristic #1",
        "random",
        "heuristic #3",
    ]
