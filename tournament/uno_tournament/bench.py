"""``make bench-tournament``: eight Python example bots (four heuristic, four random) as separate
processes, an embedded server, 16 concurrent tables. The last line reads::

    bench-tournament: <H> hands/s, <M> moves/s, <N> hands, <E> errors

Rates are measured from the moment every bot is connected to the last stored hand. Moves are
the actions of the hands (bots' and takeover bots' decisions). Errors are hand attempts that had
to be repeated, bot process crashes, timeouts and rejected (illegal) actions.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

from .config import BotSpec, FaultSpec, TournamentConfig
from .runner import Runner
from .sharding import new_tournament_id
from .store import Store


def bench_config(concurrency: int, blocks: int) -> TournamentConfig:
    bots = []
    for i in range(8):
        module = "heuristic_bot" if i < 4 else "random_bot"
        bots.append(
            BotSpec(
                name=f"py-{module.split('_', maxsplit=1)[0]}-{i}",
                command=(
                    "{python}",
                    "-m",
                    f"uno_bot.examples.{module}",
                    "--log-level",
                    "warning",
                    "--addr",
                    "{addr}",
                    "--token",
                    "{token}",
                    "--name",
                    "{name}",
                ),
                cwd=os.getcwd(),
            )
        )
    return TournamentConfig(
        name="bench",
        bots=tuple(bots),
        seed=1,
        blocks=blocks,
        concurrency=concurrency,
        rules={"seats": 4, "scoring": "single_hand", "uno_window_ms": 300},
        faults=FaultSpec(startup_timeout_s=60.0),
    )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench-tournament", description=__doc__)
    ap.add_argument("--concurrency", type=int, default=16)
    ap.add_argument("--hands", type=int, default=480, help="hands to play (default 480)")
    ap.add_argument("--out", help="keep the tournament folder here (default: a temp folder)")
    args = ap.parse_args(argv)
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    config = bench_config(args.concurrency, blocks=1)
    with tempfile.TemporaryDirectory(prefix="bench-tournament-") as tmp:
        out = Path(args.out) if args.out else Path(tmp)
        tid = new_tournament_id(config.name)
        store = Store.create(out, {"tournament_id": tid, "config": config.to_dict()})
        log = io.StringIO()
        runner = Runner(out, store, config, tid, progress=False, stream=log, max_hands=args.hands)
        t0 = time.monotonic()
        try:
            asyncio.run(runner.run())
        finally:
            hands = list(store.hands())
            store.close()
        prog = runner.progress
        assert prog is not None
        elapsed = max(1e-9, time.monotonic() - prog.started)
        moves = sum(h.moves for h in hands)
        errors = (
            prog.retries
            + sum(p.crashes for p in runner.bots.values())
            + sum(s.timeouts + s.illegal for h in hands for s in h.seats)
        )
        print(
            f"setup {prog.started - t0:.1f} s (server, 8 bot processes), "
            f"play {elapsed:.1f} s, concurrency {config.concurrency}",
            file=sys.stderr,
        )
    print(
        f"bench-tournament: {len(hands) / elapsed:.1f} hands/s, {moves / elapsed:.0f} moves/s, "
        f"{len(hands)} hands, {errors} errors"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
