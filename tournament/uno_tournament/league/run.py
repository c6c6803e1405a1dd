"""``league run DIR``: the ladder's play, until stopped.

The league plays block after block on a game server it starts (as ``tournament run`` does),
with its bots launched in the league's sandbox:

1. **Versions in and out.** Before each block the league's store is read again: a version
   accepted since (``league submit`` in another terminal) is registered with the running server
   (AdminService.RegisterBot, with a token made for this run) and launched; a version retired
   since (replaced, or given up on) is forgotten by the server (RetireBot) and stopped. No
   restart is needed.
2. **Tables** (:mod:`.matchmaking`): the connected active versions, fewest hands first, one
   bot per author at a table, a floor of hands per version. Seats that the versions cannot fill
   (fewer than four versions of four authors) go to the house bots, the gate's three built-in
   opponents (``--no-house-bots``: wait for versions instead); they are last in line, so they
   never take a seat a version could have, and they are rated with the versions.
3. **Duplicate deals and rotated seats**: each table of the block plays 6 deals, each in its 4
   seat rotations (24 hands), as a tournament's block does (:mod:`uno_tournament.schedule`).
4. **One store** (:mod:`.hands`): every hand goes to ``DIR/play/tournament.sqlite``, or with
   ``--store URL`` to the league's PostgreSQL database, in one transaction (and a replay file to
   ``DIR/play/replays``); hands played per version, the block number and the ratings are all
   read back from it, so a ``kill -9`` at any moment loses no stored hand, and ``league run
   DIR`` again resumes. A hand in play when the run is killed is not stored; the
   resumed run plays new blocks.
5. **Ratings over time** (:mod:`.ratings`): a refit over every hand after each block; its
   ratings with their intervals, and the verdicts of replacements, go to the league's store.

Ctrl-C or SIGTERM stops taking new hands and finishes the hands in play (a second one quits at
once). ``--hands N`` stops after N hands, ``--until settled`` once the ranking of the active
versions is settled (:mod:`uno_tournament.settled`).

One module: the league's single writer and its loop (versions in and
out, a block, a refit), which share the seats, the counts and the stop. Its other jobs are cut
out: remote bots and their gate (:mod:`.remote`), the matchmaking and a block's hands
(:mod:`.matchmaking`), the metrics and what the run waits for on its observers' behalf
(:mod:`.metrics`, :mod:`.show`), the web view (:mod:`.web`), the fit (:mod:`.ratings`) and the
hand store with its lock (:mod:`.hands`).
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import multiprocessing
import os
import secrets
import signal
import time
from collections import deque
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any, TextIO

import grpc

from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc

from ..config import BotSpec, _sandbox_from_dict
from ..host_relay import HostRelay
from ..player import RunnerError, error_reason
from ..procs import BotProcess, announce_sandbox, tail
from ..progress import Progress
from ..rating_model import Ratings
from ..replay import store_hand
from ..runner import _fitter_init
from ..sandbox import SandboxError
from ..settled import SettledState
from ..shard import ServerProcess, ServerProcessError, Shard
from ..store import HandRecord, ResultStore
from .hands import LEAGUE_ID, PLAY_DIR, fit_store, league_config
from .matchmaking import FLOOR_SHARE, Entry, block_specs, information_order, next_tables
from .metrics import LeagueMetrics
from .ratings import LeagueFit, record_refit, server_name, subset
from .remote import RemoteBots, Seated
from .show import linger, wait_first_scrape
from .store import LeagueStore, Version
from .submit import BUILT_IN, SDK_ARGS
from .web import RECENT, LeagueWebView

__all__ = ["LeagueRunner"]

HOUSE = tuple((name.replace("gate-", "house-"), args) for name, args in BUILT_IN)
"""The house bots: the gate's three built-in opponents, who fill the tables that the versions
cannot (too few versions, or too few authors) and are rated with them."""
HOUSE_LAST = 10**12
"""Hands a house bot counts as having played, for matchmaking: behind every version."""
POLL_S = 0.5
"""How often a league waiting for versions looks again."""
MAX_TABLES = 64


def built_folder(league_dir: Path, stored: str) -> Path:
    """Where a submitted version's built folder is: an absolute path as stored (a league in
    PostgreSQL, its folder shared at one path on every machine); otherwise in the league's
    ``bots/NAME/VERSION``, whatever folder the command runs in. (A folder league stored the
    path as `league submit` was typed, relative to where it ran: `league run` from another
    folder found no bot and gave every one up; an examination.)"""
    path = Path(stored)
    if path.is_absolute():
        return path
    parts = path.parts
    if len(parts) >= 3 and parts[-3] == "bots":
        return league_dir / "bots" / parts[-2] / parts[-1]
    return league_dir / path


def hidden_from_bot(
    league_dir: Path, own: Path, other_folders: Sequence[str | Path]
) -> list[str | Path]:
    """What a stranger's bot (its folder ``own``) must not see, should a folder it may read hold
    it: every part of the league folder off the way to its own (the records with their ``-wal``
    and ``-shm``, the gates, the hands, the logs, every other bot and version), and the other
    bots' folders wherever they are."""
    hide: list[str | Path] = []
    here, own = league_dir.resolve(), own.resolve()
    while here != own and own.is_relative_to(here):
        step = own.relative_to(here).parts[0]
        hide += [p for p in here.iterdir() if p.name != step]
        here = here / step
    # and the whole league folder: where it holds the bot's own, the sandbox covers it whole
    # and shows the bot's folder again on top, so what appears in it later (a version
    # submitted while this bot plays) is hidden too; the covers above stay for a bot run
    # without that cover
    hide.append(league_dir)
    return [*hide, *(f for f in other_folders if Path(f).exists())]


class LeagueRunner(RemoteBots):
    def __init__(
        self,
        league_dir: Path,
        league: LeagueStore,
        store: ResultStore,
        *,
        store_url: str | None = None,
        hands: int | None = None,
        until_settled: bool = False,
        tables: int = 1,
        floor_hands: int = 0,
        stream: TextIO | None = None,
        refit_every_s: float = 0.0,
        house: bool = True,
        concurrency: int = 8,
        metrics_port: int | None = None,
        metrics_host: str = "127.0.0.1",
        metrics_linger_s: float = 0.0,
        metrics_wait_s: float = 0.0,
        web_port: int | None = None,
        web_host: str = "127.0.0.1",
        server_host: str = "127.0.0.1",
        server_port: int = 0,
    ) -> None:
        settings = league.settings()
        config = league_config(settings, concurrency=concurrency)
        self.play_dir = league_dir / PLAY_DIR
        super().__init__(self.play_dir, config, LEAGUE_ID, progress=False, stream=stream)
        self.league_dir = league_dir
        self.league = league
        self.store = store
        self.hands_at = store_url or str(self.play_dir)
        """Where the refit process reads the hands: the play folder, or the store's URL."""
        self.again = f"uno-arena league run {league_dir}" + (" --store URL" if store_url else "")
        """The command that continues this league."""
        self.budget = hands
        self.until_settled = until_settled
        self.n_tables = tables
        self.floor_hands = floor_hands
        self._ratings: Ratings | None = None
        """The last refit's ratings (by server name), which the tables follow."""
        self.refit_every_s = refit_every_s
        self.sandbox = _sandbox_from_dict(settings.get("sandbox"))
        self.seated: dict[int, Seated] = {}
        self.by_name: dict[str, Seated] = {}
        self.counts: dict[str, int] = {}
        self.block = 0
        self.played = 0
        """Hands stored by this run."""
        self.refits = 0
        self.settled: SettledState | None = None
        self._waiting = ""
        self._last_refit = 0.0
        self._fitted_hands = -1
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="league-writer")
        self._server_watch: asyncio.Task[None] | None = None
        self.house = house
        """Fill a table that lacks versions of enough authors with house bots."""
        self.house_procs: dict[str, BotProcess] = {}
        self._connecting: list[str] = []
        self._init_remote()
        self.server_host = server_host
        self.server_port = server_port
        self._house_started = 0.0
        self._fitter: ProcessPoolExecutor | None = None
        self._refit_task: asyncio.Task[None] | None = None
        self.metrics_port = metrics_port
        self.metrics_host = metrics_host
        self.metrics_linger_s = metrics_linger_s
        self.metrics_wait_s = metrics_wait_s
        self.league_metrics: LeagueMetrics | None = (
            LeagueMetrics(league_dir.resolve().name) if metrics_port is not None else None
        )
        """The series per version (:mod:`.metrics`), with ``--metrics-port``."""
        self.web_port = web_port
        self.web_host = web_host
        self.web: LeagueWebView | None = None
        """The standings page and the spectator view (:mod:`.web`), with ``--web-port``."""
        self.recent: dict[str, deque[str]] = {}
        """The newest matches of each server name, newest first (for the web view)."""

    # ------------------------------------------------------------------ store

    def _note_incident(self, bot: str, kind: str, detail: str) -> None:
        self.store.add_incident(bot, kind, detail)
        seat = self.by_name.get(bot)
        if kind == "given_up" and seat is not None:
            self.league.give_up(seat.version.id, detail)
            self.say(f"{seat.version.key}: given up on ({detail}); it is retired from play")

    def _write(self, rec: HandRecord) -> bool:
        return store_hand(self.store, rec, self.play_dir / "replays")

    async def _record(self, rec: HandRecord) -> None:
        loop = asyncio.get_running_loop()
        gate = self._gate
        if gate is not None and rec.hand_id in gate[0]:  # a remote bot's gate: not the ladder's
            _ids, recs, gstore, folder = gate
            await loop.run_in_executor(self._writer, store_hand, gstore, rec, folder / "replays")
            recs.append(rec)
            return
        try:
            if not await loop.run_in_executor(self._writer, self._write, rec):
                return
        except Exception as exc:  # a full disk, a lost database: stop, say what to do
            text = " ".join(str(exc).split())[:200]
            self._fail(
                RunnerError(
                    f"cannot store hand {rec.hand_id}: {text}; {self.played} hands stored by "
                    f"this run, none lost. Fix the cause, then: "
                    f"{self.again}"
                )
            )
            return
        self.played += 1
        for s in rec.seats:
            self.counts[s.bot] = self.counts.get(s.bot, 0) + 1
        if self.league_metrics is not None:
            self.league_metrics.hand([s.bot for s in rec.seats], self.counts)
        for s in rec.seats:
            self.recent.setdefault(s.bot, deque(maxlen=RECENT)).appendleft(rec.match_id)
        assert self.progress is not None
        self.progress.add(rec.moves)

    def _load(self) -> None:
        """Hands per version and the next block, from the stored hands (a resume)."""
        last = -1
        for h in self.store.hand_rows():
            last = max(last, h.block)
            for s in h.seats:
                self.counts[s.bot] = self.counts.get(s.bot, 0) + 1
        self.block = last + 1
        self.progress = Progress(planned=0, done=self.store.count())

    # ------------------------------------------------------------------ the run

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        installed = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._interrupt)
                installed.append(sig)
        self._load()
        self._start_metrics()
        stored = self.store.count()
        done = self.league.refits()
        self._fitted_hands = done[-1][2] if done else -1  # a resume refits only what is new
        self.say(
            f"league {self.league_dir}: {stored} hands stored"
            + (f", resuming at block {self.block}" if stored else "")
            + f"; {self.n_tables} table(s) of four, 24 hands per table and block"
        )
        try:
            await self._wait_first_scrape()
            await self._start_server()
            await self._sync_tokens()  # before a remote bot can try its token
            self.say(
                f"remote bots connect to {self.public_addr} with their league token "
                f"(tokens: uno-arena league token add {self.league_dir} NAME --author A)"
            )
            await self._start_web()
            if self.house or self.league.tokens():  # house bots also play remote bots' gates
                await self._launch_house()
            self._fitter_pool().submit(int, 0)  # the refit process imports while bots start
            await self._refit(force=True)
            while not self.stop_requested and self.fatal is None:
                if self.budget is not None and self.played >= self.budget:
                    break
                if not await self._play_block():
                    await self._pause(POLL_S)
        finally:
            for sig in installed:
                loop.remove_signal_handler(sig)
            await self._shutdown()
            try:
                if self._refit_task is not None:
                    await asyncio.gather(self._refit_task, return_exceptions=True)
                if self.fatal is None:
                    await self._refit(force=True)  # the last hands of this run
            finally:
                if self._fitter is not None:
                    self._fitter.shutdown(wait=True, cancel_futures=True)
        try:
            if self.fatal is None:
                await self._linger()
        finally:
            if self.web is not None:
                await self.web.stop()
        if self.fatal is not None:
            raise self.fatal
        total = self.store.count()
        self.say(
            f"league stopped: {self.played} hands played by this run, {total} stored; "
            f"{self.refits} refits. Continue with: {self.again}"
        )
        return 130 if self.interrupted else 0

    def _start_metrics(self) -> None:
        """``--metrics-port``: the series of every version, then the metrics page."""
        if self.league_metrics is None or self.metrics_port is None:
            return
        try:
            m, port = self.league_metrics, self.metrics_port
            m.start(self.league, self.counts, port, self.metrics_host)
        except OSError as exc:
            raise RunnerError(
                f"--metrics-port {self.metrics_port}: cannot serve the metrics on "
                f"{self.metrics_host} ({exc.strerror or exc}); choose another port"
            ) from None
        self.say(f"metrics: http://{self.metrics_host}:{self.metrics_port}/metrics")

    async def _wait_first_scrape(self) -> None:
        if self.league_metrics is not None:
            await wait_first_scrape(
                self.league_metrics, self.metrics_wait_s, lambda: self.stop_requested, self.say
            )

    async def _linger(self) -> None:
        """After a run that stopped by itself (--hands, --until settled), keep the metrics
        page and the web view up ``--metrics-linger`` seconds for a last look."""
        shown = self.league_metrics is not None or self.web is not None
        if shown and not self.interrupted:
            await linger(self.metrics_linger_s, self.say)

    async def _start_web(self) -> None:
        """``--web-port``: the league's standings at /league, the server's matches at /."""
        if self.web_port is None or self.shard is None:
            return
        self.web = LeagueWebView(
            self.shard.addr,
            self.admin_token,
            self.league,
            self.league_dir.resolve().name,
            lambda: (self.counts, self.recent),
            host=self.web_host,
            port=self.web_port,
        )
        try:
            port = await self.web.start()
        except OSError as exc:
            self.web = None
            raise RunnerError(
                f"--web-port {self.web_port}: cannot serve the web view on {self.web_host} "
                f"({exc.strerror or exc}); choose another port"
            ) from None
        self.say(f"web view: http://{self.web_host}:{port}/league (standings), / (matches)")

    async def _pause(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while not self.stop_requested and time.monotonic() < end:
            await asyncio.sleep(0.05)

    def _interrupt(self) -> None:
        """The first Ctrl-C or SIGTERM stops taking hands (those in play finish and are
        stored); a second quits at once (a stop of --hands or --until is no first one)."""
        if self.interrupted:
            os._exit(130)
        self.interrupted = True
        self.stop_requested = True
        self.say("\nstopping: finishing the hands in play (Ctrl-C again to quit at once) ...")

    async def _start_server(self) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        server = ServerProcess(
            self.log_dir,
            {},
            metrics=False,
            unix_socket=True,
            host=self.server_host,
            port=self.server_port,
        )
        try:
            addr = await server.start(timeout_s=max(30.0, self.config.faults.startup_timeout_s))
        except ServerProcessError as exc:
            raise RunnerError(str(exc)) from exc
        HostRelay.serve_direct(addr, server.socket_dir)
        self.admin_token = server.admin_token
        self.shard = Shard(addr, server.admin_token, server=server)
        self.channel = grpc.aio.insecure_channel(
            addr, options=[("grpc.max_receive_message_length", 64 * 1024 * 1024)]
        )
        self.admin = admin_pb2_grpc.AdminServiceStub(self.channel)  # type: ignore[no-untyped-call]
        self.say(f"game server process on {addr} (log: {server.log_path})")
        self._server_watch = asyncio.get_running_loop().create_task(
            self._watch_league_server(server)
        )

    async def _watch_league_server(self, server: ServerProcess) -> None:
        await server.wait()
        if not self.stop_requested:
            self._fail(
                RunnerError(
                    f"{server.exit_reason()}; {self.store.count()} hands stored. Continue "
                    f"with: {self.again}"
                )
            )

    async def _shutdown(self) -> None:
        self.stop_requested = True  # the server stops now: that is no failure
        if self._server_watch is not None:
            self._server_watch.cancel()
        procs = [s.proc for s in self.seated.values() if s.proc is not None]
        procs += list(self.house_procs.values())
        await asyncio.gather(*(p.stop() for p in procs), return_exceptions=True)
        if self.channel is not None:
            await self.channel.close()
        if self.shard is not None and self.shard.server is not None:
            await self.shard.server.stop()
        self._writer.shutdown(wait=True)

    # ------------------------------------------------------------------ versions

    async def _sync(self) -> list[Seated]:
        """Bring the server and the launched bots in line with the league's store; the
        versions ready to play."""
        versions = self.league.versions()
        if self.league_metrics is not None:
            self.league_metrics.set_states(versions)
        active = {v.id: v for v in versions if v.state == "active"}
        await self._sync_tokens()
        for vid in [v for v in self.seated if v not in active]:
            await self._unseat(self.seated[vid], "retired")
        for v in active.values():
            if v.id not in self.seated:
                if v.remote:
                    self._admit(v)
                else:
                    await self._seat(v, [x for x in versions if x.id != v.id])
        if not self.seated:
            self._connecting = []
            return []
        connected = await self._connected()
        self.away &= set(self.remote) - connected  # back: seated again from this block on
        remote = [s for s in self.seated.values() if s.proc is None]
        ready_remote = [s for s in remote if s.name in connected and s.name not in self.away]
        launched = {vid: s for vid, s in self.seated.items() if s.proc is not None}
        grace = self.config.faults.startup_timeout_s
        for n, proc in self.house_procs.items():
            late = time.monotonic() - self._house_started > grace
            if n not in connected and n not in self.given_up and late:
                lines = " | ".join(tail(proc.log_path, 3)) or "(log empty)"
                self._give_up(n, f"did not connect within {grace:g} s; log: {lines}")
        self._connecting = sorted(
            [s.name for s in launched.values() if s.name not in connected]
            + [n for n in self.house_procs if n not in connected and n not in self.given_up]
        )
        ready = list(ready_remote)  # an absent remote bot is skipped, not waited for
        now = time.monotonic()
        for s in list(launched.values()):
            if s.name in connected:
                s.away_since = None
            elif s.away_since is None:
                s.away_since = now  # launched, or crashed and restarting: it has the grace
            if s.name in connected and s.name not in self.given_up:
                ready.append(s)
            elif s.away_since is not None and now - s.away_since > grace:
                assert s.proc is not None
                lines = " | ".join(tail(s.proc.log_path, 3)) or "(log empty)"
                self._give_up(s.name, f"did not connect within {grace:g} s; log: {lines}")
            if s.name in self.given_up:
                await self._unseat(s, "given up")
        return [s for s in ready if s.version.id in self.seated]

    async def _seat(self, v: Version, others: list[Version]) -> None:
        man = self.league.manifest(v.id)
        name = server_name(v)
        folder = built_folder(self.league_dir, v.folder)
        if not folder.is_dir():  # the organiser's fault, not the bot's: no restarts, no give-up
            raise RunnerError(
                f"{v.key}: its built folder {str(folder)[:200]} is missing; put it back (or "
                f"retire the bot: uno-arena league retire {self.league_dir} {v.name}), "
                f"then: {self.again}"
            )
        spec = BotSpec(
            name=name,
            command=tuple(man.get("run", ())),
            cwd=str(folder.resolve()),
            sandbox=self.sandbox,
        )
        try:
            for line in announce_sandbox([spec.sandbox]) if not self.seated else ():
                self.say(line)
        except SandboxError as exc:
            raise RunnerError(str(exc)) from exc
        # hex: a token starting with "-" (token_urlsafe's, 1 time in 32) reads as an option
        # to the bot's --token argument, and the bot never starts (found by bench-league)
        token = secrets.token_hex(24)
        try:
            await self.admin.RegisterBot(
                admin_pb2.RegisterBotRequest(bot_name=name, token=token),
                metadata=self.md,
                timeout=30,
            )
        except grpc.aio.AioRpcError as err:
            raise RunnerError(
                f"{v.key}: the server refused to register it: {err.code().name} "
                f"{error_reason(err)}: {err.details()}"
            ) from err
        hide = hidden_from_bot(
            self.league_dir,
            Path(spec.cwd),
            [built_folder(self.league_dir, o.folder) for o in others if o.folder],
        )
        proc = BotProcess(
            spec,
            token,
            self.shard.addr if self.shard is not None else "",
            self.log_dir,
            max_restarts=self.config.faults.max_restarts,
            on_incident=self._incident,
            hide=hide,
        )
        seat = Seated(v, name, proc, time.monotonic())
        self.seated[v.id] = seat
        self.by_name[name] = seat
        self.counts.setdefault(name, 0)
        if self.league_metrics is not None:
            self.league_metrics.add_version(name, v, self.counts[name])
        try:
            await proc.start()
        except OSError as exc:
            self._give_up(name, f"cannot run its command ({exc})")
            return
        self.say(f"{v.key} ({v.author}) enters the ladder as bot {name}")

    async def _launch_house(self) -> None:
        """The house bots (the gate's built-in opponents), launched once per run."""
        self._house_started = time.monotonic()
        for name, args in HOUSE:
            spec = BotSpec(
                name=name,
                command=("{python}", *args, *SDK_ARGS),
                cwd=str(Path.cwd()),
                sandbox=self.sandbox,
            )
            token = secrets.token_hex(24)
            await self.admin.RegisterBot(
                admin_pb2.RegisterBotRequest(bot_name=name, token=token),
                metadata=self.md,
                timeout=30,
            )
            proc = BotProcess(
                spec,
                token,
                self.shard.addr if self.shard is not None else "",
                self.log_dir,
                max_restarts=self.config.faults.max_restarts,
                on_incident=self._incident,
                hide=[self.league_dir],
            )
            self.house_procs[name] = proc
            self.counts.setdefault(name, 0)
            if self.league_metrics is not None:
                self.league_metrics.add_house(name, self.counts[name])
            try:
                await proc.start()
            except OSError as exc:
                raise RunnerError(proc.failure(f"cannot run its command ({exc})")) from exc

    async def _unseat(self, s: Seated, why: str) -> None:
        self.seated.pop(s.version.id, None)
        if s.proc is None:  # a remote bot: its token goes with _sync_tokens (revoked) or stays
            self.say(f"{s.version.key} leaves the ladder ({why})")
            return
        with contextlib.suppress(grpc.aio.AioRpcError):
            await self.admin.RetireBot(
                admin_pb2.RetireBotRequest(bot_name=s.name), metadata=self.md, timeout=30
            )
        with contextlib.suppress(Exception):
            await s.proc.stop()
        self.say(f"{s.version.key} leaves the ladder ({why})")

    # ------------------------------------------------------------------ a block

    async def _play_block(self) -> bool:
        """Play one block; False when no table could be made (too few versions). A remote bot
        connected for the first time plays its gate first."""
        ready = await self._sync()
        if await self._play_gate():
            return True
        if self._still_connecting():
            return False
        tables = await self._tables(ready)
        if not tables:
            return False
        specs = block_specs(LEAGUE_ID, self.config.seed, self.block, tables)
        if self.budget is not None:
            specs = specs[: max(0, self.budget - self.played)]
        self._say_block(tables, ready, len(specs))
        await self._play_specs(specs)
        self.block += 1
        if self.fatal is None and (self._refit_task is None or self._refit_task.done()):
            # in the background: the next block plays while the fit runs in its own process
            self._refit_task = asyncio.get_running_loop().create_task(self._refit())
        return True

    def _still_connecting(self) -> bool:
        """Launched bots join the next block once they are connected: say who is awaited."""
        if not self._connecting:
            return False
        note = f"waiting for {', '.join(self._connecting)} to connect"
        if note != self._waiting:
            self.say(note)
            self._waiting = note
        return True

    def _say_block(self, tables: list[tuple[str, ...]], ready: list[Seated], n: int) -> None:
        keys = {s.name: s.version.key for s in ready}
        self.say(
            f"block {self.block}: "
            + "; ".join(", ".join(keys.get(b, b) for b in t) for t in tables)
            + f" ({n} hands)"
        )

    async def _play_specs(self, specs: list[Any]) -> None:
        """Play these hands, ``--concurrency`` at once."""
        queue = deque(specs)
        loop = asyncio.get_running_loop()
        self._workers = [
            loop.create_task(self._worker(queue))
            for _ in range(min(self.config.concurrency, len(queue)))
        ]
        await asyncio.gather(*self._workers, return_exceptions=True)
        self._workers = []

    async def _tables(self, ready: list[Seated]) -> list[tuple[str, ...]]:
        """The next block's tables (matchmaking, house bots filling what versions cannot); none,
        with a line saying what is awaited, when no table can be made."""
        entries = [Entry(s.name, s.version.author, self.counts.get(s.name, 0)) for s in ready]
        # scheduling for information, within a floor that keeps every version near the others
        mean = sum(e.hands for e in entries) / max(1, len(entries))
        floor = max(self.floor_hands, math.ceil(FLOOR_SHARE * mean))
        prefer = information_order(self._ratings, [e.key for e in entries])
        tables = next_tables(
            entries,
            self.n_tables,
            seed=self.config.seed,
            block=self.block,
            floor_hands=floor,
            prefer=prefer,
        )
        if len(tables) < self.n_tables and self.house and self.house_procs and entries:
            # house bots fill the seats the versions cannot: last in line, each its own author
            connected = await self._connected()
            house = [
                Entry(n, f"house/{n}", HOUSE_LAST + self.counts.get(n, 0))
                for n in self.house_procs
                if n in connected and n not in self.given_up
            ]
            mine = {e.key for e in entries}
            tables = [
                t
                for t in next_tables(
                    entries + house,
                    self.n_tables,
                    seed=self.config.seed,
                    block=self.block,
                    floor_hands=floor,
                    prefer=prefer,
                )
                if mine & set(t)
            ]
        if not tables:
            authors = len({s.version.author for s in ready})
            need = (
                "one version"
                if self.house and self.house_procs
                else "four versions of four authors (house bots are off)"
            )
            here = {s.name for s in ready}
            absent = sorted(
                s.name for s in self.seated.values() if s.proc is None and s.name not in here
            )
            note = (
                f"waiting: {len(ready)} versions of {authors} authors connected "
                f"({len(self.seated)} active"
                + (f"; remote, not connected: {', '.join(absent)}" if absent else "")
                + f"); a table needs {need}. "
                f"Submit with: uno-arena league submit {self.league_dir} PATH"
                + (", or connect a remote bot" if self.remote else "")
            )
            if note != self._waiting:
                self.say(note)
                self._waiting = note
            return []
        self._waiting = ""
        return tables

    # ------------------------------------------------------------------ ratings

    def _fitter_pool(self) -> ProcessPoolExecutor:
        if self._fitter is None:
            ctx = multiprocessing.get_context("spawn")  # no fork(): gRPC threads live here
            self._fitter = ProcessPoolExecutor(
                max_workers=1, mp_context=ctx, initializer=_fitter_init
            )
        return self._fitter

    async def _refit(self, *, force: bool = False) -> None:
        """Refit over every stored hand and record it (not when nothing new was stored). The
        fit runs in a process of its own that reads the store itself; a fit that fails is
        reported and the league goes on."""
        now = time.monotonic()
        if not force and now - self._last_refit < self.refit_every_s:
            return
        n = self.store.count()
        if n == self._fitted_hands:
            return
        loop = asyncio.get_running_loop()
        policy = self.config.faults.forfeit
        t0 = time.perf_counter()
        try:
            fit: LeagueFit = await loop.run_in_executor(
                self._fitter_pool(), fit_store, self.hands_at, policy
            )
        except Exception as exc:  # a fit that fails costs its refit, not the league
            self.log.error("refit failed", error=f"{type(exc).__name__}: {exc}"[:300])
            self.say(f"refit failed ({type(exc).__name__}: {str(exc)[:200]}); play goes on")
            return
        self._last_refit = now
        self._fitted_hands = fit.hands
        refit = record_refit(self.league, fit)
        if refit is None or fit.ratings is None:
            return
        self.refits += 1
        r = fit.ratings
        self._ratings = r  # the next blocks are scheduled for information from it
        if self.league_metrics is not None:
            self.league_metrics.set_ratings(
                {
                    b: (float(r.elo[i]), float(r.ci_low[i]), float(r.ci_high[i]))
                    for i, b in enumerate(r.bots)
                }
            )
            self.league_metrics.set_states(self.league.versions())
            self.league_metrics.refit(time.perf_counter() - t0, fit.hands)
        by_name = {server_name(v): v.key for v in self.league.versions()}
        top = sorted(zip(r.elo, r.bots, strict=True), reverse=True)[:4]
        self.say(
            f"refit {refit}: {fit.hands} hands in {time.perf_counter() - t0:.2f} s; "
            + ", ".join(f"{by_name.get(b, b)} {e:+.0f}" for e, b in top)
        )
        if self.until_settled:
            self._look_settled(fit)

    def _look_settled(self, fit: LeagueFit) -> None:
        assert fit.ratings is not None
        names = sorted(s.name for s in self.seated.values() if s.name in fit.ratings.bots)
        if len(names) < 2:
            return
        if self.settled is None or set(self.settled.bots) != set(names):
            self.settled = SettledState(tuple(names))  # a new field: a new test
        decision = self.settled.look(subset(fit.ratings, names), fit.per_bot)
        if decision.settled:
            self.say(f"settled: {decision.summary()}; the league stops")
            self.stop_requested = True
