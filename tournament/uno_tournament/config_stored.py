"""The configuration a run stored in its database, read back for ``report``, ``resume``,
``watch`` and ``verify``, and checked against a config file's limits: the database is a file
too (an examination edited ``blocks = -3`` and ``seed = "abc"`` there, and the report rated
them). Cut from :mod:`uno_tournament.config`, at its 800-line limit."""

from __future__ import annotations

from pathlib import Path

from uno_server.engine.errors import InvalidRulesError
from uno_server.engine.rules import RuleSet

from . import schedule
from .config import (
    ALPHA_RANGE,
    FORFEIT_DESCRIPTIONS,
    INDIFFERENCE_RANGE,
    MAX_HANDS_RANGE,
    UNTIL_VALUES,
    ConfigError,
    TournamentConfig,
)
from .config_values import _float, _int, _shown
from .store import ResultStore


def _check_stored(c: TournamentConfig) -> None:
    """The stored configuration within a config file's limits."""
    _int("tournament.seed", c.seed, 0, 2**63 - 1)
    _int("tournament.blocks", c.blocks, 1, 10_000)
    _int("tournament.concurrency", c.concurrency, 1, 1024)
    _int("tournament.pair_meetings", c.pair_meetings, 1, 100)
    _int("tournament.hands", c.hands, 0, schedule.MAX_PLAN_HANDS)
    if c.precision_elo:
        _float("tournament.precision_elo", c.precision_elo, 1.0, 1000.0)
    if c.until not in ("", *UNTIL_VALUES):
        raise ConfigError(f"tournament.until: {_shown(c.until)} is not a value a run takes")
    if c.until:
        _float("tournament.alpha", c.alpha, *ALPHA_RANGE)
        _float("tournament.indifference_elo", c.indifference_elo, *INDIFFERENCE_RANGE)
        _int("tournament.max_hands", c.max_hands, *MAX_HANDS_RANGE)
    if c.faults.forfeit not in FORFEIT_DESCRIPTIONS:
        raise ConfigError(f"faults.forfeit: {_shown(c.faults.forfeit)} is not a policy")
    names = [b.name for b in c.bots]
    if len(names) < 4 or len(set(names)) != len(names):
        raise ConfigError("bots: a table needs four distinct bots")
    try:
        RuleSet.from_dict(c.rules)
    except InvalidRulesError as exc:
        raise ConfigError(str(exc)) from exc


def load_config(store: ResultStore, out: Path | str) -> TournamentConfig:
    meta = store.meta()
    try:
        config = TournamentConfig.from_dict(meta["config"])
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{out}: the stored configuration is unreadable ({exc})") from exc
    try:
        _check_stored(config)
    except ConfigError as exc:
        raise ConfigError(
            f"{out}: the stored configuration's {exc} (the database was edited; restore it "
            "from a copy)"
        ) from None
    return config
