"""The runner's part of a sequential run (``until = "settled"``, ``--candidate``/``--baseline``):
taking the looks as the plan's prefixes complete, recording the decision in the store, holding
the tables to the next look, and stopping at the decision. A mixin of
:class:`uno_tournament.runner.Runner` (the statistics are :mod:`uno_tournament.settled_run`)."""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from . import report, report_guard, schedule
from .config import TournamentConfig
from .deals_in_play import DealsInPlay
from .metrics import TournamentMetrics
from .player import RunnerError
from .plural import count
from .rating_model import HandResult
from .runlog import RunLog
from .settled_run import META_KEY, SequentialRecord, resolve, run_looks
from .sharding import ShardSpec
from .store import ResultStore

LOOKAHEAD_LOOKS = 1
"""A sequential run starts a hand only if it belongs to the next ``LOOKAHEAD_LOOKS`` looks (a
``--shard I/N`` pod, which sees the other pods' hands every few seconds, to one more): so no
table of the runner or of its shard workers starts a hand past the stop (a pod may start a
look's worth); only the hands already in play when it comes finish past it."""


class SequentialMixin:
    """The sequential decision of a :class:`~uno_tournament.runner.Runner`."""

    # what the runner provides
    config: TournamentConfig
    store: ResultStore
    metrics: TournamentMetrics
    log: RunLog
    out: Path
    tid: str
    stream: TextIO
    names: list[str]
    only: ShardSpec | None
    procs: list[Any]
    stop_requested: bool
    fatal: BaseException | None
    deals: DealsInPlay
    _writer: Any

    if TYPE_CHECKING:  # the runner's methods this part calls (never defined here at run time)

        def _fitter_pool(self) -> ProcessPoolExecutor: ...
        def _fail(self, exc: BaseException) -> None: ...
        def _store_failure(self, exc: BaseException, hand_id: str = "") -> RunnerError: ...
        def say(self, msg: str) -> None: ...
        async def _play_one(self, queue: deque[schedule.HandSpec]) -> None: ...

    def _init_sequential(self) -> None:
        self.seq: SequentialRecord | None = None
        """The decision: its looks and, once it came, its stop."""
        self._seq_ids: list[str] = []
        """The plan's hand ids in order (the looks are on its prefixes)."""
        self._seq_index: dict[str, int] = {}
        """Each planned hand's position in the plan's order."""
        self._seq_changed = asyncio.Event()
        self._seq_stored: dict[str, HandResult | None] = {}
        """Each stored hand of the plan as the ratings see it (None: left out by the policy)."""
        self._seq_task: asyncio.Task[None] | None = None
        self._pending: deque[schedule.HandSpec] | None = None
        """The hands this process has yet to start (cleared at the stop)."""
        self._decided = False
        """The stop has been acted on (tables told, workers stopped)."""

    def _looks_due(self) -> bool:
        seq = self.seq
        if seq is None:
            return False
        nb = seq.next_boundary()
        if nb is None:
            return False
        return all(h in self._seq_stored for h in self._seq_ids[seq.through : nb])

    def _kick_looks(self) -> None:
        """Start the looks that are due (one task at a time; it takes every due look); the
        projection of the hands still expected moves with the hands stored between looks."""
        if self.seq is not None and not self.seq.stopped:
            self.seq.played = len(self._seq_stored)
            self.metrics.set_sequential(len(self.seq.open_pairs()), self.seq.expected_hands())
        if self._seq_task is not None and not self._seq_task.done():
            return
        if self._looks_due():
            self._seq_task = asyncio.get_running_loop().create_task(self._take_looks())

    async def _take_looks(self) -> None:
        """The due looks, in the refit process (a look is a cold fit of the plan's prefix, never
        on the event loop); the record into the store; the stop if it came."""
        loop = asyncio.get_running_loop()
        while self.seq is not None and self._looks_due():
            seq = self.seq
            upto = seq.through
            while upto < len(self._seq_ids) and self._seq_ids[upto] in self._seq_stored:
                upto += 1
            ids = self._seq_ids[:upto]
            stored = {h: self._seq_stored[h] for h in ids}
            try:
                data = await loop.run_in_executor(
                    self._fitter_pool(),
                    run_looks,
                    seq.to_dict(),
                    self._seq_ids,
                    stored,
                    list(self.names),
                )
            except Exception as exc:  # a broken refit process: say so, keep the hands
                why = " ".join(f"{type(exc).__name__}: {exc}".split())[:200]
                self._fail(
                    RunnerError(
                        f"the sequential test's look failed ({why}); every stored hand is kept. "
                        f"Resume with: uno-arena tournament resume {self.out}"
                    )
                )
                return
            new = SequentialRecord.from_dict(data)
            if self.seq is not seq:  # adopted a newer record from the store meanwhile
                continue
            try:  # stored before any table sees it: no hand of a block the store lacks
                await loop.run_in_executor(self._writer, self._save_record, new)
            except Exception as exc:
                self._fail(self._store_failure(exc))
                return
            if self.seq is not seq:
                continue
            self.seq = new
            new.played = len(self._seq_stored)
            self._seq_changed.set()
            self._show_record(new)
            if new.stopped:
                self._on_stop()
                return

    async def _worker(self, queue: deque[schedule.HandSpec]) -> None:
        """A table: the next hand of ``queue``, once the sequential decision allows it."""
        if not self.config.sequential:
            await self._play_one(queue)
            return
        while queue and not self.stop_requested and self.fatal is None:
            i = self.deals.index(queue)  # a hand of a deal with none in play (deals_in_play)
            if i is None:
                await self.deals.wait()
                continue
            spec = queue[i]
            self.deals.hold(spec)
            try:
                if not await self._gate(spec) or not queue:
                    return
                i = next((k for k, s in enumerate(queue) if s is spec), -1)
                if i < 0:  # another table took it meanwhile: check the next one
                    continue
                del queue[i]
                if not spec.bots:  # an adaptive block: its tables are in the record now
                    assert self.seq is not None and self.seq.blocks is not None
                    spec = resolve(spec, self.seq.blocks)
                await self._play_one(deque([spec]))
            finally:
                self.deals.release(spec)

    async def _gate(self, spec: schedule.HandSpec) -> bool:
        """Wait until ``spec`` belongs to the next looks (:data:`LOOKAHEAD_LOOKS`) and, in an
        adaptive run, its block's tables are recorded; False once the decision has stopped the
        run."""
        ahead = LOOKAHEAD_LOOKS + (1 if self.only is not None else 0)
        while not self.stop_requested:
            seq = self.seq
            if seq is None:
                return True
            if seq.stopped:
                return False
            k = self._seq_index.get(spec.hand_id)
            chosen = seq.blocks is None or spec.bots or spec.block < len(seq.blocks)
            if chosen and (k is None or k < seq.through + ahead * seq.look_every):
                return True
            self._seq_changed.clear()
            with contextlib.suppress(TimeoutError):  # a pod adopts others' looks on a thread
                await asyncio.wait_for(self._seq_changed.wait(), 1.0)
        return False

    def _save_record(self, rec: SequentialRecord) -> None:
        """On the writer thread: the record into the store's meta, unless the store holds a
        later one (another shard's, of the same hands)."""
        with contextlib.suppress(KeyError, ValueError, TypeError):
            have = SequentialRecord.from_dict(self.store.meta()[META_KEY])
            if have.stopped or have.through > rec.through:
                return
        self.store.set_meta(META_KEY, rec.to_dict())

    def _adopt_record(self) -> None:
        """On the writer thread (a ``--shard I/N`` pod's heartbeat): a later record another
        pod stored (the same test on the same hands) replaces this pod's."""
        if self.seq is None:
            return
        with contextlib.suppress(KeyError, ValueError, TypeError):
            have = SequentialRecord.from_dict(self.store.meta()[META_KEY])
            if have.through > self.seq.through or (have.stopped and not self.seq.stopped):
                have.played = len(self._seq_stored)
                self.seq = have

    def _show_record(self, rec: SequentialRecord) -> None:
        self.metrics.set_sequential(len(rec.open_pairs()), rec.expected_hands())
        last = rec.last_look()
        if last is not None:
            self.log.info(
                "sequential look",
                through=rec.through,
                open=rec.open_pairs(),
                line=rec.status_line(),
                stop=rec.stop["reason"] if rec.stop else "",
            )

    def _on_stop(self) -> None:
        """The decision is made: start no more hands (those in play finish and are stored,
        past the stop); the shard workers stop their tables."""
        assert self.seq is not None and self.seq.stop is not None
        if self._decided:
            return
        self._decided = True
        self.say(self.seq.status_line())
        if self._pending is not None:
            self._pending.clear()
        for w in self.procs:
            w.terminate()

    async def _looks_now(self) -> None:
        """Take every due look and wait for it (the start of a resumed run, the end of play)."""
        if self._seq_task is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await self._seq_task
        if self.seq is not None:
            self.seq.played = len(self._seq_stored)
        if self.seq is not None and not self.seq.stopped and self._looks_due():
            self._seq_task = asyncio.get_running_loop().create_task(self._take_looks())
            await self._seq_task

    def _open_record(self, full_plan: list[schedule.HandSpec]) -> None:
        """The sequential test's record: the store's (a resumed run, another shard's) or a new
        one."""
        self._seq_ids = [h.hand_id for h in full_plan]
        self._seq_index = {h: k for k, h in enumerate(self._seq_ids)}
        raw = self.store.meta().get(META_KEY)
        if raw is None:
            self.seq = SequentialRecord.new(self.config, full_plan)
            return
        try:
            self.seq = SequentialRecord.from_dict(raw)
        except ValueError as exc:
            if "earlier version" not in str(exc):
                raise RunnerError(
                    f"{self.store.location}: the stored sequential decision is unreadable "
                    f"({exc}); `uno-arena tournament verify` re-derives it from the hands"[:400]
                ) from exc
            # a record this version cannot continue (ValueError's text says what to do)
            raise RunnerError(f"{self.store.location}: {exc}"[:400]) from exc
        except (KeyError, TypeError) as exc:
            raise RunnerError(
                f"{self.store.location}: the stored sequential decision is unreadable ({exc}); "
                "`uno-arena tournament verify` re-derives it from the hands"[:400]
            ) from exc
        if self.seq.plan_hands != len(full_plan):
            raise RunnerError(
                f"{self.store.location}: the stored sequential decision is of a plan of "
                f"{self.seq.plan_hands} hands, the configuration plans {len(full_plan)}"
            )
        decided = (self.seq.state is not None and self.seq.state.settled_at is not None) or (
            self.seq.newversion is not None and self.seq.newversion.decided_at is not None
        )
        if decided and self.seq.stop is None:  # written together: the stop was removed
            raise RunnerError(
                f"{self.store.location}: the stored sequential decision has decided but has no "
                "stop (it was edited; a resume would wait for ever); `uno-arena tournament "
                "verify` re-derives it from the hands"
            )

    def _finish_sequential(self, total: int) -> int:
        """The end of a run its sequential decision stopped: the stop line and the reports."""
        assert self.seq is not None and self.seq.stop is not None
        stop = int(self.seq.stop["hands"])
        past = sum(1 for h in self._seq_ids[stop:] if h in self._seq_stored)
        self.log.info(
            "run stopped by its sequential decision",
            reason=self.seq.stop["reason"],
            hands=stop,
            stored=total,
            past_stop=past,
        )
        extra = f" ({past} more in play at the stop are stored, past it)" if past else ""
        self.say(f"finished: {count(total, 'hand')} in {self.out}{extra}")
        report_guard.write_reports(  # a failure is one line and the log's traceback
            self.out,
            self.log,
            lambda: report.write_all(
                self.out, self.store, self.config, self.tid, stream=self.stream, planned=stop
            ),
        )
        if self.stream is not None:
            self.say(self.seq.status_line())
        return 0
