"""Root-only files of /proc, and tracing the sandbox's own processes (session 54).

An examination's league ran as root; outside its user namespace a bot is the organiser's user,
so the kernel's root-only files opened for it: ``/proc/slabinfo`` counts every socket, thread
and process on the machine (other bots' connections, live, and a channel between bots) and
``/proc/timer_list`` shows when every CPU's timers are due; a second one wrote the kernel's
settings (``/proc/sys``) machine-wide, which bubblewrap meant to keep read-only. The first bot
attached with
``ptrace`` to bubblewrap's init and to its relay to the game server, the processes the harness
puts in its sandbox. The sandbox now covers the root-only files with empty ones and the seccomp
filter refuses ``ptrace`` and ``process_vm_readv``/``writev``. Each probe also runs without the
protection, where it gets through (what the test would otherwise miss)."""

from __future__ import annotations

import ctypes
import errno
import os
import sys
from pathlib import Path

import pytest

from uno_tournament import sandbox
from uno_tournament.config import BotSpec
from uno_tournament.seccomp import program

from .test_sandbox import _keeper_run, _need_sandbox

PROBE = """
import ctypes, os
for name in ("slabinfo", "timer_list"):
    try:
        with open("/proc/" + name, "rb") as f:
            print("read", name, len(f.read()), flush=True)
    except OSError as e:
        print("read", name, "err", e.errno, flush=True)
try:  # the value it holds, written back: refused, or no change
    with open("/proc/sys/kernel/printk_ratelimit", "r+b") as f:
        f.write(f.read())
    print("write sys ok", flush=True)
except OSError as e:
    print("write sys err", e.errno, flush=True)
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(name, nr, *args):
    r = libc.syscall(nr, *args)
    print(name, "err" if r < 0 else "ok", ctypes.get_errno() if r < 0 else 0, flush=True)
SEIZE = 0x4206  # PTRACE_SEIZE: attaches without stopping the parent (it must go on reaping)
call("ptrace", ctypes.c_long(101), ctypes.c_long(SEIZE), ctypes.c_long(os.getppid()), None, None)
buf = ctypes.create_string_buffer(8)
src = ctypes.create_string_buffer(b"probe!!")
class Iov(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]
local, remote = Iov(ctypes.addressof(buf), 8), Iov(ctypes.addressof(src), 8)
pidfd = libc.syscall(ctypes.c_long(434), ctypes.c_long(os.getppid()), ctypes.c_long(0))
call("getfd", ctypes.c_long(438), ctypes.c_long(pidfd), ctypes.c_long(0), ctypes.c_long(0))
call("vm_readv", ctypes.c_long(310), ctypes.c_long(os.getpid()), ctypes.byref(local),
     ctypes.c_ulong(1), ctypes.byref(remote), ctypes.c_ulong(1), ctypes.c_ulong(0))
"""


def _run(tmp_path: Path, filtered: bool) -> str:
    spec = BotSpec(name="x", command=("python3",), cwd=str(tmp_path))
    argv = sandbox.build_argv(
        sandbox.probe().bwrap, spec, [sys.executable, "-I", "-S", "-c", PROBE]
    )
    if filtered:
        return _keeper_run(tmp_path, argv, seccomp=program().hex())
    return _keeper_run(tmp_path, argv)


def _read(out: str, name: str) -> str:
    line = next(ln for ln in out.splitlines() if ln.startswith(f"read {name} "))
    return line.split(" ", 2)[2]


def test_root_only_proc_files_read_empty_and_tracing_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _need_sandbox()
    if not program():
        pytest.skip("no seccomp filter for this machine's architecture")
    out = _run(tmp_path, True)
    for name in ("slabinfo", "timer_list"):
        got = _read(out, name)
        assert got == "0" or got.startswith("err"), (name, out)
    assert f"ptrace err {errno.EPERM}\n" in out, out
    assert f"vm_readv err {errno.EPERM}\n" in out, out
    assert f"getfd err {errno.EPERM}\n" in out, out
    # the kernel's settings are read-only: a second examination's bot wrote them machine-wide
    assert f"write sys err {errno.EROFS}\n" in out, out
    # the controls: without the filter both calls get through ...
    plain = _run(tmp_path, False)
    assert "ptrace ok 0\n" in plain and "vm_readv ok 0\n" in plain, plain
    assert "getfd ok 0\n" in plain, plain
    # ... and, for a root organiser, without the covers the files are read in full
    if os.geteuid() == 0 and ctypes.sizeof(ctypes.c_void_p) == 8:
        monkeypatch.setattr(sandbox, "proc_covers", lambda: ())
        bare = _run(tmp_path, True)
        assert int(_read(bare, "slabinfo")) > 0 and int(_read(bare, "timer_list")) > 0, bare
        assert "write sys ok\n" in bare, bare
