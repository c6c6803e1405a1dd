"""The SDK's logging: the standard library's ``logging`` (logger ``uno_bot``), with key=value
fields in every message so that any handler shows them, or JSON lines via
:func:`configure_logging`."""

from __future__ import annotations

import json
import logging
import sys
from typing import Any, Final

LOGGER: Final = logging.getLogger("uno_bot")
_FIELDS: Final = "uno_fields"


def _value(v: Any) -> str:
    s = str(v)
    return repr(s) if (not s or any(c in s for c in " =\"'")) else s


def log(level: int, event: str, /, *, exc_info: bool = False, **fields: Any) -> None:
    """Log ``event`` with ``fields`` (rendered as ``key=value`` after the event)."""
    if not LOGGER.isEnabledFor(level):
        return
    text = " ".join([event, *(f"{k}={_value(v)}" for k, v in fields.items())])
    LOGGER.log(level, "%s", text, exc_info=exc_info, extra={_FIELDS: (event, fields)})


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, event and the fields."""

    def format(self, record: logging.LogRecord) -> str:
        event, fields = getattr(record, _FIELDS, (record.getMessage(), {}))
        doc: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname.lower(),
            "event": event,
            **{
                k: v if isinstance(v, int | float | bool | None) else str(v)
                for k, v in fields.items()
            },
        }
        if record.exc_info:
            doc["exception"] = self.formatException(record.exc_info)
        return json.dumps(doc)


def configure_logging(level: str = "info", *, json: bool = False) -> None:
    """Send the SDK's log lines to stderr at ``level`` (debug, info, warning, error): readable
    ``time level event key=value`` lines, or JSON lines if ``json``. Call it once; a program that
    configures ``logging`` itself need not call it (the logger is ``uno_bot``)."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        JsonFormatter()
        if json
        else logging.Formatter("%(asctime)s %(levelname)-7s %(message)s", "%Y-%m-%dT%H:%M:%S")
    )
    for old in list(LOGGER.handlers):
        LOGGER.removeHandler(old)
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.getLevelNamesMapping()[level.upper()])
    LOGGER.propagate = False


def enum_name(enum: Any, value: int) -> str:
    """The name of ``value`` in a protobuf ``enum`` (its number if this SDK does not know it)."""
    try:
        return str(enum.Name(value))
    except ValueError:
        return str(value)
