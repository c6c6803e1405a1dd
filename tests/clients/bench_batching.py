"""Bot-process CPU per decision with SDK batching on (Hello.max_batch 64) and off (0), same run.

One example bot (clients/<lang>, built first: ``clients/each.sh build``) holds seat 0 of
``--tables`` tables against three built-in bots on a live ``uno-arena serve``; each table plays
single-hand matches back to back for ``--seconds`` after a warm-up. CPU is utime+stime of the
bot process from /proc/<pid>/stat (Linux); decisions are MatchSeat.decisions of the bot's seat
in every match played. The server's CPU per bot decision over the same window is shown too (it
includes the three built-in seats). Modes alternate between repeats to spread machine drift.

    .venv/bin/python -m tests.clients.bench_batching --langs go,rust --seconds 20
"""

from __future__ import annotations

import argparse
import os
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import grpc

from tests.clients.langs import LANGS
from tests.clients.live_arena import ADMIN, LiveServer, serve
from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc, game_pb2

TICK = os.sysconf("SC_CLK_TCK")


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


def phase(addr: str, bot_name: str, tables: int, seconds: float, seed0: int) -> tuple[int, int]:
    """Plays for ``seconds`` on ``tables`` tables; returns (matches, bot decisions)."""
    md = (("authorization", f"Bearer {ADMIN}"),)
    stop_at = time.monotonic() + seconds
    decisions = [0] * tables
    matches = [0] * tables
    with grpc.insecure_channel(addr) as ch:
        admin = admin_pb2_grpc.AdminServiceStub(ch)

        def table(k: int) -> None:
            i = 0
            while time.monotonic() < stop_at:
                req = admin_pb2.CreateMatchRequest(
                    seats=[
                        game_pb2.Player(bot_name=bot_name),
                        game_pb2.Player(builtin=game_pb2.BUILTIN_BOT_HEURISTIC),
                        game_pb2.Player(builtin=game_pb2.BUILTIN_BOT_RANDOM),
                        game_pb2.Player(builtin=game_pb2.BUILTIN_BOT_HEURISTIC),
                    ],
                    seed=seed0 + 1000 * k + i,
                    rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
                    time_control=game_pb2.TimeControl(decision_ms=5000),
                )
                i += 1
                mid = admin.CreateMatch(req, metadata=md, timeout=10).match.match_id
                for _ in admin.WatchMatch(
                    admin_pb2.WatchMatchRequest(match_id=mid), metadata=md, timeout=300
                ):
                    pass
                info = admin.GetMatch(
                    admin_pb2.GetMatchRequest(match_id=mid), metadata=md, timeout=10
                ).match
                seat = info.seats[0]
                assert (seat.strikes, seat.rejected_actions, seat.taken_over) == (0, 0, False), seat
                decisions[k] += seat.decisions
                matches[k] += 1

        threads = [threading.Thread(target=table, args=(k,)) for k in range(tables)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    return sum(matches), sum(decisions)


def wait_connected(addr: str, bot_name: str, proc: subprocess.Popen[bytes]) -> None:
    md = (("authorization", f"Bearer {ADMIN}"),)
    with grpc.insecure_channel(addr) as ch:
        admin = admin_pb2_grpc.AdminServiceStub(ch)
        for _ in range(300):
            assert proc.poll() is None, f"bot exited {proc.returncode}"
            bots = admin.ListBots(admin_pb2.ListBotsRequest(), metadata=md, timeout=5).bots
            if any(b.bot_name == bot_name and b.connected for b in bots):
                return
            time.sleep(0.2)
    raise AssertionError("bot did not connect")


@dataclass
class Run:
    lang: str
    mode: str  # "on" (max_batch 64) or "off" (0)
    matches: int
    decisions: int
    seconds: float
    bot_cpu_s: float
    server_cpu_s: float

    def line(self) -> str:
        d = self.decisions
        return (
            f"{self.lang:10} {self.mode:8} {d:9} {d / self.seconds:7.0f} "
            f"{1e6 * self.bot_cpu_s / d:10.1f} {1e6 * self.server_cpu_s / d:13.1f}"
        )


HEADER = (
    f"{'lang':10} {'batching':8} {'decisions':>9} {'dec/s':>7} {'bot us/dec':>10} "
    f"{'server us/dec':>13}"
)


def measure(
    server: LiveServer, lang: str, mode: str, token: str, args: argparse.Namespace, seed: int
) -> Run:
    """Starts the language's example bot with batching on or off and plays one phase."""
    name = f"{lang}-{mode}"
    extra = ["--max-batch", "64" if mode == "on" else "0"]
    cmd = LANGS[lang].command(server.addr, token, name, extra)
    log_path = Path(tempfile.gettempdir()) / f"uno-bench-{name}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen(cmd, cwd=LANGS[lang].folder, stdout=log, stderr=subprocess.STDOUT)
        try:
            wait_connected(server.addr, name, proc)
            if args.warmup:
                phase(server.addr, name, args.tables, args.warmup, 1)
            b0, s0, t0 = cpu_s(proc.pid), cpu_s(server.proc.pid), time.monotonic()
            matches, decisions = phase(server.addr, name, args.tables, args.seconds, seed)
            b1, s1, t1 = cpu_s(proc.pid), cpu_s(server.proc.pid), time.monotonic()
        finally:
            proc.terminate()
            proc.wait(timeout=15)
    return Run(lang, mode, matches, decisions, t1 - t0, b1 - b0, s1 - s0)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--langs", default="go,rust", help="comma-separated (default go,rust)")
    ap.add_argument("--tables", type=int, default=16, help="tables at once (default 16)")
    ap.add_argument("--seconds", type=float, default=20, help="length of each phase (default 20)")
    ap.add_argument("--warmup", type=float, default=5, help="warm-up per bot, s (default 5)")
    ap.add_argument("--repeat", type=int, default=2, help="on/off pairs per language (default 2)")
    args = ap.parse_args()
    langs = args.langs.split(",")
    tokens = {f"{lang}-{m}": f"bench-{lang}-{m}-token" for lang in langs for m in ("on", "off")}
    runs: list[Run] = []
    with serve(tokens) as server:
        print(HEADER, flush=True)
        for rep in range(args.repeat):
            for lang in langs:
                for mode in ("on", "off") if rep % 2 == 0 else ("off", "on"):
                    seed = 10_000 * (rep + 1)
                    run = measure(server, lang, mode, tokens[f"{lang}-{mode}"], args, seed)
                    runs.append(run)
                    print(run.line(), flush=True)
    print(f"\ntotals over {args.repeat} run(s) of {args.seconds:g} s, {args.tables} tables")
    print(HEADER)
    for lang in langs:
        for mode in ("on", "off"):
            rs = [r for r in runs if r.lang == lang and r.mode == mode]
            total = Run(
                lang,
                mode,
                sum(r.matches for r in rs),
                sum(r.decisions for r in rs),
                sum(r.seconds for r in rs),
                sum(r.bot_cpu_s for r in rs),
                sum(r.server_cpu_s for r in rs),
            )
            print(total.line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
