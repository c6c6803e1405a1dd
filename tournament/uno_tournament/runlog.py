"""The JSON log of a run: one per runner (``<out>/logs/tournament.log``, beside the game server's
``server.log``) and one per shard worker of ``--shards N`` (``<out>/logs/shard-I/tournament.log``).

One JSON object a line, as the server writes its own log (``event``, ``level``, ``timestamp`` in
UTC), with the tournament and the shard bound to every line and the bot to every line about a
bot. What goes there: the run's start and end, bot crashes, restarts and give-ups, hands played
again after a cancellation or a retry, the server lost, store errors (a full disk), and every
error that stops the run. The console keeps its short lines; this log is for ``jq`` and a log
shipper.

A log write that fails (the disk the log is on is full) is dropped: the log never stops a run.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, TextIO

import structlog

LOG_NAME = "tournament.log"


class _File:
    """structlog's output: one line per event, flushed, errors swallowed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.file: TextIO | None = None
        self.closed = False
        """Closed for good (the run is over): later lines are dropped."""

    def msg(self, message: str) -> None:
        if self.closed:
            return
        try:
            if self.file is None:  # opened at the first line: a run that logs nothing has none
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.file = self.path.open("a", encoding="utf-8")
            self.file.write(message + "\n")
            self.file.flush()
        except (OSError, ValueError):
            pass

    log = debug = info = warn = warning = error = critical = exception = fatal = msg

    def close(self) -> None:
        self.closed = True
        if self.file is not None:
            try:
                self.file.close()
            except OSError:
                pass
            self.file = None


class RunLog:
    """A run's JSON log: :meth:`info`, :meth:`warning` and :meth:`error` take an event name and
    fields; :meth:`bind` gives a log with more fields bound (``bot=...``)."""

    def __init__(self, path: Path, **bound: Any) -> None:
        self.path = path
        self._file = _File(path)
        self._log = structlog.wrap_logger(
            self._file,
            processors=[
                structlog.processors.add_log_level,
                structlog.processors.TimeStamper(fmt="iso", utc=True),
                structlog.processors.format_exc_info,
                structlog.processors.JSONRenderer(),
            ],
            wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG),
            cache_logger_on_first_use=False,
        ).bind(**bound)

    def bind(self, **fields: Any) -> RunLog:
        other = RunLog.__new__(RunLog)
        other.path = self.path
        other._file = self._file
        other._log = self._log.bind(**fields)
        return other

    def info(self, event: str, **fields: Any) -> None:
        self._log.info(event, **fields)

    def warning(self, event: str, **fields: Any) -> None:
        self._log.warning(event, **fields)

    def error(self, event: str, **fields: Any) -> None:
        self._log.error(event, **fields)

    def close(self) -> None:
        self._file.close()


_LOG_HEAD = 256 * 1024


def postgres_run(folder: Path) -> str | None:
    """What to do with ``folder`` when its run stored its hands in PostgreSQL (``tournament run
    --store postgresql://... --out DIR``), else ``None``. Such a run keeps no tournament.sqlite
    there, only ``logs/``, whose "run started" lines name the store (the password hidden) and the
    shard: ``resume`` said "no tournament here", with no way forward (an examination)."""
    import json

    if (folder / "tournament.sqlite").exists():
        return None
    found: tuple[str, str, object] | None = None
    try:
        with (folder / "logs" / LOG_NAME).open(encoding="utf-8", errors="replace") as f:
            for line in f.read(_LOG_HEAD).splitlines():
                if '"run started"' not in line:
                    continue
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                store = entry.get("store") if isinstance(entry, dict) else None
                if isinstance(store, str) and store.startswith(("postgresql://", "postgres://")):
                    found = (store[:200], str(entry.get("shard", ""))[:20], entry.get("shards"))
    except OSError:
        return None
    if found is None:
        return None
    store, shard, shards = found
    again = ""
    if "/" in shard:  # one pod of --shard I/N
        again = f" --shard {shard}"
    elif isinstance(shards, int) and not isinstance(shards, bool) and shards > 1:
        again = f" --shards {shards}"
    return (
        f"{folder}: this run stored its results in PostgreSQL ({store}), not in the folder; to "
        f"carry on, run it again: uno-arena tournament run CONFIG --out {folder}{again} --store "
        "URL (the same configuration and URL: it plays only the hands not yet stored)"
    )
