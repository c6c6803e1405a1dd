"""A table's seat log: every event of the match once, and what each seat has been sent of it.

The log holds the match's events as :class:`Record` s in match seat numbering, each seat's
cursor (``Seat.cursor``: the last sequence its bot was sent), and the redaction and encoding of
events for each viewer: only the owner of a Drew or Dealt event and the challenger of
ChallengeEvidence see more than everyone else, so every other view of an event is converted
(and encoded) once and shared by every seat. Its owner, the :class:`~.table.Table`, is the only
caller that records or sends; spectators only read the records and :meth:`SeatLog.changed`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

import structlog

from uno_server.engine import events as E
from uno_server.engine.match import Match
from uno_server.engine.views import SPECTATOR, redact
from uno_server.gen.uno.v1 import bot_pb2, game_pb2

from . import convert, ratelog, wire
from .convert import ServiceEvent
from .seats import Outbox, ReplayBudget, Seat

EVENTS_INLINE: Final = 64
"""At most this many events ride inside a DecisionRequest or MatchEnded; a longer backlog goes
ahead of it in SeatEvents messages of at most CHUNK_BYTES each."""
CHUNK_BYTES: Final = 256 * 1024


@dataclass(slots=True)
class Record:
    """One event of the match with its sequence number (1-based) and wall-clock time."""

    sequence: int
    hand_number: int
    wall: float
    event: E.Event | ServiceEvent  # in match seat numbering
    extra: Any = None  # HandStarted: the hand's match seats; HandEnded: (seed, dealer, actions)
    public: game_pb2.Event | None = None  # what every seat but the owner sees, cached
    public_field: bytes | None = None  # the same as a DecisionRequest.events entry (_HIDDEN:
    # nothing to see)
    private: bool = False  # one seat sees more of it than everyone else


class SeatLog:
    """The events of one match, and each seat's place in them (see the module docstring)."""

    __slots__ = (
        "_changed",
        "_h2m",
        "_ident",
        "log",
        "lookup_session",
        "match",
        "match_id",
        "records",
        "seats",
    )

    def __init__(
        self,
        match_id: str,
        match: Match,
        seats: list[Seat],
        lookup_session: Callable[[str], Outbox | None],
        records: list[Record],
    ) -> None:
        self.match_id = match_id
        self.match = match
        self.seats = seats
        self.lookup_session = lookup_session
        self.records = records
        self._changed: asyncio.Future[None] | None = None
        self._h2m: list[int] = list(range(len(seats)))
        self._ident = True
        self.log: Any = structlog.get_logger("uno.table")

    def renumber(self, h2m: list[int], ident: bool, log: Any) -> None:
        """The hand just dealt: its seat numbering (hand seat i is match seat h2m[i]) and the
        table's logger bound to it."""
        self._h2m = h2m
        self._ident = ident
        self.log = log

    # ------------------------------------------------------------------ recording

    def record(self, event: E.Event | ServiceEvent, extra: Any = None) -> None:
        rec = Record(len(self.records) + 1, self.match.hand_number, time.time(), event, extra)
        rec.private = isinstance(event, _PRIVATE)
        self.records.append(rec)
        changed = self._changed
        if changed is not None:
            self._changed = None
            if not changed.done():
                changed.set_result(None)

    def record_all(self, events: list[E.Event]) -> None:
        """Record the events one engine call caused (they share one timestamp)."""
        records = self.records
        hand_number = self.match.hand_number
        now = time.time()
        remap = None if self._ident else self._h2m
        n = len(self.seats)
        for e in events:
            extra = self._hand_extra(e) if type(e) in _HAND_MARKS else None
            if remap is not None:
                e = convert.remap_event(e, remap, n)
            # the first dealer's draw comes before any hand: hand 0, as game.proto says
            hn = 0 if type(e) in _BEFORE_HANDS else hand_number
            rec = Record(len(records) + 1, hn, now, e, extra)
            rec.private = isinstance(e, _PRIVATE)
            records.append(rec)
        changed = self._changed
        if changed is not None:
            self._changed = None
            if not changed.done():
                changed.set_result(None)

    def _hand_extra(self, e: E.Event) -> Any:
        if type(e) is E.HandStarted:
            return tuple(self._h2m)
        hand = self.match.hand
        h2m = self._h2m
        actions = tuple(
            (s if s < 0 else h2m[s], a if self._ident else convert.id_to_wire(a, h2m))
            for s, a in hand.actions
        )
        return (hand.seed, h2m[hand.dealer], actions)

    def changed(self) -> asyncio.Future[None]:
        """A future resolved when the next event is recorded or the match ends."""
        fut = self._changed
        if fut is None or fut.done():  # a cancelled one must not end the next waiter's wait
            fut = self._changed = asyncio.get_running_loop().create_future()
        return fut

    def notify(self) -> None:
        """Wake whoever waits on :meth:`changed` (the match ended)."""
        changed = self._changed
        if changed is not None:
            self._changed = None
            if not changed.done():
                changed.set_result(None)

    # ------------------------------------------------------------------ views

    def _to_proto(self, rec: Record, viewer: int) -> game_pb2.Event | None:
        """The event as ``viewer`` (a match seat, or SPECTATOR) sees it (views.redact decides
        what). Only the owner of a Drew or Dealt event and the challenger of ChallengeEvidence
        see more than everyone else, so every other view of an event is converted once and
        cached."""
        ev = rec.event
        if isinstance(ev, _PRIVATE):
            owner = ev.challenger if isinstance(ev, E.ChallengeEvidence) else ev.seat
            if viewer == owner:
                return self._convert(rec, ev)
        if rec.public is None:
            if not isinstance(ev, ServiceEvent.__args__):
                red = redact(ev, viewer)
                if red is None:
                    return None
                ev = red
            rec.public = self._convert(rec, ev)
        return rec.public

    def _event_field(self, rec: Record, viewer: int) -> bytes | None:
        """:meth:`_to_proto` as a DecisionRequest.events entry; every view but the owner's is
        encoded once per event."""
        ev = rec.event
        if rec.private:
            owner = ev.challenger if isinstance(ev, E.ChallengeEvidence) else ev.seat  # type: ignore[union-attr]
            if viewer == owner:
                if type(ev) is E.Drew or type(ev) is E.Dealt:  # the owner's own cards
                    raw = wire.public_event(rec.sequence, rec.hand_number, int(rec.wall * 1e9), ev)
                    assert raw is not None
                    return wire.event_field(raw)
                return wire.event_field(bytes(self._convert(rec, ev).SerializeToString()))
        b = rec.public_field
        if b is None:
            raw = None
            if type(ev) in wire.FAST_EVENTS:  # the events of nearly every move: encoded by hand
                wall_ns = int(rec.wall * 1e9)
                if type(ev) is E.Dealt:  # its number of cards is public, the cards are not
                    raw = wire.public_event(rec.sequence, rec.hand_number, wall_ns, ev, False)
                else:
                    pub = redact(ev, SPECTATOR) if rec.private else ev
                    raw = wire.public_event(rec.sequence, rec.hand_number, wall_ns, pub)
            if raw is None:
                m = self._to_proto(rec, viewer)
                raw = None if m is None else bytes(m.SerializeToString())
            b = _HIDDEN if raw is None else wire.event_field(raw)
            rec.public_field = b
        return None if b is _HIDDEN else b

    def spectator_event(self, rec: Record) -> game_pb2.Event | None:
        return self._to_proto(rec, SPECTATOR)

    def spectator_field(self, rec: Record) -> bytes | None:
        """:meth:`spectator_event` encoded as a repeated Event field 16 (AwaitMatchResponse), or
        None: the spectator sees nothing of it. The seats' encoding, made once per event."""
        return self._event_field(rec, SPECTATOR)

    def _convert(self, rec: Record, ev: E.Event | ServiceEvent) -> game_pb2.Event:
        msg = convert.event_to_proto(ev, rec.sequence, rec.hand_number, convert.timestamp(rec.wall))
        t = type(ev)
        if t is E.Dealt:
            orig = rec.event
            assert isinstance(orig, E.Dealt)
            msg.dealt.amount = len(orig.cards)  # the count is public; the cards are not
        elif t is E.HandStarted:
            msg.hand_started.seats.extend(rec.extra)
        elif t is E.HandEnded:
            seed, dealer, actions = rec.extra
            he = msg.hand_ended
            he.seed = seed
            he.dealer = dealer
            for s, a in actions:
                he.actions.add(seat=s, action_id=a)
        elif t is E.UnoWindowOpened:
            ms = self.match.rules.uno_window_ms
            msg.uno_window_opened.closes_at.CopyFrom(convert.timestamp(rec.wall + ms / 1000))
        elif t is E.MatchEnded:
            msg.match_ended.seed = self.match.seed
        return msg

    # ------------------------------------------------------------------ delivery

    def events_for(self, st: Seat, outbox: Outbox | None) -> list[game_pb2.Event]:
        """The seat's undelivered events, at most EVENTS_INLINE of them: an older backlog goes
        to ``outbox`` first, in SeatEvents messages."""
        start = st.cursor
        records = self.records
        if len(records) - start > EVENTS_INLINE and outbox is not None:
            self.flush(st, outbox, keep=EVENTS_INLINE)
            start = st.cursor
        out = []
        seat = st.seat
        for rec in records[start:]:
            m = self._to_proto(rec, seat)
            if m is not None:
                out.append(m)
        st.cursor = len(records)
        return out

    def event_fields_for(self, st: Seat, outbox: Outbox) -> list[bytes]:
        """:meth:`events_for` as encoded DecisionRequest.events entries (the hot path)."""
        start = st.cursor
        records = self.records
        if len(records) - start > EVENTS_INLINE:
            self.flush(st, outbox, keep=EVENTS_INLINE)
            start = st.cursor
        out = []
        seat = st.seat
        for rec in records[start:]:
            b = rec.public_field
            if b is None or rec.private:
                b = self._event_field(rec, seat)
                if b is None:
                    continue
            elif b is _HIDDEN:
                continue
            out.append(b)
        st.cursor = len(records)
        return out

    def flush(self, st: Seat, outbox: Outbox, keep: int) -> None:
        """Send the seat's undelivered events, all but the last ``keep``, as SeatEvents
        messages of at most CHUNK_BYTES each."""
        records = self.records
        stop = max(st.cursor, len(records) - keep)
        chunk: list[game_pb2.Event] = []
        size = 0
        for rec in records[st.cursor : stop]:
            m = self._to_proto(rec, st.seat)
            if m is None:
                continue
            n = m.ByteSize() + 4
            if chunk and size + n > CHUNK_BYTES:
                self._send_events(st, outbox, chunk)
                chunk, size = [], 0
            chunk.append(m)
            size += n
        if chunk:
            self._send_events(st, outbox, chunk)
        st.cursor = stop

    def _send_events(self, st: Seat, outbox: Outbox, events: list[game_pb2.Event]) -> None:
        msg = bot_pb2.PlayResponse()
        se = msg.seat_events
        se.match_id = self.match_id
        se.seat = st.seat
        se.events.extend(events)
        outbox.send(msg)

    def push(self) -> None:
        """Hello.push_events: every seat whose bot asked gets its new events now."""
        for st in self.seats:
            if st.push and st.cursor < len(self.records) and st.ai is None:
                outbox = self.lookup_session(st.bot_name)
                if outbox is not None:
                    self.flush(st, outbox, keep=0)

    def rewind(self, st: Seat, last: int | None, budget: ReplayBudget) -> None:
        """Send the seat's events after sequence ``last`` again, within the bot's budget."""
        if last is None or last >= st.cursor:
            return
        again = st.cursor - max(0, last)
        if again > budget.left:
            ratelog.CONNECTIONS.log(
                ("replay refused", st.bot_name),
                self.log.warning,
                "replay refused: over the bot's replay budget",
                seat=st.seat,
                bot=st.bot_name,
                events=again,
            )
            return
        budget.left -= again
        st.cursor = max(0, last)


_PRIVATE: Final = (E.Drew, E.Dealt, E.ChallengeEvidence)
_HIDDEN: Final = b"<hidden>"  # Record.public_bytes of an event nobody but its owner sees
_HAND_MARKS: Final = frozenset({E.HandStarted, E.HandEnded})  # events the table adds to
_BEFORE_HANDS: Final = frozenset({E.DealerDraw, E.DealerChosen})  # hand_number 0 on the wire
