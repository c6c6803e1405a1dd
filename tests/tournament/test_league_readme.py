"""The README's "Run a league" section (issue 26's "done when"): five commands from a fresh
checkout to a league playing two submitted bots. The commands themselves run in the end-to-end
test's way (submit, run); here: the section is five commands, in that order, whose example
folders are submissions of two authors that the league would take."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

from uno_tournament.league.manifest import read_manifest

ROOT = Path(__file__).resolve().parents[2]


def test_the_readme_runs_a_league_in_five_commands() -> None:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Run a league") :]
    section = section[: section.index("\n## ", 3)]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block is not None
    commands = [shlex.split(line.split("#")[0]) for line in block.group(1).splitlines()]
    assert len(commands) == 5
    assert commands[0] == ["make", "venv"]
    verbs = [c[1:3] for c in commands[1:]]
    assert verbs == [["league", "init"], ["league", "submit"], ["league", "submit"],
                     ["league", "run"]]  # fmt: skip
    league = commands[1][3]
    assert all(c[3] == league for c in commands[1:])
    bots = [read_manifest(ROOT / c[4]) for c in commands[2:4]]
    assert len({b.name for b in bots}) == 2 and len({b.author for b in bots}) == 2
    assert "docs/league.md" in section
