"""The compiled engine (mypyc) plays exactly the hands the pure sources play (issue 11).

The suite itself runs whichever build ``uno_server.engine`` loads: the compiled one when it was
built from the sources as they are, the pure sources otherwise (``_build.py``). This test runs
both builds in subprocesses, on the golden cases and on a few hundred random hands under many
rule sets, and compares everything they produce. With ``CI=true`` a missing or stale compiled
build fails the test: ``make venv`` must have compiled it.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from uno_server.engine import InvalidRulesError, RuleSet
from uno_server.engine._build import COMPILED_MODULES, RECORD, SHARED_LIB, compiled_problem

ROOT = Path(__file__).resolve().parents[2]
KNOWN = RuleSet().to_dict()
PLAY = r"""
import hashlib, sys
from tests.engine.make_golden import CASES, build, dumps
from uno_server.engine import BUILD, COMPILED, Hand, RandomBot, RuleSet
from uno_server.engine.simulate import play_hand

digest = hashlib.sha256()
for case in CASES:
    digest.update(dumps(build(case)).encode())
rule_sets = [
    RuleSet(),
    RuleSet(seats=2, first_flip="redraw"),
    RuleSet(seats=7, decks=2, uno_penalty=4),
    RuleSet(stacking=True, stacking_wd4=True, jump_in=True),
    RuleSet(seats=3, seven_o=True, draw_until_playable=True),
]
for k, rules in enumerate(rule_sets):
    for seed in range(80):
        hand = Hand.deal(rules, seed * 7919 + k, seed % rules.seats)
        play_hand(hand, [RandomBot(seed * 10 + s) for s in range(rules.seats)])
        digest.update(repr((hand.log, hand.actions, hand.to_dict())).encode())
print(COMPILED, BUILD, digest.hexdigest(), sep="\n")
"""


def run_build(which: str) -> tuple[bool, str, str]:
    env = dict(os.environ, UNO_ARENA_ENGINE=which)
    res = subprocess.run(
        [sys.executable, "-c", PLAY],
        check=False,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode == 0, res.stderr
    compiled, build, digest = res.stdout.split("\n")[:3]
    return compiled == "True", build, digest


def test_compiled_build_plays_what_the_pure_sources_play() -> None:
    problem = compiled_problem()
    if problem is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs the compiled engine, but {problem}")
        pytest.skip(f"no usable compiled engine here: {problem}")
    pure = run_build("pure")
    compiled = run_build("compiled")
    assert (pure[0], compiled[0]) == (False, True), (pure[1], compiled[1])
    assert compiled[2] == pure[2], "the compiled engine played different hands"


def test_a_stale_or_partial_compiled_build_is_never_used(tmp_path: Path) -> None:
    """A compiled build is used only if every module is there and the record of its sources
    matches every .py file beside it."""
    suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
    assert compiled_problem(tmp_path) == "no compiled build is installed"
    for m in COMPILED_MODULES:
        (tmp_path / f"{m}.py").write_text(f"# {m}\n")
        (tmp_path / f"{m}{suffix}").write_bytes(b"")
    assert compiled_problem(tmp_path) == f"the compiled build lacks {SHARED_LIB}"
    (tmp_path / f"{SHARED_LIB}{suffix}").write_bytes(b"")
    assert "no valid _native_build.json" in (compiled_problem(tmp_path) or "")
    sources = {
        m: hashlib.sha256((tmp_path / f"{m}.py").read_bytes()).hexdigest() for m in COMPILED_MODULES
    }
    (tmp_path / RECORD).write_text(json.dumps({"sources": sources}))
    assert compiled_problem(tmp_path) is None
    (tmp_path / "hand.py").write_text("# hand, edited after the build\n")
    assert compiled_problem(tmp_path) == (
        "hand.py changed after the compiled build; rebuild it (make venv)"
    )


def test_setup_compiles_the_modules_the_engine_checks() -> None:
    """setup.py and _build.py name the same compiled modules (neither may import the other)."""
    import ast

    tree = ast.parse((ROOT / "setup.py").read_text())
    found = [
        ast.literal_eval(node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == "COMPILED_MODULES" for t in node.targets)
    ]
    assert found == [COMPILED_MODULES]


@pytest.mark.parametrize(
    ("data", "message"),
    [
        ({"stacking": "yes"}, "rules.stacking: must be true or false, got 'yes'"),
        ({"seats": "4"}, "rules.seats: must be an integer, got '4'"),
        ({"seats": True}, "rules.seats: must be an integer, got True"),
        ({"first_flip": 1}, "rules.first_flip: must be a string, got 1"),
        # an unknown name is quoted when it is not a plain name: the error stays on one line
        ({"a\nb": 1}, "rules.'a\\nb': unknown option (known: " + ", ".join(sorted(KNOWN)) + ")"),
        ({"bogus": 1}, "rules.bogus: unknown option (known: " + ", ".join(sorted(KNOWN)) + ")"),
    ],
)
def test_rule_sets_of_the_wrong_type_name_the_field_in_either_build(
    data: dict[str, object], message: str
) -> None:
    """Compiled, RuleSet's constructor refuses a wrong type with a bare TypeError, so from_dict
    checks types first: configs and requests get the same error from both builds."""
    with pytest.raises(InvalidRulesError) as exc:
        RuleSet.from_dict(data)
    assert str(exc.value) == message
