"""A spectator's side of the admin API: list matches, follow one through ``WatchMatch``.

Only ``ListMatches``, ``GetMatch``, ``WatchMatch`` and ``AwaitMatch`` (from a finished match's
last event: whether its events are still kept) are used: a spectator view can never start,
change or cancel a match, and sees exactly what the spectator stream carries (public information
while a hand runs, every hand revealed when it ends).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncGenerator, AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field

import grpc

from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc
from uno_server.service.tlsclient import connection_hint

from .model import LogLine, TableModel, player_name

# A stream cut for these reasons is resumed from the last event seen.
_RESUMABLE = frozenset(
    {grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.RESOURCE_EXHAUSTED, grpc.StatusCode.INTERNAL}
)


class WatchError(Exception):
    """The server refused (bad token, unknown match) or stayed unreachable. ``code``: the gRPC
    status of the refusal (None if there was none); ``permanent``: asking again cannot help (a
    refusal other than the transient ones, or a server never reached at all)."""

    def __init__(
        self, message: str, code: grpc.StatusCode | None = None, *, permanent: bool = False
    ) -> None:
        super().__init__(message)
        self.code = code
        self.permanent = permanent or (code is not None and code not in _RESUMABLE)


def _error(
    exc: grpc.aio.AioRpcError, *, reached: bool = True, tls_ca: str | None = None
) -> WatchError:
    return WatchError(_explain(exc, tls_ca), exc.code(), permanent=not reached)


class Spectator:
    """The admin calls a spectator needs, over one channel."""

    def __init__(
        self, channel: grpc.aio.Channel, admin_token: str, *, tls_ca: str | None = None
    ) -> None:
        self.stub = admin_pb2_grpc.AdminServiceStub(channel)  # type: ignore[no-untyped-call]
        self.md = (("authorization", f"Bearer {admin_token}"),)
        self.tls_ca = tls_ca
        """The ``--tls-ca`` the channel was made with (None: plaintext), for the hint of a
        failed connection."""
        self.reached = False
        """True once the server has answered a call (a later outage is waited out)."""

    async def matches(
        self, *, running: bool = False, labels: Mapping[str, str] | None = None, limit: int = 500
    ) -> list[admin_pb2.MatchInfo]:
        """Matches, newest first."""
        req = admin_pb2.ListMatchesRequest(page_size=min(limit, 500), labels=dict(labels or {}))
        if running:
            req.states.append(admin_pb2.MATCH_STATE_RUNNING)
        out: list[admin_pb2.MatchInfo] = []
        try:
            while len(out) < limit:
                res = await self.stub.ListMatches(req, metadata=self.md, timeout=10)
                self.reached = True
                out.extend(res.matches)
                if not res.next_page_token:
                    break
                req.page_token = res.next_page_token
        except grpc.aio.AioRpcError as exc:
            raise _error(exc, reached=self.reached, tls_ca=self.tls_ca) from exc
        out.sort(key=lambda m: (m.created_at.ToNanoseconds(), m.match_id), reverse=True)
        return out[:limit]

    async def match(self, match_id: str) -> admin_pb2.MatchInfo:
        """One match's summary (``GetMatch``); a WatchError with NOT_FOUND if unknown."""
        try:
            res = await self.stub.GetMatch(
                admin_pb2.GetMatchRequest(match_id=match_id), metadata=self.md, timeout=10
            )
        except grpc.aio.AioRpcError as exc:
            raise _error(exc, reached=self.reached, tls_ca=self.tls_ca) from exc
        self.reached = True
        info: admin_pb2.MatchInfo = res.match
        return info

    async def replayable(self, info: admin_pb2.MatchInfo) -> bool:
        """Whether the server still keeps the event log of ``info``'s match. ListMatches does
        not say it: a finished match is listed far longer than its log is kept (see
        ``proto/uno/v1/admin.proto``, "Retention"). ``AwaitMatch`` from a finished match's last
        event answers at once, with no event, while the log is kept, and NOT_FOUND once it is
        freed (a running match's log is always kept: the call would wait for its end)."""
        if info.state == admin_pb2.MATCH_STATE_RUNNING:
            return True
        try:
            await self.stub.AwaitMatch(
                admin_pb2.AwaitMatchRequest(
                    match_id=info.match_id, after_sequence=info.last_sequence
                ),
                metadata=self.md,
                timeout=10,
            )
        except grpc.aio.AioRpcError as exc:
            if exc.code() == grpc.StatusCode.NOT_FOUND:  # freed (or the summary went too)
                return False
            if exc.code() in (grpc.StatusCode.UNAUTHENTICATED, grpc.StatusCode.UNAVAILABLE):
                raise _error(exc, reached=self.reached, tls_ca=self.tls_ca) from exc
            return True  # anything else: the event stream says it, if it cannot be opened
        self.reached = True
        return True

    async def expired(
        self, infos: list[admin_pb2.MatchInfo], known: frozenset[str] | set[str] = frozenset()
    ) -> set[str]:
        """The ids among ``infos`` of finished matches whose events the server has freed.
        ``known``: ids already found freed (a log once freed stays freed), not asked again. The
        server frees the logs in the order the matches ended (the most recently ended are the
        ones kept), so the oldest end not known is asked first (kept: every later one is), then
        a binary search finds the first kept one: a handful of calls for a list of any length,
        one when nothing new was freed."""
        gone = {i.match_id for i in infos if i.match_id in known}
        done = sorted(
            (
                i
                for i in infos
                if i.state != admin_pb2.MATCH_STATE_RUNNING and i.match_id not in known
            ),
            key=lambda i: (i.ended_at.ToNanoseconds(), i.match_id),
        )
        if not done or await self.replayable(done[0]):
            return gone
        lo, hi = 1, len(done)  # done[lo - 1] is freed; done[hi] (if any) is kept
        while lo < hi:
            mid = (lo + hi) // 2
            if await self.replayable(done[mid]):
                hi = mid
            else:
                lo = mid + 1
        return gone | {i.match_id for i in done[:lo]}

    async def stream(
        self, match_id: str, after: int = 0
    ) -> AsyncGenerator[admin_pb2.WatchMatchResponse, None]:
        """The WatchMatch stream from ``after``, resumed from the last event seen when the
        connection drops or the server cuts a slow reader off. Closing the generator (or
        cancelling the task reading it) cancels the call at once: the server stops sending to
        a viewer that went away (close it with :func:`contextlib.aclosing`, not by leaving it
        to the garbage collector)."""
        last = after
        failures = 0
        while True:
            call = self.stub.WatchMatch(
                admin_pb2.WatchMatchRequest(match_id=match_id, after_sequence=last),
                metadata=self.md,
            )
            try:
                async for msg in call:
                    failures = 0
                    self.reached = True
                    if msg.WhichOneof("kind") == "event":
                        if msg.event.sequence <= last:
                            continue
                        last = msg.event.sequence
                    yield msg
                return
            except grpc.aio.AioRpcError as exc:
                if exc.code() not in _RESUMABLE or failures >= 20 or not self.reached:
                    raise _error(exc, reached=self.reached, tls_ca=self.tls_ca) from exc
                failures += 1
            finally:
                call.cancel()  # nothing if the call is over; else the server learns at once
            await asyncio.sleep(min(2.0, 0.1 * 2**failures))


def _explain(exc: grpc.aio.AioRpcError, tls_ca: str | None = None) -> str:
    code = exc.code()
    if code == grpc.StatusCode.UNAUTHENTICATED:
        return "the server refused the admin token (--admin-token)"
    if code == grpc.StatusCode.UNAVAILABLE:
        details = exc.details() or ""
        hint = connection_hint(details, tls_ca)
        return f"cannot reach the server ({details[:160]})" + (
            hint or "; is `uno-arena serve` running at that address (--server HOST:PORT)?"
        )
    return f"{code.name}: {exc.details()}"


def names_of(info: admin_pb2.MatchInfo) -> list[str]:
    return [player_name(s.player) for s in sorted(info.seats, key=lambda s: s.seat)]


def model_for(info: admin_pb2.MatchInfo) -> TableModel:
    model = TableModel.for_rules(names_of(info), info.rules)
    model.match_id = info.match_id
    for s in info.seats:
        if 0 <= s.seat < model.n:
            model.seats[s.seat].taken_over = s.taken_over
    return model


Listener = Callable[["Follower", LogLine | None], Awaitable[None] | None]


@dataclass
class Follower:
    """Follows one match into a :class:`TableModel`.

    The stream always starts at the match's first event, so a spectator who joins in the middle
    still knows every count; :attr:`caught_up` turns true at the event that was the latest when
    watching began. ``pace`` (seconds per event) replays the part before that slowly, to follow
    a match from its start; 0 jumps straight to the present."""

    spectator: Spectator
    match_id: str
    pace: float = 0.0
    model: TableModel | None = None
    info: admin_pb2.MatchInfo | None = None
    caught_up: bool = False
    ended: bool = False
    error: str = ""
    error_code: grpc.StatusCode | None = None
    """The gRPC status of the refusal behind :attr:`error` (a screen words it its own way)."""
    lines: list[LogLine] = field(default_factory=list)

    async def run(self, listener: Listener) -> None:
        try:
            await self._run(listener)
        except WatchError as exc:
            self.error = str(exc)
            self.error_code = exc.code
            self.ended = True
            await _call(listener, self, None)

    async def _run(self, listener: Listener) -> None:
        async with contextlib.aclosing(self.spectator.stream(self.match_id)) as stream:
            await self._follow(stream, listener)
        self.ended = True
        self.caught_up = True
        await _call(listener, self, None)

    async def _follow(
        self, stream: AsyncIterator[admin_pb2.WatchMatchResponse], listener: Listener
    ) -> None:
        target = 0
        async for msg in stream:
            kind = msg.WhichOneof("kind")
            if kind == "match":
                first = self.info is None
                self.info = msg.match
                if first:
                    self.model = model_for(msg.match)
                    target = msg.match.last_sequence
                    self.caught_up = target == 0
                    if self.caught_up:
                        await _call(listener, self, None)
                elif msg.match.state != admin_pb2.MATCH_STATE_RUNNING:
                    self.ended = True
                continue
            if kind != "event" or self.model is None:
                continue
            line = self.model.apply(msg.event)
            if line is not None:
                self.lines.append(line)
            if not self.caught_up and msg.event.sequence >= target:
                self.caught_up = True
            if self.caught_up:
                await _call(listener, self, line)
            elif self.pace > 0 and line is not None:
                await _call(listener, self, line)
                await asyncio.sleep(self.pace)


async def _call(listener: Listener, follower: Follower, line: LogLine | None) -> None:
    result = listener(follower, line)
    if result is not None:
        await result
