"""The table as one viewer knows it, rebuilt from the protocol's events.

A :class:`TableModel` is fed the events a viewer receives: a spectator's from
``AdminService.WatchMatch`` (public information only; every hand revealed when it ends) or a
seat's from its Play stream (the same, plus its own cards and, when it challenges, the evidence).
It never holds more than those events carried, so a view drawn from it cannot show a hidden card.
A seat also passes each ``DecisionRequest.view`` to :meth:`TableModel.sync_view`, which is the
server's own word on the table and corrects anything the events leave open.

Every event becomes a :class:`LogLine` in words ("heuristic #2 played red 7"), with the cards and
colours it names kept apart so the terminal and the browser can draw them in colour.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from uno_server.engine import cards as C
from uno_server.gen.uno.v1 import game_pb2

from .cards import COLOR_WORDS, label

SPECTATOR: Final = -1
"""Viewer id of a spectator."""

BUILTIN_NAMES: Final = {
    game_pb2.BUILTIN_BOT_RANDOM: "random",
    game_pb2.BUILTIN_BOT_HEURISTIC: "heuristic",
}
CARDS_PER_DECK: Final = 108


class CardRef(NamedTuple):
    """A card named in a log line."""

    code: int


class ColorRef(NamedTuple):
    """A colour named in a log line (engine colour 0-3)."""

    color: int


Part = str | CardRef | ColorRef


@dataclass(frozen=True, slots=True)
class LogLine:
    """One event in words."""

    sequence: int
    hand_number: int
    parts: tuple[Part, ...]
    kind: str = ""
    """``uno``, ``catch``, ``challenge``, ``evidence``, ``end``, ``service`` or empty."""

    @property
    def text(self) -> str:
        return "".join(
            p
            if isinstance(p, str)
            else label(p.code)
            if isinstance(p, CardRef)
            else COLOR_WORDS[p.color]
            for p in self.parts
        )

    @property
    def cards(self) -> tuple[int, ...]:
        return tuple(p.code for p in self.parts if isinstance(p, CardRef))


@dataclass(slots=True)
class SeatInfo:
    """What is public about one seat."""

    seat: int
    name: str
    cards: int = 0
    uno: bool = False
    total: int = 0
    connected: bool = True
    taken_over: bool = False
    revealed: tuple[int, ...] | None = None
    """The seat's cards, once its hand has ended (None while the hand runs)."""
    points_held: int | None = None
    eliminated: bool = False
    """Out of the match (Challenge UNO house rule): it sits every later hand out."""


def player_name(player: game_pb2.Player) -> str:
    """A seat's player in words: the bot's name, or the built-in bot's kind."""
    kind = player.WhichOneof("kind")
    if kind == "bot_name":
        return player.bot_name
    if kind == "builtin":
        return BUILTIN_NAMES.get(player.builtin, "built-in")
    return "heuristic"


def unique_names(names: Sequence[str]) -> list[str]:
    """Names that appear twice get their seat number: ``heuristic #1``, ``heuristic #3``."""
    return [f"{n} #{i}" if names.count(n) > 1 else n for i, n in enumerate(names)]


@dataclass(slots=True)
class Evidence:
    """What the viewer saw when it challenged a Wild Draw Four."""

    offender: int
    hand: tuple[int, ...]
    color_before: int
    """The active colour the Wild Draw Four was played on (-1 if unknown)."""
    bluff: bool | None = None
    """The public result, once the Challenged event arrives."""
    stack: int = 0
    """Draw Two stack cards under the Wild Draw Four (stacking): the challenger draws them
    whatever the verdict."""

    @property
    def verdict(self) -> str:
        """The result in the challenger's words (empty until the Challenged event)."""
        if self.bluff is None:
            return ""
        if self.bluff:
            stack = f" You draw the stack's {self.stack}." if self.stack else ""
            return f"It held that colour: a bluff, caught. It draws 4.{stack}"
        return f"No card of that colour: an honest play. You draw {6 + self.stack}."


@dataclass
class TableModel:
    """One viewer's knowledge of a table. ``viewer`` is a seat number or :data:`SPECTATOR`."""

    names: list[str]
    viewer: int = SPECTATOR
    decks: int = 1
    hand_size: int = 7
    uno_window_ms: int = 2000
    stacking: bool = False
    log_size: int = 200

    match_id: str = ""
    seats: list[SeatInfo] = field(default_factory=list)
    hand_number: int = 0
    dealer: int = -1
    direction: int = 1
    top: int = -1
    color: int = -1
    current: int = -1
    phase: str = "waiting"
    """``waiting`` (no hand yet), ``turn``, ``drawn``, ``challenge``, ``stack``,
    ``choose_color`` or ``over`` (the hand has ended)."""
    window: int = -1
    """The seat whose UNO window is open, or -1."""
    window_closes: float | None = None
    """Server time (Unix seconds) the open UNO window closes by itself, when known."""
    penalty: int = 0
    """Cards the current seat draws if it accepts (Wild Draw Four or a Draw Two stack)."""
    discard: int = 0
    winner: int = -1
    match_over: bool = False
    winners: tuple[int, ...] = ()
    cancelled: str = ""
    hand: list[int] = field(default_factory=list)
    """The viewer's own cards (empty for a spectator), sorted."""
    drawn: int = -1
    """The card the viewer just drew and may still play, or -1."""
    evidence: Evidence | None = None
    last_sequence: int = 0
    log: deque[LogLine] = field(default_factory=deque)

    def __post_init__(self) -> None:
        self.names = unique_names(self.names)
        if not self.seats:
            self.seats = [SeatInfo(i, n) for i, n in enumerate(self.names)]
        self.log = deque(self.log, maxlen=self.log_size)
        self._plays = 0
        self._last = -1
        self._color_before_wd4 = -1

    @classmethod
    def for_rules(
        cls, names: Sequence[str], rules: game_pb2.RuleSet, viewer: int = SPECTATOR
    ) -> TableModel:
        return cls(
            list(names),
            viewer=viewer,
            decks=max(1, rules.decks),
            hand_size=rules.hand_size if rules.HasField("hand_size") else 7,
            uno_window_ms=rules.uno_window_ms if rules.HasField("uno_window_ms") else 2000,
            stacking=rules.stacking,
        )

    # ------------------------------------------------------------------ derived

    @property
    def n(self) -> int:
        return len(self.seats)

    @property
    def draw_pile(self) -> int:
        """Cards in the draw pile: the deck less the cards held and the discard pile."""
        if self.phase == "waiting":
            return 0
        return max(0, CARDS_PER_DECK * self.decks - sum(s.cards for s in self.seats) - self.discard)

    @property
    def in_hand(self) -> bool:
        """True while a hand is being played (cards are hidden)."""
        return self.phase not in ("waiting", "over")

    def who(self, seat: int, *, start: bool = False) -> str:
        if seat == self.viewer:
            return "You" if start else "you"
        if 0 <= seat < self.n:
            return self.names[seat]
        return f"seat {seat}"

    def whose(self, seat: int, *, start: bool = False) -> str:
        """The possessive of :meth:`who`: "your" for the viewer, "ai-1's" for anyone else.
        The narration does not use it on a name (a player named "me" would read "me's")."""
        if seat == self.viewer:
            return "Your" if start else "your"
        return f"{self.who(seat, start=start)}'s"

    def verb(self, seat: int, third: str, second: str) -> str:
        """The verb agreeing with :meth:`who`: ``second`` ("draw") for the viewer ("you"),
        ``third`` ("draws") for anyone else."""
        return second if seat == self.viewer else third

    def _be(self, seat: int) -> str:
        return self.verb(seat, "was", "were")

    @property
    def playing(self) -> list[int]:
        """The seats dealt into the hand, in seat order (every seat but the eliminated)."""
        return [s.seat for s in self.seats if not s.eliminated]

    def _next(self, seat: int, direction: int | None = None) -> int:
        """The seat after ``seat`` in the order of play, passing over eliminated seats."""
        d = self.direction if direction is None else direction
        for k in range(1, self.n + 1):
            nxt = (seat + d * k) % self.n
            if not self.seats[nxt].eliminated:
                return nxt
        return (seat + d) % self.n

    @property
    def stack(self) -> int:
        """Draw Two stack cards under a Wild Draw Four waiting for an answer (stacking)."""
        return max(0, self.penalty - 4) if self.phase == "challenge" else 0

    def wd4_stakes(self) -> tuple[int, int]:
        """What a Wild Draw Four costs the seat it was played on: the cards it draws if it
        accepts, and if it challenges and the play was honest (the engine's 4 and 6, plus any
        Draw Two stack under the Wild Draw Four)."""
        return 4 + self.stack, 6 + self.stack

    # ------------------------------------------------------------------ the server's view

    def sync_view(self, view: game_pb2.SeatView) -> None:
        """Take a seat's ``SeatView`` as the truth (it arrives with every decision request)."""
        self.hand_number = view.hand_number
        self.dealer = view.dealer
        self.hand = sorted(c.code for c in view.hand)
        self.top = view.top_card.code if view.HasField("top_card") else -1
        self.color = view.active_color - 1 if view.active_color else -1
        self.direction = -1 if view.direction == game_pb2.DIRECTION_DECREASING else 1
        self.current = view.current_seat if view.HasField("current_seat") else -1
        phases = ("turn", "drawn", "challenge", "stack", "choose_color", "over")
        if 1 <= view.phase <= len(phases):
            self.phase = phases[view.phase - 1]
        for s in view.seats:
            if 0 <= s.seat < self.n:
                info = self.seats[s.seat]
                info.cards = s.card_count
                info.uno = s.uno_called
                info.total = s.score
                info.taken_over = s.taken_over
        self.discard = view.discard_pile_size
        self.drawn = view.drawn_card.code if view.HasField("drawn_card") else -1
        if view.HasField("uno_window"):
            self.window = view.uno_window.offender
            if view.uno_window.HasField("closes_at"):
                self.window_closes = view.uno_window.closes_at.ToNanoseconds() / 1e9
        else:
            self.window = -1
            self.window_closes = None
        self.penalty = view.pending_penalty.cards if view.HasField("pending_penalty") else 0

    # ------------------------------------------------------------------ events

    def apply(self, ev: game_pb2.Event) -> LogLine | None:
        """Take one event; return it in words (None for events not worth a line)."""
        if ev.sequence and ev.sequence <= self.last_sequence:
            return None  # already seen (a resumed stream may repeat events)
        self.last_sequence = max(self.last_sequence, ev.sequence)
        kind = ev.WhichOneof("kind")
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            return None
        out = handler(getattr(ev, kind), ev)
        if out is None:
            return None
        line_kind = ""
        if isinstance(out, tuple):
            parts, tag = out
            line_kind = tag.value
        else:
            parts = out
        line = LogLine(ev.sequence, ev.hand_number, tuple(parts), line_kind)
        self.log.append(line)
        return line

    # Each handler updates the state and returns the line's parts (optionally with a kind).

    def _on_hand_started(self, e: game_pb2.HandStartedEvent, ev: game_pb2.Event) -> _Out:
        self.hand_number = e.hand_number
        self.dealer = e.dealer
        self.direction = 1
        self.top = -1
        self.color = -1
        self.window = -1
        self.window_closes = None
        self.penalty = 0
        self.discard = 0
        self.winner = -1
        self.phase = "turn"
        if e.seats:  # the match seats dealt in: every other seat was eliminated
            dealt = set(e.seats)
            for s in self.seats:
                s.eliminated = s.seat not in dealt
        elif e.seat_count == self.n:  # every seat dealt in: nobody is out
            for s in self.seats:
                s.eliminated = False
        self.current = self._next(e.dealer, 1)
        self.hand = []
        self.drawn = -1
        self.evidence = None
        self._plays = 0
        self._last = e.dealer
        for s in self.seats:
            s.cards = 0
            s.uno = False
            s.revealed = None
            s.points_held = None
        return [f"Hand {e.hand_number}: {self.who(e.dealer)} dealt."], _Kind("end")

    def _on_dealt(self, e: game_pb2.DealtEvent, ev: game_pb2.Event) -> _Out:
        if 0 <= e.seat < self.n:
            # The service sends others' Dealt events with amount 0 (it counts the cards after
            # blanking them); every seat is dealt the rule set's hand size.
            self.seats[e.seat].cards = e.amount or len(e.cards) or self.hand_size
        if e.seat == self.viewer and e.cards:
            self.hand = sorted(c.code for c in e.cards)
            return [f"You were dealt {len(e.cards)} cards."]
        return None

    def _on_first_card(self, e: game_pb2.FirstCardEvent, ev: game_pb2.Event) -> _Out:
        code = e.card.code
        if e.returned:
            return ["The first card, ", CardRef(code), ", went back into the deck."]
        self.top = code
        self.discard = 1
        self.current = self._next(self.dealer, 1)
        if code >= C.WILD:
            self.phase = "choose_color"
            self.color = -1
            names = self.verb(self.current, "names", "name")
            return [
                "The first card is a ",
                CardRef(code),
                f": {self.who(self.current)} {names} the colour.",
            ]
        self.color = code >> 4
        self.phase = "turn"
        if code & 15 == C.DRAW_TWO and self.stacking:
            self.phase = "stack"
            self.penalty = 2
        return ["The first card is ", CardRef(code), "."]

    def _on_color_chosen(self, e: game_pb2.ColorChosenEvent, ev: game_pb2.Event) -> _Out:
        self.color = e.color - 1
        self.phase = "turn"
        return [f"{self.who(e.seat, start=True)} named ", ColorRef(self.color), "."]

    def _on_played(self, e: game_pb2.PlayedEvent, ev: game_pb2.Event) -> _Out:
        code = e.card.code
        seat = e.seat
        if code == C.WILD_DRAW_FOUR:
            self._color_before_wd4 = self.color
        info = self.seats[seat]
        info.cards = max(0, info.cards - 1)
        info.uno = e.uno if info.cards == 1 else False
        self.top = code
        self.color = e.color - 1
        self.discard += 1
        self.drawn = -1
        if seat == self.viewer and code in self.hand:
            self.hand.remove(code)
        self._plays += 1
        self._last = seat
        self.phase = "turn"
        self.current = self._next(seat)
        rank = code & 15
        if code == C.WILD_DRAW_FOUR:
            self.phase = "challenge"
            self.penalty += 4
        elif rank == C.DRAW_TWO and code < C.WILD and self.stacking:
            self.phase = "stack"
            self.penalty += 2
        parts: list[Part] = [f"{self.who(seat, start=True)} played ", CardRef(code)]
        if code >= C.WILD:
            parts += [" naming ", ColorRef(self.color)]
        if e.out_of_turn:
            parts.append(" out of turn")
        if e.uno:
            parts.append(" and called UNO!")
            return parts, _Kind("uno")
        parts.append(".")
        return parts

    def _on_drew(self, e: game_pb2.DrewEvent, ev: game_pb2.Event) -> _Out:
        seat = e.seat
        info = self.seats[seat]
        info.cards += e.amount
        if e.amount:
            info.uno = False
        cards = [c.code for c in e.cards]
        if seat == self.viewer and cards:
            self.hand = sorted(self.hand + cards)
        who = self.who(seat, start=True)
        n = e.amount
        what = "a card" if n == 1 else f"{n} cards"
        reason = e.reason
        if reason == game_pb2.DRAW_REASON_DRAW:
            self.phase = "drawn"
            self.current = seat
            if seat == self.viewer and cards:
                self.drawn = cards[-1]
                return [f"{who} drew ", *_card_list(cards), "."]
            return [f"{who} drew {what}."]
        tail = {
            game_pb2.DRAW_REASON_DRAW_TWO: " for the Draw Two",
            game_pb2.DRAW_REASON_WILD_DRAW_FOUR: " for the Wild Draw Four",
            game_pb2.DRAW_REASON_STACK: " for the Draw Two stack",
            game_pb2.DRAW_REASON_BLUFF_CAUGHT: " for the bluff",
            game_pb2.DRAW_REASON_CHALLENGE_FAILED: " for the failed challenge",
            game_pb2.DRAW_REASON_UNO_CAUGHT: " for not calling UNO",
        }.get(reason, "")
        if seat == self.viewer and cards:
            return [f"{who} drew ", *_card_list(cards), f"{tail}."]
        return [f"{who} drew {what}{tail}."]

    def _on_passed(self, e: game_pb2.PassedEvent, ev: game_pb2.Event) -> _Out:
        kept = self.drawn if e.seat == self.viewer else -1
        self.drawn = -1
        self.phase = "turn"
        self._last = e.seat
        self.current = self._next(e.seat)
        if kept >= 0:
            return ["You kept ", CardRef(kept), " and passed."]
        return [f"{self.who(e.seat, start=True)} passed."]

    def _on_skipped(self, e: game_pb2.SkippedEvent, ev: game_pb2.Event) -> _Out:
        self.phase = "turn"
        self.current = self._next(e.seat)
        return [f"{self.who(e.seat, start=True)} {self._be(e.seat)} skipped."]

    def _on_reversed(self, e: game_pb2.ReversedEvent, ev: game_pb2.Event) -> _Out:
        self.direction = -1 if e.direction == game_pb2.DIRECTION_DECREASING else 1
        # a Reverse flipped first: the dealer plays first, to the right
        self.current = self.dealer if self._plays == 0 else self._next(self._last)
        return [f"Play now goes {direction_words(self.direction)}."]

    def _on_reshuffled(self, e: game_pb2.ReshuffledEvent, ev: game_pb2.Event) -> _Out:
        self.discard = 1
        return [f"The discard pile was shuffled into a new draw pile of {e.amount} cards."]

    def _on_accepted(self, e: game_pb2.AcceptedEvent, ev: game_pb2.Event) -> _Out:
        self.penalty = 0
        self.phase = "turn"
        return [f"{self.who(e.seat, start=True)} accepted the penalty."]

    def _on_challenged(self, e: game_pb2.ChallengedEvent, ev: game_pb2.Event) -> _Out:
        stack = self.stack
        self.penalty = 0
        self.phase = "turn"
        if e.bluff:
            self.current = e.challenger
        if self.evidence is not None and self.evidence.offender == e.offender:
            self.evidence.bluff = e.bluff
        who = self.who(e.challenger, start=True)
        if e.bluff:
            loser = e.offender
            verdict = (
                f"a bluff! {self.who(loser, start=True)} {self.verb(loser, 'draws', 'draw')} 4."
            )
            if stack:  # the Draw Twos under it still fall on the challenger
                draws = self.verb(e.challenger, "draws", "draw")
                verdict += f" {who} {draws} {stack} for the Draw Two stack."
        else:
            loser = e.challenger
            verdict = f"it was honest. {who} {self.verb(loser, 'draws', 'draw')} {6 + stack}."
        # no possessive on a name: "challenged me's Wild Draw Four" for a player named me
        wd4 = (
            "your Wild Draw Four"
            if e.offender == self.viewer
            else f"the Wild Draw Four from {self.who(e.offender)}"
        )
        return [f"{who} challenged {wd4}: {verdict}"], _Kind("challenge")

    def _on_challenge_evidence(
        self, e: game_pb2.ChallengeEvidenceEvent, ev: game_pb2.Event
    ) -> _Out:
        if e.challenger != self.viewer:
            return None  # not for this viewer (a spectator never receives it)
        cards = tuple(c.code for c in e.hand)
        self.evidence = Evidence(e.offender, cards, self._color_before_wd4, stack=self.stack)
        parts: list[Part] = [f"Evidence: {self.who(e.offender)} held "]
        parts += _card_list(list(cards)) if cards else ["no other card"]
        if self._color_before_wd4 >= 0:
            parts += [" when the colour was ", ColorRef(self._color_before_wd4)]
        parts.append(".")
        return parts, _Kind("evidence")

    def _on_uno_called(self, e: game_pb2.UnoCalledEvent, ev: game_pb2.Event) -> _Out:
        self.seats[e.seat].uno = True
        if e.late:
            return [f"{self.who(e.seat, start=True)} called UNO late, just in time."], _Kind("uno")
        return None  # the play's own line says it

    def _on_uno_window_opened(self, e: game_pb2.UnoWindowOpenedEvent, ev: game_pb2.Event) -> _Out:
        self.window = e.seat
        if e.HasField("closes_at"):
            self.window_closes = e.closes_at.ToNanoseconds() / 1e9
        elif ev.HasField("time"):
            self.window_closes = ev.time.ToNanoseconds() / 1e9 + self.uno_window_ms / 1000
        who = self.who(e.seat, start=True)
        have = self.verb(e.seat, "has", "have")
        return [f"{who} {have} one card and did not call UNO!"], _Kind("uno")

    def _on_uno_window_closed(self, e: game_pb2.UnoWindowClosedEvent, ev: game_pb2.Event) -> _Out:
        self.window = -1
        self.window_closes = None
        if e.caught:
            return None  # the Caught line says it
        return [f"Nobody caught {self.who(e.seat)}."]

    def _on_no_catch(self, e: game_pb2.NoCatchEvent, ev: game_pb2.Event) -> _Out:
        return None  # declining is silence made explicit; not worth a line

    def _on_caught(self, e: game_pb2.CaughtEvent, ev: game_pb2.Event) -> _Out:
        self.seats[e.offender].uno = False
        return [
            f"{self.who(e.catcher, start=True)} caught {self.who(e.offender)} without UNO "
            f"({e.penalty} cards)."
        ], _Kind("catch")

    def _on_hands_swapped(self, e: game_pb2.HandsSwappedEvent, ev: game_pb2.Event) -> _Out:
        a, b = self.seats[e.seat], self.seats[e.target]
        a.cards, b.cards = b.cards, a.cards
        a.uno = b.uno = False
        return [f"{self.who(e.seat, start=True)} swapped hands with {self.who(e.target)}."]

    def _on_hands_rotated(self, e: game_pb2.HandsRotatedEvent, ev: game_pb2.Event) -> _Out:
        d = -1 if e.direction == game_pb2.DIRECTION_DECREASING else 1
        playing = self.playing  # eliminated seats hold no hand: the hands skip them
        counts = [self.seats[i].cards for i in playing]
        for k, i in enumerate(playing):
            self.seats[i].cards = counts[(k - d) % len(playing)]
            self.seats[i].uno = False
        return [f"Every hand passed one seat {direction_words(d)}."]

    def _on_hand_ended(self, e: game_pb2.HandEndedEvent, ev: game_pb2.Event) -> _Out:
        self.phase = "over"
        self.winner = e.winner
        self.current = -1
        self.window = -1
        self.window_closes = None
        self.penalty = 0
        self.drawn = -1
        for i, cards in enumerate(e.hands):
            if i < self.n:
                seat = self.seats[i]
                seat.cards = len(cards.cards)
                # an eliminated seat sat the hand out: it has no hand (the event's is empty,
                # like the winner's), not one it went out with
                seat.revealed = None if seat.eliminated else tuple(c.code for c in cards.cards)
        for i, pts in enumerate(e.points_held):
            if i < self.n:
                self.seats[i].points_held = pts
        who = self.who(e.winner, start=True)
        return [f"{who} went out and won hand {ev.hand_number}!"], _Kind("end")

    def _on_hand_scored(self, e: game_pb2.HandScoredEvent, ev: game_pb2.Event) -> _Out:
        for i, t in enumerate(e.totals):
            if i < self.n:
                self.seats[i].total = t
        gains = [f"{self.who(i)} +{g}" for i, g in enumerate(e.gained) if g]
        return [f"Scored: {', '.join(gains) or 'no points'}."]

    def _on_dealer_draw(self, e: game_pb2.DealerDrawEvent, ev: game_pb2.Event) -> _Out:
        return [f"{self.who(e.seat, start=True)} drew ", CardRef(e.card.code), " for the deal."]

    def _on_dealer_chosen(self, e: game_pb2.DealerChosenEvent, ev: game_pb2.Event) -> _Out:
        return [f"{self.who(e.seat, start=True)} {self.verb(e.seat, 'deals', 'deal')} first."]

    def _on_seat_eliminated(self, e: game_pb2.SeatEliminatedEvent, ev: game_pb2.Event) -> _Out:
        if 0 <= e.seat < self.n:
            self.seats[e.seat].eliminated = True
        who = self.who(e.seat, start=True)
        return [f"{who} reached {e.total} points and {self.verb(e.seat, 'is', 'are')} out."]

    def _on_match_ended(self, e: game_pb2.MatchEndedEvent, ev: game_pb2.Event) -> _Out:
        self.match_over = True
        self.winners = tuple(e.winners)
        for i, t in enumerate(e.totals):
            if i < self.n:
                self.seats[i].total = t
        names = " and ".join(self.who(w) for w in e.winners) or "nobody"
        return [f"Match over: {names} won."], _Kind("end")

    def _on_timed_out(self, e: game_pb2.TimedOutEvent, ev: game_pb2.Event) -> _Out:
        return [
            f"{self.who(e.seat, start=True)} ran out of time; the server played for "
            f"{self.who(e.seat)} (strike {e.strikes})."
        ], _Kind("service")

    def _on_taken_over(self, e: game_pb2.TakenOverEvent, ev: game_pb2.Event) -> _Out:
        self.seats[e.seat].taken_over = True
        bot = BUILTIN_NAMES.get(e.bot, "built-in")
        return [f"The {bot} AI now plays for {self.who(e.seat)}."], _Kind("service")

    def _on_connection(self, e: game_pb2.ConnectionEvent, ev: game_pb2.Event) -> _Out:
        self.seats[e.seat].connected = e.connected
        state = "reconnected" if e.connected else "lost the connection"
        return [f"{self.who(e.seat, start=True)} {state}."], _Kind("service")

    def _on_match_cancelled(self, e: game_pb2.MatchCancelledEvent, ev: game_pb2.Event) -> _Out:
        self.match_over = True
        self.cancelled = e.message or "cancelled"
        self.current = -1
        return [f"Match cancelled: {self.cancelled}."], _Kind("end")


class _Kind(NamedTuple):
    value: str


_Out = list[Part] | tuple[list[Part], _Kind] | None


def _card_list(codes: list[int]) -> list[Part]:
    out: list[Part] = []
    for i, c in enumerate(codes):
        if i:
            out.append(", ")
        out.append(CardRef(c))
    return out


def direction_words(direction: int) -> str:
    """Direction of play in words: seat numbers go up (clockwise) or down."""
    return (
        "clockwise (seat numbers up)" if direction > 0 else "counter-clockwise (seat numbers down)"
    )
