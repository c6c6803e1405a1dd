"""A test bot that crashes: the SDK heuristic bot that exits with status 3 after
``--crash-after`` decisions, every time it is started."""

from __future__ import annotations

import argparse
import os
import sys
from typing import Any

from uno_bot.examples.heuristic_bot import HeuristicBot


class CrashyBot(HeuristicBot):
    name = "crashy"

    def __init__(self, crash_after: int) -> None:
        super().__init__()
        self.crash_after = crash_after
        self.decisions = 0

    def decide(self, request: Any, state: Any) -> int | None:
        self.decisions += 1
        if self.decisions >= self.crash_after:
            os._exit(3)
        return super().decide(request, state)


def main() -> int:
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--crash-after", type=int, default=30)
    ns, rest = pre.parse_known_args(sys.argv[1:])
    return CrashyBot(ns.crash_after).main(rest)


if __name__ == "__main__":
    raise SystemExit(main())
