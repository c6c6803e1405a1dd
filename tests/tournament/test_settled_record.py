"""The store's sequential record across versions (uno_tournament.settled_run.SequentialRecord).

Version 1 records (before adaptive scheduling) had no block tables: an ``until = "settled"`` run
then played a fixed plan, which this version cannot continue exactly, so such a record is
refused with one line that says what to do; a version-1 new-version record (a fixed plan then
as now) is read. The runner turns the refusal into one plain line naming the store.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from uno_tournament.newversion import NewVersionState
from uno_tournament.player import RunnerError
from uno_tournament.sequential_runner import SequentialMixin
from uno_tournament.settled import SettledState
from uno_tournament.settled_run import META_KEY, RECORD_VERSION, SequentialRecord

NAMES = ("a", "b", "c", "d", "e")


def _v1_settled() -> dict[str, Any]:
    """A version-1 record of an ``until = "settled"`` run, as that version wrote it (no
    ``blocks``, ``seed`` or ``n_tables``)."""
    return {
        "version": 1,
        "kind": "settled",
        "plan_hands": 960,
        "look_every": 120,
        "through": 240,
        "state": SettledState(NAMES).to_dict(),
        "newversion": None,
        "looks": [],
        "stop": None,
    }


def _v1_newversion() -> dict[str, Any]:
    nv = NewVersionState("a", "b", delta0=0.0, delta1=10.0, alpha=0.05, beta=0.05)
    return {
        "version": 1,
        "kind": "new-version",
        "plan_hands": 960,
        "look_every": 96,
        "through": 96,
        "state": None,
        "newversion": nv.to_dict(),
        "looks": [],
        "stop": None,
    }


def test_a_version_1_settled_record_is_refused_in_one_line() -> None:
    assert RECORD_VERSION == 2
    with pytest.raises(ValueError) as err:
        SequentialRecord.from_dict(json.loads(json.dumps(_v1_settled())))
    text = str(err.value)
    assert "earlier version" in text and "new folder" in text and "\n" not in text


def test_a_version_1_new_version_record_is_read() -> None:
    rec = SequentialRecord.from_dict(json.loads(json.dumps(_v1_newversion())))
    assert rec.kind == "new-version" and rec.through == 96 and rec.blocks is None
    assert rec.newversion is not None and rec.newversion.candidate == "a"
    again = SequentialRecord.from_dict(rec.to_dict())  # written back as version 2
    assert again.to_dict()["version"] == RECORD_VERSION and again.through == 96


@pytest.mark.parametrize("version", [0, 3, "2", None])
def test_an_unknown_version_is_refused(version: object) -> None:
    data = _v1_newversion() | {"version": version}
    with pytest.raises(ValueError, match="unknown version"):
        SequentialRecord.from_dict(data)


class _Store:
    location = Path("/x/results.sqlite")

    def __init__(self, raw: dict[str, Any]) -> None:
        self.raw = raw

    def meta(self) -> dict[str, Any]:
        return {META_KEY: self.raw}


def test_the_runner_refuses_a_version_1_settled_store_in_one_line() -> None:
    """The runner's reading of the record (``_open_record``) on a store holding a version-1
    settled record: one line naming the store and what to do, not "unreadable ... verify"."""
    runner = SequentialMixin.__new__(SequentialMixin)
    runner.store = _Store(_v1_settled())  # type: ignore[assignment]
    with pytest.raises(RunnerError) as err:
        runner._open_record([])
    text = str(err.value)
    assert text.startswith("/x/results.sqlite: ") and "\n" not in text
    assert "earlier version" in text and "new folder" in text
    assert "unreadable" not in text and "verify" not in text
