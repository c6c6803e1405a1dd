"""A live server in process for the spectator tests, with a "gate" bot that can hold a match
still in the middle of a hand, so a spectator can join mid-hand and be compared with the engine.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, field

import grpc
from rich.console import Console, RenderableType

from uno_bot import Bot, BotClient, ClientConfig, DecisionRequest, MatchState
from uno_server.engine.bots import HeuristicBot
from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc, bot_pb2, game_pb2
from uno_server.play.model import TableModel
from uno_server.play.render import line_text, seats_table, table_text
from uno_server.play.wire import engine_view, own
from uno_server.service.server import Arena, ArenaServer, ServerConfig
from uno_server.service.table import Table

from .helpers import STALL_S, Stall, card_words, public_codes, words_of

ADMIN = "admin-token-for-watching"
GATE_TOKEN = "gate-bot-token-1234"


class GateBot(Bot):
    """Plays like the heuristic bot; stops before its ``hold_at``-th required decision of each
    match until :meth:`open` is called. ``delay`` slows every answer (seconds);
    ``before_answer``, when set, is awaited before every required answer once the gate is open
    (a test waits there for what a spectator must have seen by then)."""

    threaded = False
    name = "gate"

    def __init__(self, hold_at: int = 0, delay: float = 0.0) -> None:
        self.hold_at = hold_at
        self.delay = delay
        self.held = asyncio.Event()
        self.holding: set[str] = set()
        """The matches the gate holds now."""
        self.gate = asyncio.Event()
        self.heuristic = HeuristicBot(7)
        self.before_answer: Callable[[], Awaitable[None]] | None = None

    def open(self) -> None:
        self.gate.set()

    async def decide(self, request: DecisionRequest, state: MatchState) -> int | None:
        req = own(bot_pb2.DecisionRequest, request)
        if req.required:
            made = state.data["made"] = state.data.get("made", 0) + 1
            if made == self.hold_at:
                self.holding.add(state.match_id)
                self.held.set()
                await self.gate.wait()
                self.holding.discard(state.match_id)
            if self.before_answer is not None and self.gate.is_set():
                await self.before_answer()
        if self.delay:
            await asyncio.sleep(self.delay)
        return self.heuristic.choose(engine_view(req))


@dataclass
class Live:
    server: ArenaServer
    port: int
    channel: grpc.aio.Channel
    gate: GateBot
    tasks: list[asyncio.Task[None]] = field(default_factory=list)

    md = (("authorization", f"Bearer {ADMIN}"),)

    @property
    def addr(self) -> str:
        return f"127.0.0.1:{self.port}"

    async def create(
        self,
        seats: Sequence[str | int],
        *,
        seed: int,
        labels: dict[str, str] | None = None,
        single_hand: bool = True,
    ) -> str:
        players = [
            game_pb2.Player(bot_name=s) if isinstance(s, str) else game_pb2.Player(builtin=s)  # type: ignore[arg-type]
            for s in seats
        ]
        rules = game_pb2.RuleSet()
        if single_hand:
            rules.scoring = game_pb2.SCORING_SINGLE_HAND
        else:
            rules.target_score = 60
        stub = admin_pb2_grpc.AdminServiceStub(self.channel)
        res = await stub.CreateMatch(
            admin_pb2.CreateMatchRequest(
                seats=players,
                seed=seed,
                dealer=0,
                rules=rules,
                labels=labels or {},
                time_control=game_pb2.TimeControl(decision_ms=60_000),
            ),
            metadata=self.md,
        )
        return res.match.match_id

    def table(self, match_id: str) -> Table:
        return arena_table(self.server.arena, match_id)

    def progress(self) -> tuple[tuple[str, int], ...]:
        """The events each running match has recorded: what moves while a test waits."""
        arena = self.server.arena
        return tuple(sorted((mid, len(t.records)) for mid, t in arena.running.items()))

    async def until_held(self, stall: float = STALL_S) -> None:
        """Wait until the gate bot holds a match. Fails only if no running match records an
        event for ``stall`` seconds meanwhile (a busy machine is slow, not stuck)."""
        watch = Stall(self.progress, stall)
        while not self.gate.held.is_set():
            watch.check("waiting for the gate bot to hold a match")
            await asyncio.sleep(0.02)


def arena_table(arena: Arena, match_id: str) -> Table:
    """The match's table, running or finished (while the retention still holds it)."""
    if match_id in arena.running:
        return arena.running[match_id]
    table = arena.finished[match_id].table
    assert table is not None, f"{match_id} was finished and its table released"
    return table


def engine_events(table: Table, upto: int | None = None) -> list[object]:
    """The match's own (unredacted) events, up to sequence ``upto``."""
    records = table.records if upto is None else table.records[:upto]
    return [r.event for r in records]


def public_now(table: Table, upto: int | None = None) -> set[int]:
    """Codes shown to everyone so far (engine truth), in the current hand's own terms: plays,
    first cards and dealer draws of every hand, and hands revealed when a hand ended."""
    return public_codes(engine_events(table, upto))


def check_no_hidden(text: str, public: set[int], where: str) -> int:
    """Every card named in ``text`` must be public; returns how many cards were named."""
    named = card_words(text.replace("\u00a0", " "))
    hidden = named - words_of(public)
    assert not hidden, f"{where}: hidden card(s) shown: {sorted(hidden)}"
    return len(named)


def render_model(model: TableModel) -> str:
    """What a spectator screen draws from ``model``, as plain text."""
    console = Console(width=100, file=io.StringIO(), record=True)
    parts: list[RenderableType] = [seats_table(model), table_text(model, now=0.0)]
    parts += [line_text(line) for line in model.log]
    for p in parts:
        console.print(p)
    return console.export_text()


@contextlib.asynccontextmanager
async def live_server(
    *, hold_at: int = 0, delay: float = 0.0, extra_bots: dict[str, str] | None = None
) -> AsyncIterator[Live]:
    bots = {"gate": GATE_TOKEN, **(extra_bots or {})}
    server = ArenaServer(ServerConfig(port=0, admin_token=ADMIN, bots=bots))
    port = await server.start()
    channel = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
    gate = GateBot(hold_at, delay)
    live = Live(server, port, channel, gate)
    client = BotClient(gate, ClientConfig(addr=live.addr, token=GATE_TOKEN, name="gate"))
    live.tasks.append(asyncio.create_task(client.run()))
    try:
        end = time.monotonic() + STALL_S
        while "gate" not in server.arena.sessions:  # the gate bot has said Hello
            assert time.monotonic() < end, f"the gate bot did not connect in {STALL_S:.0f} s"
            await asyncio.sleep(0.02)
        yield live
    finally:
        gate.open()
        client.stop()
        await asyncio.wait(live.tasks, timeout=3)
        await channel.close()
        await server.stop(drain_timeout_s=0.2)
