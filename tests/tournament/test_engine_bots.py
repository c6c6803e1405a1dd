"""The engine-backed SDK bot of the tournament (uno_tournament.bots): the protocol view converts
back to exactly the engine's own SeatView, so the bot over the wire plays as the built-in one."""

from __future__ import annotations

import subprocess
import sys

import pytest

from uno_bot import MatchState
from uno_bot.proto import cards_pb2, game_pb2
from uno_server.engine import HeuristicBot, RuleSet, seat_view
from uno_server.engine import cards as C
from uno_server.engine.views import SeatView as EngineSeatView
from uno_tournament.bots.convert import to_engine_view, view_to_engine
from uno_tournament.bots.engine_heuristic import EngineHeuristicBot

from .wire import card_msg, positions, request


@pytest.mark.parametrize(
    "rules",
    [
        RuleSet(),
        RuleSet(seats=2),
        RuleSet(seats=5, stacking=True, stacking_wd4=True, jump_in=True, seven_o=True),
        RuleSet(seats=3, draw_until_playable=True, first_flip="redraw"),
    ],
    ids=["default", "two", "house", "redraw"],
)
def test_convert_round_trip_matches_engine_views(rules: RuleSet) -> None:
    phases: set[str] = set()
    windows = drawn = 0
    for seed in range(3):
        for hand, seat in positions(rules, seed, 600):
            expected = seat_view(hand, seat)
            got = to_engine_view(request(hand, seat))
            assert got == expected, (seed, hand.turn, seat)
            phases.add(expected.phase)
            windows += expected.uno_window >= 0
            drawn += expected.drawn_card >= 0
    assert {"turn", "drawn", "over"} <= phases
    assert drawn > 0 and windows > 0


def test_convert_fields_by_hand() -> None:
    view = game_pb2.SeatView(
        seat=1,
        hand=[card_msg(C.WILD), card_msg(7), card_msg(58)],
        active_color=cards_pb2.COLOR_BLUE,
        direction=game_pb2.DIRECTION_DECREASING,
        seats=[game_pb2.SeatState(seat=s, card_count=n) for s, n in enumerate((5, 3, 1))],
        phase=game_pb2.PHASE_DRAWN,
        dealer=2,
        hand_number=3,
        turn=17,
    )
    view.top_card.CopyFrom(card_msg(52))
    view.current_seat = 1
    view.drawn_card.CopyFrom(card_msg(58))
    view.uno_window.offender = 2
    got = view_to_engine(view, [1, 1580])
    assert got == EngineSeatView(
        seat=1,
        hand_number=3,
        turn=17,
        phase="drawn",
        hand=(7, 58, 77),
        top_card=52,
        active_color=3,
        direction=-1,
        dealer=2,
        current=1,
        card_counts=(5, 3, 1),
        uno_called=(False, False, False),
        draw_pile=0,
        discard_pile=0,
        uno_window=2,
        drawn_card=58,
        legal_actions=(1, 1580),
        over=False,
        winner=-1,
    )
    # unset optional messages and fields map to the engine's -1
    got = view_to_engine(game_pb2.SeatView(phase=game_pb2.PHASE_CHOOSE_COLOR), [20, 21, 22, 23])
    assert (got.top_card, got.active_color, got.current, got.uno_window, got.drawn_card) == (
        (-1,) * 5
    )
    assert got.winner == -1 and got.direction == 1 and got.phase == "choose_color"


def test_engine_heuristic_bot_plays_as_the_engine() -> None:
    checked = 0
    for seed in range(4):
        for hand, seat in positions(RuleSet(), seed, 150):
            legal = hand.legal_actions(seat)
            if not legal:
                continue
            st = MatchState(match_id=f"m{seed}", seat=seat)
            got = EngineHeuristicBot().decide(request(hand, seat, match_id=f"m{seed}"), st)
            assert got == HeuristicBot().choose(seat_view(hand, seat))
            checked += 1
    assert checked > 100


@pytest.mark.parametrize("module", ["engine_heuristic", "graded"])
def test_bad_randomness_is_one_line_and_exit_2(module: str) -> None:
    res = subprocess.run(
        [
            sys.executable,
            "-m",
            f"uno_tournament.bots.{module}",
            "--randomness",
            "2",
            "--token",
            "t",
            "--addr",
            "127.0.0.1:1",
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == ["uno-bot: --randomness must be within 0..1, got 2.0"]
