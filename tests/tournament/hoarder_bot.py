"""A test bot that never plays a card: every required request is answered with its default
action (a turn: draw; after a draw: pass), every optional one is declined. Four of them hold a
hand open for ever once the draw pile runs dry."""

from __future__ import annotations

import sys
from typing import Any

from uno_bot import Bot


class HoarderBot(Bot):
    name = "hoarder"
    threaded = False

    def decide(self, request: Any, state: Any) -> int | None:
        if not request.required:
            return None
        return int(request.default_action_id)


if __name__ == "__main__":
    raise SystemExit(HoarderBot().main(sys.argv[1:]))
