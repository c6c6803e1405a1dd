"""The seccomp filter a confined bot runs under (``bwrap --seccomp FD``).

Namespaces do not cover everything the kernel shares. An examination found the one that
matters here: **kernel keyrings**. A bot's user is the organiser's outside its user namespace,
so a bot could find the organiser's user keyring (``_uid.0`` in ``/proc/keys``), add a key to
it, and a bot at another table (in another sandbox) could link that keyring and read the key:
a channel between bots (one bot passed its hand to another), a store that outlives the run, and
a way to read, change or delete any secret the organiser keeps there. Docker's default profile
refuses these calls for the same reason.

So the filter answers ``EPERM`` to:

* ``add_key``, ``request_key``, ``keyctl``: the keyrings;
* ``perf_event_open``: performance counters, a timing channel onto other processes' work;
* ``bpf``: loading kernel programs (refused to unprivileged users on most machines already);
* ``userfaultfd``: a tool of kernel exploits, used by no bot runtime;
* ``ptrace``, ``process_vm_readv``, ``process_vm_writev``, ``pidfd_getfd``: reading and
  rewriting another process, and taking its open files. In its sandbox a bot shares a user with
  bubblewrap's init and its relay to the game server, and an examination's bot attached to
  both; no bot runtime needs them at run time (``/proc/PID/mem`` of those two processes stays
  open to it: they have no capabilities and run under the same filter, so it gains nothing);

``EOPNOTSUPP`` to ``fallocate`` (see :data:`UNSUPPORTED`), and to file locks: ``flock``
and ``fcntl``'s lock commands (see :data:`LOCK_COMMANDS`); and ``ENOSYS``, as a kernel built
without them does, to ``inotify_init``/``inotify_init1`` and ``io_uring_*`` (see :data:`ABSENT`).

**Counts the kernel keeps per user, machine-wide.** A bot's user namespace maps it to the
organiser's user, and some of the kernel's budgets are that user's, over every process it runs:
inotify and fanotify instances (128 each on most machines), memory ``io_uring`` locks, and the
pages of pipes (``F_SETPIPE_SZ`` is refused, see :data:`PIPE_RESIZE`). An examination's bot
held 100 inotify instances, and a bot of another author, in another sandbox, read the count it
could still create (128 - k): a channel between tables, and a bot that takes all 128 breaks
file watching for the organiser's own tools. No bot runtime needs either at start (Node.js's
``fs.watch`` and libuv's io_uring fall back or fail only when used). The queued-signal and
message-queue budgets are counted the same way, in one pool for every namespace made under
the same limit: the keeper's rlimits give a bot none of either (``procs.keeper_limits``).

**File locks** are a channel between sandboxes. Every bot reads the same files (the Python
interpreter, the runtime's libraries, the runner's code); a lock on one is seen by every process
that opens it, whatever its mount namespace, and needs only read access (``flock``, a read lock
of ``fcntl``). An examination's bot held and dropped a lock on ``sys.executable`` every two
seconds, and a bot of another author read the bits by trying the lock: one bot can pass its hand
to an accomplice at another table. A file system without locks answers ``EOPNOTSUPP``; Go's and
Cargo's build caches take that as "no locking here" and go on without it.

Every other call is allowed: the sandbox's namespaces, read-only file system, cgroups and
rlimits confine the rest, and a filter that refused what a language runtime needs would break
bots in ways a bot author cannot see.

The program is classic BPF (``struct sock_filter``), built here without libseccomp: it reads
the calling convention's architecture and the call number from ``struct seccomp_data`` and
compares. On an x86-64 machine it covers the 64-bit calls, the x32 ones (the same numbers with
bit 30 set) and the 32-bit compatibility ones (``int 0x80``, other numbers), since a bot may
make either. On other machines :func:`program` is empty and the sandbox runs without a filter
(``uno-arena sandbox check`` says so).
"""

from __future__ import annotations

import errno
import platform
import struct
from dataclasses import dataclass

# classic BPF opcodes (linux/filter.h, linux/bpf_common.h)
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_AND_K = 0x54  # BPF_ALU | BPF_AND | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K

_RET_ALLOW = 0x7FFF0000  # SECCOMP_RET_ALLOW
_RET_ERRNO = 0x00050000  # SECCOMP_RET_ERRNO | errno
_NR = 0  # struct seccomp_data: int nr
_ARCH = 4  # struct seccomp_data: __u32 arch
_X32_BIT = 0x40000000  # __X32_SYSCALL_BIT

AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003

REFUSED = (
    "add_key",
    "request_key",
    "keyctl",
    "perf_event_open",
    "bpf",
    "userfaultfd",
    "ptrace",
    "ptrace_x32",
    "process_vm_readv",
    "process_vm_writev",
    "process_vm_readv_x32",
    "process_vm_writev_x32",
    "pidfd_getfd",
)
"""The calls the filter refuses, by name (see the module docstring)."""
UNSUPPORTED = ("fallocate",)
"""The calls the filter answers ``EOPNOTSUPP``, as a file system without them does: a build
reserved gigabytes with one fast ``fallocate`` a file between two looks of its disk watcher
(an examination's build left 3 GiB behind ``build_disk_mb = 1024``). ``posix_fallocate`` (glibc)
then writes the blocks itself, at the disk's pace, so runtimes that call it still work."""

ABSENT = (
    "inotify_init",
    "inotify_init1",
    "fanotify_init",
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "io_setup",
    "io_setup_x32",
    "mincore",
    "cachestat",
    "preadv2",
    "pwritev2",
    "preadv2_x32",
    "pwritev2_x32",
)
"""The calls the filter answers ``ENOSYS``, as a kernel built without them does: budgets the
kernel keeps per user or per machine (inotify, fanotify, ``io_uring``, Linux AIO's
``fs.aio-max-nr``), and the precise ways to ask whether a file's pages are in the page cache
(``mincore``, ``cachestat``, and ``preadv2``'s ``RWF_NOWAIT``; glibc's ``preadv2`` without
flags falls back to ``preadv``). See the module docstring."""

NO_OPS = ("fadvise64", "fadvise64_64")
"""Advice the filter answers 0 without passing it on: ``posix_fadvise(POSIX_FADV_DONTNEED)``
drops a file's pages from the page cache that every sandbox shares, a way to signal to a bot
that times its reads of the same file."""
MADVISE_NO_OPS = (20, 21)
"""``madvise`` advice answered 0 without effect: ``MADV_COLD`` and ``MADV_PAGEOUT`` (they push
a mapped file's pages out of the shared page cache, like ``POSIX_FADV_DONTNEED``). Every other
advice (``MADV_DONTNEED``, ``MADV_FREE``: what allocators use) is passed on."""

LOCKING = ("flock",)
"""Calls answered ``EOPNOTSUPP`` whatever their arguments: whole-file locks."""
LOCK_COMMANDS = (5, 6, 7, 12, 13, 14, 36, 37, 38)
PIPE_RESIZE = 1031
"""``fcntl``'s ``F_SETPIPE_SZ``, answered ``EPERM`` (what the kernel answers past the user's
pipe budget): the pages of pipes are counted per user over the machine
(``fs.pipe-user-pages-soft``), and one bot growing pipes to 1 MiB told another, whose own
growing then failed, a bit at a time (an examination)."""
NOTICE_COMMANDS = (1024, 1026)
"""``fcntl``'s ``F_SETLEASE`` and ``F_NOTIFY``, answered ``EINVAL`` (what a kernel with leases
turned off and without dnotify answers). A bot is the owner, outside its namespace, of the
organiser's files, so it could take a write lease on a file every process reads (a stdlib
module, the venv's ``pyvenv.cfg``): each open of it anywhere on the machine then waited 45 s
(``fs.lease-break-time``) and told the bot (an examination); and a directory notice
(``DN_ACCESS``) on a folder every sandbox reads told one bot each time another read a file
there: an examination's bot passed its hand to a bot of another author that way."""
"""``fcntl`` commands answered ``EOPNOTSUPP`` (asm-generic/fcntl.h): ``F_GETLK``, ``F_SETLK``,
``F_SETLKW``, their 32-bit ``*64`` forms, and the open-file-description locks ``F_OFD_GETLK``,
``F_OFD_SETLK``, ``F_OFD_SETLKW``. Every other command (``F_GETFL``, ``F_DUPFD``...) is allowed."""
_ARG1 = 24  # struct seccomp_data: __u64 args[6] at 16; the low word of args[1] (little-endian)
_ARG2 = 32  # the low word of args[2]: madvise's advice

_NUMBERS: dict[int, dict[str, int]] = {
    # asm/unistd_64.h (x32 uses the same numbers with _X32_BIT set)
    AUDIT_ARCH_X86_64: {
        "add_key": 248,
        "request_key": 249,
        "keyctl": 250,
        "perf_event_open": 298,
        "bpf": 321,
        "userfaultfd": 323,
        "ptrace": 101,
        "ptrace_x32": 521,  # x32's own numbers, compared with bit 30 cleared
        "process_vm_readv": 310,
        "process_vm_writev": 311,
        "process_vm_readv_x32": 539,
        "process_vm_writev_x32": 540,
        "pidfd_getfd": 438,
        "fallocate": 285,
        "flock": 73,
        "fcntl": 72,
        "inotify_init": 253,
        "inotify_init1": 294,
        "fanotify_init": 300,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "io_setup": 206,
        "io_setup_x32": 543,  # x32's own numbers, compared with bit 30 cleared
        "mincore": 27,
        "cachestat": 451,
        "preadv2": 327,
        "pwritev2": 328,
        "preadv2_x32": 546,
        "pwritev2_x32": 547,
        "fadvise64": 221,
        "madvise": 28,
    },
    # asm/unistd_32.h
    AUDIT_ARCH_I386: {
        "add_key": 286,
        "request_key": 287,
        "keyctl": 288,
        "perf_event_open": 336,
        "bpf": 357,
        "userfaultfd": 374,
        "ptrace": 26,
        "process_vm_readv": 347,
        "process_vm_writev": 348,
        "pidfd_getfd": 438,
        "fallocate": 324,
        "flock": 143,
        "fcntl": 55,
        "fcntl64": 221,
        "inotify_init": 291,
        "inotify_init1": 332,
        "fanotify_init": 338,
        "io_uring_setup": 425,
        "io_uring_enter": 426,
        "io_uring_register": 427,
        "io_setup": 245,
        "mincore": 218,
        "cachestat": 451,
        "preadv2": 378,
        "pwritev2": 379,
        "fadvise64": 250,
        "fadvise64_64": 272,
        "madvise": 219,
    },
}
_MACHINES = {
    "x86_64": (AUDIT_ARCH_X86_64, AUDIT_ARCH_I386),
    "amd64": (AUDIT_ARCH_X86_64, AUDIT_ARCH_I386),
}


@dataclass(frozen=True)
class _Insn:
    code: int
    k: int
    jt: str | int = 0
    """A label, or 0 (the next instruction)."""
    jf: str | int = 0


def _assemble(insns: list[tuple[str | None, _Insn]]) -> bytes:
    """``(label, instruction)`` pairs to ``struct sock_filter`` bytes, jumps resolved."""
    where = {label: i for i, (label, _) in enumerate(insns) if label is not None}
    out = bytearray()
    for i, (_, ins) in enumerate(insns):
        jumps = []
        for j in (ins.jt, ins.jf):
            off = where[j] - i - 1 if isinstance(j, str) else j
            if not 0 <= off <= 255:
                raise ValueError(f"jump {j!r} out of range at {i}")
            jumps.append(off)
        out += struct.pack("=HBBI", ins.code, jumps[0], jumps[1], ins.k)
    return bytes(out)


def program(machine: str | None = None) -> bytes:
    """The filter for this machine (``platform.machine()``), or b"" where it has none."""
    arches = _MACHINES.get((machine or platform.machine()).lower())
    if arches is None:
        return b""
    insns: list[tuple[str | None, _Insn]] = []
    for n, arch in enumerate(arches):
        nxt = f"arch{n + 1}" if n + 1 < len(arches) else "allow"
        insns.append((f"arch{n}", _Insn(_LD_W_ABS, _ARCH)))
        insns.append((None, _Insn(_JEQ_K, arch, 0, nxt)))
        insns.append((None, _Insn(_LD_W_ABS, _NR)))
        if arch == AUDIT_ARCH_X86_64:  # an x32 call: the same number with bit 30 set
            insns.append((None, _Insn(_AND_K, 0xFFFFFFFF ^ _X32_BIT)))
        for name in REFUSED:
            if name in _NUMBERS[arch]:
                insns.append((None, _Insn(_JEQ_K, _NUMBERS[arch][name], "deny", 0)))
        for name in UNSUPPORTED + LOCKING:
            insns.append((None, _Insn(_JEQ_K, _NUMBERS[arch][name], "unsupported", 0)))
        for names, label in ((ABSENT, "absent"), (NO_OPS, "noop")):
            for name in names:
                if name in _NUMBERS[arch]:
                    insns.append((None, _Insn(_JEQ_K, _NUMBERS[arch][name], label, 0)))
        for name in ("fcntl", "fcntl64"):
            if name in _NUMBERS[arch]:
                insns.append((None, _Insn(_JEQ_K, _NUMBERS[arch][name], "fcntl", 0)))
        insns.append((None, _Insn(_JEQ_K, _NUMBERS[arch]["madvise"], "madvise", 0)))
        insns.append((None, _Insn(_RET_K, _RET_ALLOW)))
    insns.append(("allow", _Insn(_RET_K, _RET_ALLOW)))  # another calling convention
    insns.append(("fcntl", _Insn(_LD_W_ABS, _ARG1)))
    for cmd in LOCK_COMMANDS:
        insns.append((None, _Insn(_JEQ_K, cmd, "unsupported", 0)))
    insns.append((None, _Insn(_JEQ_K, PIPE_RESIZE, "deny", 0)))
    for cmd in NOTICE_COMMANDS:
        insns.append((None, _Insn(_JEQ_K, cmd, "invalid", 0)))
    insns.append((None, _Insn(_RET_K, _RET_ALLOW)))
    insns.append(("madvise", _Insn(_LD_W_ABS, _ARG2)))
    for advice in MADVISE_NO_OPS:
        insns.append((None, _Insn(_JEQ_K, advice, "noop", 0)))
    insns.append((None, _Insn(_RET_K, _RET_ALLOW)))
    insns.append(("noop", _Insn(_RET_K, _RET_ERRNO | 0)))  # returns 0, the call not made
    insns.append(("invalid", _Insn(_RET_K, _RET_ERRNO | errno.EINVAL)))
    insns.append(("deny", _Insn(_RET_K, _RET_ERRNO | errno.EPERM)))
    insns.append(("unsupported", _Insn(_RET_K, _RET_ERRNO | errno.EOPNOTSUPP)))
    insns.append(("absent", _Insn(_RET_K, _RET_ERRNO | errno.ENOSYS)))
    return _assemble(insns)
