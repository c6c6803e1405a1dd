"""The table model under the house rules that change who plays and what a penalty costs:

* Challenge UNO eliminates seats. Eliminated seats sit every later hand out, so the turn, a
  seven-o rotation of the hands and the order of play pass over them; when a hand ends they are
  shown as eliminated, not as having gone out (the event gives them an empty hand, as it gives
  the winner).
* Stacking with a Wild Draw Four on a Draw Two stack: accepting costs 4 + the stack, a failed
  challenge 6 + the stack, and the texts say so.

The model is fed what a spectator receives from the service (hand seats mapped to match seats)
and compared with the engine after every action."""

from __future__ import annotations

import asyncio
import io

import pytest
from rich.console import Console

from uno_server.engine import events as E
from uno_server.engine.hand import CHOOSE_COLOR, OVER, PHASE_NAMES
from uno_server.engine.rules import RuleSet
from uno_server.gen.uno.v1 import bot_pb2, cards_pb2, game_pb2
from uno_server.play.app import PlayApp
from uno_server.play.human import Decision
from uno_server.play.model import SPECTATOR, Evidence, TableModel
from uno_server.play.render import direction_arrows, seats_table
from uno_server.play.session import PlayOptions
from uno_server.service import convert
from uno_server.web.server import state_json

from .helpers import random_match, to_proto

MATCH_LEVEL = (E.HandScored, E.SeatEliminated, E.MatchEnded, E.DealerDraw, E.DealerChosen)
CHALLENGE_UNO = {
    "challenge_uno": RuleSet(scoring="lowest", challenge_uno=True, target_score=200),
    "challenge_uno_seven_o": RuleSet(
        scoring="lowest", challenge_uno=True, target_score=200, seven_o=True, seats=5
    ),
}


def _text(model: TableModel) -> str:
    console = Console(width=100, file=io.StringIO(), record=True)
    console.print(seats_table(model))
    return console.export_text()


@pytest.mark.parametrize("with_seats", [True, False], ids=["seats-listed", "seat-count-only"])
@pytest.mark.parametrize("name", sorted(CHALLENGE_UNO))
def test_eliminated_seats_are_passed_over(name: str, with_seats: bool) -> None:
    """``with_seats``: HandStarted lists the seats dealt in (as the service sends it); without,
    the model knows the eliminated seats from the SeatEliminated events alone."""
    rules = CHALLENGE_UNO[name]
    checked = eliminated_checked = ends_checked = 0
    for seed in range(1, 7):
        model = TableModel(
            [f"p{i}" for i in range(rules.seats)], decks=rules.decks, stacking=rules.stacking
        )
        seq = 0
        h2m = list(range(rules.seats))  # hand seat i is match seat h2m[i] in the current hand
        for match, events in random_match(rules, seed):
            for e in events:
                if type(e) is E.HandStarted:
                    h2m = list(match.active)
                if not isinstance(e, MATCH_LEVEL):
                    e = convert.remap_event(e, h2m, rules.seats)
                seq += 1
                msg = to_proto(e, seq, match.hand_number, SPECTATOR)
                if msg is None:
                    continue
                if msg.WhichOneof("kind") == "hand_started" and with_seats:
                    msg.hand_started.seats.extend(h2m)
                model.apply(msg)
            hand = match.hand
            ctx = f"{name}, seed {seed}, hand {hand.hand_number}, turn {hand.turn}"
            counts = [0] * rules.seats
            for i, s in enumerate(h2m):
                counts[s] = len(hand.hands[i])
            assert [s.cards for s in model.seats] == counts, ctx
            assert [s.eliminated for s in model.seats] == [
                s in match.eliminated for s in range(rules.seats)
            ] or hand.over, ctx
            if hand.phase == OVER:
                if model.phase == "over" and match.eliminated:
                    text = _text(model)
                    for info in model.seats:
                        if info.seat not in h2m:  # sat this hand out
                            assert info.revealed is None, ctx
                            assert "eliminated" in text, ctx
                    outs = text.count("out!")
                    assert outs == 1, f"{ctx}: {outs} seats shown as gone out\n{text}"
                    web = state_json(model, None, ended=False)
                    for seat in web["seats"]:
                        sat_out = seat["seat"] not in h2m
                        assert seat["eliminated"] == (seat["seat"] in match.eliminated), ctx
                        assert (seat["revealed"] is None) == sat_out, ctx
                    ends_checked += 1
                continue
            assert model.phase == PHASE_NAMES[hand.phase], ctx
            assert model.current == h2m[hand.current], ctx
            assert not model.seats[model.current].eliminated, ctx
            assert model.direction == hand.direction, ctx
            assert model.window == (h2m[hand.window] if hand.window >= 0 else -1), ctx
            assert model.color == (hand.color if hand.phase != CHOOSE_COLOR else -1), ctx
            assert model.draw_pile == len(hand.draw_pile), ctx
            uno = [False] * rules.seats
            for i, s in enumerate(h2m):
                uno[s] = bool(hand.uno_called[i])
            assert [s.uno for s in model.seats] == uno, ctx
            web = state_json(model, None, ended=False)
            assert web["current"] == h2m[hand.current], ctx
            order = direction_arrows(model).split("   ")[0].split(" → ")
            assert [int(s) for s in order] == [
                h2m[(hand.current + hand.direction * k) % len(h2m)] for k in range(len(h2m))
            ], ctx
            checked += 1
            if match.eliminated:
                eliminated_checked += 1
    assert checked > 500 and eliminated_checked > 100 and ends_checked > 3


def _event(**kw: object) -> game_pb2.Event:
    return game_pb2.Event(sequence=0, hand_number=1, **kw)  # type: ignore[arg-type]


def _stacked_wd4(viewer: int, stack: int) -> TableModel:
    """A table where seat ``stack // 2`` played a Wild Draw Four on a Draw Two stack of
    ``stack`` cards (seats 0, 1, ... played the Draw Twos) and the next seat must answer."""
    model = TableModel(["ai-0", "ai-1", "ai-2", "ai-3"], viewer=viewer, stacking=True)
    model.apply(_event(hand_started=game_pb2.HandStartedEvent(hand_number=1, dealer=3)))
    for seat in range(stack // 2):
        model.apply(
            _event(
                played=game_pb2.PlayedEvent(seat=seat, card={"code": 12}, color=cards_pb2.COLOR_RED)
            )  # red +2
        )
    model.apply(
        _event(
            played=game_pb2.PlayedEvent(
                seat=stack // 2, card={"code": 78}, color=cards_pb2.COLOR_YELLOW
            )
        )
    )
    assert model.phase == "challenge" and model.penalty == 4 + stack
    return model


@pytest.mark.parametrize("stack", [0, 2, 4])
def test_a_wild_draw_four_on_a_stack_costs_the_stack_too(stack: int) -> None:
    offender = stack // 2
    challenger = offender + 1
    model = _stacked_wd4(SPECTATOR, stack)
    assert model.current == challenger
    assert model.wd4_stakes() == (4 + stack, 6 + stack)
    line = model.apply(
        _event(
            challenged=game_pb2.ChallengedEvent(
                challenger=challenger, offender=offender, bluff=False
            )
        )
    )
    assert line is not None
    assert line.text.endswith(f"it was honest. ai-{challenger} draws {6 + stack}."), line.text
    model = _stacked_wd4(SPECTATOR, stack)
    line = model.apply(
        _event(
            challenged=game_pb2.ChallengedEvent(
                challenger=challenger, offender=offender, bluff=True
            )
        )
    )
    assert line is not None
    tail = f" ai-{challenger} draws {stack} for the Draw Two stack." if stack else ""
    assert line.text.endswith(f"a bluff! ai-{offender} draws 4.{tail}"), line.text


@pytest.mark.parametrize("stack", [0, 2])
def test_the_challengers_evidence_says_what_it_draws(stack: int) -> None:
    offender = stack // 2
    me = offender + 1
    for bluff, says in (
        (False, f"You draw {6 + stack}."),
        (True, "It draws 4." + (f" You draw the stack's {stack}." if stack else "")),
    ):
        model = _stacked_wd4(me, stack)
        model.apply(
            _event(
                challenge_evidence=game_pb2.ChallengeEvidenceEvent(
                    challenger=me, offender=offender, hand=[{"code": 1}]
                )
            )
        )
        assert isinstance(model.evidence, Evidence) and model.evidence.stack == stack
        model.apply(
            _event(
                challenged=game_pb2.ChallengedEvent(challenger=me, offender=offender, bluff=bluff)
            )
        )
        assert model.evidence.verdict.endswith(says), model.evidence.verdict


@pytest.mark.asyncio
@pytest.mark.parametrize("stack", [0, 2, 4])
async def test_the_persons_prompt_says_what_a_stacked_wild_draw_four_costs(stack: int) -> None:
    """The play screen's prompt on a Wild Draw Four said "a: accept (draw 4)" and "you draw 6"
    whatever the stack under it."""
    me = stack // 2 + 1
    app = PlayApp(PlayOptions(practice=True))
    app.model = _stacked_wd4(me, stack)
    request = bot_pb2.DecisionRequest(prompt=bot_pb2.PROMPT_WILD_DRAW_FOUR, required=True)
    request.view.pending_penalty.offender = me - 1
    request.view.pending_penalty.cards = 4 + stack
    app.decision = Decision(request, asyncio.get_running_loop().create_future())
    text = " ".join(app._moves_text().plain.split())
    assert f"a: accept (draw {4 + stack})" in text, text
    assert f"if not you draw {6 + stack}." in text, text
    assert ("the stack's" in text) == bool(stack), text
