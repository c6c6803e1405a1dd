"""What every command owes bad input: one plain line on stderr and exit status 2. Shared by the
tests of the command line's refusals."""

from __future__ import annotations

import os
import subprocess
import sys


def cli(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``uno-arena ARGS`` as a user would (a fresh interpreter, without UNO_* variables
    from the environment) and return what it did."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNO_")}
    return subprocess.run(
        [sys.executable, "-m", "uno_server.cli", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def refused(*args: str, prefix: str = "uno-arena", timeout: float = 120) -> str:
    """Run ``uno-arena ARGS`` (as :func:`cli` does), assert that it refuses in one line that
    starts with ``prefix`` and exits 2, and return that line."""
    res = cli(*args, timeout=timeout)
    lines = res.stderr.strip().splitlines()
    assert res.returncode == 2 and len(lines) == 1, (args, res.stdout[-500:], res.stderr[-2000:])
    assert lines[0].startswith(prefix), lines[0]
    return lines[0]
