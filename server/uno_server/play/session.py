"""Setting up a table for ``uno-arena play``: the server (embedded or running), the person's
seat, the practice AIs, friends and bots, and the match.

Everything goes through the public contract: the person's seat and the practice AIs are SDK bots
with bot tokens; the match is created with ``AdminService.CreateMatch`` (admin token), after
``ListBots`` shows every named bot connected.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import secrets
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import grpc
from google.protobuf.descriptor import FieldDescriptor
from grpc_health.v1 import health_pb2, health_pb2_grpc

from uno_bot import BotClient, ClientConfig
from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc, game_pb2
from uno_server.service.tlsclient import SYSTEM as SYSTEM_CA
from uno_server.service.tlsclient import channel as tls_channel
from uno_server.service.tlsclient import connection_hint

from .human import NO_DEADLINE_MS, HumanBot, Sink
from .practice import AiStyle, PracticeBot

BUILTINS = {"random": game_pb2.BUILTIN_BOT_RANDOM, "heuristic": game_pb2.BUILTIN_BOT_HEURISTIC}
PRACTICE_WINDOW_MS = 5000
"""The slow UNO window of local practice (the WANGO rules: 2 s normally, 5 s in practice)."""
HUMAN_DECISION_MS = 30_000
"""A person's decision allowance outside practice."""
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}\Z")


class SetupError(Exception):
    """A bad table description; the message says what to change."""


@dataclass(frozen=True, slots=True)
class SeatSpec:
    """One seat: ``me`` (the person), ``ai`` (practice AI), ``builtin`` or ``bot`` (a connected
    bot: a friend's play client or your own bot)."""

    kind: str
    name: str


@dataclass
class PlayOptions:
    server: str | None = None
    """A running server's HOST:PORT; None starts an embedded server."""
    listen: str = "127.0.0.1:0"
    """Where the embedded server listens (HOST:PORT; port 0 picks one)."""
    name: str = "you"
    token: str = ""
    """Your seat's bot token (running server only; the embedded server makes its own)."""
    admin_token: str = ""
    """Running server: the admin token to create the match (without it you wait to be seated)."""
    tls_ca: str | None = None
    """Running server that speaks TLS: its CA certificate (PEM file), or ``system`` for the
    system's roots (``--tls-ca``); None: plaintext."""
    seats: list[str] = field(default_factory=list)
    bot_tokens: dict[str, str] = field(default_factory=dict)
    """Embedded server: tokens for connected bots named in the seats (others get new ones)."""
    practice: bool = False
    decision_ms: int | None = None
    uno_window_ms: int | None = None
    target_score: int | None = None
    """None: one hand (the WANGO rules); a number: standard scoring to that many points."""
    rules: dict[str, Any] = field(default_factory=dict)
    seed: int | None = None
    dealer: int | None = None
    ai_style: AiStyle = field(default_factory=AiStyle)
    ai_seed: int = 1

    @property
    def embedded(self) -> bool:
        return self.server is None

    def seat_specs(self) -> list[SeatSpec]:
        raw = self.seats or (
            ["me", "ai", "ai", "ai"]
            if self.embedded
            else ["me", "heuristic", "heuristic", "heuristic"]
        )
        if not _NAME.match(self.name):
            raise SetupError(f"--name {self.name!r}: use 1-64 letters, digits, '_', '.' or '-'")
        out: list[SeatSpec] = []
        ai = 0
        for item in raw:
            if item in ("me", self.name):
                out.append(SeatSpec("me", self.name))
            elif item == "ai":
                if not self.embedded:
                    raise SetupError(
                        "--seats: 'ai' seats need the embedded server; on a running server "
                        "seat 'heuristic' or 'random' (the server's built-in bots)"
                    )
                ai += 1
                out.append(SeatSpec("ai", f"ai-{ai}"))
            elif item in BUILTINS:
                out.append(SeatSpec("builtin", item))
            elif _NAME.match(item):
                out.append(SeatSpec("bot", item))
            else:
                raise SetupError(
                    f"--seats: {item!r} is not a bot name, me, ai, heuristic or random"
                )
        if [s.kind for s in out].count("me") != 1:
            raise SetupError(f"--seats: name your own seat exactly once (as 'me' or {self.name!r})")
        if not 2 <= len(out) <= 10:
            raise SetupError(f"--seats: a table has 2-10 seats, got {len(out)}")
        return out

    def rule_set(self) -> game_pb2.RuleSet:
        rules = game_pb2.RuleSet(seats=len(self.seat_specs()))
        if self.target_score is None:
            rules.scoring = game_pb2.SCORING_SINGLE_HAND
        else:
            rules.scoring = game_pb2.SCORING_STANDARD
            rules.target_score = self.target_score
        window = self.uno_window_ms
        if window is None and self.practice:
            window = PRACTICE_WINDOW_MS
        if window is not None:
            rules.uno_window_ms = window
        for key, value in self.rules.items():
            field_ = game_pb2.RuleSet.DESCRIPTOR.fields_by_name.get(key)
            if field_ is None:
                raise SetupError(
                    f"--rule {key}: unknown rule option; the options: {', '.join(RULE_NAMES)}"
                )
            setattr(rules, key, rule_value(field_, value))
        return rules

    def time_control(self) -> game_pb2.TimeControl:
        ms = self.decision_ms
        if ms is None:
            ms = NO_DEADLINE_MS if self.practice else HUMAN_DECISION_MS
        if not 1 <= ms <= NO_DEADLINE_MS:
            raise SetupError(f"--decision-ms: must be 1-{NO_DEADLINE_MS}, got {ms}")
        return game_pb2.TimeControl(decision_ms=ms)


RULE_NAMES: Final = tuple(f.name for f in game_pb2.RuleSet.DESCRIPTOR.fields if f.name != "seats")
"""The house rules ``--rule`` sets (the seats come from ``--seats``)."""


def rule_value(field_: Any, value: object) -> object:
    """``--rule NAME=VALUE``'s value for the RuleSet field ``field_`` (a FieldDescriptor):
    ``value`` is JSON text (``true``, ``3``, ``"lowest"``; a bare word is taken as a string)
    or already a value. A value of the wrong kind is refused in one line naming the rule, the
    value and what it takes."""
    if isinstance(value, str):
        shown = value
        try:
            value = json.loads(value)
        except ValueError:  # not JSON (a bare word), or a number of over 4,300 digits
            pass
    else:
        shown = json.dumps(value)
    name = field_.name
    shown = shown if len(shown) <= 40 else shown[:40] + "..."
    if field_.enum_type is not None:  # first_flip=redraw, scoring=lowest
        prefix = f"{name}_".upper()
        names = [v.name[len(prefix) :].lower() for v in field_.enum_type.values if v.number]
        if isinstance(value, str) and value.lower() in names:
            return field_.enum_type.values_by_name[f"{prefix}{value.upper()}"].number
        raise SetupError(f"--rule {name}={shown}: takes one of {', '.join(names)}")
    if field_.type == FieldDescriptor.TYPE_BOOL:
        if isinstance(value, bool):
            return value
        raise SetupError(f"--rule {name}={shown}: takes true or false")
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31:
        return value
    raise SetupError(f"--rule {name}={shown}: takes a whole number, 0 or more (e.g. 3)")


def split_addr(addr: str) -> tuple[str, int]:
    host, sep, port = addr.rpartition(":")
    if not sep or not port.isascii() or not port.isdigit():
        raise SetupError(f"{addr[:80]!r}: write the address as HOST:PORT, e.g. 127.0.0.1:50051")
    # the length first: int() refuses a string of more than 4,300 digits with a ValueError
    if len(port) > 5 or not 0 <= int(port) <= 65535:
        raise SetupError(f"{addr[:80]!r}: the port must be from 0 to 65535")
    return host.strip("[]") or "127.0.0.1", int(port)


class TableSession:
    """Runs the table behind one play screen until :meth:`close`."""

    def __init__(
        self,
        options: PlayOptions,
        sink: Sink,
        say: Callable[[str], None],
        on_failure: Callable[[str], None] | None = None,
    ) -> None:
        self.options = options
        self.sink = sink
        self.say = say
        self.on_failure = on_failure
        """Called once a seat of ours stops for good (a refused token or name: the client
        reconnects after anything else), with what went wrong."""
        self.specs = options.seat_specs()
        self.addr = options.server or ""
        self.public_addr = self.addr
        """The address friends and bots connect to (the host's name when listening on all)."""
        self.admin_token = options.admin_token
        self.tokens: dict[str, str] = {}
        self.server: Any = None
        self.clients: list[BotClient] = []
        self.tasks: list[asyncio.Task[None]] = []
        self.channel: grpc.aio.Channel | None = None
        self.match_id = ""
        self.matches = 0
        self.human: BotClient | None = None
        self.failure = ""

    @property
    def can_create(self) -> bool:
        return bool(self.admin_token)

    def _md(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {self.admin_token}"),)

    async def start(self) -> None:
        """Start the server (if embedded), the person's seat and the practice AIs."""
        opts = self.options
        token = opts.token
        if opts.embedded:
            from uno_server.service.server import ArenaServer, ServerConfig

            host, port = split_addr(opts.listen)
            self.admin_token = secrets.token_urlsafe(18)
            token = secrets.token_urlsafe(18)
            self.tokens[opts.name] = token
            for spec in self.specs:
                if spec.kind in ("ai", "bot") and spec.name not in self.tokens:
                    self.tokens[spec.name] = opts.bot_tokens.get(
                        spec.name
                    ) or secrets.token_urlsafe(12)
            self.server = ArenaServer(
                ServerConfig(host=host, port=port, admin_token=self.admin_token, bots=self.tokens)
            )
            try:
                port = await self.server.start()
            except (OSError, RuntimeError) as exc:
                raise SetupError(f"cannot listen on {opts.listen}: {exc}") from exc
            anywhere = host in ("0.0.0.0", "")
            self.addr = f"{'127.0.0.1' if anywhere else host}:{port}"
            self.public_addr = f"{socket.gethostname()}:{port}" if anywhere else self.addr
        elif not token:
            raise SetupError("--token: your seat's bot token on that server is required")
        self.channel = tls_channel(self.addr, None if opts.embedded else opts.tls_ca)
        if not opts.embedded:
            await self._reachable()
        self.human = self._client(HumanBot(opts.name, self.sink), opts.name, token)
        for spec in self.specs:
            if spec.kind == "ai":
                bot = PracticeBot(spec.name, opts.ai_seed, opts.ai_style)
                self._client(bot, spec.name, self.tokens[spec.name])

    def _client(self, bot: Any, name: str, token: str) -> BotClient:
        ca = None if self.options.embedded else self.options.tls_ca
        client = BotClient(
            bot,
            ClientConfig(
                addr=self.addr,
                token=token,
                name=name,
                push_events=True,
                tls=ca is not None,
                ca_file=None if ca in (None, SYSTEM_CA) else ca,
            ),
        )
        self.clients.append(client)
        task = asyncio.get_running_loop().create_task(self._run_client(client, name))
        self.tasks.append(task)
        return client

    async def _reachable(self) -> None:
        """A running server that does not answer at all is a wrong address (or a server not
        started): said at once rather than retried forever. Once reached, an outage is waited
        out (the seats reconnect)."""
        assert self.channel is not None
        stub = health_pb2_grpc.HealthStub(self.channel)
        try:
            await stub.Check(health_pb2.HealthCheckRequest(), timeout=10)
        except grpc.aio.AioRpcError as exc:
            if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                details = exc.details() or ""
                hint = connection_hint(details, self.options.tls_ca)
                raise SetupError(
                    f"cannot reach the server at {self.addr[:80]} ({details[:120]});"
                    + (
                        hint[1:]
                        if hint
                        else " is `uno-arena serve` running there (--server HOST:PORT)?"
                    )
                ) from exc

    async def _run_client(self, client: BotClient, name: str) -> None:
        try:
            await client.run()
        except Exception as exc:  # a refused token or name: the client has stopped for good
            self.failure = f"{name}: {exc}"
            self.say(f"The connection of {name} failed: {exc}")
            if self.on_failure is not None:
                self.on_failure(self.failure)

    def invitations(self) -> list[str]:
        """What each friend or bot named in the seats runs to take its seat."""
        out = []
        for spec in self.specs:
            if spec.kind != "bot":
                continue
            token = self.tokens.get(spec.name, "<its token>")
            addr = self.public_addr
            out.append(
                f"{spec.name}:  uno-arena play --server {addr} --token {token} --name "
                f"{spec.name}\n    (a bot: --addr {addr} --token {token} --name {spec.name})"
            )
        return out

    async def _connected(self) -> tuple[set[str], set[str]]:
        """The bots the server knows, and those of them connected now."""
        assert self.channel is not None
        stub = admin_pb2_grpc.AdminServiceStub(self.channel)  # type: ignore[no-untyped-call]
        res = await stub.ListBots(admin_pb2.ListBotsRequest(), metadata=self._md(), timeout=5)
        return {b.bot_name for b in res.bots}, {b.bot_name for b in res.bots if b.connected}

    async def create_match(self) -> str:
        """Wait until every bot named in the seats is connected, then create the match."""
        assert self.channel is not None
        opts = self.options
        wanted = {s.name for s in self.specs if s.kind in ("me", "ai", "bot")}
        while True:
            try:
                known, connected = await self._connected()
            except grpc.aio.AioRpcError as exc:
                raise SetupError(f"the server refused ListBots: {exc.details()}") from exc
            unknown = sorted(wanted - known)
            if unknown:  # it would wait for them forever: CreateMatch takes registered bots
                raise SetupError(
                    f"--seats: {', '.join(unknown)[:200]}: no bot of that name is registered on "
                    f"{self.public_addr}; name a registered bot, heuristic or random"
                )
            missing = sorted(wanted - connected)
            if not missing:
                break
            lines = [f"Waiting for {', '.join(missing)} to connect to {self.public_addr} ..."]
            lines += self.invitations() if opts.embedded else []
            self.say("\n".join(lines))
            await asyncio.sleep(0.25)
        players = []
        for spec in self.specs:
            if spec.kind == "builtin":
                players.append(game_pb2.Player(builtin=BUILTINS[spec.name]))
            else:
                players.append(game_pb2.Player(bot_name=spec.name))
        req = admin_pb2.CreateMatchRequest(
            seats=players,
            rules=opts.rule_set(),
            time_control=opts.time_control(),
            labels={"table": "play"},
        )
        if opts.seed is not None:
            req.seed = opts.seed + self.matches
        if opts.dealer is not None:
            req.dealer = opts.dealer
        stub = admin_pb2_grpc.AdminServiceStub(self.channel)  # type: ignore[no-untyped-call]
        try:
            res = await stub.CreateMatch(req, metadata=self._md(), timeout=10)
        except grpc.aio.AioRpcError as exc:
            raise SetupError(f"the server refused the match: {exc.details()}") from exc
        self.matches += 1
        self.match_id = res.match.match_id
        return self.match_id

    async def close(self) -> None:
        for c in self.clients:
            c.stop()
        if self.tasks:
            await asyncio.wait(self.tasks, timeout=3)
        for t in self.tasks:
            t.cancel()
        if self.channel is not None:
            await self.channel.close()
        if self.server is not None:
            with contextlib.suppress(Exception):
                await self.server.stop(drain_timeout_s=0)


def describe_seats(specs: Sequence[SeatSpec]) -> str:
    return ", ".join(f"{i}: {s.name}" for i, s in enumerate(specs))
