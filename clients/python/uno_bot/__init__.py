"""UNO Arena bot SDK for Python (grpc.aio).

Subclass :class:`Bot` or decorate a function with :func:`bot`, then run it::

    from uno_bot import bot

    @bot(name="alice")
    def decide(request):
        return request.legal_actions[0].id

    if __name__ == "__main__":
        raise SystemExit(decide.main())  # --addr, --token, --name (or UNO_ARENA_* env vars)

The protocol messages are in :mod:`uno_bot.proto` (``from uno_bot.proto import game_pb2``); see
the README of the ``uno-arena-bot`` distribution.
"""

from ._log import configure_logging
from ._version import __version__
from .address import Address, AddressError, parse_address
from .api import Bot, FunctionBot, MatchState, bot
from .cli import main, parse_args
from .client import PROTOCOL_VERSION, BotClient, ClientConfig, FatalStreamError, run, run_async
from .deciding import decide_budget, fallback_action
from .helpers import card_points, is_play_of, last_played_seat, wild_color
from .proto import bot_pb2

DecisionRequest = bot_pb2.DecisionRequest


__all__ = [
    "PROTOCOL_VERSION",
    "Address",
    "AddressError",
    "Bot",
    "BotClient",
    "ClientConfig",
    "DecisionRequest",
    "FatalStreamError",
    "FunctionBot",
    "MatchState",
    "__version__",
    "bot",
    "card_points",
    "configure_logging",
    "decide_budget",
    "fallback_action",
    "is_play_of",
    "last_played_seat",
    "main",
    "parse_address",
    "parse_args",
    "run",
    "run_async",
    "wild_color",
]
