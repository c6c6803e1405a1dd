"""Play hands and matches with in-process bots: the loop behind tests, benchmarks and the
built-in seats. Seats are asked in the order :meth:`Hand.pending_seats` gives them."""

from __future__ import annotations

from collections.abc import Sequence

from .bots import Bot, RandomBot
from .hand import Hand
from .match import Match
from .rules import RuleSet
from .views import seat_view


def play_hand(hand: Hand, bots: Sequence[Bot], *, max_actions: int = 100_000) -> Hand:
    """Play ``hand`` to its end, each seat choosing with ``bots[seat]``.

    Random bots pick straight from the legal-action list (no view is built), which is what a
    random-legal bot needs and keeps the benchmark honest about engine cost."""
    randoms: list[RandomBot | None] = [b if type(b) is RandomBot else None for b in bots]
    for _ in range(max_actions):
        seat = hand._to_act()
        if seat < 0:
            return hand
        rb = randoms[seat]
        if rb is not None:
            hand._step(seat, rb.choose_from(hand.legal_actions(seat)))
        else:
            hand._step(seat, bots[seat].choose(seat_view(hand, seat)))
    raise RuntimeError(f"hand did not end within {max_actions} actions (seed {hand.seed})")


def play_match(rules: RuleSet, seed: int, bots: Sequence[Bot], *, max_hands: int = 10_000) -> Match:
    """Play a whole match; ``bots`` are indexed by match seat."""
    match = Match(rules, seed)
    for _ in range(max_hands):
        hand_bots = [bots[s] for s in match.active]
        hand = match.hand
        while not hand.over:
            seat = hand.pending_seats()[0]
            bot = hand_bots[seat]
            match.apply(seat, bot.choose(seat_view(hand, seat)))
        if match.over:
            return match
        match.next_hand()
    raise RuntimeError(f"match did not end within {max_hands} hands (seed {seed})")
