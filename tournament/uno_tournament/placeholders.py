"""The placeholders the runner fills in a bot's ``command``, ``cwd``, ``env`` and ``build``
values, and the warning for a ``{word}`` that looks like a misspelt one.

A misspelt placeholder (``{nmae}``) reaches the bot as it is and fails there, far from its cause,
so the config names it. Only a warning, and only for a near miss: braces are also the bot's own
business (``python -c "print(f'{i}')"``, ``awk '{print $1}'``, the shell's ``${HOME}``), and the
runner has no escape for them, so refusing every unknown ``{word}`` would refuse working bots."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any

PLACEHOLDERS = ("python", "addr", "token", "name", "config_dir")
"""What the runner fills in (config.py's docstring says with what)."""

FIELDS = ("command", "cwd", "env", "build")
_WORD_RE = re.compile(r"(?<!\$)\{([A-Za-z_][A-Za-z0-9_]*)\}")  # ${HOME} is the shell's


def near_miss(word: str) -> str | None:
    """The placeholder ``word`` looks like a misspelling of (None: none, or it is one)."""
    if word in PLACEHOLDERS:
        return None
    close = difflib.get_close_matches(word.lower(), PLACEHOLDERS, n=1, cutoff=0.7)
    return close[0] if close else None


def _values(entry: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(field, value) of every string of a raw [[bots]] entry where placeholders are filled."""
    for key in FIELDS:
        v = entry.get(key)
        if isinstance(v, str):
            yield key, v
        elif isinstance(v, list):
            yield from ((f"{key}[{j}]", x) for j, x in enumerate(v) if isinstance(x, str))
        elif isinstance(v, dict):
            yield from ((f"{key}.{k}", x) for k, x in v.items() if isinstance(x, str))


def warnings(where: str, entry: object) -> list[str]:
    """A warning for each near-miss placeholder of the raw [[bots]] entry ``where``."""
    if not isinstance(entry, dict):
        return []
    out = []
    for field, value in _values(entry):
        for m in _WORD_RE.finditer(value):
            meant = near_miss(m.group(1))
            if meant is not None:
                out.append(
                    f"{where}.{field[:80]}: {m.group(0)[:40]} is not a placeholder the runner "
                    f"fills in (did you mean {{{meant}}}?); the bot gets it as it is"
                )
    return out
