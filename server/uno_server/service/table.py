"""One match in play: drives the engine, asks seats for decisions, enforces the time control.

The table is the only writer of its match. Everything runs on the event loop, so an answer from a
bot (:meth:`Table.submit`) and the table's own timers never interleave inside an engine call.
Dealing (the only engine call whose length does not depend on one action) runs in a worker
thread with a time limit, so a deal that does not finish cannot freeze the other tables.

The table owns two parts, and is their only caller: its seat log (:mod:`.seat_log`: the events,
each seat's cursor, redaction and encoding) and its request desk (:mod:`.request_desk`: the open
requests, answers accepted and rejected). The table keeps the hand loop, the clock and the
building of each decision request (the hot path, from the engine's state straight to bytes).
That rest is one piece, a little over 800 lines: the loop, the timers and the request encoder
all read the same hand state (seat numbering, the UNO window's clock) on every move, and a
further cut would put that state behind another object on the per-move path.

Per seat, at most one decision request is open. A request stays open while the seat's legal
actions stay the same (a UNO window answered by others does not disturb it); any other change
closes it (``SUPERSEDED``) and the next request carries the new view.

Duty: only a decision the rules oblige a seat to make (the current seat outside a UNO window) is
*required*: it has a deadline and a legal default, and a timeout costs a strike. Every other
chance (catch or no catch, a late UNO call, a jump-in) is *optional*: no deadline, no default,
never a strike. The UNO window itself closes on its own timer.

Seats: the engine numbers the seats of a hand 0..n-1. Under the Challenge UNO house rule
eliminated seats sit out later hands, so hand seat ``i`` is match seat ``_h2m[i]``; the protocol
speaks match seats only, so events, views and the seats inside action ids are translated at the
edge. Without eliminations the two numberings are the same and nothing is translated.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final

import structlog

from uno_server.engine import actions as A
from uno_server.engine import events as E
from uno_server.engine.errors import (
    EngineError,
    IllegalActionError,
    MalformedActionError,
    WrongSeatError,
)
from uno_server.engine.hand import CHALLENGE, CHOOSE_COLOR, DRAWN, OVER, STACK, SYSTEM, Hand
from uno_server.engine.match import Match
from uno_server.engine.views import seat_view as engine_view
from uno_server.gen.uno.v1 import admin_pb2, bot_pb2, errors_pb2, game_pb2

from . import convert, ratelog, wire
from .convert import Connection, MatchCancelled, TakenOver, TimedOut
from .metrics import ServiceMetrics
from .request_desk import (
    ABORTED,
    FAILED_PRECONDITION,
    INVALID_ARGUMENT,
    TIMED_OUT,
    RequestDesk,
)
from .seat_log import CHUNK_BYTES, EVENTS_INLINE, Record, SeatLog
from .seats import (
    BUILTIN_NAMES,
    OpenRequest,
    Outbox,
    ReplayBudget,
    Seat,
    TimeControl,
    make_builtin,
)

log = structlog.get_logger("uno.table")

# engine error reasons -> protocol ErrorReason
_REASONS: Final = {
    "MALFORMED_ACTION": errors_pb2.ERROR_REASON_MALFORMED_ACTION,
    "NOT_YOUR_TURN": errors_pb2.ERROR_REASON_NOT_YOUR_TURN,
    "ALREADY_ANSWERED": errors_pb2.ERROR_REASON_ALREADY_ANSWERED,
    "ILLEGAL_ACTION": errors_pb2.ERROR_REASON_ILLEGAL_ACTION,
    "NO_MATCH": errors_pb2.ERROR_REASON_NO_MATCH,
    "CARD_NOT_HELD": errors_pb2.ERROR_REASON_CARD_NOT_HELD,
    "ONLY_DRAWN_CARD": errors_pb2.ERROR_REASON_ONLY_DRAWN_CARD,
    "ONLY_STACK": errors_pb2.ERROR_REASON_ONLY_STACK,
    "UNO_NOT_ALLOWED": errors_pb2.ERROR_REASON_UNO_NOT_ALLOWED,
    "NOT_CATCHABLE": errors_pb2.ERROR_REASON_NOT_CATCHABLE,
    "HAND_OVER": errors_pb2.ERROR_REASON_STALE_REQUEST,
}

MAX_HAND_ACTIONS: Final = 20_000
"""A hand still going after this many actions is stopped (the match is cancelled), so that no
bots, however they play, can grow a hand's record (HandEndedEvent.actions) without bound."""
RESPONSE_MS_CAP: Final = 10_000


async def _deal_inline(fn: Callable[[], Any]) -> Any:
    return fn()


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
    on_finish: Callable[[Table], None] | None = None
    run_deal: Callable[[Callable[[], Any]], Awaitable[Any]] = _deal_inline
    created_at: float = field(default_factory=time.time)
    started_at: float = 0.0
    ended_at: float = 0.0
    state: int = 1  # MatchState RUNNING
    end_cause: int = 0
    end_message: str = ""
    records: list[Record] = field(default_factory=list)
    draining: bool = False
    cancelling: bool = False  # CancelMatch was called
    fingerprint: bytes = b""  # CreateMatch's parameters, for idempotent calls
    task: asyncio.Task[None] | None = None

    def __post_init__(self) -> None:
        self._waiter: asyncio.Future[bool] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._clock: Callable[[], float] = time.monotonic  # the loop's clock once a hand runs
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop, once a hand runs
        self._timer_at = 0.0
        self._window_deadline: float | None = None
        self._window_wall: float = 0.0  # when the open UNO window closes (wall clock)
        self._window_opened: float = 0.0
        self._rules_proto = convert.rules_to_proto(self.match.rules)
        self._tc_proto = self.time_control.to_proto()
        self._request_static = wire.request_static(
            self.match_id,
            self.time_control.decision_ms,
            bytes(self._rules_proto.SerializeToString()),
        )
        moves = self.metrics.moves
        self._moves_metric = {src: moves.labels(src) for src in _MOVE_SOURCES}
        self._latency_metric = {
            st.bot_name: self.metrics.decision_latency.labels(st.bot_name)
            for st in self.seats
            if st.bot_name
        }
        self._log = log
        self._push = any(st.push for st in self.seats)
        self._cancel_reason: tuple[int, str] | None = None
        # the table's two parts; the table is their only caller, and the only writer
        self.seat_log = SeatLog(
            self.match_id, self.match, self.seats, self.lookup_session, self.records
        )
        self.desk = RequestDesk(
            self.match_id, self.seats, self.time_control, self.metrics, self.lookup_session
        )
        self._begin_hand()
        self.seat_log.record_all(self.match.log)
        self.match.log.clear()

    def _begin_hand(self) -> None:
        """Take the seat numbering of the hand just dealt."""
        # every line of the table names its match and hand (and its seat: None for the table's
        # own lines), and the labels its creator gave the match (a tournament's hand coordinates)
        self._log = log.bind(
            match_id=self.match_id,
            hand=self.match.hand_number,
            seat=None,
            **({"labels": self.labels} if self.labels else {}),
        )
        active = list(self.match.active)
        self._h2m = active
        self._m2h = {m: h for h, m in enumerate(active)}
        self._ident = len(active) == len(self.seats)
        self.seat_log.renumber(active, self._ident, self._log)
        self.desk.log = self._log

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
                if self._cancel_reason is not None:  # a hand that ran too long
                    cause = self._cancel_reason[0]
                    break
                hand = await self.run_deal(self.match.next_hand)
                self.match.log.clear()  # the records hold every event; the engine's copy can go
                self._begin_hand()
                self.seat_log.record_all(hand.log)
        except asyncio.CancelledError:
            cause = self._cancel_reason[0] if self._cancel_reason else game_pb2.END_CAUSE_CANCELLED
            self._finish(cause)
            raise
        except Exception as exc:
            self._log.exception("table failed")
            self._cancel_reason = (game_pb2.END_CAUSE_CANCELLED, f"internal error: {exc}"[:256])
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
        self._clock = loop.time  # for submit: asyncio.get_running_loop() per answer costs
        self._loop = loop
        seats = self.seats
        while hand.phase != OVER:
            if hand.turn > MAX_HAND_ACTIONS:
                self._cancel_reason = (
                    game_pb2.END_CAUSE_CANCELLED,
                    f"hand {hand.hand_number} did not end after {MAX_HAND_ACTIONS} actions",
                )
                for st in seats:
                    self.desk.close(st, bot_pb2.CLOSE_REASON_MATCH_ENDED, None)
                return
            now = loop.time()
            self._check_disconnects(now)
            pending = hand.pending_seats()
            h2m = self._h2m
            acted = False
            for s in pending:
                st = seats[h2m[s]]
                if st.ai is not None:
                    legal = hand.legal_actions(s)
                    if legal:
                        self._apply(s, st.ai.choose(engine_view(hand, s)), "builtin")
                        acted = True
                        break
            if acted:
                await asyncio.sleep(0)  # let other tables and the RPCs run between AI moves
                continue
            if not await self._wait(loop, self._serve_pending(now)):
                self._on_timer(loop.time())

    def _serve_pending(self, now: float) -> float:
        """Open a request for every pending seat a bot plays whose choices changed (a seat
        whose open request still lists its legal actions keeps it). Returns the loop time at
        which the table must look again: the earliest deadline (inf: only when woken)."""
        hand = self.match.hand
        seats = self.seats
        h2m = self._h2m
        wake = float("inf")
        current = hand.current if hand.window < 0 else -1
        for s in hand.pending_seats():
            st = seats[h2m[s]]
            legal = hand.legal_actions(s)
            if not legal:
                continue
            req = st.open
            if req is None or req.legal != legal:
                req = self.desk.open(st, legal, s == current, now)
                self._send_request(st, req, now, resent=False)
            if req.required and req.deadline < wake:
                wake = req.deadline
        if self._window_deadline is not None and self._window_deadline < wake:
            wake = self._window_deadline
        for st in seats:
            if st.disconnected_since is not None and st.ai is None:
                wake = min(
                    wake, st.disconnected_since + self.time_control.reconnect_grace_ms / 1000
                )
        return wake

    def _step_inline(self, now: float) -> bool:
        """After a bot's accepted answer, do at once what the table's task would do next when
        that is only sending the next requests (the common case): no task switch per move.
        Returns False (nothing done) when the task must run instead: the hand is over or ran
        too long, a built-in AI seat is to act, or a seat is disconnected."""
        hand = self.match.hand
        loop = self._loop
        if (
            self._waiter is None
            or loop is None
            or hand.phase == OVER
            or hand.turn > MAX_HAND_ACTIONS
        ):
            return False
        seats = self.seats
        h2m = self._h2m
        for st in seats:
            if st.disconnected_since is not None and st.ai is None:
                return False
        for s in hand.pending_seats():
            if seats[h2m[s]].ai is not None:
                return False
        self._arm(loop, self._serve_pending(now))
        return True

    async def _wait(self, loop: asyncio.AbstractEventLoop, wake: float) -> bool:
        """Wait until something changes (True) or the loop clock reaches ``wake`` (False).

        A bare future, and one timer per table that is re-armed only when it would fire too
        late: every move moves the deadline later, so the timer armed for an earlier deadline
        stays, fires at most once too early (the caller then finds nothing due and waits
        again), and no move pays for a new timer (unlike asyncio.wait_for)."""
        fut: asyncio.Future[bool] = loop.create_future()
        self._waiter = fut
        self._arm(loop, wake)
        try:
            return await fut
        finally:
            self._waiter = None

    def _arm(self, loop: asyncio.AbstractEventLoop, wake: float) -> None:
        """Make sure the table's timer fires no later than ``wake`` (see :meth:`_wait`)."""
        if wake != float("inf"):
            timer = self._timer
            if timer is None or self._timer_at > wake:
                if timer is not None:
                    timer.cancel()
                self._timer = loop.call_at(wake, self._fire)
                self._timer_at = wake

    def _fire(self) -> None:
        self._timer = None
        fut = self._waiter
        if fut is not None and not fut.done():
            fut.set_result(False)

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
        h = self._m2h[st.seat]
        default = hand.default_action(h)  # a required request always has one
        st.strikes += 1
        st.bank_ms = 0
        self.metrics.timeouts.labels(st.bot_name).inc()
        # at its deadline in the latency histogram too, so a p99 near the deadline warns (to
        # the microsecond: (now + 0.05) - now is not always 0.05 in floating point, and a
        # 50 ms deadline must count in the 0.05 bucket)
        self._latency_metric[st.bot_name].observe(round(req.deadline - req.sent_at, 6))
        self._log.warning(
            "decision timed out",
            seat=st.seat,
            bot=st.bot_name,
            strikes=st.strikes,
        )
        wire = None if default is None else self._to_wire(default)
        self.desk.close(st, bot_pb2.CLOSE_REASON_TIMED_OUT, wire, kind=TIMED_OUT)
        if default is not None:
            self._apply(h, default, "timeout")
            if default == A.DRAW and hand.phase == DRAWN and hand.current == h:
                self._apply(h, A.PASS, "timeout")  # the default is "draw, then pass"
        self.seat_log.record(TimedOut(st.seat, -1 if wire is None else wire, st.strikes))
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
        self.desk.close(st, bot_pb2.CLOSE_REASON_TAKEN_OVER, None)
        self.seat_log.record(TakenOver(st.seat, st.builtin, cause))
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
        """Apply an engine action of hand seat ``seat`` (engine numbering). It does not wake the
        table's task: the task's own moves need no wake, and submit() serves the next requests
        itself or wakes the task."""
        hand = self.match.hand
        had_window = hand.window >= 0
        events = self.match.apply(seat, action_id)
        self._moves_metric[source].inc()
        self.seat_log.record_all(events)
        if hand.window >= 0 and not had_window:
            loop = asyncio.get_running_loop()
            ms = self.match.rules.uno_window_ms
            self._window_deadline = loop.time() + ms / 1000
            opened = time.time()
            for rec in self.records[-len(events) :]:  # the time UnoWindowOpened was recorded
                if type(rec.event) is E.UnoWindowOpened:
                    opened = rec.wall
            self._window_opened = opened
            self._window_wall = opened + ms / 1000
        elif hand.window < 0:
            self._window_deadline = None
        # The acting seat's own request is settled by the caller: answered (no RequestClosed,
        # as bot.proto promises; the winning play's request was closed as HAND_ENDED) or, for
        # a timeout, closed before its default is applied.
        acting = self._h2m[seat] if seat >= 0 else -1
        if hand.phase == OVER:
            self.metrics.hands.inc()
            for st in self.seats:
                if st.open is not None and st.open.seat != acting:
                    self.desk.close(st, bot_pb2.CLOSE_REASON_HAND_ENDED, None)
        else:
            # Close at once every request this action made moot (a catch or a late call ends
            # the window for everyone), so a bot's late answer to it is stale (ABORTED), not an
            # illegal action held against its seat.
            m2h = self._m2h
            # the server closing a UNO window on its timer: the chances it held have expired
            why = bot_pb2.CLOSE_REASON_EXPIRED if seat < 0 else bot_pb2.CLOSE_REASON_SUPERSEDED
            for st in self.seats:
                req = st.open
                if (
                    req is not None
                    and req.seat != acting
                    and hand.legal_actions(m2h[req.seat]) != req.legal
                ):
                    self.desk.close(st, why, None)
        if self._push:
            self.seat_log.push()

    def _legal_on_wire(self, legal: list[int]) -> list[int]:
        """A request's legal actions as its DecisionRequest offered them (for a rejection's
        log line; not on the path of an accepted answer)."""
        return list(legal) if self._ident else [convert.id_to_wire(a, self._h2m) for a in legal]

    def submit(
        self, outbox: Outbox, request_id: str, number: int, action_id: int | None
    ) -> bot_pb2.ActionResult | None:
        """A bot's answer. ``number`` is the request id's numeric suffix (-1 if it has none).
        Returns None if the action was applied (accepted actions get no reply), else the
        ActionResult of the rejection to send back on the bot's stream."""
        desk = self.desk
        req = desk.requests.get(request_id)
        if action_id is None:  # a required field missing comes first, whatever the request
            return desk.missing_action_id(req, request_id, outbox.bot_name)
        if req is None:
            return desk.reject_closed(desk.result(request_id, action_id), outbox.bot_name, number)
        st = self.seats[req.seat]
        if st.bot_name != outbox.bot_name:  # another seat's request: as if it did not exist
            return desk.not_found(desk.result(request_id, action_id), outbox.bot_name)
        engine_id: int | None = action_id
        if not self._ident:
            engine_id = convert.id_from_wire(action_id, self._m2h)
            if engine_id is None:
                return desk.reject(
                    desk.result(request_id, action_id, req.seat),
                    st,
                    st.bot_name,
                    FAILED_PRECONDITION,
                    errors_pb2.ERROR_REASON_ILLEGAL_ACTION,
                    f"action {action_id} names a seat that sits this hand out",
                    legal=self._legal_on_wire(req.legal),
                )
        try:
            self._apply(self._m2h[req.seat], engine_id, "bot")
        except MalformedActionError as exc:
            return desk.reject(
                desk.result(request_id, action_id, req.seat),
                st,
                st.bot_name,
                INVALID_ARGUMENT,
                errors_pb2.ERROR_REASON_MALFORMED_ACTION,
                str(exc),
                field="action.action_id",  # a batch entry's place: bot_stream._action
                legal=self._legal_on_wire(req.legal),  # what was offered: the gate quotes it
            )
        except (WrongSeatError, IllegalActionError) as exc:
            reason = _REASONS.get(exc.reason, errors_pb2.ERROR_REASON_ILLEGAL_ACTION)
            code = (
                ABORTED
                if reason == errors_pb2.ERROR_REASON_STALE_REQUEST
                else (FAILED_PRECONDITION)
            )
            return desk.reject(
                desk.result(request_id, action_id, req.seat),
                st,
                st.bot_name,
                code,
                reason,
                str(exc),
                legal=None if code == ABORTED else self._legal_on_wire(req.legal),
            )
        except EngineError as exc:  # pragma: no cover - every engine error is one of the above
            return desk.reject(
                desk.result(request_id, action_id, req.seat),
                st,
                st.bot_name,
                FAILED_PRECONDITION,
                errors_pb2.ERROR_REASON_ILLEGAL_ACTION,
                str(exc),
            )
        elapsed_ms = (self._clock() - req.sent_at) * 1000
        if req.required and elapsed_ms > self.time_control.decision_ms:
            st.bank_ms = max(0, st.bank_ms - int(elapsed_ms - self.time_control.decision_ms))
        st.decisions += 1
        st.response_ms_total += elapsed_ms
        st.last_response_ms = int(elapsed_ms)
        if len(st.response_ms) < RESPONSE_MS_CAP:
            st.response_ms.append(elapsed_ms)
        self._latency_metric[st.bot_name].observe(elapsed_ms / 1000)
        desk.answered(st, req)
        if not self._step_inline(self._clock()):
            self._wake()
        return None

    # ------------------------------------------------------------------ requests (sending them)

    def _send_request(self, st: Seat, req: OpenRequest, now: float, resent: bool) -> None:
        outbox = self.lookup_session(st.bot_name)
        if outbox is None:
            return  # sent again when the bot reconnects
        hand = self.match.hand
        h = self._m2h[st.seat]
        window = hand.window >= 0
        if window:
            prompt = bot_pb2.PROMPT_LATE_UNO if h == hand.window else bot_pb2.PROMPT_UNO_WINDOW
        elif h != hand.current:
            prompt = bot_pb2.PROMPT_JUMP_IN
        else:
            prompt = _PROMPTS.get(hand.phase, bot_pb2.PROMPT_TURN)
        taken = [s.taken_over for s in self.seats]
        if self._ident:
            # the hot path: the request encoded directly (wire.py), from cached fragments
            now_ns = time.time_ns()
            default = None
            deadline_ns = time_left_ms = 0
            if req.required:
                left = max(0.0, req.deadline - now)
                deadline_ns = now_ns + int(left * 1e9)
                time_left_ms = int(left * 1000)
                default = hand.default_action(h)
            view = wire.seat_view(
                hand,
                h,
                self.match.totals,
                taken,
                int(self._window_wall * 1e9) if window else 0,
                int(self._window_opened * 1e9) if window else 0,
            )
            outbox.send(
                wire.decision_request(
                    self._request_static,
                    req.request_id,
                    st.seat,
                    hand.hand_number,
                    hand.public_turn,
                    prompt,
                    req.required,
                    deadline_ns,
                    time_left_ms,
                    st.bank_ms,
                    st.strikes,
                    default,
                    view,
                    req.legal,
                    self.seat_log.event_fields_for(st, outbox),
                    now_ns,
                    resent,
                    st.last_response_ms,
                )
            )
            return
        # seats mapped (Challenge UNO after an elimination): the general, slower path
        events = self.seat_log.events_for(st, outbox)
        msg = bot_pb2.PlayResponse()
        dr = msg.decision_request
        dr.request_id = req.request_id
        dr.match_id = self.match_id
        dr.seat = st.seat
        dr.hand_number = hand.hand_number
        dr.turn = hand.public_turn
        dr.prompt = prompt
        dr.decision_ms = self.time_control.decision_ms
        dr.time_bank_ms = st.bank_ms
        dr.strikes = st.strikes
        if req.required:
            dr.required = True
            left = max(0.0, req.deadline - now)
            dr.deadline.FromNanoseconds(int((time.time() + left) * 1e9))
            dr.time_left_ms = int(left * 1000)
            default = hand.default_action(h)
            if default is not None:
                dr.default_action_id = self._to_wire(default)
        closes = convert.timestamp(self._window_wall) if window else None
        opened = convert.timestamp(self._window_opened) if window else None
        dr.view.CopyFrom(
            convert.seat_view_mapped(hand, h, self.match.totals, taken, closes, self._h2m, opened)
        )
        dr.legal_actions.extend(
            convert.legal_action(convert.id_to_wire(a, self._h2m)) for a in req.legal
        )
        dr.events.extend(events)
        dr.rules.CopyFrom(self._rules_proto)
        dr.sent_at.FromNanoseconds(time.time_ns())
        dr.resent = resent
        dr.previous_response_ms = st.last_response_ms
        outbox.send(msg)

    def _to_wire(self, action_id: int) -> int:
        return action_id if self._ident else convert.id_to_wire(action_id, self._h2m)

    # ------------------------------------------------------------------ connections

    def bot_connected(
        self, outbox: Outbox, cursors: dict[tuple[str, int], int], budget: ReplayBudget
    ) -> None:
        """The bot (re)connected on ``outbox``: MatchStarted for each of its seats, the events
        it asked to have again (``cursors``: (match id, seat) -> last sequence it processed) and
        any it has not had, then its open requests again."""
        loop = asyncio.get_running_loop()
        now = loop.time()
        bot_name = outbox.bot_name
        for st in self.seats:
            if st.bot_name != bot_name:
                continue
            st.push = outbox.push_events
            self.rewind(st, cursors.get((self.match_id, st.seat)), budget)
            if st.ai is not None:
                continue
            if st.disconnected_since is not None:
                st.disconnected_since = None
                self.seat_log.record(Connection(st.seat, True))
            outbox.send(bot_pb2.PlayResponse(match_started=self._match_started(st)))
            self.seat_log.flush(st, outbox, keep=0)
            if st.open is not None:
                self._send_request(st, st.open, now, resent=True)
        self._push = any(st.push for st in self.seats)

    def bot_disconnected(self, bot_name: str) -> None:
        now = asyncio.get_running_loop().time()
        for st in self.seats:
            if st.bot_name == bot_name and st.ai is None and st.disconnected_since is None:
                st.disconnected_since = now
                self.seat_log.record(Connection(st.seat, False))
                ratelog.CONNECTIONS.log(
                    ("seat disconnected", bot_name),
                    self._log.warning,
                    "bot disconnected",
                    seat=st.seat,
                    bot=bot_name,
                )
        self._wake()

    def uses_bot(self, bot_name: str) -> bool:
        return any(st.bot_name == bot_name for st in self.seats)

    def bot_names(self) -> frozenset[str]:
        return frozenset(st.bot_name for st in self.seats if st.bot_name)

    # ------------------------------------------------------------------ events (the seat log)

    def rewind(self, st: Seat, last: int | None, budget: ReplayBudget) -> None:
        """Send the seat's events after sequence ``last`` again, within the bot's budget."""
        self.seat_log.rewind(st, last, budget)

    def changed(self) -> asyncio.Future[None]:
        """A future resolved when the next event is recorded or the match ends."""
        return self.seat_log.changed()

    def spectator_event(self, rec: Record) -> game_pb2.Event | None:
        """The event as a spectator sees it."""
        return self.seat_log.spectator_event(rec)

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
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self.ended_at = time.time()
        self.end_cause = cause
        self.state = 2 if cause == game_pb2.END_CAUSE_COMPLETED else 3
        if cause != game_pb2.END_CAUSE_COMPLETED:
            msg = self._cancel_reason[1] if self._cancel_reason else "cancelled"
            self.end_message = msg
            self.seat_log.record(MatchCancelled(cause, msg))
        self.metrics.active_matches.dec()
        self.metrics.matches.labels(game_pb2.EndCause.Name(cause)[10:].lower()).inc()
        for st in self.seats:
            if st.open is not None:
                self.desk.close(st, bot_pb2.CLOSE_REASON_MATCH_ENDED, None)
            if not st.bot_name:
                continue
            outbox = self.lookup_session(st.bot_name)
            if outbox is not None:
                self.send_match_ended(st, outbox)
        self.seat_log.notify()
        self._log.info(
            "match ended",
            cause=game_pb2.EndCause.Name(cause),
            winners=sorted(self.match.winners),
            totals=self.match.totals,
            hands=self.match.hand_number,
            **({"reason": self.end_message} if self.end_message else {}),  # why, if cut short
        )
        if self.on_finish is not None:
            self.on_finish(self)

    def match_ended(self, st: Seat, events: list[game_pb2.Event]) -> bot_pb2.MatchEnded:
        winners = set(self.match.winners) if self.state == 2 else set()
        me = bot_pb2.MatchEnded(
            match_id=self.match_id,
            seat=st.seat,
            cause=self.end_cause,
            winners=sorted(winners),
            totals=self.match.totals,
            won=st.seat in winners,
            strikes=st.strikes,
            rejected_actions=st.rejected,
            taken_over=st.taken_over,
            stale_actions=st.stale,
        )
        me.events.extend(events)
        return me

    def send_match_ended(self, st: Seat, outbox: Outbox) -> None:
        """MatchEnded for the seat, with the events it has not had (a long backlog first, in
        SeatEvents)."""
        st.ended_sent = True
        if self._ident:
            # the events as the encoded entries the seat's requests use (each encoded once per
            # match, shared by every seat), around the rest of the message
            events = self.seat_log.event_fields_for(st, outbox)
            me = self.match_ended(st, [])
            tail = bot_pb2.MatchEnded(
                strikes=me.strikes,
                rejected_actions=me.rejected_actions,
                taken_over=me.taken_over,
                stale_actions=me.stale_actions,
            )
            me.strikes = me.rejected_actions = me.stale_actions = 0
            me.taken_over = False
            outbox.send(
                wire.match_ended(
                    bytes(me.SerializeToString()), events, bytes(tail.SerializeToString())
                )
            )
            return
        me = self.match_ended(st, self.seat_log.events_for(st, outbox))
        outbox.send(bot_pb2.PlayResponse(match_ended=me))

    def _send_to(self, st: Seat, msg: bot_pb2.PlayResponse) -> None:
        outbox = self.lookup_session(st.bot_name)
        if outbox is not None:
            outbox.send(msg)

    def info(self) -> admin_pb2.MatchInfo:
        """MatchInfo message for the admin service. The seed is withheld (0) while the match
        runs: it deals every hand, so it would show every seat's cards to a spectator. So are
        the seats' decision counts and response times: a seat that keeps a playable drawn card
        makes a decision one that draws an unplayable card does not (an examination counted
        them live)."""
        running = self.state == 1
        mi = admin_pb2.MatchInfo(
            match_id=self.match_id,
            state=self.state,
            seed=self.match.seed if not running else 0,
            hand_number=self.match.hand_number,
            totals=self.match.totals,
            winners=sorted(self.match.winners) if self.state != 3 else [],
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
                connected=not st.bot_name
                or (st.disconnected_since is None and self.lookup_session(st.bot_name) is not None),
                strikes=st.strikes,
                rejected_actions=st.rejected,
                stale_actions=st.stale,
                taken_over=st.taken_over,
                takeover_cause=st.takeover_cause,
                time_bank_ms=st.bank_ms,
            )
            ms.player.CopyFrom(self.player_proto(st))
            if not running:  # how many decisions a seat made so far would count its kept cards
                ms.decisions = st.decisions
                ms.mean_response_ms = (
                    int(st.response_ms_total / st.decisions) if st.decisions else 0
                )
                ms.response_ms.extend([int(x) for x in st.response_ms])
        return mi


_MOVE_SOURCES: Final = ("bot", "builtin", "timeout", "system")

_PROMPTS: Final = {
    DRAWN: bot_pb2.PROMPT_DRAWN,
    CHALLENGE: bot_pb2.PROMPT_WILD_DRAW_FOUR,
    STACK: bot_pb2.PROMPT_STACK,
    CHOOSE_COLOR: bot_pb2.PROMPT_CHOOSE_COLOR,
}


__all__ = [
    "BUILTIN_NAMES",
    "CHUNK_BYTES",
    "EVENTS_INLINE",
    "Hand",
    "OpenRequest",
    "Outbox",
    "Record",
    "ReplayBudget",
    "Seat",
    "Table",
    "TimeControl",
    "make_builtin",
]
