"""``uno-arena play`` and ``uno-arena watch``.

Bad arguments print one plain line and exit 2 before any screen opens.
"""

from __future__ import annotations

import argparse
import asyncio
import errno
import getpass
import logging
import os
import re
import signal
import sys
from typing import TYPE_CHECKING, TextIO

import structlog

from uno_server.engine.errors import InvalidRulesError
from uno_server.service.auth import token_problem
from uno_server.service.convert import rules_from_proto
from uno_server.service.main import SEED, ConfigError, check_listen
from uno_server.service.server import ServerConfig
from uno_server.service.tlsclient import tls_ca_problem

from .human import NO_DEADLINE_MS
from .session import (
    PRACTICE_WINDOW_MS,
    RULE_NAMES,
    PlayOptions,
    SeatSpec,
    SetupError,
    split_addr,
)

if TYPE_CHECKING:
    from textual.app import App

PLAY_HELP = """\
Take a seat at a UNO table in the terminal.

  uno-arena play --practice                      you and three practice AIs, on this machine
  uno-arena play --seats me mybot ai ai          your own bot at the table (it connects to the
                                                 address and token the screen shows)
  uno-arena play --listen 0.0.0.0:50051 --seats me alice bob ai
                                                 friends at one table: each runs the command the
                                                 screen shows, from their own terminal
  uno-arena play --server HOST:PORT --token T --name me
                                                 a seat on a running server; add --admin-token A
                                                 --seats me mybot heuristic heuristic to start
                                                 the match yourself

Seats: me (you), ai (practice AI, embedded table only), heuristic / random (the server's
built-in bots), or any other name: a bot or a friend that connects with its token.
"""

WATCH_HELP = """\
Watch matches live, read-only, as a spectator: public information while a hand runs, every hand
revealed when it ends.

  uno-arena watch --server HOST:PORT --admin-token A              every table in play
  uno-arena watch --server HOST:PORT --admin-token A --tournament ID
  uno-arena watch --server HOST:PORT --admin-token A MATCH_ID [--from-start]
"""


def default_name() -> str:
    try:
        name = re.sub(r"[^A-Za-z0-9_.-]", "", getpass.getuser())[:64]
    except Exception:  # no login name (containers)
        name = ""
    return name or "player"


def _kv(items: list[str] | None, flag: str) -> dict[str, str]:
    out = {}
    for item in items or []:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise SetupError(f"{flag} {item!r}: write it as NAME=VALUE")
        if key in out:  # the later one silently won (serve's --bot refuses this too)
            raise SetupError(f"{flag} {key[:64]}: given twice; give each once")
        out[key] = value
    return out


def add_parsers(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    play = sub.add_parser(
        "play",
        help="take a seat at a table in the terminal (against AI, your bot, or friends)",
        description=PLAY_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    play.add_argument("--server", help="a running server HOST:PORT (default: start one here)")
    play.add_argument("--token", help="your seat's bot token on that server")
    play.add_argument("--name", default=None, help="your name at the table (a bot name)")
    play.add_argument("--admin-token", help="the server's admin token, to start the match")
    play.add_argument(
        "--tls-ca",
        metavar="FILE",
        help="with --server: it speaks TLS (serve --tls-cert); trust this CA certificate (PEM), "
        "or 'system' for the system's roots",
    )
    play.add_argument("--seats", nargs="+", metavar="SEAT", help="who sits where (see above)")
    play.add_argument(
        "--bot",
        action="append",
        metavar="NAME=TOKEN",
        help="embedded table: the token a bot named in --seats connects with (default: a new "
        "one, shown on the screen)",
    )
    play.add_argument(
        "--listen",
        default="127.0.0.1:0",
        help="embedded table: where its server listens (default 127.0.0.1, any free port)",
    )
    play.add_argument(
        "--practice",
        action="store_true",
        help=f"slow practice: {PRACTICE_WINDOW_MS // 1000} s UNO window, "
        f"{NO_DEADLINE_MS // 60_000} min a move (the longest the server allows)",
    )
    play.add_argument(
        "--decision-ms",
        type=int,
        help=f"time per decision, 1-{NO_DEADLINE_MS} (default 30000; practice: {NO_DEADLINE_MS})",
    )
    play.add_argument("--uno-window-ms", type=int, help="UNO catch window (default 2000)")
    play.add_argument(
        "--target-score",
        type=int,
        help="play hands until someone reaches this score (default: one hand, as WANGO does)",
    )
    play.add_argument(
        "--rule",
        action="append",
        metavar="NAME=VALUE",
        help='a house rule; VALUE is JSON: true or false, a number (3), or a word ("lowest", '
        f"quotes optional), e.g. --rule stacking=true. NAME is one of: {', '.join(RULE_NAMES)}",
    )
    play.add_argument("--seed", type=SEED, help="seed of the deal (0 to 2^64-1, default: random)")
    play.add_argument("--log-file", help="write the client's and server's logs here")
    play.set_defaults(func=cmd_play)

    watch = sub.add_parser(
        "watch",
        help="watch matches live, read-only (one match, or a tournament's tables)",
        description=WATCH_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    watch.add_argument("match_id", nargs="?", help="one match (default: every table in play)")
    watch.add_argument("--server", default="127.0.0.1:50051", help="server HOST:PORT")
    watch.add_argument(
        "--admin-token",
        default=os.environ.get("UNO_ARENA_ADMIN_TOKEN"),
        help="the server's admin token (or env UNO_ARENA_ADMIN_TOKEN)",
    )
    watch.add_argument(
        "--tls-ca",
        metavar="FILE",
        help="the server speaks TLS (serve --tls-cert): trust this CA certificate (PEM), or "
        "'system' for the system's roots",
    )
    watch.add_argument("--tournament", help="only the tables of this tournament id")
    watch.add_argument("--label", action="append", metavar="NAME=VALUE", help="filter by label")
    watch.add_argument(
        "--from-start",
        action="store_true",
        help="replay what already happened at a watchable pace (default: jump to now)",
    )
    watch.add_argument(
        "--pace-ms", type=int, default=400, help="pace of --from-start per event (400)"
    )
    watch.add_argument("--log-file", help="write logs here")
    watch.set_defaults(func=cmd_watch)


def _log_stream(path: str | None) -> TextIO:
    """The --log-file, opened to append (or the null device): a SetupError naming it if it
    cannot be written. Opened without blocking, so a pipe with no reader is refused, not
    waited on."""
    if not path:
        return open(os.devnull, "w")
    flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags, 0o644)
    except OSError as exc:
        why = "a pipe no one reads" if exc.errno == errno.ENXIO else exc.strerror or exc
        raise SetupError(
            f"--log-file {path}: cannot write it ({why}); give a file in a folder you may write"
        ) from None
    os.set_blocking(fd, True)
    return os.fdopen(fd, "a", encoding="utf-8")


def quiet_logs(path: str | None) -> None:
    """Logs would draw over the screen: send them to a file, or drop them."""
    stream = _log_stream(path)
    structlog.configure(
        processors=[
            structlog.processors.add_log_level,
            structlog.processors.TimeStamper(fmt="iso"),
            structlog.dev.ConsoleRenderer(colors=False),
        ],
        logger_factory=structlog.PrintLoggerFactory(file=stream),
        cache_logger_on_first_use=False,
    )
    logging.basicConfig(stream=stream, level=logging.INFO, force=True)


def check_listen_addr(addr: str) -> None:
    """``--listen``: refused at once if a fixed port is in use, as ``uno-arena serve`` refuses
    it (gRPC's SO_REUSEPORT would let the embedded server share the port of a running server,
    and the two would split the connections between them)."""
    host, port = split_addr(addr)
    if port == 0:
        return
    try:
        check_listen(ServerConfig(host=host, port=port))
    except ConfigError as exc:
        detail = str(exc).partition(": ")[2] or str(exc)
        raise SetupError(f"--listen {addr[:80]}: {detail}") from None


def play_options(args: argparse.Namespace) -> PlayOptions:
    rules: dict[str, object] = dict(_kv(args.rule, "--rule"))  # JSON text: PlayOptions.rule_set
    opts = PlayOptions(
        server=args.server,
        listen=args.listen,
        name=args.name or default_name(),
        token=args.token or "",
        admin_token=args.admin_token or "",
        tls_ca=args.tls_ca,
        seats=list(args.seats or []),
        bot_tokens=_kv(args.bot, "--bot"),
        practice=args.practice,
        decision_ms=args.decision_ms,
        uno_window_ms=args.uno_window_ms,
        target_score=args.target_score,
        rules=rules,
        seed=args.seed,
    )
    if opts.server:
        split_addr(opts.server)
        if not opts.token:
            raise SetupError("--token: your seat's bot token on that server is required")
    else:
        if opts.tls_ca is not None:
            raise SetupError(
                "--tls-ca is for a running server that speaks TLS: give --server too (the "
                "embedded table is plaintext on this machine)"
            )
        check_listen_addr(opts.listen)
    _check_tls_ca(opts.tls_ca)
    owner: dict[str, str] = {}
    for name, token in opts.bot_tokens.items():
        problem = token_problem(token)  # the server's rule for tokens (docs/service.md)
        if problem is not None:
            raise SetupError(f"--bot {name}: {problem}")
        first = owner.setdefault(token, name)
        if first != name:
            raise SetupError(f"--bot {first} and --bot {name}: the same token; give each its own")
    # every check that needs no server, before the screen opens
    _check_bot_names(opts, opts.seat_specs())
    _check_rule_ranges(opts)  # --uno-window-ms and --target-score too: the server's ranges
    opts.time_control()
    return opts


def _check_bot_names(opts: PlayOptions, specs: list[SeatSpec]) -> None:
    """``--bot NAME=TOKEN`` names a bot seat of ``--seats``: a name that is none is most
    likely a typo of one, and its token would be unused without a word (the seat it meant
    got a new token)."""
    bots = [s.name for s in specs if s.kind == "bot"]
    for name in opts.bot_tokens:
        if opts.server:
            raise SetupError(
                f"--bot {name[:64]}: is for the embedded table (the bots' tokens of a running "
                "server are its own); leave --bot out with --server"
            )
        if name not in bots:
            seats = " ".join(s.kind if s.kind in ("me", "ai") else s.name for s in specs)
            has = f"its bot seats: {', '.join(bots)}" if bots else "it has no bot seat"
            raise SetupError(
                f"--bot {name[:64]}: no seat of that name in --seats ({seats}; {has}); "
                "name a bot seat, or add the bot to --seats"
            )


def _check_rule_ranges(opts: PlayOptions) -> None:
    """The rules as the server checks them (ranges: ``--rule hand_size=0``, ``decks=3``, too
    many cards for the deck), refused before the screen opens, naming the flag that set the
    value (the screen opened, then said the server refused the match)."""
    try:
        rules_from_proto(opts.rule_set())
    except InvalidRulesError as exc:
        said = str(exc)
        name, _, why = said.removeprefix("rules.").partition(": ")
        if name in opts.rules:
            raise SetupError(f"--rule {name}={opts.rules[name]}: {why}") from None
        typed = {"target_score": opts.target_score, "uno_window_ms": opts.uno_window_ms}
        if typed.get(name) is not None:  # a flag of its own, the value as typed
            flag = "--" + name.replace("_", "-")
            said = f"{flag}: {why}" if "got" in why else f"{flag} {typed[name]}: {why}"
            raise SetupError(said) from None
        if name == "seats":
            raise SetupError(f"--seats: {why}") from None
        raise SetupError(f"--rule: {said}") from None


def terminal_problem() -> str | None:
    """Why the full screen cannot be drawn here, or None: it needs a terminal to draw on, and
    its escape codes would otherwise fill a file or a pipe, the useful line last."""
    for name, stream in (("stdout", sys.stdout), ("stderr", sys.stderr)):
        if stream is None or not stream.isatty():
            return (
                f"{name} is not a terminal (redirected or piped): the screen needs one; run "
                "the command in a terminal, without redirecting its output"
            )
    return None


def _check_tls_ca(ca: str | None) -> None:
    """``--tls-ca``: refused before any screen opens if it is neither ``system`` nor a readable
    PEM file (the rule of ``uno-arena match`` and ``tournament run``)."""
    if ca is not None and (problem := tls_ca_problem(ca)) is not None:
        raise SetupError(f"--tls-ca {ca[:200]}: {problem}")


def run_screen(app: App[None]) -> None:
    """Run a screen until it ends. SIGTERM ends it as q does: the screen closes and restores
    the terminal (the signal's default action left it in the alternate screen with mouse
    reporting on)."""

    async def run() -> None:
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, app.call_later, app.action_quit)
        try:
            await app.run_async()
        finally:
            loop.remove_signal_handler(signal.SIGTERM)

    asyncio.run(run())


def cmd_play(args: argparse.Namespace) -> int:
    """Take a seat at a table (see uno-arena play --help)."""
    try:
        opts = play_options(args)
        quiet_logs(args.log_file)
        if (problem := terminal_problem()) is not None:  # after every argument's own check
            raise SetupError(problem)
    except SetupError as exc:
        print(f"uno-arena play: {exc}", file=sys.stderr)
        return 2
    from .app import PlayApp

    app = PlayApp(opts)
    run_screen(app)
    if app.error:
        print(f"uno-arena play: {app.error}", file=sys.stderr)
        return 1
    return 0


def cmd_watch(args: argparse.Namespace) -> int:
    """Watch matches live (see uno-arena watch --help)."""
    try:
        split_addr(args.server)
        if not args.admin_token:
            raise SetupError("--admin-token: the server's admin token is required to watch")
        labels = _kv(args.label, "--label")
        if args.tournament:
            labels["tournament"] = args.tournament
        if args.pace_ms < 0:
            raise SetupError("--pace-ms: must be 0 or more")
        _check_tls_ca(args.tls_ca)
        quiet_logs(args.log_file)
        if (problem := terminal_problem()) is not None:  # after every argument's own check
            raise SetupError(problem)
    except SetupError as exc:
        print(f"uno-arena watch: {exc}", file=sys.stderr)
        return 2
    from .watch import WatchApp

    app = WatchApp(
        args.server,
        args.admin_token,
        match_id=args.match_id,
        labels=labels,
        pace=args.pace_ms / 1000 if args.from_start else 0.0,
        tls_ca=args.tls_ca,
    )
    run_screen(app)
    if app.error:
        print(f"uno-arena watch: {app.error}", file=sys.stderr)
        return 1
    return 0
