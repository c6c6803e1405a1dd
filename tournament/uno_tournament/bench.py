"""``make bench-tournament``: eight Python example bots (four heuristic, four random) as separate
processes, 16 concurrent tables per shard; the same hands played on 1 shard (the runner and one
game server process) and then on 2 shards (``--shards 2``: two workers, each with its own server
and its own 8 bot processes), in the same invocation. The last line reads::

    bench-tournament: <H> hands/s, <M> moves/s, <N> hands, <E> errors, shards 2 <H2> hands/s,
    <C> hands per server CPU-second

``H``, ``M``, ``N`` are the 1-shard run's; ``E`` counts both runs; ``H2`` is the 2-shard run's
rate; ``C`` is the hands of both runs over the CPU seconds their game servers used while the
tables ran (what one core of game server plays, the figure that sizes a cluster). Rates are
measured from the moment every bot is connected to the last stored hand. Moves are the actions
of the hands. Errors are hand attempts that had to be repeated, bot process crashes, timeouts
and rejected (illegal) actions.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import resource
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
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


@dataclass
class Measured:
    shards: int
    hands: int
    moves: int
    errors: int
    play_s: float
    setup_s: float
    server_cpu_s: float
    runner_cpu_s: float = 0.0
    other_cpu_s: float = 0.0
    """CPU of every other process the run started (bots, shard workers, the refit process)."""

    @property
    def hands_per_s(self) -> float:
        return self.hands / self.play_s

    @property
    def moves_per_s(self) -> float:
        return self.moves / self.play_s


def measure(config: TournamentConfig, shards: int, hands: int, keep: Path | None) -> Measured:
    """One run on ``shards`` shards (each its own server and bot processes)."""
    with tempfile.TemporaryDirectory(prefix="bench-tournament-") as tmp:
        out = keep / f"shards-{shards}" if keep else Path(tmp)
        tid = new_tournament_id(config.name)
        store = Store.create(out, {"tournament_id": tid, "config": config.to_dict()})
        log = io.StringIO()
        runner = Runner(
            out, store, config, tid, progress=False, stream=log, max_hands=hands, shards=shards
        )
        t0 = time.monotonic()
        self0 = resource.getrusage(resource.RUSAGE_SELF)
        kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        try:
            asyncio.run(runner.run())
        finally:
            rows = list(store.hand_rows())
            crashes = len(store.incidents(["crash"]))
            store.close()
        prog = runner.progress
        assert prog is not None
        play = max(1e-9, time.monotonic() - prog.started)
        errors = prog.retries + crashes + sum(s.timeouts + s.illegal for h in rows for s in h.seats)
        self1 = resource.getrusage(resource.RUSAGE_SELF)
        kids1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        own = self1.ru_utime + self1.ru_stime - self0.ru_utime - self0.ru_stime
        kids = kids1.ru_utime + kids1.ru_stime - kids0.ru_utime - kids0.ru_stime
        return Measured(
            shards,
            len(rows),
            sum(h.moves for h in rows),
            errors,
            play,
            prog.started - t0,
            runner.server_cpu_s,
            own,
            max(0.0, kids - runner.server_cpu_s),
        )


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench-tournament", description=__doc__)
    ap.add_argument("--concurrency", type=int, default=16, help="tables at once, per shard")
    ap.add_argument("--hands", type=int, default=480, help="hands per run (default 480)")
    ap.add_argument("--out", help="keep the tournament folders here (default: temp folders)")
    args = ap.parse_args(argv)
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    config = bench_config(args.concurrency, blocks=1)
    keep = Path(args.out) if args.out else None
    runs = [measure(config, n, args.hands, keep) for n in (1, 2)]
    for m in runs:
        print(
            f"shards {m.shards}: {m.hands} hands in {m.play_s:.1f} s ({m.hands_per_s:.1f}/s, "
            f"{m.moves_per_s:.0f} moves/s), setup {m.setup_s:.1f} s; CPU seconds: servers "
            f"{m.server_cpu_s:.1f} (tables only), runner {m.runner_cpu_s:.1f}, bots/workers/"
            f"startup {m.other_cpu_s:.1f}; {m.errors} errors",
            file=sys.stderr,
        )
    one, two = runs
    hands = sum(m.hands for m in runs)
    cpu = sum(m.server_cpu_s for m in runs)
    per_cpu = hands / cpu if cpu > 0 else 0.0
    print(
        f"bench-tournament: {one.hands_per_s:.1f} hands/s, {one.moves_per_s:.0f} moves/s, "
        f"{one.hands} hands, {one.errors + two.errors} errors, shards 2 "
        f"{two.hands_per_s:.1f} hands/s, {per_cpu:.1f} hands per server CPU-second"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
