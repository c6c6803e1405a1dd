"""Optional compiled build of the rules engine.

``pip install .`` installs pure Python. With ``UNO_ARENA_MYPYC=1`` (and mypy installed, as the
benchmark environment does) the engine's hot modules are compiled with mypyc, which about
doubles hands per second; behaviour is identical and the test suite runs against both.
"""

import os

from setuptools import setup

ext_modules = []
if os.environ.get("UNO_ARENA_MYPYC") == "1":
    from mypyc.build import mypycify

    ext_modules = mypycify(
        [
            f"server/uno_server/engine/{m}.py"
            for m in ("cards", "actions", "events", "errors", "rules", "hand", "bots", "simulate")
        ],
        opt_level="3",
    )

setup(ext_modules=ext_modules)
