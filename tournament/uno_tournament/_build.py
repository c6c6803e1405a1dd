"""Which build of the runner's wire reader (``wirejson.py``) this process runs: mypyc-compiled
or pure.

``wirejson.py`` turns every stored hand's events into replay JSON straight from their encoding:
the runner's hottest Python per hand. setup.py compiles it with mypyc beside the engine and the
service's wire encoder, into its own shared library, and records the source's SHA-256
(``_native_build.json``). The selection is the engine's (``uno_server.engine._build``): the
compiled module is loaded only when it was built from exactly the ``wirejson.py`` beside it, and
``UNO_ARENA_ENGINE`` (auto, pure, compiled) chooses for all three. ``uno_tournament`` imports
this module before anything else.
"""

from __future__ import annotations

from pathlib import Path
from typing import Final

from uno_server.engine import _build

COMPILED_MODULES: Final = ("wirejson",)
"""The tournament modules setup.py compiles (keep setup.py's TOURNAMENT_MODULES equal)."""
SHARED_LIB: Final = "_native__mypyc"
PACKAGE: Final = __name__.rpartition(".")[0]
HERE: Final = Path(__file__).resolve().parent


def compiled_problem(here: Path = HERE) -> str | None:
    """Why the compiled wire reader in ``here`` cannot be used, or ``None`` if it can."""
    return _build.compiled_problem(here, COMPILED_MODULES, SHARED_LIB)


def choose() -> tuple[bool, str]:
    """(compiled, description), after installing the pure-source finder when needed."""
    return _build.choose(PACKAGE, HERE, COMPILED_MODULES, SHARED_LIB)
