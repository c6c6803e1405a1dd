"""The web view's HTTP side (aiohttp): pages, a JSON list of matches, and one server-sent-event
stream per watched table.

==================================  =========================================================
``GET /``                           the page (lists live matches; ``#/match/ID`` shows one)
``GET /static/{file}``              its script and style sheet
``GET /api/matches``                matches, newest first (``?label=KEY=VALUE`` filters),
                                    each with ``replayable``: false for a finished match whose
                                    events the server no longer keeps
``GET /api/matches/{id}/events``    ``text/event-stream``: ``state`` events with the table as
                                    JSON after every change, ``end`` when the match is over
                                    (404 for an unknown match or one too old to replay, 400 for
                                    a malformed id)
``GET /api/events?match={id}``      the same: a browser drops the path segments ``.`` and
                                    ``..`` (even written ``%2E``), so the page asks for those
                                    ids here
==================================  =========================================================

Every table state is built by :class:`~uno_server.play.model.TableModel` from the spectator
stream alone.

The server keeps a finished match's summary (``ListMatches``, ``GetMatch``) much longer than
its event log (by default an hour and 1000 matches against 120 s and 128 matches; see
``proto/uno/v1/admin.proto``, "Retention"), so the list holds matches that can no longer be
replayed. Which ones: ``AwaitMatch`` from a finished match's last event answers at once, with no
event, while the server keeps its log, and NOT_FOUND once it has freed it; the server frees the
logs of the matches that ended first, so a few such calls (a binary search over the end times)
find where the replayable ones start (:meth:`~uno_server.play.follow.Spectator.expired`, which
``watch`` asks too). (The web view makes no other call than these, GetMatch,
ListMatches and WatchMatch: it can never start, change or cancel a match.)
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
from collections.abc import Callable
from importlib import resources
from typing import Any, Final

import grpc
from aiohttp import web

from uno_server.gen.uno.v1 import admin_pb2
from uno_server.play.cards import COLOR_WORDS, label
from uno_server.play.follow import Follower, Spectator, WatchError, names_of
from uno_server.play.model import CardRef, ColorRef, LogLine, TableModel, unique_names
from uno_server.web.guard import CappedRunner

LOG_LINES = 40
HEARTBEAT_S = 15.0
_STATES = {
    admin_pb2.MATCH_STATE_RUNNING: "running",
    admin_pb2.MATCH_STATE_FINISHED: "finished",
    admin_pb2.MATCH_STATE_CANCELLED: "cancelled",
}
_STATIC = {"app.js": "application/javascript", "style.css": "text/css"}


def card_json(code: int) -> dict[str, Any]:
    return {"code": code, "label": label(code), "color": COLOR_WORDS[min(code >> 4, 4)]}


def line_json(line: LogLine) -> dict[str, Any]:
    parts: list[Any] = []
    for p in line.parts:
        if isinstance(p, CardRef):
            parts.append({"card": card_json(p.code)})
        elif isinstance(p, ColorRef):
            parts.append({"color": COLOR_WORDS[p.color]})
        else:
            parts.append(p)
    return {"seq": line.sequence, "hand": line.hand_number, "kind": line.kind, "parts": parts}


def state_json(
    model: TableModel, info: admin_pb2.MatchInfo | None, *, ended: bool
) -> dict[str, Any]:
    """One table as a spectator sees it, for the browser."""
    seats = []
    for s in model.seats:
        seats.append(
            {
                "seat": s.seat,
                "name": model.names[s.seat],
                "cards": s.cards,
                "uno": s.uno and s.cards == 1,
                "total": s.total,
                "connected": s.connected,
                "taken_over": s.taken_over,
                "revealed": [card_json(c) for c in s.revealed]
                if s.revealed is not None and model.phase == "over"
                else None,
                "points_held": s.points_held,
                "eliminated": s.eliminated,
            }
        )
    labels = dict(info.labels) if info is not None else {}
    return {
        "match_id": model.match_id,
        "labels": labels,
        "state": _STATES.get(info.state, "running") if info is not None else "running",
        "ended": ended,
        "seq": model.last_sequence,
        "hand": model.hand_number,
        "phase": model.phase,
        "dealer": model.dealer,
        "direction": model.direction,
        "current": model.current if model.in_hand else -1,
        "window": (
            {"offender": model.window, "closes_at": model.window_closes}
            if model.window >= 0
            else None
        ),
        "penalty": model.penalty,
        "top": card_json(model.top) if model.top >= 0 else None,
        "color": COLOR_WORDS[model.color] if 0 <= model.color < 4 else None,
        "draw_pile": model.draw_pile,
        "discard": model.discard,
        "seats": seats,
        "winner": model.winner,
        "match_over": model.match_over,
        "winners": list(model.winners),
        "cancelled": model.cancelled,
        "log": [line_json(line) for line in list(model.log)[-LOG_LINES:]],
    }


def match_json(info: admin_pb2.MatchInfo, *, replayable: bool = True) -> dict[str, Any]:
    """One match of the list. ``replayable``: its event stream can be opened (false only for a
    finished match whose events the server no longer keeps)."""
    return {
        "match_id": info.match_id,
        "state": _STATES.get(info.state, "unknown"),
        # the labels the event stream and the screens use: "heuristic #1", "heuristic #3"
        "seats": unique_names(names_of(info)),
        "hand": info.hand_number,
        "totals": list(info.totals),
        "winners": list(info.winners),
        "labels": dict(info.labels),
        "created": info.created_at.ToNanoseconds() / 1e9,
        "replayable": replayable,
    }


class WebView:
    """The web view of one server, reached at ``target`` with ``admin_token``."""

    def __init__(
        self,
        target: str,
        admin_token: str,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        credentials: grpc.ChannelCredentials | None = None,
    ) -> None:
        self.target = target
        self.admin_token = admin_token
        self.host = host
        self.port = port
        self.credentials = credentials
        self.channel: grpc.aio.Channel | None = None
        self.spectator: Spectator | None = None
        self._runner: CappedRunner | None = None
        self._streams: set[asyncio.Task[Any]] = set()

    def app(self) -> web.Application:
        app = web.Application()
        app.router.add_get("/", self.index)
        app.router.add_get("/static/{name}", self.static)
        app.router.add_get("/api/matches", self.matches)
        app.router.add_get("/api/matches/{match_id}/events", self.events)
        app.router.add_get("/api/events", self.events)  # ?match=ID: for the ids "." and ".."
        app.router.add_get("/healthz", self.healthz)
        return app

    async def start(self) -> int:
        if self.credentials is not None:
            self.channel = grpc.aio.secure_channel(self.target, self.credentials)
        else:
            self.channel = grpc.aio.insecure_channel(self.target)
        self.spectator = Spectator(self.channel, self.admin_token)
        # handler_cancellation: a browser tab that closes cancels its handler at once, and with
        # it the WatchMatch call it reads (not when a write first fails, or garbage collection)
        # at most WEB_CONNECTIONS at once, a silent one closed (guard): the page shares the
        # process's descriptors with the game server that bots reach
        self._runner = CappedRunner(
            self.app(), access_log=None, handle_signals=False, handler_cancellation=True
        )
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port)
        await site.start()
        server = site._server
        sockets = getattr(server, "sockets", None) or []
        if sockets:
            self.port = int(sockets[0].getsockname()[1])
        return self.port

    async def stop(self) -> None:
        for task in list(self._streams):
            task.cancel()
        if self._runner is not None:
            await self._runner.cleanup()
        if self.channel is not None:
            await self.channel.close()

    # ------------------------------------------------------------------ handlers

    async def index(self, request: web.Request) -> web.StreamResponse:
        return self._file("index.html", "text/html")

    async def static(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name not in _STATIC:
            raise web.HTTPNotFound(text=f"no such file: {name}")
        return self._file(name, _STATIC[name])

    @staticmethod
    def _file(name: str, content_type: str) -> web.Response:
        body = resources.files(__package__).joinpath("static", name).read_bytes()
        return web.Response(
            body=body,
            content_type=content_type,
            charset="utf-8",
            headers={"Cache-Control": "no-cache"},
        )

    async def healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="ok\n")

    async def matches(self, request: web.Request) -> web.Response:
        assert self.spectator is not None
        labels = {}
        for item in request.query.getall("label", []):
            key, sep, value = item.partition("=")
            if not sep:
                raise web.HTTPBadRequest(text="label: write it as KEY=VALUE")
            labels[key] = value
        try:
            infos = await self.spectator.matches(labels=labels, limit=200)
        except WatchError as exc:
            if exc.code == grpc.StatusCode.INVALID_ARGUMENT:  # the filter: the asker's to fix
                raise web.HTTPBadRequest(text=f"label: {exc}") from exc
            raise web.HTTPBadGateway(text=str(exc)) from exc
        infos.sort(key=lambda m: m.state != admin_pb2.MATCH_STATE_RUNNING)
        try:
            expired = await self.spectator.expired(infos)
        except WatchError as exc:
            raise web.HTTPBadGateway(text=str(exc)) from exc
        return web.json_response(
            {"matches": [match_json(i, replayable=i.match_id not in expired) for i in infos]}
        )

    async def events(self, request: web.Request) -> web.StreamResponse:
        assert self.spectator is not None
        match_id = request.match_info.get("match_id", request.query.get("match", ""))
        await self._check_match(match_id)
        resp = web.StreamResponse(
            headers={
                "Content-Type": "text/event-stream",
                "Cache-Control": "no-cache",
                "X-Accel-Buffering": "no",
            }
        )
        await resp.prepare(request)
        follower = Follower(self.spectator, match_id)
        lock = asyncio.Lock()

        async def send(event: str, data: Any) -> None:
            payload = json.dumps(data, separators=(",", ":"))
            async with lock:
                await resp.write(f"event: {event}\ndata: {payload}\n\n".encode())

        async def on_change(f: Follower, line: LogLine | None) -> None:
            if f.error:
                await send("problem", {"message": problem_text(f)})
                return
            if f.model is not None:
                await send("state", state_json(f.model, f.info, ended=f.ended))

        async def beat() -> None:
            with contextlib.suppress(ConnectionResetError):  # the handler is cancelled too
                while True:
                    await asyncio.sleep(HEARTBEAT_S)
                    async with lock:
                        await resp.write(b": keep-alive\n\n")

        task = asyncio.current_task()
        if task is not None:
            self._streams.add(task)
        heart = asyncio.create_task(beat())
        try:
            # the follower closes its WatchMatch call however this ends: a write that fails
            # (ConnectionResetError), or the handler cancelled (the browser went away, or the
            # view stops)
            await follower.run(on_change)
            await send("end", {"match_id": match_id})
        except ConnectionResetError:
            return resp
        finally:
            heart.cancel()
            if task is not None:
                self._streams.discard(task)
        with contextlib.suppress(ConnectionResetError):
            await resp.write_eof()
        return resp

    async def _check_match(self, match_id: str) -> None:
        """Refuse a match id before the event stream starts: 400 for one that cannot be a match
        id (the server's own limit: 1-64 printable ASCII characters), 404 for one the server
        does not know. Only a short prefix of the id is said back."""
        assert self.spectator is not None
        if not MATCH_ID_RE.fullmatch(match_id):
            raise web.HTTPBadRequest(
                text=f"match id {shown_id(match_id)} ({len(match_id)} characters): a match id "
                "is 1-64 printable ASCII characters"
            )
        try:
            info = await self.spectator.match(match_id)
            replayable = await self.spectator.replayable(info)
        except WatchError as exc:
            if exc.code == grpc.StatusCode.NOT_FOUND:
                raise web.HTTPNotFound(
                    text=f"no match {shown_id(match_id)}: unknown, or ended longer ago than "
                    "the server keeps matches; go back to the list of matches"
                ) from exc
            if exc.code == grpc.StatusCode.INVALID_ARGUMENT:
                raise web.HTTPBadRequest(text=f"match id {shown_id(match_id)}: refused") from exc
            raise web.HTTPBadGateway(text=str(exc)) from exc
        if not replayable:
            raise web.HTTPNotFound(text=too_old_text(match_id))


def problem_text(follower: Follower) -> str:
    """Why the stream of ``follower``'s match stopped, for the page: a match the server does
    not know (it ended long ago, or went with a restarted server) in the 404's words, not as
    the server's raw refusal (a gRPC status name)."""
    if follower.error_code == grpc.StatusCode.NOT_FOUND:
        if follower.info is not None:  # its summary came first: known, but its events are gone
            return too_old_text(follower.match_id)
        return (
            f"no match {shown_id(follower.match_id)}: unknown, or ended longer ago than the "
            "server keeps matches; go back to the list of matches"
        )
    return follower.error


def too_old_text(match_id: str) -> str:
    """Why a finished match the server still lists cannot be replayed, and what to do."""
    return (
        f"match {shown_id(match_id)} ended too long ago to replay: the server keeps a finished "
        "match's events only a short while after its end; go back to the list of matches and "
        "open one in play or one that ended recently"
    )


MATCH_ID_RE: Final = re.compile(r"[\x20-\x7e]{1,64}")
"""What the server takes as a match id (uno_server.service.limits.MATCH_ID)."""
ID_SHOWN: Final = 32


def shown_id(match_id: str) -> str:
    """A match id to say back: quoted, and cut to a short prefix (an id can be any length)."""
    if len(match_id) <= ID_SHOWN:
        return repr(match_id)
    return repr(match_id[:ID_SHOWN]) + "..."


def loopback(host: str, port: int) -> str:
    """The address of a server listening on ``host`` as seen from the same machine."""
    if host in ("0.0.0.0", "", "::", "[::]"):
        host = "127.0.0.1"
    return f"{host}:{port}"


async def start_web_view(
    *,
    grpc_host: str,
    grpc_port: int,
    admin_token: str,
    web_host: str,
    web_port: int,
    tls_cert: str = "",
    view: Callable[..., WebView] | None = None,
) -> WebView:
    """Start the web view of the server on ``grpc_port`` (``uno-arena serve --web-port``). With
    TLS it reaches the server as ``localhost``, trusting the server's own certificate. ``view``
    makes the view instead of :class:`WebView` (``serve --league``: with a league's standings)."""
    credentials = None
    target = loopback(grpc_host, grpc_port)
    if tls_cert:
        with open(tls_cert, "rb") as f:
            credentials = grpc.ssl_channel_credentials(root_certificates=f.read())
        target = f"localhost:{grpc_port}"
    made = (view or WebView)(
        target, admin_token, host=web_host, port=web_port, credentials=credentials
    )
    await made.start()
    return made
