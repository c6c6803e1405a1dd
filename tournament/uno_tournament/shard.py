"""A shard: one game server in its own process and the bot processes that play on it.

The runner is a client of the service. Without ``--server`` it starts ``uno-arena serve --port 0``
as a child process (own session, SIGTERM if the runner dies) and talks to it over gRPC like any
other client, so nothing the runner does (storing hands, refitting the ratings, writing reports)
can stall the tables or charge a bot for the harness's pauses: the tables' event loop is in
another process.

The boundary is drawn for more than one shard: a :class:`Shard` is an address, an admin token,
and the processes it owns (its server, if the runner started one, and its launched bots). A later
runner can start N shards, give each a share of the schedule and store every hand in the one
database, since hands are independent and stored idempotently by hand id.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import json
import os
import re
import secrets
import signal
import sys
import urllib.request
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client.metrics_core import Metric
from prometheus_client.parser import text_string_to_metric_families

from .procs import _LAUNCH, BotProcess, tail

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
    ) -> None:
        self.log_path = log_dir / "server.log"
        self.tokens = dict(tokens)
        self.admin_token = admin_token or secrets.token_hex(24)
        self.metrics = metrics
        self.drain_timeout_s = drain_timeout_s
        self.proc: asyncio.subprocess.Process | None = None
        self.addr = ""
        self.metrics_url = ""
        self._stopping = False

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
        args += ["--port", "0", "--log-level", "warning"]
        if self.metrics:
            args += ["--metrics-port", "0"]
        env = dict(os.environ)
        env.setdefault("GRPC_VERBOSITY", "ERROR")
        env["PYTHONUNBUFFERED"] = "1"
        try:
            with self.log_path.open("ab") as log:
                log.write(json_line("starting the server", args=" ".join(args[3:])))
                log.flush()
                self.proc = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-I",
                    "-S",
                    "-c",
                    _LAUNCH,
                    os.getcwd(),
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
        lines = tail(self.log_path, 3)
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
        if proc is None or proc.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(proc.wait(), grace_s)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()


class RemoteMetrics:
    """A collector that re-exposes another process's /metrics page (the game server's), so the
    runner's one metrics port serves both, as before the server moved out of process."""

    def __init__(self, url: str, timeout_s: float = 2.0) -> None:
        self.url = url
        self.timeout_s = timeout_s

    def collect(self) -> Iterator[Metric]:
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
