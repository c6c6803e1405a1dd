"""A test bot that is slow to stop: the SDK heuristic bot run as a child of a wrapper that, on
SIGTERM, writes the file ``--marker`` names and stays until it is killed. The runner's stop of
its bots (SIGTERM, then SIGKILL after the grace) then lasts the whole grace, and the marker says
when it began."""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import FrameType


def main() -> int:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--marker", required=True)
    ns, rest = pre.parse_known_args(sys.argv[1:])
    marker = Path(ns.marker)

    def on_term(signum: int, frame: FrameType | None) -> None:
        marker.write_text("stopping\n")  # and stay: only SIGKILL ends this process

    signal.signal(signal.SIGTERM, on_term)
    child = subprocess.Popen([sys.executable, "-m", "uno_bot.examples.heuristic_bot", *rest])
    child.wait()
    while True:
        time.sleep(1)


if __name__ == "__main__":
    raise SystemExit(main())
