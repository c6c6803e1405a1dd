"""The names of the SDK's former single module, re-exported so that ``from uno_bot.sdk import
...`` keeps working. New code imports from :mod:`uno_bot` (or from the module that owns a name):

* :mod:`uno_bot.api`: the user API (:class:`Bot`, :func:`bot`, :class:`MatchState`);
* :mod:`uno_bot.client`: the connection, session and reconnect (:class:`BotClient`);
* :mod:`uno_bot.deciding`: running ``decide`` against the deadline;
* :mod:`uno_bot.cli`: the command line.
"""

from __future__ import annotations

from ._log import configure_logging
from .api import Bot, DecideFn, DecideResult, DecisionRequest, FunctionBot, MatchState, bot
from .cli import PROG, fail, main, parse_args, run_main
from .client import (
    FATAL_CODES,
    MAX_ACTION_BATCH,
    PROTOCOL_VERSION,
    BotClient,
    ClientConfig,
    FatalStreamError,
    run,
    run_async,
)
from .deciding import MAX_MARGIN_MS, decide_budget, fallback_action

__all__ = [
    "FATAL_CODES",
    "MAX_ACTION_BATCH",
    "MAX_MARGIN_MS",
    "PROG",
    "PROTOCOL_VERSION",
    "Bot",
    "BotClient",
    "ClientConfig",
    "DecideFn",
    "DecideResult",
    "DecisionRequest",
    "FatalStreamError",
    "FunctionBot",
    "MatchState",
    "bot",
    "configure_logging",
    "decide_budget",
    "fail",
    "fallback_action",
    "main",
    "parse_args",
    "run",
    "run_async",
    "run_main",
]
