"""How gRPC's C core runs this project's servers: one setting, chosen by measurement.

gRPC Python (1.6x and later) serves each accepted connection through its "EventEngine" by default: a
pool of C threads reads and writes the sockets and hands every completion to the Python poller
thread, which wakes the asyncio loop. A message therefore crosses three threads, and on a 2-core
machine the switches between them were about a quarter of the game server's CPU (``perf``,
cpu-clock: the kernel's ``finish_task_switch`` 16%, futex waits 8%). With the experiment
``event_engine_listener`` turned off, a server's connections go back to gRPC's older polling engine:
the poller thread reads and writes the sockets itself, one hop fewer per message.

Measured 2026-12-04 on the project's 2-core machine (gRPC 1.85.3, docs/performance.md, "Tenth
pass"): the game server's CPU per tournament hand 12.9 -> 10.8 ms (6 + 6 alternated runs, lower in
every pair), hands/s 47 -> 52; the bare gRPC floor's 97-108 -> 70-76 us a round trip. Messages,
their order and every status are gRPC's either way; only the threads that carry them change.

gRPC reads ``GRPC_EXPERIMENTS`` once, when it is first imported, so this runs from
``uno_server/__init__.py`` before any module of the package imports ``grpc``. A value the user has
set (even an empty one) is kept, which is also how to go back to gRPC's default:
``GRPC_EXPERIMENTS= uno-arena serve``. It applies to the gRPC versions it was measured on; on
others gRPC's own default stands. It has no effect in a process that imported ``grpc`` first.
This module imports nothing of gRPC's."""

from __future__ import annotations

import os
from collections.abc import MutableMapping
from importlib.metadata import PackageNotFoundError, version

SETTING = "-event_engine_listener"
"""The value ``GRPC_EXPERIMENTS`` gets when the user has not set it."""

MEASURED = ((1, 80), (1, 90))
"""The gRPC versions (major, minor) the setting is applied to: from the first, up to but not
including the second. A gRPC outside them may not know the experiment (it would log an error
in every process), so it keeps its default."""


def measured_on(grpc_version: str) -> bool:
    """Whether ``grpc_version`` (e.g. "1.85.3") lies in :data:`MEASURED`."""
    try:
        major, minor = (int(p) for p in grpc_version.split(".")[:2])
    except ValueError:
        return False
    return MEASURED[0] <= (major, minor) < MEASURED[1]


def apply(environ: MutableMapping[str, str] = os.environ) -> bool:
    """Set ``GRPC_EXPERIMENTS`` to :data:`SETTING` unless it is set or gRPC is another
    version; True if it was set here."""
    if "GRPC_EXPERIMENTS" in environ:
        return False
    try:
        installed = version("grpcio")
    except PackageNotFoundError:
        return False
    if not measured_on(installed):
        return False
    environ["GRPC_EXPERIMENTS"] = SETTING
    return True


def quiet_core(environ: MutableMapping[str, str] = os.environ) -> bool:
    """Keep gRPC's C core to its errors (``GRPC_VERBOSITY=ERROR``) unless the user chose a level:
    with TLS on, every failed handshake wrote one INFO line of the core's own format to the
    server's stderr, which any client could provoke without limit (an examination: 300
    connections, 300 lines), beside a log promised as rate-limited JSON. True if set here."""
    if "GRPC_VERBOSITY" in environ:
        return False
    environ["GRPC_VERBOSITY"] = "ERROR"
    return True
