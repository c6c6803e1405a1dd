"""The ``uno-arena`` command line.

Errors print one plain line on stderr and exit non-zero; ``--help`` on any command says more.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Sequence
from typing import NoReturn

from . import __version__
from .engine import BUILD, HeuristicBot, RandomBot, RuleSet
from .engine.bots import BOTS, Bot
from .engine.errors import EngineError
from .engine.hand import Hand
from .engine.simulate import play_hand
from .service.main import SEED, ConfigError, whole


class CliError(Exception):
    """A user error: printed as one line, exit status 2."""


def _rules_from(args: argparse.Namespace) -> RuleSet:
    data: dict[str, object] = {"seats": len(args.bots)}
    for item in args.rule or []:
        key, sep, value = item.partition("=")
        if not sep:
            raise CliError(f"--rule {item!r}: write it as NAME=VALUE, for example scoring=lowest")
        try:
            data[key] = json.loads(value)
        except json.JSONDecodeError:
            data[key] = value
    rules = RuleSet.from_dict(data)  # its own one-line errors for a seats= out of range
    if rules.seats != len(args.bots):  # one bot a seat (seats=5 with four bots was an
        # IndexError traceback, seats=2 dropped two of the bots without a word)
        raise CliError(
            f"--rule seats={rules.seats}: give one --bots entry per seat ({len(args.bots)} given)"
        )
    return rules


def _make_bot(name: str, seed: int) -> Bot:
    kind, _, arg = name.partition(":")
    if kind not in BOTS:
        raise CliError(f"unknown built-in bot {name!r}; choose from {', '.join(sorted(BOTS))}")
    if kind == "heuristic" and arg:
        try:
            return HeuristicBot(seed, randomness=float(arg))
        except ValueError as exc:
            raise CliError(f"bot {name!r}: {exc}") from exc
    return HeuristicBot(seed) if kind == "heuristic" else RandomBot(seed)


def cmd_simulate(args: argparse.Namespace) -> int:
    """Play hands between built-in bots in process and print each seat's win rate."""
    rules = _rules_from(args)
    bots = [_make_bot(name, args.seed * 16 + i) for i, name in enumerate(args.bots)]
    n = rules.seats
    wins = [0] * n
    points = [0] * n
    for i in range(args.hands):
        hand = Hand.deal(rules, args.seed * 1_000_003 + i, i % n)
        play_hand(hand, bots)
        wins[hand.winner] += 1
        points[hand.winner] += sum(hand.points_held(s) for s in range(n))
    print(f"{args.hands} hands, rules: {json.dumps(rules.to_dict(), sort_keys=True)}")
    print(f"{'seat':>4}  {'bot':<14} {'wins':>7} {'win rate':>9}  {'95% CI':<15} {'pts/hand':>8}")
    for s in range(n):
        p = wins[s] / args.hands
        lo, hi = wilson(wins[s], args.hands)
        print(
            f"{s:>4}  {args.bots[s]:<14} {wins[s]:>7} {p:>9.1%}  "
            f"[{lo:.1%}, {hi:.1%}]  {points[s] / args.hands:>8.1f}"
        )
    return 0


def wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    """Wilson score interval of a binomial proportion."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def version_line() -> str:
    """The version, and which builds of the rules engine, the service's per-move modules and
    the runner's wire reader this installation runs."""
    from uno_tournament import BUILD as READER_BUILD  # lazy, as the tournament commands are

    from .service import BUILD as SERVICE_BUILD

    return (
        f"uno-arena {__version__}, python {sys.version.split()[0]}, engine {BUILD}, "
        f"service {SERVICE_BUILD}, wire reader {READER_BUILD}"
    )


class OneLineParser(argparse.ArgumentParser):
    """A bad option is one plain line, as every other error of the command line is: argparse
    printed its whole usage block above it (ten lines for ``league run``). The subcommands'
    parsers are made by ``add_subparsers``, which takes this class for them too."""

    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        """As argparse's, noting on the namespace which (sub)command left arguments unknown:
        the innermost, as it returns first. An unknown flag is reported by the top parser,
        whose help does not list the subcommand's options."""
        ns, extras = super().parse_known_args(args, namespace)
        if extras and not hasattr(ns, _HELP_PROG):
            setattr(ns, _HELP_PROG, self.prog)
        return ns, extras

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        ns, extras = self.parse_known_args(args, namespace)
        if extras:
            prog = getattr(ns, _HELP_PROG, self.prog)
            self.exit(
                2,
                f"uno-arena: unrecognized arguments: {' '.join(extras)} "
                f"(`{prog} --help` lists the options)\n",
            )
        return ns

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"uno-arena: {message} (`{self.prog} --help` lists the options)\n")


_HELP_PROG = "_uno_arena_help_prog"
"""The namespace attribute naming the (sub)command whose options were not all known."""


def build_parser() -> argparse.ArgumentParser:
    ap: argparse.ArgumentParser = OneLineParser(
        prog="uno-arena", description="UNO Arena: UNO for bots."
    )
    ap.add_argument("--version", action="version", version=version_line())
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    sim = sub.add_parser(
        "simulate",
        help="play hands between built-in bots, in process",
        description=cmd_simulate.__doc__,
    )
    sim.add_argument(
        "--hands",
        type=whole(1, 10_000_000),
        default=1000,
        help="hands to play (1-10000000, default 1000)",
    )
    sim.add_argument(
        "--seed", type=SEED, default=1, help="seed of the deals (0 to 2^64-1, default 1)"
    )
    sim.add_argument(
        "--bots",
        nargs="+",
        default=["heuristic", "random", "random", "random"],
        help="one built-in bot per seat: random, heuristic or heuristic:P "
        "(plays randomly with probability P)",
    )
    sim.add_argument(
        "--rule",
        action="append",
        metavar="NAME=VALUE",
        help="a rule option, e.g. --rule scoring=lowest --rule stacking=true",
    )
    sim.set_defaults(func=cmd_simulate)
    from .service.main import add_serve_arguments, cmd_serve

    srv = sub.add_parser("serve", help="run the game service", description=cmd_serve.__doc__)
    add_serve_arguments(srv)
    srv.set_defaults(func=_serve)
    from .service.matchcli import add_arguments as add_match_arguments
    from .service.matchcli import cmd_match

    mat = sub.add_parser(
        "match",
        help="play hands on a running server with your bot seated",
        description=cmd_match.__doc__,
    )
    add_match_arguments(mat)
    mat.set_defaults(func=cmd_match)
    from .play.cli import add_parsers as add_play_parsers

    add_play_parsers(sub)
    from uno_tournament import cli as tournament_cli  # lazy: only when the parser is built

    tournament_cli.add_tournament_parser(sub)
    tournament_cli.add_replay_parser(sub)
    from uno_tournament import sandbox_cli

    sandbox_cli.add_parser(sub)
    from uno_tournament.league import cli as league_cli

    league_cli.add_parser(sub)
    return ap


def _serve(args: argparse.Namespace) -> int:
    """``serve``; with ``--league DIR`` its web view also shows that league's standings (the
    league's code is the tournament's: imported only then)."""
    from .service.main import cmd_serve

    if not getattr(args, "league", None):
        if getattr(args, "league_store", None):
            raise ConfigError("--league-store: needs --league DIR (the league's local folder)")
        return cmd_serve(args)
    if getattr(args, "web_port", None) is None:
        raise ConfigError("--league: needs --web-port (the standings are a page of the web view)")
    import os
    from pathlib import Path

    from uno_tournament.league.store import LeagueError
    from uno_tournament.league.web import serve_view_factory

    url = getattr(args, "league_store", None) or os.environ.get("UNO_ARENA_LEAGUE_STORE") or None
    try:
        view = serve_view_factory(Path(args.league), url)
    except LeagueError as exc:
        raise ConfigError(f"--league: {exc}") from None
    return cmd_serve(args, view)


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    if args.command in ("tournament", "replay"):
        from uno_tournament.cli import run_command

        return run_command(args)
    if args.command == "league":
        from uno_tournament.league.cli import run_command as run_league

        return run_league(args)
    try:
        return int(args.func(args))
    except (CliError, EngineError, ConfigError) as exc:
        print(f"uno-arena: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("uno-arena: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    from ._sigint import done, honour_ctrl_c

    honour_ctrl_c()
    sys.exit(done(main()))
