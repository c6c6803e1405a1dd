"""The scripted hand the play-screen test drives: one person (seat 0) against three practice AIs
in their deterministic style, on a fixed seed.

:class:`HumanScript` is what the test's "person" does at each request; :func:`simulate` plays
the same hand offline with the engine alone, exactly as the server will (the AIs' choices come
from the same :class:`~uno_server.play.practice.Policy`), and reports which scenarios happened.
``python -m tests.play.scenario`` searches for a seed on which every scenario happens in one hand.
"""

from __future__ import annotations

import sys

from uno_server.engine import actions as A
from uno_server.engine import cards as C
from uno_server.engine import events as E
from uno_server.engine.hand import SYSTEM, most_held_color
from uno_server.engine.match import Match
from uno_server.engine.rules import RuleSet
from uno_server.engine.views import SeatView, seat_view
from uno_server.play.practice import SCRIPTED, Policy

HUMAN = 0
AI_SEED = 5
RULES = RuleSet(scoring="single_hand", uno_window_ms=5000)
SCENARIOS = ("play", "draw_then_play", "wild", "uno", "catch", "bluff_caught", "honest")
SEED = 363  # found by `python -m tests.play.scenario`; the test checks it still covers all
FORGETFUL = ("late_uno", "let_go")
"""What the forgetful person (forgets UNO, lets a missed UNO go) shows on FORGETFUL_SEED."""
FORGETFUL_SEED = 183  # likewise (`python -m tests.play.scenario`)


class HumanScript:
    """The person's moves: draw at the first turns until a drawn card can be played, then play
    (number cards first, a Wild before a Wild Draw Four), always with the UNO call, catch every
    missed UNO, challenge every Wild Draw Four."""

    def __init__(self, *, forgetful: bool = False) -> None:
        self.drew_and_played = False
        self.forgetful = forgetful
        """Plays its second-last card without UNO (then calls it late) and lets others go."""

    def choose(self, view: SeatView) -> int | None:
        legal = view.legal_actions
        if view.uno_window >= 0:
            if view.uno_window == view.seat:
                return A.CALL_UNO
            if self.forgetful:
                return A.NO_CATCH if A.NO_CATCH in legal else None
            catch = A.CATCH_BASE + view.uno_window
            return catch if catch in legal else None
        if view.phase == "challenge":
            return A.CHALLENGE
        if view.phase == "choose_color":
            return A.CHOOSE_COLOR_BASE + most_held_color(view.hand)
        plays = [a for a in legal if A.PLAY_BASE <= a < A.SWAP_BASE]
        if view.phase == "drawn":
            if not plays:
                return A.PASS
            self.drew_and_played = True
            return self._best(view, plays)
        if not self.drew_and_played and len(view.hand) > 3:
            return A.DRAW
        return self._best(view, plays) if plays else A.DRAW

    def _best(self, view: SeatView, plays: list[int]) -> int:
        uno = len(view.hand) == 2 and not self.forgetful

        def order(a: int) -> tuple[int, int]:
            card = A.decode(a).card
            return (2 if card == C.WILD_DRAW_FOUR else 1 if card == C.WILD else 0, a)

        card = A.decode(min(plays, key=order)).card
        rest = list(view.hand)
        rest.remove(card)
        color = most_held_color(rest) if card >= C.WILD else 0
        return A.play_id(card, color, uno)


def simulate(
    seed: int, *, forgetful: bool = False, max_actions: int = 2000
) -> tuple[set[str], Match]:
    """Play the scripted hand with the engine; return the scenarios it showed. In a UNO window
    only the person acts (the AIs stay silent), so a window the person does not close closes
    on the server's timer: the system's action 6, whatever the window's length."""
    match = Match(RULES, seed, dealer=0)
    hand = match.hand
    human = HumanScript(forgetful=forgetful)
    ai = {s: Policy(AI_SEED * 16 + s, SCRIPTED) for s in range(1, 4)}
    seen: set[str] = set()
    for _ in range(max_actions):
        if hand.over:
            break
        if hand.window >= 0:
            act = human.choose(seat_view(hand, HUMAN)) if hand.legal_actions(HUMAN) else None
            events = match.apply(HUMAN, act) if act is not None else match.apply(SYSTEM, 6)
        else:
            s = hand.current
            view = seat_view(hand, s)
            choice = human.choose(view) if s == HUMAN else ai[s].required(view)
            assert choice is not None
            drawn = hand.phase == 1 and s == HUMAN
            events = match.apply(s, choice)
            for e in events:
                if isinstance(e, E.Played) and e.seat == HUMAN:
                    seen.add("draw_then_play" if drawn else "play")
                    if e.card == C.WILD:
                        seen.add("wild")
                    if e.uno:
                        seen.add("uno")
        for e in events:
            if isinstance(e, E.Caught) and e.catcher == HUMAN:
                seen.add("catch")
            if isinstance(e, E.UnoCalled) and e.seat == HUMAN and e.late:
                seen.add("late_uno")
            if isinstance(e, E.NoCatch) and e.seat == HUMAN:
                seen.add("let_go")
            if isinstance(e, E.Challenged) and e.challenger == HUMAN:
                seen.add("bluff_caught" if e.bluff else "honest")
    return seen, match


def find_seed(start: int = 0, stop: int = 200_000, *, forgetful: bool = False) -> int:
    want = set(FORGETFUL if forgetful else SCENARIOS)
    for seed in range(start, stop):
        seen, match = simulate(seed, forgetful=forgetful)
        if seen >= want and match.hand.over and match.hand.turn < 250:
            return seed
    raise SystemExit("no seed found")


if __name__ == "__main__":
    start = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    print(f"SEED = {find_seed(start)}")
    print(f"FORGETFUL_SEED = {find_seed(start, forgetful=True)}")
