"""A shard worker of ``uno-arena tournament run CONFIG --shards N``.

The runner starts ``python -m uno_tournament.worker`` once per shard, in its own session (see
:class:`uno_tournament.shard.WorkerProcess`). The worker reads its job, one JSON line on stdin
(the configuration, the tournament id, its shard, the ids of the hands to play, where to log),
starts its own game server (``uno-arena serve --port 0``) and its own copies of the bots those
hands seat, plays them, and writes one JSON line per message to stdout:

* ``{"type": "serving", "addr": ..., "metrics_url": ...}`` once its server serves;
* ``{"type": "connected"}`` once its bots are connected;
* ``{"type": "hand", "hand": {...}}`` for each finished hand, replay included (its events
  already converted to JSON here, so that work is spread over the shards);
* ``{"type": "incident", "bot": ..., "kind": ..., "detail": ...}``, ``{"type": "retry"}``;
* ``{"type": "error", "message": ...}`` before it exits on a fatal error, ``{"type": "done"}``.

The runner stores the hands (it stays the store's only writer). A worker dies with the runner
(SIGTERM through ``PR_SET_PDEATHSIG``) and stops its tables, server and bots on SIGTERM; hands in
play are not sent and are played again on a resume.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import sys
import threading
from collections import deque
from pathlib import Path
from typing import IO, Any

from prometheus_client import generate_latest, start_http_server

from .config import TournamentConfig
from .eventjson import replay_json
from .player import Player, RunnerError
from .progress import Progress
from .store import HandRecord, hand_to_json


class ShardWorker(Player):
    """A :class:`~uno_tournament.player.Player` whose finished hands go to stdout."""

    def __init__(self, job: dict[str, Any], out: IO[bytes]) -> None:
        config = TournamentConfig.from_dict(job["config"])
        index, count = job["shard"]
        super().__init__(
            Path(job["out"]),
            config,
            str(job["tournament_id"]),
            progress=False,
            stream=sys.stderr,
            host=str(job.get("host", "127.0.0.1")),
            port=int(job.get("port", 0)),
            advertise=str(job.get("advertise", "")),
            shard_name=f"{index}/{count}",
            log_dir=Path(job["log_dir"]),
        )
        self.hand_ids: list[str] = list(job["hands"])
        self.given_up.update(job.get("given_up") or {})
        self.serve_metrics = bool(job.get("metrics"))
        self._out = out
        self._out_lock = threading.Lock()
        self.sequential_store = str(job.get("sequential_store") or "")
        """A sequential run: the store whose recorded decision says how far this shard may
        play (the runner writes it; :meth:`_gate`)."""
        self._seq_pos: dict[str, int] = {}
        self._seq_store: Any = None
        self._seq_every = 1
        self._seq_blocks: list[list[tuple[str, ...]]] = []
        """An adaptive run's recorded block tables, as last read."""

    def send(self, msg: dict[str, Any]) -> None:
        line = json.dumps(msg, separators=(",", ":")).encode() + b"\n"
        with self._out_lock:
            try:
                self._out.write(line)
                self._out.flush()
            except (BrokenPipeError, ValueError):  # the runner is gone: stop
                self.stop_requested = True

    def _emit(self, rec: HandRecord) -> None:
        """On the writer thread: the replay's canonical JSON (made here, once; the runner
        stores it as it is), the hand to the runner."""
        rec.replay_raw = rec.replay_raw or replay_json(rec.replay)
        self.send({"type": "hand", "hand": hand_to_json(rec)})

    async def _record(self, rec: HandRecord) -> None:
        await asyncio.get_running_loop().run_in_executor(self._writer, self._emit, rec)
        assert self.progress is not None
        self.progress.add(rec.moves)

    def _note_incident(self, bot: str, kind: str, detail: str) -> None:
        self.send({"type": "incident", "bot": bot, "kind": kind, "detail": detail})

    def _retry(self, *, count: bool = True) -> None:
        super()._retry(count=count)
        self.send({"type": "retry"})

    def _metrics_url(self) -> str:
        if not self.serve_metrics:
            return ""
        httpd, _ = start_http_server(0, addr="127.0.0.1", registry=self._page())
        return f"http://127.0.0.1:{httpd.server_port}/metrics"

    def _page(self) -> Any:
        from .metrics import Registries
        from .shard import RemoteMetrics

        collectors: list[Any] = [self.metrics.registry]
        if self.shard is not None and self.shard.server is not None:
            collectors.append(RemoteMetrics(self.shard.server.metrics_url))
        return Registries(collectors)

    async def _send_final_metrics(self) -> None:
        """This shard's final metrics page (its series and its server's), before the server
        stops: the runner serves it from then on, so a last scrape counts every hand."""
        if not self.serve_metrics:
            return
        page = self._page()
        with contextlib.suppress(Exception):
            text = await asyncio.get_running_loop().run_in_executor(
                None, lambda: generate_latest(page).decode()
            )
            self.send({"type": "metrics", "text": text})

    async def run(self) -> int:
        plan = {h.hand_id: h for h in self.config.plan(self.tid)}
        pending = deque(plan[h] for h in self.hand_ids if h in plan)
        self.needed = {b for h in pending for b in h.bots}
        if any(not h.bots for h in pending):  # adaptive blocks not chosen yet: any bot may play
            self.needed = {b.name for b in self.config.bots}
        self.progress = Progress(planned=len(pending), done=0)
        self.log.info("shard started", to_play=len(pending), log_dir=str(self.log_dir))
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGINT, signal.SIGTERM):
            with contextlib.suppress(NotImplementedError, RuntimeError):
                loop.add_signal_handler(sig, self._stop)
        tasks: list[asyncio.Task[None]] = [loop.create_task(self.lag.run())]
        try:
            self.shard = await self._start_shard()
            self.send(
                {"type": "serving", "addr": self.public_addr, "metrics_url": self._metrics_url()}
            )
            import grpc

            from uno_server.gen.uno.v1 import admin_pb2_grpc

            self.channel = grpc.aio.insecure_channel(
                self.shard.addr,
                options=[
                    ("grpc.max_receive_message_length", 64 * 1024 * 1024),
                    ("grpc.keepalive_time_ms", 20_000),
                    ("grpc.max_reconnect_backoff_ms", 5_000),
                ],
            )
            self.admin = admin_pb2_grpc.AdminServiceStub(self.channel)  # type: ignore[no-untyped-call]
            if self.shard.server is not None:
                tasks.append(loop.create_task(self._watch_server(self.shard.server)))
            await self._launch_bots(self.shard)
            if self.shard.server is not None:
                self.shard.server.mark()
            self.send({"type": "connected"})
            self.lag.reset()
            self._workers = [
                loop.create_task(self._worker(pending))
                for _ in range(min(self.config.concurrency, len(pending)))
            ]
            await asyncio.gather(*self._workers, return_exceptions=True)
        except RunnerError as exc:
            self._fail(exc)
        finally:
            for t in tasks:
                t.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await t
            if self.fatal is None:
                self.log.info(
                    "shard stopped" if pending else "shard finished", to_play=len(pending)
                )
            await self._send_final_metrics()
            await self._close()
        if self.shard is not None and self.shard.server is not None:
            self.send({"type": "stats", "server_cpu_s": self.shard.server.play_cpu_s})
        if self.fatal is not None:
            self.send({"type": "error", "message": str(self.fatal)})
            return 2
        if not pending:
            self.send({"type": "done"})
        return 0 if not pending else 130

    async def _worker(self, queue: deque[Any]) -> None:
        """A table; in a sequential run, the next hand only once the recorded decision allows
        it (it belongs to the next looks), and none after the stop."""
        if not self.sequential_store:
            await super()._worker(queue)
            return
        while queue and not self.stop_requested and self.fatal is None:
            spec = queue[0]
            if not await self._gate(spec) or not queue:
                return
            if queue[0] is not spec:  # another table took it meanwhile: check the next one
                continue
            queue.popleft()
            if not spec.bots:  # an adaptive block: its tables are in the record now
                from .settled_run import resolve

                spec = resolve(spec, self._seq_blocks)
            await super()._worker(deque([spec]))

    async def _gate(self, spec: Any) -> bool:
        from .sequential_runner import LOOKAHEAD_LOOKS
        from .settled_run import META_KEY, SequentialRecord

        loop = asyncio.get_running_loop()
        if not self._seq_pos:
            plan = self.config.plan(self.tid)
            self._seq_pos = {h.hand_id: k for k, h in enumerate(plan)}
            self._seq_every = SequentialRecord.new(self.config, plan).look_every
        k = self._seq_pos.get(spec.hand_id, 0)
        while not self.stop_requested:
            raw = await loop.run_in_executor(self._writer, self._read_decision, META_KEY)
            if raw is None:
                through, every, stopped = 0, self._seq_every, False  # no look yet
                chosen = bool(spec.bots)  # an adaptive run's block 0 is in the plan
            else:
                rec = SequentialRecord.from_dict(raw)
                through, every, stopped = rec.through, rec.look_every, rec.stopped
                self._seq_blocks = rec.tables() or []
                chosen = bool(spec.bots) or spec.block < len(self._seq_blocks)
            if stopped:
                return False
            if chosen and k < through + LOOKAHEAD_LOOKS * every:
                return True
            await asyncio.sleep(0.5)
        return False

    def _read_decision(self, key: str) -> Any:
        """On the writer thread: the recorded decision (None before the first)."""
        if self._seq_store is None:
            from .pgstore import PgStore, is_url
            from .store import Store

            where = self.sequential_store
            self._seq_store = (
                PgStore.connect(where) if is_url(where) else Store.open(Path(where), readonly=True)
            )
        return self._seq_store.meta().get(key)

    def _stop(self) -> None:
        if self.stop_requested:
            os._exit(130)
        self.stop_requested = True
        for w in self._workers:
            w.cancel()

    async def _close(self) -> None:
        if self.shard is not None:
            await asyncio.gather(
                *(p.stop() for p in self.shard.bots.values()), return_exceptions=True
            )
        if self.channel is not None:
            await self.channel.close()
        if self.shard is not None and self.shard.server is not None:
            await self.shard.server.stop()
        self._writer.shutdown(wait=True)
        self.log.close()


def main() -> int:
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    out = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray prints go to the log
    line = sys.stdin.readline()
    try:
        job = json.loads(line)
    except ValueError:
        print("uno_tournament.worker: no job on stdin", file=sys.stderr)
        return 2
    worker = ShardWorker(job, out)
    return asyncio.run(worker.run())


if __name__ == "__main__":
    raise SystemExit(main())
