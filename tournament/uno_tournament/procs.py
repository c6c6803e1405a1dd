"""Bot processes: launch once, log to ``<out>/logs/<bot>.log``, restart on a crash.

Each launched bot runs in its own process group with stdout and stderr appended to its log file.
On Linux the bot also gets SIGTERM if the runner dies (``PR_SET_PDEATHSIG``), so a ``kill -9`` of
the runner leaves no orphans. A bot that exits while the tournament runs is restarted after a
growing delay (0.5 s, 1 s, 2 s, ... up to 10 s), at most ``max_restarts`` times; after that it
is given up and its seats go to the fallback bot.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path

from .config import BotSpec

LOG_TAIL_LINES = 5


# Runs in the child before exec: own session, SIGTERM when the runner dies (Linux), the bot's
# working directory. Launching through it lets Python use posix_spawn (no fork() in the runner,
# whose gRPC threads dislike forks). The death signal covers only a runner that dies after it is
# armed, so a child whose runner is already gone (its parent is not the pid it was given) exits
# instead of running for ever.
_LAUNCH = (
    "import os, sys, signal\n"
    "os.setsid()\n"
    "try:\n"
    "    import ctypes\n"
    "    ctypes.CDLL('libc.so.6').prctl(1, signal.SIGTERM)\n"
    "except Exception:\n"
    "    pass\n"
    "if os.getppid() != int(sys.argv[1]):\n"
    "    sys.exit(1)\n"
    "os.chdir(sys.argv[2])\n"
    "try:\n"
    "    os.execvp(sys.argv[3], sys.argv[3:])\n"
    "except OSError as e:\n"
    "    print(f'cannot start {sys.argv[3]}: {e.strerror}', file=sys.stderr)\n"
    "    sys.exit(127)\n"
)


def launcher(cwd: str) -> list[str]:
    """The command line that runs ``_LAUNCH`` in ``cwd``; the program and its arguments follow."""
    return [sys.executable, "-I", "-S", "-c", _LAUNCH, str(os.getpid()), cwd]


def tail(path: Path, lines: int = LOG_TAIL_LINES) -> list[str]:
    """The last non-empty lines of a log file."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 16_384))
            data = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    out = [ln.rstrip() for ln in data.splitlines() if ln.strip()]
    return out[-lines:]


def describe_exit(code: int) -> str:
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with status {code}"


async def stop_group(proc: asyncio.subprocess.Process, grace_s: float) -> None:
    """SIGTERM to the process group the child leads, SIGKILL after ``grace_s`` seconds."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), grace_s)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await proc.wait()


class BotProcess:
    """One launched bot."""

    def __init__(
        self,
        spec: BotSpec,
        token: str,
        addr: str,
        log_dir: Path,
        *,
        max_restarts: int,
        on_incident: Callable[[str, str, str], None],
    ) -> None:
        self.spec = spec
        self.token = token
        self.addr = addr
        self.log_path = log_dir / f"{spec.name}.log"
        self.max_restarts = max_restarts
        self.on_incident = on_incident
        self.proc: asyncio.subprocess.Process | None = None
        self.restarts = 0
        self.crashes = 0
        self.given_up = False
        self.last_exit: str = ""
        self._stopping = False
        self._watch: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    async def start(self) -> None:
        spec = self.spec
        args = [spec.expand(a, addr=self.addr, token=self.token) for a in spec.command]
        env = dict(os.environ)
        env.update(
            {k: spec.expand(v, addr=self.addr, token=self.token) for k, v in spec.env.items()}
        )
        env["UNO_ARENA_ADDR"] = self.addr
        env["UNO_ARENA_TOKEN"] = self.token
        env["UNO_ARENA_BOT_NAME"] = spec.name
        env.setdefault("PYTHONUNBUFFERED", "1")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with self.log_path.open("ab") as log:
            log.write(
                f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting: "
                f"{' '.join(a if a != self.token else '<token>' for a in args)}\n".encode()
            )
            log.flush()
            try:
                self.proc = await asyncio.create_subprocess_exec(
                    *launcher(spec.cwd),
                    *args,
                    env=env,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=log,
                    stderr=log,
                    close_fds=False,
                )
            except OSError as exc:
                log.write(f"--- cannot start: {exc}\n".encode())
                self.last_exit = f"cannot start: {exc.strerror or exc}"
                self.proc = None
                raise
        self._watch = asyncio.get_running_loop().create_task(self._watch_exit(self.proc))

    async def _watch_exit(self, proc: asyncio.subprocess.Process) -> None:
        code = await proc.wait()
        if self._stopping:
            return
        self.crashes += 1
        self.last_exit = describe_exit(code)
        with contextlib.suppress(OSError), self.log_path.open("ab") as log:
            log.write(f"--- {time.strftime('%H:%M:%S')} {self.last_exit}\n".encode())
        self.on_incident(self.name, "crash", self.last_exit)
        if self.restarts >= self.max_restarts:
            self.given_up = True
            self.on_incident(self.name, "given_up", f"after {self.restarts} restarts")
            return
        delay = min(10.0, 0.5 * 2**self.restarts)
        self.restarts += 1
        await asyncio.sleep(delay)
        if self._stopping:
            return
        try:
            await self.start()
            self.on_incident(self.name, "restart", f"restart {self.restarts}")
        except OSError as exc:
            self.given_up = True
            self.on_incident(self.name, "given_up", f"cannot restart: {exc}")

    async def stop(self, grace_s: float = 3.0) -> None:
        self._stopping = True
        if self._watch is not None and not self._watch.done():
            self._watch.cancel()
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        await stop_group(proc, grace_s)

    def failure(self, why: str) -> str:
        """A one-line startup failure report with the last log lines."""
        lines = tail(self.log_path)
        last = " | ".join(lines[-3:]) if lines else "(log empty)"
        return (
            f"bot {self.name!r} failed to start: {why}; last log lines: {last} "
            f"(log: {self.log_path})"
        )
