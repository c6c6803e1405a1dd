"""``uno-arena match``: put connected bots at a table on a running server and watch the hands.

The quickest way to see your bot play: start a server, start your bot, then

    uno-arena match --server 127.0.0.1:50051 --admin-token ADMIN \\
        --seats mybot heuristic random heuristic

Seats name a connected bot, or ``random`` / ``heuristic`` for the built-in AI.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from collections.abc import Sequence
from dataclasses import dataclass

import grpc

from uno_server.gen.uno.v1 import admin_pb2, admin_pb2_grpc, game_pb2

from .main import ADMIN_TOKEN_ENV, SEED, ConfigError, whole
from .tlsclient import channel, connection_hint, tls_ca_problem

_BUILTIN = {"random": game_pb2.BUILTIN_BOT_RANDOM, "heuristic": game_pb2.BUILTIN_BOT_HEURISTIC}


@dataclass
class SeatTally:
    """One seat's record over the matches, from MatchSeat, each kind of trouble apart.
    Timeouts are strikes; faults are rejected actions (real faults, never lateness);
    late answers are answers to requests already closed (a correct bot gets some); takeovers
    are the matches in which the takeover bot finished the seat."""

    wins: int = 0
    timeouts: int = 0
    faults: int = 0
    late: int = 0
    takeovers: int = 0

    def add(self, seat: admin_pb2.MatchSeat) -> None:
        self.timeouts += seat.strikes
        self.faults += seat.rejected_actions
        self.late += seat.stale_actions
        self.takeovers += int(seat.taken_over)


_COLUMNS = ("wins", "timeouts", "faults", "late", "takeovers")


def summary_lines(names: Sequence[str], tallies: Sequence[SeatTally]) -> list[str]:
    """The table printed after the hands: one line per seat, the last lines of the output."""
    lines = [
        "timeouts: required decisions missed (strikes)  faults: actions rejected as wrong",
        "late: answers to requests already closed (not faults)  takeovers: seats the server's"
        " bot finished",
        f"{'seat':>4}  {'player':<20} " + " ".join(f"{c:>9}" for c in _COLUMNS),
    ]
    for s, (name, t) in enumerate(zip(names, tallies, strict=True)):
        lines.append(f"{s:>4}  {name:<20} " + " ".join(f"{getattr(t, c):>9}" for c in _COLUMNS))
    return lines


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--server", default="127.0.0.1:50051", help="server address (HOST:PORT)")
    p.add_argument(
        "--admin-token",
        help=f"the server's admin token (or env {ADMIN_TOKEN_ENV}, as serve and tournament "
        "run take it)",
    )
    p.add_argument(
        "--tls-ca",
        metavar="FILE",
        help="the server speaks TLS: trust this CA certificate (PEM), or 'system' for the "
        "system's roots",
    )
    p.add_argument(
        "--seats",
        nargs="+",
        required=True,
        metavar="SEAT",
        help="one per seat: a connected bot's name, or random / heuristic",
    )
    p.add_argument(
        "--hands", type=whole(1, 100_000), default=10, help="single-hand matches (1-100000, 10)"
    )
    p.add_argument("--seed", type=SEED, default=1, help="seed of the first deal (1)")
    p.add_argument(
        "--decision-ms",
        type=whole(1, 2**31 - 1),
        default=1000,
        help="per-decision deadline in ms (1000; the server's range applies)",
    )


async def _run(args: argparse.Namespace) -> int:
    md = (("authorization", f"Bearer {args.admin_token}"),)
    players = [
        game_pb2.Player(builtin=_BUILTIN[s]) if s in _BUILTIN else game_pb2.Player(bot_name=s)
        for s in args.seats
    ]
    tallies = [SeatTally() for _ in players]
    async with channel(args.server, args.tls_ca) as ch:
        admin = admin_pb2_grpc.AdminServiceStub(ch)  # type: ignore[no-untyped-call]
        for i in range(args.hands):
            req = admin_pb2.CreateMatchRequest(
                seats=players,
                seed=(args.seed + i) % 2**64,
                rules=game_pb2.RuleSet(scoring=game_pb2.SCORING_SINGLE_HAND),
                time_control=game_pb2.TimeControl(decision_ms=args.decision_ms),
            )
            try:
                created = await admin.CreateMatch(req, metadata=md, timeout=10)
                mid = created.match.match_id
                async for _ in admin.WatchMatch(
                    admin_pb2.WatchMatchRequest(match_id=mid), metadata=md
                ):
                    pass
                info = (
                    await admin.GetMatch(
                        admin_pb2.GetMatchRequest(match_id=mid), metadata=md, timeout=10
                    )
                ).match
            except grpc.aio.AioRpcError as exc:
                details = " ".join(str(exc.details()).split())  # one line
                hint = connection_hint(details, args.tls_ca)
                raise ConfigError(f"{exc.code().name}: {details}{hint}") from exc
            w = info.winners[0] if info.winners else -1
            if w >= 0:
                tallies[w].wins += 1
            for s in info.seats:
                if 0 <= s.seat < len(tallies):
                    tallies[s.seat].add(s)
            print(
                f"hand {i + 1:>3}  {mid}  winner: seat {w} ({args.seats[w]}), "
                f"points {max(info.totals)}",
                flush=True,
            )
    print()
    for line in summary_lines(args.seats, tallies):
        print(line)
    return 0


def cmd_match(args: argparse.Namespace) -> int:
    """Play single-hand matches on a running server between connected bots and built-ins."""
    if not args.admin_token:  # the environment's, as serve and tournament run read it
        args.admin_token = os.environ.get(ADMIN_TOKEN_ENV)
    if not args.admin_token:
        raise ConfigError(f"--admin-token: required (or set {ADMIN_TOKEN_ENV})")
    if args.hands < 1:
        raise ConfigError("--hands must be at least 1")
    if not 2 <= len(args.seats) <= 10:
        raise ConfigError(f"--seats: give 2-10 seats, got {len(args.seats)}")
    if args.tls_ca is not None and (problem := tls_ca_problem(args.tls_ca)) is not None:
        raise ConfigError(f"--tls-ca {args.tls_ca[:200]}: {problem}")
    return asyncio.run(_run(args))
