"""Issue 9, item 7: a deal always ends. RULINGS.md, "The redraw flip needs a number card".

Under ``first_flip = redraw`` an action or Wild card flipped goes back and another is flipped
until a number card shows; under ``apply`` only a Wild Draw Four goes back. Each loop ends only
if the undealt cards hold a card that stays. The rule set refuses, naming ``rules.hand_size``, a
table whose undealt cards could hold none, and every table it accepts deals even from the worst
deck order.
"""

from __future__ import annotations

import itertools

import pytest

from uno_server.engine import Hand, InvalidRulesError, RuleSet
from uno_server.engine import cards as C
from uno_server.engine.events import FirstCard

from .deadline import deadline


def rule(sentence: str) -> pytest.MarkDecorator:
    return pytest.mark.rule("rulings", sentence)


REDRAW_SENTENCE = (
    "Under first_flip = redraw the cards left after the deal must outnumber the action and Wild "
    "cards (32 per deck), whatever the shuffle"
)


@rule(REDRAW_SENTENCE)
@pytest.mark.parametrize(("seats", "hand_size"), [(9, 11), (10, 8), (6, 13)])
def test_redraw_table_whose_flip_could_never_end_is_refused(seats: int, hand_size: int) -> None:
    """The issue's example (9 seats x 11 cards leave 9 cards, all of which may be action or Wild
    cards: seeds 18500 and 24613 dealt such hands and looped forever), and the smallest refused
    sizes for 10 and 6 seats. (Two decks of 216 cards hold 64 action and Wild cards: even
    10 seats x 15 cards leave 66, so no two-deck table is refused.)"""
    decks = 1
    with pytest.raises(InvalidRulesError) as exc:
        RuleSet(seats=seats, hand_size=hand_size, decks=decks, first_flip="redraw")
    text = str(exc.value)
    assert text.startswith("rules.hand_size:"), text
    dealt = seats * hand_size
    assert f"= {dealt} leave {108 * decks - dealt} undealt" in text, text
    assert f"deal at most {(76 * decks - 1) // seats} cards each" in text, text
    assert exc.value.reason == "INVALID_RULES"


def worst_deck(rules: RuleSet) -> list[int]:
    """The full deck, top card first, with every card the first flip returns (Wild Draw Fours;
    under redraw, every action and Wild card) right after the dealt cards, and the cards that
    stay as deep as they go."""
    deck = C.full_deck(rules.decks)
    dealt = rules.seats * rules.hand_size

    def returned(code: int) -> bool:
        return code == C.WILD_DRAW_FOUR or (rules.first_flip == "redraw" and code & 15 >= C.SKIP)

    bad = [x for x in deck if returned(x)]
    good = [x for x in deck if not returned(x)]
    # the dealt cards take from the cards that stay first, so that the fewest remain undealt
    return good[:dealt] + bad + good[dealt:] if dealt <= len(good) else good + bad


@rule(REDRAW_SENTENCE)
def test_every_accepted_table_deals_even_from_the_worst_deck_order() -> None:
    """Every seats x hand_size x decks x first_flip: the rule set refuses it (naming
    rules.hand_size), or the deal ends from the worst deck order, with a card that stays."""
    accepted = refused = 0
    for seats, hand_size, decks, flip in itertools.product(
        range(2, 11), range(1, 16), (1, 2), ("apply", "redraw")
    ):
        undealt = 108 * decks - seats * hand_size
        # the flip needs a card that stays: one not among the 4 Wild Draw Fours per deck
        # (apply; at least 9 stay undealt anyway), or among the 32 action and Wild cards (redraw)
        doomed = undealt < 9 or (flip == "redraw" and undealt <= 32 * decks)
        try:
            rules = RuleSet(seats=seats, hand_size=hand_size, decks=decks, first_flip=flip)
        except InvalidRulesError as exc:
            assert doomed, f"{seats} x {hand_size}, {decks} deck(s), {flip}: {exc}"
            assert str(exc).startswith("rules.hand_size:"), exc
            refused += 1
            continue
        assert not doomed, f"{seats} x {hand_size}, {decks} deck(s), {flip} was accepted"
        accepted += 1
        deck = worst_deck(rules)
        with deadline(5, f"the deal of {rules}"):
            hand = Hand.deal(rules, seats * 1000 + hand_size, 0, stacked_deck=deck)
        first = [e for e in hand.log if isinstance(e, FirstCard)]
        assert not first[-1].returned and first[-1].card == hand.top
        if flip == "redraw":
            assert hand.top & 15 < C.SKIP
        else:
            assert hand.top != C.WILD_DRAW_FOUR
        # the worst order puts a returned card first; the shuffle after it decides the rest
        assert first[0].returned
    assert (accepted, refused) == (497, 43)
