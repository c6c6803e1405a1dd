"""``uno-arena league init|submit|token|run|status|report``.

Errors are one plain line (``uno-arena: ...``) and exit status 2; a refused submission is not an
error of the command (its verdict is recorded and printed) but exits 1, so scripts can tell.
"""

from __future__ import annotations

import argparse
import os
import secrets
import sys
import time
from pathlib import Path

from .. import cliargs
from ..fileread import FileWriteError
from ..pgstore import redact
from ..procs import printable
from ..sharding import ShardError, ShardSpec
from .manifest import AUTHOR_RE, AUTHOR_RULE, NAME_RE, NAME_RULE, RESERVED_RULE, reserved
from .quota import check_author
from .records import create_league, open_league
from .report import rows as report_rows
from .report import summarize, write_report
from .run import MAX_TABLES
from .settings import league_sandbox, settings_from
from .start import run_league
from .store import LeagueError, Version, league_around
from .submit import GATE_HANDS, describe, refuse_case_alike, submission_lock, submit

__all__ = ["EXIT_ERROR", "add_parser", "run_command", "settings_from"]
"""(``settings_from`` is :mod:`.settings`'s, still importable from here.)"""

EXIT_ERROR = 2


def cmd_init(args: argparse.Namespace) -> int:
    """Start a league in DIR, with the rules, time control, fault policy and sandbox of
    --config (a tournament-style file with only those sections), or the defaults."""
    settings = settings_from(Path(args.config) if args.config else None)
    folder = Path(args.dir)
    if folder.exists() and not folder.is_dir():  # mkdir said FileExistsError, as a traceback
        raise LeagueError(f"{folder}: not a folder; give a new or an existing folder")
    outer = league_around(folder)
    if outer is not None:  # its bots folder, say: hidden from bots, removed with a version
        raise LeagueError(
            f"{folder}: inside the folder of the league {outer}; give a folder outside any league"
        )
    league_sandbox(settings, str(args.config))  # with required = false: the warning
    store = create_league(folder, settings, args.store)
    where = f"{redact(args.store)} (local files in {args.dir})" if args.store else args.dir
    store.close()
    more = " --store URL" if args.store else ""
    print(
        f"league ready in {where}; submit a bot with: uno-arena league submit {args.dir} PATH{more}"
    )
    return 0


def cmd_submit(args: argparse.Namespace) -> int:
    """Build the bot folder PATH (with its bot.toml) in the sandbox, run its gate, and enter it
    into the ladder if it passes."""
    t0 = time.monotonic()
    why = cliargs.unbindable("127.0.0.1", args.port) if args.port else ""
    if why:  # before the build: a taken port is no verdict on the bot
        raise LeagueError(f"--port {args.port}: {why}; choose another port")
    v = submit(
        Path(args.dir),
        Path(args.path),
        gate_hands=args.gate_hands,
        store_url=args.store,
        gate_port=args.port or 0,
    )
    print(f"{printable(describe(v))} [{time.monotonic() - t0:.0f} s]")
    return 0 if v.accepted else 1


def cmd_retire(args: argparse.Namespace) -> int:
    """Take bot NAME out of the ladder: its active version is retired (not scheduled again,
    from the next block of a league that is running); its hands and history stay. A remote
    bot's token is revoked with `league token revoke`."""
    why = " ".join(str(args.reason).split())
    # a reason of quotes alone ('' typed where the shell kept them) says nothing either
    if not any(c.isalnum() for c in why) or len(why) > 200 or not why.isprintable():
        raise LeagueError("--reason: 1-200 printable characters, saying why (not empty)")
    store = open_league(Path(args.dir), args.store)
    try:
        if any(n == args.name for n, _ in store.token_names()):
            raise LeagueError(
                f"{args.name[:40]}: a remote bot; revoke its token instead: uno-arena league "
                f"token revoke {args.dir} {args.name}"
            )
        retired = store.retire(args.name, why)
    finally:
        store.close()
    if not retired:
        raise LeagueError(
            f"{printable(args.name[:40])}: no active version of that name; `uno-arena league "
            f"status {args.dir}` lists the bots"
        )
    print(f"{', '.join(retired)}: retired ({why}); a running league stops it at its next block")
    return 0


def cmd_token_add(args: argparse.Namespace) -> int:
    """Issue a token for a remote bot NAME of AUTHOR (printed once; only its hash is kept)."""
    if not NAME_RE.match(args.name):
        raise LeagueError(f"NAME: {args.name[:40]!r} must be {NAME_RULE}")
    if reserved(args.name):
        raise LeagueError(f"NAME: {args.name[:40]!r} {RESERVED_RULE}")
    if not AUTHOR_RE.match(args.author):
        raise LeagueError(f"--author: {args.author[:40]!r} must be {AUTHOR_RULE}")
    # one at a time with submissions: a token added while a gate ran took an author past
    # max_bots_per_author, since the submission had checked the limit before its gate
    with submission_lock(Path(args.dir)):
        store = open_league(Path(args.dir), args.store)
        try:
            owner = store.owner(args.name)
            if owner == args.author and any(n == args.name for n, _ in store.token_names()):
                raise LeagueError(  # the same author again: no new token beside the old
                    f"{args.name}: the name is taken (by {owner}), and this remote bot has a "
                    "token already; for a new one, revoke that first: uno-arena league token "
                    f"revoke {args.dir} {args.name}"
                )
            if owner is not None:
                raise LeagueError(
                    f"{args.name}: the name is taken (by {owner}"
                    + (", for a submitted bot" if owner == args.author else "")
                    + "); choose another name"
                )
            refuse_case_alike(store, args.name)
            check_author(store, args.author, args.name, store.settings())
            token = secrets.token_hex(24)
            store.add_token(args.name, args.author, token)
        finally:
            store.close()
    print(token)
    print(
        f"token for {args.name} ({args.author}); it is shown once. Run the bot with --name "
        f"{args.name} --token TOKEN against the league's server (league run prints its address)",
        file=sys.stderr,
    )
    return 0


def cmd_token_revoke(args: argparse.Namespace) -> int:
    """Revoke the token of remote bot NAME: a running league forgets it (the server refuses
    its next connection) and its version is retired; its hands and history stay."""
    store = open_league(Path(args.dir), args.store)
    try:
        if not any(n == args.name for n, _ in store.token_names()):
            raise LeagueError(
                f"{printable(args.name[:40])}: no token of that name; `uno-arena league status "
                f"{args.dir}` lists the tokens"
            )
        retired = store.revoke_token(args.name)
    finally:
        store.close()
    more = f"; retired {', '.join(retired)}" if retired else ""
    print(f"token of {args.name} revoked{more}")
    return 0


def remote_note(versions: list[Version]) -> str:
    """A remote bot's token as ``league status`` shows it: where its bot stands."""
    if not versions:
        return "waiting for first connection"
    last = versions[-1]
    if last.state == "refused":
        return f"refused at its connection as {last.key}: {last.reason}"
    if last.state == "active":
        return f"in the ladder as {last.key}"
    return f"{last.key} retired ({last.reason})"


def cmd_status(args: argparse.Namespace) -> int:
    """The league's standings (the last refit's ratings with 95% intervals, strongest first),
    then the refused versions with why, and the remote bots' tokens."""
    store = open_league(Path(args.dir), args.store)
    try:
        summary = summarize(store, args.dir)
        tokens = store.token_names()
        remote: dict[str, list[Version]] = {}
        for v in store.versions():
            if v.remote:
                remote.setdefault(v.name, []).append(v)
    finally:
        store.close()
    if not summary.standings and not summary.refused and not tokens:
        print(f"no bots yet; submit one with: uno-arena league submit {args.dir} PATH")
        return 0
    keys = [st.version.key for st in summary.standings] + [v.key for v in summary.refused]
    width = max([len(k) for k in keys] + [7])
    ranks = report_rows(summary)
    rw = max([len(r[0]) for r in ranks] + [3])  # a range such as 10-12 is wider than a rank

    def cut(text: str) -> str:
        text = printable(" ".join(text.split()))  # a reason recorded before it was printable
        return text if len(text) <= 100 else text[:97] + "..."

    print(
        f"{'#':>{rw}} {'version':<{width}}  {'state':<8} {'author':<16} {'language':<10} "
        f"{'hands':>7} {'rating':>6} {'interval':<13} note"
    )
    for rank, st in zip(ranks, summary.standings, strict=True):
        v = st.version
        print(
            f"{rank[0]:>{rw}} {v.key:<{width}}  {v.state:<8} {v.author:<16} {v.language:<10} "
            f"{st.hands:>7} {rank[5]:>6} {rank[6]:<13} {cut(st.note)}"
        )
    for v in summary.refused:
        print(
            f"{'':>{rw}} {v.key:<{width}}  {v.state:<8} {v.author:<16} {v.language:<10} "
            f"{'':>7} {'':>6} {'':<13} {cut(v.reason)}"
        )
    for name, author in tokens:
        print(
            f"{'':>{rw}} {name:<{width}}  {'remote':<8} {author:<16} {'':<10} {'':>7} {'':>6} "
            f"{'':<13} {cut(remote_note(remote.get(name, [])))}"
        )
    if summary.refits:
        print(f"{summary.hands} hands, {len(summary.refits)} refits")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """Write the league's report (md, csv, json, html with the ratings over time) into
    DIR/report, or --out."""
    folder = Path(args.dir)
    store = open_league(folder, args.store)
    try:
        out = Path(args.out) if args.out else folder / "report"
        for kept in ("bots", "gates"):  # what the bots themselves see, frozen once judged
            inner = (folder / kept).resolve()
            if out.resolve() == inner or out.resolve().is_relative_to(inner):
                raise LeagueError(
                    f"--out {args.out}: inside the league's {kept}/ folder, where the "
                    "submitted bots' files are (a bot would read its report there); give "
                    f"another folder, or leave --out out for {folder / 'report'}"
                )
        try:
            written = write_report(store, out, str(args.dir))
        except OSError as exc:
            raise LeagueError(
                f"{exc.filename or out}: cannot write the report ({exc.strerror or exc})"
            ) from None
    finally:
        store.close()
    print("report: " + ", ".join(str(p) for p in written))
    return 0


def _hands(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text[:20]!r}") from None
    if not 1 <= n <= 100_000_000:
        raise argparse.ArgumentTypeError(f"must be from 1 to 100000000, got {n}")
    return n


def _tables(text: str) -> int:
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text[:20]!r}") from None
    if not 1 <= n <= MAX_TABLES:
        raise argparse.ArgumentTypeError(f"must be from 1 to {MAX_TABLES}, got {n}")
    return n


def cmd_run(args: argparse.Namespace) -> int:
    """Play the league until Ctrl-C or SIGTERM (the hands in play are finished and stored),
    for --hands N, or --until settled. New submissions join without a restart; run it again
    to continue after a stop or a crash."""
    if args.shard is not None and args.store is None:
        raise LeagueError(
            "--shard: shards share a PostgreSQL store; add --store postgresql://USER:PASSWORD@"
            "HOST/DB (the league's, from `league init DIR --store URL`)"
        )
    if args.shard is not None and args.shard.count > 1 and args.until == "settled":
        raise LeagueError(
            "--until settled: not with --shard I/N for N > 1 (shard 0 alone refits); use "
            "--hands N, or stop the shards yourself"
        )
    _check_addresses(args)
    return run_league(
        Path(args.dir),
        store_url=args.store,
        shard=args.shard,
        hands=args.hands,
        until_settled=args.until == "settled",
        tables=args.tables,
        house=not args.no_house_bots,
        concurrency=args.concurrency,
        metrics_port=args.metrics_port,
        metrics_host=args.metrics_host,
        metrics_linger_s=args.metrics_linger,
        metrics_wait_s=args.metrics_wait,
        web_port=args.web_port,
        web_host=args.web_host,
        server_host=args.bind,
        server_port=args.port or 0,
    )


def _check_addresses(args: argparse.Namespace) -> None:
    """``--bind``/``--port``, ``--metrics-host``/``--metrics-port`` and ``--web-host``/
    ``--web-port``, each checked before the league starts anything: a host that is no address of
    this machine is the host's fault, not the port's (it said "choose another port"), and a bad
    ``--bind`` stopped the game server with its own error repeated in the league's."""
    for host_opt, host, port_opt, port in (
        ("--bind", args.bind, "--port", args.port),
        ("--metrics-host", args.metrics_host, "--metrics-port", args.metrics_port),
        ("--web-host", args.web_host, "--web-port", args.web_port),
    ):
        if port is None and host_opt != "--bind":
            continue  # no page: its host is not used
        why = cliargs.unbindable(host, 0)
        if why:
            detail = why[why.find("(") + 1 : why.rfind(")")] if "(" in why else why
            raise LeagueError(
                f"{host_opt} {printable(host[:100])}: cannot listen there ({detail}); give an "
                "address of this machine"
            )
        why = cliargs.unbindable(host, port) if port else ""
        if why:
            raise LeagueError(f"{port_opt} {port}: {why}; choose another port")


def _shard(text: str) -> ShardSpec:
    try:
        return ShardSpec.parse(text)
    except ShardError as exc:
        raise argparse.ArgumentTypeError(str(exc).split(": ", 1)[-1]) from None


def _store_arg(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--store",
        metavar="URL",
        help="the league's records (and hands) in PostgreSQL: postgresql://USER:PASSWORD@HOST/DB "
        "(env UNO_ARENA_LEAGUE_STORE; DIR then holds only local files: built bots, gates, logs, "
        "replays)",
        default=os.environ.get("UNO_ARENA_LEAGUE_STORE") or None,
    )


LEAGUE_HELP = """\
A standing league: authors submit bots and new versions (each built, confined and gated), the
ladder plays them in duplicate blocks, and the ratings say when the ranking is settled.
Commands: init, submit, retire, token, run, status, report.

Errors are one plain line (uno-arena: ...) and exit status 2; a refused submission is not an
error of the command (its verdict is recorded and printed) but exits 1, so scripts can tell.
How to run one: docs/league.md.
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    lg = sub.add_parser(
        "league",
        help="a standing league: submit bots and new versions, each built and gated",
        description=LEAGUE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    lsub = lg.add_subparsers(dest="league_command", metavar="COMMAND", required=True)
    init = lsub.add_parser("init", help="start a league in a folder", description=cmd_init.__doc__)
    init.add_argument("dir", metavar="DIR")
    _store_arg(init)
    init.add_argument(
        "--config", help="a file with [rules], [time_control], [faults], [sandbox], [league]"
    )
    init.set_defaults(func=cmd_init)
    sm = lsub.add_parser(
        "submit", help="build, gate and enter a bot", description=cmd_submit.__doc__
    )
    sm.add_argument("dir", metavar="DIR")
    _store_arg(sm)
    sm.add_argument("path", metavar="PATH", help="the bot's folder, with its bot.toml")
    sm.add_argument(
        "--gate-hands",
        type=int,
        default=GATE_HANDS,
        help=f"hands of the gate, a multiple of 24 up to 2400 (default {GATE_HANDS})",
    )
    sm.add_argument(
        "--port",
        type=cliargs.port,
        help="the gate's game server's port, on 127.0.0.1 (1-65535; default: any free port)",
    )
    sm.set_defaults(func=cmd_submit)
    rt = lsub.add_parser(
        "retire", help="take a bot out of the ladder", description=cmd_retire.__doc__
    )
    rt.add_argument("dir", metavar="DIR")
    _store_arg(rt)
    rt.add_argument("name", metavar="NAME")
    rt.add_argument("--reason", default="no reason given", help="why, shown in the status")
    rt.set_defaults(func=cmd_retire)
    tok = lsub.add_parser("token", help="tokens of remote bots")
    toksub = tok.add_subparsers(dest="token_command", metavar="COMMAND", required=True)
    add = toksub.add_parser("add", help="issue a token", description=cmd_token_add.__doc__)
    add.add_argument("dir", metavar="DIR")
    _store_arg(add)
    add.add_argument("name", metavar="NAME")
    add.add_argument("--author", required=True)
    add.set_defaults(func=cmd_token_add)
    rv = toksub.add_parser(
        "revoke", help="revoke a remote bot's token", description=cmd_token_revoke.__doc__
    )
    rv.add_argument("dir", metavar="DIR")
    _store_arg(rv)
    rv.add_argument("name", metavar="NAME")
    rv.set_defaults(func=cmd_token_revoke)
    rn = lsub.add_parser("run", help="play the ladder until stopped", description=cmd_run.__doc__)
    rn.add_argument("dir", metavar="DIR")
    _store_arg(rn)
    rn.add_argument(
        "--shard",
        type=_shard,
        metavar="I/N",
        help="play shard I of N of a league in PostgreSQL (--store), each shard on its machine "
        "with its own server and bots; every shard plays its share of each block's tables",
    )
    rn.add_argument("--hands", type=_hands, help="stop after N hands (1-100000000)")
    rn.add_argument(
        "--until",
        choices=["settled"],
        help="stop once the ranking of the active versions is settled",
    )
    rn.add_argument(
        "--tables",
        type=_tables,
        default=1,
        help=f"tables played at once, each 24 hands a block (1-{MAX_TABLES}, default 1)",
    )
    rn.add_argument(
        "--concurrency",
        type=cliargs.concurrency,
        default=8,
        help="hands played at once (1-1024, default 8)",
    )
    rn.add_argument(
        "--no-house-bots",
        action="store_true",
        help="never fill a table with house bots (wait for four versions of four authors)",
    )
    rn.add_argument(
        "--metrics-port",
        type=cliargs.port,
        help="serve Prometheus series per version on this port (1-65535)",
    )
    rn.add_argument(
        "--metrics-host",
        default="127.0.0.1",
        help="address of the metrics page (default 127.0.0.1; 0.0.0.0 in a container)",
    )
    rn.add_argument(
        "--metrics-linger",
        type=cliargs.linger,
        default=0.0,
        metavar="SECONDS",
        help="with --metrics-port or --web-port, after --hands or --until ends the run: keep "
        "the pages up this long, for a last scrape (0-3600; Ctrl-C ends the wait)",
    )
    rn.add_argument(
        "--metrics-wait",
        type=cliargs.linger,
        default=0.0,
        metavar="SECONDS",
        help="with --metrics-port: hold the first block until Prometheus has read the page "
        "once, at most this long, so rate() counts the first hands (0-3600; Ctrl-C ends it)",
    )
    rn.add_argument(
        "--web-port",
        type=cliargs.port,
        help="serve the live standings (/league) and the matches (/) on this port (1-65535)",
    )
    rn.add_argument(
        "--web-host",
        default="127.0.0.1",
        help="address of the web view (default 127.0.0.1)",
    )
    rn.add_argument(
        "--bind",
        metavar="HOST",
        default="127.0.0.1",
        help="address the league's game server listens on, for remote bots (default "
        "127.0.0.1; 0.0.0.0 lets bots on other machines connect)",
    )
    rn.add_argument(
        "--port",
        type=cliargs.port,
        help="the game server's port, for remote bots (1-65535; default: any free port)",
    )
    rn.set_defaults(func=cmd_run)
    rp = lsub.add_parser("report", help="write the league's report", description=cmd_report.__doc__)
    rp.add_argument("dir", metavar="DIR")
    _store_arg(rp)
    rp.add_argument("--out", type=cliargs.folder, help="the report's folder (default DIR/report)")
    rp.set_defaults(func=cmd_report)
    st = lsub.add_parser("status", help="the league's standings", description=cmd_status.__doc__)
    st.add_argument("dir", metavar="DIR")
    _store_arg(st)
    st.set_defaults(func=cmd_status)


def run_command(args: argparse.Namespace) -> int:
    """Run a ``league`` subcommand: a user error is one plain line and exit status 2."""
    try:
        return int(args.func(args))
    except (LeagueError, FileWriteError) as exc:
        print(f"uno-arena: {exc}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:  # a Ctrl-C where the command does not take it itself
        print("uno-arena: interrupted", file=sys.stderr)
        return 130
