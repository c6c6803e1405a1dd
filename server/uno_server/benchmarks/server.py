"""``make bench-server``: decisions per second through the real service, against a gRPC floor.

(a) The floor: a trivial grpc.aio bidirectional ping-pong. The server answers each small message
    with one the size of a real DecisionRequest; 16 streams come from a second process.
(b) The service: 16 concurrent tables (``--tables``) of four Python SDK random bots (4 bot
    streams), single-hand matches back to back. The bots and the driver that creates the
    matches (AdminService.CreateMatch, the next one when the bots are told a match ended) run
    in a second process, as the floor's clients do and as a tournament runner does: the
    server's process only serves. Moves/s counts the
    bots' accepted decisions. p50/p99 are decision round trips as the server measures them for
    every accepted answer: from the moment the server issues a DecisionRequest to the moment it
    takes the bot's answer (its own queueing both ways, the network, the bot). Server CPU per
    move is the server process's CPU time over the bots' moves.

Both run in the same invocation, one after the other, on this machine's 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing as mp
import statistics
import sys
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc

STREAMS = 16
MATCH_TIMEOUT_S = 60.0  # the driver gives up on a match that does not end (a bug, not a result)


# --------------------------------------------------------------------------- (a) the floor


def _view_sized_payload() -> bytes:
    """A real DecisionRequest, serialised: the size the service sends per decision."""
    from uno_server.engine import Hand, RuleSet
    from uno_server.gen.uno.v1 import bot_pb2
    from uno_server.service import convert

    hand = Hand.deal(RuleSet(), 3, 0)
    for _ in range(12):
        seat = hand.pending_seats()[0]
        hand.apply(seat, hand.legal_actions(seat)[-1])
    seat = hand.pending_seats()[0]
    dr = bot_pb2.DecisionRequest(
        request_id="m000001-abcdef-12", match_id="m000001-abcdef", seat=seat, required=True
    )
    dr.view.CopyFrom(convert.seat_view(hand, seat, [0, 0, 0, 0], [False] * 4, None))
    dr.legal_actions.extend(convert.legal_action(a) for a in hand.legal_actions(seat))
    dr.rules.CopyFrom(convert.rules_to_proto(RuleSet()))
    for i, e in enumerate(hand.log[-4:]):
        dr.events.append(convert.event_to_proto(e, i, 1, convert.timestamp(time.time())))
    return bytes(dr.SerializeToString())


def _identity(x: bytes) -> bytes:
    return x


async def _floor_server(payload: bytes, port_q: Any, stop_ev: Any) -> None:
    async def pingpong(it: AsyncIterator[bytes], _ctx: Any) -> AsyncIterator[bytes]:
        async for _ in it:
            yield payload

    handler = grpc.method_handlers_generic_handler(
        "bench.Floor",
        {
            "PingPong": grpc.stream_stream_rpc_method_handler(
                pingpong, request_deserializer=_identity, response_serializer=_identity
            )
        },
    )
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    cpu0 = time.process_time()
    port_q.put(port)
    while not stop_ev.is_set():
        await asyncio.sleep(0.05)
    port_q.put(time.process_time() - cpu0)  # the floor server's CPU while the clients ran
    await server.stop(0)


def _floor_server_proc(payload: bytes, port_q: Any, stop_ev: Any) -> None:
    asyncio.run(_floor_server(payload, port_q, stop_ev))


async def _floor_clients(
    port: int, seconds: float, streams: int = STREAMS, rate: float | None = None
) -> tuple[int, float]:
    """``streams`` ping-pong streams for ``seconds``: each sends its next message when the
    answer to the last one came (and, with ``rate``, not before its next slot, a slot every
    ``streams / rate`` seconds, the streams' slots spread evenly)."""
    action = b"\x0a\x11m000001-abcdef-12\x10\x01"  # about the size of an Action
    period = streams / rate if rate else 0.0
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        call_factory = ch.stream_stream(
            "/bench.Floor/PingPong", request_serializer=_identity, response_deserializer=_identity
        )
        deadline = time.monotonic() + seconds
        counts = [0] * streams

        async def one(i: int) -> None:
            q: asyncio.Queue[bytes | None] = asyncio.Queue()

            async def gen() -> AsyncIterator[bytes]:
                while True:
                    m = await q.get()
                    if m is None:
                        return
                    yield m

            call = call_factory(gen())
            slot = time.monotonic() + period * i / streams
            if period:
                await asyncio.sleep(period * i / streams)
            q.put_nowait(action)
            async for _ in call:
                counts[i] += 1
                if time.monotonic() >= deadline:
                    q.put_nowait(None)
                    break
                if period:
                    slot += period
                    wait = slot - time.monotonic()
                    if wait > 0:
                        await asyncio.sleep(wait)
                q.put_nowait(action)

        t0 = time.monotonic()
        await asyncio.gather(*(one(i) for i in range(streams)))
        return sum(counts), time.monotonic() - t0


def measure_floor(seconds: float) -> float:
    """The floor's round trips per second."""
    return measure_floor_cpu(seconds)[0]


def measure_floor_cpu(
    seconds: float, *, rate: float | None = None, streams: int = STREAMS
) -> tuple[float, float]:
    """The floor's round trips per second, and its server's CPU microseconds per round trip
    (``make bench-tournament`` compares the harness's CPU per move with it).

    By default the clients send as fast as the server answers (saturated: each wake-up of the
    server carries many messages, so a round trip costs the least it can). With ``rate``, the
    ``streams`` streams together send about ``rate`` round trips a second, each at an even pace
    (a round trip every ``streams / rate`` seconds), as bots that think do: fewer messages per
    wake-up, so a round trip costs more. A paced floor never goes faster than ``rate``."""
    if rate is not None and not rate > 0:
        raise ValueError(f"rate must be > 0 round trips a second, not {rate!r}")
    if streams < 1:
        raise ValueError(f"streams must be >= 1, not {streams!r}")
    payload = _view_sized_payload()
    ctx = mp.get_context("spawn")
    port_q = ctx.Queue()
    stop_ev = ctx.Event()
    proc = ctx.Process(target=_floor_server_proc, args=(payload, port_q, stop_ev))
    proc.start()
    try:
        port = port_q.get(timeout=30)
        n, dt = asyncio.run(_floor_clients(port, seconds, streams, rate))
        stop_ev.set()
        cpu = float(port_q.get(timeout=30))
    finally:
        stop_ev.set()
        proc.join(10)
    pace = f"paced at {rate:.0f} round trips/s, " if rate is not None else ""
    print(
        f"floor: {n:,} round trips in {dt:.1f} s over {streams} streams, {pace}"
        f"{len(payload)} B per view-sized message, server {cpu * 1e6 / max(1, n):.0f} us CPU "
        "per round trip",
        flush=True,
    )
    return n / dt, cpu * 1e6 / max(1, n)


# --------------------------------------------------------------------------- (b) the service


def _clients_proc(
    port: int,
    tokens: dict[str, str],
    admin_token: str,
    tables: int,
    seconds: float,
    go: Any,
    done: Any,
    stop_ev: Any,
    out_q: Any,
    match_timeout_s: float,
) -> None:
    """The bench's client process: the four bots, and the driver that keeps ``tables`` matches
    going (CreateMatch, then the next one when the bots are told the match ended), as a
    tournament runner drives its server from another process."""
    from uno_bot import BotClient, ClientConfig, configure_logging
    from uno_bot.examples.random_bot import RandomBot
    from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc, game_pb2

    configure_logging("warning")
    ended: dict[str, asyncio.Future[None]] = {}

    class BenchBot(RandomBot):
        def on_match_ended(self, state: Any, msg: Any) -> None:
            fut = ended.get(msg.match_id)
            if fut is None:  # told before CreateMatch answered: mark it done for the driver
                fut = ended[msg.match_id] = asyncio.get_running_loop().create_future()
            if not fut.done():
                fut.set_result(None)

    async def drive(admin: Any, names: list[str], deadline: float) -> int:
        md = (("authorization", f"Bearer {admin_token}"),)
        seq = 0
        hands = 0

        async def table(k: int) -> None:
            nonlocal seq, hands
            while time.monotonic() < deadline:
                seq += 1
                req = admin_pb2.CreateMatchRequest(
                    seats=[game_pb2.Player(bot_name=n) for n in names[k % 4 :] + names[: k % 4]],
                    seed=seq,
                    rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
                    time_control=game_pb2.TimeControl(decision_ms=10_000),
                )
                created = await admin.CreateMatch(req, metadata=md)
                mid = created.match.match_id
                fut = ended.setdefault(mid, asyncio.get_running_loop().create_future())
                try:  # a single-hand match of quick bots ends in well under a second
                    await asyncio.wait_for(fut, match_timeout_s)
                except TimeoutError:
                    raise RuntimeError(
                        f"match {mid} did not end within {match_timeout_s:g} s "
                        "(no MatchEnded reached the bots)"
                    ) from None
                del ended[mid]
                hands += 1

        await asyncio.gather(*(table(k) for k in range(tables)))
        return hands

    async def main() -> None:
        clients = [
            BotClient(BenchBot(i), ClientConfig(addr=f"127.0.0.1:{port}", token=tok, name=name))
            for i, (name, tok) in enumerate(tokens.items())
        ]
        tasks = [asyncio.create_task(c.run()) for c in clients]
        ch = grpc.aio.insecure_channel(f"127.0.0.1:{port}")
        admin = admin_pb2_grpc.AdminServiceStub(ch)  # type: ignore[no-untyped-call]
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, go.wait)  # the server saw the bots and took its clocks
        cpu0 = time.process_time()
        hands = await drive(admin, list(tokens), time.monotonic() + seconds)
        cpu = time.process_time() - cpu0
        done.set()
        await loop.run_in_executor(None, stop_ev.wait)
        for c in clients:
            c.stop()
        await asyncio.gather(*tasks, return_exceptions=True)
        await ch.close()
        out_q.put((cpu, hands))

    try:
        asyncio.run(main())
    except RuntimeError as exc:
        print(f"bench-server: {exc}", file=sys.stderr, flush=True)
        sys.exit(1)


async def _service(
    seconds: float, tables: int, match_timeout_s: float = MATCH_TIMEOUT_S
) -> tuple[float, int, int, list[float], float, int, float]:
    from uno_server.service.main import configure_logging
    from uno_server.service.server import ArenaServer, ServerConfig, tune_gc
    from uno_server.service.table import Table

    configure_logging("error")
    tokens = {f"bench-bot-{i}": f"bench-token-{i}-secret" for i in range(4)}
    admin_token = "bench-admin-token"
    server = ArenaServer(ServerConfig(port=0, admin_token=admin_token, bots=tokens))
    port = await server.start()
    tune_gc()  # as uno-server serve does
    arena = server.arena
    errors = 0
    rtts: list[float] = []
    finish = arena._on_finish

    def on_finish(t: Table) -> None:  # the round trips and errors of every finished match
        nonlocal errors
        errors += sum(s.rejected + s.strikes for s in t.seats)  # faults: late answers apart
        for s in t.seats:
            rtts.extend(s.response_ms)
        finish(t)

    arena._on_finish = on_finish  # type: ignore[method-assign,assignment]
    ctx = mp.get_context("spawn")
    out_q = ctx.Queue()
    go, done, stop_ev = ctx.Event(), ctx.Event(), ctx.Event()
    proc = ctx.Process(
        target=_clients_proc,
        args=(
            port,
            tokens,
            admin_token,
            tables,
            seconds,
            go,
            done,
            stop_ev,
            out_q,
            match_timeout_s,
        ),
    )
    proc.start()

    def check_clients() -> None:
        if not proc.is_alive():
            raise RuntimeError(
                f"the bench's clients process (bots and driver) ended early, exit code "
                f"{proc.exitcode}; its error is printed above"
            )

    while len(arena.sessions) < 4:
        check_clients()
        await asyncio.sleep(0.05)
    reg = arena.metrics.registry
    loop = asyncio.get_running_loop()
    moves0 = reg.get_sample_value("uno_moves_total", {"source": "bot"}) or 0.0
    cpu0, loop_cpu0 = time.process_time(), time.thread_time()
    t0 = time.monotonic()
    go.set()
    while not done.is_set():  # polled: a thread waiting on it would cost the loop nothing
        check_clients()  # but would share the GIL; 100 wake-ups a second are noise
        await asyncio.sleep(0.01)
    dt = time.monotonic() - t0
    server_cpu = time.process_time() - cpu0
    loop_cpu = time.thread_time() - loop_cpu0  # the event loop's thread alone
    moves = (reg.get_sample_value("uno_moves_total", {"source": "bot"}) or 0.0) - moves0
    stop_ev.set()
    clients_cpu, hands = await loop.run_in_executor(None, out_q.get)
    proc.join(10)
    await server.stop(drain_timeout_s=1)
    print(
        f"service: {int(moves):,} bot moves, {hands} hands in {dt:.1f} s over {tables} tables; "
        f"CPU seconds: server {server_cpu:.1f}, clients process (bots and driver) "
        f"{clients_cpu:.1f}",
        flush=True,
    )
    per_move = 1e6 / max(moves, 1)
    return moves / dt, hands, errors, rtts, server_cpu * per_move, int(moves), loop_cpu * per_move


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seconds", type=float, default=20.0, help="length of each part (default 20)")
    ap.add_argument("--tables", type=int, default=16, help="concurrent tables (default 16)")
    ap.add_argument(
        "--match-timeout",
        type=float,
        default=MATCH_TIMEOUT_S,
        help=f"seconds the driver waits for one match to end before it stops the run "
        f"(default {MATCH_TIMEOUT_S:g})",
    )
    ap.add_argument("--json", action="store_true", help="also print the figures as JSON")
    ap.add_argument(
        "--service-only",
        action="store_true",
        help="skip the floor (for make bench-server-profile, which profiles the service part)",
    )
    args = ap.parse_args(argv)
    if args.seconds <= 0:
        print("bench-server: --seconds must be positive", file=sys.stderr)
        return 2
    if args.match_timeout <= 0:
        print("bench-server: --match-timeout must be positive", file=sys.stderr)
        return 2
    if not 1 <= args.tables <= 1000:
        print("bench-server: --tables must be 1-1000", file=sys.stderr)
        return 2
    floor = float("nan") if args.service_only else measure_floor(args.seconds)
    try:
        moves, hands, errors, rtts, cpu_us, n_moves, loop_us = asyncio.run(
            _service(args.seconds, args.tables, args.match_timeout)
        )
    except RuntimeError as exc:
        print(f"bench-server: {exc}", file=sys.stderr)
        return 1
    q = statistics.quantiles(rtts, n=100) if len(rtts) >= 100 else [0.0] * 99
    p50, p99 = q[49], q[98]
    if args.json:
        print(
            json.dumps(
                {
                    "moves_per_s": moves,
                    "moves": n_moves,
                    "floor_rt_per_s": None if args.service_only else floor,
                    "hands": hands,
                    "errors": errors,
                    "p50_ms": p50,
                    "p99_ms": p99,
                    "server_cpu_us_per_move": cpu_us,
                    "loop_thread_cpu_us_per_move": loop_us,
                    "tables": args.tables,
                }
            )
        )
    if args.service_only:
        print(
            f"bench-server (service only): {moves:.0f} moves/s, p50 {p50:.1f} ms, "
            f"p99 {p99:.1f} ms, server {cpu_us:.0f} us CPU/move, {args.tables} tables, "
            f"{errors} errors"
        )
        return 0
    print(
        f"bench-server: {moves:.0f} moves/s, floor {floor:.0f} round-trips/s, "
        f"ratio {moves / floor:.2f}, p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
        f"server {cpu_us:.0f} us CPU/move, {args.tables} tables, {errors} errors"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
