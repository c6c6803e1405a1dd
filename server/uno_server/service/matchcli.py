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
import sys
from collections.abc import Sequence
from dataclasses import dataclass

import grpc
from google.rpc import error_details_pb2, status_pb2

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


def _error_info(exc: grpc.aio.AioRpcError) -> error_details_pb2.ErrorInfo:
    """The ErrorInfo of a failed call (reason ``SHUTTING_DOWN``, ...), empty if it has none."""
    for key, value in exc.trailing_metadata() or ():
        if key == "grpc-status-details-bin" and isinstance(value, bytes):
            for detail in status_pb2.Status.FromString(value).details:
                info = error_details_pb2.ErrorInfo()
                if detail.Unpack(info):
                    return info
    return error_details_pb2.ErrorInfo()


def _reason(exc: grpc.aio.AioRpcError) -> str:
    """The ErrorInfo reason of a failed call (``SHUTTING_DOWN``), or ''."""
    return str(_error_info(exc).reason)


def _one_line(exc: grpc.aio.AioRpcError) -> str:
    return f"{exc.code().name}: {' '.join(str(exc.details()).split())}"


class ServerGoneError(Exception):
    """The server stopped answering (it shut down, or went away) after the first hand began."""

    def __init__(self, exc: grpc.aio.AioRpcError) -> None:
        super().__init__(_one_line(exc))
        self.shut_down = _reason(exc) == "SHUTTING_DOWN"


def _gone(exc: grpc.aio.AioRpcError) -> bool:
    """A call failed because the server is not there any more (or is stopping)."""
    return exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.CANCELLED)


async def _follow(
    admin: admin_pb2_grpc.AdminServiceStub, mid: str, md: tuple[tuple[str, str], ...]
) -> admin_pb2.MatchInfo:
    """The match's final MatchInfo, once it has stopped running. WatchMatch ends with it
    (after the events), so it is there even when the server exits right after the match: a
    hand the server finished during its drain was lost when a GetMatch followed (an
    examination). GetMatch only if the stream ended without it; :class:`ServerGoneError` if the
    server is gone by then."""
    last: admin_pb2.MatchInfo | None = None
    watch_error: grpc.aio.AioRpcError | None = None
    try:
        async for msg in admin.WatchMatch(admin_pb2.WatchMatchRequest(match_id=mid), metadata=md):
            if msg.WhichOneof("kind") == "match":
                last = msg.match
    except grpc.aio.AioRpcError as exc:  # e.g. the event log was freed: its summary stays
        watch_error = exc
    if last is not None and last.state != admin_pb2.MATCH_STATE_RUNNING:
        return last
    try:
        got = await admin.GetMatch(admin_pb2.GetMatchRequest(match_id=mid), metadata=md, timeout=10)
    except grpc.aio.AioRpcError as exc:
        if _gone(exc):
            raise ServerGoneError(watch_error if watch_error is not None else exc) from exc
        raise
    info: admin_pb2.MatchInfo = got.match
    if info.state == admin_pb2.MATCH_STATE_RUNNING and watch_error is not None:
        raise watch_error  # the stream broke off (a slow reader is cut), the match goes on
    return info


@dataclass
class Stopped:
    """Why the hands stopped before the last: the server went away, or it refused a hand after
    the first (a seated bot went away: ``head`` says so)."""

    at: int  # index of the first hand without a result
    why: str  # the failed call
    shut_down: bool  # the server said it was shutting down
    lost: bool  # hand ``at`` began and its result is unknown
    ended_by_shutdown: bool = False  # hand ``at`` was ended by the shutdown
    head: str = ""  # what stopped the hands, when the server did not go away
    then: str = ""  # what to do before running match again ("start it again, then ")

    @property
    def failed(self) -> bool:
        """A hand was lost or refused: the command fails (exit status 1)."""
        return self.lost or self.ended_by_shutdown or bool(self.head)


def stopped_line(st: Stopped, hands: int, first_seed: int) -> str:
    """The one line after the summary when the server went away: how many hands were played,
    what became of the last, and how to play the rest."""
    rest = hands - st.at
    if st.head:
        head = st.head
    elif st.shut_down or st.ended_by_shutdown:
        head = "the server shut down"
    elif "connection refused" in st.why.lower():
        # nothing listens on its port any more: it shut down (a SIGTERM between hands ends
        # the drain at once) or it went away; the client cannot tell which (an examination:
        # "stopped answering (UNAVAILABLE: failed to connect ...)" after a SIGTERM)
        head = "the server shut down or went away (connections to it are refused)"
    elif st.why.startswith("CANCELLED"):  # a call in flight as it stopped, without a word
        head = "the server shut down or went away (it closed the connection)"
    else:
        head = f"the server stopped answering ({st.why})"
    line = f"{head}: {st.at} of {hands} hands played"
    if st.ended_by_shutdown:
        line += f"; the last, hand {st.at + 1}, ended by the shutdown"
    elif st.lost:
        line += f"; the result of hand {st.at + 1} is lost"
    seed = (first_seed + st.at) % 2**64
    return (
        f"{line}; to play the other {rest}, {st.then}run match again with --hands {rest} "
        f"--seed {seed}"
    )


def _first_call_failed(exc: grpc.aio.AioRpcError, server: str, tls_ca: str | None) -> str:
    """The one line for a call the server refused or never got: what happened and what to do
    (an examination got gRPC's own 'UNAVAILABLE: failed to connect to all addresses; last
    error: UNKNOWN: ipv4:...' and no next step for a server that was not there)."""
    details = " ".join(str(exc.details()).split())
    hint = connection_hint(details, tls_ca)
    if exc.code() == grpc.StatusCode.UNAVAILABLE and not hint:
        return (
            f"cannot reach the server at {server[:80]} ({details[:160]}); is `uno-arena serve` "
            "running at that address (--server HOST:PORT)?"
        )
    if exc.code() == grpc.StatusCode.UNAUTHENTICATED:
        return (
            f"the server refused the admin token ({details[:160]}); give the one it was started "
            "with (--admin-token, or UNO_ARENA_ADMIN_TOKEN)"
        )
    return f"{_one_line(exc)}{hint}"


DEFAULT_GRACE_MS = 5000
"""The server's reconnect grace when a MatchInfo does not say (TimeControl's default)."""


def _seats_of(names: Sequence[str], seats: Sequence[int]) -> str:
    """``bot 'carol' (seat 0)``, ``bots 'a' (seat 0) and 'b' (seats 1, 2)``."""
    by_name: dict[str, list[int]] = {}
    for s in seats:
        by_name.setdefault(names[s], []).append(s)
    parts = [
        f"{name!r} (seat{'s' if len(ss) > 1 else ''} {', '.join(map(str, ss))})"
        for name, ss in by_name.items()
    ]
    if len(parts) == 1:
        return f"bot {parts[0]}"
    return f"bots {', '.join(parts[:-1])} and {parts[-1]}"


async def _away(
    admin: admin_pb2_grpc.AdminServiceStub, md: tuple[tuple[str, str], ...], names: Sequence[str]
) -> list[int] | None:
    """The seats whose bot is not connected now (ListBots), or None if ListBots failed."""
    try:
        res = await admin.ListBots(admin_pb2.ListBotsRequest(), metadata=md, timeout=10)
    except grpc.aio.AioRpcError:
        return None
    connected = {b.bot_name for b in res.bots if b.connected}
    return [s for s, n in enumerate(names) if n not in _BUILTIN and n not in connected]


def _refused_seat(exc: grpc.aio.AioRpcError, n: int) -> list[int]:
    """The seat a BOT_NOT_CONNECTED refusal names (its ``field``, ``seats[2]``), or none."""
    field = str(_error_info(exc).metadata.get("field", ""))
    digits = field.removeprefix("seats[").removesuffix("]")
    return [int(digits)] if digits.isdigit() and int(digits) < n else []


async def _begin(
    admin: admin_pb2_grpc.AdminServiceStub,
    req: admin_pb2.CreateMatchRequest,
    md: tuple[tuple[str, str], ...],
    names: Sequence[str],
    i: int,
    grace_ms: int,
) -> admin_pb2.CreateMatchResponse | Stopped:
    """Create hand ``i``'s match. The first hand's refusal is raised (nothing was played: one
    line, exit status 2); a later one stops the hands, keeping those played. A seated bot that is
    not connected (it crashed, or is reconnecting) is waited for up to the server's reconnect
    grace, as a bot that drops during a hand is: an examination's `match` lost its summary and
    printed only "seats[0]: bot 'carol' is not connected; start it first", exit status 2."""
    loop = asyncio.get_running_loop()
    deadline: float | None = None
    while True:
        try:
            created: admin_pb2.CreateMatchResponse = await admin.CreateMatch(
                req, metadata=md, timeout=10
            )
            return created
        except grpc.aio.AioRpcError as exc:
            if i == 0:
                raise
            if _gone(exc):  # it answered before: it has gone since
                gone = ServerGoneError(exc)
                return Stopped(i, str(gone), gone.shut_down, lost=False)
            why = _one_line(exc)
            if _reason(exc) != "BOT_NOT_CONNECTED":
                return Stopped(
                    i, why, False, lost=False, head=f"the server refused hand {i + 1} ({why[:300]})"
                )
            away = await _away(admin, md, names) or _refused_seat(exc, len(names))
            who = _seats_of(names, away) if away else why[:300]
            many = len({names[s] for s in away}) > 1  # "bots 'a' and 'b' are ... them"
            is_, it = ("are", "them") if many else ("is", "it")
            grace = f"{grace_ms / 1000:g} s"
            if deadline is None:
                deadline = loop.time() + grace_ms / 1000
                if grace_ms > 0:
                    print(
                        f"uno-arena: {who} {is_} not connected; waiting up to {grace} (the "
                        f"server's reconnect grace) for {it} to come back",
                        file=sys.stderr,
                        flush=True,
                    )
            elif loop.time() >= deadline:
                return Stopped(
                    i,
                    why,
                    False,
                    lost=False,
                    head=f"{who} went away and did not come back within the server's reconnect "
                    f"grace ({grace})",
                    then=f"start {it} again, then ",
                )
            while loop.time() < deadline and await _away(admin, md, names) != []:
                await asyncio.sleep(0.1)


async def _run(args: argparse.Namespace) -> int:
    md = (("authorization", f"Bearer {args.admin_token}"),)
    players = [
        game_pb2.Player(builtin=_BUILTIN[s]) if s in _BUILTIN else game_pb2.Player(bot_name=s)
        for s in args.seats
    ]
    tallies = [SeatTally() for _ in players]
    stopped: Stopped | None = None
    grace_ms = DEFAULT_GRACE_MS
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
                created = await _begin(admin, req, md, args.seats, i, grace_ms)
            except grpc.aio.AioRpcError as exc:  # the first hand: nothing was played
                raise ConfigError(_first_call_failed(exc, args.server, args.tls_ca)) from exc
            if isinstance(created, Stopped):
                stopped = created
                break
            mid = created.match.match_id
            if created.match.HasField("time_control"):
                grace_ms = created.match.time_control.reconnect_grace_ms
            try:
                info = await _follow(admin, mid, md)
            except ServerGoneError as gone:
                stopped = Stopped(i, str(gone), gone.shut_down, lost=True)
                break
            except grpc.aio.AioRpcError as exc:  # the hand began: its result is not known
                stopped = Stopped(i, _one_line(exc), False, lost=True)
                break
            for s in info.seats:
                if 0 <= s.seat < len(tallies):
                    tallies[s.seat].add(s)
            if info.end_cause == game_pb2.END_CAUSE_SHUTDOWN:
                print(f"hand {i + 1:>3}  {mid}  ended by the server's shutdown", flush=True)
                stopped = Stopped(i, "", True, lost=False, ended_by_shutdown=True)
                break
            w = info.winners[0] if info.winners else -1
            if 0 <= w < len(tallies):
                tallies[w].wins += 1
                print(
                    f"hand {i + 1:>3}  {mid}  winner: seat {w} ({args.seats[w]}), "
                    f"points {max(info.totals)}",
                    flush=True,
                )
            else:  # cancelled (CancelMatch): no winner
                cause = game_pb2.EndCause.Name(info.end_cause).removeprefix("END_CAUSE_").lower()
                print(f"hand {i + 1:>3}  {mid}  no winner (ended: {cause})", flush=True)
    print()
    for line in summary_lines(args.seats, tallies):
        print(line, flush=True)
    if stopped is None:
        return 0
    print(f"uno-arena: {stopped_line(stopped, args.hands, args.seed)}", file=sys.stderr)
    return 1 if stopped.failed else 0


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
