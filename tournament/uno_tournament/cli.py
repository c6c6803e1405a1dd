"""``uno-arena tournament run|resume|report|verify`` and ``uno-arena replay``.

``uno_server.cli`` imports this module lazily and calls :func:`add_tournament_parser` /
:func:`add_replay_parser`; errors are one plain line and a non-zero exit.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path

from uno_server.service.tlsclient import tls_ca_problem

from . import cliargs
from .chain import StoreChangedError
from .config import ConfigError, TournamentConfig, load, read_text
from .fileread import FileWriteError
from .replay import ReplayError
from .runlog import postgres_run
from .sharding import ShardError, ShardSpec, check_shards, default_shards
from .store import ResultStore, Store, StoreError

EXIT_ERROR = 2


class TournamentCliError(Exception):
    """A user error of the tournament commands."""


def example_config() -> Path:
    """The bundled example configuration (``make tournament``)."""
    return Path(str(resources.files("uno_tournament") / "examples" / "tournament.toml"))


def _server_args(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--server",
        metavar="HOST:PORT",
        help="use this running server instead of an embedded one",
    )
    p.add_argument(
        "--admin-token",
        default=None,
        help="the server's admin token, with --server (env UNO_ARENA_ADMIN_TOKEN)",
    )
    p.add_argument(
        "--tls-ca",
        metavar="FILE",
        help="with --server: it speaks TLS; trust this CA certificate (PEM), or 'system' for the "
        "system's roots. The launched bots need their own TLS options in their commands",
    )
    p.add_argument(
        "--metrics-port",
        type=cliargs.port,
        help="serve Prometheus metrics on this port (1-65535; with an embedded server, its "
        "metrics too)",
    )
    p.add_argument(
        "--metrics-host",
        default="127.0.0.1",
        help="address of the metrics endpoint (default 127.0.0.1; 0.0.0.0 in a container)",
    )
    p.add_argument(
        "--metrics-linger",
        type=cliargs.linger,
        default=0.0,
        metavar="SECONDS",
        help="with --metrics-port: keep the metrics up this long after the last hand, so that "
        "Prometheus scrapes the final values (at least one scrape interval; 0-3600)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress display")


def _check_metrics(args: argparse.Namespace) -> None:
    """What would stop a run once started is refused before it creates anything: a metrics
    page that cannot open, a game server address that is not this machine's, --server with no
    admin token."""
    if args.admin_token is not None and not getattr(args, "server", None):
        raise TournamentCliError(
            "--admin-token is for a running server: give --server too, or leave it out to "
            "use an embedded server"
        )
    if args.admin_token is None:
        args.admin_token = os.environ.get("UNO_ARENA_ADMIN_TOKEN")
    if getattr(args, "server", None) and not args.admin_token:
        raise TournamentCliError("--server needs --admin-token (or UNO_ARENA_ADMIN_TOKEN)")
    if getattr(args, "tls_ca", None) is not None:
        if not getattr(args, "server", None):
            raise TournamentCliError("--tls-ca is for a running server: give --server too")
        problem = tls_ca_problem(args.tls_ca)
        if problem is not None:
            raise TournamentCliError(f"--tls-ca {args.tls_ca[:200]}: {problem}")
    bind = getattr(args, "bind", None)
    if bind and not getattr(args, "server", None):
        why = cliargs.unbindable(bind, 0)
        if why:
            raise TournamentCliError(f"--bind {bind}: {why}; give an address of this machine")
    if args.metrics_port is not None:
        why = cliargs.unbindable(args.metrics_host, args.metrics_port)
        if why:
            raise TournamentCliError(
                f"--metrics-port {args.metrics_port} --metrics-host {args.metrics_host}: {why}; "
                "choose another port (or host)"
            )


def _shard_args(p: argparse.ArgumentParser, *, pod: bool) -> None:
    p.add_argument(
        "--shards",
        type=int,
        metavar="N",
        help="play on N shards, each its own process group with a game server and copies of "
        f"the bots (default: half the usable cores, here {default_shards()})",
    )
    if pod:
        p.add_argument(
            "--shard",
            metavar="I/N",
            help="play only shard I of N into a shared --store (a Kubernetes Indexed Job: "
            "--shard $(JOB_COMPLETION_INDEX)/N)",
        )
        p.add_argument(
            "--store",
            metavar="URL",
            help="write the results to this PostgreSQL database (postgresql://USER:PASSWORD@"
            "HOST:PORT/DB; env UNO_ARENA_STORE) instead of a SQLite file in the output folder",
            default=os.environ.get("UNO_ARENA_STORE") or None,
        )
    p.add_argument(
        "--bind",
        metavar="HOST",
        default="127.0.0.1",
        help="address the shards' game servers listen on (default 127.0.0.1; 0.0.0.0 lets "
        "external bots on other machines connect)",
    )
    p.add_argument(
        "--port",
        type=cliargs.any_port,
        default=0,
        metavar="PORT",
        help="game server port (shard I of --shards N: PORT+I; default 0: any free port)",
    )
    p.add_argument(
        "--advertise",
        metavar="HOST",
        default="",
        help="host name external bots use to reach the game server (default: --bind, or this "
        "machine's name when it is 0.0.0.0)",
    )


def _shard_kwargs(args: argparse.Namespace) -> dict[str, object]:
    only = None
    if getattr(args, "shard", None) is not None:
        if args.shards is not None:
            raise TournamentCliError(
                "give --shards N (one machine) or --shard I/N (one shard of many), not both"
            )
        only = ShardSpec.parse(args.shard)
        if not getattr(args, "store", None):
            raise TournamentCliError(
                f"--shard {args.shard} plays one shard into a shared store: add --store "
                "postgresql://..., or use --shards N to play every shard on this machine"
            )
    shards = check_shards(args.shards) if args.shards is not None else default_shards()
    if only is not None:
        shards = 1
    if args.server and shards > 1:
        if args.shards is not None:
            raise TournamentCliError(
                "--shards N starts N game servers of its own; it cannot use --server"
            )
        shards = 1
    return {
        "shards": shards,
        "only": only,
        "host": args.bind,
        "port": args.port,
        "advertise": args.advertise,
    }


def _warn(message: str) -> None:
    print(f"uno-arena: warning: {message}", file=sys.stderr)


def cmd_run(args: argparse.Namespace) -> int:
    """Run a tournament from a TOML configuration."""
    from . import runner

    path = example_config() if args.config == "example" else Path(args.config)
    text = read_text(path)
    config = load(path, text=text, warn=_warn)
    out = Path(args.out or config.output)
    if args.blocks is not None:
        if config.sequential or args.candidate is not None:
            raise TournamentCliError(
                '--blocks: not with a run that sizes itself (until = "settled" or '
                "--candidate); give its budget as max_hands in [tournament], beside until = "
                '"settled" (a --candidate run reads max_hands, alpha and indifference_elo there)'
            )
        # the flag sizes the run: a hand budget or precision in the file would otherwise win
        config = TournamentConfig.from_dict(
            {**config.to_dict(), "blocks": args.blocks, "hands": 0, "precision_elo": 0.0}
        )
    if args.concurrency is not None:
        config = TournamentConfig.from_dict({**config.to_dict(), "concurrency": args.concurrency})
    if args.candidate is not None or args.baseline is not None:
        if _file_sets(text, "blocks") and args.blocks is None:
            # dropped in silence before: "blocks = 1" started a run of 20000 hands
            raise TournamentCliError(
                "tournament.blocks: not with --candidate/--baseline (the test sizes itself; "
                'give its budget as max_hands with until = "settled", or leave blocks out)'
            )
        config = _new_version(config, args.candidate, args.baseline)
    shard_kw = _shard_kwargs(args)
    if shard_kw.get("only") is not None and not _file_sets(text, "seed"):
        # each pod reads the file for itself: a seed drawn by each would be a tournament each
        raise TournamentCliError(
            f"--shard {args.shard}: every pod must deal the same cards, so set tournament.seed "
            "in the configuration (a secret number, for example from: python3 -c 'import "
            "secrets; print(secrets.randbits(63))')"
        )
    store_url = args.store
    if store_url:
        from .pgstore import is_url

        if not is_url(store_url):
            raise TournamentCliError(
                f"--store {store_url}: give a postgresql:// URL (a SQLite store is the output "
                "folder: --out DIR)"
            )
    _check_metrics(args)
    return runner.start(
        config,
        out,
        config_text=text,
        store_url=store_url,
        **shard_kw,
        server=args.server,
        admin_token=args.admin_token,
        server_ca=args.tls_ca,
        metrics_port=args.metrics_port,
        metrics_host=args.metrics_host,
        metrics_linger_s=args.metrics_linger,
        progress=not args.quiet,
        max_hands=args.max_hands,
    )


def _file_sets(text: str, key: str) -> bool:
    """Whether a configuration's text sets ``key`` of ``[tournament]`` itself (a config read
    from it has a value either way: without ``seed`` a run draws one, ``blocks`` defaults
    to 1)."""
    from .fileread import loads_toml

    section = loads_toml(text).get("tournament", {})
    return isinstance(section, dict) and key in section


def _new_version(
    config: TournamentConfig, candidate: str | None, baseline: str | None
) -> TournamentConfig:
    """The config of ``--candidate NEW --baseline OLD``: a new-version test against the other
    bots of the config as the field, at most ``max_hands`` hands (the config's, or the default
    budget), with delta0 = 0, delta1 = ``indifference_elo`` and alpha = beta = ``alpha``."""
    from .config import DEFAULT_MAX_HANDS

    if candidate is None or baseline is None:
        raise TournamentCliError("give --candidate NEW and --baseline OLD together")
    names = [b.name for b in config.bots]
    for flag, name in (("--candidate", candidate), ("--baseline", baseline)):
        if name not in names:
            shown = name if len(name) <= 40 else name[:39] + "…"
            raise TournamentCliError(
                f"{flag} {shown!r}: not a bot of the configuration (its bots: "
                f"{', '.join(names)[:300]})"
            )
    if candidate == baseline:
        raise TournamentCliError(
            f"--candidate and --baseline are both {candidate!r}: give two different bots"
        )
    if len(names) < 4:
        raise TournamentCliError(
            "--candidate/--baseline need at least two more bots in the configuration as the field"
        )
    if config.hands or config.precision_elo:
        key = "hands" if config.hands else "precision_elo"
        raise TournamentCliError(
            f"tournament.{key}: not with --candidate/--baseline (the test sizes itself; give "
            'its budget as max_hands with until = "settled")'
        )
    return TournamentConfig.from_dict(
        {
            **config.to_dict(),
            "candidate": candidate,
            "baseline": baseline,
            "max_hands": config.max_hands or DEFAULT_MAX_HANDS,
        }
    )


def _not_a_league(folder: str | Path | None) -> None:
    """Refuse a league's play folder: its hands follow the league's ladder, not a tournament's
    schedule, so verify failed every one, and report and resume wrote a tournament's files
    into the league (an examination)."""
    if folder is None:
        return
    path = Path(folder)
    if path.name == "play" and (path.parent / "league.sqlite").is_file():
        raise TournamentCliError(
            f"{path} is the play folder of the league {path.parent}, not a tournament: use "
            f"`uno-arena league status {path.parent}` or `uno-arena league report {path.parent}`"
        )


def cmd_resume(args: argparse.Namespace) -> int:
    """Finish an interrupted tournament: only the hands not yet stored are played."""
    from . import runner

    _not_a_league(args.dir)
    elsewhere = postgres_run(Path(args.dir))
    if elsewhere is not None:
        raise TournamentCliError(elsewhere)
    _check_metrics(args)
    return runner.resume(
        Path(args.dir),
        **_shard_kwargs(args),
        server=args.server,
        admin_token=args.admin_token,
        server_ca=args.tls_ca,
        metrics_port=args.metrics_port,
        metrics_host=args.metrics_host,
        metrics_linger_s=args.metrics_linger,
        progress=not args.quiet,
        max_hands=args.max_hands,
    )


def _open_for_report(args: argparse.Namespace) -> tuple[ResultStore, Path]:
    """The store a report or watch reads: ``--store`` (a URL or a folder), or DIR."""
    from .sharding import open_store

    where = args.store or args.dir
    if not where:
        raise TournamentCliError("name the tournament: a folder, or --store URL")
    if args.store and args.dir:
        raise TournamentCliError("give a tournament folder or --store, not both")
    _not_a_league(args.dir)
    store = open_store(where)
    if args.dir:
        return store, Path(args.dir)
    return store, Path(args.out) if args.out else Path(".")


def cmd_report(args: argparse.Namespace) -> int:
    """Write the reports of a tournament (also of an unfinished one, and of every shard of a
    run in a shared --store) and print the leaderboard."""
    from . import report
    from .config_stored import load_config
    from .replay import ensure_replays
    from .verify_reports import planned_hands

    _refuse_a_run_still_playing(args)
    if args.dir and not args.store:
        _shared_store_reports(Path(args.dir))
    store, folder = _open_for_report(args)
    try:
        if isinstance(store, Store):
            store.check_damage()  # the reports are never rewritten from a damaged file
        config = load_config(store, store.location)
        tid = store.tournament_id()
        planned = planned_hands(store, config, tid)  # a sequential run's: up to its stop
        if args.store and not args.out:
            report.print_leaderboard(report.summarize(store, config, tid, planned), sys.stdout)
            print("(--out DIR writes the report files and the replays)")
            return 0
        folder.mkdir(parents=True, exist_ok=True)
        ensure_replays(store, folder / "replays")
        report.write_all(folder, store, config, tid, stream=sys.stdout, planned=planned)
    finally:
        store.close()
    return 0


def _refuse_a_run_still_playing(args: argparse.Namespace) -> None:
    """``report`` of a folder whose run is still playing (its tournament.lock held): the
    tables and the chain head would be read at different moments and cover different hands,
    and that results.json would then fail verify for good (an examination, 2026-12-06)."""
    from .pgstore import is_url
    from .verify import playing

    where = args.dir or (args.store if args.store and not is_url(args.store) else None)
    if not where or not (holder := playing(Path(where))):
        return
    raise TournamentCliError(
        f"{where} is still being played by {holder}: the run writes its reports itself when it "
        f"finishes; follow it meanwhile with: uno-arena tournament watch {where} (or stop it, "
        "then report it)"
    )


def _shared_store_reports(folder: Path) -> None:
    """A folder with a run's reports but no database: a shard's --out folder, whose run is in
    a shared store. ``report DIR`` cannot write them again; say the command that can."""
    from .store import DB_NAME

    if os.path.lexists(folder / DB_NAME) or not (folder / "results.json").is_file():
        return  # something is there (a dangling link, a folder): Store.open names it
    raise TournamentCliError(
        f"{folder}: no tournament database here ({DB_NAME}), only a run's reports; if they are "
        f"a shard's (its run is in a shared store), write them again with: uno-arena "
        f"tournament report --store URL --out {folder}; else restore {DB_NAME} from a copy"
    )


def cmd_watch(args: argparse.Namespace) -> int:
    """Follow a running tournament from its store (a folder, or every shard of a run in a
    shared --store): progress, each shard's state, and the live leaderboard."""
    from .watch import watch

    store, _ = _open_for_report(args)
    try:
        return watch(store, interval_s=args.interval, once=args.once)
    finally:
        store.close()


def cmd_verify(args: argparse.Namespace) -> int:
    """Check a whole run: every stored hand re-run by the engine from its replay and compared
    column by column, against the schedule, and the hash chain over the hands against the head
    in results.json or --head (exit 1 if anything differs)."""
    from .verify import head_problem, playing, print_report, verify

    folder = Path(args.dir) if args.dir else None
    _not_a_league(folder)
    if folder is not None and (holder := playing(folder)):
        raise TournamentCliError(
            f"{folder} is still being played by {holder}: verify it once the run stops (while "
            "it plays it stores hands and incidents that its results.json does not have yet)"
        )
    store = None
    if args.head is not None and (problem := head_problem(args.head)):
        # a usage error, before the minutes of re-running every hand
        raise TournamentCliError(
            f'{problem} (results.json\'s "chain": {{"head": ...}} of the run, as published)'
        )
    if args.store:
        from .pgstore import is_url
        from .sharding import open_store

        if not is_url(args.store):
            raise TournamentCliError(
                f"--store {args.store[:80]}: give a postgresql:// URL (a SQLite run is verified "
                "by its folder: tournament verify DIR)"
            )
        store = open_store(args.store)
    elif folder is None:
        raise TournamentCliError("name the run: a tournament folder, or --store URL [DIR]")
    bar = _progress_bar("verifying") if sys.stderr.isatty() else None
    try:
        rep = verify(folder, store=store, head=args.head, progress=bar)
    finally:
        if bar is not None:
            bar(0, -1)
        if store is not None:
            store.close()
    print_report(rep, folder if store is None else store.location)
    return 0 if rep.ok else 1


def _progress_bar(label: str) -> Callable[[int, int], None]:
    from rich.progress import Progress

    prog = Progress(transient=True)
    task = prog.add_task(label, total=None)
    prog.start()

    def update(done: int, total: int) -> None:
        if total < 0:
            prog.stop()
            return
        prog.update(task, completed=done, total=total)

    return update


def cmd_replay(args: argparse.Namespace) -> int:
    """Re-run a recorded hand through the engine and confirm its result, its deal and who sat
    where (against the schedule, and the tournament's database when the file is in a tournament
    folder); exit 1 if anything differs."""
    from .replay import verify_file

    path = Path(args.file)
    folder = Path(args.tournament) if args.tournament else None
    verdict = verify_file(path, folder)
    print(f"{args.file}: {verdict.message}")
    return 0 if verdict.ok else 1


def add_tournament_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    t = sub.add_parser(
        "tournament",
        help="run, resume or report a tournament between bots",
        description="Tournaments between bots: duplicate deals, Plackett-Luce ratings.",
    )
    tsub = t.add_subparsers(dest="tournament_command", metavar="SUBCOMMAND")
    run = tsub.add_parser("run", help=cmd_run.__doc__, description=cmd_run.__doc__)
    run.add_argument("config", help="the TOML configuration ('example' for the bundled one)")
    run.add_argument(
        "--out",
        type=cliargs.folder,
        help="output folder (default: tournament.output of the config)",
    )
    run.add_argument(
        "--blocks", type=cliargs.whole(1, 10_000), help="override tournament.blocks (1-10000)"
    )
    run.add_argument(
        "--concurrency", type=cliargs.concurrency, help="override tournament.concurrency (1-1024)"
    )
    run.add_argument("--max-hands", type=int, help=argparse.SUPPRESS)
    run.add_argument(
        "--candidate",
        metavar="NEW",
        help="a new-version test: NEW (a bot of the config) against --baseline, the config's "
        "other bots as the field; stops when NEW is better by indifference_elo (H1) or not "
        "better (H0), at error rates alpha (docs/tournaments.md)",
    )
    run.add_argument("--baseline", metavar="OLD", help="the version --candidate is tested against")
    _server_args(run)
    _shard_args(run, pod=True)
    run.set_defaults(func=cmd_run)
    res = tsub.add_parser("resume", help=cmd_resume.__doc__, description=cmd_resume.__doc__)
    res.add_argument("dir", help="the tournament's output folder")
    res.add_argument("--max-hands", type=int, help=argparse.SUPPRESS)
    _server_args(res)
    _shard_args(res, pod=False)
    res.set_defaults(func=cmd_resume)
    rep = tsub.add_parser(
        "report", help="write the reports of a tournament", description=cmd_report.__doc__
    )
    rep.add_argument("dir", nargs="?", help="the tournament's output folder")
    rep.add_argument("--store", metavar="URL", help="the run's shared store (postgresql://...)")
    rep.add_argument(
        "--out", metavar="DIR", type=cliargs.folder, help="with --store: write the reports here"
    )
    rep.set_defaults(func=cmd_report)
    wat = tsub.add_parser(
        "watch", help="follow a running tournament live", description=cmd_watch.__doc__
    )
    wat.add_argument("dir", nargs="?", help="the tournament's output folder")
    wat.add_argument("--store", metavar="URL", help="the run's shared store (postgresql://...)")
    wat.add_argument(
        "--interval",
        type=cliargs.seconds(0.1, 3600),
        default=5.0,
        help="seconds between looks (0.1-3600, default 5)",
    )
    wat.add_argument("--once", action="store_true", help="print the standings once and exit")
    wat.set_defaults(func=cmd_watch, out=None)
    ver = tsub.add_parser(
        "verify", help="check every stored hand of a run", description=cmd_verify.__doc__
    )
    ver.add_argument(
        "dir",
        nargs="?",
        help="the tournament's output folder (with --store: the folder of its replay files "
        "and results.json, if any)",
    )
    ver.add_argument("--store", metavar="URL", help="the run's shared store (postgresql://...)")
    ver.add_argument(
        "--head",
        metavar="HEX",
        help="compare the hash chain with this head (the one published with the results) "
        "instead of the one in DIR/results.json",
    )
    ver.set_defaults(func=cmd_verify)
    t.set_defaults(func=_need_sub(t))


def add_replay_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    r = sub.add_parser(
        "replay", help="re-run a recorded hand and check it", description=cmd_replay.__doc__
    )
    r.add_argument("file", help="a replay file (<tournament folder>/replays/*.json)")
    r.add_argument(
        "--tournament",
        metavar="DIR",
        help="check the file against this tournament folder's database (default: the folder "
        "the file is in, when it is <DIR>/replays/)",
    )
    r.set_defaults(func=cmd_replay)


def _need_sub(p: argparse.ArgumentParser) -> Callable[[argparse.Namespace], int]:
    def f(args: argparse.Namespace) -> int:
        p.print_help()
        return EXIT_ERROR

    return f


ERRORS = (
    ConfigError,
    StoreError,
    ReplayError,
    TournamentCliError,
    ShardError,
    FileWriteError,
    StoreChangedError,
)


def run_command(args: argparse.Namespace) -> int:
    """Run a parsed tournament/replay command; user errors become one line on stderr."""
    from .player import RunnerError

    try:
        return int(args.func(args))
    except (*ERRORS, RunnerError) as exc:
        print(f"uno-arena: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except sqlite3.DatabaseError as exc:  # a database damaged after it was opened
        where = getattr(args, "dir", None) or getattr(args, "tournament", None) or ""
        print(
            f"uno-arena: {where}{': ' if where else ''}the tournament database cannot be read "
            f"({str(exc)[:160]}); it may be damaged: restore it from a copy",
            file=sys.stderr,
        )
        return EXIT_ERROR
    except KeyboardInterrupt:  # a Ctrl-C where the command does not take it itself
        print("uno-arena: interrupted", file=sys.stderr)
        return 130


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="uno-arena")
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    add_tournament_parser(sub)
    add_replay_parser(sub)
    args = ap.parse_args(argv)
    if not getattr(args, "func", None):
        ap.print_help()
        return EXIT_ERROR
    return run_command(args)


if __name__ == "__main__":
    sys.exit(main())
