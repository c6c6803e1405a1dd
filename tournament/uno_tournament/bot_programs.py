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
* an external bot (it connects by itself) is ``external``: the run cannot see its program.

The runner records the fingerprints in the store (meta ``bot_programs``) next to the identity's
digest and compares them when a shard joins (:func:`difference`). A store recorded before they
existed has none: it is not refused for that, and the first process that joins it records its
own.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from .config import BotSpec, TournamentConfig

META_KEY = "bot_programs"
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
    }


def programs(config: TournamentConfig) -> dict[str, dict[str, Any]]:
    """Every bot's :func:`fingerprint`, by name."""
    return {b.name: fingerprint(b) for b in config.bots}


def _show(value: object) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _bot_difference(name: str, theirs: Any, mine: dict[str, Any]) -> str:
    if not isinstance(theirs, dict):
        return f"bot {name}'s program was recorded unreadably (the database was edited)"
    if theirs.get("external") != mine.get("external"):
        kind = {True: "an external bot", None: "a bot the runner starts"}
        return (
            f"bot {name} is {kind.get(theirs.get('external'), '?')} there, "
            f"{kind.get(mine.get('external'), '?')} here"
        )
    a, b = list(theirs.get("command") or []), list(mine.get("command") or [])
    if len(a) != len(b):
        return f"bot {name}'s command is {_show(a)}, yours {_show(b)}"
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        if x != y:
            what = "a file with other content" if str(x).startswith("file:") else "another value"
            return f"bot {name}'s command argument {i} is {_show(x)}, yours {_show(y)} ({what})"
    ea, eb = dict(theirs.get("env") or {}), dict(mine.get("env") or {})
    for k in sorted(set(ea) | set(eb)):
        if ea.get(k) != eb.get(k):
            return f"bot {name}'s env {k} is {_show(ea.get(k))}, yours {_show(eb.get(k))}"
    return ""


def difference(stored: Any, mine: dict[str, dict[str, Any]]) -> str:
    """The first bot whose program differs from the recorded one, in words ('' if none, or if
    nothing was recorded: a store written before fingerprints)."""
    if stored is None:
        return ""
    if not isinstance(stored, dict):
        return "the recorded bot programs are unreadable (the database was edited)"
    for name, fp in mine.items():
        if name in stored:
            why = _bot_difference(name, stored[name], fp)
            if why:
                return why
    return ""
