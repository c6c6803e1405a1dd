"""Build of UNO Arena: the rules engine, the service's per-move modules and the runner's wire
reader compiled with mypyc wherever they can be, pure otherwise.

``pip install .``, ``make venv`` (editable) and deploy/Dockerfile all compile the engine's hot
modules and the service modules every move runs through (the wire encoder ``wire.py``, the
table, its seat log and request desk, the seats, the conversions, the bot session and the input
limits) with mypyc when a C compiler is there (mypyc comes from the build requirements in
pyproject.toml). The engine plays about three times the hands per second; the compiled wire
encoder costs about a third less per move, and the other service modules about 7% less of the
server's CPU a hand (docs/performance.md, eleventh and twelfth passes). Behaviour is identical:
tests/engine/test_builds.py holds the two engine builds to the same transcripts,
tests/service/test_wire_build.py runs the wire, limits, per-move and whole-match service tests
under the other build, and
tests/tournament/test_wirejson.py the two builds of ``uno_tournament/wirejson.py`` (the runner
reads each hand's events from their encoding with it, about four times faster compiled) to the
replay text of the decoded events.

``UNO_ARENA_MYPYC`` chooses:
- ``auto`` (default): compile if a C compiler is found; if it is not, or compiling fails,
  install pure Python (a warning says so);
- ``1``: compile or fail (the benchmark environment, CI's build check);
- ``0``: pure Python only.

Next to the compiled modules the build writes ``_native_build.json``, the SHA-256 of each source
it compiled. At import, ``uno_server.engine`` loads the compiled modules only if every source
still matches, so a compiled module never shadows a .py file edited after the build: the pure
sources run instead (``uno_server.engine.BUILD`` says why) until ``make venv`` rebuilds.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import shutil
import sys
import sysconfig
from pathlib import Path
from typing import Any

from setuptools import setup
from setuptools.command.build_ext import build_ext

ENGINE = Path("server", "uno_server", "engine")
COMPILED_MODULES = (
    "cards", "actions", "events", "errors", "rules", "hand", "bots", "simulate", "views",
)  # fmt: skip
"""Must match uno_server.engine._build.COMPILED_MODULES."""
GROUP = "uno_server.engine._native"
"""mypyc's shared library, kept inside the package (not a top-level module)."""
SERVICE = Path("server", "uno_server", "service")
SERVICE_MODULES = (
    "wire", "table", "seat_log", "request_desk", "seats", "convert", "session", "limits",
)  # fmt: skip
"""Must match uno_server.service._build.COMPILED_MODULES: the modules every move runs through."""
SERVICE_GROUP = "uno_server.service._native"
TOURNAMENT = Path("tournament", "uno_tournament")
TOURNAMENT_MODULES = ("wirejson",)
"""Must match uno_tournament._build.COMPILED_MODULES: the runner's per-hand wire reader."""
TOURNAMENT_GROUP = "uno_tournament._native"
RECORD = "_native_build.json"
BUILDS = (
    (ENGINE, COMPILED_MODULES, GROUP),
    (SERVICE, SERVICE_MODULES, SERVICE_GROUP),
    (TOURNAMENT, TOURNAMENT_MODULES, TOURNAMENT_GROUP),
)
"""(package directory, modules, mypyc group): each group is its own shared library with its
own record of the sources it was built from."""


def _compiler() -> str | None:
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shutil.which(shlex.split(cc)[0])


def _extensions() -> list[Any]:
    mode = os.environ.get("UNO_ARENA_MYPYC", "auto")
    if mode not in ("auto", "0", "1"):
        sys.exit(f"UNO_ARENA_MYPYC must be auto, 0 or 1, not {mode!r}")
    if mode == "0":
        return []
    if mode == "auto" and _compiler() is None:
        print("uno-arena: no C compiler found; installing the pure-Python engine", file=sys.stderr)
        return []
    try:
        from mypyc.build import mypycify
    except ImportError:
        if mode == "1":
            raise
        print("uno-arena: mypyc is missing; installing the pure-Python engine", file=sys.stderr)
        return []
    exts = []
    for where, modules, group in BUILDS:
        paths = [str(where / f"{m}.py") for m in modules]
        try:
            exts += mypycify(paths, opt_level="3", group_name=group)
        except SystemExit as exc:  # mypyc exits when its type check fails
            if mode == "1":
                raise
            print(
                f"uno-arena: mypyc could not compile {group.rpartition('.')[0]} ({exc}); "
                "installing its pure-Python modules",
                file=sys.stderr,
            )
    for ext in exts:
        ext.optional = mode == "auto"  # a failed compile falls back to the pure sources
    return exts


class BuildExt(build_ext):
    """Builds the extensions, then records which sources the compiled modules came from."""

    def run(self) -> None:
        self._built: set[str] = set()
        super().run()
        for where, modules, group in BUILDS:
            self._record(where, modules, group)

    def _record(self, where: Path, modules: tuple[str, ...], group: str) -> None:
        package = ".".join(where.parts[1:])
        target = where if self.inplace else Path(self.build_lib, *where.parts[1:])
        record = target / RECORD
        # an extension left by an earlier build of other modules (build/ persists between
        # builds) would end up in the wheel and fail to load against the new shared library
        ours = [e for e in self.extensions if e.name.rpartition(".")[0] == package]
        wanted = {self.get_ext_filename(e.name.rpartition(".")[2]) for e in ours}
        for old in target.glob(f"*{self.get_ext_filename('x').removeprefix('x')}"):
            if old.name not in wanted:
                old.unlink()
        names = {f"{group}__mypyc", *(f"{package}.{m}" for m in modules)}
        if not ours or not names <= self._built:
            # nothing usable was compiled now: whatever an older build left, the package
            # runs the pure sources
            record.unlink(missing_ok=True)
            return
        sources = {m: hashlib.sha256((where / f"{m}.py").read_bytes()).hexdigest() for m in modules}
        target.mkdir(parents=True, exist_ok=True)
        info = {"python": sys.version.split()[0], "sources": sources}
        record.write_text(json.dumps(info, indent=1, sort_keys=True) + "\n")

    def build_extension(self, ext: Any) -> None:
        super().build_extension(ext)  # raises when it fails; an optional one is then skipped
        self._built.add(ext.name)


setup(ext_modules=_extensions(), cmdclass={"build_ext": BuildExt})
