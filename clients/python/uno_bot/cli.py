"""The command line every bot shares: ``--addr``, ``--token``, ``--name`` (each with an
environment variable), one plain line and an exit code on failure."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from ._log import configure_logging
from .address import AddressError, parse_address
from .client import ClientConfig, FatalStreamError, run

if TYPE_CHECKING:  # types only: the user API imports this module, not the other way round
    from .api import Bot

__all__ = ["PROG", "fail", "main", "parse_args", "run_main"]

PROG: Final = "uno-bot"
"""How the SDK names itself in the one-line errors of the command line."""


def fail(message: str, code: int = 2) -> SystemExit:
    """Print ONE line ``uno-bot: message`` on stderr; returns the SystemExit to raise."""
    print(f"{PROG}: {message}", file=sys.stderr, flush=True)
    return SystemExit(code)


def parse_args(
    argv: Sequence[str] | None = None,
    *,
    default_name: str = "py-bot",
    description: str | None = None,
    parser: argparse.ArgumentParser | None = None,
) -> tuple[argparse.Namespace, ClientConfig]:
    """The common command line; every flag falls back to an environment variable. A missing
    token or a malformed address exits 2 with one line."""
    env = os.environ
    p = parser or argparse.ArgumentParser(description=description)
    p.add_argument(
        "--addr",
        default=env.get("UNO_ARENA_ADDR", "127.0.0.1:50051"),
        help="server address: HOST:PORT, http://HOST:PORT or https://HOST:PORT "
        "(env UNO_ARENA_ADDR, default 127.0.0.1:50051)",
    )
    p.add_argument(
        "--token", default=env.get("UNO_ARENA_TOKEN", ""), help="bot token (env UNO_ARENA_TOKEN)"
    )
    p.add_argument(
        "--name",
        default=env.get("UNO_ARENA_BOT_NAME", default_name),
        help=f"bot name (env UNO_ARENA_BOT_NAME, default {default_name})",
    )
    p.add_argument("--version", dest="bot_version", default=None, help="bot version string")
    p.add_argument(
        "--ca-file",
        default=env.get("UNO_ARENA_CA_FILE") or None,
        help="PEM CA file; enables TLS (env UNO_ARENA_CA_FILE)",
    )
    p.add_argument(
        "--tls",
        action="store_true",
        default=env.get("UNO_ARENA_TLS", "") not in ("", "0", "false"),
        help="TLS with the system roots, as https:// does (env UNO_ARENA_TLS=1)",
    )
    p.add_argument(
        "--log-level",
        default=env.get("UNO_ARENA_LOG_LEVEL", "info"),
        choices=["debug", "info", "warning", "error"],
    )
    p.add_argument("--log-json", action="store_true", help="log JSON lines")
    ns = p.parse_args(argv)
    if not ns.token:
        raise fail("a token is required: --token or UNO_ARENA_TOKEN")
    try:
        addr = parse_address(ns.addr)
    except AddressError as err:
        raise fail(str(err)) from None
    if (
        addr.tls is False
        and ns.addr.strip().lower().startswith("http://")
        and (ns.tls or ns.ca_file)
    ):
        raise fail(f'address "{ns.addr}" is plaintext (http://) but TLS was asked for')
    cfg = ClientConfig(
        addr=ns.addr,
        token=ns.token,
        name=ns.name,
        version=ns.bot_version,
        tls=ns.tls,
        ca_file=ns.ca_file,
    )
    return ns, cfg


def main(
    bot: Bot, argv: Sequence[str] | None = None, *, parser: argparse.ArgumentParser | None = None
) -> int:
    """Parse the command line, configure logging and run ``bot``. Returns the exit code: 0
    after SIGINT/SIGTERM, 1 if the server refused the bot for good, 2 for a bad command line."""
    ns, cfg = parse_args(argv, default_name=bot.name, parser=parser)
    configure_logging(ns.log_level, json=ns.log_json)
    return run_main(bot, cfg)


def run_main(bot: Bot, cfg: ClientConfig) -> int:
    """Run ``bot`` with ``cfg`` as a program: one plain line and an exit code on failure."""
    try:
        run(bot, cfg)
    except FatalStreamError as err:
        raise fail(str(err), 1) from None
    except ConnectionError as err:
        raise fail(str(err), 1) from None
    except OSError as err:  # e.g. an unreadable --ca-file
        raise fail(f"{err.strerror or err}: {err.filename or ''}".rstrip(": "), 2) from None
    except KeyboardInterrupt:
        pass
    return 0
