"""Re-run a recorded hand through the engine, and check that it is the hand it says it is.

A replay file holds the rule set, the hand's seed and dealer and every action (seat, action id)
in order, as the server's HandEndedEvent gave them. :func:`check` proves three things:

1. the result: it deals the hand again from the seed (``uno_server.engine.Hand``), applies the
   actions one by one and compares the winner and the points held with the recorded result; it
   says where the two diverge otherwise;
2. the deal: the hand's seed is the one a single-hand match with the recorded match seed and
   dealer 0 deals (``uno_server.engine.Match``), so the cards belong to that match seed;
3. the identity (format 2 files): the hand id and the seating are the ones the tournament's
   schedule gives for the recorded table, block, deal and rotation, and the file's name is the
   hand's. Files written before 2026-12-06 also hold the tournament seed
   (``schedule.tournament_seed``), and their match seed is checked against it; newer ones leave
   the seed out (it is the run's secret: it deals every hand), so the match seed is checked
   against the database only.

:func:`check_against_store` then compares the file with the tournament's database: the same hand
id, the same bot in every seat, the same match seed, and the same content hash (SHA-256 of the
canonical JSON) as stored when the hand was played. A seating swapped in the file, a hand id
changed, or a record copied from another hand fails with one line that says what differs.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uno_server.engine.errors import EngineError, InvalidRulesError
from uno_server.engine.hand import Hand
from uno_server.engine.match import Match
from uno_server.engine.rules import RuleSet

from .eventjson import replay_json
from .fileread import (
    DuplicateKeyError,
    NotARegularFileError,
    read_regular,
    unique_keys,
    write_all,
)
from .handcheck import ReplayMismatchError, compare, expected
from .replay_events import events_problem
from .schedule import deal_seed, seating
from .schedule import hand_id as schedule_hand_id
from .store import DB_NAME, HandRecord, ResultStore, Store, canonical_json, content_hash

MAX_ACTIONS = 100_000


REPLAY_FORMAT = "uno-arena-replay/2"
"""The ``format`` of the replay files the runner writes."""


def replay_name(hand_id: str) -> str:
    return hand_id.split("/", 1)[-1].replace("/", "-") + ".json"


_MADE: set[str] = set()
"""Replay folders made already by this process (a hand need not ask for its folder again)."""


def write_replay(folder: Path, replay: dict[str, Any], raw: bytes = b"") -> Path:
    """Write a replay file atomically (temporary file, then rename). The file is the replay's
    canonical JSON (``raw`` when the caller has made it already), so its SHA-256 is the stored
    content hash; ``python -m json.tool`` shows it indented."""
    where = os.fspath(folder)
    if where not in _MADE:
        folder.mkdir(parents=True, exist_ok=True)
        _MADE.add(where)
    name = replay_name(str(replay["hand_id"]))
    path = os.path.join(where, name)
    tmp = path + ".tmp"
    data = raw or canonical_json(replay)
    # never through a link or into a pipe a stranger left at the temporary name
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_NONBLOCK
    try:
        fd = os.open(tmp, flags, 0o666)
    except FileNotFoundError:  # the folder was removed since: make it again
        _MADE.discard(where)
        folder.mkdir(parents=True, exist_ok=True)
        fd = os.open(tmp, flags, 0o666)
    write_all(fd, data)
    os.replace(tmp, path)
    return folder / name


def store_hand(store: ResultStore, rec: HandRecord, replays: Path | None) -> bool:
    """A played hand into the store, then its replay file into ``replays`` (if given): the
    canonical text made once, for both, straight from the protobuf events
    (:func:`~uno_tournament.eventjson.replay_json`: the bytes ``canonical_json`` makes of the
    events converted with ``event_dicts``, without making the dicts; ``rec.replay["events"]``
    stays as it was). False if the store had the hand already (nothing is written then)."""
    rec.replay_raw = rec.replay_raw or replay_json(rec.replay)
    if not store.add_hand(rec):
        return False
    if replays is not None:
        write_replay(replays, rec.replay, rec.replay_raw)
    return True


def ensure_replays(store: ResultStore, folder: Path) -> int:
    """Write the replay files of stored hands that have none (after a crash); returns how many.
    Reads only the missing hands' replays from the store."""
    try:
        present = set(os.listdir(folder))
    except FileNotFoundError:
        present = set()
    missing = [h for h in sorted(store.done_ids()) if replay_name(h) not in present]
    n = 0
    for _, replay in store.replays(missing):
        write_replay(folder, replay)
        n += 1
    return n


class ReplayError(Exception):
    """The file is missing or not a replay; the message names the field."""


@dataclass
class Verdict:
    ok: bool
    message: str


def _field(data: dict[str, Any], key: str, kind: type | tuple[type, ...], where: str = "") -> Any:
    name = f"{where}{key}"
    if key not in data:
        raise ReplayError(f"{name!r} is missing")
    value = data[key]
    if (isinstance(value, bool) and kind is not bool) or not isinstance(value, kind):
        want = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ReplayError(f"{name!r} must be {_article(want)}, got {_short(value)}")
    return value


def _article(word: str) -> str:
    return ("an " if word[0] in "aeiou" else "a ") + word


def _short(value: Any) -> str:
    text = json.dumps(value)[:40]
    return text + ("..." if len(text) == 40 else "")


def validate(data: Any) -> dict[str, Any]:
    """Check the shape of a replay (every field it needs, with its type); returns it."""
    if not isinstance(data, dict):
        raise ReplayError("expected a JSON object")
    _field(data, "rules", dict)
    seed = _field(data, "seed", int)
    dealer = _field(data, "dealer", int)
    if not 0 <= seed < 2**64:
        raise ReplayError(f"'seed' must be 0..2**64-1, got {_short(seed)}")
    if not 0 <= dealer < 16:
        raise ReplayError(f"'dealer' must be a seat number, got {dealer}")
    actions = _field(data, "actions", list)
    if len(actions) > MAX_ACTIONS:
        raise ReplayError(f"'actions' has {len(actions)} entries, more than {MAX_ACTIONS}")
    for i, a in enumerate(actions):
        if (
            not isinstance(a, list)
            or len(a) != 2
            or not all(isinstance(x, int) and not isinstance(x, bool) for x in a)
        ):
            raise ReplayError(f"'actions[{i}]' must be [seat, action id], got {_short(a)}")
    result = _field(data, "result", dict)
    winner = _field(result, "winner", int, "result.")
    points = _field(result, "points_held", list, "result.")
    if not all(isinstance(p, int) and not isinstance(p, bool) for p in points):
        raise ReplayError(f"'result.points_held' must be a list of integers, got {_short(points)}")
    if not 0 <= winner < max(1, len(points)):
        raise ReplayError(f"'result.winner' must be a seat of 'result.points_held', got {winner}")
    if "bots" in data:
        bots = _field(data, "bots", list)
        if not all(isinstance(b, str) for b in bots):
            raise ReplayError(f"'bots' must be a list of names, got {_short(bots)}")
    for key in ("hand_id", "tournament"):
        if key in data:
            _field(data, key, str)
    if "match_seed" in data:
        ms = _field(data, "match_seed", int)
        if not 0 <= ms < 2**64:
            raise ReplayError(f"'match_seed' must be 0..2**64-1, got {_short(ms)}")
    if "schedule" in data:
        sch = _field(data, "schedule", dict)
        for key in ("tournament_seed", "table", "block", "deal", "rotation"):
            if key == "tournament_seed" and key not in sch:
                continue  # written by runs before 2026-12-06 only (it is the run's secret)
            v = _field(sch, key, int, "schedule.")
            if v < 0:
                raise ReplayError(f"'schedule.{key}' must be 0 or more, got {v}")
        tb = _field(sch, "table_bots", list, "schedule.")
        if not all(isinstance(b, str) for b in tb) or len(tb) != 4:
            raise ReplayError(f"'schedule.table_bots' must be four names, got {_short(tb)}")
    return data


MAX_REPLAY_FILE = 64 << 20
"""The largest replay file read (64 MiB; a hand of 60 moves writes about 32 KB). A larger one,
or anything that is not a regular file (a device such as /dev/zero, a pipe), is refused rather
than read: an examination's symlink to /dev/zero hung `tournament verify`."""


def load(path: str | Path) -> dict[str, Any]:
    """The replay in ``path``, validated. An object naming a key twice is not a replay: readers
    differ on which value counts (Python's the last, others the first), so such a file could
    show one reader a forged value while the content hash, taken of the parsed record, matched."""
    p = Path(path)
    try:
        data = json.loads(read_regular(p, MAX_REPLAY_FILE), object_pairs_hook=unique_keys)
    except NotARegularFileError as exc:
        raise ReplayError(
            f"{exc}; a replay is a file of at most {MAX_REPLAY_FILE >> 20} MiB"
        ) from exc
    except FileNotFoundError as exc:
        raise ReplayError(f"{p}: no such file") from exc
    except IsADirectoryError as exc:
        raise ReplayError(f"{p}: a folder, not a replay file") from exc
    except (
        OSError,
        json.JSONDecodeError,
        DuplicateKeyError,
        UnicodeDecodeError,
        RecursionError,
    ) as exc:
        raise ReplayError(f"{p}: not a replay file ({type(exc).__name__}: {exc})") from exc
    try:
        return validate(data)
    except ReplayError as exc:
        raise ReplayError(f"{p}: not a replay file: {exc}") from exc


def check(data: dict[str, Any], path: Path | None = None) -> Verdict:
    """Re-run the hand and check its deal and, for format 2 records, its identity."""
    try:
        validate(data)
    except ReplayError as exc:
        return Verdict(False, f"not a replay: {exc}")
    try:
        rules = RuleSet.from_dict(dict(data["rules"]))
    except (InvalidRulesError, TypeError, ValueError) as exc:
        return Verdict(False, f"the recorded rule set is invalid: {exc}")
    seed, dealer = int(data["seed"]), int(data["dealer"])
    if dealer >= rules.seats:
        return Verdict(False, f"dealer {dealer} is not a seat of a {rules.seats}-seat table")
    actions = [(int(a[0]), int(a[1])) for a in data["actions"]]
    try:
        hand = Hand.deal(rules, seed, dealer)
    except (EngineError, ValueError) as exc:
        return Verdict(False, f"the engine cannot deal this hand: {exc}")
    for i, (seat, action_id) in enumerate(actions):
        if hand.over:
            return Verdict(
                False,
                f"diverges at action {i + 1} of {len(actions)}: the hand was already over "
                f"(seat {hand.winner} out) when seat {seat} played action {action_id}",
            )
        try:
            hand.apply(seat, action_id)
        except (EngineError, ValueError, IndexError) as exc:
            return Verdict(
                False,
                f"diverges at action {i + 1} of {len(actions)} (seat {seat}, action "
                f"{action_id}): the engine rejects it: {exc}",
            )
    result = data["result"]
    want_winner = int(result["winner"])
    want_points = [int(p) for p in result["points_held"]]
    if not hand.over:
        return Verdict(False, f"diverges: after all {len(actions)} actions the hand is not over")
    points = [hand.points_held(s) for s in range(rules.seats)]
    if hand.winner != want_winner:
        return Verdict(
            False, f"diverges: the engine's winner is seat {hand.winner}, recorded {want_winner}"
        )
    if points != want_points:
        return Verdict(
            False, f"diverges: the engine's points held are {points}, recorded {want_points}"
        )
    problem = events_problem(data.get("events"), hand.log)
    if problem:
        return Verdict(False, f"the events differ from the engine's re-run: {problem}")
    problem = _identity_problem(data, rules, path)
    if problem:
        return Verdict(False, problem)
    bots = data.get("bots") or []
    who = f" ({bots[want_winner]})" if want_winner < len(bots) else ""
    hid = f"{data['hand_id']}: " if "hand_id" in data else ""
    return Verdict(
        True,
        f"confirmed: {hid}{len(actions)} actions, seat {want_winner}{who} went out, "
        f"points held {points}",
    )


def _identity_problem(data: dict[str, Any], rules: RuleSet, path: Path | None) -> str:
    """What is wrong with the record's deal and identity (empty: nothing found)."""
    if "match_seed" in data and int(data["dealer"]) == 0:
        expected = Match(rules, int(data["match_seed"]), dealer=0).hand.seed
        if expected != int(data["seed"]):
            return (
                f"the hand's seed {data['seed']} is not the one match seed {data['match_seed']} "
                f"deals ({expected}): the record's deal was changed"
            )
    sch = data.get("schedule")
    hid = data.get("hand_id")
    if path is not None and isinstance(hid, str):
        if path.name != replay_name(hid):
            return (
                f"the file is named {path.name} but holds hand {hid} (its file is "
                f"{replay_name(hid)}): a record copied from another hand or renamed"
            )
    if not isinstance(sch, dict):
        return ""
    t, b, d, r = (int(sch[k]) for k in ("table", "block", "deal", "rotation"))
    if isinstance(hid, str) and "tournament" in data:
        want = schedule_hand_id(str(data["tournament"]), t, b, d, r)
        if hid != want:
            return (
                f"hand id {hid} is not the schedule's id for table {t}, block {b}, deal {d}, "
                f"rotation {r} ({want}): the hand id was changed"
            )
    seats = seating(tuple(sch["table_bots"]), d, r)
    bots = list(data.get("bots") or [])
    if bots and tuple(bots) != seats:
        return _seating_problem(bots, list(seats), "the schedule")
    if "match_seed" in data and "tournament_seed" in sch:  # an older run's file
        want_seed = deal_seed(int(sch["tournament_seed"]), t, b, d)
        if int(data["match_seed"]) != want_seed:
            return (
                f"match seed {data['match_seed']} is not the schedule's seed for table {t}, "
                f"block {b}, deal {d} ({want_seed}): the record belongs to another deal"
            )
    return ""


def _seating_problem(got: list[str], want: list[str], source: str) -> str:
    diff = [s for s in range(max(len(got), len(want))) if got[s : s + 1] != want[s : s + 1]]
    s = diff[0]
    g = got[s] if s < len(got) else "nobody"
    w = want[s] if s < len(want) else "nobody"
    return (
        f"seat {s} holds {g!r} in the record but {w!r} in {source} (record {got}, "
        f"{source} {want}): the seating was changed"
    )


def find_tournament(path: Path) -> Path | None:
    """The tournament folder of a replay file at ``<folder>/replays/<hand>.json``, if any."""
    folder = path.resolve().parent
    if folder.name == "replays" and (folder.parent / DB_NAME).is_file():
        return folder.parent
    return None


def check_against_store(data: dict[str, Any], store: ResultStore) -> str:
    """What differs between a replay (already confirmed by :func:`check`) and the tournament's
    database (empty: nothing): the hand id, the seating, the match seed, the content hash, and
    every column the engine and the replay determine (winner, points held and gained, places,
    time-outs, strikes, takeovers, seeds, moves; :mod:`uno_tournament.handcheck`)."""
    hid = data.get("hand_id")
    if not isinstance(hid, str):
        return "the record names no hand id, so it cannot be matched to the tournament"
    meta = store.meta()
    tid = str(meta.get("tournament_id", ""))
    if data.get("tournament") not in (None, tid):
        return f"the record is from tournament {data.get('tournament')}, this folder holds {tid}"
    h = store.hand_row(hid)
    if h is None:
        return f"hand {hid} is not in the tournament's database: a changed or foreign hand id"
    stored_bots = [s.bot for s in h.seats]
    bots = list(data.get("bots") or [])
    if bots != stored_bots:
        return _seating_problem(bots, stored_bots, "the database")
    if "match_seed" in data and int(data["match_seed"]) != h.match_seed:
        return (
            f"match seed {data['match_seed']} differs from the database's {h.match_seed} "
            f"for hand {hid}: a record copied from another hand"
        )
    digest = content_hash(data)
    if digest != h.content_hash:
        return (
            f"content hash {digest[:12]}... differs from the one stored when hand {hid} was "
            f"played ({h.content_hash[:12]}...): the record was edited or copied from another hand"
        )
    try:
        diffs = compare(h, expected(data, None))
    except ReplayMismatchError as exc:
        return f"the engine cannot re-run the record: {exc}"
    if diffs:
        col, msg = diffs[0]
        more = f" (and {len(diffs) - 1} more differences)" if len(diffs) > 1 else ""
        return (
            f"the database differs from this confirmed record for hand {hid}: {col}: {msg}{more}; "
            "the database was edited (`uno-arena tournament verify` checks the whole run)"
        )
    return ""


def verify_file(path: Path, tournament: Path | None = None) -> Verdict:
    """The ``uno-arena replay`` check: the engine, the schedule, and the tournament's database
    when the file sits in a tournament folder (or ``tournament`` names one)."""
    data = load(path)
    verdict = check(data, path)
    if not verdict.ok:
        return verdict
    folder = tournament or find_tournament(path)
    if folder is None:
        return Verdict(
            True,
            verdict.message + " (no tournament database beside it: checked the engine's "
            "re-run and the file's own consistency only; who sat where and the deal's seed "
            "are confirmed against the run's database: give --tournament DIR)",
        )
    store = Store.open(folder, readonly=True)
    try:
        problem = check_against_store(data, store)
    finally:
        store.close()
    if problem:
        return Verdict(False, problem)
    return Verdict(True, verdict.message + "; matches the tournament's database")
