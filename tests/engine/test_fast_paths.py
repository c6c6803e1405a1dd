"""The engine's fast paths (issue 11) do exactly what the plain code they replace did.

Each optimisation keeps every hand identical; the golden transcripts prove it for a few fixed
hands, these tests for many: the inlined shuffle against ``random.Random.shuffle``, the events
built without namedtuple's ``__new__`` against their fields, the in-process loop against the
public ``pending_seats``/``apply`` loop, and the inlined legal actions against a reference.
"""

from __future__ import annotations

import ast
import random
from pathlib import Path

from uno_server.engine import Hand, RandomBot, RuleSet
from uno_server.engine import actions as A
from uno_server.engine import events as E
from uno_server.engine import hand as hand_module
from uno_server.engine.hand import SYSTEM, TURN, shuffle
from uno_server.engine.simulate import play_hand

RULE_SETS = (
    RuleSet(),
    RuleSet(seats=2),
    RuleSet(seats=7, decks=2, first_flip="redraw"),
    RuleSet(stacking=True, stacking_wd4=True, uno_penalty=4),
    RuleSet(seats=3, seven_o=True, jump_in=True),
    RuleSet(seats=5, draw_until_playable=True, hand_size=3),
)


def test_shuffle_is_random_shuffle_bit_for_bit() -> None:
    for seed in range(200):
        for length in (0, 1, 2, 3, 8, 31, 32, 33, 107, 108, 216, 511, 512, 700):
            want, got = list(range(length)), list(range(length))
            ours, theirs = random.Random(seed), random.Random(seed)
            theirs.shuffle(want)
            shuffle(ours, got)
            assert got == want, (seed, length)
            assert ours.getstate() == theirs.getstate(), (seed, length)


def test_events_built_directly_have_all_their_fields() -> None:
    """``_new(_Kind, (...))`` skips the arity check namedtuple's constructor makes: every such
    call in hand.py must give exactly the fields of its event."""
    # the source file, also when the compiled module is loaded
    tree = ast.parse((Path(E.__file__).parent / "hand.py").read_text())
    calls = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id != "_new":
                continue
            kind, values = node.args
            assert isinstance(kind, ast.Name) and isinstance(values, ast.Tuple)
            cls = getattr(hand_module, kind.id)
            assert cls is getattr(E, kind.id.lstrip("_")), kind.id
            fields = cls._fields
            assert len(values.elts) == len(fields), f"line {node.lineno}: {kind.id}{fields}"
            calls += 1
    assert calls >= 20


def test_shared_events_equal_the_events_they_stand_for() -> None:
    """The memoised events are the values a constructor would build."""
    h = hand_module
    for s in range(10):
        assert type(h._SKIPPED[s]) is E.Skipped and h._SKIPPED[s] == E.Skipped(s)
        assert h._PASSED[s] == E.Passed(s) and h._NO_CATCH[s] == E.NoCatch(s)
        assert h._ACCEPTED[s] == E.Accepted(s) and h._WINDOW_OPENED[s] == E.UnoWindowOpened(s)
        for flag in (False, True):
            assert h._UNO_CALLED[2 * s + flag] == E.UnoCalled(s, flag)
            assert h._WINDOW_CLOSED[2 * s + flag] == E.UnoWindowClosed(s, flag)
        for code in (0, 17, 63, 77, 78):
            assert h._drew_one(s, code) == E.Drew(s, 1, (code,), "draw")
            assert h._drew_one(s, code) is h._drew_one(s, code)
            for color in range(4):
                for uno in (False, True):
                    for jump in (False, True):
                        played = h._played(s, code, color, uno, jump)
                        assert type(played) is E.Played
                        assert played == E.Played(s, code, color, uno, jump)


def reference_turn_actions(hand: Hand, seat: int) -> list[int]:
    """The legal actions of a seat on its turn, the slow and obvious way."""
    top = hand.top
    playable = sorted(
        {c for c in hand.hands[seat] if c >= 64 or c >> 4 == hand.color or c & 15 == top & 15}
    )
    out = [A.DRAW]
    uno = len(hand.hands[seat]) == 2
    for c in playable:
        if hand.rules.seven_o and c & 15 == 7 and c < 64:
            out += [A.swap_id(c, t) for t in range(hand.n) if t != seat]
            continue
        for color in range(4) if c >= 64 else (0,):
            for call in (False, True) if uno else (False,):
                out.append(A.play_id(c, color, call))
    return sorted(out)


def test_play_hand_plays_what_the_public_loop_plays() -> None:
    """``play_hand`` (first seat to act, step without collecting events) deals and plays the
    same hands as ``pending_seats()[0]`` and ``apply``; on the way the inlined legal actions
    equal the reference and ``_to_act`` the first pending seat."""
    for rules in RULE_SETS:
        for seed in range(60):
            fast = play_hand(Hand.deal(rules, seed, seed % rules.seats), bots(rules, seed))
            slow = Hand.deal(rules, seed, seed % rules.seats)
            players = bots(rules, seed)
            log = list(slow.log)
            while not slow.over:
                seat = slow.pending_seats()[0]
                assert slow._to_act() == seat
                legal = slow.legal_actions(seat)
                if slow.phase == TURN and slow.window < 0 and seat == slow.current:
                    assert legal == reference_turn_actions(slow, seat)
                log += slow.apply(seat, players[seat].choose_from(legal))
            assert slow._to_act() == -1
            assert fast.actions == slow.actions and fast.log == slow.log == log
            assert fast.to_dict() == slow.to_dict()


def test_to_act_follows_open_windows() -> None:
    """Random seats answering UNO windows in any order, the service closing some."""
    for seed in range(300):
        rng = random.Random(seed)
        rules = RULE_SETS[seed % len(RULE_SETS)]
        hand = Hand.deal(rules, seed, 0)
        players = bots(rules, seed)
        while not hand.over:
            pending = hand.pending_seats()
            assert hand._to_act() == pending[0]
            if hand.window >= 0 and rng.random() < 0.1:
                hand.apply(SYSTEM, 6)
                continue
            seat = rng.choice(pending) if hand.window >= 0 else pending[0]
            hand.apply(seat, players[seat].choose_from(hand.legal_actions(seat)))


def bots(rules: RuleSet, seed: int) -> list[RandomBot]:
    return [RandomBot(seed * 10 + s) for s in range(rules.seats)]
