"""The value checks of a tournament's configuration (cut from :mod:`.config` along its seam):
each takes the field's path (``time_control.decision_ms``) and raises :class:`ConfigError`
naming it, with the bad value repeated at most :data:`MAX_ECHO` characters long."""

from __future__ import annotations

import json
import math
import re
import secrets
from typing import Any

__all__ = ["MAX_ECHO", "ConfigError"]


class ConfigError(Exception):
    """A bad configuration value; the message names the field."""


_BARE_KEY = re.compile(r"^[A-Za-z0-9_-]+\Z")


MAX_ECHO = 80  # characters of the file's own text an error message repeats


def _cut(text: str, limit: int = MAX_ECHO) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _toml(v: Any, depth: int = 0) -> str:
    """A value spelled as TOML writes it (``true``, not Python's ``True``; ``inf``; an array
    ``[1, "a"]``; an inline table ``{ a = 1 }``). A string keeps its repr, a TOML literal
    string (``'many'``) or, holding a ``'``, a basic one."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, list | tuple | dict) and depth > 8:  # deep nesting: cut, not recursed
        return "…"
    if isinstance(v, list | tuple):  # only as many items as the message can show
        return "[" + ", ".join(_toml(x, depth + 1) for x in v[:MAX_ECHO]) + "]"
    if isinstance(v, dict):
        if not v:
            return "{}"
        items = list(v.items())[:MAX_ECHO]
        return "{ " + ", ".join(f"{_key(k)} = {_toml(x, depth + 1)}" for k, x in items) + " }"
    if hasattr(v, "isoformat"):  # TOML's dates and times
        return str(v.isoformat())
    return repr(v)


def _shown(v: Any) -> str:
    """A value as an error message repeats it: as TOML spells it, cut to MAX_ECHO
    characters."""
    return _cut(_toml(v))


def _key(key: Any) -> str:
    """A key as TOML writes it: bare if it can be, else quoted (never a raw newline); cut to
    MAX_ECHO characters."""
    text = str(key)
    return _cut(text if _BARE_KEY.match(text) else json.dumps(text))


def _int(where: str, v: Any, lo: int, hi: int) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise ConfigError(f"{where}: must be an integer, got {_shown(v)}")
    if not lo <= v <= hi:
        raise ConfigError(f"{where}: must be {lo}-{hi}, got {_shown(v)}")
    return v


def _float(where: str, v: Any, lo: float, hi: float) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ConfigError(f"{where}: must be a number, got {_shown(v)}")
    if not lo <= v <= hi:
        raise ConfigError(f"{where}: must be {lo:g}-{hi:g}, got {_shown(v)}")
    return float(v)


def _str(where: str, v: Any) -> str:
    if not isinstance(v, str):
        raise ConfigError(f"{where}: must be a string, got {_shown(v)}")
    return v


def _bool(where: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise ConfigError(f"{where}: must be true or false, got {_shown(v)}")
    return v


def _table(where: str, v: Any, known: set[str]) -> dict[str, Any]:
    if not isinstance(v, dict):
        raise ConfigError(f"{where}: must be a table, got {_shown(v)}")
    for key in v:
        if key not in known:
            raise ConfigError(
                f"{where}.{_key(key)}: unknown setting (known: {', '.join(sorted(known))})"
            )
    return v


def _secret_seed() -> int:
    """A tournament's seed when its config gives none: 63 random bits, kept in the run's
    database (docs/tournaments.md)."""
    return secrets.randbits(63)
