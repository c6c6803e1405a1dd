"""Leases, directory notices and the page cache: three things every sandbox shares (session 52).

An examination's bot, the owner of the organiser's files outside its user namespace, held a
write lease on a file every process reads: each open of it on the machine waited 45 s and told
the bot. Another watched a folder every sandbox reads with ``F_NOTIFY`` and read the bits a bot
of another author sent by reading a file there. The page cache is a channel the same way: one
bot drops a file's pages (``POSIX_FADV_DONTNEED``, ``MADV_PAGEOUT``), another asks whether they
are cached (``mincore``, ``cachestat``, ``preadv2(RWF_NOWAIT)``).

Each probe runs as a bot is started (by the keeper, in bubblewrap) with the filter, and again
without it, where the same calls get through (what the test would otherwise miss)."""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path

from uno_tournament import sandbox
from uno_tournament.config import BotSpec
from uno_tournament.seccomp import program

from .test_sandbox import _keeper_run, _need_sandbox

ASK = """
import ctypes, fcntl, mmap, os, signal
signal.signal(signal.SIGIO, signal.SIG_IGN)
def attempt(name, how):
    try:
        how()
        print(name, "ok 0", flush=True)
    except OSError as e:
        print(name, "err", e.errno, flush=True)
fd = os.open(DATA, os.O_RDONLY)
attempt("lease", lambda: fcntl.fcntl(fd, 1024, fcntl.F_RDLCK))  # F_SETLEASE
attempt("unlease", lambda: fcntl.fcntl(fd, 1024, fcntl.F_UNLCK))
d = os.open(os.path.dirname(DATA), os.O_RDONLY)
attempt("notify", lambda: fcntl.fcntl(d, 1026, 0x1 | 0x80000000))  # DN_ACCESS | DN_MULTISHOT
attempt("nowait", lambda: os.preadv(fd, [bytearray(4096)], 0, os.RWF_NOWAIT))
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
def call(name, nr, *args):
    r = libc.syscall(nr, *args)
    print(name, "err" if r < 0 else "ok", ctypes.get_errno() if r < 0 else 0, flush=True)
page = mmap.mmap(-1, 4096)
addr = ctypes.addressof((ctypes.c_char * 4096).from_buffer(page))
vec = ctypes.create_string_buffer(8)
call("mincore", ctypes.c_long(27), ctypes.c_void_p(addr), ctypes.c_long(4096), vec)
ctx = ctypes.c_ulong(0)
call("io_setup", ctypes.c_long(206), ctypes.c_long(1), ctypes.byref(ctx))
"""

DROP = """
import mmap, os
fd = os.open(DATA, os.O_RDONLY)
if HOW == "fadvise":
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
else:
    m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
    sum(m[i] for i in range(0, len(m), 4096))  # mapped, then pushed out
    m.madvise(21)  # MADV_PAGEOUT
print("dropped", flush=True)
"""


def _run(tmp_path: Path, code: str, filtered: bool) -> str:
    spec = BotSpec(name="x", command=("python3",), cwd=str(tmp_path))
    argv = sandbox.build_argv(sandbox.probe().bwrap, spec, [sys.executable, "-I", "-S", "-c", code])
    if filtered:
        return _keeper_run(tmp_path, argv, seccomp=program().hex())
    return _keeper_run(tmp_path, argv)


def _cached_pages(path: Path) -> int:
    """Pages of ``path`` in the page cache, asked from outside any sandbox."""
    fd = os.open(path, os.O_RDONLY)
    try:
        cached = 0
        for off in range(0, os.fstat(fd).st_size, 4096):
            try:
                os.preadv(fd, [bytearray(4096)], off, os.RWF_NOWAIT)
                cached += 1
            except BlockingIOError:
                pass
        return cached
    finally:
        os.close(fd)


def _data(tmp_path: Path) -> Path:
    data = tmp_path / "shared" / "data.bin"
    data.parent.mkdir(exist_ok=True)
    data.write_bytes(os.urandom(64 * 4096))
    os.sync()  # clean pages: what a drop can evict
    data.read_bytes()
    return data


def test_leases_notices_and_page_cache_probes_are_refused(tmp_path: Path) -> None:
    _need_sandbox()
    data = _data(tmp_path)
    code = ASK.replace("DATA", repr(str(data)))
    filtered = _run(tmp_path, code, True)
    assert f"lease err {errno.EINVAL}\n" in filtered, filtered
    assert f"notify err {errno.EINVAL}\n" in filtered, filtered
    # preadv2 with flags: glibc turns the filter's ENOSYS into EOPNOTSUPP
    assert f"nowait err {errno.EOPNOTSUPP}\n" in filtered, filtered
    for call in ("mincore", "io_setup"):
        assert f"{call} err {errno.ENOSYS}\n" in filtered, filtered
    plain = _run(tmp_path, code, False)
    for call in ("lease", "notify", "nowait", "mincore", "io_setup"):
        assert f"{call} ok 0\n" in plain, plain


def test_a_bot_cannot_drop_pages_from_the_shared_page_cache(tmp_path: Path) -> None:
    _need_sandbox()
    data = _data(tmp_path)
    pages = 64
    assert _cached_pages(data) == pages
    for how in ("fadvise", "madvise"):
        code = DROP.replace("DATA", repr(str(data))).replace("HOW", repr(how))
        out = _run(tmp_path, code, True)
        assert "dropped\n" in out, out  # the advice is answered as taken ...
        assert _cached_pages(data) == pages, how  # ... and nothing left the cache
        out = _run(tmp_path, code, False)
        assert "dropped\n" in out, out
        assert _cached_pages(data) < pages, how  # without the filter the pages went
        data.read_bytes()
