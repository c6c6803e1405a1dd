"""The sandbox around every bot the harness launches.

Each launched bot runs under a keeper (:mod:`uno_tournament.sandbox_keeper`), which starts
``bwrap`` (Debian's ``bubblewrap``) with:

- its own user, pid, network, ipc and uts namespaces (``--unshare-all``), as an unprivileged
  user with no capabilities, and no way to make further user namespaces;
- a file system of its own: ``/usr`` (and ``/bin``, ``/lib``...), ``/usr/local``, ``/opt``, the few
  ``/etc`` files programs read, the runner's Python, and the bot's own folder, all read-only; a
  private, size-limited ``/tmp`` (also its ``HOME``); nothing of the run folder (the results
  store, the logs, the token file), other bots' folders or the organiser's home;
- one way out: a relay inside the namespace listens on ``127.0.0.1:PORT`` (the port of the game
  server, so the bot's ``{addr}`` is unchanged) and forwards to a Unix socket bound into the
  sandbox, behind which a relay on the runner's side reaches the server (:mod:`sandbox_relay`).
  No other port and no other address can be reached.

Resources: a cgroup per bot (cgroup v2 where delegated, else the v1 ``cpu``, ``memory`` with
``memsw`` and ``pids`` controllers) for a CPU weight, an optional CPU quota, a memory limit that
counts swap and a pids limit; rlimits for the file size and core dumps; an RSS watchdog where no
memory cgroup can be had. RLIMIT_AS is never used (it breaks the JVM, Go and V8).

:func:`probe` finds what this machine allows; :func:`summary` is the one line the runner prints;
:func:`missing` lists what is not there with what to install or enable; ``uno-arena sandbox
check`` prints both.
"""

from __future__ import annotations

import atexit
import contextlib
import functools
import importlib.util
import os
import platform
import secrets
import shutil
import signal
import stat
import subprocess
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from . import seccomp
from .config import BotSpec, SandboxSpec

KEEPER = str(Path(__file__).with_name("sandbox_keeper.py"))
RELAY = str(Path(__file__).with_name("sandbox_relay.py"))
CGROUP_ROOT = Path("/sys/fs/cgroup")
SANDBOX_UID = 65534
"""The bot's user and group inside its user namespace (``nobody``)."""
INNER_SOCKET_DIR = "/run/uno-arena"
INNER_RELAY = "/run/uno-arena-relay.py"
LOCAL_SOCKET_ENV = "UNO_ARENA_LOCAL_SOCKET"
"""Names the server's socket inside the sandbox for the SDKs (uno_bot.client.LOCAL_SOCKET_ENV)."""
ETC_FILES = (
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/ssl/certs",  # not /etc/ssl: its private/ holds the machine's keys, readable there
    "/etc/ssl/openssl.cnf",
    "/etc/ca-certificates",
    "/etc/java-17-openjdk",
    "/etc/java-21-openjdk",
    "/etc/passwd",
    "/etc/group",
    "/etc/nsswitch.conf",
    "/etc/hosts",
    "/etc/localtime",
    "/etc/mime.types",
)
"""The /etc files a bot sees (read-only): what the dynamic loader, Java, Node and Python read."""
SYSTEM_DIRS = ("/usr", "/usr/local", "/opt")
TOP_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ENV_KEEP = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "JAVA_HOME", "GOMAXPROCS", "TERM")
"""The runner's environment variables a sandboxed bot gets (besides its own ``env`` and the
UNO_ARENA_* ones); nothing else of the organiser's environment goes in."""


class SandboxError(Exception):
    """A protection that ``[sandbox] required = true`` asks for is missing."""


MiB = 2**20
SIGPENDING_MAX = 0
"""RLIMIT_SIGPENDING of a confined bot or build: none. The kernel counts queued signals
(``sigqueue``, real-time signals, POSIX timers) per user over the machine, and a bot's user is
the organiser's outside its namespace; a cap of 1,024 made one pool of 1,024 that every bot
shared (an examination: one bot held 600 and another could queue 422 of the 1,021 it had had),
a channel between bots and a way to leave none to the others. With none, ordinary signals are
still delivered (without their queued details); ``sigqueue`` and ``timer_create`` answer
EAGAIN. ``RLIMIT_MSGQUEUE`` is 0 too: no POSIX message queue, counted the same way."""
CONNECTIONS_MAX = 64
"""Connected sockets a confined bot may hold at once (counted in its own network namespace,
where each connection to the game server is one; a bot needs one or two). The server's
connections are one budget for every bot: an examination's bot opened 19,700 through its 8
processes, the server's whole cap, and the other authors' bots timed out. The keeper polls the
count four times a second and stops a bot above it, naming the limit."""
NOFILE_MAX = 4096
"""RLIMIT_NOFILE of a confined bot or build: open files per process. The organiser's limit
(20,000 here) times the pids limit let one bot hold 5 million files, more than the machine's
``fs.file-max``; an examination's bot took 120,000 in 2.5 s."""


# ------------------------------------------------------------------------------------- probing


@dataclass
class Cgroups:
    """Where this machine lets us make cgroups: ``version`` 2 (one folder) or 1 (one per
    controller); ``dirs`` maps a controller to the folder new groups go under."""

    version: int = 0
    dirs: dict[str, Path] = field(default_factory=dict)
    memsw: bool = False
    why: dict[str, str] = field(default_factory=dict)
    """Controller -> why it is not usable."""

    def has(self, controller: str) -> bool:
        return controller in self.dirs


@dataclass
class Protections:
    bwrap: str = ""
    """bwrap's path when it runs a sandbox here, else ""."""
    bwrap_version: str = ""
    bwrap_why: str = ""
    cgroups: Cgroups = field(default_factory=Cgroups)
    socat: str = ""

    def active(self, spec: SandboxSpec) -> list[str]:
        out = []
        if not spec.enabled:
            return ["none (sandbox disabled)"]
        if self.bwrap:
            out.append(f"namespaces (bubblewrap {self.bwrap_version}: user, pid, net, ipc, uts)")
            out.append("files (own folder read-only, private /tmp and /dev/shm)")
            out.append(f"network (game server only, at most {CONNECTIONS_MAX} connections)")
            if seccomp.program():
                out.append(
                    "seccomp (no keyrings, perf events, bpf, userfaultfd, ptrace, fallocate, "
                    "file locks, inotify, fanotify, io_uring, Linux AIO, pipe resizing, "
                    "file leases, directory notices or page-cache probes)"
                )
        cg = self.cgroups
        ctl = []
        if cg.has("cpu"):
            ctl.append(f"cpu weight {spec.cpu_weight}")
            if spec.cpu_quota:
                ctl.append(f"cpu quota {spec.cpu_quota:g} cores")
        if cg.has("memory"):
            swap = " incl. swap" if cg.memsw or cg.version == 2 else ""
            ctl.append(f"memory {spec.memory_mb} MiB{swap}")
        if cg.has("pids"):
            ctl.append(f"pids {spec.pids}")
        if ctl:
            out.append(f"cgroup v{cg.version} ({', '.join(ctl)})")
        if not cg.has("memory"):
            out.append(f"RSS watchdog {spec.memory_mb} MiB")
        out.append(
            f"rlimits (file size {spec.file_size_mb} MiB, no core dumps, no queued signals or "
            f"message queues, {NOFILE_MAX} open files)"
        )
        out.append(f"logs rotated at {spec.log_mb} MiB")
        return out

    def missing(self, spec: SandboxSpec) -> list[str]:
        """One line per protection this machine cannot give, with what to do."""
        if not spec.enabled:
            return []
        out = []
        if not self.bwrap:
            out.append(
                "namespaces, file and network confinement: " + self.bwrap_why + " (install "
                "bubblewrap: apt-get install bubblewrap; it needs unprivileged user namespaces: "
                "sysctl kernel.unprivileged_userns_clone=1)"
            )
        elif not seccomp.program():
            out.append(
                f"seccomp filter: none for this machine's architecture ({platform.machine()}), "
                "so bots share the kernel keyrings (run leagues on x86-64)"
            )
        cg = self.cgroups
        for ctl in ("cpu", "memory", "pids"):
            if not cg.has(ctl):
                what = {
                    "cpu": "CPU weight and quota",
                    "memory": "memory limit (the RSS watchdog stands in)",
                    "pids": "pids limit (a fork bomb is not stopped)",
                }[ctl]
                out.append(
                    f"{what}: no writable {ctl} cgroup ({cg.why.get(ctl, 'not found')}; run as "
                    "root, or under a delegated cgroup v2: systemd-run --user --scope -p "
                    "Delegate=yes ...)"
                )
        if cg.has("memory") and cg.version == 1 and not cg.memsw:
            out.append(
                "memory limit counts no swap: cgroup v1 without memsw (boot with swapaccount=1)"
            )
        return out


def _own_cgroup(controller: str) -> str | None:
    """This process's cgroup path for a v1 ``controller`` (or v2 with ``""``)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        num, _, rest = line.partition(":")
        ctls, _, path = rest.partition(":")
        if controller == "" and num == "0" and ctls == "":
            return path
        if controller and controller in ctls.split(","):
            return path
    return None


def _counter(text: str, key: str) -> int:
    """The value of ``key`` in a cgroup ``key value`` file (0 when absent)."""
    for line in text.splitlines():
        k, _, v = line.partition(" ")
        if k == key and v.strip().isdigit():
            return int(v)
    return 0


def _writable_group(base: Path) -> str:
    """ "" if a group can be made under ``base``, else why not."""
    if not base.is_dir():
        return f"{base} not found"
    probe = base / f"uno-arena-probe-{os.getpid()}-{secrets.token_hex(3)}"
    try:
        probe.mkdir()
    except OSError as exc:
        return f"{base}: {exc.strerror}"
    with contextlib.suppress(OSError):
        probe.rmdir()
    return ""


def _probe_cgroups() -> Cgroups:
    cg = Cgroups()
    # cgroup v2 where the controllers are delegated to us
    v2_mount = None
    for cand in (CGROUP_ROOT, CGROUP_ROOT / "unified"):
        if (cand / "cgroup.controllers").is_file():
            v2_mount = cand
            break
    own = _own_cgroup("")
    if v2_mount is not None and own is not None:
        base = v2_mount / own.lstrip("/")
        try:
            controllers = (base / "cgroup.controllers").read_text().split()
        except OSError:
            controllers = []
        usable = [c for c in ("cpu", "memory", "pids") if c in controllers]
        if usable and not _writable_group(base):
            parent = base
            try:
                enabled = (parent / "cgroup.subtree_control").read_text().split()
                need = [c for c in usable if c not in enabled]
                if need:
                    (parent / "cgroup.subtree_control").write_text(" ".join("+" + c for c in need))
                cg.version = 2
                cg.dirs = dict.fromkeys(usable, parent)
                return cg
            except OSError as exc:
                cg.why = dict.fromkeys(usable, f"cgroup v2 {parent}: {exc.strerror}")
    # cgroup v1 controllers
    for ctl in ("cpu", "memory", "pids"):
        mount = CGROUP_ROOT / ctl
        path = _own_cgroup(ctl)
        if path is None or not (mount / "cgroup.procs").exists():
            cg.why.setdefault(ctl, "no cgroup v1 controller mounted")
            continue
        base = mount / path.lstrip("/")
        why = _writable_group(base)
        if why:
            cg.why[ctl] = why
            continue
        cg.dirs[ctl] = base
        cg.version = 1
    if cg.version == 1:  # accounting only (the bots' CPU time, for bench-tournament): no limit
        path = _own_cgroup("cpuacct")
        mount = CGROUP_ROOT / "cpuacct"
        if path is not None and (mount / "cpuacct.usage").exists():
            base = mount / path.lstrip("/")
            if not _writable_group(base):
                cg.dirs["cpuacct"] = base
    if "memory" in cg.dirs:
        cg.memsw = (cg.dirs["memory"] / "memory.memsw.limit_in_bytes").exists()
    return cg


def _probe_bwrap() -> tuple[str, str, str]:
    path = shutil.which("bwrap")
    if not path:
        return "", "", "bwrap not found"
    try:
        res = subprocess.run(
            [path, *_ns_args(), "--ro-bind", "/", "/", "true"],
            capture_output=True,
            timeout=20,
            check=False,
        )
        ver = subprocess.run([path, "--version"], capture_output=True, timeout=20, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return "", "", f"bwrap does not run ({exc})"
    if res.returncode != 0:
        err = res.stderr.decode(errors="replace").strip().splitlines()
        return "", "", f"bwrap cannot make namespaces here ({err[-1] if err else res.returncode})"
    return path, ver.stdout.decode().split()[-1] if ver.stdout else "?", ""


@functools.cache
def probe() -> Protections:
    """What this machine allows (once per process)."""
    p = Protections()
    p.bwrap, p.bwrap_version, p.bwrap_why = _probe_bwrap()
    p.cgroups = _probe_cgroups()
    p.socat = shutil.which("socat") or ""
    return p


def summary(spec: SandboxSpec) -> str:
    """The one line the runner prints at start."""
    return "sandbox: " + "; ".join(probe().active(spec))


def check(specs: Iterable[SandboxSpec], warn: object = None) -> list[str]:
    """Warn once per missing protection (``warn(line)``), or raise :class:`SandboxError` when
    a bot's sandbox is ``required``. Returns the warnings."""
    lines: list[str] = []
    required = False
    for spec in specs:
        required = required or (spec.enabled and spec.required)
        for line in probe().missing(spec):
            if line not in lines:
                lines.append(line)
    if lines and required:
        raise SandboxError(
            f"sandbox.required is true but a protection is missing: {lines[0]}"
            + (f" (and {len(lines) - 1} more: uno-arena sandbox check)" if len(lines) > 1 else "")
        )
    if callable(warn):
        for line in lines:
            warn(f"sandbox: missing {line}")
    return lines


# ------------------------------------------------------------------------------------- cgroups


class BotCgroup:
    """One bot launch's cgroups (one folder per v1 controller, or one v2 folder)."""

    _run_dirs: ClassVar[dict[Path, Path]] = {}
    _weights: ClassVar[dict[Path, dict[str, int]]] = {}
    """The CPU run group's folder -> the live bot groups in it and their CPU weights."""

    def __init__(self, name: str, spec: SandboxSpec) -> None:
        self.dirs: dict[str, Path] = {}
        cg = probe().cgroups
        tag = f"{name}-{secrets.token_hex(3)}"
        self.tag = tag
        for ctl, base in cg.dirs.items():
            run = self._run_dir(base)
            d = run / tag
            d.mkdir(exist_ok=True)
            self.dirs[ctl] = d
        self.version = cg.version
        self._limit(spec, cg)
        if "cpu" in self.dirs:
            run = self.dirs["cpu"].parent
            self._weights.setdefault(run, {})[tag] = spec.cpu_weight
            self._weigh_run(run)

    @classmethod
    def cpu_seconds(cls) -> float | None:
        """CPU seconds used so far by every bot this process launched in a cgroup, ended ones
        included (a group's usage counts its removed children's); ``None`` without a group
        that accounts CPU."""
        cg = probe().cgroups
        total, seen = 0.0, False
        for ctl, base in cg.dirs.items():
            run = cls._run_dirs.get(base)
            if run is None:
                continue
            with contextlib.suppress(OSError, ValueError):
                if ctl == "cpuacct":
                    total += int((run / "cpuacct.usage").read_text()) / 1e9
                    seen = True
                elif ctl == "cpu" and cg.version == 2:
                    total += _counter((run / "cpu.stat").read_text(), "usage_usec") / 1e6
                    seen = True
        return total if seen else None

    @classmethod
    def _weigh_run(cls, run: Path) -> None:
        """Give the run's group the CPU weight of all its bots together.

        The bots' groups share their parent's weight, and the parent competes with the game
        server and the runner (ordinary processes, weight 100 each) and anything else on the
        machine. Left at the default, the run's group would weigh one process, so eight busy
        bots together would get what one process gets: on a loaded machine the bots would
        starve and the tournament would crawl (bench-tournament's on/off ratio fell to 0.71).
        With the sum, each bot weighs what an ordinary process does, as ``cpu_weight``
        documents, and a spinning bot still gets no more than its own share."""
        total = max(1, sum(cls._weights.get(run, {}).values()))
        with contextlib.suppress(OSError):
            if probe().cgroups.version == 2:
                (run / "cpu.weight").write_text(str(min(10_000, total)))
            else:
                (run / "cpu.shares").write_text(str(min(262_144, max(2, total * 1024 // 100))))

    @classmethod
    def _run_dir(cls, base: Path) -> Path:
        """This process's group under ``base`` (made once; stale ones of dead runners go)."""
        if base in cls._run_dirs:
            return cls._run_dirs[base]
        for old in base.glob("uno-arena-*"):
            pid = old.name.split("-")[2] if old.name.count("-") >= 3 else ""
            if pid.isdigit() and not Path(f"/proc/{pid}").exists():
                _remove_tree(old)
        run = base / f"uno-arena-{os.getpid()}-{secrets.token_hex(3)}"
        run.mkdir()
        if probe().cgroups.version == 2:
            with contextlib.suppress(OSError):
                (run / "cgroup.subtree_control").write_text("+cpu +memory +pids")
        cls._run_dirs[base] = run
        atexit.register(_remove_tree, run)
        return run

    def _limit(self, spec: SandboxSpec, cg: Cgroups) -> None:
        mem = spec.memory_mb * MiB
        if self.version == 2:
            d = next(iter(self.dirs.values()), None)
            if d is None:
                return
            writes = []
            if "memory" in self.dirs:
                writes += [("memory.max", str(mem)), ("memory.swap.max", "0")]
            if "cpu" in self.dirs:
                writes.append(("cpu.weight", str(spec.cpu_weight)))
                if spec.cpu_quota:
                    writes.append(("cpu.max", f"{int(spec.cpu_quota * 100_000)} 100000"))
            if "pids" in self.dirs:
                writes.append(("pids.max", str(spec.pids)))
            for fname, value in writes:
                with contextlib.suppress(OSError):
                    (d / fname).write_text(value)
            return
        if "memory" in self.dirs:
            d = self.dirs["memory"]
            (d / "memory.limit_in_bytes").write_text(str(mem))
            if cg.memsw:
                (d / "memory.memsw.limit_in_bytes").write_text(str(mem))
            with contextlib.suppress(OSError):
                (d / "memory.swappiness").write_text("0")
        if "cpu" in self.dirs:
            d = self.dirs["cpu"]
            (d / "cpu.shares").write_text(str(max(2, spec.cpu_weight * 1024 // 100)))
            if spec.cpu_quota:
                (d / "cpu.cfs_period_us").write_text("100000")
                (d / "cpu.cfs_quota_us").write_text(str(int(spec.cpu_quota * 100_000)))
        if "pids" in self.dirs:
            (self.dirs["pids"] / "pids.max").write_text(str(spec.pids))

    @property
    def all_dirs(self) -> list[str]:
        return sorted({str(d) for d in self.dirs.values()})

    def kill(self) -> None:
        """SIGKILL whatever is left in the groups."""
        for _ in range(100):
            pids = self.pids()
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            if self.version == 2:
                for d in self.dirs.values():
                    with contextlib.suppress(OSError):
                        (d / "cgroup.kill").write_text("1")

    def pids(self) -> set[int]:
        out: set[int] = set()
        for d in self.dirs.values():
            with contextlib.suppress(OSError, ValueError):
                out.update(int(x) for x in (d / "cgroup.procs").read_text().split())
        return out

    def remove(self) -> None:
        self.kill()
        for d in self.dirs.values():
            _remove_tree(d)
        if "cpu" in self.dirs:
            run = self.dirs["cpu"].parent
            if self._weights.get(run, {}).pop(self.tag, None) is not None:
                self._weigh_run(run)


def _remove_tree(d: Path) -> None:
    """rmdir a cgroup and its children (a cgroup folder is removed with rmdir, bottom up)."""
    with contextlib.suppress(OSError):
        for sub in sorted((p for p in d.rglob("*") if p.is_dir()), key=lambda p: -len(p.parts)):
            with contextlib.suppress(OSError):
                sub.rmdir()
        d.rmdir()


# ------------------------------------------- the bwrap command line (the host relay: host_relay.py)


def _ns_args() -> list[str]:
    return [
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--uid",
        str(SANDBOX_UID),
        "--gid",
        str(SANDBOX_UID),
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "uno-bot",
    ]


def python_paths() -> list[str]:
    """What the runner's Python needs to run inside: its prefixes, its import path, and the
    folders of this project's packages (an editable install maps them outside site-packages)."""
    paths = [sys.prefix, sys.base_prefix, os.path.dirname(os.path.realpath(sys.executable))]
    here = os.path.realpath(os.getcwd())
    for p in sys.path:
        if p and os.path.isdir(p) and os.path.realpath(p) != here:
            paths.append(p)
    for pkg in ("uno_bot", "uno_server", "uno_tournament"):
        with contextlib.suppress(Exception):
            spec = importlib.util.find_spec(pkg)
            if spec is not None and spec.submodule_search_locations:
                paths.extend(spec.submodule_search_locations)
    return paths


NEVER_NAMED = ("/proc", "/sys", "/dev", "/run", "/var/run")
"""Where a path the command names is never shown from: the machine's processes (their command
lines carry other bots' tokens), its kernel and devices, and its services' sockets. The sandbox
has its own /proc and /dev."""


def _mountable(path: str, cwd: str, hide: Sequence[str]) -> bool:
    """Whether a path a bot's command names may be shown to it read-only (by its real path):
    never one under the system folders every bot sees (as named); anything in its own
    folder ``cwd``; elsewhere an existing regular file or folder (not a socket, pipe or device:
    a socket stays connectable on a read-only mount), outside :data:`NEVER_NAMED` and outside
    everything ``hide`` hides (the organiser's HOME, the run folder, other bots' folders; a
    runtime kept there is named in ``sandbox.paths``). Anything else is left out, and the bot
    finds nothing there. (A league's manifests may not name such paths at all:
    :mod:`uno_tournament.league.manifest`.)"""
    if any(_inside(os.path.normpath(path), d) for d in (*SYSTEM_DIRS, *TOP_LINKS)):
        return False  # every bot sees it already; a link there resolves inside
    real = os.path.realpath(path)
    if _inside(real, cwd):
        return True
    try:
        st = os.stat(real)
    except OSError:
        return False
    if not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        return False
    if any(_inside(real, os.path.realpath(p)) for p in NEVER_NAMED):
        return False
    return not any(_inside(real, h) for h in map(os.path.realpath, hide) if not _inside(cwd, h))


def _inside(path: str, parent: str) -> bool:
    return path == parent or path.startswith(parent.rstrip("/") + "/")


def _dedup(paths: Iterable[str]) -> list[str]:
    """Real, existing paths, without ones inside another."""
    real = sorted({os.path.realpath(p) for p in paths if os.path.exists(p)})
    out: list[str] = []
    for p in real:
        if not any(_inside(p, q) for q in out):
            out.append(p)
    return out


def inner_addr(addr: str) -> tuple[str, int]:
    """The bot's ``{addr}`` inside the sandbox and the port its relay listens on: the server's
    own address when that is 127.0.0.1, else 127.0.0.1 and the server's port (20000 + the port
    for a port below 1024, which the bot's unprivileged user cannot listen on)."""
    host, _, port = addr.rpartition(":")
    if int(port) < 1024:  # a port below 1024 needs a privilege the bot does not have
        inner = 20000 + int(port)
        return f"127.0.0.1:{inner}", inner
    if host == "127.0.0.1":
        return addr, int(port)
    return f"127.0.0.1:{port}", int(port)


# last of the mounts: bwrap's root is a tmpfs of no size, and a bot wrote in /work/x it made there
READ_ONLY_ROOT = ["--remount-ro", "/"]


def bwrap_argv(
    bwrap: str,
    spec: BotSpec,
    command: Sequence[str],
    *,
    port: int,
    socket_dir: str,
    hide: Sequence[str] = (),
) -> list[str]:
    """The full ``bwrap ... -- relay inner PORT SOCKET -- command`` line for one bot."""
    args, command = _confined(bwrap, spec, command, hide, writable=False, network=False)
    args += ["--ro-bind", socket_dir, INNER_SOCKET_DIR]
    args += ["--ro-bind", RELAY, INNER_RELAY]
    args += ["--chdir", os.path.realpath(spec.cwd)]
    args += ["--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp"]
    # the SDKs connect straight to the server's socket when told where it is, skipping the relay
    # behind {addr} (every message would cross it twice: ~15% of a tournament's hands/s)
    args += ["--setenv", LOCAL_SOCKET_ENV, f"{INNER_SOCKET_DIR}/server.sock"]
    args += [*READ_ONLY_ROOT, "--", sys.executable, "-I", "-S", INNER_RELAY, "inner", str(port)]
    args += [f"{INNER_SOCKET_DIR}/server.sock", "--", *command]
    return args


def build_argv(
    bwrap: str, spec: BotSpec, command: Sequence[str], *, hide: Sequence[str] = ()
) -> list[str]:
    """The ``bwrap ... -- command`` line of a bot's build step: as the bot itself is confined,
    but with its own folder writable (the build's output goes there) and, only with
    ``build_network = true``, the machine's network (to download dependencies)."""
    args, command = _confined(bwrap, spec, command, hide, writable=True, network=spec.build_network)
    args += ["--chdir", os.path.realpath(spec.cwd)]
    args += ["--setenv", "HOME", "/tmp", "--setenv", "TMPDIR", "/tmp"]
    return [*args, *READ_ONLY_ROOT, "--", *command]


def _confined(
    bwrap: str,
    spec: BotSpec,
    command: Sequence[str],
    hide: Sequence[str],
    *,
    writable: bool,
    network: bool,
) -> tuple[list[str], list[str]]:
    """The namespaces and the file system every confined command of a bot gets, and the
    command with its absolute paths as they are named inside."""
    sb = spec.sandbox
    cwd = os.path.realpath(spec.cwd)
    args = [bwrap, *_ns_args()]
    if network:
        args.append("--share-net")
    args += ["--ro-bind", "/usr", "/usr"]
    for top in TOP_LINKS:
        if os.path.islink(top):
            args += ["--symlink", os.readlink(top), top]
        elif os.path.isdir(top):
            args += ["--ro-bind", top, top]
    for f in ETC_FILES:
        args += ["--ro-bind-try", f, f]
    args += ["--proc", "/proc", *proc_covers(), "--dev", "/dev"]
    args += ["--size", str(sb.scratch_mb * MiB), "--tmpfs", "/tmp"]
    args += ["--size", str(sb.scratch_mb * MiB), "--tmpfs", "/dev/shm"]  # bwrap's has no size
    # files the command names by absolute path (a script, a jar, the program) are the bot's too;
    # a path through ``..`` is named without it, since the folder it climbs out of may not be
    # shown in the sandbox (links are kept: a venv's python must stay the venv's)
    command = [
        os.path.normpath(a) if a.startswith("/") and os.path.exists(a) else a for a in command
    ]
    # one under the system folders is shown as it is: by its real path, /usr/lib/ssl/private
    # bound /etc/ssl/private and showed the machine's keys (an examination's league manifest)
    named = [a for a in command if a.startswith("/") and _mountable(a, cwd, hide)]
    ro = _dedup(
        [*(d for d in SYSTEM_DIRS[1:] if os.path.isdir(d)), *python_paths(), *sb.paths, *named, cwd]
    )
    for p in ro:
        if not _inside(p, "/usr"):
            args += ["--ro-bind", p, p]
    if writable:
        args += ["--bind", cwd, cwd]  # before the covers: a run folder inside stays hidden
    # anything secret that a read-only folder above would show is covered with an empty one
    own = [h for h in hide if not _inside(cwd, os.path.realpath(h))]  # never the bot's own
    for h in _dedup(own):
        if os.path.lexists(h) and any(_inside(h, p) for p in ro):
            if os.path.isdir(h):
                args += ["--perms", "0555", "--tmpfs", h, "--remount-ro", h]
            else:
                args += ["--ro-bind", "/dev/null", h]
    # a hidden folder holding the bot's own: covered whole, the bot's shown again on top (so
    # what appears in it while the bot runs stays hidden too)
    around = [os.path.realpath(h) for h in hide if os.path.isdir(h)]
    for h in sorted({h for h in around if _inside(cwd, h) and h != cwd}, key=len):
        if any(_inside(h, p) for p in ro if p != cwd):
            args += [
                "--tmpfs",
                h,
                "--bind" if writable else "--ro-bind",
                cwd,
                cwd,
                "--remount-ro",
                h,
            ]
    return args, command


PROC_READ_ONLY = ("sys", "sysrq-trigger", "irq", "bus", "pressure", "mtrr")
"""Entries of /proc a bot could write (outside its user namespace it is the organiser's user)
and that hold the whole machine's state: shown read-only in its sandbox."""


@functools.cache
def proc_covers(proc: str = "/proc") -> tuple[str, ...]:
    """bwrap arguments that cover the kernel's root-only files in the sandbox's /proc (an empty
    file or folder in their place). Outside its user namespace a bot is the organiser's user, and
    when that is root a root-only file opens for it: an examination's bot read ``slabinfo`` (every
    socket, thread and process on the machine, counted live: other bots' connections, and a
    channel) and ``timer_list`` (when every CPU's timers are due). Whatever the kernel marks
    unreadable to others, at the top of /proc and one level down, is covered.

    The kernel's settings and the other writable global files (:data:`PROC_READ_ONLY`) are bound
    read-only over themselves first: bubblewrap 0.8 means to, but its check that the folder is
    writable failed, and a second examination's bot wrote ``kernel.printk_ratelimit`` (seen from
    the host) and ``vm.drop_caches``, and could have written ``kernel.core_pattern`` (a program
    the kernel runs as root on a crash)."""
    out: list[str] = []
    for name in PROC_READ_ONLY:
        if os.path.lexists(f"{proc}/{name}"):
            out += ["--ro-bind", f"{proc}/{name}", f"/proc/{name}"]
    for top in sorted(os.listdir(proc)):
        if top.isdigit() or top in ("self", "thread-self", *PROC_READ_ONLY):
            continue
        path = f"{proc}/{top}"
        names = [path]
        with contextlib.suppress(OSError):
            if stat.S_ISDIR(os.lstat(path).st_mode) and os.lstat(path).st_mode & stat.S_IROTH:
                names += [f"{path}/{n}" for n in sorted(os.listdir(path))]
        for name in names:
            try:
                st = os.lstat(name)
            except OSError:
                continue
            if st.st_mode & stat.S_IROTH:
                continue
            if stat.S_ISDIR(st.st_mode):
                out += ["--perms", "0555", "--tmpfs", name, "--remount-ro", name]
            elif stat.S_ISREG(st.st_mode):
                out += ["--ro-bind", "/dev/null", name]
    return tuple(out)


def sandbox_env(base: dict[str, str]) -> dict[str, str]:
    """The organiser's environment, cut down to what a bot needs (no tokens, no HOME)."""
    return {k: v for k, v in base.items() if k in ENV_KEEP or k.startswith("LC_")}


def limit_names(spec: SandboxSpec, *, watchdog: bool) -> dict[str, str]:
    """How the incident names each limit."""
    return {
        "memory": f"memory limit {spec.memory_mb} MiB" + (" (RSS watchdog)" if watchdog else ""),
        "pids": f"pids limit {spec.pids}",
        "fsize": f"file size limit {spec.file_size_mb} MiB",
        "sockets": f"connection limit {CONNECTIONS_MAX} (connected sockets)",
    }
