"""Reading a file a stranger may have put in a run folder: a regular file of bounded size, or a
clear error. ``Path.read_bytes`` waits forever on a pipe and reads /dev/zero until memory runs
out; an examination's symlink from a replay to /dev/zero hung ``tournament verify``."""

from __future__ import annotations

import errno
import os
import stat
import tomllib
from pathlib import Path
from typing import Any


class NotARegularFileError(ValueError):
    """The path is a device, pipe or socket, or larger than the limit."""


class TooLargeError(NotARegularFileError):
    """The path is a regular file larger than the limit."""


def read_regular(path: Path, limit: int) -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes. Opened without
    blocking, so a pipe or device is named, not waited on. Raises FileNotFoundError,
    IsADirectoryError, other OSErrors, or :class:`NotARegularFileError`."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "a folder, not a file", str(path))
        if not stat.S_ISREG(st.st_mode):
            raise NotARegularFileError(f"{path}: not a regular file (a device, pipe or socket)")
        if st.st_size > limit:
            raise TooLargeError(f"{path}: {st.st_size} bytes, more than {limit >> 20} MiB")
        with os.fdopen(os.dup(fd), "rb") as f:
            raw = f.read(limit + 1)
    finally:
        os.close(fd)
    if len(raw) > limit:
        raise TooLargeError(f"{path}: more than {limit >> 20} MiB")
    return raw


def loads_toml(text: str) -> dict[str, Any]:
    """``tomllib.loads`` of ``text`` (a leading BOM, as Notepad writes, dropped). Arrays or
    inline tables nested too deeply for Python's stack raise ``tomllib.TOMLDecodeError``, as
    any other bad TOML does: ``z = [[[...]]]`` 1,000 deep, well under every file's size
    limit, was a RecursionError traceback from every command that read a TOML file (an
    examination)."""
    try:
        return tomllib.loads(text.removeprefix("\ufeff"))
    except RecursionError:
        raise tomllib.TOMLDecodeError("arrays or tables nested too deeply") from None


class DuplicateKeyError(ValueError):
    """A JSON object names a key twice: readers disagree on which value counts (Python's keeps
    the last, others the first), so a file that does is not one uno-arena wrote."""


def unique_keys(pairs: list[tuple[str, object]]) -> dict[str, object]:
    """``json.loads``'s ``object_pairs_hook`` for files a run wrote: an object whose key comes
    twice raises :class:`DuplicateKeyError` instead of keeping one of the values silently."""
    out: dict[str, object] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(f"the key {key[:40]!r} twice in one object")
        out[key] = value
    return out


class TextFileError(ValueError):
    """A text file that cannot be read, in one line naming it and saying why."""


def read_text_file(path: Path, limit: int, what: str) -> str:
    """The UTF-8 text of ``path``, a regular file of at most ``limit`` bytes: a pipe or device
    is named, not waited on or read without end. ``what`` names the file in the errors."""
    try:
        raw = read_regular(path, limit)
    except FileNotFoundError as exc:
        raise TextFileError(f"{path}: no such file") from exc
    except IsADirectoryError as exc:
        raise TextFileError(f"{path}: a folder, not a {what}") from exc
    except TooLargeError as exc:
        raise TextFileError(
            f"{path}: larger than {limit // 1024} KiB; a {what} is at most that"
        ) from exc
    except NotARegularFileError as exc:
        raise TextFileError(
            f"{path}: not a regular file (a device, pipe or socket); give a file"
        ) from exc
    except OSError as exc:
        raise TextFileError(f"{path}: {exc.strerror or exc}") from exc
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise TextFileError(f"{path}: not UTF-8 text (byte {exc.start})") from exc


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the descriptor (``os.write`` may write less), then close it."""
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


class FileWriteError(OSError):
    """A report file that cannot be written, in one line naming it and saying what to do."""


def write_text_atomic(path: Path, text: str, again: str = "") -> None:
    """Write ``path`` as a temporary file beside it, then rename that over it. Whatever a
    stranger left at the name is replaced, never opened: a symbolic link is replaced itself (its
    target, perhaps outside the run folder, is not written through) and a named pipe is not
    waited on. A folder at the name, or a folder that cannot be written, is a
    :class:`FileWriteError` naming the file and, as ``again``, the command that writes it."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = text.encode()
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(tmp, flags | getattr(os, "O_CLOEXEC", 0), 0o666)
        write_all(fd, data)
        os.replace(tmp, path)
    except OSError as exc:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        why = (
            "a folder is in its place; move it away"
            if isinstance(exc, IsADirectoryError) or exc.errno in (errno.EISDIR, errno.ENOTEMPTY)
            else f"{exc.strerror or exc}; fix that"
        )
        redo = f"`{again}` writes it again" if again else "run the command again"
        raise FileWriteError(f"cannot write {path}: {why}, then {redo}") from None
