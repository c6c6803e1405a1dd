"""``make test`` runs two pytest workers (tests/conftest.py): every file that builds in the SDK
folders under ``clients/`` must be in the one unit that a single worker runs in turn, or two
``npm ci`` / ``mvn package`` / ``cargo build`` runs could overwrite each other's output."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import CLIENT_BUILDS, unit_of

ROOT = Path(__file__).resolve().parents[1]
BUILDS_IN_CLIENTS = re.compile(
    r"tests\.clients\.langs|from \.langs import|"
    r'"(npm)", "ci"|"mvn"|"cargo", "(build|test)"|"go", "build"|clients/dist\.py|"dist\.py"'
)


def test_every_file_that_builds_in_clients_runs_on_one_worker() -> None:
    builders = []
    for path in sorted((ROOT / "tests").rglob("test_*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if path != Path(__file__).resolve() and BUILDS_IN_CLIENTS.search(path.read_text()):
            builders.append(rel)
            assert unit_of(f"{rel}::test_x") == CLIENT_BUILDS, (
                f"{rel} builds in clients/: add it to SHARES_CLIENT_BUILDS in tests/conftest.py"
            )
    assert "tests/clients/test_dist.py" in builders and len(builders) >= 5, builders


def test_other_files_are_units_of_their_own() -> None:
    assert unit_of("tests/test_layers.py::test_x[a::b]") == "tests/test_layers.py"
    assert unit_of("tests/tournament/test_e2e.py::T::test_y") == "tests/tournament/test_e2e.py"
    assert unit_of("tests/clients/test_chaos.py::test_z") == CLIENT_BUILDS
