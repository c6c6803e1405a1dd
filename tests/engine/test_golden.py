"""Golden transcripts: every case of make_golden.py, rebuilt in memory, must match its file.

A difference means the engine, a view or the redaction now behaves differently for a fixed seed
and action list. If that change is intended, run ``make golden`` and review the diff; if it is
not (an optimisation should never change a transcript), it is a bug.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.engine.make_golden import CASES, GOLDEN_DIR, Case, build, dumps, path_of
from uno_server.engine import Hand, RuleSet

HOW_TO_FIX = (
    "if the change is intended, run `make golden` and review the diff of tests/engine/golden"
)


def first_difference(want: Any, got: Any, path: str = "$") -> str | None:
    """Where two JSON values first differ, as a readable path and the two values."""
    if type(want) is not type(got):
        return f"{path}: expected {want!r}, got {got!r}"
    if isinstance(want, dict):
        for key in sorted(set(want) | set(got)):
            if key not in got:
                return f"{path}.{key}: missing (expected {want[key]!r})"
            if key not in want:
                return f"{path}.{key}: unexpected {got[key]!r}"
            diff = first_difference(want[key], got[key], f"{path}.{key}")
            if diff:
                return diff
        return None
    if isinstance(want, list):
        for i, (a, b) in enumerate(zip(want, got, strict=False)):
            diff = first_difference(a, b, f"{path}[{i}]")
            if diff:
                return diff
        if len(want) != len(got):
            return f"{path}: expected {len(want)} items, got {len(got)}"
        return None
    return None if want == got else f"{path}: expected {want!r}, got {got!r}"


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_transcript_matches_golden_file(case: Case) -> None:
    path = path_of(case)
    assert path.exists(), f"{path} is missing; {HOW_TO_FIX}"
    text = dumps(build(case))
    saved = path.read_text()
    if text == saved:
        return
    diff = first_difference(json.loads(saved), json.loads(text))
    pytest.fail(
        f"golden transcript {path.name} differs at {diff or 'formatting only'}; {HOW_TO_FIX}",
        pytrace=False,
    )


def test_golden_files_are_exactly_the_cases() -> None:
    on_disk = sorted(p.name for p in GOLDEN_DIR.glob("*.json"))
    assert on_disk == sorted(path_of(c).name for c in CASES), (
        f"stray or missing golden files; {HOW_TO_FIX}"
    )


def test_golden_files_stay_modest() -> None:
    for case in CASES:
        size = path_of(case).stat().st_size
        assert size < 300_000, f"{path_of(case).name} is {size} bytes"


def test_transcript_is_self_consistent() -> None:
    """A golden file's action list replays to its last step, and each step's acting seat and
    action agree with the list (so the files can be used to replay a hand by hand)."""
    for case in CASES:
        data = json.loads(path_of(case).read_text())
        assert [[s["seat"], s["action"]] for s in data["steps"]] == data["actions"]
        hand = Hand.replay(
            RuleSet.from_dict(data["rules"]),
            data["seed"],
            data["dealer"],
            [(a[0], a[1]) for a in data["actions"]],
        )
        assert hand.over and hand.winner == data["winner"]
