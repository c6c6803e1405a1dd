"""What decides how a launched bot plays, in a form equal on every machine that runs it.

The shards of one run may start the same bots from different folders (a pod's image, another
machine's checkout), so a bot's command line differs between them only in paths. Two shards
that bring different *programs* under one bot name must not mix their hands into one rating
(an examination ran shard 0/2 with ``--randomness 0.75`` and shard 1/2 with ``--randomness
0.0`` under one name, and both were rated as the same bot). :func:`programs` turns each bot's
command and environment into a path-free fingerprint:

* an argument (or an ``--option=value``'s value, or an ``env`` value) that names an existing
  file is that file's content: ``file:sha256:<16 hex>``. The same script under another path is
  the same bot; an edited script, another binary or another weights file is another bot;
* an argument that names an existing folder, or a path that does not exist (yet), is its last
  part (``path:name``): where a folder is does not change the bot, and a file the bot writes
  (``--trace out/t.jsonl``) may not exist when the first shard starts;
* every other argument stays as it is (``--randomness``, ``0.75``, ``-m``, a module's name);
* an external bot (it connects by itself) is ``external``: the run cannot see its program;
* a launched bot's sandbox limits (:data:`SANDBOX_KEYS`: memory, CPU, processes, file and
  scratch sizes, the sandbox on or off) are part of it: a bot that runs out of memory at
  512 MiB on one pod and not at 2 GiB on another is not the same player. ``required``, the
  build limits, the log size and the extra readable ``paths`` (machine-dependent) are not.
  A fingerprint recorded before the limits were has none: it is not refused for that.

The runner records the fingerprints in the store (meta ``bot_programs``) next to the identity's
digest and compares them when a shard joins (:func:`difference`) and when a tournament folder's
run is resumed (:func:`check_resume`: a bot edited between a kill and the resume was played on
without a word, one rating built from two programs). A store recorded before they existed has
none: it is not refused for that, and the first process that joins or resumes it records its
own.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from .config import BotSpec, TournamentConfig

META_KEY = "bot_programs"
SANDBOX_KEYS = (
    "enabled",
    "memory_mb",
    "cpu_weight",
    "cpu_quota",
    "pids",
    "file_size_mb",
    "scratch_mb",
)
"""The ``[sandbox]`` settings that change what a launched bot experiences."""
_CHUNK = 1 << 20


def _file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            h.update(chunk)
    return f"file:sha256:{h.hexdigest()[:16]}"


def _pathish(value: str) -> bool:
    return "/" in value and "://" not in value and "{" not in value


def _normal(value: str, cwd: str) -> str:
    """One argument or env value without its machine's paths (see the module docstring)."""
    if value.startswith("-") and "=" in value:
        opt, _, rest = value.partition("=")
        return f"{opt}={_normal(rest, cwd)}" if rest else value
    if not value or "{" in value or "\0" in value:
        return value  # a placeholder ({python}, {addr}, {name}) is the same everywhere
    path = Path(value) if Path(value).is_absolute() else Path(cwd or ".") / value
    try:
        if path.is_file():
            return _file_digest(path)
        if path.is_dir() or _pathish(value):
            return f"path:{path.name}"
    except OSError:  # unreadable, a name too long: keep what the command says
        pass
    return value


def fingerprint(bot: BotSpec) -> dict[str, Any]:
    """A bot's program: its arguments and environment, path-free (JSON-ready)."""
    if bot.external:
        return {"external": True}
    return {
        "command": [_normal(a, bot.cwd) for a in bot.command],
        "env": {k: _normal(v, bot.cwd) for k, v in sorted(bot.env.items())},
        "sandbox": {k: getattr(bot.sandbox, k) for k in SANDBOX_KEYS},
    }


def programs(config: TournamentConfig) -> dict[str, dict[str, Any]]:
    """Every bot's :func:`fingerprint`, by name."""
    return {b.name: fingerprint(b) for b in config.bots}


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _bot_difference(
    name: str,
    theirs: Any,
    mine: dict[str, Any],
    words: tuple[str, str] = ("", "yours "),
    command: list[str] | None = None,
) -> str:
    then, now = words
    if not isinstance(theirs, dict):
        return f"bot {name}'s program was recorded unreadably (the database was edited)"
    if theirs.get("external") != mine.get("external"):
        kind = {True: "an external bot", None: "a bot the runner starts"}
        return (
            f"bot {name} is {kind.get(theirs.get('external'), '?')}{then or ' there'}, "
            f"{now if then else ''}{kind.get(mine.get('external'), '?')}{'' if then else ' here'}"
        )
    a, b = list(theirs.get("command") or []), list(mine.get("command") or [])
    if len(a) != len(b):
        return f"bot {name}'s command is {_show(a)}{then}, {now}{_show(b)}"
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x != y:
            what = "a file with other content" if str(x).startswith("file:") else "another value"
            if command and i < len(command) and str(y).startswith("file:"):
                what = f"the file {_show(command[i])} has other content"
            return (
                f"bot {name}'s command argument {i} is {_show(x)}{then}, {now}{_show(y)} ({what})"
            )
    ea, eb = dict(theirs.get("env") or {}), dict(mine.get("env") or {})
    for k in sorted(set(ea) | set(eb)):
        if ea.get(k) != eb.get(k):
            return f"bot {name}'s env {k} is {_show(ea.get(k))}{then}, {now}{_show(eb.get(k))}"
    sa, sb = theirs.get("sandbox"), dict(mine.get("sandbox") or {})
    if not isinstance(sa, dict):  # recorded before the sandbox limits were
        return "" if sa is None else f"bot {name}'s sandbox was recorded unreadably"
    for k in sorted(set(sa) | set(sb)):
        if sa.get(k) != sb.get(k):
            return (
                f"bot {name}'s sandbox {k} is {_show(sa.get(k))}{then}, {now}{_show(sb.get(k))} "
                "(the [sandbox] limits it runs under)"
            )
    return ""


def unrecorded(stored: Any) -> bool:
    """True if ``stored`` (meta ``bot_programs``) lacks a part this version records (a bot's
    sandbox limits): the process that joins records its own programs over it."""
    if not isinstance(stored, dict):
        return False
    return any(
        isinstance(fp, dict) and not fp.get("external") and "sandbox" not in fp
        for fp in stored.values()
    )


def difference(
    stored: Any,
    mine: dict[str, dict[str, Any]],
    words: tuple[str, str] = ("", "yours "),
    config: TournamentConfig | None = None,
) -> str:
    """The first bot whose program differs from the recorded one, in words ('' if none, or if
    nothing was recorded: a store written before fingerprints); ``words`` name the recorded
    program and this process's (after the one, before the other); ``config``'s commands name a
    changed file."""
    commands = {b.name: list(b.command) for b in config.bots} if config is not None else {}
    if stored is None:
        return ""
    if not isinstance(stored, dict):
        return "the recorded bot programs are unreadable (the database was edited)"
    for name, fp in mine.items():
        if name in stored:
            why = _bot_difference(name, stored[name], fp, words, commands.get(name))
            if why:
                return why
    return ""


def check_resume(store: Any, config: TournamentConfig, where: object) -> None:
    """Before a tournament folder's run is resumed: refuse (:class:`StoreError`, one line) if a
    bot's program is not the one the run started with; record this process's programs in a
    store that has none (a run started before they were recorded)."""
    from .store import StoreError

    mine = programs(config)
    stored = store.meta().get(META_KEY)
    why = difference(stored, mine, (" when the run started", "now "), config)
    if why:
        raise StoreError(
            f"{where}: {why}, so its resumed hands would be rated with its earlier ones as one "
            "bot. Restore the program the run started with and resume again, or start a new "
            "run (another output folder) for the new program"
        )
    if stored is None or unrecorded(stored):
        store.set_meta(META_KEY, mine)
