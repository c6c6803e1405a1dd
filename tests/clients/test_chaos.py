"""Cross-language chaos: the example bots of all five SDKs against one live ``uno-arena serve``.

1. Cuts: the bots reach the server through a TCP proxy on 127.0.0.1 (asyncio, below). While the
   bots play, the proxy is cut 5 times, for 0.3 to 2 s: every connection is reset and new ones
   are refused. Every bot must reconnect after each cut within the SDK's capped backoff, and
   resume its seats: 0 takeovers, every match finished.
2. Overruns: each bot runs with ``--overrun-every N --overrun-ms MS``, so every Nth ``decide``
   sleeps past its deadline. The SDK must answer the default in time (0 timeouts), the stream
   keeps flowing (every match finished, answers near the deadline seen), 0 takeovers.

Five bots need two tables of four: table A seats the first four languages, table B the last
four. With fewer languages the tables are filled with the built-in heuristic.

``UNO_CHAOS_LANGS=python,go`` narrows the languages (default: all five). A language whose
toolchain is missing is skipped, except under CI=true, where that fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import subprocess
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path

import pytest

from uno_server.gen.uno.v1 import admin_pb2, game_pb2

from .langs import LANGS, Admin, Lang, Serve, ready, seat_totals

ALL = ["python", "go", "typescript", "rust", "java"]
CUTS_S = (0.3, 0.8, 1.2, 1.6, 2.0)  # five cuts, shuffled per run
BACKOFF_CAP_S = 2.0
RECONNECT_HANG_GUARD_S = 60.0


def chosen_langs() -> list[Lang]:
    names = [n.strip() for n in os.environ.get("UNO_CHAOS_LANGS", ",".join(ALL)).split(",")]
    unknown = [n for n in names if n not in LANGS]
    assert not unknown, f"UNO_CHAOS_LANGS names unknown languages: {unknown}"
    langs = []
    for name in names:
        try:
            langs.append(ready(name))  # fails under CI=true when a toolchain is missing
        except pytest.skip.Exception as skip:
            print(f"\nchaos: {skip}")
    if not langs:
        pytest.skip("no client language available")
    return langs


def tables(bots: Sequence[str]) -> list[list[str | int]]:
    """Seatings: every bot seated at least once; four seats per table."""
    fill: list[str | int] = [game_pb2.BUILTIN_BOT_HEURISTIC] * 4
    if len(bots) <= 4:
        return [[*bots, *fill][:4]]
    return [list(bots[:4]), list(bots[-4:])]


# ---------------------------------------------------------------------------- the proxy


class Proxy:
    """A TCP proxy 127.0.0.1:port -> 127.0.0.1:upstream that can be cut: :meth:`cut` resets
    every connection and stops listening (new connections are refused); :meth:`restore`
    listens again on the same port."""

    def __init__(self, upstream: int) -> None:
        self.upstream = upstream
        self.port = 0
        self.accepted = 0
        self._server: asyncio.Server | None = None
        self._conns: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
        self.port = self._server.sockets[0].getsockname()[1]

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.upstream)
        except OSError:
            writer.transport.abort()
            self._tasks.discard(task)
            return
        self.accepted += 1
        pair = {writer, up_writer}
        self._conns |= pair
        try:
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        except asyncio.CancelledError:
            pass  # the proxy is closing
        finally:
            for w in pair:
                w.transport.abort()
            self._conns -= pair
            self._tasks.discard(task)

    async def cut(self) -> None:
        assert self._server is not None
        self._server.close()
        for w in list(self._conns):
            w.transport.abort()  # RST: both the bot and the server see the connection die
        await self._server.wait_closed()
        self._server = None

    async def restore(self) -> None:
        for _ in range(400):  # the port was ours a moment ago; retry a busy rebind briefly
            try:
                self._server = await asyncio.start_server(self._handle, "127.0.0.1", self.port)
                return
            except OSError:
                await asyncio.sleep(0.05)
        raise AssertionError(f"the proxy could not listen on port {self.port} again")

    async def close(self) -> None:
        if self._server is not None:
            await self.cut()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)


async def _pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError, OSError):
        while data := await src.read(65536):
            dst.write(data)
            await dst.drain()
        if dst.can_write_eof():
            dst.write_eof()


# ---------------------------------------------------------------------------- bots


class Bots:
    """The example bot processes, one per language, each with its log file."""

    def __init__(self, langs: Sequence[Lang], logdir: Path, tag: str) -> None:
        self.langs = list(langs)
        self.names = [f"{lang.name}-{tag}" for lang in langs]
        self.tokens = {n: f"token-{n}-{random.getrandbits(32):x}" for n in self.names}
        self.logdir = logdir
        self.procs: list[subprocess.Popen[bytes]] = []

    def start(self, addr: str, extra: Sequence[str] = ()) -> None:
        for lang, name in zip(self.langs, self.names, strict=True):
            with (self.logdir / f"{name}.log").open("wb") as log:
                self.procs.append(
                    subprocess.Popen(
                        lang.command(addr, self.tokens[name], name, extra),
                        cwd=lang.folder,
                        stdout=log,
                        stderr=subprocess.STDOUT,
                    )
                )

    def alive(self) -> None:
        for name, proc in zip(self.names, self.procs, strict=True):
            assert proc.poll() is None, f"{name} exited with {proc.returncode}:\n{self.log(name)}"

    def log(self, name: str) -> str:
        return (self.logdir / f"{name}.log").read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                proc.terminate()
        for proc in self.procs:
            try:
                proc.wait(10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.asynccontextmanager
async def arena(
    langs: Sequence[Lang], tmp_path: Path, tag: str
) -> AsyncIterator[tuple[Serve, Bots, Admin]]:
    bots = Bots(langs, tmp_path, tag)
    server = Serve(bots.tokens)
    admin = Admin(server.addr)
    try:
        yield server, bots, admin
    finally:
        bots.stop()
        await admin.close()
        server.stop()


async def play_until(
    admin: Admin, seatings: list[list[str | int]], done: asyncio.Event, *, decision_ms: int
) -> list[admin_pb2.MatchInfo]:
    """Keep two matches per seating in flight until ``done`` is set (and at least two rounds
    were played), then let the last ones finish."""
    infos: list[admin_pb2.MatchInfo] = []
    rounds = 0
    while not done.is_set() or rounds < 2:
        batch = [
            admin.play(s, 2, parallel=2, seed=1000 * rounds + i, decision_ms=decision_ms)
            for i, s in enumerate(seatings)
        ]
        for got in await asyncio.gather(*batch):
            infos += got
        rounds += 1
    return infos


def check(infos: list[admin_pb2.MatchInfo], names: Sequence[str]) -> dict[str, dict[str, int]]:
    assert infos, "no match was played"
    unfinished = [
        (i.match_id, i.end_cause, i.end_message)
        for i in infos
        if i.state != admin_pb2.MATCH_STATE_FINISHED
    ]
    assert not unfinished, unfinished
    return {n: seat_totals(infos, n) for n in names}


# ---------------------------------------------------------------------------- tests


@pytest.mark.asyncio
async def test_proxy_cuts_every_seat_resumes(tmp_path: Path) -> None:
    langs = chosen_langs()
    async with arena(langs, tmp_path, "cut") as (server, bots, admin):
        proxy = Proxy(server.port)
        await proxy.start()
        try:
            bots.start(f"127.0.0.1:{proxy.port}")
            await admin.wait_connected(bots.names, bots.procs)
            done = asyncio.Event()
            plays = asyncio.create_task(
                play_until(admin, tables(bots.names), done, decision_ms=5000)
            )
            reconnects: dict[str, list[float]] = {n: [] for n in bots.names}
            cuts = list(CUTS_S)
            random.shuffle(cuts)
            try:
                for length in cuts:
                    await asyncio.sleep(random.uniform(1.0, 2.0))  # play between cuts
                    await proxy.cut()
                    await asyncio.sleep(length)
                    restored = time.time()
                    await proxy.restore()
                    for name, seconds in (await reconnected(admin, bots, restored)).items():
                        reconnects[name].append(seconds)
            finally:
                done.set()
            infos = await asyncio.wait_for(plays, 300)
        finally:
            await proxy.close()
        bots.alive()
    totals = check(infos, bots.names)
    report = {
        n: {**totals[n], "worst_reconnect_s": round(max(reconnects[n]), 2)} for n in bots.names
    }
    print(f"\nchaos cuts {cuts}: {json.dumps(report)}")
    for name in bots.names:
        assert len(reconnects[name]) == len(CUTS_S)
        # Back within the reconnect grace (the server's 5 s) is the server's verdict, not a
        # stopwatch here: a bot still away when its grace ends has its seats taken over, so 0
        # takeovers is the check (matches are in flight through every cut). A reused channel's
        # own backoff (issue 14: 6.7 s after a 2 s outage) still fails it. The seconds measured
        # are only reported.
        assert totals[name]["takeovers"] == 0, (name, totals[name], reconnects[name])
        assert totals[name]["rejected"] == 0, (name, totals[name])
        assert totals[name]["seats"] > 0, (name, totals[name])


async def reconnected(admin: Admin, bots: Bots, since: float) -> dict[str, float]:
    """Wait until every bot holds a session opened after ``since``; seconds each took."""
    took: dict[str, float] = {}
    while len(took) < len(bots.names):
        res = await admin.stub.ListBots(admin_pb2.ListBotsRequest(), metadata=admin.md)
        now = time.time()
        for b in res.bots:
            opened = b.connected_at.ToNanoseconds() / 1e9
            if b.bot_name in bots.names and b.connected and opened >= since:
                took.setdefault(b.bot_name, max(0.0, opened - since))
        if now - since > RECONNECT_HANG_GUARD_S:  # a hang guard, not the bound checked
            missing = sorted(set(bots.names) - set(took))
            raise AssertionError(f"{missing} did not reconnect within {now - since:.1f} s")
        bots.alive()
        await asyncio.sleep(0.05)
    return took


OVERRUN_EVERY = 5
OVERRUN_MS = 1500
DECISION_MS = 1000


@pytest.mark.asyncio
async def test_overrunning_decide_is_answered_in_time(tmp_path: Path) -> None:
    langs = chosen_langs()
    flags = ["--overrun-every", str(OVERRUN_EVERY), "--overrun-ms", str(OVERRUN_MS)]
    async with arena(langs, tmp_path, "overrun") as (server, bots, admin):
        bots.start(server.addr, flags)
        await admin.wait_connected(bots.names, bots.procs)
        done = asyncio.Event()
        plays = asyncio.create_task(
            play_until(admin, tables(bots.names), done, decision_ms=DECISION_MS)
        )
        await asyncio.sleep(15)
        done.set()
        infos = await asyncio.wait_for(plays, 300)
        bots.alive()
    totals = check(infos, bots.names)
    late: dict[str, list[int]] = {}
    for name in bots.names:
        times = [
            ms for i in infos for s in i.seats if s.player.bot_name == name for ms in s.response_ms
        ]
        late[name] = [ms for ms in times if ms >= DECISION_MS - 250]
        totals[name]["fallbacks_near_deadline"] = len(late[name])
        totals[name]["slowest_ms"] = max(times, default=0)
    print(f"\nchaos overruns: {json.dumps(totals)}")
    for name in bots.names:
        t = totals[name]
        # the overruns happened, and the SDK answered them with the default before the deadline.
        # Its margin is 100 ms: on a quiet machine every such answer is in time (0 timeouts in
        # CI), but on one whose load is 8-10 times its cores the scheduler can hold a process
        # that long, so a rare answer lands late (seen: 1 of 233 decisions, 2 of 99). Without
        # the safety net every overrun times out: about one decision in OVERRUN_EVERY.
        assert t["decisions"] >= OVERRUN_EVERY * 4, (name, t)
        assert late[name], f"{name}: no answer near the deadline: did decide overrun at all?"
        overruns = t["decisions"] // OVERRUN_EVERY
        assert t["rejected"] == 0, (name, t)
        assert t["timeouts"] <= max(2, overruns // 10), (
            f"{name}: {t['timeouts']} of about {overruns} overrunning decisions timed out: "
            f"the SDK did not answer the default before the deadline ({t})"
        )
