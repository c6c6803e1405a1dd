"""Shared builders for the rules tests: card names, stacked decks, mid-hand positions, actions.

Cards are written by their stable names (``"red_7"``, ``"blue_skip"``, ``"wild"``,
``"wild_draw_four"``), colours by name or number.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Mapping, MutableSequence, Sequence
from typing import Any, TypeVar

from uno_server.engine import actions as A
from uno_server.engine import cards as C
from uno_server.engine import events as E
from uno_server.engine.hand import SYSTEM, TURN, Hand
from uno_server.engine.rules import RuleSet

COLOR: dict[str, int] = {"red": 0, "yellow": 1, "green": 2, "blue": 3}
RED, YELLOW, GREEN, BLUE = 0, 1, 2, 3

EventT = TypeVar("EventT")


def c(name: str) -> int:
    """The code of one card given by name."""
    return C.parse(name)


def cs(*names: str) -> list[int]:
    """Codes of several cards given by name."""
    return [C.parse(n) for n in names]


def col(color: int | str) -> int:
    return COLOR[color] if isinstance(color, str) else color


def _take(pool: Counter[int], code: int) -> None:
    if pool[code] <= 0:
        raise ValueError(f"the deck has no more {C.name(code)}")
    pool[code] -= 1


def _remaining(pool: Counter[int]) -> list[int]:
    return sorted(pool.elements())


# ---------------------------------------------------------------------------- stacked decks


def stacked_deck(
    hands: Mapping[int, Sequence[str]],
    *,
    first: Sequence[str] = ("green_4",),
    draws: Sequence[str] = (),
    seats: int = 4,
    dealer: int = 0,
    hand_size: int = 7,
    decks: int = 1,
    seed: int = 0,
) -> list[int]:
    """The full deck, top card first, as :meth:`Hand.deal` expects it.

    ``hands[seat]`` lists the cards that seat must be dealt (at most ``hand_size``; any shortfall
    is filled from the rest of the deck); the deal goes one card at a time to each seat starting at
    the dealer's left. ``first`` lists the card(s) flipped after the deal (more than one only when
    the first is returned, e.g. under ``first_flip="redraw"``). ``draws`` are the next cards off the
    draw pile, in order; the rest of the deck follows in a seeded shuffled order."""
    pool: Counter[int] = Counter(C.full_deck(decks))
    wanted = {s: [C.parse(x) for x in hands.get(s, ())] for s in range(seats)}
    for s, codes in wanted.items():
        if len(codes) > hand_size:
            raise ValueError(f"seat {s} is given more than {hand_size} cards")
        for code in codes:
            _take(pool, code)
    head = [C.parse(x) for x in (*first, *draws)]
    for code in head:
        _take(pool, code)
    rest = _remaining(pool)
    random.Random(seed).shuffle(rest)
    fill = iter(rest)
    dealt: list[int] = []
    for r in range(hand_size):
        for k in range(1, seats + 1):
            s = (dealer + k) % seats
            dealt.append(wanted[s][r] if r < len(wanted[s]) else next(fill))
    tail = list(fill)
    return dealt + head + tail


def deal(
    hands: Mapping[int, Sequence[str]],
    *,
    first: Sequence[str] = ("green_4",),
    draws: Sequence[str] = (),
    rules: RuleSet | None = None,
    dealer: int = 0,
    seed: int = 0,
) -> Hand:
    """Deal a hand from a stacked deck (see :func:`stacked_deck`)."""
    rules = rules or RuleSet()
    deck = stacked_deck(
        hands,
        first=first,
        draws=draws,
        seats=rules.seats,
        dealer=dealer,
        hand_size=rules.hand_size,
        decks=rules.decks,
        seed=seed,
    )
    return Hand.deal(rules, seed, dealer, stacked_deck=deck)


# ---------------------------------------------------------------------------- positions


def position(
    hands: Sequence[Sequence[str] | int],
    top: str,
    *,
    color: int | str | None = None,
    current: int = 0,
    direction: int = 1,
    draws: Sequence[str] = (),
    pile: Sequence[str] | None = None,
    under: Sequence[str] = (),
    rules: RuleSet | None = None,
    dealer: int | None = None,
    seed: int = 0,
) -> Hand:
    """A hand in the middle of play: ``current`` is to play (phase TURN).

    ``hands[s]`` are the cards of seat ``s``, or a number of cards to take from the rest of the
    deck (seeded) when they do not matter; ``top`` is the top discard with ``under`` beneath it
    (bottom first); ``color`` is the active colour (default: the top card's colour). The draw pile
    is ``draws`` (next draw first) on top of the rest of the deck, or exactly ``pile`` (next draw
    first) when given."""
    rules = rules or RuleSet(seats=len(hands))
    if rules.seats != len(hands):
        raise ValueError("one list of cards per seat")
    if dealer is None:
        dealer = (current - direction) % rules.seats
    h = Hand(rules, seed, dealer)
    pool: Counter[int] = Counter(C.full_deck(rules.decks))
    h.hands = [[] if isinstance(hs, int) else [C.parse(x) for x in hs] for hs in hands]
    h.discard = [C.parse(x) for x in (*under, top)]
    nxt = [C.parse(x) for x in draws]
    for code in [*(x for hs in h.hands for x in hs), *h.discard, *nxt]:
        _take(pool, code)
    rest = _remaining(pool)
    random.Random(seed).shuffle(rest)
    for s, hs in enumerate(hands):
        if isinstance(hs, int):
            h.hands[s] = [rest.pop() for _ in range(hs)]
    if pile is not None:
        h.draw_pile = [C.parse(x) for x in reversed(pile)]
    else:
        h.draw_pile = rest + list(reversed(nxt))
    top_code = h.discard[-1]
    if color is None:
        if C.is_wild(top_code):
            raise ValueError("give the active colour when the top card is a Wild")
        h.color = C.color_of(top_code)
    else:
        h.color = col(color)
    h.current = current
    h.direction = direction
    h.phase = TURN
    return h


# ---------------------------------------------------------------------------- actions


def play_action(card: str, color: int | str = 0, uno: bool = False) -> int:
    return A.play_id(C.parse(card), col(color), uno)


def play(hand: Hand, seat: int, card: str, color: int | str = 0, uno: bool = False) -> list[Any]:
    """Play ``card`` for ``seat`` (``color`` is the colour named for a Wild)."""
    return hand.apply(seat, play_action(card, color, uno))


def draw(hand: Hand, seat: int) -> list[Any]:
    return hand.apply(seat, A.DRAW)


def pass_(hand: Hand, seat: int) -> list[Any]:
    return hand.apply(seat, A.PASS)


def close_window_unanswered(hand: Hand) -> list[Any]:
    """Every seat other than the offender declines to catch; the window closes."""
    out: list[Any] = []
    w = hand.window
    assert w >= 0, "no UNO window is open"
    for s in list(hand.pending_seats()):
        if s != w and hand.window >= 0:
            out += hand.apply(s, A.NO_CATCH)
    return out


def system_close(hand: Hand) -> list[Any]:
    from uno_server.engine.hand import CLOSE_WINDOW

    return hand.apply(SYSTEM, CLOSE_WINDOW)


def of_type(events: Sequence[Any], kind: type[EventT]) -> list[EventT]:
    """The events of one type, in order."""
    return [e for e in events if type(e) is kind]


def one(events: Sequence[Any], kind: type[EventT]) -> EventT:
    found = of_type(events, kind)
    assert len(found) == 1, f"expected one {kind.__name__}, got {found}"
    return found[0]


def names(codes: Sequence[int]) -> list[str]:
    return [C.name(x) for x in codes]


def held(hand: Hand, seat: int) -> list[str]:
    """Names of the cards ``seat`` holds, sorted."""
    return sorted(C.name(x) for x in hand.hands[seat])


def legal_plays(hand: Hand, seat: int) -> set[str]:
    """Names of the cards ``seat`` may play now (any colour naming, with or without UNO)."""
    out = set()
    for a in hand.legal_actions(seat):
        act = A.decode(a)
        if act.kind is A.Kind.PLAY:
            out.add(C.name(act.card))
    return out


def drew(events: Sequence[Any], seat: int) -> list[str]:
    """Names of the cards ``seat`` drew in ``events``."""
    return [C.name(x) for e in of_type(events, E.Drew) if e.seat == seat for x in e.cards]


def deck_total(hand: Hand) -> int:
    return len(hand.draw_pile) + len(hand.discard) + sum(len(x) for x in hand.hands)


class StackedRandom(random.Random):
    """A generator whose successive ``shuffle`` calls lay out chosen cards so that they are popped
    (drawn) in the listed order, for :func:`uno_server.engine.match.choose_first_dealer`."""

    def __init__(self, orders: Sequence[Sequence[int]]) -> None:
        super().__init__(0)
        self._orders = [list(o) for o in orders]

    def shuffle(self, x: MutableSequence[Any]) -> None:
        if not self._orders:
            super().shuffle(x)
            return
        want = self._orders.pop(0)
        rest = Counter(x)
        rest.subtract(Counter(want))
        x[:] = sorted(rest.elements()) + list(reversed(want))
