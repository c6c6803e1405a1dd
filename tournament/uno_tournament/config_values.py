"""The value checks of a tournament's configuration (cut from :mod:`.config` along its seam):
each takes the field's path (``time_control.decision_ms``) and raises :class:`ConfigError`
naming it, with the bad value repeated at most :data:`MAX_ECHO` characters long."""

from __future__ import annotations

import json
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


def _shown(v: Any) -> str:
    """A value as an error message repeats it: its repr, cut to MAX_ECHO characters."""
    return _cut(repr(v))


def _key(key: Any) -> str:
    """A key as TOML writes it: bare if it can be, else quoted (never a raw newline); cut to
    MAX_ECHO characters."""
    text = str(key)
    return _cut(text if _BARE_KEY.match(text) else json.dumps(text))


def _int(where: str, v: Any, lo: int, hi: int) -> int:
    if not isinstance(v, int) or isinstance(v, bool):
        raise ConfigError(f"{where}: must be an integer, got {_shown(v)}")
    if not lo <= v <= hi:
        raise ConfigError(f"{where}: must be {lo}-{hi}, got {v}")
    return v


def _float(where: str, v: Any, lo: float, hi: float) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ConfigError(f"{where}: must be a number, got {_shown(v)}")
    if not lo <= v <= hi:
        raise ConfigError(f"{where}: must be {lo:g}-{hi:g}, got {v}")
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
