"""How ``make test`` spreads the suite over two pytest workers (pytest-xdist, ``-n 2 --dist
loadfile``; the Makefile's ``TEST_WORKERS``), with one change to ``loadfile``.

Every test file is one unit of work, so that module fixtures (a played tournament, a live
server) are built once. The files that build or run the SDKs' example bots in their folders
under ``clients/`` (``npm ci``, ``mvn package``, ``cargo build`` into ``clients/*/target``,
``clients/dist.py``) share those folders, so together they are one unit: one worker runs them
in turn, never two at once. A plain ``pytest`` (no ``-n``) is unaffected.

(pytest-xdist's own ``loadgroup`` marks cannot do this under pytest 9.2: it appends the group to
``item._nodeid``, which pytest no longer reads.)"""

from __future__ import annotations

from typing import Any

# the game server's gRPC transport setting (uno_server._transport) is made when the package is
# first imported, and gRPC reads it once: import it before any test module imports grpc, so
# that the servers the tests start in process run as `uno-arena serve` does
import uno_server  # noqa: F401

CLIENT_BUILDS = "client-builds"
"""The unit of the files that build in ``clients/``."""
SHARES_CLIENT_BUILDS = (
    "tests/clients/",
    "tests/tournament/test_league_e2e.py",  # builds the Go example bot (tests.clients.langs)
    "tests/tournament/test_sandbox.py",  # builds every language's example bot if it is not
)


def unit_of(nodeid: str) -> str:
    """The unit of work of a test: its file, or CLIENT_BUILDS."""
    path = nodeid.split("::", 1)[0]
    return CLIENT_BUILDS if path.startswith(SHARES_CLIENT_BUILDS) else path


def pytest_xdist_make_scheduler(config: Any, log: Any) -> Any:
    if config.getvalue("dist") != "loadfile":
        return None  # xdist's own
    from xdist.scheduler import LoadScopeScheduling  # type: ignore[import-untyped]

    class FileScheduling(LoadScopeScheduling):  # type: ignore[misc]
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid)

    return FileScheduling(config, log)
