"""The connection: one Play stream at a time, its session (Hello, Welcome, resume cursors), the
messages the server sends, the answers going out in batches, and reconnecting with a backoff
until :meth:`BotClient.stop`. What the client guarantees is the common behaviour of every UNO
Arena SDK; ../README.md ("What the SDK does for you") spells it out. Running ``decide`` against
its deadline is the :class:`~uno_bot.deciding.Deciding` half of :class:`BotClient`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import inspect
import logging
import os
import random
import signal
import stat
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import grpc
import grpc.aio

from ._log import enum_name as _enum_name
from ._log import log
from ._version import __version__
from .address import Address, parse_address
from .deciding import Deciding, _DecidePool, _task_name, fallback_action
from .proto import bot_pb2, bot_pb2_grpc, errors_pb2, game_pb2

if TYPE_CHECKING:  # types only: the user API imports this module, not the other way round
    from .api import Bot, MatchState

__all__ = [
    "FATAL_CODES",
    "LOCAL_SOCKET_ENV",
    "MAX_ACTION_BATCH",
    "PROTOCOL_VERSION",
    "SDK_TAG",
    "BotClient",
    "ClientConfig",
    "FatalStreamError",
    "hello_bot_version",
    "run",
    "run_async",
]

PROTOCOL_VERSION: Final = 1
"""The protocol version this SDK speaks (``Hello.protocol_version``)."""

SDK_TAG: Final = f"uno-bot-python/{__version__} uno.v{PROTOCOL_VERSION}"
"""What this SDK adds to ``Hello.bot_version``: its name and version, and the protocol."""

LOCAL_SOCKET_ENV: Final = "UNO_ARENA_LOCAL_SOCKET"
"""An environment variable naming a Unix socket that reaches the same game server as the address.
The tournament's sandbox sets it (a bot in the sandbox reaches the server through a relay behind
its ``127.0.0.1`` address; the socket skips that hop). A plaintext connection goes there instead
of to the address while the path is a socket; TLS connections and bots without it use the
address. Every UNO Arena SDK does the same."""

MAX_BOT_VERSION: Final = 64
"""The server's limit on ``Hello.bot_version``, in characters (bot.proto)."""


def hello_bot_version(own: str) -> str:
    """``Hello.bot_version``: the bot's own version, then :data:`SDK_TAG`, as in
    ``"1.4.2 uno-bot-python/0.2.0 uno.v1"`` (only the tag if the bot gives none). The bot's part
    is cut so that the whole stays within the server's 64 characters."""
    room = MAX_BOT_VERSION - len(SDK_TAG) - 1
    return f"{own[:room]} {SDK_TAG}" if own else SDK_TAG


FATAL_CODES: Final[frozenset[grpc.StatusCode]] = frozenset(
    {
        grpc.StatusCode.UNAUTHENTICATED,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.UNIMPLEMENTED,
        grpc.StatusCode.ABORTED,
    }
)
"""Statuses after which reconnecting cannot help (wrong token, wrong name or protocol, a
malformed message, or another process of the same bot took the session over). Every other way
a stream ends, a clean end included, is followed by a reconnect."""

MAX_ACTION_BATCH: Final = 256
"""Most answers the client packs into one PlayRequest.actions."""
_FLUSH: Final = object()
"""Outbox marker: send every answer waiting in ``BotClient._actions``."""


class FatalStreamError(RuntimeError):
    """The server ended the stream for a reason a reconnect cannot fix (bad token, bot name
    mismatch, unsupported protocol, session replaced by another process)."""

    def __init__(self, code: grpc.StatusCode, details: str) -> None:
        super().__init__(f"the server refused the bot: {code.name} ({details or 'no details'})")
        self.code = code
        self.details = details


@dataclass
class ClientConfig:
    """How to reach the server. Durations in seconds unless the name says ``_ms``."""

    addr: str = "127.0.0.1:50051"
    """``HOST:PORT``, ``http://HOST:PORT`` or ``https://HOST:PORT`` (TLS), IPv6 in brackets."""
    token: str = ""
    name: str | None = None
    """Hello.bot_name; None takes ``Bot.name``."""
    version: str | None = None
    """The bot's own version; None takes ``Bot.version``. Hello.bot_version carries it with the
    SDK's name and version and the protocol after it (:func:`hello_bot_version`)."""
    tls: bool = False
    """Use TLS with the system roots (or ``ca_file``) also for a ``HOST:PORT`` address."""
    ca_file: str | None = None
    """PEM file of the CA that signed the server certificate; implies TLS."""
    backoff_initial: float = 0.1
    """First reconnect delay; it doubles per failed attempt and resets once a stream is
    welcomed."""
    backoff_max: float = 2.0
    """Cap of the reconnect delay, jitter included: below the server's 5 s reconnect grace."""
    max_concurrent_matches: int = 0
    push_events: bool = False
    max_batch: int = 64
    """Hello.max_batch: the server may pack up to this many waiting messages into one (0 or 1:
    never). Batching only changes the framing; it saves work on both sides under load."""
    stop_grace: float = 2.0
    """How long to wait for the server to end the stream after we half-close it on stop."""
    max_reconnects: int | None = None
    """Give up after this many consecutive failed attempts; None retries forever."""


_BASE_HOOK: Final = "__uno_bot_base_hook__"


def base_hook(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Marks a hook of :class:`~uno_bot.api.Bot` that does nothing, so that the client can skip
    calling it (a bot that keeps ``Bot.on_events`` costs no call per request)."""
    setattr(fn, _BASE_HOOK, True)
    return fn


@dataclass
class _Answered:
    """An answer sent and not known to be settled yet."""

    request: bot_pb2.DecisionRequest
    action_id: int
    sent_at: float


class BotClient(Deciding):
    """Runs one :class:`Bot` on one Play stream, reconnecting until :meth:`stop`."""

    def __init__(self, bot: Bot, config: ClientConfig) -> None:
        self.bot = bot
        self.config = config
        self.address: Address = parse_address(config.addr)  # AddressError: refused at once
        self.states: dict[tuple[str, int], MatchState] = {}
        """Live per-(match, seat) states."""
        self.session_id = ""
        self.connections = 0
        """Streams that reached Welcome."""
        self.reconnect_delays: list[float] = []
        """Every reconnect delay waited so far, in seconds (for tests and curious operators)."""
        self._stop = asyncio.Event()
        self._tasks: dict[str, asyncio.Task[None]] = {}
        self._received: dict[str, float] = {}
        self._decide_is_async = bot.is_async()  # asked again at the start of every stream
        self._loop_time: Callable[[], float] = time.monotonic  # the loop's clock, once running
        self._answered: dict[str, _Answered] = {}
        self._retried: set[str] = set()
        self._seat_request: dict[tuple[str, int], str] = {}  # the latest request of each seat
        self._outbox: asyncio.Queue[Any] | None = None
        self._actions: list[bot_pb2.Action] = []  # answers waiting for the writer
        self._welcomed = False
        self._rng = random.Random()
        self._pool = _DecidePool()

    @property
    def name(self) -> str:
        return self.config.name if self.config.name is not None else self.bot.name

    @property
    def tls(self) -> bool:
        return self.address.tls or self.config.tls or bool(self.config.ca_file)

    def stop(self) -> None:
        """Ask the client to leave: half-close the stream and return from :meth:`run`."""
        self._stop.set()

    # ------------------------------------------------------------------ connection loop

    def _channel(self) -> grpc.aio.Channel:
        """A new channel: one per connection attempt, so no attempt inherits the library's
        own reconnect backoff from an earlier outage."""
        options = [
            # gRPC shares subchannels between channels to the same address by default, so a new
            # channel would inherit the old one's connection backoff; a local pool does not
            ("grpc.use_local_subchannel_pool", 1),
            ("grpc.keepalive_time_ms", 20_000),
            ("grpc.keepalive_timeout_ms", 10_000),
            ("grpc.keepalive_permit_without_calls", 1),
        ]
        cfg = self.config
        if self.tls:
            root = None
            if cfg.ca_file:
                with open(cfg.ca_file, "rb") as f:
                    root = f.read()
            creds = grpc.ssl_channel_credentials(root_certificates=root)
            return grpc.aio.secure_channel(self.address.target, creds, options=options)
        return grpc.aio.insecure_channel(self.target, options=options)

    @property
    def target(self) -> str:
        """Where the next connection goes: ``unix:PATH`` when :data:`LOCAL_SOCKET_ENV` names a
        socket and the connection is plaintext, else the address's ``host:port``."""
        path = os.environ.get(LOCAL_SOCKET_ENV, "")
        if path and not self.tls:
            with contextlib.suppress(OSError):
                if stat.S_ISSOCK(os.stat(path).st_mode):
                    return f"unix:{path}"
        return self.address.target

    def backoff_delay(self, attempt: int) -> float:
        """Delay before reconnect attempt ``attempt`` (1-based, counted since the last
        Welcome): ``backoff_initial * 2^(attempt-1)``, +-20% jitter, never above
        ``backoff_max``."""
        cfg = self.config
        base = min(cfg.backoff_max, cfg.backoff_initial * 2 ** min(attempt - 1, 30))
        return float(min(cfg.backoff_max, base * self._rng.uniform(0.8, 1.2)))

    async def run(self) -> None:
        """Connect and play until :meth:`stop`. Raises :class:`FatalStreamError` if the server
        refuses the bot for good, ``ConnectionError`` after ``max_reconnects`` failures."""
        attempt = 0
        while not self._stop.is_set():
            self._welcomed = False
            reason = await self._connect_once()
            if self._stop.is_set():
                break
            if self._welcomed:
                attempt = 0  # however that stream ended, the next try starts afresh
            attempt += 1
            if self.config.max_reconnects is not None and attempt > self.config.max_reconnects:
                raise ConnectionError(f"giving up after {attempt - 1} attempts: {reason}")
            delay = self.backoff_delay(attempt)
            self.reconnect_delays.append(delay)
            log(
                logging.WARNING,
                "stream ended" if self._welcomed else "cannot connect",
                reason=reason,
                retry_in_s=round(delay, 3),
            )
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), delay)
        log(logging.INFO, "stopped", bot=self.name)

    async def _connect_once(self) -> str:
        """One connection attempt and its stream, on a channel of its own. Returns why it ended
        (plain words); raises FatalStreamError when reconnecting cannot help."""
        channel = self._channel()
        try:
            await self._session(bot_pb2_grpc.BotServiceStub(channel))
            return "the server closed the stream"
        except grpc.aio.AioRpcError as err:
            code = err.code()
            if code in FATAL_CODES:
                fatal = FatalStreamError(code, err.details() or "")
                log(logging.ERROR, "stream refused", code=code.name, details=err.details())
                raise fatal from None
            return self.describe(err)
        finally:
            self._drop_session()
            await channel.close(None)

    def describe(self, err: grpc.aio.AioRpcError) -> str:
        """A failed call in plain words: "connection refused (127.0.0.1:50051)", "server closed
        the stream: UNAVAILABLE (shutting down)"."""
        details = err.details() or ""
        text = f"{details} {err.debug_error_string() or ''}".lower()
        target = self.target
        if err.code() == grpc.StatusCode.UNAVAILABLE:
            if "connection refused" in text:
                return f"connection refused ({target})"
            if "dns" in text or "name or service not known" in text:
                return f"cannot resolve the host ({target})"
            if "failed to connect" in text:
                return f"cannot connect ({target})"
            if "handshake" in text or "ssl" in text:
                return f"TLS handshake failed ({target}): {details}"
        return f"server closed the stream: {err.code().name} ({details or 'no details'})"

    def _hello(self) -> bot_pb2.PlayRequest:
        cfg = self.config
        hello = bot_pb2.Hello(
            bot_name=self.name,
            bot_version=hello_bot_version(
                cfg.version if cfg.version is not None else self.bot.version
            ),
            protocol_version=PROTOCOL_VERSION,
            max_concurrent_matches=cfg.max_concurrent_matches,
            push_events=cfg.push_events,
            max_batch=cfg.max_batch,
        )
        if self.session_id:
            hello.resume.session_id = self.session_id
            for st in self.states.values():
                hello.resume.cursors.add(
                    match_id=st.match_id, seat=st.seat, last_sequence=st.last_sequence
                )
        return bot_pb2.PlayRequest(hello=hello)

    async def _session(self, stub: Any) -> None:
        """One stream, until it ends (raises AioRpcError if it failed) or :meth:`stop`."""
        self._loop_time = asyncio.get_running_loop().time
        self._decide_is_async = self.bot.is_async()
        outbox: asyncio.Queue[Any] = asyncio.Queue()  # PlayRequest, _FLUSH, or None: the end
        self._outbox = outbox
        outbox.put_nowait(self._hello())

        async def requests() -> AsyncIterator[bot_pb2.PlayRequest]:
            while (msg := await outbox.get()) is not None:
                if msg is _FLUSH:
                    # one turn of the loop first, so the answers to the other requests that came
                    # in the same read join this message: every answer waiting then goes out at
                    # once, one Action or an ActionBatch of up to 256 (a write costs far more
                    # than a turn of the loop: 0.50 -> 0.43 messages per move in bench-server)
                    await asyncio.sleep(0)
                    # taken one message at a time, so that a RequestClosed read while an earlier
                    # message is written still drops its answer from the rest
                    acts = self._actions
                    while acts:
                        chunk = acts[:MAX_ACTION_BATCH]
                        del acts[:MAX_ACTION_BATCH]
                        if len(chunk) == 1:
                            yield bot_pb2.PlayRequest(action=chunk[0])
                        else:
                            yield bot_pb2.PlayRequest(actions=bot_pb2.ActionBatch(actions=chunk))
                    continue
                yield msg

        metadata = (("authorization", f"Bearer {self.config.token}"),)
        call = stub.Play(requests(), metadata=metadata)
        reader = asyncio.create_task(self._read(call))
        stopper = asyncio.create_task(self._stop.wait())
        try:
            await asyncio.wait({reader, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if not reader.done():
                # leaving: half-close so the server knows, then give it a moment to end the call
                outbox.put_nowait(None)
                with contextlib.suppress(TimeoutError, grpc.aio.AioRpcError):
                    await asyncio.wait_for(asyncio.shield(reader), self.config.stop_grace)
                call.cancel()
                return
            reader.result()  # re-raises AioRpcError
        finally:
            stopper.cancel()
            if not reader.done():
                reader.cancel()
                with contextlib.suppress(asyncio.CancelledError, grpc.aio.AioRpcError):
                    await reader

    def _drop_session(self) -> None:
        """Forget everything tied to the current stream (half-closing it if still open)."""
        for task in self._tasks.values():
            task.cancel()
        self._tasks.clear()
        self._received.clear()
        self._answered.clear()
        self._seat_request.clear()
        self._actions.clear()
        if self._outbox is not None:
            self._outbox.put_nowait(None)
        self._outbox = None

    def _send(self, msg: bot_pb2.PlayRequest) -> None:
        if self._outbox is not None:
            self._outbox.put_nowait(msg)

    # ------------------------------------------------------------------ incoming messages

    async def _read(self, call: Any) -> None:
        async for resp in call:
            await self._dispatch(resp)

    async def _dispatch(self, resp: bot_pb2.PlayResponse) -> None:
        """Handle one server message, in stream order. Nothing here waits for a decision."""
        kind = resp.WhichOneof("kind")
        if kind == "batch":  # several messages at once (Hello.max_batch): each as if alone
            for msg in resp.batch.messages:
                await self._dispatch(msg)
        elif kind == "decision_request":
            await self._on_decision_request(resp.decision_request)
        elif kind == "action_result":
            self._on_action_result(resp.action_result)
        elif kind == "request_closed":
            self._on_request_closed(resp.request_closed)
        elif kind == "welcome":
            self._on_welcome(resp.welcome)
        elif kind == "match_started":
            await self._on_match_started(resp.match_started)
        elif kind == "match_ended":
            await self._on_match_ended(resp.match_ended)
        elif kind == "seat_events":
            ev = resp.seat_events
            await self._deliver_events(self._state(ev.match_id, ev.seat), ev.events)
        elif kind == "error":
            err = resp.error
            log(
                logging.ERROR if err.fatal else logging.WARNING,
                "stream error",
                code=err.code,
                reason=_reason_name(err.reason),
                message=err.message,
                fatal=err.fatal,
            )
        # pong and kinds unknown to this SDK are ignored

    async def _on_decision_request(self, req: bot_pb2.DecisionRequest) -> None:
        b = self.bot
        inline = not b.threaded and not self._decide_is_async
        rid, match_id, seat = req.request_id, req.match_id, req.seat
        if not inline:
            self._received[rid] = self._loop_time()
        # at most one request is open per (match, seat): a new one settles every earlier one
        self._forget_seat(match_id, seat, keep=rid)
        prev = self._tasks.pop(rid, None)
        if prev is not None:  # re-sent while we were still thinking: start over
            prev.cancel()
        st = self._state(match_id, seat)
        st.decisions += 1
        st.hand_number = req.hand_number
        await self._deliver_events(st, req.events)
        if inline:
            # a quick sync decide (threaded = False) runs right here: no task, no timer
            self._decide_inline(req, st)
            return
        task = asyncio.create_task(self._handle_decision(req), name=_task_name(req))
        self._tasks[req.request_id] = task
        task.add_done_callback(functools.partial(self._task_done, req.request_id))

    def _task_done(self, request_id: str, task: asyncio.Task[None]) -> None:
        if self._tasks.get(request_id) is task:
            del self._tasks[request_id]
            self._received.pop(request_id, None)

    def _forget_seat(self, match_id: str, seat: int, keep: str = "") -> None:
        """Drop what is kept about the seat's earlier request (``keep`` is its new one, if any):
        at most one request is open per seat, so a new one, a RequestClosed or the match end
        settles the earlier one (answered and applied, closed, or over)."""
        key = (match_id, seat)
        old = self._seat_request.pop(key, None)
        if keep:
            self._seat_request[key] = keep
        if old is None or old == keep:
            return
        if self._actions:  # an answer to the old request still waiting is late: not sent
            self._actions[:] = [a for a in self._actions if a.request_id != old]
        self._answered.pop(old, None)
        self._retried.discard(old)
        self._received.pop(old, None)
        task = self._tasks.pop(old, None)
        if task is not None:
            task.cancel()

    def _on_welcome(self, welcome: bot_pb2.Welcome) -> None:
        self.session_id = welcome.session_id
        self.connections += 1
        self._welcomed = True
        held = {(s.match_id, s.seat) for s in welcome.seats}
        for key in [k for k in self.states if k not in held]:
            log(logging.INFO, "match ended while disconnected", match_id=key[0], seat=key[1])
            del self.states[key]
        if not self.states:
            self._retried.clear()
        log(
            logging.INFO,
            "connected",
            bot=welcome.bot_name or self.name,
            addr=self.target,
            session_id=welcome.session_id,
            resumed=welcome.resumed,
            server_version=welcome.server_version,
            seats=len(welcome.seats),
        )

    def _state(self, match_id: str, seat: int) -> MatchState:
        st = self.states.get((match_id, seat))
        if st is None:
            st = self.bot.new_state(match_id, seat)
            self.states[(match_id, seat)] = st
        return st

    async def _call_hook(self, hook: str, fn: Callable[[], Any], st: MatchState) -> None:
        try:
            result = fn()
            if inspect.isawaitable(result):
                await result
        except Exception:
            log(
                logging.ERROR,
                "bot hook failed",
                hook=hook,
                match_id=st.match_id,
                seat=st.seat,
                exc_info=True,
            )

    async def _deliver_events(self, st: MatchState, events: Sequence[game_pb2.Event]) -> None:
        if not events:
            return
        last = st.last_sequence
        # events come oldest first (bot.proto), so the first and the last tell the usual cases
        # apart without touching the others: all new, or all seen before (a replay)
        if events[0].sequence > last:
            fresh: Sequence[game_pb2.Event] = events
        elif events[-1].sequence <= last:
            return
        else:
            fresh = [e for e in events if e.sequence > last]
        st.last_sequence = max(last, fresh[-1].sequence)
        # Bot.on_events itself does nothing: a bot that keeps it costs no call per request
        if not getattr(self.bot.on_events, _BASE_HOOK, False):
            await self._call_hook("on_events", lambda: self.bot.on_events(st, list(fresh)), st)

    async def _on_match_started(self, msg: bot_pb2.MatchStarted) -> None:
        st = self._state(msg.match_id, msg.seat)
        st.started = msg
        log(logging.INFO, "match started", match_id=msg.match_id, seat=msg.seat)
        await self._call_hook("on_match_started", lambda: self.bot.on_match_started(st), st)

    async def _on_match_ended(self, msg: bot_pb2.MatchEnded) -> None:
        st = self._state(msg.match_id, msg.seat)
        self._forget_seat(msg.match_id, msg.seat)
        await self._deliver_events(st, msg.events)
        log(
            logging.INFO,
            "match ended",
            match_id=msg.match_id,
            seat=msg.seat,
            won=msg.won,
            winners=list(msg.winners),
            strikes=msg.strikes,
            rejected=msg.rejected_actions,
            taken_over=msg.taken_over,
            cause=_enum_name(game_pb2.EndCause, msg.cause),
        )
        await self._call_hook("on_match_ended", lambda: self.bot.on_match_ended(st, msg), st)
        self.states.pop(st.key(), None)

    def _on_request_closed(self, msg: bot_pb2.RequestClosed) -> None:
        rid = msg.request_id
        if self._actions:  # an answer still waiting for the writer is never sent (issue 20)
            self._actions[:] = [a for a in self._actions if a.request_id != rid]
        self._answered.pop(msg.request_id, None)
        self._retried.discard(msg.request_id)
        task = self._tasks.pop(msg.request_id, None)
        if task is not None:
            task.cancel()
        fields: dict[str, Any] = {
            "match_id": msg.match_id,
            "seat": msg.seat,
            "request_id": msg.request_id,
        }
        if msg.reason == bot_pb2.CLOSE_REASON_TIMED_OUT:
            log(
                logging.WARNING,
                "request timed out; the server played the default",
                **fields,
                applied_action_id=msg.applied_action_id,
                strikes=msg.strikes,
            )
        else:
            log(
                logging.DEBUG,
                "request closed",
                **fields,
                reason=_enum_name(bot_pb2.CloseReason, msg.reason),
            )

    def _on_action_result(self, msg: bot_pb2.ActionResult) -> None:
        answered = self._answered.pop(msg.request_id, None)
        if answered is not None:
            self.bot.on_action_result(msg, time.monotonic() - answered.sent_at)
        fields: dict[str, Any] = {
            "match_id": msg.match_id,
            "seat": msg.seat,
            "request_id": msg.request_id,
            "action_id": msg.action_id,
        }
        late = msg.code == LATE_CODE  # the request closed first: a race, not the bot's fault
        log(
            logging.INFO if late else logging.WARNING,
            "answer arrived late (request already closed)" if late else "action rejected",
            **fields,
            reason=_reason_name(msg.reason),
            message=msg.message,
            request_open=msg.request_open,
        )
        if not msg.request_open or answered is None or msg.request_id in self._retried:
            return
        self._retried.add(msg.request_id)  # exactly one retry per request, never more
        alt = fallback_action(answered.request)
        if alt is not None:
            log(logging.INFO, "answering again with the fallback", **{**fields, "action_id": alt})
            self._answer(answered.request, alt)

    # ------------------------------------------------------------------ decisions

    def _answer(self, req: bot_pb2.DecisionRequest, action_id: int, **_: Any) -> None:
        self._answered[req.request_id] = _Answered(req, action_id, time.monotonic())
        outbox = self._outbox
        if outbox is None:
            return
        actions = self._actions
        actions.append(bot_pb2.Action(request_id=req.request_id, action_id=action_id))
        if len(actions) == 1:  # the writer sends every answer waiting when it gets to this
            outbox.put_nowait(_FLUSH)


LATE_CODE = 10
"""ActionResult.code of a late answer (ABORTED: STALE_REQUEST, ALREADY_ANSWERED,
DEADLINE_PASSED): a correct bot gets some, so it is logged at INFO, a fault at WARNING."""


def _reason_name(reason: int) -> str:
    return _enum_name(errors_pb2.ErrorReason, reason)


# ---------------------------------------------------------------------- running


async def run_async(bot: Bot, config: ClientConfig, *, handle_signals: bool = True) -> None:
    """Run ``bot`` until SIGINT/SIGTERM (if ``handle_signals``) or a fatal stream error."""
    client = BotClient(bot, config)
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    if handle_signals:
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, client.stop)
                installed.append(sig)
    try:
        await client.run()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


def run(bot: Bot, config: ClientConfig) -> None:
    """Blocking: run ``bot`` until SIGINT/SIGTERM."""
    asyncio.run(run_async(bot, config))
