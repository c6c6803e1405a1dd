"""A launched bot's build step (``build = [...]`` in its ``[[bots]]`` entry).

Before a run plays its first hand, the runner builds every bot that has a ``build`` command,
one after the other, in the bot's own folder:

- in the same sandbox as the bot itself (:mod:`uno_tournament.sandbox`: namespaces, the bot's
  cgroups and rlimits, the run folder, other bots' folders, tokens and the organiser's home
  hidden), except that the bot's folder is writable, since the build's output goes there;
- without network, unless ``build_network = true`` (to download dependencies; vendoring them
  is the safer way);
- within ``build_timeout_s`` seconds, after which the build and everything it started are
  killed;
- adding at most ``sandbox.build_disk_mb`` MiB and ``sandbox.build_files`` files, folders
  and links to the bot's folder (measured every :data:`DISK_POLL_S` s; past either the build is
  killed as at its time limit);
- with its output in ``logs/<bot>.build.log`` (rotated at the sandbox's ``log_mb``, as the
  bot's own log).

A build that fails, hits a limit or runs out of time stops the run before any hand is played,
with one line naming the bot, what happened and the last lines of its log. A resumed run builds
again (builds are expected to be incremental).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from . import sandbox, seccomp
from .config import BotSpec, TournamentConfig
from .procs import describe_exit, keeper_limits, printable, stop_group

__all__ = ["BuildError", "build_bot", "build_bots"]

TAIL_LINES = 5
"""Lines of a failed build's log quoted in its error."""
TAIL_CHARS = 160
"""Longest quoted line."""


class BuildError(RuntimeError):
    """A bot's build failed; the message names the bot, why, the log's tail and the log."""


async def build_bots(
    config: TournamentConfig,
    log_dir: Path,
    *,
    hide: Sequence[str | Path] = (),
    say: Callable[[str], None] = lambda _: None,
) -> int:
    """Build every launched bot that has a ``build`` command; returns how many were built.
    Raises :class:`BuildError` at the first that fails."""
    built = 0
    for bot in config.bots:
        if bot.build and not bot.external:
            others = [o.cwd for o in config.bots if o.cwd and o.name != bot.name]
            took = await build_bot(bot, log_dir, hide=[*hide, *others])
            say(f"built {bot.name} in {took:.1f} s (log: {log_dir / (bot.name + '.build.log')})")
            built += 1
    return built


async def build_bot(spec: BotSpec, log_dir: Path, *, hide: Sequence[str | Path] = ()) -> float:
    """Run ``spec.build`` confined as the bot is (its folder writable); returns the seconds it
    took. Raises :class:`BuildError`."""
    sb = spec.sandbox
    log_dir.mkdir(parents=True, exist_ok=True)
    log_path = log_dir / f"{spec.name}.build.log"
    status_path = log_dir / f".{spec.name}.build.status"
    with contextlib.suppress(OSError):
        status_path.unlink()
    args = [spec.expand(a, addr="", token="") for a in spec.build]
    env = sandbox.sandbox_env(dict(os.environ)) if sb.enabled else dict(os.environ)
    env.update({k: spec.expand(v, addr="", token="") for k, v in spec.env.items()})
    env.setdefault("PYTHONUNBUFFERED", "1")
    keeper: dict[str, object] = {
        "ppid": os.getpid(),
        "cwd": spec.cwd,
        "argv": args,
        "log": str(log_path),
        "log_max": sb.log_mb * sandbox.MiB,
        "status": str(status_path),
    }
    cgroup: sandbox.BotCgroup | None = None
    hidden = [str(Path(h).resolve()) for h in (*hide, log_dir)]
    if "HOME" in os.environ:
        hidden.append(os.environ["HOME"])
    if sb.enabled:
        prot = sandbox.probe()
        cgroup = sandbox.BotCgroup(f"{spec.name}-build", sb) if prot.cgroups.dirs else None
        keeper.update(keeper_limits(sb, cgroup))
        if prot.bwrap:
            keeper["argv"] = sandbox.build_argv(prot.bwrap, spec, args, hide=hidden)
            keeper["seccomp"] = seccomp.program().hex()
    try:
        start = await asyncio.to_thread(folder_usage, Path(spec.cwd)) if sb.enabled else (0, 0)
    except UnmeasuredError as exc:
        raise BuildError(
            f"bot {spec.name!r}: its folder holds something the disk limit cannot measure "
            f"({exc}); remove it before building"
        ) from exc
    t0 = time.monotonic()
    try:
        with log_path.open("ab") as log:
            log.write(
                f"--- {time.strftime('%Y-%m-%d %H:%M:%S')} build: {' '.join(args)}\n".encode()
            )
            log.flush()
            try:
                proc = await asyncio.create_subprocess_exec(
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
                raise BuildError(
                    f"bot {spec.name!r}: cannot start its build: {exc.strerror or exc}"
                ) from exc
            # only a confined build is held to the sandbox's disk limits
            limit = Limit(start, sb.build_disk_mb, sb.build_files) if sb.enabled else None
            waiting = asyncio.ensure_future(proc.wait())
            watching = asyncio.ensure_future(_watch_disk(Path(spec.cwd), limit))
            try:
                done, _ = await asyncio.wait(
                    {waiting, watching},
                    timeout=spec.build_timeout_s,
                    return_when=asyncio.FIRST_COMPLETED,
                )
            except BaseException:
                await _kill(proc, cgroup)
                raise
            finally:
                watching.cancel()
            if waiting not in done:
                waiting.cancel()
                await _kill(proc, cgroup)
                why = (
                    watching.result()
                    if watching in done
                    else f"did not finish within {spec.build_timeout_s:g} s "
                    "(bots[].build_timeout_s)"
                )
                raise BuildError(f"bot {spec.name!r}: its build {why}; " + _tail(log_path))
            code = waiting.result()
            if limit is not None:  # written between two looks, just before it ended
                why = await asyncio.to_thread(_over, Path(spec.cwd), limit)
                if why:
                    raise BuildError(f"bot {spec.name!r}: its build {why}; " + _tail(log_path))
    finally:
        if cgroup is not None:
            cgroup.remove()
    took = time.monotonic() - t0
    if code != 0:
        why = describe_exit(code)
        with contextlib.suppress(OSError, ValueError):
            limit = json.loads(status_path.read_text()).get("limit")
            if limit:
                why = f"{limit} reached"
        raise BuildError(f"bot {spec.name!r}: its build failed ({why}); " + _tail(log_path))
    with contextlib.suppress(OSError):
        status_path.unlink()
    return took


DISK_POLL_S = 0.2
"""How often a build's folder is measured against ``sandbox.build_disk_mb`` and
``sandbox.build_files``."""


class UnmeasuredError(Exception):
    """A build's folder holds something the disk limit cannot measure."""


def folder_bytes(folder: Path, stop_at: int | None) -> int:
    """Disk space the files under ``folder`` take (:func:`folder_usage`)."""
    return folder_usage(folder, stop_at)[0]


def folder_usage(
    folder: Path, stop_bytes: int | None = None, stop_entries: int | None = None
) -> tuple[int, int]:
    """Disk space the files under ``folder`` take (allocated blocks, so a sparse file counts
    what it holds; links are not followed) and how many files, folders and links it holds,
    counting stopped once past ``stop_bytes`` or ``stop_entries``.

    The walk opens each folder relative to its parent's descriptor (``os.fwalk``), so a path
    of any length is measured: by path, 20 nested folders of 250 characters failed with
    ENAMETOOLONG and were skipped, and an examination's build wrote 241 MiB past a 16 MiB
    limit there. A folder that cannot be read raises :class:`UnmeasuredError`: a build that
    makes one is stopped, not waved through."""
    total = entries = 0
    problems: list[OSError] = []
    for _, dirs, files, dfd in os.fwalk(folder, follow_symlinks=False, onerror=problems.append):
        for name in (*dirs, *files):
            try:
                st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
            except FileNotFoundError:
                continue  # removed while the walk went by
            except OSError as exc:
                raise UnmeasuredError(f"{name[:60]}: {exc.strerror or exc}") from exc
            total += st.st_blocks * 512
            entries += 1
        if (stop_bytes is not None and total > stop_bytes) or (
            stop_entries is not None and entries > stop_entries
        ):
            return total, entries
    lost = [e for e in problems if not isinstance(e, FileNotFoundError)]
    if lost:
        raise UnmeasuredError(f"{str(lost[0].filename)[-60:]}: {lost[0].strerror or lost[0]}")
    return total, entries


@dataclass(frozen=True)
class Limit:
    """What a build found in its folder (bytes, entries) and may add to it."""

    start: tuple[int, int]
    build_disk_mb: int
    build_files: int

    @property
    def most_bytes(self) -> int:
        return self.start[0] + self.build_disk_mb * sandbox.MiB

    @property
    def most_entries(self) -> int:
        return self.start[1] + self.build_files


def _over(folder: Path, limit: Limit) -> str:
    """Why the build's folder breaks the limits ('' if it does not)."""
    try:
        size, entries = folder_usage(folder, limit.most_bytes, limit.most_entries)
    except UnmeasuredError as exc:
        return f"made a folder the disk limit cannot measure ({exc}), and was stopped"
    if size > limit.most_bytes:
        return (
            f"wrote more than {limit.build_disk_mb} MiB into the bot's folder "
            "(sandbox.build_disk_mb), and was stopped"
        )
    if entries > limit.most_entries:
        # a million empty files take few blocks, but as many of the disk's inodes (an
        # examination's build made 600,000 in 11 MiB)
        return (
            f"made more than {limit.build_files:,} files and folders in the bot's folder "
            "(sandbox.build_files), and was stopped"
        )
    return ""


async def _watch_disk(folder: Path, limit: Limit | None) -> str:
    """Return why, once the files under ``folder`` break the build's limits (a build filling
    the organiser's disk, or its inodes, through the one folder it may write) or cannot be
    measured; never without a limit."""
    if limit is None:
        await asyncio.Event().wait()
    assert limit is not None
    while True:
        await asyncio.sleep(DISK_POLL_S)
        why = await asyncio.to_thread(_over, folder, limit)
        if why:
            return why


async def _kill(proc: asyncio.subprocess.Process, cgroup: sandbox.BotCgroup | None) -> None:
    """End the keeper's group (it kills the build's whole tree) and whatever is left in the
    build's cgroups."""
    await stop_group(proc, 5.0)
    if cgroup is not None:
        cgroup.kill()


def _tail(log_path: Path) -> str:
    """``last lines: a | b | c (log: PATH)`` from the build's log (made printable: a stranger's
    build writes it)."""
    try:
        with log_path.open("rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - 16_384))
            lines = f.read().decode(errors="replace").splitlines()
    except OSError:
        lines = []
    lines = [printable(ln.strip()) for ln in lines if ln.strip() and not ln.startswith("--- ")]
    cut = [ln if len(ln) <= TAIL_CHARS else ln[: TAIL_CHARS - 3] + "..." for ln in lines]
    shown = " | ".join(cut[-TAIL_LINES:]) or "(no output)"
    return f"last lines: {shown} (log: {log_path})"
