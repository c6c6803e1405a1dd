"""Which build of the wire encoder (``wire.py``) this process runs: mypyc-compiled or pure.

``wire.py`` encodes every DecisionRequest, seat view and common event straight to bytes: the
service's hottest Python after the engine. setup.py compiles it with mypyc beside the engine,
into its own shared library, and records the source's SHA-256 (``_native_build.json``). The
selection is the engine's (``uno_server.engine._build``): the compiled module is loaded only when
it was built from exactly the ``wire.py`` beside it, and ``UNO_ARENA_ENGINE`` (auto, pure,
compiled) chooses for both. ``uno_server.service`` imports this module before anything else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from uno_server.engine import _build

COMPILED_MODULES: Final = ("wire",)
"""The service modules setup.py compiles (keep setup.py's SERVICE_MODULES equal)."""
SHARED_LIB: Final = "_native__mypyc"
PACKAGE: Final = __name__.rpartition(".")[0]
HERE: Final = Path(__file__).resolve().parent


def compiled_problem(here: Path = HERE) -> str | None:
    """Why the compiled wire encoder in ``here`` cannot be used, or ``None`` if it can."""
    return _build.compiled_problem(here, COMPILED_MODULES, SHARED_LIB)


def choose() -> tuple[bool, str]:
    """(compiled, description), after installing the pure-source finder when needed."""
    return _build.choose(PACKAGE, HERE, COMPILED_MODULES, SHARED_LIB)
