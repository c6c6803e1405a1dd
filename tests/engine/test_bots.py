"""The built-in bots: the heuristic bot clearly beats random bots, and behaves as documented."""

from __future__ import annotations

import math
import random

import pytest

from uno_server.engine import Hand, HeuristicBot, RandomBot, RuleSet, SeatView, cards, seat_view
from uno_server.engine import actions as ids
from uno_server.engine import events as ev
from uno_server.engine.hand import CHOOSE_COLOR, TURN
from uno_server.engine.simulate import play_hand

WIN_RATE_HANDS = 20_000


def wilson(wins: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion (95% for z = 1.96)."""
    p = wins / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return centre - half, centre + half


@pytest.mark.slow
def test_heuristic_beats_three_random_bots() -> None:
    """20,000 four-seat hands under the default rules, the heuristic seat and the dealer rotating
    over the four seats: the heuristic must win clearly more than a quarter of them."""
    rules = RuleSet()
    wins = 0
    for i in range(WIN_RATE_HANDS):
        me = i % 4
        dealer = (i // 4) % 4
        bots: list[RandomBot | HeuristicBot] = [
            HeuristicBot(i) if s == me else RandomBot(i * 4 + s) for s in range(4)
        ]
        hand = play_hand(Hand.deal(rules, 1_000_000 + i, dealer), bots)
        wins += hand.winner == me
    low, high = wilson(wins, WIN_RATE_HANDS)
    rate = wins / WIN_RATE_HANDS
    figure = (
        f"heuristic vs 3 random bots: won {wins} of {WIN_RATE_HANDS} hands = {rate:.4f} "
        f"(95% Wilson CI {low:.4f}-{high:.4f})"
    )
    print(figure)
    assert low > 0.30, figure


def test_wilson_interval() -> None:
    low, high = wilson(50, 100)
    assert low == pytest.approx(0.4038, abs=1e-4)
    assert high == pytest.approx(0.5962, abs=1e-4)


# ---------------------------------------------------------------------------------- states


def view_of(
    held: list[str],
    top: str,
    *,
    color: int | None = None,
    counts: dict[int, int] | None = None,
    seat: int = 0,
    direction: int = 1,
    seats: int = 4,
) -> SeatView:
    """The view of ``seat`` in a made-up position (card conservation does not matter here):
    it holds ``held``, ``top`` is on the discard pile, and it is ``seat``'s turn."""
    hand = Hand.deal(RuleSet(seats=seats), 5, seats - 1)
    hand.hands[seat] = [cards.parse(c) for c in held]
    for s, k in (counts or {}).items():
        hand.hands[s] = hand.hands[s][:k]
    hand.discard = [cards.parse(top)]
    hand.color = cards.parse(top) >> 4 if color is None else color
    hand.current = seat
    hand.direction = direction
    hand.phase = TURN
    return seat_view(hand, seat)


def choice(view: SeatView) -> ids.Action:
    action = HeuristicBot(0).choose(view)
    assert action in view.legal_actions
    return ids.decode(action)


# ---------------------------------------------------------------------------------- behaviour


def test_heuristic_names_the_colour_held_most() -> None:
    act = choice(view_of(["wild", "blue_2", "blue_3", "blue_5", "green_4"], "red_7"))
    assert act.card == cards.WILD
    assert act.color == cards.Color.BLUE
    act = choice(view_of(["wild_draw_four", "yellow_1", "green_2", "yellow_3"], "red_5"))
    assert act.card == cards.WILD_DRAW_FOUR
    assert act.color == cards.Color.YELLOW


def test_heuristic_names_the_colour_held_most_for_a_first_flip_wild() -> None:
    hand = Hand.deal(RuleSet(), 5, 3)
    hand.hands[0] = [cards.parse(c) for c in ["green_1", "green_5", "red_2", "wild", "green_9"]]
    hand.phase = CHOOSE_COLOR
    hand.current = 0
    assert HeuristicBot(0).choose(seat_view(hand, 0)) == ids.choose_color_id(cards.Color.GREEN)


def test_heuristic_always_calls_uno() -> None:
    act = choice(view_of(["red_3", "blue_4"], "red_5"))
    assert act.card == cards.parse("red_3") and act.uno
    act = choice(view_of(["wild", "blue_4"], "red_5"))
    assert act.uno


def test_heuristic_catches_a_missed_uno() -> None:
    hand = Hand.deal(RuleSet(), 5, 3)
    hand.hands[1] = [cards.parse("red_3"), cards.parse("red_4")]
    hand.discard = [cards.parse("red_5")]
    hand.color = cards.Color.RED
    hand.current = 1
    hand.phase = TURN
    hand.apply(1, ids.play_id(cards.parse("red_3")))  # no UNO call
    assert hand.window == 1
    for seat in (0, 2, 3):
        assert HeuristicBot(seat).choose(seat_view(hand, seat)) == ids.catch_id(1)


def test_heuristic_never_bluffs_a_wild_draw_four() -> None:
    act = choice(view_of(["wild_draw_four", "red_3", "blue_4"], "red_5"))
    assert act.card != cards.WILD_DRAW_FOUR
    # the active colour named by a Wild counts too
    act = choice(view_of(["wild_draw_four", "blue_4", "red_3"], "wild", color=cards.Color.RED))
    assert act.card != cards.WILD_DRAW_FOUR


@pytest.mark.parametrize("card", ["red_skip", "red_draw_two"])
@pytest.mark.parametrize("direction", [1, -1])
def test_heuristic_stops_the_next_seat_about_to_go_out(card: str, direction: int) -> None:
    nxt = direction % 4
    held = [card, "red_4", "red_5", "red_9", "blue_9", "green_1"]
    act = choice(view_of(held, "red_7", counts={nxt: 1}, direction=direction))
    assert act.card == cards.parse(card)


def test_heuristic_keeps_skip_when_nobody_is_close() -> None:
    act = choice(view_of(["red_skip", "red_4", "red_9", "blue_9", "green_1"], "red_7"))
    assert act.card != cards.parse("red_skip")


def test_heuristic_in_play_calls_catches_and_never_bluffs() -> None:
    """Over many hands: every play of the heuristic down to one card carries UNO, it catches
    in every UNO window it answers, and each of its Wild Draw Fours is honest."""
    rng = random.Random(7)
    plays_to_one = catches = wd4s = 0
    for i in range(300):
        hand = Hand.deal(RuleSet(seats=rng.choice([2, 3, 4, 6])), 500 + i, 0)
        me = i % hand.n
        bots = [HeuristicBot(i) if s == me else RandomBot(i * 10 + s) for s in range(hand.n)]
        while not hand.over:
            pending = hand.pending_seats()
            seat = rng.choice(pending) if hand.window >= 0 else pending[0]
            view = seat_view(hand, seat)
            action = bots[seat].choose(view)
            if seat == me:
                act = ids.decode(action) if action >= ids.PLAY_BASE else None
                if act is not None and len(view.hand) == 2:
                    assert act.uno
                    plays_to_one += 1
                if view.uno_window >= 0 and view.uno_window != me:
                    assert action == ids.catch_id(view.uno_window)
                    catches += 1
                if act is not None and act.card == cards.WILD_DRAW_FOUR:
                    held = [c for c in view.hand if c < cards.WILD]
                    assert all(c >> 4 != view.active_color for c in held), "bluffed"
                    wd4s += 1
            hand.apply(seat, action)
        assert not any(isinstance(e, ev.UnoWindowOpened) and e.seat == me for e in hand.log)
    assert plays_to_one > 50 and catches > 10 and wd4s > 20


def test_random_bot_returns_only_legal_ids() -> None:
    """Random bots under many rule sets (seven-o aside: see test_properties): always a legal
    id; without voluntary draws they draw only when nothing else is legal."""
    rng = random.Random(3)
    voluntary_draws = 0
    for i in range(300):
        rules = RuleSet(
            seats=rng.randrange(2, 11),
            decks=rng.choice([1, 2]),
            stacking=(stacking := rng.random() < 0.5),
            stacking_wd4=stacking and rng.random() < 0.5,
            jump_in=rng.random() < 0.5,
            draw_until_playable=rng.random() < 0.5,
            first_flip=rng.choice(["apply", "redraw"]),
        )
        hand = Hand.deal(rules, i, rng.randrange(rules.seats))
        bots = [RandomBot(i * 10 + s, voluntary_draws=s == 0) for s in range(rules.seats)]
        while not hand.over:
            pending = hand.pending_seats()
            seat = rng.choice(pending)
            view = seat_view(hand, seat)
            action = bots[seat].choose(view)
            assert action in view.legal_actions
            if action == ids.DRAW and len(view.legal_actions) > 1:
                assert seat == 0, "a random bot drew while holding a playable card"
                voluntary_draws += 1
            hand.apply(seat, action)
    assert voluntary_draws > 100
