"""Bot processes: launch once, log to ``<out>/logs/<bot>.log``, restart on a crash.

Each launched bot runs under a keeper process (:mod:`uno_tournament.sandbox_keeper`) in its own
session: the keeper copies the bot's stdout and stderr to its log (rotated at ``log_mb``), kills
everything the bot started when it ends, and ends it when it hits a limit. With the sandbox on
(the default, ``[sandbox]``), the keeper runs the bot inside bubblewrap, in its own cgroups, with
rlimits (:mod:`uno_tournament.sandbox`). On Linux the keeper gets SIGTERM if the runner dies
(``PR_SET_PDEATHSIG``), so a ``kill -9`` of the runner leaves no orphans. A bot that exits while
the tournament runs (a limit it hit included) is restarted after a growing delay (0.5 s, 1 s,
2 s, ... up to 10 s), at most ``max_restarts`` times; after that it is given up and its seats go
to the fallback bot. The incidents name the limit a bot hit (``memory limit 1024 MiB``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from . import sandbox, seccomp
from .config import BotSpec, SandboxSpec
from .host_relay import HostRelay

LOG_TAIL_LINES = 5
_TRACE_LINE = re.compile(r'\s*File ".+", line \d+')


def token_on_command_line(bots: Sequence[BotSpec]) -> str:
    """A warning naming the launched bots whose command carries ``{token}``, or ``""``.

    A process's command line is readable by every user of the machine (``ps aux``,
    ``/proc/PID/cmdline``), while its environment is readable only by its own user and root; with
    another bot's token anyone can take that bot's seats and see its hands. Every SDK reads
    ``UNO_ARENA_TOKEN``, which the harness always sets, so the command need not name it."""
    named = [b.name for b in bots if b.command and any("{token}" in a for a in b.command)]
    if not named:
        return ""
    shown = ", ".join(named[:5]) + (f" and {len(named) - 5} more" if len(named) > 5 else "")
    return (
        f"warning: {shown}: the command names {{token}}, so every user of this machine can read "
        'the token in its process list; drop "--token", "{token}" (the bot gets '
        "UNO_ARENA_TOKEN in its environment, which every SDK reads)"
    )


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


def printable(text: str) -> str:
    """``text`` with every character a terminal would act on (an escape sequence, a bell, a
    carriage return) spelled out as Python writes it (``\\x1b``): a bot's log is a stranger's
    text, and its lines reach the organiser's terminal in verdicts and errors."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def tail(path: Path, lines: int = LOG_TAIL_LINES) -> list[str]:
    """The last non-empty lines of a log file, made :func:`printable`."""
    try:
        with path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            f.seek(max(0, size - 16_384))
            data = f.read().decode("utf-8", "replace")
    except OSError:
        return []
    out = [printable(ln.rstrip()) for ln in data.splitlines() if ln.strip()]
    return out[-lines:]


def describe_exit(code: int) -> str:
    """``code`` as asyncio gives it (negative: a signal) or as a keeper exits (128 + N)."""
    if code > 128 and code - 128 < signal.NSIG:
        code = 128 - code
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
        hide: Sequence[str | Path] = (),
    ) -> None:
        """``hide``: folders and files the bot must not see even where a folder it may read
        holds them (the run folder, other bots' folders); the folder holding ``log_dir``'s
        ``logs`` is always hidden."""
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
        self.limit = ""
        """The limit the bot's last run hit ("" if none)."""
        run_dir = log_dir.parent if log_dir.name == "logs" else log_dir.parent.parent
        self.hide = [str(Path(h).resolve()) for h in (*hide, run_dir, log_dir)]
        if os.environ.get("HOME"):
            self.hide.append(os.environ["HOME"])
        self.status_path = log_dir / f".{spec.name}.status"
        self._relay: HostRelay | None = None
        self._cgroup: sandbox.BotCgroup | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def running(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    @property
    def sandboxed(self) -> bool:
        """Whether the bot runs in namespaces (bubblewrap) rather than as a plain process."""
        return self.spec.sandbox.enabled and bool(sandbox.probe().bwrap)

    async def start(self) -> None:
        spec = self.spec
        sb = spec.sandbox
        addr = self.addr
        if self.sandboxed:
            addr, port = sandbox.inner_addr(self.addr)
            relay = self._relay
            if relay is not None and not relay.alive:
                self._relay = None  # the relay died: the bot's restart gets a new one
                await relay.release()
            if self._relay is None:
                self._relay = await HostRelay.acquire(self.addr)
        args = [spec.expand(a, addr=addr, token=self.token) for a in spec.command]
        env = sandbox.sandbox_env(dict(os.environ)) if sb.enabled else dict(os.environ)
        env.update({k: spec.expand(v, addr=addr, token=self.token) for k, v in spec.env.items()})
        env["UNO_ARENA_ADDR"] = addr
        env["UNO_ARENA_TOKEN"] = self.token
        env["UNO_ARENA_BOT_NAME"] = spec.name
        env.setdefault("PYTHONUNBUFFERED", "1")
        self.log_path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(OSError):
            self.status_path.unlink()
        self.limit = ""
        keeper: dict[str, object] = {
            "ppid": os.getpid(),
            "cwd": spec.cwd,
            "argv": args,
            "log": str(self.log_path),
            "log_max": sb.log_mb * sandbox.MiB,
            "status": str(self.status_path),
        }
        if sb.enabled:
            prot = sandbox.probe()
            if self._cgroup is not None:
                self._cgroup.remove()
            self._cgroup = sandbox.BotCgroup(spec.name, sb) if prot.cgroups.dirs else None
            keeper.update(keeper_limits(sb, self._cgroup))
            if self.sandboxed:
                assert self._relay is not None
                keeper["argv"] = sandbox.bwrap_argv(
                    prot.bwrap, spec, args, port=port, socket_dir=self._relay.dir, hide=self.hide
                )
                keeper["seccomp"] = seccomp.program().hex()
                keeper["sockets_max"] = sandbox.CONNECTIONS_MAX  # its own network namespace
        with self.log_path.open("ab") as log:
            log.write(
                f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} starting: "
                f"{' '.join(a if a != self.token else '<token>' for a in args)}\n".encode()
            )
            log.flush()
            try:
                self.proc = await asyncio.create_subprocess_exec(
                    sys.executable,
                    "-I",
                    "-S",
                    sandbox.KEEPER,
                    json.dumps(keeper),
                    env=env,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=log,
                    close_fds=True,
                )
            except OSError as exc:
                log.write(f"--- cannot start: {exc}\n".encode())
                self.last_exit = f"cannot start: {exc.strerror or exc}"
                self.proc = None
                raise
        self._watch = asyncio.get_running_loop().create_task(self._watch_exit(self.proc))

    def _exit_reason(self, code: int) -> str:
        """Why the bot's last run ended: the limit it hit, or its exit status."""
        try:
            status = json.loads(self.status_path.read_text())
        except (OSError, ValueError):
            return describe_exit(code)
        self.limit = str(status.get("limit") or "")
        if self.limit:
            return f"{self.limit} reached, stopped"
        return describe_exit(int(status.get("code", code)))

    async def _watch_exit(self, proc: asyncio.subprocess.Process) -> None:
        code = await proc.wait()
        if self._cgroup is not None:
            self._cgroup.kill()
        if self._stopping:
            return
        self.crashes += 1
        self.last_exit = self._exit_reason(code)
        with contextlib.suppress(OSError), self.log_path.open("ab") as log:
            log.write(f"--- {time.strftime('%H:%M:%S')} {self.last_exit}\n".encode())
        self.on_incident(self.name, "crash", self.last_exit)
        if self.restarts >= self.max_restarts:
            self.given_up = True
            self.on_incident(
                self.name, "given_up", f"after {self.restarts} restarts (last: {self.last_exit})"
            )
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
        try:
            if proc is not None and proc.returncode is None:
                await stop_group(proc, grace_s)
        finally:
            if self._cgroup is not None:
                self._cgroup.remove()
                self._cgroup = None
            if self._relay is not None:
                relay, self._relay = self._relay, None
                await relay.release()

    def failure(self, why: str) -> str:
        """A one-line startup failure report with the last log lines."""
        lines = [ln for ln in tail(self.log_path, 12) if not ln.startswith("--- ")]
        shown = lines[-3:]
        # where a Python error is: its traceback's last "File ..., line N" (a syntax error's
        # last three lines are the caret, the message and the exit note: the file was lost)
        where = next((ln.strip() for ln in reversed(lines) if _TRACE_LINE.match(ln)), None)
        if where is not None and not any(where in ln for ln in shown):
            shown = [where, *shown]
        last = " | ".join(shown) if shown else "(log empty)"
        if self.token:  # the bot's own output may echo it ("unrecognized arguments: TOKEN")
            last = last.replace(self.token, "<token>")
        return (
            f"bot {self.name!r} failed to start: {why}; last log lines: {last} "
            f"(log: {self.log_path})"
        )


def keeper_limits(sb: SandboxSpec, cg: sandbox.BotCgroup | None) -> dict[str, object]:
    """The keeper's settings for the limits of one launch (a bot's run or its build): rlimits,
    the cgroups it moves the command into, the RSS watchdog where no memory cgroup can be had,
    and how its incidents name each limit."""
    rlimits = {
        "FSIZE": sb.file_size_mb * sandbox.MiB,
        "CORE": 0,
        # budgets the kernel counts per user over the whole machine, which a bot's user is
        # outside its namespace: none at all (a cap made a pool every bot shared: see
        # sandbox.SIGPENDING_MAX), so no bot can use them up for the others or signal through
        # them (an examination queued 96,365 signals, every one the machine allowed the user)
        "SIGPENDING": sandbox.SIGPENDING_MAX,
        "MSGQUEUE": 0,
        "NOFILE": sandbox.NOFILE_MAX,
    }
    if cg is None or "pids" not in cg.dirs:
        rlimits["NPROC"] = _nproc_limit(sb.pids)
    out: dict[str, object] = {"rlimits": rlimits}
    if cg is not None:
        out["cgroups"] = cg.all_dirs
        out["memory_dir"] = str(cg.dirs.get("memory", ""))
        out["pids_dir"] = str(cg.dirs.get("pids", ""))
    watchdog = cg is None or "memory" not in cg.dirs
    if watchdog:
        out["rss_max"] = sb.memory_mb * sandbox.MiB
    out["names"] = sandbox.limit_names(sb, watchdog=watchdog)
    return out


def _nproc_limit(pids: int) -> int:
    """RLIMIT_NPROC counts every process of the user, so the limit is what the user runs now
    plus the bot's share (a fallback where no pids cgroup can be had; root is not bound by it)."""
    uid = os.getuid()
    mine = 0
    for name in os.listdir("/proc"):
        if name.isdigit():
            with contextlib.suppress(OSError):
                if os.stat(f"/proc/{name}").st_uid == uid:
                    mine += 1
    return mine + pids


def announce_sandbox(specs: Sequence[SandboxSpec]) -> list[str]:
    """The lines a runner prints before it launches bots with these sandbox settings: one
    saying which protections are active, one per missing protection (naming what to install or
    enable). Raises :class:`~uno_tournament.sandbox.SandboxError` if a missing one is
    ``required``."""
    if not specs:
        return []
    missing = sandbox.check(specs)
    lines = []
    seen = set()
    for spec in specs:
        line = sandbox.summary(spec)
        if line not in seen:
            seen.add(line)
            lines.append(line)
    if len(lines) > 1:  # bots with their own limits: the defaults' line, and a count
        lines = [lines[0] + f" (and {len(lines) - 1} bots with limits of their own)"]
    return lines + [f"sandbox: missing {m}" for m in missing]
