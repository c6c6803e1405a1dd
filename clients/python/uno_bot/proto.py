"""The ``uno.v1`` protocol messages and stubs, generated into this package (``make proto``).

>>> from uno_bot.proto import bot_pb2, cards_pb2, game_pb2
>>> game_pb2.ACTION_KIND_PLAY

The SDK carries its own copy of the generated code, so it needs neither the server nor a
``uno`` package on ``sys.path``. Message classes are those of the default protobuf descriptor
pool, so they are the very same classes as in any other copy generated from the same files.
"""

from ._proto.uno.v1 import (
    admin_pb2,
    admin_pb2_grpc,
    bot_pb2,
    bot_pb2_grpc,
    cards_pb2,
    errors_pb2,
    game_pb2,
)

__all__ = [
    "admin_pb2",
    "admin_pb2_grpc",
    "bot_pb2",
    "bot_pb2_grpc",
    "cards_pb2",
    "errors_pb2",
    "game_pb2",
]
