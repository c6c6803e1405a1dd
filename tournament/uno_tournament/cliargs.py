"""Argument types and checks shared by the tournament and league command lines (``whole`` is
the server command line's): a value out of its range is refused by argparse in one line naming
the flag (``argument --port: must be from 1 to 65535, got 70000``), before anything is made."""

from __future__ import annotations

import argparse
import math
import socket
from collections.abc import Callable

from uno_server.service.main import whole

__all__ = [
    "any_port",
    "concurrency",
    "folder",
    "linger",
    "port",
    "seconds",
    "unbindable",
    "whole",
]


def seconds(lo: float, hi: float) -> Callable[[str], float]:
    """An argparse type: a number of seconds from ``lo`` to ``hi`` (not nan, not inf)."""

    def parse(text: str) -> float:
        try:
            x = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"must be a number, got {text[:20]!r}") from None
        if not (math.isfinite(x) and lo <= x <= hi):
            raise argparse.ArgumentTypeError(f"must be from {lo:g} to {hi:g} seconds, got {x:g}")
        return x

    return parse


def folder(text: str) -> str:
    """An argparse type: a folder to write in. An empty name (which would fall back to the
    config's folder without a word) and a NUL character (no path holds one) are refused."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty; name the folder")
    if "\0" in text:
        raise argparse.ArgumentTypeError("a path cannot hold a NUL character")
    return text


port = whole(1, 65535)
"""A TCP port that must be given (1-65535)."""
any_port = whole(0, 65535)
"""A TCP port, 0 for any free one."""
concurrency = whole(1, 1024)
"""Hands played at once (as ``tournament.concurrency``)."""
linger = seconds(0, 3600)
"""How long pages stay up after a run (0-3600 s)."""


def unbindable(host: str, port_no: int) -> str:
    """Why ``host:port_no`` cannot be listened on now ("" if it can): checked before a run
    creates anything, so a busy or mistyped metrics address does not leave a half-made run
    folder behind (the page itself opens later; a port taken in between fails then)."""
    try:
        infos = socket.getaddrinfo(host, port_no, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError, ValueError) as exc:
        return f"{host!r} is not an address of this machine ({exc})"
    family, kind, proto, _, addr = infos[0]
    with socket.socket(family, kind, proto) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(addr)
        except OSError as exc:
            return f"cannot listen on {host}:{port_no} ({exc.strerror or exc})"
    return ""
