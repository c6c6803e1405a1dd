"""Which build of the service's per-move modules this process runs: mypyc-compiled or pure.

Every move runs through these modules: ``wire.py`` encodes each DecisionRequest, seat view and
common event straight to bytes; ``table.py``, ``seat_log.py`` and ``request_desk.py`` run the
hand and its requests; ``seats.py``, ``convert.py``, ``session.py`` and ``limits.py`` hold the
seats, convert events, carry the bot's stream and check its input. setup.py compiles them with
mypyc beside the engine, into their own shared library, and records each source's SHA-256
(``_native_build.json``). The selection is the engine's (``uno_server.engine._build``): the
compiled modules are loaded only when all of them were built from exactly the sources beside
them, and ``UNO_ARENA_ENGINE`` (auto, pure, compiled) chooses for both. ``uno_server.service``
imports this module before anything else.

Left pure: ``arena.py``, ``rejections.py`` and ``ratelog.py`` (tests replace their module
globals, which a compiled module would not see), the gRPC servicers (``bot_stream.py``,
``admin.py``), the server's start-up (``server.py``) and everything run once a match rather than
once a move.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from uno_server.engine import _build

COMPILED_MODULES: Final = (
    "wire", "table", "seat_log", "request_desk", "seats", "convert", "session", "limits",
)  # fmt: skip
"""The service modules setup.py compiles (keep setup.py's SERVICE_MODULES equal)."""
SHARED_LIB: Final = "_native__mypyc"
PACKAGE: Final = __name__.rpartition(".")[0]
HERE: Final = Path(__file__).resolve().parent


def compiled_problem(here: Path = HERE) -> str | None:
    """Why the compiled service modules in ``here`` cannot be used, or ``None`` if they can."""
    return _build.compiled_problem(here, COMPILED_MODULES, SHARED_LIB)


def choose() -> tuple[bool, str]:
    """(compiled, description), after installing the pure-source finder when needed."""
    return _build.choose(PACKAGE, HERE, COMPILED_MODULES, SHARED_LIB)
