"""``make bench-load``: many concurrent tables on one server, and whether its memory stays put.

One ``uno-arena serve`` process (default retention: 1000 finished matches as summaries, full logs
of the last 128 for 120 s) plays ``--tables`` concurrent single-hand matches, every seat held by a
connected bot: ``--bots`` bot names spread over ``--processes`` bot processes, one stream per
name, each answering every required decision at once with a random legal play (calling UNO).
Whenever a match ends another starts, first for ``--seconds``, then until ``--matches`` more
matches have finished.

It reports errors (failed CreateMatch calls, rejected actions other than stale ones, StreamErrors,
dropped streams, strikes and takeovers), the server's RSS, its growth from the moment the first
``--matches`` matches had finished to the moment twice that many had, and the p99 of the decision
round trips as the server measured them (DecisionRequest issued to the answer taken, reported to
the bot in the seat's next request as ``previous_response_ms``). The goal: 0 errors and a growth
under 10% of the RSS. The last line:

    bench-load: <T> tables, <S> seats, <E> errors, rss <R> MiB, rss growth <G> MiB, p99 <L> ms
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing as mp
import os
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc

ADMIN = "bench-load-admin-token"


def rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


# --------------------------------------------------------------------------- the bot processes


def _choose(dr: Any, rng: random.Random) -> int:
    plays = [a for a in dr.legal_actions if a.kind == 9]  # ACTION_KIND_PLAY
    if plays:
        called = [a for a in plays if a.uno]
        return int(rng.choice(called or plays).id)
    return int(dr.legal_actions[0].id)  # draw, pass or accept


async def _bot(
    port: int, name: str, token: str, events: Any, stats: dict[str, Any], stop: asyncio.Event
) -> None:
    from uno_server.gen.uno.v1 import bot_pb2, bot_pb2_grpc

    rng = random.Random(name)
    out: asyncio.Queue[Any] = asyncio.Queue()
    answered: set[tuple[str, int]] = set()  # seats that have had an answer accepted or not

    async def requests() -> AsyncIterator[Any]:
        yield bot_pb2.PlayRequest(hello=bot_pb2.Hello(bot_name=name, protocol_version=1))
        while True:
            m = await out.get()
            if m is None:
                return
            yield m

    opts = [("grpc.max_receive_message_length", 64 << 20)]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=opts) as ch:
        stub = bot_pb2_grpc.BotServiceStub(ch)  # type: ignore[no-untyped-call]
        call = stub.Play(requests(), metadata=[("authorization", f"Bearer {token}")])
        stopper = asyncio.ensure_future(stop.wait())
        stopper.add_done_callback(lambda _: out.put_nowait(None))
        try:
            async for resp in call:
                kind = resp.WhichOneof("kind")
                if kind == "decision_request":
                    dr = resp.decision_request
                    if dr.required:
                        seat = (dr.match_id, dr.seat)
                        if seat in answered:  # the server's measure of the seat's last answer
                            stats["rtt"].append(dr.previous_response_ms / 1000)
                        answered.add(seat)
                        act = bot_pb2.Action(request_id=dr.request_id, action_id=_choose(dr, rng))
                        out.put_nowait(bot_pb2.PlayRequest(action=act))
                elif kind == "action_result":  # only rejections get one
                    r = resp.action_result
                    if r.code != 10:  # ABORTED: stale, a race, no fault
                        stats["errors"] += 1
                        stats["why"].append(f"{name}: rejected {r.reason} {r.message[:80]}")
                elif kind == "match_ended":
                    me = resp.match_ended
                    answered.discard((me.match_id, me.seat))
                    if me.strikes or me.taken_over:
                        stats["errors"] += 1
                        stats["why"].append(f"{name}: {me.match_id} strikes {me.strikes}")
                    events.put(me.match_id)
                elif kind == "error":
                    stats["errors"] += 1
                    stats["why"].append(f"{name}: StreamError {resp.error.message[:80]}")
        except grpc.aio.AioRpcError as exc:
            if not stop.is_set():
                stats["errors"] += 1
                stats["why"].append(f"{name}: stream ended {exc.code().name} {exc.details()}")
        if not stop.is_set():
            stats["errors"] += 1
            stats["why"].append(f"{name}: the stream ended early")


def _bots_proc(port: int, bots: dict[str, str], events: Any, done: Any, results: Any) -> None:
    async def main() -> dict[str, Any]:
        stats: dict[str, Any] = {"rtt": [], "errors": 0, "why": []}
        stop = asyncio.Event()
        tasks = [
            asyncio.create_task(_bot(port, n, t, events, stats, stop)) for n, t in bots.items()
        ]
        while not done.is_set():
            await asyncio.sleep(0.1)
        stop.set()
        await asyncio.wait(tasks, timeout=10)
        return stats

    stats = asyncio.run(main())
    results.put(stats)


# --------------------------------------------------------------------------- the driver


@dataclass
class Progress:
    finished: int = 0
    started: int = 0
    errors: int = 0
    why: list[str] = field(default_factory=list)
    rss_at: dict[int, float] = field(default_factory=dict)


async def _drive(
    args: argparse.Namespace, port: int, pid: int, bots: list[str], events: Any
) -> Progress:
    from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc, game_pb2

    md = (("authorization", f"Bearer {ADMIN}"),)
    prog = Progress()
    running: set[str] = set()
    loop = asyncio.get_running_loop()
    ended: asyncio.Queue[str] = asyncio.Queue()

    def pump() -> None:  # MatchEnded notices from the bot processes, to the loop
        while True:
            mid = events.get()
            if mid is None:
                return
            loop.call_soon_threadsafe(ended.put_nowait, mid)

    reader = loop.run_in_executor(None, pump)
    marks = (args.matches, 2 * args.matches)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        admin = admin_pb2_grpc.AdminServiceStub(ch)  # type: ignore[no-untyped-call]
        rules = game_pb2.RuleSet(
            scoring=game_pb2.SCORING_SINGLE_HAND, hand_size=args.hand_size, uno_window_ms=0
        )
        tc = game_pb2.TimeControl(decision_ms=600_000, strikes_before_takeover=1000)

        async def start(k: int) -> None:
            seats = [game_pb2.Player(bot_name=bots[(k + j) % len(bots)]) for j in range(4)]
            req = admin_pb2.CreateMatchRequest(seats=seats, seed=k, rules=rules, time_control=tc)
            try:
                res = await admin.CreateMatch(req, metadata=md, timeout=120)
            except grpc.aio.AioRpcError as exc:
                prog.errors += 1
                prog.why.append(f"CreateMatch: {exc.code().name} {exc.details()}")
                return
            running.add(res.match.match_id)
            prog.started += 1

        t0 = time.monotonic()
        fixed_until = t0 + args.seconds
        target: int | None = None  # the finished count that ends the run
        await asyncio.gather(*(start(k) for k in range(args.tables)))
        k = args.tables
        starting: set[asyncio.Task[None]] = set()
        last_report = t0
        seen: set[str] = set()
        while True:
            mid = await ended.get()
            if mid in seen or mid not in running:
                seen.add(mid)
                continue
            seen.add(mid)
            running.discard(mid)
            prog.finished += 1
            if prog.finished in marks:
                prog.rss_at[prog.finished] = rss_mib(pid)
            now = time.monotonic()
            if target is None and now >= fixed_until:
                target = prog.finished + args.matches
            if now - last_report >= 10:
                last_report = now
                print(
                    f"  {now - t0:5.0f} s: {len(running)} tables running, {prog.finished} "
                    f"matches finished, server rss {rss_mib(pid):.0f} MiB",
                    flush=True,
                )
            if target is not None and prog.finished >= max(target, marks[1]):
                break
            task = loop.create_task(start(k))
            k += 1
            starting.add(task)
            task.add_done_callback(starting.discard)
        events.put(None)
        await reader
    return prog


def _serve(
    tmp: Path, bots: dict[str, str], settings: dict[str, int]
) -> tuple[subprocess.Popen[str], int]:
    cfg = tmp / "server.toml"
    lines = ["[server]", f'admin_token = "{ADMIN}"']
    lines += [f"{k} = {v}" for k, v in settings.items()]
    lines += ["[bots]"]
    lines += [f'{n} = "{t}"' for n, t in bots.items()]
    cfg.write_text("\n".join(lines) + "\n")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uno_server.cli",
            "serve",
            "--config",
            str(cfg),
            "--port",
            "0",
            "--log-level",
            "error",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if not line.startswith("uno-arena: serving on"):
        proc.kill()
        raise SystemExit(f"bench-load: the server did not start: {line.strip()!r}")
    return proc, int(line.rsplit(":", 1)[1])


def run(args: argparse.Namespace) -> dict[str, Any]:
    bots = {f"load{i:02d}": f"load-token-{i:02d}-secret" for i in range(args.bots)}
    names = list(bots)
    with tempfile.TemporaryDirectory() as tmp:
        settings = {"retain_matches": args.retain_matches} if args.retain_matches else {}
        if args.retain_matches:
            settings["log_linger_matches"] = min(128, args.retain_matches)
        proc, port = _serve(Path(tmp), bots, settings)
        ctx = mp.get_context("spawn")
        events = ctx.Queue()
        results = ctx.Queue()
        done = ctx.Event()
        share = [names[i :: args.processes] for i in range(args.processes)]
        procs = [
            ctx.Process(
                target=_bots_proc, args=(port, {n: bots[n] for n in part}, events, done, results)
            )
            for part in share
            if part
        ]
        for p in procs:
            p.start()
        try:
            _wait_connected(port, set(names))
            prog = asyncio.run(_drive(args, port, proc.pid, names, events))
            rss = rss_mib(proc.pid)
        finally:
            done.set()
            stats = [results.get(timeout=60) for _ in procs]
            for p in procs:
                p.join(10)
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()
            if proc.stdout is not None:
                proc.stdout.close()
    rtt = [x for s in stats for x in s["rtt"]]
    why = prog.why + [w for s in stats for w in s["why"]]
    errors = prog.errors + sum(s["errors"] for s in stats)
    first, second = prog.rss_at.get(args.matches, 0.0), prog.rss_at.get(2 * args.matches, 0.0)
    p99 = statistics.quantiles(rtt, n=100)[98] * 1000 if len(rtt) >= 100 else 0.0
    return {
        "tables": args.tables,
        "seats": 4 * args.tables,
        "errors": errors,
        "why": why,
        "finished": prog.finished,
        "rss": rss,
        "rss_first": first,
        "rss_second": second,
        "growth": second - first,
        "p99_ms": p99,
        "moves": len(rtt),
    }


def _wait_connected(port: int, names: set[str]) -> None:
    from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc

    md = (("authorization", f"Bearer {ADMIN}"),)
    with grpc.insecure_channel(f"127.0.0.1:{port}") as ch:
        admin = admin_pb2_grpc.AdminServiceStub(ch)  # type: ignore[no-untyped-call]
        deadline = time.monotonic() + 60
        while True:
            res = admin.ListBots(admin_pb2.ListBotsRequest(), metadata=md, timeout=10)
            if names <= {b.bot_name for b in res.bots if b.connected}:
                return
            if time.monotonic() > deadline:
                raise SystemExit("bench-load: the bot processes did not connect within 60 s")
            time.sleep(0.1)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=1000, help="concurrent tables (1000)")
    ap.add_argument("--bots", type=int, default=16, help="bot names, one stream each (16)")
    ap.add_argument("--processes", type=int, default=4, help="bot processes (4)")
    ap.add_argument("--seconds", type=float, default=60.0, help="the fixed-time phase (60)")
    ap.add_argument(
        "--matches", type=int, default=1000, help="matches finished after it, at least (1000)"
    )
    ap.add_argument("--hand-size", type=int, default=7, help="cards dealt per seat (7)")
    ap.add_argument(
        "--retain-matches",
        type=int,
        default=0,
        help="the server's retain_matches (default: the server's default, 1000)",
    )
    args = ap.parse_args(argv)
    if args.tables < 1 or args.bots < 4 or args.processes < 1 or args.matches < 1:
        print(
            "bench-load: need --tables >= 1, --bots >= 4, --processes >= 1, --matches >= 1",
            file=sys.stderr,
        )
        return 2
    print(
        f"bench-load: {args.tables} tables of 4 bot seats, {args.bots} bots in "
        f"{args.processes} processes, {args.seconds:g} s then {args.matches} more matches "
        f"(load average {os.getloadavg()[0]:.1f})",
        flush=True,
    )
    r = run(args)
    for w in r["why"][:10]:
        print(f"  error: {w}")
    print(
        f"  {r['finished']} matches finished, {r['moves']:,} bot moves; rss after "
        f"{args.matches} matches {r['rss_first']:.0f} MiB, after {2 * args.matches} "
        f"{r['rss_second']:.0f} MiB"
    )
    print(
        f"bench-load: {r['tables']} tables, {r['seats']} seats, {r['errors']} errors, "
        f"rss {r['rss']:.0f} MiB, rss growth {r['growth']:.1f} MiB, p99 {r['p99_ms']:.0f} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
