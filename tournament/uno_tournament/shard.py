"""A shard: one game server in its own process and the bot processes that play on it.

The runner is a client of the service. Without ``--server`` it starts ``uno-arena serve --port 0``
as a child process (own session, SIGTERM if the runner dies) and talks to it over gRPC like any
other client, so nothing the runner does (storing hands, refitting the ratings, writing reports)
can stall the tables or charge a bot for the harness's pauses: the tables' event loop is in
another process.

A :class:`Shard` is an address, an admin token, and the processes it owns (its server, if the
runner started one, and its launched bots). With ``--shards N`` the runner starts N
:class:`WorkerProcess` es, each its own process group that plays its share of the schedule on its
own shard and sends every finished hand back to the runner (:mod:`uno_tournament.worker`); with
``--shard I/N`` one process plays shard I into a shared store.

Metrics: :class:`Relabeled` adds ``shard`` (and ``tournament``, unless a series has it already)
to every series a process exports or re-exposes, so the series of N shards never collide on one
/metrics page or in one Prometheus.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import os
import re
import secrets
import shutil
import signal
import sys
import tempfile
import urllib.request
from collections.abc import AsyncIterator, Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families
from prometheus_client.samples import Sample

from .procs import BotProcess, launcher, stop_group, tail

_SERVING = re.compile(r"serving on (\S+):(\d+)")
_METRICS = re.compile(r"metrics on http://(\S+):(\d+)/metrics")


def json_line(event: str, level: str = "info", **fields: str) -> bytes:
    """One log line in the server's JSON format (structlog's JSONRenderer: ``event``,
    ``level``, ``timestamp`` in UTC ISO 8601)."""
    ts = datetime.datetime.now(datetime.UTC).isoformat().replace("+00:00", "Z")
    rec = {"event": event, "level": level, "timestamp": ts, **fields}
    return (json.dumps(rec) + "\n").encode()


class ServerProcessError(Exception):
    """The server process could not start, or stopped."""


class ServerProcess:
    """``uno-arena serve`` in a child process, on a free port of 127.0.0.1."""

    def __init__(
        self,
        log_dir: Path,
        tokens: Mapping[str, str],
        *,
        admin_token: str | None = None,
        metrics: bool = True,
        drain_timeout_s: float = 0.5,
        host: str = "127.0.0.1",
        port: int = 0,
        unix_socket: bool = False,
    ) -> None:
        self.log_path = log_dir / "server.log"
        self.socket_dir = ""
        """With ``unix_socket``: a private folder (mode 0700) whose ``server.sock`` the server
        also listens on, so that sandboxed bots reach it without a relay on this side."""
        if unix_socket:
            self.socket_dir = tempfile.mkdtemp(prefix="uno-arena-sock-")
            os.chmod(self.socket_dir, 0o700)
        self.host = host
        self.port = port
        self.tokens = dict(tokens)
        self.admin_token = admin_token or secrets.token_hex(24)
        self.metrics = metrics
        self.drain_timeout_s = drain_timeout_s
        self.proc: asyncio.subprocess.Process | None = None
        self.addr = ""
        self.metrics_url = ""
        self._stopping = False
        self.cpu_s = 0.0
        """CPU seconds (user + system) the server process used, read when it is stopped."""
        self.cpu_base = 0.0
        """Its CPU seconds when the tables started (:meth:`mark`): startup is not play."""

    def mark(self) -> None:
        self.cpu_base = self.read_cpu()

    @property
    def play_cpu_s(self) -> float:
        """CPU seconds the server spent from :meth:`mark` to its stop."""
        return max(0.0, self.cpu_s - self.cpu_base)

    def read_cpu(self) -> float:
        """The server's CPU seconds so far (Linux /proc; 0 elsewhere)."""
        if self.proc is None:
            return self.cpu_s
        try:
            fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
            self.cpu_s = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, IndexError):
            pass
        return self.cpu_s

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    def _config_file(self) -> Path:
        """The tokens go to the server in a file only the user can read (not on its command
        line, where ``ps`` shows them); it is removed once the server has read it."""
        lines = [
            "[server]",
            f"admin_token = {json.dumps(self.admin_token)}",
            f"drain_timeout_s = {self.drain_timeout_s!r}",
            "[bots]",
        ]
        lines += [f"{json.dumps(name)} = {json.dumps(tok)}" for name, tok in self.tokens.items()]
        path = self.log_path.parent / f".server-{os.getpid()}-{secrets.token_hex(4)}.toml"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path

    async def start(self, timeout_s: float = 60.0) -> str:
        """Start the server; returns ``host:port`` once it serves."""
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        conf = self._config_file()
        args = [sys.executable, "-m", "uno_server.cli", "serve", "--config", str(conf)]
        args += ["--host", self.host, "--port", str(self.port), "--log-level", "warning"]
        if self.metrics:
            args += ["--metrics-port", "0"]
        if self.socket_dir:
            args += ["--unix-socket", os.path.join(self.socket_dir, "server.sock")]
        env = dict(os.environ)
        env.setdefault("GRPC_VERBOSITY", "ERROR")
        env["PYTHONUNBUFFERED"] = "1"
        try:
            with self.log_path.open("ab") as log:
                log.write(json_line("starting the server", args=" ".join(args[3:])))
                log.flush()
                self.proc = await asyncio.create_subprocess_exec(
                    *launcher(os.getcwd()),
                    *args,
                    env=env,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=log,
                    close_fds=False,
                )
            await asyncio.wait_for(self._read_banner(), timeout_s)
        except TimeoutError as exc:
            await self.stop()
            raise ServerProcessError(self._why(f"did not serve within {timeout_s:g} s")) from exc
        finally:
            with contextlib.suppress(OSError):
                conf.unlink()
        return self.addr

    async def _read_banner(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout
        while True:
            line = (await out.readline()).decode(errors="replace")
            if not line:
                code = await self.proc.wait()
                raise ServerProcessError(self._why(f"exited with status {code}"))
            if m := _SERVING.search(line):
                self.addr = f"{m.group(1)}:{m.group(2)}"
            if m := _METRICS.search(line):
                self.metrics_url = f"http://{m.group(1)}:{m.group(2)}/metrics"
            if self.addr and (self.metrics_url or not self.metrics):
                break
        asyncio.get_running_loop().create_task(self._drain(out))

    async def _drain(self, out: asyncio.StreamReader) -> None:
        """Copy the server's later stdout lines (its stop messages) to its log, as JSON lines
        like the server's own log lines."""
        with contextlib.suppress(Exception):
            while line := await out.readline():
                text = line.decode(errors="replace").strip()
                if text:
                    with self.log_path.open("ab") as log:
                        log.write(json_line(text.removeprefix("uno-arena: "), logger="stdout"))

    def _why(self, what: str) -> str:
        lines: list[str] = []
        for line in tail(self.log_path, 3):  # a sentence the log holds twice is shown once
            if not any(line in seen or seen in line for seen in lines):
                lines.append(line)
        last = " | ".join(lines) if lines else "(log empty)"
        return f"the game server {what}; last log lines: {last} (log: {self.log_path})"

    async def wait(self) -> int:
        assert self.proc is not None
        return await self.proc.wait()

    def exit_reason(self) -> str:
        code = self.proc.returncode if self.proc is not None else None
        return self._why(f"exited with status {code}")

    async def stop(self, grace_s: float = 5.0) -> None:
        self._stopping = True
        proc = self.proc
        if proc is not None and proc.returncode is None:
            self.read_cpu()
            await stop_group(proc, grace_s)
        if self.socket_dir:
            shutil.rmtree(self.socket_dir, ignore_errors=True)


class RemoteMetrics:
    """A collector that re-exposes another process's /metrics page (the game server's), so the
    runner's one metrics port serves both, as before the server moved out of process."""

    def __init__(self, url: str, timeout_s: float = 2.0) -> None:
        self.url = url
        self.timeout_s = timeout_s
        self.frozen: str | None = None

    def freeze(self, text: str) -> None:
        """Serve ``text`` from now on (a shard worker's final page, sent before it exits, so
        that the runner's last scrapes still count every hand of the shard)."""
        self.frozen = text

    def collect(self) -> Iterator[Metric]:
        if self.frozen is not None:
            yield from text_string_to_metric_families(self.frozen)
            return
        if not self.url:
            return
        try:
            with urllib.request.urlopen(self.url, timeout=self.timeout_s) as resp:
                text = resp.read().decode()
        except OSError:
            return
        yield from text_string_to_metric_families(text)


@dataclass
class Shard:
    """Where hands are played: a server address and admin token, and the processes the runner
    owns there (its server process, if it started one, and its launched bots)."""

    addr: str
    admin_token: str
    server: ServerProcess | None = None
    bots: dict[str, BotProcess] = field(default_factory=dict)

    async def stop(self) -> None:
        await asyncio.gather(*(p.stop() for p in self.bots.values()), return_exceptions=True)
        if self.server is not None:
            await self.server.stop()


class _Collector(Protocol):
    def collect(self) -> Iterable[Metric]: ...


class Relabeled:
    """Another collector's series with labels added: ``labels`` are set on every sample (a
    label the series already has wins), so that N shards' series stay apart. ``only``, if
    given, keeps the ``uno_tournament_*`` families named there (a shard worker's own runner
    series) and every other family (its game server's ``uno_*``)."""

    def __init__(
        self,
        inner: _Collector,
        labels: Mapping[str, str],
        only: Collection[str] | None = None,
    ) -> None:
        self.inner = inner
        self.labels = dict(labels)
        self.only = only

    def collect(self) -> Iterator[Metric]:
        for fam in self.inner.collect():
            if (
                self.only is not None
                and fam.name.startswith("uno_tournament_")
                and fam.name not in self.only
            ):
                continue
            out = Metric(fam.name, fam.documentation, fam.type, fam.unit)
            for smp in fam.samples:
                labels = {**self.labels, **smp.labels}
                out.samples.append(Sample(smp.name, labels, smp.value, smp.timestamp, smp.exemplar))
            yield out


WORKER_SERIES = (
    "uno_tournament_hand_retries",
    "uno_tournament_bot_crashes",
    "uno_tournament_event_loop_lag_seconds",
    "uno_tournament_event_loop_lag_max_seconds",
)
"""The runner series a shard worker owns (the runner keeps the ones its store decides: progress,
ratings, hands and wins per bot); see :class:`Relabeled`."""


class WorkerProcess:
    """One shard worker of ``--shards N``: ``python -m uno_tournament.worker`` in its own
    session (SIGTERM when the runner dies), its job as one JSON line on stdin, its messages as
    JSON lines on stdout, its log in ``logs/shard-I/worker.log``."""

    def __init__(self, index: int, count: int, log_dir: Path) -> None:
        self.index = index
        self.count = count
        self.log_dir = log_dir
        self.log_path = log_dir / "worker.log"
        self.proc: asyncio.subprocess.Process | None = None
        self.addr = ""
        self.metrics_url = ""
        self.metrics: RemoteMetrics | None = None
        self.state = "starting"
        self.planned = 0
        self.done = 0
        self.server_cpu_s = 0.0

    @property
    def name(self) -> str:
        return f"{self.index}/{self.count}"

    async def start(self, job: dict[str, Any]) -> None:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        env = dict(os.environ)
        env.setdefault("GRPC_VERBOSITY", "ERROR")
        env["PYTHONUNBUFFERED"] = "1"
        with self.log_path.open("ab") as log:
            log.write(json_line("starting the shard worker", shard=self.name))
            log.flush()
            self.proc = await asyncio.create_subprocess_exec(
                *launcher(os.getcwd()),
                sys.executable,
                "-m",
                "uno_tournament.worker",
                env=env,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                close_fds=False,
                limit=256 * 1024 * 1024,  # one line per hand, replay included
            )
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(job).encode() + b"\n")
        await self.proc.stdin.drain()

    async def messages(self) -> AsyncIterator[dict[str, Any]]:
        """The worker's messages until it exits."""
        assert self.proc is not None and self.proc.stdout is not None
        out = self.proc.stdout
        while line := await out.readline():
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict):
                yield msg

    def why(self, what: str) -> str:
        lines: list[str] = []
        for line in tail(self.log_path, 3):  # a sentence the log holds twice is shown once
            if not any(line in seen or seen in line for seen in lines):
                lines.append(line)
        last = " | ".join(lines) if lines else "(log empty)"
        return f"shard {self.name}: {what}; last log lines: {last} (log: {self.log_path})"

    def terminate(self) -> None:
        """Ask the worker to stop (it stops its tables, server and bots, then exits)."""
        if self.proc is not None and self.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.proc.pid, signal.SIGTERM)

    async def stop(self, grace_s: float = 15.0) -> None:
        proc = self.proc
        if proc is None:
            return
        if proc.returncode is None:
            self.terminate()
            try:
                await asyncio.wait_for(proc.wait(), grace_s)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                await proc.wait()
