"""``uno-arena sandbox check``: which protections this machine gives a launched bot
(:mod:`uno_tournament.sandbox` is the sandbox itself)."""

from __future__ import annotations

import argparse
import sys

from .config import SandboxSpec
from .sandbox import SandboxError, check, summary


def cmd_check(args: argparse.Namespace) -> int:
    """``uno-arena sandbox check [--config FILE]``: the protections a launched bot gets on this
    machine (one line), then one line per missing protection with what to install or enable.
    Exit status 0 when every protection is there, 1 when one is missing, 2 for a bad config."""
    from .config import ConfigError, load

    specs: list[tuple[str, SandboxSpec]] = [("defaults", SandboxSpec())]
    if args.config:
        try:
            cfg = load(args.config)
        except ConfigError as exc:
            print(f"uno-arena: {exc}", file=sys.stderr)
            return 2
        specs = [("[sandbox]", cfg.sandbox)]
        specs += [(f"bot {b.name}", b.sandbox) for b in cfg.bots if not b.external]
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
    for line in missing:
        print(f"missing: {line}")
    if not missing:
        print("every protection is active")
    return 1 if missing else 0


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
    chk.add_argument("--config", help="a tournament config: its [sandbox] and each bot's")
    chk.set_defaults(func=cmd_check)
