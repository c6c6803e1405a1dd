"""``uno-arena sandbox check``: which protections this machine gives a launched bot
(:mod:`uno_tournament.sandbox` is the sandbox itself)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .config import SandboxSpec
from .sandbox import SandboxError, check, summary


def cmd_check(args: argparse.Namespace) -> int:
    """``uno-arena sandbox check [--config FILE]``: the protections a launched bot gets on this
    machine (one line), then one line per missing protection with what to install or enable.
    Exit status 0 when every protection is there, 1 when one is missing, 2 for a bad config.
    FILE is a tournament's config (its ``[sandbox]`` and each bot's) or a league's (the file of
    ``league init --config``: its ``[sandbox]``, as the league would keep it)."""
    from .config import ConfigError
    from .league.store import LeagueError

    specs: list[tuple[str, SandboxSpec]] = [("defaults", SandboxSpec())]
    if args.config:
        try:
            specs = _configured(Path(args.config))
        except (ConfigError, LeagueError) as exc:
            print(f"uno-arena: {exc}", file=sys.stderr)
            return 2
    shown: set[str] = set()
    for who, spec in specs:
        line = summary(spec)
        if line not in shown:
            shown.add(line)
            print(line if who in ("defaults", "[sandbox]") else f"{who}: {line}")
    try:
        missing = check(s for _, s in specs)
    except SandboxError as exc:  # sandbox.required and a protection is missing
        print(f"uno-arena: {exc}", file=sys.stderr)
        return 1
    # a sandbox turned off lacks every protection: "every protection is active" said otherwise
    missing += [
        f"every protection ({'' if who == '[sandbox]' else who + ': '}sandbox.enabled = false; "
        "its bots run unconfined, as this user)"
        for who, spec in specs
        if not spec.enabled
    ]
    for line in missing:
        print(f"missing: {line}")
    if not missing:
        print("every protection is active")
    return 1 if missing else 0


def _configured(path: Path) -> list[tuple[str, SandboxSpec]]:
    """The sandboxes a config file gives its bots: a league's (only the sections of ``league
    init --config``: its ``[sandbox]``, with a league's ``required = true`` unless it says
    otherwise) or a tournament's (its ``[sandbox]`` and each launched bot's)."""
    import tomllib

    from .config import _sandbox_from_dict, load, read_text
    from .fileread import loads_toml
    from .league.settings import is_league_config, settings_from

    text = read_text(path)
    try:
        data = loads_toml(text)
    except tomllib.TOMLDecodeError:
        data = {}  # load() says what is wrong with it
    if is_league_config(data):
        settings = settings_from(path)
        return [("[sandbox]", _sandbox_from_dict(settings["sandbox"]))]
    cfg = load(path, text=text)
    specs = [("[sandbox]", cfg.sandbox)]
    return specs + [(f"bot {b.name}", b.sandbox) for b in cfg.bots if not b.external]


SANDBOX_HELP = """\
The sandbox around every bot the harness launches: bubblewrap (Debian's bubblewrap package)
gives each bot its own user, process, network and file-system namespaces, with its own folder
read-only, a private size-limited /tmp, no network but its game server, and limits on
processes, memory, CPU time, open files and log size. What this machine gives and lacks:

  uno-arena sandbox check

The protections, the settings ([sandbox] in a config) and what to install: docs/operations.md.
"""


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sb = sub.add_parser(
        "sandbox",
        help="the sandbox around launched bots: which protections this machine gives",
        description=SANDBOX_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sbsub = sb.add_subparsers(dest="sandbox_command", metavar="COMMAND", required=True)
    chk = sbsub.add_parser(
        "check",
        help="print the active protections",
        description=(
            "The protections a launched bot gets on this machine (one line), then one line per "
            "missing protection with what to install or enable. Exit status 0 when every "
            "protection is there, 1 when one is missing, 2 for a bad config."
        ),
    )
    chk.add_argument(
        "--config",
        help="a tournament config (its [sandbox] and each bot's) or a league's (its [sandbox])",
    )
    chk.set_defaults(func=cmd_check)
