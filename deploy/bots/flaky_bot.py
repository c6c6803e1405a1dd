"""A deliberately unreliable bot for the monitoring demo: the heuristic player that now and then
answers too late (a timeout), sends an action id that is not legal (an illegal action), or drops
its stream and reconnects (a disconnect), and with ``--crash-after`` exits as if it crashed (the
runner restarts it: a bot crash, and a takeover when it stays away past the reconnect grace). It
gives the Grafana panels on timeouts, illegal actions, disconnects, takeovers and crashes
something real to show.

Run (the demo tournaments in deploy/tournament/ start it for you)::

    python deploy/bots/flaky_bot.py --addr 127.0.0.1:50051 --token T --name py-flaky \\
        --slow 0.02 --illegal 0.02 --disconnect-every 20
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import random
import signal
import sys
from collections.abc import Sequence

from uno_bot import ClientConfig, DecisionRequest, configure_logging, parse_args
from uno_bot.examples.heuristic_bot import HeuristicBot
from uno_bot.proto import bot_pb2
from uno_bot.sdk import BotClient

ILLEGAL_ID = 1_000_000
"""An action id no request ever offers."""


class FlakyClient(BotClient):
    """A :class:`BotClient` that misbehaves on purpose, at the given rates per required decision."""

    def __init__(
        self,
        bot: HeuristicBot,
        config: ClientConfig,
        *,
        slow: float,
        illegal: float,
        seed: int | None = None,
    ) -> None:
        super().__init__(bot, config)
        self.slow = slow
        self.illegal = illegal
        self.chaos = random.Random(seed)
        self._closing: dict[str, asyncio.Event] = {}
        """Slow answers waiting for the server to close their request (its timeout)."""

    def budget(self, req: DecisionRequest) -> float | None:
        return None  # no client-side cut-off: a late answer reaches the server late

    async def _handle_decision(self, req: DecisionRequest) -> None:
        if req.required:
            r = self.chaos.random()
            if r < self.illegal:
                # rejected by the server; the SDK then answers again with the fallback action
                self._answer(req, ILLEGAL_ID, retried=False)
                return
            if r < self.illegal + self.slow:
                # answer only once the server has said the request timed out: late by cause,
                # not by a margin. Sleeping 50 ms past the deadline, the answer was cancelled
                # by the SDK when the timeout's RequestClosed came first, or taken in time when
                # a busy server's timer fired late: CI once saw no late answer at all
                closed = self._closing.setdefault(req.request_id, asyncio.Event())
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(closed.wait(), max(req.time_left_ms, 0) / 1000 + 30)
                self._closing.pop(req.request_id, None)
        await super()._handle_decision(req)

    def _on_request_closed(self, msg: bot_pb2.RequestClosed) -> None:
        waiting = self._closing.get(msg.request_id)
        if waiting is not None:
            # the SDK cancels a closed request's decision; this one is meant to answer late
            self._tasks.pop(msg.request_id, None)
            waiting.set()
        super()._on_request_closed(msg)

    def reconnect(self) -> None:
        """Drop the current stream; :meth:`run` reconnects (and resumes) after its backoff."""
        self._drop_session()


CRASH_STATUS = 3


async def run(client: FlakyClient, disconnect_every: float, crash_after: float = 0.0) -> None:
    async def dropper() -> None:
        while disconnect_every > 0:
            await asyncio.sleep(disconnect_every * (0.5 + client.chaos.random()))
            client.reconnect()

    async def crasher() -> None:
        await asyncio.sleep(crash_after * (0.5 + client.chaos.random()))
        os._exit(CRASH_STATUS)  # no goodbye, no flush: what a crash looks like to the server

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, client.stop)
    tasks = [asyncio.create_task(dropper())]
    if crash_after > 0:
        tasks.append(asyncio.create_task(crasher()))
    try:
        await client.run()
    finally:
        for task in tasks:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    p.add_argument("--slow", type=float, default=0.02, help="share of late answers")
    p.add_argument("--illegal", type=float, default=0.02, help="share of illegal actions")
    p.add_argument(
        "--disconnect-every", type=float, default=20.0, help="mean seconds between drops (0: off)"
    )
    p.add_argument(
        "--crash-after",
        type=float,
        default=0.0,
        help="exit with status 3 after about this many seconds, like a crash (0: never)",
    )
    p.add_argument("--seed", type=int, default=None)
    ns, cfg = parse_args(argv, default_name="py-flaky", parser=p)
    configure_logging(ns.log_level, json=ns.log_json)
    client = FlakyClient(HeuristicBot(), cfg, slow=ns.slow, illegal=ns.illegal, seed=ns.seed)
    try:
        asyncio.run(run(client, ns.disconnect_every, ns.crash_after))
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
