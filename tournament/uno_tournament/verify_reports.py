"""The report files against the database they came from.

The chain head guards the hands, the incidents and the configuration; the report files
(``results.json``, ``leaderboard.csv``, ``leaderboard.md``, ``report.html``) are what people
read and publish, and an examination edited a rating in ``results.json`` without verify
noticing. The report is a pure function of the database (the fit sorts the hands first, so it is
reproducible), so verify writes it again into a scratch folder and compares:

* ``results.json`` and ``leaderboard.csv`` field by field, numbers within a relative 1e-6 (the
  last digits of a fit may differ between machines' linear algebra);
* ``leaderboard.md`` and ``report.html`` line by line.

Each file that differs is one line naming the first place it differs. A file written by another
version of uno-arena can differ too; the line says so, and ``uno-arena tournament report DIR``
writes it again. A report file that is not there cannot be compared: verify names it on its last
line, so a check of fewer files never reads as a check of all four. Something else in a report
file's place (a named pipe, a device, a folder) is a problem line.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .chain import COLUMN_SHORT, SHORT
from .config import TournamentConfig
from .fileread import DuplicateKeyError, read_regular, unique_keys
from .store import ResultStore

FILES = ("results.json", "leaderboard.csv", "leaderboard.md", "report.html")
MAX_REPORT_FILE = 1 << 30
REL_TOL = 1e-6
ABS_TOL = 1e-9
WHY = (
    "differs from the report the database gives (edited after it was written, or written by "
    "another version of uno-arena; `uno-arena tournament report DIR` writes it from the database)"
)


def planned_hands(store: ResultStore, config: TournamentConfig, tid: str) -> int:
    """The hands the report counts as planned: the schedule's, or a sequential run's up to its
    stop."""
    planned = len(config.plan(tid))
    if config.sequential:
        from .report_settled import load as load_decision

        rec = load_decision(store.meta())
        if rec is not None and rec.stop_hands is not None:
            planned = rec.stop_hands
    return planned


@dataclass
class ReportCheck:
    problems: list[str] = field(default_factory=list)
    """One line per report file that differs, or cannot be read."""
    compared: list[str] = field(default_factory=list)
    """The report files that were there and were compared."""
    absent: list[str] = field(default_factory=list)
    """The report files that were not there (not compared)."""


def check_reports(
    folder: Path,
    store: ResultStore,
    config: TournamentConfig,
    tid: str,
    *,
    older_chain: bool = False,
) -> ReportCheck:
    """The report files in ``folder`` against the report the store gives: one problem line per
    file that differs. ``older_chain``: results.json holds an older run's chain
    (:data:`uno_tournament.chain.LEGACY`, already compared with the database), so its ``chain``
    is left out of the comparison; everything else in it is compared."""
    from .report import write_all

    out = ReportCheck()
    # lexists: a dangling link, a pipe or a folder in a report file's place is not "absent":
    # reading it fails below and says so
    present = [name for name in FILES if os.path.lexists(folder / name)]
    out.absent = [name for name in FILES if name not in present]
    if not present:
        return out
    problems = out.problems
    with tempfile.TemporaryDirectory(prefix="uno-arena-verify-") as tmp:
        write_all(Path(tmp), store, config, tid, planned=planned_hands(store, config, tid))
        for name in present:
            try:
                theirs = read_regular(folder / name, MAX_REPORT_FILE)
            except (OSError, ValueError) as exc:
                problems.append(f"{name}: unreadable ({exc})")
                continue
            out.compared.append(name)
            ours = (Path(tmp) / name).read_bytes()
            where = _difference(name, theirs, ours, skip=("chain",) if older_chain else ())
            if where is not None:
                problems.append(f"{name}: {where} {WHY}")
    return out


ADDED = ((("chain", "columns"), "incidents_seen"),)
"""Keys this version writes into results.json that a report of an earlier version of the same
chain did not (where, key): missing in the file, they are not compared (a run reported before
them verified until they were added; an examination)."""


def _added_since(theirs: Any, ours: Any) -> None:
    """Take out of ``ours`` the :data:`ADDED` keys that ``theirs`` does not have."""
    for where, key in ADDED:
        a, b = theirs, ours
        for part in where:
            a = a.get(part) if isinstance(a, dict) else None
            b = b.get(part) if isinstance(b, dict) else None
        if isinstance(b, dict) and key in b and not (isinstance(a, dict) and key in a):
            del b[key]


def _difference(name: str, theirs: bytes, ours: bytes, skip: tuple[str, ...] = ()) -> str | None:
    """Where ``theirs`` first differs from ``ours`` (None: they agree); a JSON file's top-level
    keys in ``skip`` are not compared."""
    if theirs == ours:
        return None
    if name.endswith(".json"):
        try:
            a = json.loads(theirs, object_pairs_hook=unique_keys)
        except DuplicateKeyError as exc:
            return f"has {exc}, and"
        except (ValueError, RecursionError):
            return "is not JSON, and"
        b = json.loads(ours)
        _added_since(a, b)
        if skip and isinstance(a, dict) and isinstance(b, dict):
            a = {k: v for k, v in a.items() if k not in skip}
            b = {k: v for k, v in b.items() if k not in skip}
        return _json_difference(a, b, "")
    text_a = theirs.decode("utf-8", errors="replace")
    text_b = ours.decode("utf-8", errors="replace")
    if name.endswith(".csv"):
        rows_a = list(csv.reader(io.StringIO(text_a)))
        rows_b = list(csv.reader(io.StringIO(text_b)))
        if len(rows_a) != len(rows_b):
            return f"has {len(rows_a)} rows, not {len(rows_b)}:"
        for i, (ra, rb) in enumerate(zip(rows_a, rows_b, strict=True)):
            if len(ra) != len(rb) or not all(map(_same_cell, ra, rb)):
                return f"row {i + 1}"
        return None
    lines_a, lines_b = text_a.splitlines(), text_b.splitlines()
    for i, (la, lb) in enumerate(zip(lines_a, lines_b, strict=False)):
        if la != lb:
            return f"line {i + 1}"
    if len(lines_a) == len(lines_b):  # the same lines, other bytes between or after them
        return "has the same lines with other line endings (or other bytes at its end), and"
    return f"has {len(lines_a)} lines, not {len(lines_b)}:"


def _same_cell(a: str, b: str) -> bool:
    if a == b:
        return True
    if _integral(b) or _integral(a):  # a count: exact (a tolerance let 1000000 become 1000001)
        return False
    try:
        return _close(float(a), float(b))
    except (ValueError, OverflowError):
        return False


def _integral(text: str) -> bool:
    """A cell written as an integer (a count: hands, wins, forfeits), compared exactly."""
    t = text.strip()
    return t.lstrip("+-").isdigit() and len(t) < 40


def _close(a: float, b: float) -> bool:
    """Equal within the tolerance (a number too large for a float is never close)."""
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _json_difference(a: Any, b: Any, path: str) -> str | None:
    """The first path at which ``a`` differs from ``b`` (numbers within the tolerance)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return None if a is b else f"{path or 'the top'} is {_differ(a, b, path)}:"
    if isinstance(a, int | float) and isinstance(b, int | float):
        try:
            # a count (an integer in the report the database gives) is compared exactly: a
            # relative tolerance let an examiner's edited count of a million pass
            same = a == b or (not isinstance(b, int) and _close(float(a), float(b)))
        except OverflowError:  # an integer of hundreds of digits: no report writes one
            same = False
        return None if same else f"{path} is {_differ(a, b, path)}:"
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                return f"{_join(path, k)} is {'added' if k in a else 'missing'}:"
            where = _json_difference(a[k], b[k], _join(path, k))
            if where is not None:
                return where
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} has {len(a)} entries, not {len(b)}:"
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            key = f"{path}[{i}]"
            if isinstance(y, dict) and "bot" in y:
                key = f"{path}[{i}] ({str(y['bot'])[:40]})"
            where = _json_difference(x, y, key)
            if where is not None:
                return where
        return None
    return None if a == b else f"{path or 'the top'} is {_differ(a, b, path)}:"


def _join(path: str, key: object) -> str:
    return f"{path}.{str(key)[:40]}" if path else str(key)[:40]


def _differ(a: Any, b: Any, path: str = "") -> str:
    """``A, not B`` for two values that differ, in full where the short forms would look the
    same (an edited ``hands = 24.0000001`` read "hands is 24, not 24"). Two long strings show
    the window around their first difference (:func:`_string_window`): cut to their first 37
    characters, two digests that differ at the 41st read the same (an examination)."""
    if (
        isinstance(a, str)
        and isinstance(b, str)
        and max(len(json.dumps(a)), len(json.dumps(b))) > SHOWN
    ):
        return _string_window(a, b, path)
    x, y = _show(a), _show(b)
    if x == y:
        x, y = _show(a, full=True), _show(b, full=True)
    return f"{x}, not {y}"


SHOWN = 40
"""The longest value a line repeats in full."""
AROUND = 8
"""Characters shown either side of the first difference of two long strings."""
CHUNKS = {"chain.hands_digests": SHORT}
"""Strings of one digest per hand in schedule order (:mod:`uno_tournament.chain`): the
characters of a digest, per path; ``chain.column_digests.*`` hold :data:`COLUMN_SHORT`."""


def _string_window(a: str, b: str, path: str = "") -> str:
    """Two strings that differ, each shown from a few characters before their first difference
    to a few after, the first differing character in brackets and a cut end marked "…" inside
    the closed quotes; then where they differ (and, in a chain's digests, which hand)."""
    at = next(
        (i for i, (p, q) in enumerate(zip(a, b, strict=False)) if p != q), min(len(a), len(b))
    )
    start = max(at - AROUND, 0)

    def window(v: str) -> str:
        head = ("…" if start else "") + _inner(v[start:at])
        if at >= len(v):  # the string ends where the other goes on
            return f'"{head}" (its end)'
        tail = _inner(v[at + 1 : at + 1 + AROUND]) + ("…" if at + 1 + AROUND < len(v) else "")
        return f'"{head}[{_inner(v[at])}]{tail}"'

    size = f"of {len(a)}" if len(a) == len(b) else f"({len(a)} characters, not {len(b)})"
    where = f"first difference at character {at + 1} {size}, in brackets"
    width = CHUNKS.get(path) or (COLUMN_SHORT if path.startswith("chain.column_digests.") else 0)
    if width:
        where += f"; hand {at // width + 1} in schedule order"
    return f"{window(a)}, not {window(b)} ({where})"


def _inner(text: str) -> str:
    """``text`` as inside a JSON string (its escapes, without the quotes)."""
    return json.dumps(text)[1:-1]


def _show(v: Any, *, full: bool = False) -> str:
    """A value of a report file as a line repeats it (a float to 6 digits, or all of them); a
    long one cut, marked "…" (a string's quotes closed after it)."""
    if isinstance(v, str):
        text = json.dumps(v)
        return text if len(text) <= SHOWN else f'"{_inner(v[: SHOWN - 6])}…"'
    if not isinstance(v, float):
        text = json.dumps(v)
    elif full:
        text = repr(v)
    else:
        text = f"{v:.6g}"
    return text if len(text) <= SHOWN else text[: SHOWN - 3] + "…"
