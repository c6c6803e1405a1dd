"""Shared helpers of the play and watch tests."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from uno_server.engine import events as E
from uno_server.engine.hand import SYSTEM
from uno_server.engine.match import Match
from uno_server.engine.rules import RuleSet
from uno_server.engine.views import redact
from uno_server.gen.uno.v1 import game_pb2
from uno_server.play.cards import label
from uno_server.play.model import SPECTATOR
from uno_server.service import convert

SNAPSHOTS = Path(__file__).parent / "snapshots"
STALL_S = 60.0
"""A wait fails when nothing it watches has moved for this long, never after a fixed total."""
CARD_WORDS = re.compile(
    r"\b(?:wild draw four|wild|(?:red|yellow|green|blue) (?:[0-9]|skip|reverse|draw two))\b"
)


class Stall:
    """A stall detector for a wait: :meth:`check` fails only when ``key()`` (what advances: a
    lobby's text, the events and requests a table has seen) has not changed for ``stall``
    seconds. How long a hand takes depends on the machine's load; that it keeps moving does
    not."""

    def __init__(self, key: Callable[[], object], stall: float = STALL_S) -> None:
        self.key = key
        self.stall = stall
        self.last = key()
        self.deadline = time.monotonic() + stall

    def check(self, what: Callable[[], object] | str = "") -> None:
        """Fail if nothing moved for too long, saying ``what`` (or what ``what()`` returns: a
        screen is rendered only for the failure)."""
        now = self.key()
        if now != self.last:
            self.last, self.deadline = now, time.monotonic() + self.stall
        if time.monotonic() >= self.deadline:
            said = what() if callable(what) else what
            raise AssertionError(f"nothing moved for {self.stall:.0f} s (last: {now!r}) {said}")


def to_proto(event: E.Event, sequence: int, hand_number: int, viewer: int) -> game_pb2.Event | None:
    """An engine event as ``viewer`` receives it from the service."""
    red = redact(event, viewer)
    if red is None:
        return None
    return convert.event_to_proto(red, sequence, hand_number, convert.timestamp(1.0e9))


def random_match(rules: RuleSet, seed: int) -> Iterator[tuple[Match, list[E.Event]]]:
    """Play a match with random choices (catches, late calls and window timeouts included),
    yielding after every action the match and the events that action caused."""
    rng = random.Random(seed)
    match = Match(rules, seed)
    yield match, list(match.log)
    while True:
        hand = match.hand
        while not hand.over:
            pending = hand.pending_seats()
            if hand.window >= 0 and rng.random() < 0.2:
                events = match.apply(SYSTEM, 6)  # the window's time ran out
            else:
                seat = rng.choice([s for s in pending if hand.legal_actions(s)])
                legal = hand.legal_actions(seat)
                # mostly play (draw voluntarily sometimes), so hands stay short
                plays = [a for a in legal if a >= 1000]
                pick = rng.choice(plays) if plays and rng.random() < 0.8 else rng.choice(legal)
                events = match.apply(seat, pick)
            yield match, events
        if match.over:
            return
        before = len(match.log)
        match.next_hand()
        yield match, match.log[before:]


def public_codes(events: Iterable[object]) -> set[int]:
    """Card codes that the events show to everyone (plays, first cards, dealer draws, hands
    revealed at the end)."""
    out: set[int] = set()
    for e in events:
        if isinstance(e, (E.Played, E.FirstCard)):
            out.add(e.card)
        elif isinstance(e, E.DealerDraw):
            out.add(e.card)
        elif isinstance(e, E.HandEnded):
            for h in e.hands:
                out.update(h)
    return out


def card_words(text: str) -> set[str]:
    """Every card named in ``text`` (in the words of :func:`uno_server.play.cards.label`)."""
    return set(CARD_WORDS.findall(text))


def words_of(codes: set[int]) -> set[str]:
    return {label(c) for c in codes}


__all__ = [
    "SPECTATOR",
    "STALL_S",
    "Stall",
    "card_words",
    "public_codes",
    "random_match",
    "to_proto",
    "words_of",
]
