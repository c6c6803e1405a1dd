"""Run a tournament: start (or reach) the server, launch the bots, play every planned hand.

Shards (:mod:`uno_tournament.sharding`): with ``--shards N`` the runner starts N worker
processes (:mod:`uno_tournament.worker`), each playing its share of the schedule on its own
server and bots, and stores what they send; with ``--shard I/N`` it plays shard I only, into a
shared PostgreSQL store, and follows the other shards' hands there for its live ratings.

The runner is a client of the service. Without ``--server`` it starts its own game server as a
child process (:mod:`uno_tournament.shard`), so the tables never share an event loop, or a GIL,
with the runner's own work.

One hand is one single-hand match created with AdminService.CreateMatch (seed = the deal's seed,
dealer 0, idempotency key = the hand id), followed with WatchMatch until it ends. The finished
hand goes to the store in one transaction (on a writer thread); hands already stored are never
played again, so ``resume`` after a crash (``kill -9`` of the runner or of the server) finishes
the plan with no hand lost and none counted twice. A match cancelled by a server restart is
replayed under the key ``<hand id>#<attempt>``. A server that stays unreachable for
``faults.startup_timeout_s`` stops the run with a one-line error that says how to resume (hands
in play are not stored).

Live ratings: :class:`~uno_tournament.standings.Standings` keeps each stored hand's seats in
columns (filled from the seats table on a resume, never from replay JSON) and refits every few
seconds in a worker thread, warm-started from the last fit. A task measures the event loop's lag
all along (``uno_tournament_event_loop_lag_seconds``).

Faults: a seat a stand-in played (the server's takeover after strikes or a disconnect, or the
runner's fallback for a bot it gave up on) is stored with ``taken_over``; the ratings count the
hand as the tournament's forfeit policy says (``faults.forfeit``, default: that bot last).

One module, about 960 lines: everything here is the run's single writer and its clock (the
store, the live standings, the refits, the heartbeats, the shard workers' messages, the metrics
page and the shutdown order), and each part reads and changes the same run state. The jobs that
stand alone live elsewhere: a sequential run's looks, gate and stop
(:mod:`~uno_tournament.sequential_runner`), playing hands (:mod:`~uno_tournament.player`),
progress and loop lag (:mod:`~uno_tournament.progress`), replay files
(:mod:`~uno_tournament.replay`), rating inputs (:mod:`~uno_tournament.standings`), the JSON log
(:mod:`~uno_tournament.runlog`).
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import json
import multiprocessing
import os
import signal
import socket
import sys
import time
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from uno_server import _sigint
from uno_server.gen.uno.v1 import admin_pb2_grpc
from uno_server.service.tlsclient import channel as tls_channel
from uno_server.web.guard import start_metrics_server

from . import bot_programs, report, report_guard, sandbox, schedule
from .build import BuildError, build_bots
from .config import ConfigError, TournamentConfig
from .config_stored import load_config
from .metrics import Registries
from .player import Player, RunnerError
from .plural import count
from .procs import announce_sandbox, token_on_command_line
from .progress import Progress
from .rating_bounds import one_sided
from .ratings import SequentialElo
from .replay import ensure_replays, store_hand
from .sandbox import SandboxError
from .sequential_runner import SequentialMixin
from .shard import WORKER_SERIES, Relabeled, RemoteMetrics, WorkerProcess
from .sharding import ShardSpec, identity_digest, join_store, new_tournament_id
from .standings import Standings, live_fit, rated_result
from .store import (
    DB_NAME,
    FOLLOW_OVERLAP,
    HandRecord,
    ResultStore,
    RunLock,
    ShardStatus,
    Store,
    StoreError,
    hand_from_json,
)

__all__ = ["Runner", "RunnerError", "resume", "start"]

REFIT_INTERVAL_S = 5.0
HEARTBEAT_S = 5.0
"""How often a shard records its state in the store and reads the other shards' new hands."""


def _fitter_init() -> None:
    """In the refit process: yield the CPU to the tables (a refit is background work), leave
    Ctrl-C to the runner, and die with it (Linux).

    The death signal only covers a runner that dies after it is set: a runner killed while this
    process was still starting (it imports the ratings first, seconds on a busy machine) left it
    running for ever, holding the runner's stdout. So it also exits if its parent is gone."""
    with contextlib.suppress(OSError):
        os.nice(10)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    with contextlib.suppress(Exception):
        import ctypes

        ctypes.CDLL("libc.so.6").prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    parent = multiprocessing.parent_process()
    if parent is not None and parent.pid != os.getppid():
        os._exit(1)  # the runner died before the death signal was armed


class Runner(SequentialMixin, Player):
    """Plays a tournament (or one shard of it) and records every hand in the store: on one
    in-process shard, or on ``shards`` worker processes (``--shards N``) whose hands it
    receives, staying the store's single writer."""

    def __init__(
        self,
        out: Path,
        store: ResultStore,
        config: TournamentConfig,
        tournament_id: str,
        *,
        max_hands: int | None = None,
        refit_interval_s: float = REFIT_INTERVAL_S,
        shards: int = 1,
        only: ShardSpec | None = None,
        replay_files: bool | None = None,
        **kwargs: Any,
    ) -> None:
        if only is not None:
            kwargs.setdefault("shard_name", str(only))
        elif shards > 1:
            kwargs.setdefault("shard_name", "all")
        super().__init__(out, config, tournament_id, **kwargs)
        self.store = store
        self.max_hands = max_hands
        self.refit_interval_s = refit_interval_s
        self.n_shards = shards
        """Local shard workers (``--shards N``); 1 plays in this process."""
        self.only = only
        """``--shard I/N``: play this shard of the schedule only (the store is shared)."""
        self.replay_files = isinstance(store, Store) if replay_files is None else replay_files
        """Write a replay file per hand into ``out/replays`` (a local run; a shared store
        keeps the replays in the database)."""
        self.inline_writes = isinstance(store, Store) and only is None
        """Store each hand on the event loop itself, not on the writer thread: a local SQLite
        file that this runner alone writes (0.4-0.6 CPU-ms a hand; the only other user of its
        lock is the heartbeat, a moment on the writer thread every HEARTBEAT_S), where
        handing the hand to a thread and waking the loop again cost about a third as much
        as the write (docs/performance.md, ninth pass). A shared store (PostgreSQL, or
        ``--shard I/N`` pods on one file) may make a write wait on the network or on another
        writer, so it keeps the thread and the loop never waits."""
        self.elo = SequentialElo()
        self.standings = Standings(self.names, config.faults.forfeit)
        self.live: dict[str, float] = {}
        self.live_never_first: set[str] = set()
        """Bots that never went out first in the live refit's hands (last in ``_top``)."""
        """Latest live Plackett-Luce ratings (empty until the first refit)."""
        self.resumed_hands = 0
        """Hands stored before this process started (a resume): no sequential Elo on the line."""
        self.refits = 0
        self.refit_seconds = 0.0
        self._fitter: ProcessPoolExecutor | None = None
        self.procs: list[WorkerProcess] = []
        """The shard workers (``--shards N``)."""
        self._collectors: list[Any] = []
        self._children: dict[tuple[Any, str], Any] = {}
        """Labelled metric series by (metric, bot): :meth:`_child`."""
        self._seen: set[str] = set()
        """Hands already in the live standings (a shard also follows the others' hands)."""
        self._follow_seq = 0
        self._connected_shards = 0
        self.started_at = time.time()
        self._lingering: asyncio.Task[None] | None = None
        """The wait of ``--metrics-linger`` while it lasts."""
        self._init_sequential()

    def _note_incident(self, bot: str, kind: str, detail: str) -> None:
        self.store.add_incident(bot, kind, detail)

    def _stored_note(self) -> str:
        return f"; {count(self.store.count(), 'hand')} stored"

    # ------------------------------------------------------------------ the run

    def _write(self, rec: HandRecord) -> bool:
        """On the writer thread: events to JSON, the hand to the store, its replay file."""
        return store_hand(self.store, rec, self.out / "replays" if self.replay_files else None)

    async def _record(self, rec: HandRecord) -> None:
        try:
            if self.inline_writes:
                stored = self._write(rec)
            else:
                stored = await asyncio.get_running_loop().run_in_executor(
                    self._writer, self._write, rec
                )
            if not stored:
                return
        except Exception as exc:  # a full disk, a lost database: stop, say what to do
            self._fail(self._store_failure(exc, rec.hand_id))
            return
        self._absorb(rec)
        assert self.progress is not None
        self.progress.add(rec.moves)
        self.metrics.hands_completed.set(self.progress.done)
        self.metrics.hands_stored.inc()
        self._set_live()
        self._count(rec)

    def _store_failure(self, exc: BaseException, hand_id: str = "") -> RunnerError:
        """The one line for a hand the store could not take (its transaction rolled back, so
        the hand is played again on a resume; a replay file not written is written then)."""
        path = getattr(exc, "filename", None) or self.store.location
        code = getattr(exc, "errno", None)
        text = str(exc) if not isinstance(exc, OSError) else (exc.strerror or str(exc))
        text = " ".join(text.split())[:200]
        full = code in (errno.ENOSPC, errno.EDQUOT) or "full" in text.lower()
        todo = "Free space on that disk" if full else "Fix the cause"
        try:
            stored = self.store.count()  # a hand whose replay file failed is stored already
        except Exception:
            stored = self.progress.done if self.progress is not None else 0
        planned = self.progress.planned if self.progress is not None else 0
        what = f"hand {hand_id}" if hand_id else "the run's state"
        self.log.error("store write failed", hand=hand_id, path=str(path), error=text, errno=code)
        return RunnerError(
            f"cannot store {what}: {text} ({path}); {stored} of {count(planned, 'hand')} "
            f"stored, none lost. {todo}, then: uno-arena tournament resume {self.out}"
        )

    def _absorb(self, rec: HandRecord) -> None:
        """A stored hand into the live standings (once: a shard also reads the other shards'
        hands from the shared store)."""
        if rec.hand_id in self._seen:
            return
        self._seen.add(rec.hand_id)
        self.standings.add(
            rec.hand_id, rec.deal_id, [(s.bot, s.place, s.taken_over) for s in rec.seats]
        )
        rated = rated_result(rec, self.config.faults.forfeit)
        if rated is not None:
            self.elo.update(rated)
        if self.seq is not None and rec.hand_id in self._seq_index:
            self._seq_stored[rec.hand_id] = rated
            self._kick_looks()

    async def _play_one(self, queue: deque[schedule.HandSpec]) -> None:
        """Play ``queue`` as a plain table does (the sequential gate is the mixin's)."""
        await Player._worker(self, queue)

    def _child(self, metric: Any, bot: str) -> Any:
        """``metric.labels(bot)``, looked up once per run (a hand counts eight of them, and
        ``labels`` checks and locks on every call)."""
        key = (metric, bot)
        got = self._children.get(key)
        if got is None:
            got = self._children[key] = metric.labels(bot)
        return got

    def _count(self, rec: HandRecord) -> None:
        m = self.metrics
        child = self._child
        for s in rec.seats:
            if not s.taken_over:  # the bot's own play; a stand-in's result is not the bot's
                child(m.bot_hands, s.bot).inc()
                if s.place == 1:
                    child(m.bot_wins, s.bot).inc()
            if s.illegal:
                child(m.bot_illegal, s.bot).inc(s.illegal)
            if s.late:
                child(m.bot_late, s.bot).inc(s.late)
            if s.taken_over and self.config.faults.forfeit != "count":
                child(m.bot_forfeits, s.bot).inc()

    def _set_live(self) -> None:
        """The live Elo gauge of every bot after a stored hand."""
        live = self.metrics.live_elo
        for bot, e in self._sequential().items():
            self._child(live, bot).set(e)

    def _sequential(self) -> dict[str, float]:
        """The sequential Elo of every bot, centred at mean 0 (``SequentialElo.as_array``'s
        values, in plain Python: this runs once a hand, and numpy's set-up for eight numbers
        cost more than the sums)."""
        rating = self.elo.rating
        values = [rating(n) for n in self.names]
        mean = sum(values) / len(values) if values else 0.0
        return {n: v - mean for n, v in zip(self.names, values, strict=True)}

    # ------------------------------------------------------------------ shards

    def _status(self, state: str) -> ShardStatus:
        prog = self.progress
        return ShardStatus(
            shard=self.shard_name,
            addr=self.public_addr,
            host=socket.gethostname(),
            pid=os.getpid(),
            state=state,
            planned=prog.planned if prog is not None else 0,
            done=prog.done if prog is not None else 0,
            started_at=self.started_at,
            heartbeat_at=time.time(),
        )

    def _heartbeat(self, state: str) -> list[HandRecord]:
        """On the writer thread: this shard's state into the store, and (a shard of a shared
        store) the hands the other shards stored since the last look."""
        if self.only is not None:
            self.store.set_shard(self._status(state))
        else:
            now = time.time()
            for w in self.procs:
                self.store.set_shard(
                    ShardStatus(
                        w.name,
                        w.addr,
                        socket.gethostname(),
                        w.proc.pid if w.proc else 0,
                        w.state,
                        w.planned,
                        w.done,
                        self.started_at,
                        now,
                    )
                )
        if self.only is None:
            return []
        hands, self._follow_seq = self.store.new_hands(self._follow_seq, overlap=FOLLOW_OVERLAP)
        self._adopt_record()
        return hands

    async def _heartbeat_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            try:
                hands = await loop.run_in_executor(self._writer, self._heartbeat, "playing")
            except StoreError as exc:
                self._fail(RunnerError(str(exc)))
                return
            for h in hands:
                self._absorb(h)
            if self.seq is not None and self.seq.stopped and not self._decided:
                self._on_stop()  # another pod's look stopped the run

    def _fitter_pool(self) -> ProcessPoolExecutor:
        if self._fitter is None:
            ctx = multiprocessing.get_context("spawn")  # no fork(): the runner has gRPC threads
            self._fitter = ProcessPoolExecutor(
                max_workers=1, mp_context=ctx, initializer=_fitter_init
            )
        return self._fitter

    async def refit(self) -> None:
        """Refit the live ratings in a worker process, warm-started from the last fit: the
        runner's event loop only copies the rating columns (no stored JSON is read, and the fit
        never holds the runner's GIL)."""
        t0 = time.perf_counter()
        outcomes, names, start = self.standings.snapshot()
        loop = asyncio.get_running_loop()
        r = await loop.run_in_executor(
            self._fitter_pool(), live_fit, outcomes, names, start, 1000.0
        )
        self.standings.accept(r)
        self.refit_seconds = time.perf_counter() - t0
        self.refits += 1
        self.metrics.refit_seconds.set(self.refit_seconds)
        if r is None or not r.converged or not np.isfinite(r.elo).all():
            # a fit that stopped unconverged is no ranking: the line keeps the last converged
            # fit (or what _top shows before the first one), and so do the metrics
            return
        # a bot that never went out first has no rating the fit could find, only the prior's
        # artefact: it is not shown among the top (an examination saw "top: heur +198,
        # illegal +64" for a bot that had not won a hand)
        never = one_sided(outcomes, len(names), "winner") < 0
        self.live = {b: float(r.elo[i]) for i, b in enumerate(r.bots)}
        self.live_never_first = {b for i, b in enumerate(r.bots) if never[i]}
        self.metrics.set_ratings(
            {
                b: (float(r.elo[i]), float(r.ci_low[i]), float(r.ci_high[i]))
                for i, b in enumerate(r.bots)
            }
        )

    async def _refit_loop(self) -> None:
        last = -1
        first = True
        while True:
            if not (first and self.resumed_hands):  # a resume fits its stored hands at once
                await asyncio.sleep(self.refit_interval_s)
            first = False
            n = len(self.standings)
            if n == last or n < 8:
                continue
            last = n
            try:
                await self.refit()
            except (ValueError, np.linalg.LinAlgError, FloatingPointError):
                continue

    async def run(self) -> int:
        """Play what is left of the plan; the exit code (0: done or stopped by --max-hands,
        130: interrupted); a failure that stops the run raises :class:`RunnerError`."""
        try:
            return await self._run()
        except RunnerError as exc:
            if exc is not self.fatal:  # a stop during play is logged when it happens
                self.log.error("run stopped", error=str(exc))
            raise
        finally:
            self.log.close()

    async def _run(self) -> int:
        try:  # an adaptive run's block tables are the ones its store records
            full_plan = self.config.plan(self.tid, self.store)
        except ValueError as exc:
            raise RunnerError(f"{self.store.location}: {exc}"[:400]) from exc
        plan = full_plan
        if self.only is not None:
            plan = schedule.partition(full_plan, self.only.index, self.only.count, self.config.seed)
        done = self.store.done_ids()
        if done and self.only is None and (self.out / "results.json").exists():
            self._unchanged_since_report(full_plan)
        if self.replay_files:
            try:
                replays = ensure_replays(self.store, self.out / "replays")
            except OSError as exc:
                raise self._store_failure(exc) from exc
            if replays:
                self.say(f"wrote {replays} missing replay files")
        pending = deque(h for h in plan if h.hand_id not in done)
        if self.max_hands is not None:
            pending = deque(list(pending)[: self.max_hands])
        self._pending = pending
        if self.config.sequential:
            self._open_record(full_plan)
        mine = {h.hand_id for h in plan}
        stored = len(mine & done)
        self.progress = Progress(planned=len(plan), done=stored)
        self.metrics.hands_planned.set(len(plan))
        self.metrics.hands_completed.set(stored)
        for n in self.names:  # every bot's series exists from the start, at 0
            self.metrics.bot_hands.labels(n)
            self.metrics.bot_wins.labels(n)
            self.metrics.bot_forfeits.labels(n)
            self.metrics.bot_illegal.labels(n)
            self.metrics.bot_late.labels(n)
            self.metrics.bot_given_up.labels(n).set(0)
        for _, bot, _, detail in self.store.incidents(["given_up"]):
            self.given_up.setdefault(bot, detail)  # a resume keeps the marks
            self.metrics.bot_given_up.labels(bot).set(1)
        self.standings = Standings.from_store(self.store, self.names, self.config.faults.forfeit)
        for h in self.store.hand_rows():
            self._seen.add(h.hand_id)
            rated = rated_result(h, self.config.faults.forfeit)
            if rated is not None:
                self.elo.update(rated)
            if h.hand_id in self._seq_index:
                self._seq_stored[h.hand_id] = rated
            if h.hand_id in mine:
                self._count(h)  # a shard counts its own hands; the others count theirs
        self.resumed_hands = len(self._seen)
        if self.only is not None:
            _, self._follow_seq = self.store.new_hands(0)
        n_tables = len({h.table for h in full_plan})
        design = self.config.design()
        where = f"shard {self.only}: {len(plan)} of " if self.only is not None else ""
        self.log.info(
            "run started",
            planned=len(plan),
            stored=stored,
            to_play=len(pending),
            store=self.store.location,
            out=str(self.out),
            shards=self.n_shards,
        )
        split = schedule.split_warning([h.bots for h in full_plan if h.bots])
        for line in split:
            self.say(line)
        shown = token_on_command_line(self.config.bots)
        if shown:  # a warning: on stderr, where it is not lost in a redirected leaderboard
            print(shown, file=sys.stderr, flush=True)
        self.say(
            f"tournament {self.tid}: {len(self.config.bots)} bots, "
            f"{n_tables} table{'s' if n_tables != 1 else ''}, "
            f"{where}{len(full_plan)} hands ({stored} done; {design.reason}; 95% CI of a gap "
            f"{'within a group ' if split else ''}"
            f"about +-{schedule.expected_precision(len(full_plan), len(self.config.bots)):.0f} "
            f"Elo), {'store ' + self.store.location if self.only else 'output ' + str(self.out)}"
        )
        loop = asyncio.get_running_loop()
        installed = []
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._interrupt)
                installed.append(sig)
        tasks: list[asyncio.Task[None]] = [loop.create_task(self.lag.run())]
        try:
            if self.seq is not None:
                await self._looks_now()  # a resumed run catches up with its stored hands
                if self.seq.stopped:
                    pending.clear()
                    self.say(self.seq.status_line())
                else:
                    self.say(f"sequential test: {self.seq.status_line()}")
            if pending:
                # the refit process starts now, before the tables, and imports in the background
                self._fitter_pool().submit(int, 0)
                self._serve_metrics()
                await self._build_bots()
                if self.n_shards > 1 and self.only is None:
                    await self._play_sharded(full_plan, pending, tasks)
                else:
                    await self._play_here(pending, tasks)
            if self.seq is not None and not self.interrupted and self.fatal is None:
                await self._looks_now()  # the last looks (the budget's, or the final block's)
        finally:
            if self._seq_task is not None and not self._seq_task.done():
                self._seq_task.cancel()
            for t in tasks:
                t.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await t
            await self._linger()  # Ctrl-C still reaches _interrupt: it ends the wait
            for sig in installed:  # stopping the bots takes a few seconds: Ctrl-C is still ours
                loop.add_signal_handler(sig, self._interrupt_shutdown)
            try:
                await self._shutdown()
            finally:
                for sig in installed:
                    loop.remove_signal_handler(sig)
        if self.fatal is not None:
            raise self.fatal
        # the outcome is decided: a Ctrl-C in the teardown that follows says so (_sigint.done)
        return _sigint.done(self._finish(plan, full_plan, mine))

    async def _build_bots(self) -> None:
        """Build the launched bots that have a build step (:mod:`uno_tournament.build`), in
        their sandbox, before any table starts; a failed build stops the run."""
        bots = [b for b in self.config.bots if b.build and not b.external]
        if not bots:
            return
        try:
            sandbox.check([b.sandbox for b in bots])  # sandbox.required: no unconfined build
            await build_bots(self.config, self.log_dir, hide=[self.out, *self.hide], say=self.say)
        except (BuildError, SandboxError) as exc:
            raise RunnerError(str(exc)) from exc

    def _finish(
        self, plan: list[schedule.HandSpec], full_plan: list[schedule.HandSpec], mine: set[str]
    ) -> int:
        """The end of a run: the count, and the reports when every hand is stored."""
        if self.only is not None:
            return self._finish_shard(full_plan, mine)
        total = self.store.count()
        if self.seq is not None and self.seq.stopped:
            return self._finish_sequential(total)
        if total < len(plan):  # a Ctrl-C after the last hand was stored still gets its reports
            self.log.info(
                "run stopped before the end",
                stored=total,
                planned=len(plan),
                interrupted=self.interrupted,
            )
            self.say(
                f"interrupted: {total} of {count(len(plan), 'hand')} stored. Resume with:\n"
                f"  uno-arena tournament resume {self.out}"
            )
            return 130 if self.interrupted else 0
        self.log.info("run finished", stored=total, planned=len(plan))
        self.say(f"finished: {count(total, 'hand')} in {self.out}")
        report_guard.write_reports(  # a failure is one line and the log's traceback
            self.out,
            self.log,
            lambda: report.write_all(
                self.out, self.store, self.config, self.tid, stream=self.stream, planned=len(plan)
            ),
        )
        return 0

    def _unchanged_since_report(self, full_plan: list[schedule.HandSpec]) -> None:
        """A resume plays only what is missing: a hand deleted from the database after its
        report (or edited) would be played again, or reported otherwise, and the new
        results.json would hide it (an examination deleted a hand and resumed; the hand came
        back with another winner and verify passed). Refused before any hand is played."""
        from . import chain

        plan_ids = [h.hand_id for h in full_plan]
        try:
            chain.unchanged(self.out, self.tid, plan_ids, self.store)
        except chain.StoreChangedError as exc:
            raise RunnerError(str(exc)) from None

    def _finish_shard(self, full_plan: list[schedule.HandSpec], mine: set[str]) -> int:
        """The end of ``--shard I/N``: this shard's state in the store, and the reports once
        every shard is done."""
        done = self.store.done_ids()
        own = len(mine & done)
        finished = own == len(mine) or (self.seq is not None and self.seq.stopped)
        state = "finished" if finished else ("stopped" if self.interrupted else "playing")
        with contextlib.suppress(StoreError):
            self.store.set_shard(self._status(state))
        total = len(done & {h.hand_id for h in full_plan})
        if not finished:
            self.say(
                f"shard {self.only} stopped: {own} of {len(mine)} of its hands stored. Run the "
                "same command again to finish it"
            )
            return 130 if self.interrupted else 0
        self.say(
            f"shard {self.only} finished: its {count(own, 'hand')} stored; the tournament has "
            f"{total} of {count(len(full_plan), 'hand')}"
        )
        if self.seq is not None and self.seq.stop is not None:
            self.out.mkdir(parents=True, exist_ok=True)
            report.write_all(
                self.out,
                self.store,
                self.config,
                self.tid,
                stream=self.stream,
                planned=int(self.seq.stop["hands"]),
            )
            self.say(self.seq.status_line())
        elif total == len(full_plan):
            self.out.mkdir(parents=True, exist_ok=True)
            report.write_all(
                self.out,
                self.store,
                self.config,
                self.tid,
                stream=self.stream,
                planned=len(full_plan),
            )
        else:
            self.say(
                f"when every shard is done: uno-arena tournament report --store "
                f"{self.store.location} --out DIR"
            )
        return 0

    async def _play_here(
        self, pending: deque[schedule.HandSpec], tasks: list[asyncio.Task[None]]
    ) -> None:
        """Play ``pending`` on a shard of this process (its own server, unless --server)."""
        loop = asyncio.get_running_loop()
        self.needed = {b for h in pending for b in h.bots}
        if any(not h.bots for h in pending):  # adaptive blocks not chosen yet: any bot may play
            self.needed = set(self.names)
        self.shard = await self._start_shard()
        addr = self.shard.addr
        self._watch_metrics()
        self.channel = tls_channel(
            addr,
            self.server_ca if self.server_addr else None,
            options=[
                ("grpc.max_receive_message_length", 64 * 1024 * 1024),
                ("grpc.keepalive_time_ms", 20_000),
                ("grpc.max_reconnect_backoff_ms", 5_000),  # a restarted server is seen soon
            ],
        )
        self.admin = admin_pb2_grpc.AdminServiceStub(self.channel)  # type: ignore[no-untyped-call]
        if self.shard.server is None:
            if self.only is None:
                self.store.set_meta("server", addr)
            self.say(f"using server {addr}")
        else:
            self.say(f"game server process on {addr} (log: {self.shard.server.log_path})")
            tasks.append(loop.create_task(self._watch_server(self.shard.server)))
        if self.only is not None:
            self.store.set_shard(self._status("starting"))
            self.say(f"shard {self.only}: external bots connect to {self.public_addr}")
        await self._launch_bots(self.shard)
        if self.stop_requested:
            return
        self.say(f"{len(self.bots) or len(self.config.bots)} bots connected")
        if self.shard.server is not None:
            self.shard.server.mark()
        self.progress_started()
        tasks.append(loop.create_task(self._refit_loop()))
        tasks.append(loop.create_task(self._display()))
        if self.only is not None:
            tasks.append(loop.create_task(self._heartbeat_loop()))
        self._workers = [
            loop.create_task(self._worker(pending))
            for _ in range(min(self.config.concurrency, len(pending)))
        ]
        await asyncio.gather(*self._workers, return_exceptions=True)

    @property
    def server_cpu_s(self) -> float:
        """CPU seconds the game servers this run started used (read when they stopped)."""
        if self.procs:
            return sum(w.server_cpu_s for w in self.procs)
        if self.shard is not None and self.shard.server is not None:
            return self.shard.server.play_cpu_s
        return 0.0

    def progress_started(self) -> None:
        assert self.progress is not None
        self.progress.started = time.monotonic()
        self.lag.reset()  # from here on the tables run: what stalls now matters

    # ------------------------------------------------------------------ --shards N

    async def _play_sharded(
        self,
        full_plan: list[schedule.HandSpec],
        pending: deque[schedule.HandSpec],
        tasks: list[asyncio.Task[None]],
    ) -> None:
        """Play ``pending`` on ``n_shards`` worker processes; store what they send."""
        loop = asyncio.get_running_loop()
        owner = schedule.shard_units(full_plan, self.n_shards, self.config.seed)
        parts: list[list[str]] = [[] for _ in range(self.n_shards)]
        for h in pending:
            parts[owner[(h.table, h.block, h.deal)]].append(h.hand_id)
        self.say(
            f"{count(self.n_shards, 'shard')}, each with its own game server and bots: "
            + ", ".join(f"{i}/{self.n_shards} {count(len(p), 'hand')}" for i, p in enumerate(parts))
        )
        try:  # each worker launches its own bots, in the sandbox this line describes
            for line in announce_sandbox([b.sandbox for b in self.config.bots if not b.external]):
                self.say(line)
        except SandboxError as exc:
            raise RunnerError(str(exc)) from exc
        for i, ids in enumerate(parts):
            if not ids:
                continue
            w = WorkerProcess(i, self.n_shards, self.out / "logs" / f"shard-{i}")
            w.planned = len(ids)
            self.procs.append(w)
            job = {
                "config": self.config.to_dict(),
                "tournament_id": self.tid,
                "shard": [i, self.n_shards],
                "hands": ids,
                "out": str(self.out),
                "log_dir": str(w.log_dir),
                "given_up": self.given_up,
                "host": self.host,
                "port": self.port + i if self.port else 0,
                "advertise": self.advertise,
                "metrics": self.metrics_port is not None,
                "sequential_store": (  # where the shard reads the decision
                    (
                        str(self.out)
                        if isinstance(self.store, Store)
                        else getattr(self.store, "url", "")
                    )
                    if self.seq is not None
                    else ""
                ),
            }
            await w.start(job)
        self._connected_shards = 0
        self._workers = [loop.create_task(self._pump(w)) for w in self.procs]
        tasks.append(loop.create_task(self._refit_loop()))
        tasks.append(loop.create_task(self._display()))
        tasks.append(loop.create_task(self._shard_status_loop()))
        await asyncio.gather(*self._workers, return_exceptions=True)
        with contextlib.suppress(StoreError):  # the shards' last states
            await loop.run_in_executor(self._writer, self._heartbeat, "")

    async def _pump(self, w: WorkerProcess) -> None:
        """Everything one shard worker says, until it exits."""
        async for msg in w.messages():
            kind = msg.get("type")
            if kind == "hand":
                w.done += 1
                await self._record(hand_from_json(msg["hand"]))
            elif kind == "serving":
                w.addr = str(msg.get("addr", ""))
                w.metrics_url = str(msg.get("metrics_url", ""))
                if w.metrics_url:
                    w.metrics = RemoteMetrics(w.metrics_url)
                    self._collectors.append(
                        Relabeled(
                            w.metrics,
                            {"shard": w.name, "tournament": self.tid},
                            only=WORKER_SERIES,
                        )
                    )
                self.say(f"shard {w.name}: game server on {w.addr} (logs: {w.log_dir})")
                self._write_addresses()
            elif kind == "metrics":
                if w.metrics is not None:
                    w.metrics.freeze(str(msg.get("text", "")))  # the shard's final values
            elif kind == "connected":
                w.state = "playing"
                self._connected_shards += 1
                if self._connected_shards == len(self.procs):
                    self.say(f"bots connected on all {len(self.procs)} shards")
                    self.progress_started()
            elif kind == "incident":
                bot, what, detail = str(msg["bot"]), str(msg["kind"]), str(msg["detail"])
                self._incident(bot, what, f"{detail} (shard {w.name})", count=False, shard=w.name)
            elif kind == "retry":
                self._retry(count=False)
            elif kind == "error":
                w.state = "failed"
                self._fail(RunnerError(f"shard {w.name}: {msg.get('message', '')}"))
            elif kind == "done":
                w.state = "finished"
            elif kind == "stats":
                w.server_cpu_s = float(msg.get("server_cpu_s", 0.0))
        code = await w.proc.wait() if w.proc is not None else 0
        stopped = self.seq is not None and self.seq.stopped  # the decision stopped the workers
        if w.state not in ("finished", "failed") and not self.stop_requested and not stopped:
            w.state = "failed"
            self._fail(
                RunnerError(
                    w.why(f"the worker exited with status {code}")
                    + f"{self._stored_note()}. Resume with: uno-arena tournament resume "
                    f"{self.out}"
                )
            )

    def _write_addresses(self) -> None:
        """``shards.json`` in the run folder: each shard's game server, for external bots."""
        data = [
            {"shard": w.name, "addr": w.addr, "metrics": w.metrics_url, "log": str(w.log_dir)}
            for w in self.procs
        ]
        path = self.out / "shards.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps(data, indent=1) + "\n")
        os.replace(tmp, path)
        if all(w.addr for w in self.procs):
            self.say(f"shard addresses (for external bots): {path}")

    async def _shard_status_loop(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            await asyncio.sleep(HEARTBEAT_S)
            with contextlib.suppress(StoreError):
                await loop.run_in_executor(self._writer, self._heartbeat, "playing")

    def _fail(self, exc: BaseException) -> None:
        super()._fail(exc)
        for w in self.procs:
            w.terminate()

    def _interrupt(self) -> None:
        if self._lingering is not None:  # every hand is played: Ctrl-C only ends the wait
            self._lingering.cancel()
            return
        if not self.procs:
            super()._interrupt()
            return
        if self.stop_requested:
            os._exit(130)
        self.interrupted = True
        self.stop_requested = True
        self.say("\nstopping the shards (Ctrl-C again to quit at once) ...")
        for w in self.procs:  # they stop their tables; what they finished still arrives
            w.terminate()

    def _interrupt_shutdown(self) -> None:
        """Ctrl-C while the bots and servers stop: the first says so, the next leaves at once
        (what was stored stays; a resume plays what was not)."""
        if self.stop_requested:
            os._exit(130)
        self.stop_requested = True
        self.say("\nstopping the bots (Ctrl-C again to quit at once) ...")

    def _serve_metrics(self) -> None:
        """The metrics page: this process's series (labelled with its shard: ``I/N``, or
        ``all`` for the runner of ``--shards N``), and its shards' servers and workers."""
        if self.metrics_port is None:
            return
        name = "all" if self.n_shards > 1 and self.only is None else self.shard_name
        self._collectors.append(
            Relabeled(self.metrics.registry, {"shard": name, "tournament": self.tid})
        )
        try:
            start_metrics_server(self.metrics_port, self.metrics_host, Registries(self._collectors))
        except (OSError, OverflowError) as exc:  # taken since the command line's look
            raise RunnerError(
                f"--metrics-port {self.metrics_port}: cannot serve the metrics on "
                f"{self.metrics_host} ({getattr(exc, 'strerror', None) or exc}); choose another "
                f"port, then: uno-arena tournament resume {self.out}"
            ) from None
        self.say(f"metrics on http://{self.metrics_host}:{self.metrics_port}/metrics")

    async def _linger(self) -> None:
        """Hold the metrics page (and the server it re-exposes) open for a last scrape, so
        that Prometheus sees the final counts (``--metrics-linger``); not after a Ctrl-C."""
        if self.metrics_port is None or self.metrics_linger_s <= 0 or self.stop_requested:
            return
        if len(self.standings) >= 8:  # the ratings of every hand, not of the last refit's (a
            # run shorter than one refit interval showed none at all; an examination)
            with contextlib.suppress(ValueError, np.linalg.LinAlgError, FloatingPointError):
                await self.refit()
        self.say(
            f"metrics: final values stay up {self.metrics_linger_s:g} s for a last scrape "
            "(Ctrl-C ends the wait)"
        )
        self._lingering = asyncio.get_running_loop().create_task(
            asyncio.sleep(self.metrics_linger_s)
        )
        with contextlib.suppress(asyncio.CancelledError):
            await self._lingering
        self._lingering = None

    def _watch_metrics(self) -> None:
        """Re-expose this process's own game server's metrics (once it serves)."""
        if self.metrics_port is None or self.shard is None or self.shard.server is None:
            return
        self._collectors.append(
            Relabeled(
                RemoteMetrics(self.shard.server.metrics_url),
                {"shard": self.shard_name, "tournament": self.tid},
            )
        )

    async def _shutdown(self) -> None:
        await asyncio.gather(*(w.stop() for w in self.procs), return_exceptions=True)
        if self.shard is not None:
            await asyncio.gather(
                *(p.stop() for p in self.shard.bots.values()), return_exceptions=True
            )
        if self.channel is not None:
            await self.channel.close()
        if self.shard is not None and self.shard.server is not None:
            await self.shard.server.stop()
        self._writer.shutdown(wait=True)
        if self._fitter is not None:
            self._fitter.shutdown(wait=True, cancel_futures=True)

    # ------------------------------------------------------------------ display

    async def _display(self) -> None:
        assert self.progress is not None
        prog = self.progress
        if not self.show_progress:
            return
        if self.stream.isatty():
            from .live import live_display

            await live_display(prog, self._top, self.stream, self._seq_line)
            return
        while True:
            await asyncio.sleep(5.0)
            eta = prog.eta_s()
            top = ", ".join(f"{b} {e:+.0f}" for b, e in self._top(3)) or "not fitted yet"
            seq = f"; {self.seq.status_line()}" if self.seq is not None else ""
            self.say(
                f"{prog.done}/{prog.planned} hands, {prog.planned - prog.done} to go, "
                f"{prog.rate():.1f} hands/s, ETA {'?' if eta is None else f'{eta:.0f} s'}; "
                f"top: {top}{seq}"
            )

    def _seq_line(self) -> str:
        """The live display's line of a sequential run ('' otherwise)."""
        return self.seq.status_line() if self.seq is not None else ""

    def _top(self, n: int) -> list[tuple[str, float]]:
        """The live leaderboard: the last converged Plackett-Luce refit, or the sequential Elo
        before it; a bot given up on is marked. After a resume, nothing before the first fit
        (the refit runs at once then): the sequential Elo weighs the last hands most, and a
        settled run's later blocks seat only its open pairs, so over the stored hands it ranked
        an examination's first line after a resume "g25 +110, g00 +9, g55 -48" where g00 had
        won 182 hands and g25 83 (the fit of the same 347 hands, which converged: g00 +172,
        g25 +29, g40 -66, the next line)."""
        ratings = self.live or ({} if self.resumed_hands else self._sequential())
        never = self.live_never_first if self.live else set()
        top = sorted(ratings.items(), key=lambda kv: (kv[0] in never, -kv[1]))[:n]
        return [(f"{b} {report.GIVEN_UP_MARK}" if b in self.given_up else b, e) for b, e in top]


# ------------------------------------------------------------------------ entry points


def start(
    config: TournamentConfig,
    out: Path,
    *,
    config_text: str = "",
    store_url: str | None = None,
    **kwargs: Any,
) -> int:
    """Start a tournament: a new SQLite store in ``out``, or (``store_url``) a PostgreSQL store,
    new or already holding this tournament (a shard started again resumes)."""
    from .chain import reports_of_another

    store: ResultStore
    if (out / DB_NAME).exists():
        pass  # Store.create says it holds a tournament already
    elif store_url is None and (other := reports_of_another(out, None)) is not None:
        raise StoreError(_other_reports(out, other))
    if store_url:
        from .pgstore import PgStore

        only: ShardSpec | None = kwargs.get("only")
        store = PgStore.connect(store_url, create=True)
        try:
            tid = join_store(
                store,
                config,
                config_text=config_text,
                shards=only.count if only is not None else None,
                shard=only,  # its lock, before the server starts (a second process refused)
            )
        except Exception:
            store.close()
            raise
        if (other := reports_of_another(out, tid)) is not None:
            store.close()
            raise StoreError(_other_reports(out, other))
        return _run(Runner(out, store, config, tid, **kwargs))
    tid = new_tournament_id(config.name)
    lock = RunLock.acquire(out)
    try:
        store = Store.create(
            out,
            {
                "tournament_id": tid,
                "config": config.to_dict(),
                "config_text": config_text,
                "identity": identity_digest(config),
                "created_at": time.time(),
                bot_programs.META_KEY: bot_programs.programs(config),  # resume compares them
            },
        )
    except BaseException:
        lock.release()
        raise
    return _run(Runner(out, store, config, tid, **kwargs), lock)


def _other_reports(out: Path, other: str) -> str:
    return (
        f"{out} holds the reports of tournament {other!r} (results.json); choose another "
        "output folder, or move those reports away first"
    )


def resume(out: Path, **kwargs: Any) -> int:
    if not (out / DB_NAME).is_file():
        Store.open(out)  # the one-line "no tournament here" error, before any lock file
    lock = RunLock.acquire(out)  # a second resume (or a run still going) is refused here
    try:
        store = Store.open(out)
        try:
            store.check_damage()  # no hand is added to a damaged file
        except BaseException:
            store.close()
            raise
    except BaseException:
        lock.release()
        raise
    try:
        meta = store.meta()
        config = load_config(store, out)
        tid = store.tournament_id(meta)
        bot_programs.check_resume(store, config, out)  # an edited bot: refused, no hand played
    except (ConfigError, StoreError):
        store.close()
        lock.release()
        raise
    if kwargs.get("server") is None and meta.get("server"):
        kwargs["server"] = meta["server"]
    return _run(Runner(out, store, config, tid, **kwargs), lock)


def _run(runner: Runner, lock: RunLock | None = None) -> int:
    # gRPC logs an INFO line on every fork (each bot launch); keep its log to errors
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    try:
        return asyncio.run(runner.run())
    finally:
        runner.log.close()
        runner.store.close()
        if lock is not None:
            lock.release()
