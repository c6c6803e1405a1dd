"""The reports at the end of a run, written so that no failure there ends in a traceback.

Every hand is stored before the reports are written, so a failure while writing them loses
nothing: ``uno-arena tournament report DIR`` writes them again from the store. An examination
saw ``resume`` of a ``--shards 2`` run print its stop line and then a Python traceback from
:func:`uno_tournament.report.write_all` (only ``OSError`` was caught there), with no report
written. :func:`write_reports` turns any exception into one :class:`RunnerError` line that names
the cause and the command to run next, and logs it (with its traceback) in
``logs/tournament.log``.
"""

from __future__ import annotations

import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from .player import RunnerError


class _Log(Protocol):
    def error(self, event: str, **fields: Any) -> None: ...


def write_reports(out: Path, log: _Log, write: Callable[[], object]) -> None:
    """Run ``write`` (the reports of the run in ``out``); a failure becomes one line."""
    again = f"uno-arena tournament report {out}"
    try:
        write()
    except OSError as exc:
        log.error("reports not written", error=str(exc), path=str(exc.filename or ""))
        raise RunnerError(
            f"every hand is stored, but the reports cannot be written: "
            f"{exc.strerror or exc} ({exc.filename or out}). Free space on that disk, "
            f"then: {again}"
        ) from exc
    except (KeyboardInterrupt, SystemExit):
        raise
    except RunnerError as exc:
        log.error("reports not written", error=str(exc))
        raise
    except Exception as exc:  # every hand is stored: no traceback for the user
        kind = type(exc).__name__
        text = " ".join(str(exc).split())[:300]
        log.error(
            "reports not written",
            error=f"{kind}: {text}",
            traceback=traceback.format_exc(),
        )
        if type(exc).__module__.startswith("uno_tournament") and text:
            cause = text  # one of this program's one-line errors (an edited store, ...)
        else:
            cause = f"{kind}: {text}" if text else kind
        raise RunnerError(
            f"every hand is stored, but the reports were not written: {cause} "
            f"(details in {out / 'logs' / 'tournament.log'}); write them with: {again}"
        ) from exc
