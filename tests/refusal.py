"""What every command owes bad input: one plain line on stderr and exit status 2. Shared by the
tests of the command line's refusals."""

from __future__ import annotations

import os
import subprocess
import sys


def refused(*args: str, prefix: str = "uno-arena", timeout: float = 120) -> str:
    """Run ``uno-arena ARGS`` (without UNO_* variables from the environment), assert that it
    refuses in one line that starts with ``prefix`` and exits 2, and return that line."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNO_")}
    res = subprocess.run(
        [sys.executable, "-m", "uno_server.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, (args, res.stdout[-500:], res.stderr[-2000:])
    assert lines[0].startswith(prefix), lines[0]
    return lines[0]
