"""One match in play: drives the engine, asks seats for decisions, enforces the time control.

The table is the only writer of its match. Everything runs on the event loop, so an answer from a
bot (:meth:`Table.submit`) and the table's own timers never interleave inside an engine call.

Per seat, at most one decision request is open. A request stays open while the seat's legal
actions stay the same (a UNO window answered by others does not disturb it); any other change
closes it (``SUPERSEDED``) and the next request carries the new view.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import structlog

from uno_server.engine import actions as A
from uno_server.engine import events as E
from uno_server.engine.bots import Bot, HeuristicBot, RandomBot
from uno_server.engine.errors import (
    EngineError,
    IllegalActionError,
    MalformedActionError,
    WrongSeatError,
)
from uno_server.engine.hand import CHALLENGE, CHOOSE_COLOR, DRAWN, OVER, STACK, SYSTEM
from uno_server.engine.match import Match
from uno_server.engine.views import SPECTATOR, redact
from uno_server.engine.views import seat_view as engine_view
from uno_server.gen.uno.v1 import bot_pb2, errors_pb2, game_pb2

from . import convert
from .convert import Connection, MatchCancelled, ServiceEvent, TakenOver, TimedOut
from .metrics import ServiceMetrics

log = structlog.get_logger("uno.table")

BUILTIN_NAMES: Final[dict[int, str]] = {
    game_pb2.BUILTIN_BOT_RANDOM: "random",
    game_pb2.BUILTIN_BOT_HEURISTIC: "heuristic",
}

# engine error reasons -> protocol ErrorReason
_REASONS: Final = {
    "MALFORMED_ACTION": errors_pb2.ERROR_REASON_MALFORMED_ACTION,
    "NOT_YOUR_TURN": errors_pb2.ERROR_REASON_NOT_YOUR_TURN,
    "ALREADY_ANSWERED": errors_pb2.ERROR_REASON_ALREADY_ANSWERED,
    "CARD_NOT_HELD": errors_pb2.ERROR_REASON_CARD_NOT_HELD,
    "ONLY_DRAWN_CARD": errors_pb2.ERROR_REASON_ONLY_DRAWN_CARD,
    "ONLY_STACK": errors_pb2.ERROR_REASON_ONLY_STACK,
    "UNO_NOT_ALLOWED": errors_pb2.ERROR_REASON_UNO_NOT_ALLOWED,
    "NOT_CATCHABLE": errors_pb2.ERROR_REASON_NOT_CATCHABLE,
    "HAND_OVER": errors_pb2.ERROR_REASON_MATCH_ALREADY_ENDED,
}
INVALID_ARGUMENT: Final = 3
NOT_FOUND: Final = 5
FAILED_PRECONDITION: Final = 9
ABORTED: Final = 10


def make_builtin(kind: int, seed: int) -> Bot:
    return RandomBot(seed) if kind == game_pb2.BUILTIN_BOT_RANDOM else HeuristicBot(seed)


class Outbox(Protocol):
    """Where a table sends a bot's messages: its live stream session."""

    bot_name: str

    def send(self, msg: bot_pb2.PlayResponse) -> None: ...


@dataclass(frozen=True, slots=True)
class TimeControl:
    """Validated time control (milliseconds)."""

    decision_ms: int = 1000
    time_bank_ms: int = 0
    strikes_before_takeover: int = 3
    reconnect_grace_ms: int = 5000
    takeover_bot: int = game_pb2.BUILTIN_BOT_HEURISTIC

    def to_proto(self) -> game_pb2.TimeControl:
        return game_pb2.TimeControl(
            decision_ms=self.decision_ms,
            time_bank_ms=self.time_bank_ms,
            strikes_before_takeover=self.strikes_before_takeover,
            reconnect_grace_ms=self.reconnect_grace_ms,
            takeover_bot=self.takeover_bot,
        )


@dataclass(slots=True)
class OpenRequest:
    request_id: str
    seat: int
    legal: list[int]
    required: bool
    sent_at: float
    deadline: float  # loop time, seconds; inf for requests without a deadline


@dataclass(slots=True)
class Seat:
    seat: int
    bot_name: str  # "" for a built-in seat
    builtin: int  # BuiltinBot number for built-in seats (and after a takeover)
    ai: Bot | None
    bank_ms: int
    strikes: int = 0
    rejected: int = 0
    decisions: int = 0
    response_ms_total: float = 0.0
    response_ms: list[int] = field(default_factory=list)
    taken_over: bool = False
    takeover_cause: int = 0
    cursor: int = 0
    open: OpenRequest | None = None
    disconnected_since: float | None = None
    bot_version: str = ""


@dataclass(slots=True)
class Record:
    """One event of the match with its sequence number (1-based) and wall-clock time."""

    sequence: int
    hand_number: int
    wall: float
    event: E.Event | ServiceEvent
    hand_index: int  # which entry of Table.hands this event belongs to (-1: match level)
    public: game_pb2.Event | None = None  # the message every seat but the owner sees, cached


@dataclass
class Table:
    match_id: str
    match: Match
    seats: list[Seat]
    time_control: TimeControl
    metrics: ServiceMetrics
    lookup_session: Callable[[str], Outbox | None]
    labels: dict[str, str] = field(default_factory=dict)
    idempotency_key: str = ""
    created_at: float = field(default_factory=time.time)
    started_at: float = 0.0
    ended_at: float = 0.0
    state: int = 1  # MatchState RUNNING
    end_cause: int = 0
    end_message: str = ""
    records: list[Record] = field(default_factory=list)
    draining: bool = False
    task: asyncio.Task[None] | None = None

    def __post_init__(self) -> None:
        self._waiter: asyncio.Future[bool] | None = None
        self._requests: dict[str, OpenRequest] = {}
        self._closed_ids: dict[str, int] = {}
        self._next_request = 0
        self._window_deadline: float | None = None
        self._window_wall: float = 0.0
        self._spectators: list[asyncio.Queue[game_pb2.Event | None]] = []
        self._rules_proto = convert.rules_to_proto(self.match.rules)
        self._tc_proto = self.time_control.to_proto()
        self._hands = [self.match.hand]
        self._log = log.bind(match_id=self.match_id)
        self._record_all(self.match.log)
        self._cancel_reason: tuple[int, str] | None = None

    # ------------------------------------------------------------------ running

    async def run(self) -> None:
        self.started_at = time.time()
        self.metrics.active_matches.inc()
        self._log.info(
            "match started", seats=[s.bot_name or BUILTIN_NAMES[s.builtin] for s in self.seats]
        )
        for st in self.seats:
            if st.bot_name:
                self._send_to(st, bot_pb2.PlayResponse(match_started=self._match_started(st)))
        cause = game_pb2.END_CAUSE_COMPLETED
        try:
            while True:
                await self._play_hand()
                if self.match.over:
                    break
                if self.draining:
                    cause = game_pb2.END_CAUSE_SHUTDOWN
                    self._cancel_reason = (cause, "the server is shutting down")
                    break
                hand = self.match.next_hand()
                self._hands.append(hand)
                self._record_all(hand.log)
        except asyncio.CancelledError:
            cause = self._cancel_reason[0] if self._cancel_reason else game_pb2.END_CAUSE_CANCELLED
            self._finish(cause)
            raise
        except Exception:
            self._log.exception("table failed")
            self._cancel_reason = (game_pb2.END_CAUSE_CANCELLED, "internal error")
            self._finish(game_pb2.END_CAUSE_CANCELLED)
            raise
        self._finish(cause)

    def cancel(self, cause: int, message: str) -> None:
        self._cancel_reason = (cause, message)
        if self.task is not None and not self.task.done():
            self.task.cancel()

    async def _play_hand(self) -> None:
        hand = self.match.hand
        loop = asyncio.get_running_loop()
        while hand.phase != OVER:
            now = loop.time()
            self._check_disconnects(now)
            pending = hand.pending_seats()
            acted = False
            for s in pending:
                st = self.seats[s]
                if st.ai is not None:
                    legal = hand.legal_actions(s)
                    if legal:
                        self._apply(s, st.ai.choose(engine_view(hand, s)), "builtin")
                        acted = True
                        break
            if acted:
                await asyncio.sleep(0)  # let other tables and the RPCs run between AI moves
                continue
            wake = float("inf")
            for s in pending:
                st = self.seats[s]
                legal = hand.legal_actions(s)
                if not legal:
                    continue
                req = st.open
                if req is None or req.legal != legal:
                    req = self._open_request(st, legal, now)
                if req.required:
                    wake = min(wake, req.deadline)
            if self._window_deadline is not None:
                wake = min(wake, self._window_deadline)
            for st in self.seats:
                if st.disconnected_since is not None and st.ai is None:
                    wake = min(
                        wake, st.disconnected_since + self.time_control.reconnect_grace_ms / 1000
                    )
            if not await self._wait(loop, wake):
                self._on_timer(loop.time())

    async def _wait(self, loop: asyncio.AbstractEventLoop, wake: float) -> bool:
        """Wait until something changes (True) or the loop clock reaches ``wake`` (False).
        A bare future and one timer handle: no task per move, unlike asyncio.wait_for."""
        fut: asyncio.Future[bool] = loop.create_future()
        self._waiter = fut
        timer = None if wake == float("inf") else loop.call_at(wake, _resolve, fut, False)
        try:
            return await fut
        finally:
            self._waiter = None
            if timer is not None:
                timer.cancel()

    def _wake(self) -> None:
        fut = self._waiter
        if fut is not None and not fut.done():
            fut.set_result(True)

    def _on_timer(self, now: float) -> None:
        hand = self.match.hand
        if self._window_deadline is not None and now >= self._window_deadline:
            self._apply(SYSTEM, 6, "system")
            return
        for st in self.seats:
            req = st.open
            if req is None or not req.required or now < req.deadline:
                continue
            self._timeout(st, req)
            if hand.phase == OVER:
                return

    def _timeout(self, st: Seat, req: OpenRequest) -> None:
        hand = self.match.hand
        seat = st.seat
        default = hand.default_action(seat)
        st.strikes += 1
        st.bank_ms = 0
        self.metrics.timeouts.labels(st.bot_name).inc()
        self._log.warning(
            "decision timed out",
            seat=seat,
            bot=st.bot_name,
            strikes=st.strikes,
            hand=hand.hand_number,
        )
        self._close(st, bot_pb2.CLOSE_REASON_TIMED_OUT, default)
        if default is not None:
            self._apply(seat, default, "timeout")
            if default == A.DRAW and hand.phase == DRAWN and hand.current == seat:
                self._apply(seat, A.PASS, "timeout")  # the default is "draw, then pass"
        self._record(TimedOut(seat, -1 if default is None else default, st.strikes))
        if st.strikes >= self.time_control.strikes_before_takeover:
            self._take_over(st, game_pb2.END_CAUSE_STRIKES)

    def _take_over(self, st: Seat, cause: int) -> None:
        if st.ai is not None:
            return
        st.ai = make_builtin(self.time_control.takeover_bot, self.match.seed + st.seat)
        st.builtin = self.time_control.takeover_bot
        st.taken_over = True
        st.takeover_cause = cause
        self.metrics.takeovers.labels(
            st.bot_name, "strikes" if cause == game_pb2.END_CAUSE_STRIKES else "disconnected"
        ).inc()
        self._log.warning(
            "seat taken over by the built-in AI",
            seat=st.seat,
            bot=st.bot_name,
            cause=game_pb2.EndCause.Name(cause),
        )
        self._close(st, bot_pb2.CLOSE_REASON_TAKEN_OVER, None)
        self._record(TakenOver(st.seat, st.builtin, cause))
        self._wake()

    def _check_disconnects(self, now: float) -> None:
        grace = self.time_control.reconnect_grace_ms / 1000
        for st in self.seats:
            if (
                st.ai is None
                and st.disconnected_since is not None
                and now - st.disconnected_since >= grace
            ):
                self._take_over(st, game_pb2.END_CAUSE_DISCONNECTED)

    # ------------------------------------------------------------------ applying

    def _apply(self, seat: int, action_id: int, source: str) -> None:
        hand = self.match.hand
        had_window = hand.window >= 0
        events = self.match.apply(seat, action_id)
        self.metrics.moves.labels(source).inc()
        self._record_all(events)
        if hand.window >= 0 and not had_window:
            loop = asyncio.get_running_loop()
            ms = self.match.rules.uno_window_ms
            self._window_deadline = loop.time() + ms / 1000
            self._window_wall = time.time() + ms / 1000
        elif hand.window < 0:
            self._window_deadline = None
        if hand.phase == OVER:
            self.metrics.hands.inc()
            for st in self.seats:
                if st.open is not None:
                    self._close(st, bot_pb2.CLOSE_REASON_HAND_ENDED, None)
        else:
            # Close at once every request this action made moot (a catch or a late call ends
            # the window for everyone), so a bot's late answer to it is stale (ABORTED), not an
            # illegal action held against its seat.
            # (The acting seat's own request is settled by the caller.)
            for st in self.seats:
                req = st.open
                if req is not None and st.seat != seat and hand.legal_actions(st.seat) != req.legal:
                    self._close(st, bot_pb2.CLOSE_REASON_SUPERSEDED, None)
        self._wake()

    def submit(
        self, outbox: Outbox, request_id: str, action_id: int | None
    ) -> bot_pb2.ActionResult:
        """A bot's answer. Returns the ActionResult to send back on its stream."""
        received = time.time()
        res = bot_pb2.ActionResult(request_id=request_id, match_id=self.match_id)
        res.received_at.FromNanoseconds(int(received * 1e9))
        req = self._requests.get(request_id)
        if req is None:
            if request_id in self._closed_ids:
                return self._reject(
                    res,
                    None,
                    ABORTED,
                    errors_pb2.ERROR_REASON_STALE_REQUEST,
                    "that request is closed (answered, timed out or superseded)",
                )
            return self._reject(
                res,
                None,
                NOT_FOUND,
                errors_pb2.ERROR_REASON_REQUEST_NOT_FOUND,
                f"no open request {request_id!r} in match {self.match_id}",
            )
        st = self.seats[req.seat]
        res.seat = req.seat
        if st.bot_name != outbox.bot_name:
            return self._reject(
                res,
                None,
                FAILED_PRECONDITION,
                errors_pb2.ERROR_REASON_NOT_YOUR_SEAT,
                f"seat {req.seat} belongs to another bot",
            )
        if action_id is None:
            return self._reject(
                res,
                st,
                INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_MALFORMED_ACTION,
                "action_id is missing (0 means draw and must be set explicitly)",
            )
        res.action_id = action_id
        try:
            self._apply(req.seat, action_id, "bot")
        except MalformedActionError as exc:
            return self._reject(
                res, st, INVALID_ARGUMENT, errors_pb2.ERROR_REASON_MALFORMED_ACTION, str(exc)
            )
        except (WrongSeatError, IllegalActionError) as exc:
            return self._reject(
                res,
                st,
                FAILED_PRECONDITION,
                _REASONS.get(exc.reason, errors_pb2.ERROR_REASON_ILLEGAL_ACTION),
                str(exc),
            )
        except EngineError as exc:  # pragma: no cover - every engine error is one of the above
            return self._reject(
                res, st, FAILED_PRECONDITION, errors_pb2.ERROR_REASON_ILLEGAL_ACTION, str(exc)
            )
        elapsed_ms = (asyncio.get_running_loop().time() - req.sent_at) * 1000
        if req.required and elapsed_ms > self.time_control.decision_ms:
            st.bank_ms = max(0, st.bank_ms - int(elapsed_ms - self.time_control.decision_ms))
        st.decisions += 1
        st.response_ms_total += elapsed_ms
        if len(st.response_ms) < 10_000:
            st.response_ms.append(int(elapsed_ms))
        self.metrics.decision_latency.labels(st.bot_name).observe(elapsed_ms / 1000)
        if st.open is req:
            st.open = None
        self._forget(req)
        res.accepted = True
        res.response_ms = int(elapsed_ms)
        res.time_bank_ms = st.bank_ms
        return res

    def _reject(
        self, res: bot_pb2.ActionResult, st: Seat | None, code: int, reason: int, message: str
    ) -> bot_pb2.ActionResult:
        res.accepted = False
        res.code = code
        res.reason = reason
        res.message = message
        if st is not None:
            st.rejected += 1
            res.request_open = st.open is not None and st.open.request_id == res.request_id
            res.time_bank_ms = st.bank_ms
            self.metrics.illegal.labels(
                st.bot_name, errors_pb2.ErrorReason.Name(reason)[13:].lower()
            ).inc()
            self._log.info(
                "action rejected",
                seat=st.seat,
                bot=st.bot_name,
                reason=errors_pb2.ErrorReason.Name(reason),
                detail=message,
            )
        return res

    # ------------------------------------------------------------------ requests

    def _open_request(self, st: Seat, legal: list[int], now: float) -> OpenRequest:
        hand = self.match.hand
        if st.open is not None:
            self._close(st, bot_pb2.CLOSE_REASON_SUPERSEDED, None)
        self._next_request += 1
        seat = st.seat
        window = hand.window >= 0
        required = not window
        tc = self.time_control
        if required:
            deadline = now + (tc.decision_ms + st.bank_ms) / 1000
            wall_deadline = time.time() + (tc.decision_ms + st.bank_ms) / 1000
        else:
            deadline = self._window_deadline or now
            wall_deadline = self._window_wall
        req = OpenRequest(
            f"{self.match_id}-{self._next_request}", seat, legal, required, now, deadline
        )
        st.open = req
        self._requests[req.request_id] = req
        self._send_request(st, req, wall_deadline, now, resent=False)
        return req

    def _send_request(
        self, st: Seat, req: OpenRequest, wall_deadline: float, now: float, resent: bool
    ) -> None:
        outbox = self.lookup_session(st.bot_name)
        if outbox is None:
            return  # sent again when the bot reconnects
        hand = self.match.hand
        seat = st.seat
        window = hand.window >= 0
        if window:
            prompt = bot_pb2.PROMPT_LATE_UNO if seat == hand.window else bot_pb2.PROMPT_UNO_WINDOW
        elif seat != hand.current:
            prompt = bot_pb2.PROMPT_JUMP_IN
        else:
            prompt = _PROMPTS.get(hand.phase, bot_pb2.PROMPT_TURN)
        msg = bot_pb2.PlayResponse()
        dr = msg.decision_request
        dr.request_id = req.request_id
        dr.match_id = self.match_id
        dr.seat = seat
        dr.hand_number = hand.hand_number
        dr.turn = hand.turn
        dr.prompt = prompt
        dr.required = req.required
        dr.deadline.FromNanoseconds(int(wall_deadline * 1e9))
        dr.time_left_ms = (
            max(0, int((req.deadline - now) * 1000)) if req.deadline != float("inf") else 0
        )
        dr.decision_ms = self.time_control.decision_ms
        dr.time_bank_ms = st.bank_ms
        dr.strikes = st.strikes
        default = hand.default_action(seat)
        if default is not None:
            dr.default_action_id = default
        closes = convert.timestamp(self._window_wall) if window else None
        dr.view.CopyFrom(
            convert.seat_view(
                hand, seat, self.match.totals, [s.taken_over for s in self.seats], closes
            )
        )
        dr.legal_actions.extend(convert.legal_action(a) for a in req.legal)
        dr.events.extend(self._events_for(st))
        dr.rules.CopyFrom(self._rules_proto)
        dr.sent_at.FromNanoseconds(time.time_ns())
        dr.resent = resent
        outbox.send(msg)

    def _close(self, st: Seat, reason: int, applied: int | None) -> None:
        req = st.open
        if req is None:
            return
        st.open = None
        self._forget(req)
        outbox = self.lookup_session(st.bot_name) if st.bot_name else None
        if outbox is not None:
            msg = bot_pb2.PlayResponse()
            rc = msg.request_closed
            rc.request_id = req.request_id
            rc.match_id = self.match_id
            rc.seat = st.seat
            rc.reason = reason
            rc.strikes = st.strikes
            if applied is not None:
                rc.applied_action_id = applied
            outbox.send(msg)

    def _forget(self, req: OpenRequest) -> None:
        self._requests.pop(req.request_id, None)
        self._closed_ids[req.request_id] = req.seat
        if len(self._closed_ids) > 4096:
            for key in list(self._closed_ids)[:2048]:
                del self._closed_ids[key]

    # ------------------------------------------------------------------ connections

    def bot_connected(self, bot_name: str) -> None:
        """The bot (re)connected: resend its open requests."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        for st in self.seats:
            if st.bot_name != bot_name or st.ai is not None:
                continue
            if st.disconnected_since is not None:
                st.disconnected_since = None
                self._record(Connection(st.seat, True))
            outbox = self.lookup_session(bot_name)
            if outbox is not None:
                outbox.send(bot_pb2.PlayResponse(match_started=self._match_started(st)))
            if st.open is not None:
                wall = time.time() + (st.open.deadline - now)
                self._send_request(st, st.open, wall, now, resent=True)

    def bot_disconnected(self, bot_name: str) -> None:
        now = asyncio.get_running_loop().time()
        for st in self.seats:
            if st.bot_name == bot_name and st.ai is None and st.disconnected_since is None:
                st.disconnected_since = now
                self._record(Connection(st.seat, False))
                self._log.warning("bot disconnected", seat=st.seat, bot=bot_name)
        self._wake()

    def uses_bot(self, bot_name: str) -> bool:
        return any(st.bot_name == bot_name for st in self.seats)

    # ------------------------------------------------------------------ events

    def _record(self, event: E.Event | ServiceEvent) -> None:
        rec = Record(
            len(self.records) + 1, self.match.hand_number, time.time(), event, len(self._hands) - 1
        )
        self.records.append(rec)
        if self._spectators:
            msg = self._to_proto(rec, SPECTATOR)
            if msg is not None:
                for q in self._spectators:
                    _offer(q, msg)

    def _record_all(self, events: list[E.Event]) -> None:
        for e in events:
            self._record(e)

    def _to_proto(self, rec: Record, viewer: int) -> game_pb2.Event | None:
        """The event as ``viewer`` sees it (views.redact decides what). Only the owner of a
        Drew or Dealt event and the challenger of ChallengeEvidence see more than everyone
        else, so every other view of an event is converted once and cached."""
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

    def _convert(self, rec: Record, ev: E.Event | ServiceEvent) -> game_pb2.Event:
        hand = self._hands[rec.hand_index] if rec.hand_index >= 0 else None
        msg = convert.event_to_proto(
            ev, rec.sequence, rec.hand_number, convert.timestamp(rec.wall), hand
        )
        if isinstance(ev, E.MatchEnded):
            msg.match_ended.seed = self.match.seed
        return msg

    def _events_for(self, st: Seat) -> list[game_pb2.Event]:
        out = []
        for rec in self.records[st.cursor :]:
            m = self._to_proto(rec, st.seat)
            if m is not None:
                out.append(m)
        st.cursor = len(self.records)
        return out

    def spectate(self, after: int) -> asyncio.Queue[game_pb2.Event | None]:
        """A queue of public events after sequence ``after``; ``None`` marks the end."""
        q: asyncio.Queue[game_pb2.Event | None] = asyncio.Queue(maxsize=10_000)
        for rec in self.records[max(0, after) :]:
            m = self._to_proto(rec, SPECTATOR)
            if m is not None:
                _offer(q, m)
        if self.state == 1:
            self._spectators.append(q)
        else:
            _offer(q, None)
        return q

    def unspectate(self, q: asyncio.Queue[game_pb2.Event | None]) -> None:
        if q in self._spectators:
            self._spectators.remove(q)

    # ------------------------------------------------------------------ start and end

    def _match_started(self, st: Seat) -> bot_pb2.MatchStarted:
        ms = bot_pb2.MatchStarted(match_id=self.match_id, seat=st.seat)
        for other in self.seats:
            a = ms.seats.add(seat=other.seat, bot_version=other.bot_version)
            a.player.CopyFrom(self.player_proto(other))
        ms.rules.CopyFrom(self._rules_proto)
        ms.time_control.CopyFrom(self._tc_proto)
        ms.started_at.FromNanoseconds(int((self.started_at or time.time()) * 1e9))
        for k, v in self.labels.items():
            ms.labels[k] = v
        return ms

    @staticmethod
    def player_proto(st: Seat) -> game_pb2.Player:
        if st.bot_name:
            return game_pb2.Player(bot_name=st.bot_name)
        return game_pb2.Player(builtin=st.builtin)

    def _finish(self, cause: int) -> None:
        if self.state != 1:
            return
        self.ended_at = time.time()
        self.end_cause = cause
        self.state = 2 if cause == game_pb2.END_CAUSE_COMPLETED else 3
        if cause != game_pb2.END_CAUSE_COMPLETED:
            msg = self._cancel_reason[1] if self._cancel_reason else "cancelled"
            self.end_message = msg
            self._record(MatchCancelled(cause, msg))
        self.metrics.active_matches.dec()
        self.metrics.matches.labels(game_pb2.EndCause.Name(cause)[10:].lower()).inc()
        winners = set(self.match.winners)
        for st in self.seats:
            if st.open is not None:
                self._close(st, bot_pb2.CLOSE_REASON_MATCH_ENDED, None)
            if not st.bot_name:
                continue
            outbox = self.lookup_session(st.bot_name)
            if outbox is None:
                continue
            me = bot_pb2.MatchEnded(
                match_id=self.match_id,
                seat=st.seat,
                cause=cause,
                winners=sorted(winners),
                totals=self.match.totals,
                won=st.seat in winners,
                strikes=st.strikes,
                rejected_actions=st.rejected,
                taken_over=st.taken_over,
            )
            me.events.extend(self._events_for(st))
            outbox.send(bot_pb2.PlayResponse(match_ended=me))
        for q in self._spectators:
            _offer(q, None)
        self._spectators.clear()
        self._log.info(
            "match ended",
            cause=game_pb2.EndCause.Name(cause),
            winners=sorted(winners),
            totals=self.match.totals,
            hands=self.match.hand_number,
        )

    def _send_to(self, st: Seat, msg: bot_pb2.PlayResponse) -> None:
        outbox = self.lookup_session(st.bot_name)
        if outbox is not None:
            outbox.send(msg)

    def info(self) -> Any:
        """MatchInfo message for the admin service."""
        from uno_server.gen.uno.v1 import admin_pb2

        mi = admin_pb2.MatchInfo(
            match_id=self.match_id,
            state=self.state,
            seed=self.match.seed,
            hand_number=self.match.hand_number,
            totals=self.match.totals,
            winners=list(self.match.winners),
            idempotency_key=self.idempotency_key,
            end_cause=self.end_cause,
            end_message=self.end_message,
            last_sequence=len(self.records),
        )
        mi.rules.CopyFrom(self._rules_proto)
        mi.time_control.CopyFrom(self._tc_proto)
        for k, v in self.labels.items():
            mi.labels[k] = v
        for name, t in (
            ("created_at", self.created_at),
            ("started_at", self.started_at),
            ("ended_at", self.ended_at),
        ):
            if t:
                getattr(mi, name).FromNanoseconds(int(t * 1e9))
        for st in self.seats:
            ms = mi.seats.add(
                seat=st.seat,
                bot_version=st.bot_version,
                connected=bool(st.bot_name)
                and st.disconnected_since is None
                and self.lookup_session(st.bot_name) is not None,
                strikes=st.strikes,
                rejected_actions=st.rejected,
                taken_over=st.taken_over,
                takeover_cause=st.takeover_cause,
                time_bank_ms=st.bank_ms,
                decisions=st.decisions,
                mean_response_ms=int(st.response_ms_total / st.decisions) if st.decisions else 0,
            )
            ms.player.CopyFrom(self.player_proto(st))
            ms.response_ms.extend(st.response_ms)
        return mi


_PRIVATE: Final = (E.Drew, E.Dealt, E.ChallengeEvidence)

_PROMPTS: Final = {
    DRAWN: bot_pb2.PROMPT_DRAWN,
    CHALLENGE: bot_pb2.PROMPT_WILD_DRAW_FOUR,
    STACK: bot_pb2.PROMPT_STACK,
    CHOOSE_COLOR: bot_pb2.PROMPT_CHOOSE_COLOR,
}


def _resolve(fut: asyncio.Future[bool], value: bool) -> None:
    if not fut.done():
        fut.set_result(value)


def _offer(q: asyncio.Queue[game_pb2.Event | None], msg: game_pb2.Event | None) -> None:
    try:
        q.put_nowait(msg)
    except asyncio.QueueFull:  # a spectator that does not read is dropped, never waited for
        pass
