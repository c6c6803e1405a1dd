"""A match: hands in sequence with the deal passing left, scored until the match is decided.

The match owns its own seeded generator, from which it draws the first-dealer cards and the
first hand's seed; each later hand's seed is a one-way function of the match seed and the hand's
number (:func:`later_hand_seed`), and each hand then owns its generator. ``(seed, rules,
actions)`` replays a match.

Why the later seeds are hashed: every hand's seed is published when the hand ends
(``HandEndedEvent.seed``), and a Mersenne Twister's whole state can be rebuilt from 624 of its
32-bit outputs. Drawn from the match's generator, the seeds of some 300 hands would have let a
seat predict every later deal of a long match; a hash of the (withheld) match seed tells nothing
about the next hand's.
"""

from __future__ import annotations

import dataclasses
import hashlib
import random
from typing import Any

from . import cards as C
from . import events as E
from .errors import HandOverError
from .hand import Hand
from .rules import RuleSet
from .saved import check_match


def later_hand_seed(match_seed: int, hand_number: int) -> int:
    """The seed of hand ``hand_number`` (2 or more) of the match seeded ``match_seed``: the first
    63 bits of SHA-256 over both numbers, so published hand seeds reveal neither the match seed
    nor any other hand's seed."""
    digest = hashlib.sha256(b"uno-arena/hand-seed/%d/%d" % (match_seed, hand_number)).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def choose_first_dealer(
    rng: random.Random, seats: int, decks: int = 1
) -> tuple[int, list[E.Event]]:
    """Every seat draws one card; the highest number deals (action and Wild cards count as zero);
    tied seats draw again among themselves until one is highest."""
    deck = C.full_deck(decks)
    rng.shuffle(deck)
    events: list[E.Event] = []
    contenders = list(range(seats))
    while True:
        if len(deck) < len(contenders):
            deck = C.full_deck(decks)
            rng.shuffle(deck)
        drawn = {}
        for s in contenders:
            c = deck.pop()
            drawn[s] = C.dealer_draw_value(c)
            events.append(E.DealerDraw(s, c))
        best = max(drawn.values())
        contenders = [s for s in contenders if drawn[s] == best]
        if len(contenders) == 1:
            events.append(E.DealerChosen(contenders[0]))
            return contenders[0], events


class Match:
    """Hands in sequence. ``hand`` is the hand in play; call :meth:`next_hand` after it ends.

    Under the Challenge UNO house rule seats drop out; ``active`` lists the match seats still
    playing, and hand seat ``i`` is match seat ``active[i]``. Otherwise the two are the same."""

    def __init__(self, rules: RuleSet, seed: int, *, dealer: int | None = None) -> None:
        self.rules = rules
        self.seed = seed
        self.rng = random.Random(seed)
        self.totals = [0] * rules.seats
        self.active = list(range(rules.seats))
        self.eliminated: list[int] = []
        self.winners: tuple[int, ...] = ()
        self.hand_number = 0
        self.log: list[E.Event] = []
        if dealer is None:
            dealer, events = choose_first_dealer(self.rng, rules.seats, rules.decks)
            self.log.extend(events)
        self.dealer = dealer
        self.hand: Hand = self._deal()
        self._scored = False

    @property
    def over(self) -> bool:
        return bool(self.winners)

    def _deal(self) -> Hand:
        self.hand_number += 1
        if self.hand_number == 1:
            seed = self.rng.getrandbits(63)
        else:
            seed = later_hand_seed(self.seed, self.hand_number)
        rules = self.rules
        if len(self.active) != rules.seats:
            rules = dataclasses.replace(rules, seats=len(self.active))
        hand = Hand.deal(rules, seed, self.active.index(self.dealer), self.hand_number)
        self.log.extend(hand.log)
        return hand

    def apply(self, seat: int, action_id: int) -> list[E.Event]:
        """Apply an action to the hand in play (hand seat numbering); when it ends the hand, the
        returned events include the scoring and, if decided, the end of the match."""
        events = self.hand.apply(seat, action_id)
        self.log.extend(events)
        if self.hand.over and not self._scored:
            extra = self._score()
            self.log.extend(extra)
            events = events + extra
        return events

    def _score(self) -> list[E.Event]:
        self._scored = True
        hand = self.hand
        rules = self.rules
        held = [0] * rules.seats
        for i, s in enumerate(self.active):
            held[s] = hand.points_held(i)
        winner = self.active[hand.winner]
        gained = [0] * rules.seats
        if rules.scoring == "lowest":
            gained = held
        elif rules.partners:
            team = winner % 2
            won = sum(held[s] for s in range(4) if s % 2 != team)
            for s in range(4):
                if s % 2 == team:
                    gained[s] = won
        else:
            gained[winner] = sum(held)
        for s in range(rules.seats):
            self.totals[s] += gained[s]
        out: list[E.Event] = [E.HandScored(self.hand_number, tuple(gained), tuple(self.totals))]
        target = rules.target_score
        if rules.scoring == "single_hand":
            self.winners = (winner,) if not rules.partners else (winner, (winner + 2) % 4)
        elif rules.challenge_uno:
            out_now = [s for s in self.active if self.totals[s] >= target]
            if len(out_now) == len(self.active):
                low = min(self.totals[s] for s in self.active)
                out_now = [s for s in out_now if self.totals[s] != low]
            for s in out_now:
                self.active.remove(s)
                self.eliminated.append(s)
                out.append(E.SeatEliminated(s, self.totals[s]))
            if len(self.active) == 1:
                self.winners = (self.active[0],)
            elif len(self.active) < 2:
                self.winners = tuple(self.active)
        elif rules.scoring == "lowest":
            if max(self.totals) >= target:
                low = min(self.totals)
                self.winners = tuple(s for s in range(rules.seats) if self.totals[s] == low)
        elif self.totals[winner] >= target:
            self.winners = tuple(
                s
                for s in range(rules.seats)
                if self.totals[s] >= target and self.totals[s] == self.totals[winner]
            )
        if self.winners:
            out.append(E.MatchEnded(self.winners, tuple(self.totals)))
        return out

    def next_hand(self) -> Hand:
        """Deal the next hand, the deal passing one seat to the left."""
        if not self.hand.over:
            raise HandOverError("the hand in play has not ended", reason="HAND_IN_PLAY")
        if self.winners:
            raise HandOverError("the match is over", reason="MATCH_OVER")
        s = self.dealer
        for _ in range(self.rules.seats):
            s = (s + 1) % self.rules.seats
            if s in self.active:
                break
        self.dealer = s
        self.hand = self._deal()
        self._scored = False
        return self.hand

    def to_dict(self) -> dict[str, Any]:
        version, internal, gauss = self.rng.getstate()
        return {
            "format": 1,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "rng": [version, list(internal), gauss],
            "totals": list(self.totals),
            "active": list(self.active),
            "eliminated": list(self.eliminated),
            "winners": list(self.winners),
            "hand_number": self.hand_number,
            "dealer": self.dealer,
            "scored": self._scored,
            "hand": self.hand.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Match:
        """Rebuild a match saved by :meth:`to_dict`; raises :class:`StateError` naming the field
        when the snapshot is malformed or inconsistent (see :meth:`Hand.from_dict`)."""
        d, _ = check_match(data)
        m = cls.__new__(cls)
        m.rules = d["rules"]
        m.seed = d["seed"]
        m.rng = random.Random()
        m.rng.setstate(d["rng"])
        m.totals = d["totals"]
        m.active = d["active"]
        m.eliminated = d["eliminated"]
        m.winners = d["winners"]
        m.hand_number = d["hand_number"]
        m.dealer = d["dealer"]
        m._scored = d["scored"]
        m.log = []
        m.hand = Hand.from_dict(data["hand"], where="match.hand")
        return m
