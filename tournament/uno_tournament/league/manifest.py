"""A submitted bot's manifest, ``bot.toml`` at the top of its folder::

    name = "my-bot"                 # the bot, across its versions (1-40: letters, digits . _ -)
    version = "1.2.0"               # this version (1-32: letters, digits . _ + -)
    author = "alice"                # who submits it (1-40: letters, digits . _ - @)
    language = "go"                 # optional: python, go, typescript, rust, java or other
    build = ["go", "build", "-o", "bin/bot", "./cmd/bot"]   # optional, run confined, once
    build_timeout_s = 600           # optional, 1-7200 s (default 600)
    run = ["bin/bot", "--addr", "{addr}", "--name", "{name}"]

``run`` may name ``{addr}``, ``{name}`` and ``{python}`` (the league's Python); ``build`` only
``{name}`` and ``{python}``. The bot's token is in its environment, ``UNO_ARENA_TOKEN``: a
``{token}`` on its command line would show it to every user of the machine, so it is refused.
``name``, ``version`` and ``author`` start with a letter or a digit. The file is at most 64 KiB;
an unknown key, a missing one or a bad value is refused with a message that names it.
"""

from __future__ import annotations

import posixpath
import re
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path

from ..fileread import NotARegularFileError, loads_toml, read_regular

__all__ = ["MANIFEST", "Manifest", "ManifestError", "read_manifest"]

MANIFEST = "bot.toml"
MAX_BYTES = 64 * 1024
"""Largest manifest, in bytes."""
MAX_ARGS = 64
"""Most words in ``build`` or ``run``."""
MAX_ARG_CHARS = 1024
"""Longest word of ``build`` or ``run``."""
LANGUAGES = ("python", "go", "typescript", "rust", "java", "other")
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}\Z")
VERSION_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,31}\Z")
AUTHOR_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,39}\Z")
# the rules as the errors say them: the first character is a letter or a digit, so that a name
# is never ".", ".." or a hidden file in the league's folders (".hidden" said only "must be
# letters, digits, '.', ...", which it is)
NAME_RULE = "1-40 letters, digits, '.', '_' or '-', starting with a letter or a digit"
VERSION_RULE = "1-32 letters, digits, '.', '_', '+' or '-', starting with a letter or a digit"
AUTHOR_RULE = "1-40 letters, digits, '.', '_', '@' or '-', starting with a letter or a digit"
KEYS = ("name", "version", "author", "language", "build", "build_timeout_s", "run")


def reserved(name: str) -> bool:
    """A name the league keeps for its own bots: its house bots (``house-``), the gate's
    opponents (``gate-``) and versions' seat names (ending in ``.DIGITS``), in any case
    (``House-random`` was taken, and stood in the standings as one of the house bots)."""
    folded = name.casefold()
    return bool(re.search(r"\.[0-9]+$", folded)) or folded.startswith(("house-", "gate-"))


RESERVED_RULE = (
    "is reserved (a name ending in .DIGITS, or starting with house- or gate-, is the league's "
    "own); choose another name"
)
"""Said of a reserved name (:func:`reserved`; its case does not matter)."""


class ManifestError(ValueError):
    """A manifest that cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Manifest:
    name: str
    version: str
    author: str
    run: tuple[str, ...]
    build: tuple[str, ...] = ()
    build_timeout_s: float = 600.0
    language: str = "other"

    @property
    def key(self) -> str:
        """``name@version``, how the league names this version."""
        return f"{self.name}@{self.version}"


def _shown(v: object) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


def _words(where: str, v: object, *, allowed: tuple[str, ...]) -> tuple[str, ...]:
    if not isinstance(v, list) or not v or not all(isinstance(x, str) and x for x in v):
        raise ManifestError(f"{where}: must be a non-empty list of strings")
    if len(v) > MAX_ARGS:
        raise ManifestError(f"{where}: at most {MAX_ARGS} words, got {len(v)}")
    for x in v:
        if len(x) > MAX_ARG_CHARS:
            raise ManifestError(f"{where}: a word is longer than {MAX_ARG_CHARS} characters")
        for placeholder in re.findall(r"\{[^{}]*\}", x):
            if placeholder == "{token}" and where.endswith(" run"):
                raise ManifestError(
                    f"{where}: names {{token}}, which would show the bot's token to every user "
                    'of the league\'s machine (ps); drop "--token", "{token}": the bot gets '
                    "it in UNO_ARENA_TOKEN, which every SDK reads"
                )
            if placeholder not in allowed:
                raise ManifestError(
                    f"{where}: {_shown(placeholder)} is not known here (only {', '.join(allowed)})"
                )
        if x.startswith("/") and not any(_inside(x, d) for d in SHOWN):
            raise ManifestError(
                f"{where}: {_shown(x)} is a path outside the bot's folder; name the bot's own "
                f"files relative to its folder, and programs only under {', '.join(SHOWN)} "
                "(or as {python})"
            )
    return tuple(v)


SHOWN = ("/usr", "/opt", "/bin", "/sbin", "/lib", "/lib64")
"""Where an absolute path in ``run`` or ``build`` may point: the system folders every confined
bot sees anyway. Any other absolute path is refused, since the sandbox would otherwise show the
file named to the bot (an examination named ``/proc``, read every process's command line with
the other bots' tokens, and played in another bot's seats)."""


def _inside(path: str, parent: str) -> bool:
    norm = posixpath.normpath(path)
    return norm == parent or norm.startswith(parent + "/")


def read_manifest(folder: Path) -> Manifest:
    """The manifest of the bot folder ``folder``; raises :class:`ManifestError`."""
    path = folder / MANIFEST
    if not folder.is_dir():
        raise ManifestError(f"{folder}: not a folder (give the bot's folder, with its {MANIFEST})")
    try:
        st = path.lstat()
    except OSError:
        raise ManifestError(
            f"{path}: missing; a bot folder needs a {MANIFEST} with name, version, author and run"
        ) from None
    # read as a regular file of the folder itself: a link could point the organiser's process
    # at any file of the machine (and echo its keys), /dev/zero filled its memory and a named
    # pipe hung the submission
    if stat.S_ISLNK(st.st_mode):
        raise ManifestError(f"{path}: a symbolic link; {MANIFEST} must be a file in the folder")
    if not stat.S_ISREG(st.st_mode):
        raise ManifestError(f"{path}: not a regular file (a folder, pipe, socket or device)")
    if st.st_size > MAX_BYTES:
        raise ManifestError(f"{path}: {st.st_size} bytes, at most {MAX_BYTES}")
    try:
        data = loads_toml(read_regular(path, MAX_BYTES).decode("utf-8"))
    except NotARegularFileError:
        raise ManifestError(f"{path}: changed while read; at most {MAX_BYTES} bytes") from None
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ManifestError(f"{path}: not valid TOML ({exc})") from None
    where = f"{path}:"
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ManifestError(f"{where} unknown key {_shown(unknown[0])} (known: {', '.join(KEYS)})")
    for key in ("name", "version", "author", "run"):
        if key not in data:
            raise ManifestError(f"{where} {key}: missing")
    fields: dict[str, str] = {}
    for key, rx, rule in (
        ("name", NAME_RE, NAME_RULE),
        ("version", VERSION_RE, VERSION_RULE),
        ("author", AUTHOR_RE, AUTHOR_RULE),
    ):
        v = data[key]
        if not isinstance(v, str) or not rx.match(v):
            raise ManifestError(f"{where} {key}: {_shown(v)} must be {rule}")
        fields[key] = v
    language = data.get("language", "other")
    if language not in LANGUAGES:
        raise ManifestError(
            f"{where} language: {_shown(language)} must be one of {', '.join(LANGUAGES)}"
        )
    run = _words(f"{where} run", data["run"], allowed=("{addr}", "{name}", "{python}"))
    build: tuple[str, ...] = ()
    if "build" in data:
        build = _words(f"{where} build", data["build"], allowed=("{name}", "{python}"))
    timeout = data.get("build_timeout_s", 600.0)
    if (
        isinstance(timeout, bool)
        or not isinstance(timeout, int | float)
        or not 1 <= timeout <= 7200
    ):
        raise ManifestError(
            f"{where} build_timeout_s: must be a number of seconds from 1 to 7200, got "
            f"{_shown(timeout)}"
        )
    if "build_timeout_s" in data and not build:
        raise ManifestError(f"{where} build_timeout_s: only with a build")
    return Manifest(
        fields["name"],
        fields["version"],
        fields["author"],
        run,
        build,
        float(timeout),
        str(language),
    )
