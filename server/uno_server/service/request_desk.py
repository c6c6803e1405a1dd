"""A table's request desk: the decision requests open at its seats, and the answers to them.

Per seat at most one request is open (``Seat.open``). The desk numbers requests within the
match, per seat (see SEAT_STRIDE: a bot's own request ids show how many requests its own seats
were sent, never how many went to the others), opens and closes them (RequestClosed to the
seat's bot), remembers the last CLOSED_MEMORY closed ones to tell ALREADY_ANSWERED and
DEADLINE_PASSED apart from STALE_REQUEST, and turns a rejected answer into its ActionResult,
counted against the seat. Its owner, the
:class:`~.table.Table`, is its only caller: it decides when a request opens or closes and
applies an accepted answer to the match.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final

import structlog

from uno_server.gen.uno.v1 import bot_pb2, errors_pb2

from .metrics import ServiceMetrics
from .seats import OpenRequest, Outbox, Seat, TimeControl

INVALID_ARGUMENT: Final = 3
NOT_FOUND: Final = 5
FAILED_PRECONDITION: Final = 9
ABORTED: Final = 10

CLOSED_MEMORY: Final = 4096
"""Closed requests remembered per match, to tell ALREADY_ANSWERED and DEADLINE_PASSED apart
from STALE_REQUEST; an older closed request is just stale."""

SEAT_STRIDE: Final = 16
"""Request numbers interleave the seats (at most 10): the k-th request (from 1) to seat s is
number ``(k - 1) * SEAT_STRIDE + s + 1``."""

NO_SUCH_REQUEST: Final = "this bot was sent no request with that id"
"""The one message of REQUEST_NOT_FOUND, whatever the id named: an id never issued, another
seat's request (open or closed), a match the bot does not sit in, or no match at all. A bot
learns nothing from it about other seats' requests (which seat was asked, and when)."""

ANSWERED: Final = 0
TIMED_OUT: Final = 1
CLOSED: Final = 2
_CLOSE_REASONS: Final = {
    ANSWERED: (errors_pb2.ERROR_REASON_ALREADY_ANSWERED, "that request was already answered"),
    TIMED_OUT: (
        errors_pb2.ERROR_REASON_DEADLINE_PASSED,
        "the deadline of that request passed; the server played its default (a strike)",
    ),
    CLOSED: (
        errors_pb2.ERROR_REASON_STALE_REQUEST,
        "that request is closed (superseded, its chance ended, or the hand moved on)",
    ),
}


def response_ms(sent_at: float) -> int:
    """ActionResult.response_ms of an answer arriving now to a request sent at loop time
    ``sent_at`` (OpenRequest.sent_at, which DecisionRequest.sent_at and its deadline are counted
    from; the same measure as an accepted answer's previous_response_ms). The table's clock is
    the loop's, and an asyncio loop's clock is time.monotonic()."""
    return max(0, min(2**31 - 1, int((time.monotonic() - sent_at) * 1000)))


class RequestDesk:
    """The open and recently closed requests of one match (see the module docstring)."""

    __slots__ = (
        "_closed",
        "_issued",
        "log",
        "lookup_session",
        "match_id",
        "metrics",
        "requests",
        "seats",
        "time_control",
    )

    def __init__(
        self,
        match_id: str,
        seats: list[Seat],
        time_control: TimeControl,
        metrics: ServiceMetrics,
        lookup_session: Callable[[str], Outbox | None],
    ) -> None:
        self.match_id = match_id
        self.seats = seats
        self.time_control = time_control
        self.metrics = metrics
        self.lookup_session = lookup_session
        self.requests: dict[str, OpenRequest] = {}  # request id -> the open request
        # request number -> (close kind, loop time it was sent: OpenRequest.sent_at)
        self._closed: dict[int, tuple[int, float]] = {}
        self._issued = [0] * len(seats)  # per match seat: requests sent to it so far
        self.log: Any = structlog.get_logger("uno.table")

    # ------------------------------------------------------------------ opening and closing

    def open(self, st: Seat, legal: list[int], required: bool, now: float) -> OpenRequest:
        """A new request for the seat (its open one, if any, is SUPERSEDED); the table sends
        it."""
        if st.open is not None:
            self.close(st, bot_pb2.CLOSE_REASON_SUPERSEDED, None)
        issued = self._issued
        seat = st.seat
        issued[seat] += 1
        if required:
            deadline = now + (self.time_control.decision_ms + st.bank_ms) / 1000
        else:
            deadline = float("inf")
        number = (issued[seat] - 1) * SEAT_STRIDE + seat + 1
        rid = f"{self.match_id}-{number}"
        req = OpenRequest(rid, number, seat, legal, required, now, deadline)
        st.open = req
        self.requests[req.request_id] = req
        return req

    def close(self, st: Seat, reason: int, applied: int | None, kind: int = CLOSED) -> None:
        req = st.open
        if req is None:
            return
        st.open = None
        self.forget(req, kind)
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

    def forget(self, req: OpenRequest, kind: int) -> None:
        self.requests.pop(req.request_id, None)
        closed = self._closed
        closed[req.number] = (kind, req.sent_at)
        if len(closed) > CLOSED_MEMORY:
            for key in list(closed)[: CLOSED_MEMORY // 2]:
                del closed[key]

    def answered(self, st: Seat, req: OpenRequest) -> None:
        """The seat's answer to ``req`` was applied: the request closes as answered (the
        bot's next request, or the events, tell it so; no RequestClosed)."""
        if st.open is req:
            st.open = None
        self.forget(req, ANSWERED)

    # ------------------------------------------------------------------ rejections

    def result(
        self, request_id: str, action_id: int | None, seat: int | None = None
    ) -> bot_pb2.ActionResult:
        """The ActionResult of a rejection (only rejections get one). ``seat``: the request's
        seat, given only when the request was sent to the answering bot; its response_ms is
        then filled in if the request is open."""
        res = bot_pb2.ActionResult(request_id=request_id, match_id=self.match_id)
        res.received_at.FromNanoseconds(time.time_ns())
        if action_id is not None:
            res.action_id = action_id
        if seat is not None:
            res.seat = seat
            req = self.requests.get(request_id)
            if req is not None and req.seat == seat:
                res.response_ms = response_ms(req.sent_at)
        return res

    def missing_action_id(
        self, req: OpenRequest | None, request_id: str, sender: str
    ) -> bot_pb2.ActionResult:
        """An answer without Action.action_id (0 means draw and must be set): reported as the
        missing field before anything else about its request (closed, unknown, another's; the
        seat of another bot's request is not named)."""
        st = self.seats[req.seat] if req is not None else None
        if st is None or st.bot_name != sender:
            st = self.first_seat(sender)
            req = None
        res = self.result(request_id, None, req.seat if req is not None else None)
        if st is None:
            res.match_id = ""
        return self.reject(
            res,
            st,
            sender,
            INVALID_ARGUMENT,
            errors_pb2.ERROR_REASON_MALFORMED_MESSAGE,
            "action.action_id: is required (0 means draw and must be set explicitly)",
            field="action.action_id",
        )

    def not_found(self, res: bot_pb2.ActionResult, sender: str) -> bot_pb2.ActionResult:
        """An answer naming no request this bot was sent (see NO_SUCH_REQUEST): the same
        result, code, reason and message however the id names another seat's request, an id
        never issued or nothing of this match, with no seat (and no match id unless the sender
        sits in this match)."""
        res.ClearField("seat")
        st = self.first_seat(sender)
        if st is None:
            res.match_id = ""
        return self.reject(
            res, st, sender, NOT_FOUND, errors_pb2.ERROR_REASON_REQUEST_NOT_FOUND, NO_SUCH_REQUEST
        )

    def reject_closed(
        self, res: bot_pb2.ActionResult, sender: str, number: int
    ) -> bot_pb2.ActionResult:
        """An answer naming no open request of this match: a late answer to a request the
        sender's seat was sent, else :meth:`not_found`."""
        seat = (number - 1) % SEAT_STRIDE if number > 0 else -1
        if seat >= len(self.seats) or seat < 0:
            return self.not_found(res, sender)
        st = self.seats[seat]
        if st.bot_name != sender or not number <= self._issued[seat] * SEAT_STRIDE:
            return self.not_found(res, sender)
        res.seat = seat
        kind, sent_at = self._closed.get(number, (-1, -1.0))
        if kind >= 0:  # remembered: when it was sent is known
            res.response_ms = response_ms(sent_at)
        # a request the seat was sent and that closed (timed out, answered, superseded) is
        # answered late, as RequestClosed says, even after the takeover its timeout caused:
        # only an answer naming no remembered request of the seat is for a seat taken over
        if kind < 0 and st.taken_over and st.ai is not None:
            return self.reject(
                res,
                st,
                sender,
                FAILED_PRECONDITION,
                errors_pb2.ERROR_REASON_SEAT_TAKEN_OVER,
                f"seat {st.seat} is played by the takeover bot for the rest of this match",
            )
        reason, message = _CLOSE_REASONS[kind if kind >= 0 else CLOSED]
        return self.reject(res, st, sender, ABORTED, reason, message)

    def first_seat(self, bot_name: str) -> Seat | None:
        for st in self.seats:
            if st.bot_name == bot_name:
                return st
        return None

    def reject(
        self,
        res: bot_pb2.ActionResult,
        st: Seat | None,
        sender: str,
        code: int,
        reason: int,
        message: str,
        field: str = "",
        legal: list[int] | None = None,
    ) -> bot_pb2.ActionResult:
        """Fill in and count a rejection. A late answer (``ABORTED``: the request had closed
        before the answer came) counts as stale, anything else as a fault (``Seat.rejected``,
        uno_illegal_actions_total); the two never overlap (MatchSeat documents both).
        ``legal``: the request's legal action ids as the bot was sent them, for the log line,
        when the answer was an action the request did not offer."""
        res.code = code
        res.reason = reason
        res.message = message
        res.field = field
        late = code == ABORTED
        label = errors_pb2.ErrorReason.Name(reason)[13:].lower()
        (self.metrics.late if late else self.metrics.illegal).labels(sender, label).inc()
        count = 1
        if st is not None:
            if late:
                st.stale += 1
                count = st.stale
            else:
                st.rejected += 1
                count = st.rejected
            res.request_open = st.open is not None and st.open.request_id == res.request_id
            res.time_bank_ms = st.bank_ms
        if count <= 20 or count % 100 == 0:  # a flood of bad actions must not flood the log
            # a seat's first fault of the match is a warning, so a server run at --log-level
            # warning (a tournament's) still says what it was: the league's gate quotes it
            emit = self.log.warning if count == 1 and not late else self.log.info
            emit(
                "late answer rejected" if late else "action rejected",
                seat=st.seat if st is not None else None,
                bot=sender,
                reason=errors_pb2.ErrorReason.Name(reason),
                detail=message,
                request_id=res.request_id[:100],
                action_id=res.action_id if res.HasField("action_id") else None,
                **({"legal": legal[:64]} if legal is not None else {}),
                **({"late": count} if late else {"rejected": count}),
            )
        return res
