"""``uno-arena tournament verify DIR``: check a whole run.

For every hand in the database:

* it is a hand of the schedule, with the schedule's seating and match seed;
* its replay file exists, and its content hash (SHA-256 of the canonical JSON) is the one stored
  when the hand was played, as is the hash of the copy kept in the database;
* the engine replays it to the stored result (winner and points held) from a seed that the
  recorded match seed deals, and the file names the same hand, seating and schedule slot.

Replay files of hands the database does not hold are reported too. Each problem is one line;
the exit status is 1 if there is any.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from .replay import ReplayError, check, check_against_store, load
from .runner import load_config, replay_name
from .store import Store, content_hash

MAX_LINES = 20


@dataclass
class VerifyReport:
    hands: int = 0
    planned: int = 0
    checked: int = 0
    problems: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(folder: Path, *, progress: Callable[[int, int], None] | None = None) -> VerifyReport:
    store = Store.open(folder)
    try:
        return _verify(folder, store, progress)
    finally:
        store.close()


def _verify(
    folder: Path, store: Store, progress: Callable[[int, int], None] | None
) -> VerifyReport:
    config = load_config(store, folder)
    tid = str(store.meta()["tournament_id"])
    plan = {h.hand_id: h for h in config.plan(tid)}
    rep = VerifyReport(hands=store.count(), planned=len(plan))
    replays = folder / "replays"
    try:
        files = set(os.listdir(replays))
    except FileNotFoundError:
        files = set()
    named: set[str] = set()
    for i, h in enumerate(store.hand_rows()):
        if progress is not None and i % 200 == 0:
            progress(i, rep.hands)
        name = replay_name(h.hand_id)
        named.add(name)
        where = f"{h.hand_id}:"
        spec = plan.get(h.hand_id)
        bots = [s.bot for s in h.seats]
        if spec is None:
            rep.problems.append(f"{where} not a hand of this tournament's schedule")
        elif tuple(bots) != spec.bots or h.match_seed != spec.seed:
            rep.problems.append(
                f"{where} the database seats {bots} with match seed {h.match_seed}; the "
                f"schedule says {list(spec.bots)} with {spec.seed}"
            )
        stored = store.replay(h.hand_id)
        if stored is None or content_hash(stored) != h.content_hash:
            rep.problems.append(
                f"{where} the database's copy of the replay does not match its hash"
            )
        if name not in files:
            rep.problems.append(f"{where} replay file replays/{name} is missing")
            continue
        path = replays / name
        try:
            data = load(path)
        except ReplayError as exc:
            rep.problems.append(f"{where} {exc}")
            continue
        verdict = check(data, path)
        if not verdict.ok:
            rep.problems.append(f"{where} replays/{name}: {verdict.message}")
            continue
        problem = check_against_store(data, store)
        if problem:
            rep.problems.append(f"{where} replays/{name}: {problem}")
            continue
        result = data["result"]
        if result["winner"] != h.winner_seat or result["points_held"] != [
            s.points_left for s in h.seats
        ]:
            rep.problems.append(f"{where} the replay's result differs from the database's")
            continue
        rep.checked += 1
    for extra in sorted(f for f in files - named if f.endswith(".json")):
        rep.problems.append(f"replays/{extra}: a replay file of no hand in the database")
    if progress is not None:
        progress(rep.hands, rep.hands)
    return rep


def print_report(rep: VerifyReport, folder: Path, stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    for line in rep.problems[:MAX_LINES]:
        print(line, file=stream)
    if len(rep.problems) > MAX_LINES:
        print(f"... and {len(rep.problems) - MAX_LINES} more problems", file=stream)
    missing = rep.planned - rep.hands
    todo = f"; {missing} planned hands not played yet" if missing > 0 else ""
    if rep.ok:
        print(
            f"{folder}: verified {rep.checked} of {rep.hands} stored hands: every replay "
            f"confirmed by the engine, the schedule and the database{todo}",
            file=stream,
        )
    else:
        print(
            f"{folder}: {len(rep.problems)} problems in {rep.hands} stored hands "
            f"({rep.checked} confirmed){todo}",
            file=stream,
        )
