"""The file locks of ``league submit``: the league's one lock (``.submit.lock``, kept) and one
lock per author and per bot name (``.submit.HASH.lock``, removed when released, and those a
killed ``submit`` left removed by the next one, so they do not pile up)."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO


@contextlib.contextmanager
def key_lock(league_dir: Path, key: str, whose: str) -> Iterator[None]:
    """A lock of ``key`` (an author's or a name's, without case) in the league's folder."""
    if not league_dir.is_dir():  # not a league: opening it says so, and makes no folder
        yield
        return
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]  # a stranger's text: no file name
    lock = league_dir / f".submit.{digest}.lock"
    with flocked_removed(lock, f"waiting: another submission {whose} is being built or judged"):
        sweep_key_locks(league_dir)
        yield


_KEY_LOCK = re.compile(r"\.submit\.[0-9a-f]{32}\.lock")


def _same_file(f: IO[bytes], path: Path) -> bool:
    """``f`` is still the file at ``path`` (not removed, nor replaced, meanwhile)."""
    try:
        st = os.stat(path)
    except OSError:
        return False
    mine = os.fstat(f.fileno())
    return (st.st_dev, st.st_ino) == (mine.st_dev, mine.st_ino)


@contextlib.contextmanager
def flocked_removed(path: Path, waiting: str) -> Iterator[None]:
    """As :func:`flocked`, with the file removed on release (still held), so that the lock
    files of every author and name ever seen do not pile up (an examination: 11 in one league).
    A process that waited on a file removed meanwhile holds nothing: it takes the lock again
    on the file now at ``path``."""
    said = False
    while True:
        f = open(path, "a+b")  # noqa: SIM115 (closed below, or on release)
        try:
            try:
                fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if not said:
                    print(waiting, file=sys.stderr, flush=True)
                    said = True
                fcntl.flock(f.fileno(), fcntl.LOCK_EX)
            if _same_file(f, path):
                break
        except BaseException:
            f.close()
            raise
        f.close()
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            path.unlink()  # before the release: nobody holds it, nobody waiting keeps it
        f.close()


def sweep_key_locks(league_dir: Path) -> None:
    """Remove the author and name lock files nobody holds: those a killed ``submit`` (kill -9
    in its build) left. A file someone holds is left; one someone is about to lock is theirs
    to take again (:func:`flocked_removed` checks that it is still the file at its path)."""
    with contextlib.suppress(OSError):
        for entry in os.scandir(league_dir):
            if not _KEY_LOCK.fullmatch(entry.name):
                continue
            try:
                f = open(entry.path, "rb")  # noqa: SIM115
            except OSError:
                continue
            with f:
                try:
                    fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
                except OSError:  # held: a submission in progress
                    continue
                if _same_file(f, Path(entry.path)):
                    with contextlib.suppress(OSError):
                        os.unlink(entry.path)


@contextlib.contextmanager
def flocked(path: Path, waiting: str) -> Iterator[None]:
    """An exclusive flock of ``path`` (a file kept), saying ``waiting`` if it must wait."""
    with open(path, "a+b") as f:
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            print(waiting, file=sys.stderr, flush=True)
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(f.fileno(), fcntl.LOCK_UN)
