"""The keeper: the small process between the runner and one launched bot.

Run as ``python -I -S sandbox_keeper.py JSON`` (standard library only; it must start fast and
must not import the project). It

- starts its own session and gets SIGTERM when the runner dies (``PR_SET_PDEATHSIG``); a keeper
  whose runner is already gone exits at once;
- becomes a child subreaper, so that every process the bot starts, ``setsid`` children included,
  stays its descendant and is killed when the bot ends;
- starts the bot's command (normally ``bwrap ...``: see :mod:`uno_tournament.sandbox`) after
  moving it into the bot's cgroups and setting its rlimits, giving bwrap the seccomp filter
  (``seccomp``: :mod:`uno_tournament.seccomp`) on a file descriptor;
- copies the bot's stdout and stderr to its log, rotating the log at ``log_max`` bytes (the
  previous part is kept as ``<log>.1``, older output is dropped, and the cut is noted);
- ends the bot when it hits a limit: the memory cgroup's OOM kill, the pids cgroup's limit,
  (without a memory cgroup) the RSS watchdog, or its connections (``sockets_max`` connected
  sockets in its own network namespace: the game server's connections are shared by every
  bot); and names that limit in a status file the runner reads
  (``{"limit": "memory limit 512 MiB", "code": ...}``).

Its exit status is the bot's (128 + N for a bot killed by signal N).
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import json
import os
import select
import signal
import sys
import time
from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
POLL_S = 0.25
F_SETPIPE_SZ = 1031
PIPE_BYTES = 2**20


def _prctl(option: int, value: int) -> None:
    with contextlib.suppress(Exception):
        ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0)


def _read(path: str) -> str:
    try:
        with open(path) as f:
            return f.read()
    except OSError:
        return ""


def _counter(text: str, key: str) -> int:
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key:
            with contextlib.suppress(ValueError):
                return int(parts[1])
    return 0


def _children() -> dict[int, list[int]]:
    """Parent pid -> child pids, for every process this keeper can see."""
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        stat = _read(f"/proc/{name}/stat")
        if not stat:
            continue
        with contextlib.suppress(ValueError, IndexError):
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            kids.setdefault(ppid, []).append(int(name))
    return kids


def descendants(root: int) -> list[int]:
    kids = _children()
    out: list[int] = []
    todo = list(kids.get(root, []))
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(kids.get(pid, []))
    return out


def _netns(pid: int | str) -> str:
    try:
        return os.readlink(f"/proc/{pid}/ns/net")
    except OSError:
        return ""


def connected_sockets(pid: int) -> int:
    """Connected Unix sockets in the network namespace of ``pid`` (the bot's own: every
    connection it makes to the game server, straight to the server's socket or through its
    relay, is one there), or -1 when that cannot be read."""
    try:
        with open(f"/proc/{pid}/net/unix") as f:
            lines = f.readlines()[1:]
    except OSError:
        return -1
    # Num RefCount Protocol Flags Type St Inode [Path]: St 03 is connected
    return sum(1 for ln in lines if ln.split()[5:6] == ["03"])


def _rss_bytes(pids: list[int]) -> int:
    page = os.sysconf("SC_PAGE_SIZE")
    total = 0
    for pid in pids:
        fields = _read(f"/proc/{pid}/statm").split()
        if len(fields) > 1:
            total += int(fields[1]) * page
    return total


class Log:
    """The bot's log, rotated at ``limit`` bytes."""

    def __init__(self, path: str, limit: int) -> None:
        self.path = path
        self.limit = limit
        self.f = open(path, "ab")  # noqa: SIM115 - kept open for the bot's life
        self.size = self.f.tell()
        self.rotations = 0

    def note(self, text: str) -> None:
        self.write(f"--- {time.strftime('%H:%M:%S')} {text}\n".encode())

    def write(self, data: bytes) -> None:
        while data:
            room = self.limit - self.size
            if room <= 0:
                self._rotate()
                continue
            part, data = data[:room], data[room:]
            self.f.write(part)
            self.size += len(part)
        self.f.flush()

    def _rotate(self) -> None:
        self.f.close()
        os.replace(self.path, self.path + ".1")
        self.rotations += 1
        self.f = open(self.path, "ab")  # noqa: SIM115
        self.size = 0
        mib = self.limit / 2**20
        self.write(
            f"--- {time.strftime('%H:%M:%S')} log cut: it reached {mib:g} MiB (rotation "
            f"{self.rotations}); the previous {mib:g} MiB are in {os.path.basename(self.path)}.1, "
            "older output was dropped\n".encode()
        )


def _filter_fd(program: bytes) -> int:
    """A pipe's read end holding ``program`` (the seccomp filter, a few hundred bytes: within a
    pipe's buffer), inherited by the command."""
    r, w = os.pipe()
    os.write(w, program)
    os.close(w)
    os.set_inheritable(r, True)
    return r


def _start(cfg: dict[str, Any], w: int) -> int:
    pid = os.fork()
    if pid:
        return pid
    try:  # the child: into the cgroups, limits, then the command
        for d in cfg.get("cgroups", []):
            with open(os.path.join(d, "cgroup.procs"), "w") as f:
                f.write(str(os.getpid()))
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        for name, value in cfg.get("rlimits", {}).items():
            res = getattr(__import__("resource"), "RLIMIT_" + name)
            __import__("resource").setrlimit(res, (value, value))
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)
        signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
        fd = os.open(os.devnull, os.O_RDONLY)
        os.dup2(fd, 0)
        os.dup2(w, 1)
        os.dup2(w, 2)
        os.chdir(cfg["cwd"])
        argv = cfg["argv"]
        if cfg.get("seccomp"):  # bwrap reads the filter from a file descriptor it inherits
            argv = [argv[0], "--seccomp", str(_filter_fd(bytes.fromhex(cfg["seccomp"]))), *argv[1:]]
        os.execvp(argv[0], argv)
    except BaseException as exc:
        with contextlib.suppress(Exception):
            os.write(2, f"cannot start {cfg['argv'][0]}: {exc}\n".encode())
        os._exit(127)
    return 0  # not reached


class Keeper:
    def __init__(self, cfg: dict[str, Any]) -> None:
        self.cfg = cfg
        self.limit = ""
        self.stop_requested = False
        self.log = Log(cfg["log"], int(cfg.get("log_max", 10 * 2**20)))
        self.pid = 0
        self.status: int | None = None
        self.netns_pid = 0
        self.netns = ""

    def check_limits(self) -> str:
        """The limit the bot hit, or ""."""
        cfg = self.cfg
        mem = cfg.get("memory_dir")
        if mem:
            events = _read(os.path.join(mem, "memory.events")) or _read(
                os.path.join(mem, "memory.oom_control")
            )
            if _counter(events, "oom_kill") > 0:
                return str(cfg["names"]["memory"])
        pids = cfg.get("pids_dir")
        if pids and _counter(_read(os.path.join(pids, "pids.events")), "max") > 0:
            return str(cfg["names"]["pids"])
        rss_max = int(cfg.get("rss_max", 0))
        if rss_max and _rss_bytes(descendants(os.getpid())) > rss_max:
            return str(cfg["names"]["memory"])
        sockets_max = int(cfg.get("sockets_max", 0))
        if sockets_max and self._sockets() > sockets_max:
            return str(cfg["names"]["sockets"])
        return ""

    def _sockets(self) -> int:
        """The bot's connected sockets (see :func:`connected_sockets`), read from a process of
        its own network namespace (found once: bwrap's first child is in it)."""
        if self.netns_pid:
            n = connected_sockets(self.netns_pid)
            if n >= 0 and _netns(self.netns_pid) == self.netns:
                return n
            self.netns_pid = 0
        mine = _netns(os.getpid())
        for pid in descendants(os.getpid()):
            ns = _netns(pid)
            if ns and ns != mine:
                self.netns_pid, self.netns = pid, ns
                return max(0, connected_sockets(pid))
        return 0

    def kill_all(self) -> None:
        """SIGKILL every process of the bot: its process tree (subreaper: setsid children
        included) and everything in its cgroups, until none is left."""
        for _ in range(200):
            pids = set(descendants(os.getpid()))
            for d in self.cfg.get("cgroups", []):
                for line in _read(os.path.join(d, "cgroup.procs")).split():
                    with contextlib.suppress(ValueError):
                        pids.add(int(line))
            pids.discard(os.getpid())
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            self.reap()
            time.sleep(0.01)

    def reap(self) -> int | None:
        """Reap every exited child; the main child's wait status once it exited."""
        while True:
            try:
                pid, st = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return self.status
            if pid == 0:
                return self.status
            if pid == self.pid:
                self.status = st

    def run(self) -> int:
        cfg = self.cfg
        r, w = os.pipe()
        with contextlib.suppress(OSError):  # fewer, larger reads for a bot that floods
            fcntl.fcntl(r, F_SETPIPE_SZ, PIPE_BYTES)
        self.pid = _start(cfg, w)
        os.close(w)
        os.set_blocking(r, False)

        def on_term(signum: int, frame: object) -> None:
            self.stop_requested = True

        signal.signal(signal.SIGTERM, on_term)
        signal.signal(signal.SIGINT, on_term)
        status: int | None = None
        next_check = time.monotonic() + POLL_S
        open_pipe = True
        try:  # readable when the bot exits, so its end is seen at once
            exited: list[int] = [os.pidfd_open(self.pid)]
        except (OSError, AttributeError):
            exited = []
        while status is None:
            if self.stop_requested:
                self.kill_all()
            with contextlib.suppress(InterruptedError):
                ready, _, _ = select.select([r, *exited] if open_pipe else exited, [], [], POLL_S)
                if open_pipe and r in ready:
                    open_pipe = self._pump(r)
            status = self.reap()
            now = time.monotonic()
            if status is None and now >= next_check:
                next_check = now + POLL_S
                hit = self.check_limits()
                if hit:
                    self.limit = hit
                    self.log.note(f"{hit} reached: the bot is stopped")
                    self.kill_all()
        if not self.limit:
            self.limit = self.check_limits()
        self.kill_all()  # what the bot left behind (setsid children, its cgroup)
        deadline = time.monotonic() + 2.0
        while open_pipe and time.monotonic() < deadline:
            ready, _, _ = select.select([r], [], [], 0.1)
            if ready:
                open_pipe = self._pump(r)
        code = os.waitstatus_to_exitcode(status)
        if code < 0:
            code = 128 - code
        sig = code - 128 if code > 128 else 0
        if sig == signal.SIGXFSZ and not self.limit:
            self.limit = cfg["names"].get("fsize", "")
        if not self.limit and code and self.check_limits():
            self.limit = self.check_limits()
        with contextlib.suppress(OSError):
            tmp = cfg["status"] + ".tmp"
            with open(tmp, "w") as f:
                json.dump({"code": code, "limit": self.limit, "stopped": self.stop_requested}, f)
            os.replace(tmp, cfg["status"])
        return code

    def _pump(self, r: int) -> bool:
        try:
            data = os.read(r, PIPE_BYTES)
        except BlockingIOError:
            return True
        except OSError:
            return False
        if not data:
            return False
        self.log.write(data)
        return True


def main() -> int:
    cfg = json.loads(sys.argv[1])
    os.setsid()
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != int(cfg["ppid"]):
        return 1
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    return Keeper(cfg).run()


if __name__ == "__main__":
    sys.exit(main())
