"""One hand of UNO: the deal, every turn, and the end. Pure: no I/O, no clock, no global random.

The hand owns one seeded generator (``random.Random(seed)``), so ``(seed, rules, dealer, actions)``
replays it exactly. :meth:`Hand.apply` is the only transition: it takes a seat and an action id and
returns the events the action caused.

Who may act:
- outside response windows exactly one seat (``current``) acts, in one of the phases
  ``TURN`` (play or draw), ``DRAWN`` (play the card just drawn or pass), ``CHALLENGE`` (accept or
  challenge a Wild Draw Four), ``STACK`` (stacking house rule: add a Draw Two or accept) or
  ``CHOOSE_COLOR`` (name the colour of a Wild flipped as the first card);
- while a UNO window is open (a seat went down to one card without calling), every other seat
  may catch it or decline, and the offender may call late. The seat due next cannot begin its
  turn until the window closes: once every other seat has answered, on a catch or a late call, or
  when the service closes it after ``uno_window_ms`` with the system action ``CLOSE_WINDOW``;
- under the jump-in house rule, any seat holding the exact top card may play it out of turn.

One module, about 1,000 lines, on purpose: a hand is one state (as python-chess's ``Board`` and
pokerkit's ``State`` are), and every rule reads and writes the same few fields; the cards,
actions, events, rule set and views already live in modules of their own. The file is also one
mypyc compilation unit, so its hot paths call each other without Python's call overhead.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Sequence
from typing import Any, Final

from . import actions as A
from . import cards as C
from . import events as E
from .errors import (
    HandOverError,
    IllegalActionError,
    MalformedActionError,
    WrongSeatError,
)
from .rules import RuleSet
from .saved import check_hand

TURN: Final = 0
DRAWN: Final = 1
CHALLENGE: Final = 2
STACK: Final = 3
CHOOSE_COLOR: Final = 4
OVER: Final = 5
PHASE_NAMES: Final = ("turn", "drawn", "challenge", "stack", "choose_color", "over")

SYSTEM: Final = -1
"""Pseudo-seat of the service's own actions (closing a UNO window on its timer)."""
CLOSE_WINDOW: Final = 6
"""Action id the system uses to close a UNO window whose time ran out."""

_new: Final = tuple.__new__
"""Builds an event (a NamedTuple) without the Python-level ``__new__`` that namedtuple defines:
the same object, made in a third of the time, which matters on the path of every action."""
# the event classes as native constants: ``E.Played`` would look the name up in the events
# module's dictionary on every action
_Accepted: Final = E.Accepted
_Caught: Final = E.Caught
_ChallengeEvidence: Final = E.ChallengeEvidence
_Challenged: Final = E.Challenged
_ColorChosen: Final = E.ColorChosen
_Drew: Final = E.Drew
_FirstCard: Final = E.FirstCard
_HandEnded: Final = E.HandEnded
_HandStarted: Final = E.HandStarted
_HandsRotated: Final = E.HandsRotated
_HandsSwapped: Final = E.HandsSwapped
_NoCatch: Final = E.NoCatch
_Passed: Final = E.Passed
_Played: Final = E.Played
_Reshuffled: Final = E.Reshuffled
_Reversed: Final = E.Reversed
_Skipped: Final = E.Skipped
_UnoCalled: Final = E.UnoCalled
_UnoWindowClosed: Final = E.UnoWindowClosed
_UnoWindowOpened: Final = E.UnoWindowOpened

# Events are immutable, so the engine hands out one shared object for each distinct value of the
# common ones instead of building it again on every action (memoised lazily for plays and draws,
# built at import for the per-seat ones). Equal values, fewer allocations; nothing can tell the
# difference but ``is``. (Not the (seat, action) records: compiled, those are native tuples.)
_MAX_SEATS: Final = 10
_SKIPPED: Final = tuple(_new(_Skipped, (s,)) for s in range(_MAX_SEATS))
_PASSED: Final = tuple(_new(_Passed, (s,)) for s in range(_MAX_SEATS))
_NO_CATCH: Final = tuple(_new(_NoCatch, (s,)) for s in range(_MAX_SEATS))
_ACCEPTED: Final = tuple(_new(_Accepted, (s,)) for s in range(_MAX_SEATS))
_WINDOW_OPENED: Final = tuple(_new(_UnoWindowOpened, (s,)) for s in range(_MAX_SEATS))
_WINDOW_CLOSED: Final = tuple(
    _new(_UnoWindowClosed, (s, caught)) for s in range(_MAX_SEATS) for caught in (False, True)
)
_UNO_CALLED: Final = tuple(
    _new(_UnoCalled, (s, late)) for s in range(_MAX_SEATS) for late in (False, True)
)
_PLAYED_MEMO: Final[list[E.Played | None]] = [None] * (_MAX_SEATS * 80 * 4 * 4)
_DREW_MEMO: Final[list[E.Drew | None]] = [None] * (_MAX_SEATS * 80)


def _played(seat: int, code: int, color: int, uno: bool, out_of_turn: bool) -> E.Played:
    """``Played(seat, code, color, uno, out_of_turn)``, shared."""
    i = ((seat * 80 + code) * 4 + color) * 4 + (2 if uno else 0) + (1 if out_of_turn else 0)
    e = _PLAYED_MEMO[i]
    if e is None:
        e = _new(_Played, (seat, code, color, uno, out_of_turn))
        _PLAYED_MEMO[i] = e
    return e


def _drew_one(seat: int, code: int) -> E.Drew:
    """``Drew(seat, 1, (code,), "draw")``, shared: the draw of a turn."""
    i = seat * 80 + code
    e = _DREW_MEMO[i]
    if e is None:
        e = _new(_Drew, (seat, 1, (code,), "draw"))
        _DREW_MEMO[i] = e
    return e


_WILD: Final = C.WILD
_WILD_IDS: Final = tuple(A.PLAY_BASE + C.WILD * 10 + 2 * color for color in range(4))
_WD4_IDS: Final = tuple(A.PLAY_BASE + C.WILD_DRAW_FOUR * 10 + 2 * color for color in range(4))
_WD4: Final = C.WILD_DRAW_FOUR


class Hand:
    """A hand in play. Create with :meth:`deal`; restore with :meth:`from_dict`."""

    __slots__ = (
        "_answered",
        "_cache_legal",
        "_cache_seat",
        "_cache_turn",
        "_stack",
        "_wd4_bluff",
        "_wd4_evidence",
        "_wd4_offender",
        "actions",
        "color",
        "current",
        "dealer",
        "direction",
        "discard",
        "draw_pile",
        "drawn",
        "hand_number",
        "hands",
        "kept",
        "log",
        "n",
        "phase",
        "rng",
        "rules",
        "seed",
        "turn",
        "uno_called",
        "window",
        "winner",
    )

    @property
    def public_turn(self) -> int:
        """The moves of this hand every client may count: :attr:`turn` without the passes that
        kept a drawn card. Drawing a card that cannot be played ends the turn by itself (one
        action); keeping one that can is a second action, and the public events of the two are
        the same (drew, passed), so a counter with that pass in it showed a bot that another
        seat had kept a playable card (an examination, 2026-12-05)."""
        return self.turn - self.kept

    def __init__(self, rules: RuleSet, seed: int, dealer: int, hand_number: int = 1) -> None:
        if not 0 <= dealer < rules.seats:
            raise ValueError(f"dealer {dealer} is not a seat of a {rules.seats}-seat table")
        self.rules = rules
        self.seed = seed
        self.dealer = dealer
        self.hand_number = hand_number
        self.n = rules.seats
        self.rng = random.Random(seed)
        self.hands: list[list[int]] = [[] for _ in range(self.n)]
        self.draw_pile: list[int] = []
        self.discard: list[int] = []
        self.color = -1
        self.direction = 1
        self.current = (dealer + 1) % self.n
        self.phase = TURN
        self.drawn = -1
        self.uno_called = [False] * self.n
        self.window = -1
        self._answered = 0
        self._wd4_offender = -1
        self._wd4_bluff = False
        self._wd4_evidence: tuple[int, ...] = ()
        self._stack = 0
        self.turn = 0
        self.kept = 0
        self.winner = -1
        self.log: list[E.Event] = []
        self.actions: list[tuple[int, int]] = []
        self._cache_seat = -2
        self._cache_turn = -1
        self._cache_legal: list[int] = []

    # ------------------------------------------------------------------ setup

    @classmethod
    def deal(
        cls,
        rules: RuleSet,
        seed: int,
        dealer: int,
        hand_number: int = 1,
        *,
        stacked_deck: Sequence[int] | None = None,
    ) -> Hand:
        """Shuffle, deal ``hand_size`` cards to each seat one at a time from the dealer's left, and
        flip the first card. ``stacked_deck`` (top card first) replaces the shuffle, for tests
        that replay a known deal; it must be a permutation of the full deck."""
        h = cls(rules, seed, dealer, hand_number)
        deck = list(_DECKS[rules.decks])
        if stacked_deck is None:
            shuffle(h.rng, deck)
            deck.reverse()
        else:
            if sorted(stacked_deck) != sorted(deck):
                raise ValueError("stacked_deck must hold exactly the cards of the full deck")
            deck = list(reversed(stacked_deck))
        # draw_pile's top is its last element
        h.draw_pile = deck
        n = h.n
        log = h.log
        log.append(_new(_HandStarted, (hand_number, dealer, n, seed)))
        for _ in range(rules.hand_size):
            for k in range(1, n + 1):
                h.hands[(dealer + k) % n].append(deck.pop())
        for s in range(n):
            log.append(E.Dealt(s, tuple(h.hands[s])))
        h._flip_first()
        return h

    def _flip_first(self) -> None:
        rules = self.rules
        n = self.n
        left = (self.dealer + 1) % n
        while True:
            top = self.draw_pile.pop()
            rank = top & 15
            if rank == C.WD4_RANK or (rules.first_flip == "redraw" and rank >= C.SKIP):
                self.log.append(_new(_FirstCard, (top, True)))
                self.draw_pile.append(top)
                shuffle(self.rng, self.draw_pile)
                continue
            break
        self.log.append(_new(_FirstCard, (top, False)))
        self.discard.append(top)
        self.current = left
        if rank == C.WILD_RANK:
            self.phase = CHOOSE_COLOR
            return
        self.color = top >> 4
        if rank == C.SKIP or (rank == C.REVERSE and n == 2):
            self.log.append(_SKIPPED[left])
            self.current = (left + 1) % n
        elif rank == C.REVERSE:
            self.direction = -1
            self.log.append(_new(_Reversed, (-1,)))
            self.current = self.dealer
        elif rank == C.DRAW_TWO:
            if rules.stacking:
                self._stack = 2
                self.phase = STACK
            else:
                self._draw(left, 2, "draw_two")
                self.log.append(_SKIPPED[left])
                self.current = (left + 1) % n

    # ------------------------------------------------------------------ queries

    @property
    def over(self) -> bool:
        return self.phase == OVER

    @property
    def top(self) -> int:
        return self.discard[-1]

    def pending_seats(self) -> list[int]:
        """Seats that may act now, the seat whose turn it is first. Empty once the hand is over.

        Outside response windows this is exactly one seat (plus, under jump-in, seats holding the
        exact top card)."""
        if self.phase == OVER:
            return []
        w = self.window
        if w >= 0:
            n = self.n
            d = self.direction
            out = []
            s = (w + d) % n
            for _ in range(n - 1):
                if not self._answered >> s & 1:
                    out.append(s)
                s = (s + d) % n
            out.append(w)
            return out
        if self.rules.jump_in and self.phase == TURN:
            top = self.discard[-1]
            cur = self.current
            extra = [s for s in range(self.n) if s != cur and top < _WILD and top in self.hands[s]]
            return [cur, *extra]
        return [self.current]

    def _to_act(self) -> int:
        """``pending_seats()[0]``, or -1 once the hand is over, without building the list."""
        if self.phase == OVER:
            return -1
        w = self.window
        if w < 0:
            return self.current
        n = self.n
        d = self.direction
        answered = self._answered
        s = (w + d) % n
        for _ in range(n - 1):
            if not answered >> s & 1:
                return s
            s = (s + d) % n
        return w

    def legal_actions(self, seat: int) -> list[int]:
        """Ids of every action ``seat`` may take now, in ascending id order (empty if none).

        The list is cached until the next action (treat it as read-only), and :meth:`apply`
        trusts an id found in it, so a caller that asks for the legal actions and then picks one
        pays for validation once."""
        if seat == self._cache_seat and self.turn == self._cache_turn:
            return self._cache_legal
        out = self._legal(seat)
        self._cache_seat = seat
        self._cache_turn = self.turn
        self._cache_legal = out
        return out

    def _legal(self, seat: int) -> list[int]:
        if self.phase == OVER or not 0 <= seat < self.n:
            return []
        w = self.window
        if w >= 0:
            if seat == w:
                return [A.CALL_UNO]
            if self._answered >> seat & 1:
                return []
            return [A.NO_CATCH, A.CATCH_BASE + w]
        if seat != self.current:
            if self.rules.jump_in and self.phase == TURN:
                top = self.discard[-1]
                if top < _WILD and top in self.hands[seat]:
                    return self._play_ids(seat, (top,))
            return []
        phase = self.phase
        if phase == TURN:
            hand = self.hands[seat]
            color = self.color
            trank = self.discard[-1] & 15
            if len(hand) != 2 and not self.rules.seven_o:
                # the common case, inline: DRAW, then each playable card once, ascending (the
                # coloured cards' ids first, 1000-1600, then Wild's four and Wild Draw Four's)
                out = [A.DRAW]
                wild = wd4 = False
                for c in hand:
                    if c >= _WILD:
                        if c == _WILD:
                            wild = True
                        else:
                            wd4 = True
                    elif c >> 4 == color or c & 15 == trank:
                        pid = 1000 + c * 10
                        if pid not in out:
                            out.append(pid)
                if len(out) > 2:
                    out.sort()
                if wild:
                    out.extend(_WILD_IDS)
                if wd4:
                    out.extend(_WD4_IDS)
                return out
            ps = [c for c in hand if c >= _WILD or c >> 4 == color or c & 15 == trank]
            if not ps:
                return [A.DRAW]
            out = self._play_ids(seat, set(ps))
            out.insert(0, A.DRAW)
            return out
        if phase == DRAWN:
            out = self._play_ids(seat, (self.drawn,))
            out.insert(0, A.PASS)
            return out
        if phase == CHALLENGE:
            return [A.ACCEPT, A.CHALLENGE]
        if phase == STACK:
            hand = self.hands[seat]
            stackable = {c for c in hand if c & 15 == C.DRAW_TWO and c < _WILD}
            if self.rules.stacking_wd4 and _WD4 in hand:
                stackable.add(_WD4)
            out = self._play_ids(seat, stackable)
            out.insert(0, A.ACCEPT)
            return out
        return [
            A.CHOOSE_COLOR_BASE,
            A.CHOOSE_COLOR_BASE + 1,
            A.CHOOSE_COLOR_BASE + 2,
            A.CHOOSE_COLOR_BASE + 3,
        ]

    def _play_ids(self, seat: int, playable: Iterable[int]) -> list[int]:
        uno_possible = len(self.hands[seat]) == 2
        seven_o = self.rules.seven_o
        out: list[int] = []
        for c in sorted(playable):
            if seven_o and c & 15 == 7 and c < _WILD:
                base = A.SWAP_BASE + c * 10
                out.extend(base + t for t in range(self.n) if t != seat)
                continue
            base = A.PLAY_BASE + c * 10
            if c >= _WILD:
                if uno_possible:
                    out.extend(
                        (base, base + 1, base + 2, base + 3, base + 4, base + 5, base + 6, base + 7)
                    )
                else:
                    out.extend((base, base + 2, base + 4, base + 6))
            elif uno_possible:
                out.extend((base, base + 1))
            else:
                out.append(base)
        if seven_o:
            out.sort()  # swap ids (3000+) sort after every plain play id
        return out

    def default_action(self, seat: int) -> int | None:
        """What the service plays for a seat whose time ran out: draw (then pass), accept a
        penalty, decline a catch, or name the colour the seat holds most. ``None`` if the seat
        owes no answer now (the offender of a UNO window never has to call)."""
        if self.phase == OVER:
            return None
        if self.window >= 0:
            if seat == self.window or self._answered >> seat & 1:
                return None
            return A.NO_CATCH
        if seat != self.current:
            return None
        phase = self.phase
        if phase == TURN:
            return A.DRAW
        if phase == DRAWN:
            return A.PASS
        if phase in (CHALLENGE, STACK):
            return A.ACCEPT
        return A.CHOOSE_COLOR_BASE + most_held_color(self.hands[seat])

    @property
    def penalty_owed(self) -> int:
        """Cards the seat to act would draw by accepting (a Wild Draw Four and any stack)."""
        if self.phase == CHALLENGE:
            return self._stack + 4
        return self._stack if self.phase == STACK else 0

    @property
    def wd4_offender(self) -> int:
        """Seat that played the Wild Draw Four now awaiting an answer, or -1."""
        return self._wd4_offender if self.phase == CHALLENGE else -1

    def window_awaiting(self) -> list[int]:
        """Seats that have not yet answered the open UNO window (empty if none is open)."""
        w = self.window
        if w < 0:
            return []
        return [s for s in range(self.n) if s != w and not self._answered >> s & 1]

    def is_legal(self, seat: int, action_id: int) -> bool:
        return action_id in self.legal_actions(seat)

    def points_held(self, seat: int) -> int:
        pts = C.POINTS
        return sum(pts[c] for c in self.hands[seat])

    def card_counts(self) -> list[int]:
        return [len(h) for h in self.hands]

    # ------------------------------------------------------------------ the transition

    def apply(self, seat: int, action_id: int) -> list[E.Event]:
        """Apply ``action_id`` for ``seat`` and return the events it caused.

        Raises :class:`MalformedActionError` for an id that names no action,
        :class:`WrongSeatError` when the seat may not act now, :class:`IllegalActionError` when it
        may act but not this way, and :class:`HandOverError` after the hand has ended."""
        start = len(self.log)
        self._step(seat, action_id)
        return self.log[start:]

    def _step(self, seat: int, action_id: int) -> None:
        """:meth:`apply` without collecting the events (they are in ``log``): the in-process
        loop of :mod:`.simulate` ignores them."""
        if self.phase == OVER:
            raise HandOverError("the hand is over")
        if seat == SYSTEM:
            if action_id != CLOSE_WINDOW:
                raise MalformedActionError(
                    f"the system can only close a UNO window, not {action_id}"
                )
            if self.window < 0:
                raise IllegalActionError("no UNO window is open", reason="NO_WINDOW")
            self._close_window(caught=False)
            self.actions.append((seat, action_id))
            self.turn += 1
            return
        if (
            seat == self._cache_seat
            and self.turn == self._cache_turn
            and self.phase == TURN
            and self.window < 0
            and seat == self.current
            and action_id in self._cache_legal
        ):
            # validated by legal_actions for this very state
            if action_id == A.DRAW:
                self._do_draw(seat)
            else:
                x = action_id - A.PLAY_BASE
                code = x // 10
                rest = x - code * 10
                if x >= 2000:  # a seven-o swap: 3000 + 10 * card + target
                    self._play(seat, code - 200, (code - 200) >> 4, False, rest, False)
                elif code >= _WILD:
                    self._play(seat, code, rest >> 1, bool(rest & 1), -1, False)
                else:
                    self._play(seat, code, code >> 4, bool(rest & 1), -1, False)
            self.actions.append((seat, action_id))
            self.turn += 1
            return
        if not isinstance(seat, int) or not 0 <= seat < self.n:
            raise MalformedActionError(f"seat {seat!r} is not a seat of this table")
        if self.window >= 0:
            self._apply_window(seat, action_id)
        elif seat != self.current:
            self._apply_jump_in(seat, action_id)
        else:
            phase = self.phase
            if phase == TURN:
                if action_id == A.DRAW:
                    self._do_draw(seat)
                else:
                    self._apply_play(seat, action_id, _TURN_CHECK)
            elif phase == DRAWN:
                if action_id == A.PASS:
                    self.kept += 1
                    self.log.append(_PASSED[seat])
                    self.phase = TURN
                    self.drawn = -1
                    self.current = (seat + self.direction) % self.n
                else:
                    self._apply_play(seat, action_id, _DRAWN_CHECK)
            elif phase == CHALLENGE:
                if action_id == A.ACCEPT:
                    self._accept(seat)
                elif action_id == A.CHALLENGE:
                    self._challenge(seat)
                else:
                    self._reject(
                        seat, action_id, "answer a Wild Draw Four with accept or challenge"
                    )
            elif phase == STACK:
                if action_id == A.ACCEPT:
                    self._accept(seat)
                else:
                    self._apply_play(seat, action_id, _STACK_CHECK)
            else:  # CHOOSE_COLOR
                c = action_id - A.CHOOSE_COLOR_BASE
                if not 0 <= c < 4:
                    self._reject(seat, action_id, "name the colour of the Wild flipped first")
                self.color = c
                self.log.append(_new(_ColorChosen, (seat, c)))
                self.phase = TURN
        self.actions.append((seat, action_id))
        self.turn += 1

    def _reject(self, seat: int, action_id: int, what: str) -> None:
        A.decode(action_id)  # malformed ids raise MalformedActionError first
        raise IllegalActionError(
            f"seat {seat} cannot {A.decode(action_id).describe()} now: {what}",
            reason="ILLEGAL_ACTION",
        )

    def _apply_window(self, seat: int, action_id: int) -> None:
        w = self.window
        if seat == w:
            if action_id != A.CALL_UNO:
                self._reject(seat, action_id, "your UNO window is open; you may only call UNO")
            self.uno_called[w] = True
            self.log.append(_UNO_CALLED[2 * w + 1])
            self._close_window(caught=False)
            return
        if self._answered >> seat & 1:
            raise WrongSeatError(
                f"seat {seat} has already answered this UNO window", reason="ALREADY_ANSWERED"
            )
        if action_id == A.NO_CATCH:
            self._answered |= 1 << seat
            self.log.append(_NO_CATCH[seat])
            if self._answered == ((1 << self.n) - 1) & ~(1 << w):
                self._close_window(caught=False)
        elif action_id == A.CATCH_BASE + w:
            penalty = self.rules.uno_penalty
            self.log.append(_new(_Caught, (seat, w, penalty)))
            self._draw(w, penalty, "uno_caught")
            self._close_window(caught=True)
        else:
            if A.CATCH_BASE <= action_id < A.CATCH_BASE + 10:
                A.decode(action_id)
                raise IllegalActionError(
                    f"seat {action_id - A.CATCH_BASE} cannot be caught; only seat {w} can",
                    reason="NOT_CATCHABLE",
                )
            self._reject(seat, action_id, f"a UNO window is open: catch seat {w} or decline")

    def _close_window(self, caught: bool) -> None:
        w = self.window
        self.window = -1
        self._answered = 0
        self.log.append(_WINDOW_CLOSED[2 * w + (1 if caught else 0)])

    def _apply_jump_in(self, seat: int, action_id: int) -> None:
        if not (self.rules.jump_in and self.phase == TURN):
            A.decode(action_id)
            raise WrongSeatError(
                f"it is seat {self.current}'s turn, not seat {seat}'s", reason="NOT_YOUR_TURN"
            )
        top = self.discard[-1]
        act = A.decode(action_id)
        if act.kind is not A.Kind.PLAY or act.card != top or top >= _WILD:
            raise WrongSeatError(
                f"it is seat {self.current}'s turn; out of turn you may only jump in with the "
                f"exact top card {C.name(top)}",
                reason="NOT_YOUR_TURN",
            )
        self._apply_play(seat, action_id, _JUMP_CHECK)

    # ------------------------------------------------------------------ plays

    def _apply_play(self, seat: int, action_id: int, check: int) -> None:
        x = action_id - A.PLAY_BASE
        target = -1
        if 0 <= x < 800:
            code, rest = divmod(x, 10)
            named, uno = divmod(rest, 2)
            if code >= _WILD:
                if code > _WD4 or named > 3:
                    raise MalformedActionError(f"action id {action_id} names no card play")
            elif named or not C.is_valid_code(code):
                raise MalformedActionError(f"action id {action_id} names no card play")
            else:
                named = code >> 4
            if self.rules.seven_o and code & 15 == 7 and code < _WILD:
                raise IllegalActionError(
                    "under seven-o a 7 is played with a seat to swap with (a swap action id)",
                    reason="ILLEGAL_ACTION",
                )
        elif 2000 <= x < 2800 and self.rules.seven_o:
            code, target = divmod(x - 2000, 10)
            if code & 15 != 7 or code >= _WILD or not C.is_valid_code(code):
                raise MalformedActionError(f"action id {action_id} names no seven-o swap")
            if target == seat or target >= self.n:
                raise IllegalActionError(
                    f"seat {seat} cannot swap hands with seat {target}", reason="ILLEGAL_ACTION"
                )
            named, uno = code >> 4, 0
        else:
            if action_id in (A.DRAW, A.PASS, A.ACCEPT, A.CHALLENGE):
                what = {
                    A.DRAW: "you may draw only at the start of your turn",
                    A.PASS: "you may pass only after drawing",
                    A.ACCEPT: "there is no penalty to accept",
                    A.CHALLENGE: "there is no Wild Draw Four to challenge",
                }[action_id]
                self._reject(seat, action_id, what)
            A.decode(action_id)
            raise IllegalActionError(
                f"action id {action_id} is not allowed now", reason="ILLEGAL_ACTION"
            )
        hand = self.hands[seat]
        if code not in hand:
            raise IllegalActionError(
                f"seat {seat} does not hold {C.name(code)}", reason="CARD_NOT_HELD"
            )
        if check == _TURN_CHECK:
            if not (code >= _WILD or code >> 4 == self.color or code & 15 == self.discard[-1] & 15):
                raise IllegalActionError(
                    f"{C.name(code)} matches neither the active colour "
                    f"{C.color_name(self.color)} nor the top card {C.name(self.discard[-1])}",
                    reason="NO_MATCH",
                )
        elif check == _DRAWN_CHECK:
            if code != self.drawn:
                raise IllegalActionError(
                    f"after drawing you may play only the card you drew ({C.name(self.drawn)})",
                    reason="ONLY_DRAWN_CARD",
                )
        elif check == _STACK_CHECK:
            if not (
                (code & 15 == C.DRAW_TWO and code < _WILD)
                or (code == _WD4 and self.rules.stacking_wd4)
            ):
                raise IllegalActionError(
                    f"a Draw Two stack can only be answered with a Draw Two or accepted, "
                    f"not {C.name(code)}",
                    reason="ONLY_STACK",
                )
        if uno and len(hand) != 2:
            raise IllegalActionError(
                "UNO can be called only with a play that leaves one card", reason="UNO_NOT_ALLOWED"
            )
        self._play(seat, code, named, bool(uno), target, check == _JUMP_CHECK)

    def _play(
        self, seat: int, code: int, named: int, uno: bool, target: int, out_of_turn: bool
    ) -> None:
        hand = self.hands[seat]
        n = self.n
        log = self.log
        if code == _WD4:
            prev = self.color
            self._wd4_bluff = any(c >> 4 == prev for c in hand if c != _WD4) if prev >= 0 else False
        hand.remove(code)
        self.discard.append(code)
        self.color = named
        self.drawn = -1
        left = len(hand)
        self.uno_called[seat] = uno if left == 1 else False
        log.append(_played(seat, code, named, uno, out_of_turn))
        d = self.direction
        rank = code & 15
        nxt = (seat + d) % n
        if left == 0:
            if rank == C.DRAW_TWO and code < _WILD:
                self._draw(nxt, 2 + self._stack, "draw_two")
            elif code == _WD4:
                self._draw(nxt, 4 + self._stack, "wild_draw_four")
            self._stack = 0
            self._end(seat)
            return
        self.phase = TURN
        moved = False
        if rank < 10:
            # RULINGS.md, "Seven-o: calls and catches stay with the play": hands that move take
            # no UNO call along, and the play opens no catch window
            if target >= 0:
                self.hands[seat], self.hands[target] = self.hands[target], self.hands[seat]
                self.uno_called[seat] = self.uno_called[target] = False
                log.append(_new(_HandsSwapped, (seat, target)))
                moved = True
            elif rank == 0 and self.rules.seven_o:
                if d == 1:
                    self.hands.insert(0, self.hands.pop())
                else:
                    self.hands.append(self.hands.pop(0))
                self.uno_called = [False] * n
                log.append(_new(_HandsRotated, (d,)))
                moved = True
            self.current = nxt
        elif rank == C.SKIP or (rank == C.REVERSE and n == 2):
            log.append(_SKIPPED[nxt])
            self.current = (nxt + d) % n
        elif rank == C.REVERSE:
            d = -d
            self.direction = d
            log.append(_new(_Reversed, (d,)))
            self.current = (seat + d) % n
        elif rank == C.DRAW_TWO and code < _WILD:
            if self.rules.stacking:
                self._stack += 2
                self.phase = STACK
                self.current = nxt
            else:
                self._draw(nxt, 2, "draw_two")
                log.append(_SKIPPED[nxt])
                self.current = (nxt + d) % n
        elif code == _WD4:
            self._wd4_offender = seat
            self._wd4_evidence = tuple(hand)
            self.phase = CHALLENGE
            self.current = nxt
        else:  # Wild
            self.current = nxt
        if left == 1 and not moved:
            if uno:
                log.append(_UNO_CALLED[2 * seat])
            else:
                self.window = seat
                self._answered = 0
                log.append(_WINDOW_OPENED[seat])

    def _accept(self, seat: int) -> None:
        owed = self._stack + (4 if self.phase == CHALLENGE else 0)
        self._stack = 0
        self.log.append(_ACCEPTED[seat])
        self._draw(seat, owed, "wild_draw_four" if self.phase == CHALLENGE else "stack")
        self.log.append(_SKIPPED[seat])
        self.phase = TURN
        self.current = (seat + self.direction) % self.n

    def _challenge(self, seat: int) -> None:
        offender = self._wd4_offender
        bluff = self._wd4_bluff
        log = self.log
        log.append(_new(_ChallengeEvidence, (seat, offender, self._wd4_evidence)))
        log.append(_new(_Challenged, (seat, offender, bluff)))
        extra = self._stack
        self._stack = 0
        self.phase = TURN
        if bluff:
            self._draw(offender, 4, "bluff_caught")
            if extra:
                self._draw(seat, extra, "stack")
                log.append(_SKIPPED[seat])
                self.current = (seat + self.direction) % self.n
            else:
                self.current = seat
        else:
            self._draw(seat, 6 + extra, "challenge_failed")
            log.append(_SKIPPED[seat])
            self.current = (seat + self.direction) % self.n

    # ------------------------------------------------------------------ drawing

    def _refill(self) -> bool:
        """Shuffle the discard pile except its top card into a new draw pile."""
        discard = self.discard
        if len(discard) <= 1:
            return False
        pile = discard[:-1]
        del discard[:-1]
        shuffle(self.rng, pile)
        self.draw_pile = pile
        self.log.append(_new(_Reshuffled, (len(pile),)))
        return True

    def _draw(self, seat: int, count: int, reason: str) -> tuple[int, ...]:
        pile = self.draw_pile
        got: list[int] = []
        for _ in range(count):
            if not pile:
                if not self._refill():
                    break
                pile = self.draw_pile
            got.append(pile.pop())
        self.hands[seat].extend(got)
        if got:
            self.uno_called[seat] = False
        t = tuple(got)
        self.log.append(_new(_Drew, (seat, len(got), t, reason)))
        return t

    def _do_draw(self, seat: int) -> None:
        color = self.color
        trank = self.discard[-1] & 15
        hand = self.hands[seat]
        while True:
            # one card, as _draw(seat, 1, "draw") does it
            pile = self.draw_pile
            if not pile:
                if not self._refill():
                    self.log.append(_new(_Drew, (seat, 0, (), "draw")))
                    break
                pile = self.draw_pile
            c = pile.pop()
            hand.append(c)
            self.uno_called[seat] = False
            self.log.append(_drew_one(seat, c))
            if c >= _WILD or c >> 4 == color or c & 15 == trank:
                self.phase = DRAWN
                self.drawn = c
                return
            if not self.rules.draw_until_playable:
                break
        self.log.append(_PASSED[seat])
        self.current = (seat + self.direction) % self.n

    def _end(self, winner: int) -> None:
        self.phase = OVER
        self.winner = winner
        self.window = -1
        pts = C.POINTS
        held = tuple(sum(pts[c] for c in h) for h in self.hands)
        self.log.append(_new(_HandEnded, (winner, held, tuple(tuple(h) for h in self.hands))))

    # ------------------------------------------------------------------ persistence

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready snapshot from which :meth:`from_dict` rebuilds the hand exactly,
        generator state included (the event log is not kept; the action list is)."""
        version, internal, gauss = self.rng.getstate()
        return {
            "format": 1,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "dealer": self.dealer,
            "hand_number": self.hand_number,
            "rng": [version, list(internal), gauss],
            "hands": [list(h) for h in self.hands],
            "draw_pile": list(self.draw_pile),
            "discard": list(self.discard),
            "color": self.color,
            "direction": self.direction,
            "current": self.current,
            "phase": self.phase,
            "drawn": self.drawn,
            "uno_called": list(self.uno_called),
            "window": self.window,
            "answered": self._answered,
            "wd4_offender": self._wd4_offender,
            "wd4_bluff": self._wd4_bluff,
            "wd4_evidence": list(self._wd4_evidence),
            "stack": self._stack,
            "turn": self.turn,
            "winner": self.winner,
            "actions": [list(a) for a in self.actions],
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, where: str = "hand") -> Hand:
        """Rebuild a hand saved by :meth:`to_dict`. Raises :class:`StateError` naming the field
        (``field``, and the message) when the snapshot is malformed or describes a state that no
        hand can reach: cards that are not the deck, an index out of range, a phase that
        disagrees with the rest (RULINGS.md)."""
        d = check_hand(data, where)
        h = cls(d["rules"], d["seed"], d["dealer"], d["hand_number"])
        h.rng.setstate(d["rng"])
        h.hands = d["hands"]
        h.draw_pile = d["draw_pile"]
        h.discard = d["discard"]
        h.color = d["color"]
        h.direction = d["direction"]
        h.current = d["current"]
        h.phase = d["phase"]
        h.drawn = d["drawn"]
        h.uno_called = d["uno_called"]
        h.window = d["window"]
        h._answered = d["answered"]
        h._wd4_offender = d["wd4_offender"]
        h._wd4_bluff = d["wd4_bluff"]
        h._wd4_evidence = tuple(d["wd4_evidence"])
        h._stack = d["stack"]
        h.turn = d["turn"]
        h.winner = d["winner"]
        h.actions = d["actions"]
        h.kept = sum(1 for a in h.actions if a[1] == A.PASS)  # a PASS only ever keeps a card
        return h

    @classmethod
    def replay(
        cls,
        rules: RuleSet,
        seed: int,
        dealer: int,
        actions: Iterable[tuple[int, int]],
        hand_number: int = 1,
    ) -> Hand:
        """Re-deal from the seed and apply ``actions`` in order."""
        h = cls.deal(rules, seed, dealer, hand_number)
        for seat, action_id in actions:
            h.apply(seat, action_id)
        return h


_TURN_CHECK: Final = 0
_DRAWN_CHECK: Final = 1
_STACK_CHECK: Final = 2
_JUMP_CHECK: Final = 3


_DECKS: Final = (), tuple(C.full_deck(1)), tuple(C.full_deck(2))
"""The full deck(s) in their fixed order, by number of decks, for the shuffle to start from."""


def shuffle(rng: random.Random, x: list[int]) -> None:
    """``rng.shuffle(x)``, bit for bit: the Fisher-Yates shuffle of CPython's ``random`` module
    (3.11 to 3.13), drawing each index with ``getrandbits`` and rejection as its
    ``_randbelow_with_getrandbits`` does. Written out here so that the compiled engine runs it
    as native code instead of calling back into random.py for every card; the deal of every hand
    depends on it, and tests compare it with ``random.Random.shuffle``."""
    getrandbits = rng.getrandbits
    bits = _BITS
    i = len(x) - 1
    while i > 0:
        n = i + 1
        k = bits[n] if n < 512 else n.bit_length()
        j = getrandbits(k)
        while j >= n:
            j = getrandbits(k)
        x[i], x[j] = x[j], x[i]
        i -= 1


_BITS: Final = tuple(n.bit_length() for n in range(512))


def most_held_color(hand: Iterable[int]) -> int:
    """The colour a hand holds most (ties to the lower colour number); red for an all-Wild hand."""
    counts = [0, 0, 0, 0]
    for c in hand:
        if c < _WILD:
            counts[c >> 4] += 1
    return counts.index(max(counts))
