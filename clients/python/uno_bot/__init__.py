"""UNO Arena bot SDK for Python (grpc.aio).

Subclass :class:`Bot` or decorate a function with :func:`bot`, then run it::

    from uno_bot import bot

    @bot(name="alice")
    def decide(request):
        return request.legal_actions[0].id

    if __name__ == "__main__":
        raise SystemExit(decide.main())  # --addr, --token, --name (or UNO_ARENA_* env vars)

See clients/python/README.md.
"""

from uno_server.gen.uno.v1.bot_pb2 import DecisionRequest

from .convert import to_engine_view, view_to_engine
from .sdk import (
    PROTOCOL_VERSION,
    Bot,
    BotClient,
    ClientConfig,
    FatalStreamError,
    FunctionBot,
    MatchState,
    bot,
    configure_logging,
    fallback_action,
    main,
    parse_args,
    run,
    run_async,
)

__all__ = [
    "PROTOCOL_VERSION",
    "Bot",
    "BotClient",
    "ClientConfig",
    "DecisionRequest",
    "FatalStreamError",
    "FunctionBot",
    "MatchState",
    "bot",
    "configure_logging",
    "fallback_action",
    "main",
    "parse_args",
    "run",
    "run_async",
    "to_engine_view",
    "view_to_engine",
]
