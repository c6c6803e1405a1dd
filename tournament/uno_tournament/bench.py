"""``make bench-tournament``: eight Python example bots (four heuristic, four random) as separate
processes, 16 concurrent tables per shard; the same number of hands played on 1 shard (the runner
and one game server process) with the bots' sandbox off and on (:mod:`uno_tournament.sandbox`,
the default), in ``--rounds`` ABBA rounds (off, on, on, off; on, off, off, on; ...) of half the
hands a run, so that a load that drifts during the bench weighs on both alike, and then on 2
shards (``--shards 2``: two workers, each with its own server and its own 8 sandboxed bot
processes), in the same invocation. The last line reads::

    bench-tournament: <H> hands/s, <M> moves/s, <N> hands, <E> errors, shards 2 <H2> hands/s,
    <C> hands per server CPU-second, sandbox off <H0> hands/s (on/off <R>), bot start-up
    <S> ms in the sandbox (<S0> ms without), server <SV> ms/hand, runner <RN> ms/hand,
    floor <F> us/rt, harness ratio <X>, floor at this pace <FP> us/rt, harness ratio at this
    pace <XP>

``H``, ``M``, ``N`` are the 1-shard sandboxed runs' (both halves); ``E`` counts every run; ``H2`` is
the 2-shard run's rate; ``C`` is the hands of the sandboxed runs over the CPU seconds their game
servers used while the tables ran (what one core of game server plays, the figure that sizes a
cluster); ``H0`` is the 1-shard runs' without the sandbox and ``R`` = H / H0. ``S`` is the time from
launching a bot's command (``python -c pass``) through the keeper in the sandbox (bwrap, cgroups,
the network relay) to its exit, ``S0`` the same without the sandbox. Rates are measured from the
moment every bot is connected to the last stored hand. Moves are the actions of the hands. Errors
are hand attempts that had to be repeated, bot process crashes, timeouts and rejected (illegal)
actions.

What the harness costs (issue 25): ``SV`` and ``RN`` are the game server's and the runner's CPU
milliseconds per hand in the 1-shard sandboxed run, over the same span (the runner's every
thread; not its start-up, final report and shutdown). ``F`` is the server CPU per round trip of
``make bench-server``'s gRPC floor, measured first in the same invocation, and ``X`` = (SV + RN)
/ (moves per hand x F): the harness's CPU per hand over what the bare transport spends on the
hand's moves. That floor is saturated (its clients send as fast as it answers, so a wake-up of
its server carries many messages), while a tournament's bots think between moves. ``FP`` is
the same floor measured last, paced at the sandboxed 1-shard runs' own moves a second over one
stream per bot (8), and ``XP`` the ratio against it: what the transport alone spends per round
trip at the tournament's pace (measured 2026-12-02: 273 us at 1,250 round trips a second over 8
streams, against 166 us saturated). A line before the last plays the same tournament with
the compiled example bots (four Go, four Rust heuristic bots, built if missing), which cost
almost nothing: its ``harness ceiling`` is hands per CPU-second of server and runner together,
the hands/s one core of harness could carry.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from uno_server.benchmarks.server import measure_floor_cpu

from . import sandbox
from .config import BotSpec, FaultSpec, SandboxSpec, TournamentConfig
from .host_relay import HostRelay
from .runner import Runner
from .sharding import new_tournament_id
from .store import HandRecord, Store


def bench_config(concurrency: int, blocks: int, *, sandboxed: bool = True) -> TournamentConfig:
    box = SandboxSpec(enabled=sandboxed)
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
                    "--name",
                    "{name}",
                ),
                cwd=os.getcwd(),
                sandbox=box,
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
        sandbox=box,
    )


CLIENTS = Path(__file__).resolve().parents[2] / "clients"
COMPILED = {
    "go": (("bin", "heuristic-bot"), ("go", "build", "-o", "bin/", "./cmd/..."), "{addr}"),
    "rust": (
        ("target", "release", "heuristic-bot"),
        ("cargo", "build", "--release", "--locked"),
        "http://{addr}",
    ),
}
"""The compiled example bots: the binary in the SDK's folder, the build that makes it, and the
address as the bot takes it."""


def compiled_config(concurrency: int, blocks: int) -> TournamentConfig:
    """The bench tournament with the compiled example bots (four Go, four Rust heuristic bots)
    instead of the Python ones, in the sandbox; each binary is built if it is missing. A missing
    toolchain raises :class:`RuntimeError` naming it."""
    box = SandboxSpec(enabled=True)
    bots = []
    for i in range(8):
        lang = "go" if i < 4 else "rust"
        binary, build, addr = COMPILED[lang]
        folder = CLIENTS / lang
        exe = folder.joinpath(*binary)
        if not exe.exists():
            if shutil.which(build[0]) is None:
                raise RuntimeError(f"{build[0]} not found: cannot build the {lang} example bot")
            done = subprocess.run(build, cwd=folder, capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise RuntimeError(f"{' '.join(build)} in {folder}: {done.stderr[-300:]}")
        cmd = (str(exe), "--addr", addr, "--name", "{name}")
        bots.append(
            BotSpec(name=f"{lang}-heuristic-{i}", command=cmd, cwd=str(folder), sandbox=box)
        )
    base = bench_config(concurrency, blocks)
    return TournamentConfig(
        name="bench-compiled",
        bots=tuple(bots),
        seed=base.seed,
        blocks=blocks,
        concurrency=concurrency,
        rules=base.rules,
        faults=base.faults,
        sandbox=box,
    )


@dataclass
class Measured:
    label: str
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
    runner_play_cpu_s: float = 0.0
    """The runner's CPU from the moment every bot is connected to the last stored hand (its
    start-up, the final report and shutdown are not per-hand work)."""

    @property
    def server_ms_per_hand(self) -> float:
        return 1000 * self.server_cpu_s / max(1, self.hands)

    @property
    def runner_ms_per_hand(self) -> float:
        return 1000 * self.runner_play_cpu_s / max(1, self.hands)

    def harness_ratio(self, floor_us: float) -> float:
        """The harness's CPU per hand (server and runner) over what the gRPC floor spends on
        the hand's moves (moves per hand x the floor server's CPU per round trip)."""
        per_hand = self.moves / max(1, self.hands)
        return (
            1000
            * (self.server_ms_per_hand + self.runner_ms_per_hand)
            / max(1e-9, per_hand * floor_us)
        )

    @property
    def hands_per_s(self) -> float:
        return self.hands / self.play_s

    def plus(self, other: Measured) -> Measured:
        """Two runs of the same setup as one (hands, times and CPU summed)."""
        return Measured(
            self.label,
            self.shards,
            self.hands + other.hands,
            self.moves + other.moves,
            self.errors + other.errors,
            self.play_s + other.play_s,
            self.setup_s + other.setup_s,
            self.server_cpu_s + other.server_cpu_s,
            self.runner_cpu_s + other.runner_cpu_s,
            self.other_cpu_s + other.other_cpu_s,
            self.runner_play_cpu_s + other.runner_play_cpu_s,
        )

    @property
    def moves_per_s(self) -> float:
        return self.moves / self.play_s


def measure(
    config: TournamentConfig, shards: int, hands: int, keep: Path | None, label: str = ""
) -> Measured:
    """One run on ``shards`` shards (each its own server and bot processes)."""
    label = label or f"shards {shards}"
    with tempfile.TemporaryDirectory(prefix="bench-tournament-") as tmp:
        out = keep / label.replace(" ", "-") if keep else Path(tmp)
        tid = new_tournament_id(config.name)
        store = Store.create(out, {"tournament_id": tid, "config": config.to_dict()})
        log = io.StringIO()
        runner = _TimedRunner(
            out, store, config, tid, progress=False, stream=log, max_hands=hands, shards=shards
        )
        t0 = time.monotonic()
        self0 = resource.getrusage(resource.RUSAGE_SELF)
        kids0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        boxed0 = sandbox.BotCgroup.cpu_seconds() or 0.0
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
        # a sandboxed bot dies in its own pid namespace, so its CPU never reaches this process's
        # children's rusage: its cgroup counted it
        kids += (sandbox.BotCgroup.cpu_seconds() or 0.0) - boxed0
        return Measured(
            label,
            shards,
            len(rows),
            sum(h.moves for h in rows),
            errors,
            play,
            prog.started - t0,
            runner.server_cpu_s,
            own,
            max(0.0, kids - runner.server_cpu_s),
            max(0.0, runner.play_cpu[1] - runner.play_cpu[0]),
        )


class _TimedRunner(Runner):
    """A runner that notes its own CPU time (every thread) when the tables start and at each
    stored hand."""

    play_cpu = (0.0, 0.0)

    def progress_started(self) -> None:
        super().progress_started()
        now = time.process_time()
        self.play_cpu = (now, now)

    async def _record(self, rec: HandRecord) -> None:
        await super()._record(rec)
        self.play_cpu = (self.play_cpu[0], time.process_time())


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench-tournament", description=__doc__)
    ap.add_argument("--concurrency", type=int, default=16, help="tables at once, per shard")
    ap.add_argument("--hands", type=int, default=480, help="hands per run (default 480)")
    ap.add_argument("--out", help="keep the tournament folders here (default: temp folders)")
    ap.add_argument(
        "--rounds",
        type=int,
        default=4,
        help="ABBA rounds of sandbox off and on, 4 runs of half the hands each (default 4)",
    )
    args = ap.parse_args(argv)
    if not 1 <= args.rounds <= 20:
        print(f"bench-tournament: --rounds {args.rounds}: give 1-20", file=sys.stderr)
        return 2
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    on = bench_config(args.concurrency, blocks=1)
    off = bench_config(args.concurrency, blocks=1, sandboxed=False)
    keep = Path(args.out) if args.out else None
    print(sandbox.summary(on.sandbox), file=sys.stderr)
    _, floor_us = measure_floor_cpu(10.0)
    # sandbox off and on in ABBA rounds (off, on, on, off, then on, off, off, on, ...), half the
    # hands a run: a machine whose load drifts during the bench weighs on both sides alike, and
    # several rounds average out the run-to-run spread of this machine (19-26 hands/s for the
    # same 480-hand run, measured 2026-12-02)
    half = max(24, args.hands // 2)
    pairs: list[tuple[Measured, Measured]] = []
    for r in range(args.rounds):
        order = ("off", "on", "on", "off") if r % 2 == 0 else ("on", "off", "off", "on")
        got: dict[str, list[Measured]] = {"off": [], "on": []}
        for i, side in enumerate(order):
            cfg = on if side == "on" else off
            label = f"shards 1, sandbox {side} ({r + 1}.{i + 1})"
            m = measure(cfg, 1, half, keep, label)
            got[side].append(m)
            print(
                f"  {label}: {m.hands_per_s:.1f} hands/s, CPU ms/hand: server "
                f"{m.server_ms_per_hand:.1f}, runner {m.runner_ms_per_hand:.1f}, bots and the "
                f"rest {1000 * m.other_cpu_s / max(1, m.hands):.1f}",
                file=sys.stderr,
            )
        pairs += list(zip(got["on"], got["off"], strict=True))
    one, bare = pairs[0]
    for a, b in pairs[1:]:
        one, bare = one.plus(a), bare.plus(b)
    one.label, bare.label = "shards 1, sandbox on", "shards 1, sandbox off"
    two = measure(on, 2, args.hands, keep, "shards 2, sandbox on")
    runs = [bare, one, two]
    try:
        native = measure(
            compiled_config(args.concurrency, blocks=1), 1, args.hands, keep, "compiled bots"
        )
        runs.append(native)
    except RuntimeError as exc:
        native = None
        print(f"bench-tournament (compiled bots): not run: {exc}", file=sys.stderr)
    start_on, start_off = startup_ms(True), startup_ms(False)
    for m in runs:
        print(
            f"{m.label}: {m.hands} hands in {m.play_s:.1f} s ({m.hands_per_s:.1f}/s, "
            f"{m.moves_per_s:.0f} moves/s), setup {m.setup_s:.1f} s; CPU seconds: servers "
            f"{m.server_cpu_s:.1f} (tables only), runner {m.runner_cpu_s:.1f}, bots/workers/"
            f"startup {m.other_cpu_s:.1f}; {m.errors} errors; per hand: server "
            f"{m.server_ms_per_hand:.1f} ms, runner {m.runner_ms_per_hand:.1f} ms (tables only), "
            f"{m.moves / max(1, m.hands):.1f} moves",
            file=sys.stderr,
        )
    if native is not None:
        harness = native.server_cpu_s + native.runner_play_cpu_s
        print(
            f"bench-tournament (compiled bots, 4 Go + 4 Rust): {native.hands_per_s:.1f} hands/s, "
            f"{native.hands} hands, {native.errors} errors, server "
            f"{native.server_ms_per_hand:.1f} ms/hand, runner {native.runner_ms_per_hand:.1f} "
            f"ms/hand, harness ceiling {native.hands / max(1e-9, harness):.1f} hands/s per core, "
            f"harness ratio {native.harness_ratio(floor_us):.2f}"
        )
    # the same floor at the pace of the sandboxed 1-shard runs: their moves a second (a move is
    # one round trip of a bot's stream) over one stream per bot, as the tournament's bots send
    _, paced_us = measure_floor_cpu(10.0, rate=max(1.0, one.moves_per_s), streams=len(on.bots))
    hands = one.hands + two.hands
    cpu = one.server_cpu_s + two.server_cpu_s
    per_cpu = hands / cpu if cpu > 0 else 0.0
    ratio = one.hands_per_s / bare.hands_per_s if bare.hands_per_s else 0.0
    each = sorted(a.hands_per_s / b.hands_per_s for a, b in pairs if b.hands_per_s)

    def cpu_ms(m: Measured) -> float:  # every process of the run, bots included, per hand
        return 1000 * (m.server_cpu_s + m.runner_cpu_s + m.other_cpu_s) / max(1, m.hands)

    print(
        f"sandbox on/off: {ratio:.3f} pooled over {len(pairs)} + {len(pairs)} alternated runs of "
        f"{half} hands; run by run {', '.join(f'{x:.2f}' for x in each)}; CPU of the whole run "
        f"(server, runner, bots, keepers) {cpu_ms(one):.1f} ms/hand on, {cpu_ms(bare):.1f} off",
        file=sys.stderr,
    )
    print(
        f"bench-tournament: {one.hands_per_s:.1f} hands/s, {one.moves_per_s:.0f} moves/s, "
        f"{one.hands} hands, {sum(m.errors for m in runs)} errors, shards 2 "
        f"{two.hands_per_s:.1f} hands/s, {per_cpu:.1f} hands per server CPU-second, "
        f"sandbox off {bare.hands_per_s:.1f} hands/s (on/off {ratio:.2f}), bot start-up "
        f"{start_on:.0f} ms in the sandbox ({start_off:.0f} ms without), server "
        f"{one.server_ms_per_hand:.1f} ms/hand, runner {one.runner_ms_per_hand:.1f} ms/hand, "
        f"floor {floor_us:.0f} us/rt, harness ratio {one.harness_ratio(floor_us):.2f}, "
        f"floor at this pace {paced_us:.0f} us/rt, harness ratio at this pace "
        f"{one.harness_ratio(paced_us):.2f}"
    )
    return 0


def startup_ms(sandboxed: bool, repeats: int = 5) -> float:
    """Median milliseconds from launching ``python -c pass`` as a bot (through the keeper, and
    in the sandbox: cgroups, bwrap, the relay inside) to its exit."""
    from .procs import BotProcess

    async def once(log_dir: Path) -> float:
        spec = BotSpec(
            name="startup",
            command=("{python}", "-c", "pass"),
            cwd=os.getcwd(),
            sandbox=SandboxSpec(enabled=sandboxed),
        )
        relay = await HostRelay.acquire("127.0.0.1:9")  # nothing listens: not used
        try:
            bot = BotProcess(
                spec, "t" * 16, "127.0.0.1:9", log_dir, max_restarts=0, on_incident=_ignore
            )
            t0 = time.perf_counter()
            await bot.start()
            assert bot.proc is not None
            await bot.proc.wait()
            took = time.perf_counter() - t0
            bot._stopping = True
            await bot.stop()
        finally:
            await relay.release()
        return took * 1000

    times = []
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as tmp:
        for _ in range(repeats):
            times.append(asyncio.run(once(Path(tmp) / "logs")))
    return sorted(times)[len(times) // 2]


def _ignore(bot: str, kind: str, detail: str) -> None:
    pass


if __name__ == "__main__":
    raise SystemExit(main())
