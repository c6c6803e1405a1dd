"""A league's settings: what ``league init --config FILE`` takes (:func:`settings_from`), and the
sandbox they give strangers' bots (:func:`league_sandbox`), checked wherever a league builds or
runs one (``init``, ``submit``, ``run``) and by ``uno-arena sandbox check --config``.

A league runs strangers' bots. ``[sandbox] enabled = false`` ran them unconfined, as the
league's user (root in an examination: the bot read /etc/shadow and the environment's secrets,
ptraced pid 1 and mounted over the host's /tmp), and only ``league run`` said so, as
``sandbox: none (sandbox disabled)``. In a league ``enabled = false`` now needs the organiser's
explicit ``required = false`` as well; without it ``init`` refuses the file and ``submit`` and
``run`` refuse a league that holds it (an edited database, a league of an older init). With it,
each of them says on stderr, in one line, that strangers' bots run unconfined.
"""

from __future__ import annotations

import os
import pwd
import secrets
import sys
import tomllib
from pathlib import Path
from typing import Any

from ..config import ConfigError, SandboxSpec, _sandbox_from_dict, parse, read_text
from ..fileread import loads_toml
from .quota import league_section
from .store import LeagueError

__all__ = ["SECTIONS", "is_league_config", "league_sandbox", "settings_from"]

SECTIONS = ("rules", "time_control", "faults", "sandbox", "league")
"""The config sections a league takes from a tournament-style file (``[league]``, the
per-author limits, is the league's own: :mod:`.quota`)."""

UNCONFINED = (
    "sandbox.enabled = false: a league runs strangers' bots, and without the sandbox they would "
    "run as this user, with its files, secrets and processes; remove it (or, at your own risk, "
    "also set sandbox.required = false to run them unconfined)"
)


def is_league_config(data: dict[str, Any]) -> bool:
    """Whether a parsed config file is a league's (``league init --config``: only the sections
    of :data:`SECTIONS`), not a tournament's (which has its ``[[bots]]``)."""
    return bool(data) and set(data) <= set(SECTIONS)


def settings_from(path: Path | None) -> dict[str, Any]:
    """The league's settings: the sections of ``path`` that a league uses (validated as a
    tournament's), or the defaults. ``[sandbox] enabled = false`` without ``required = false``
    is refused (:data:`UNCONFINED`)."""
    data: dict[str, Any] = {}
    if path is not None:
        try:
            text = read_text(path)
        except ConfigError as exc:
            raise LeagueError(str(exc)) from None
        try:
            data = loads_toml(text)  # nested too deeply: bad TOML, not a traceback
        except tomllib.TOMLDecodeError as exc:
            raise LeagueError(f"{path}: not valid TOML ({exc})") from None
        extra = sorted(set(data) - set(SECTIONS))
        if extra:
            raise LeagueError(
                f"{path}: [{extra[0]}] is not a league setting (a league takes "
                f"{', '.join('[' + s + ']' for s in SECTIONS)}; bots are submitted)"
            )
    try:
        limits = league_section(data.get("league"))
    except ConfigError as exc:
        raise LeagueError(f"{path}: {exc}") from None
    probe = {k: data[k] for k in SECTIONS if k in data and k != "league"}
    probe["tournament"] = {"hands": 24}
    probe["bots"] = [{"name": f"probe-{i}", "token": f"probe-token-{i}"} for i in range(4)]
    try:
        cfg = parse(probe, path.parent if path else Path.cwd())
    except ConfigError as exc:
        raise LeagueError(f"{path}: {exc}") from None
    d = cfg.to_dict()
    out = {k: d[k] for k in SECTIONS if k != "league"}
    out["league"] = limits
    # the deals' secret: every deal seed derives from it and the table, block and deal numbers
    # each match's labels give a bot, so with a known seed (every league had 1) any stranger's
    # bot computed every seat's cards (an examination). Kept in the league's own records only
    out["seed"] = secrets.randbits(62) + 1
    # strangers' bots: a protection this machine cannot give refuses them, unless the file says
    # `required = false` (a tournament's bots are the organiser's, and only warn)
    given = data.get("sandbox")
    if not (isinstance(given, dict) and "required" in given):
        out["sandbox"] = {**out["sandbox"], "required": True}
    if not out["sandbox"].get("enabled", True) and out["sandbox"]["required"]:
        raise LeagueError(f"{path}: {UNCONFINED}")
    return out


def _user() -> str:
    try:
        return pwd.getpwuid(os.geteuid()).pw_name
    except KeyError:
        return f"uid {os.geteuid()}"


def league_sandbox(settings: dict[str, Any], where: str) -> SandboxSpec:
    """The sandbox of a league's stored settings (``where``: the league's records, for the
    message). Raises :class:`LeagueError` for ``enabled = false`` with ``required`` true (or
    unset: a league requires it) or for a ``sandbox`` setting that is no sandbox's; with
    ``required = false`` says on stderr, in one line, that strangers' bots run unconfined."""
    raw = settings.get("sandbox")
    try:
        if raw is not None and not isinstance(raw, dict):
            raise TypeError(f"a {type(raw).__name__}, not a table")
        spec = _sandbox_from_dict(raw)
    except (TypeError, ValueError) as exc:
        raise LeagueError(
            f"{where}: not a league database (meta.settings: sandbox: {str(exc)[:200]})"
        ) from None
    if spec.enabled:
        return spec
    if (raw or {}).get("required", True):
        raise LeagueError(
            f"{where}: the league's settings have sandbox.enabled = false with sandbox.required "
            "= true: its strangers' bots would run unconfined, as this user, so nothing is run; "
            "start a league with the sandbox (uno-arena league init DIR), or, at your own risk, "
            "set sandbox.required = false in its meta.settings"
        )
    print(
        f"uno-arena: WARNING: this league has sandbox.enabled = false and sandbox.required = "
        f"false: strangers' bots run UNCONFINED, as {_user()}, with every file, secret and "
        "process it can reach",
        file=sys.stderr,
        flush=True,
    )
    return spec
