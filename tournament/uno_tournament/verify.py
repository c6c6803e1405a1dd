"""``uno-arena tournament verify DIR`` (or ``--store URL [DIR]``): check a whole run.

For every stored hand:

* it is a hand of the schedule; its slot (table, block, deal, rotation, deal id), match seed and
  seating are the schedule's;
* its replay (the file in ``DIR/replays`` and the database's copy) has the content hash stored
  when the hand was played;
* the engine re-runs the replay, and every column any output reads is compared with what the
  replay and the engine give: winner, moves, seeds, dealer, match id, each seat's bot, place,
  points held and gained, time-outs, strikes, takeover and its cause; decision counts and
  decision times are checked against each other (:mod:`uno_tournament.handcheck`);
* the seat rows are four, seats 0-3, none twice; no hand is stored twice.

Then the hash chain over the hands in schedule order (:mod:`uno_tournament.chain`) is recomputed
and compared with the head written into ``results.json`` (or given with ``--head``): a hand
deleted, added, duplicated, moved or edited in a column no replay records since the report was
written shows there, named by hand and column where ``results.json``'s digests allow. Without
a head to compare with, verify fails: it cannot see such changes.

Each problem is one line naming the hand and the columns; the exit status is 1 if there is any.
The table of checks is in docs/tournaments.md ("Verifying results").
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import zlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from . import chain
from .config_stored import load_config
from .fileread import DuplicateKeyError, read_regular, unique_keys
from .handcheck import ReplayMismatchError, compare, expected
from .plural import count
from .replay import ReplayError, check, load, replay_name, validate
from .store import LOCK_NAME, HandRecord, ResultStore, Store, content_hash

MAX_LINES = 20
UNWRITTEN = (ValueError, TypeError, OverflowError, RecursionError, LookupError)
"""What reading a value no run writes raises (the database's or a report file's): verify turns
it into one problem line (:func:`unwritten`)."""
MAX_RESULTS_JSON = 1 << 30
"""The largest results.json read (1 GiB: 100,000 hands write about 60 MB)."""
MAX_LINE = 400
HASH_DIFFERS = (
    "content hash differs from the one stored when the hand was played: the file was edited "
    "or copied from another hand"
)


@dataclass
class VerifyReport:
    hands: int = 0
    planned: int = 0
    checked: int = 0
    problems: list[str] = field(default_factory=list)
    head: str = ""
    """The chain head of the store as it is now."""
    head_source: str = ""
    """Where the head it was compared with came from ('' if none)."""
    seconds: float = 0.0
    sequential: str = ""
    """A sequential run's stop as verify re-derived it ('' for a run of a fixed size)."""
    legacy: str = ""
    """The chain of the head compared, if an older run's (one of :data:`chain.OLDER`), else ''."""
    unchained: str = ""
    """What that older chain leaves out that this run has ('' if nothing)."""
    reports_absent: list[str] = field(default_factory=list)
    """Report files that were not in the folder, so not compared with the database."""
    replays_absent: bool = False
    """A shared store's folder without replay files (a shard writes none): not a problem, the
    hands were checked against the database's copies."""
    rewrite: str = "uno-arena tournament report DIR"
    """The command that writes the folder's reports and replays again from the database."""

    @property
    def ok(self) -> bool:
        return not self.problems


def verify(
    folder: Path | None,
    *,
    store: ResultStore | None = None,
    head: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> VerifyReport:
    """Verify the run in ``folder`` (its SQLite file), or in ``store`` (a PostgreSQL store, with
    ``folder`` for its replay files and results.json if given)."""
    import time

    t0 = time.perf_counter()
    own = store is None
    if store is None:
        if folder is None:
            raise ValueError("verify needs a folder or a store")
        from .store import Store

        store = Store.open(folder, readonly=True)  # verify reads; it never changes the run
    try:
        try:
            rep = _verify(folder, store, head, progress)
        except UNWRITTEN as exc:
            # a value of a type or size no run writes (an empty string in an integer column,
            # text where a blob belongs, a number of 400 digits): one problem line, not a
            # traceback; nothing after it was checked
            rep = VerifyReport()
            rep.problems = [_short(f"verify stopped: {unwritten(exc)}")]
    finally:
        if own:
            store.close()
    rep.seconds = time.perf_counter() - t0
    return rep


def rewrite_command(folder: Path | None, store: ResultStore) -> str:
    """The command that writes ``folder``'s reports and replays from ``store``: ``report DIR``
    for a run's own SQLite file, ``report --store URL --out DIR`` for a shared store (``report
    DIR`` there finds no database and fails)."""
    where = str(folder) if folder is not None else "DIR"
    if isinstance(store, Store):
        return f"uno-arena tournament report {where}"
    return f"uno-arena tournament report --store {store.location} --out {where}"


def playing(folder: Path) -> str:
    """Who plays the run in ``folder`` now (its tournament.lock's holder), or '' if nobody.
    A run in progress stores hands and incidents after its last results.json, which a check
    would count as edits; the lock is only probed (a shared lock, let go at once), never kept,
    so a resume is not refused because of verify."""
    import fcntl

    try:
        fd = os.open(folder / LOCK_NAME, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return ""  # no lock file: never played by a runner that locks, or not readable
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        holder = os.pread(fd, 200, 0).decode(errors="replace").strip()
        return holder[:100] or "another process"
    except OSError:
        return ""
    finally:
        os.close(fd)  # closing drops the shared lock too
    return ""


def unwritten(exc: BaseException) -> str:
    """The problem line's text for a value no run writes (:data:`UNWRITTEN`)."""
    what = str(exc).splitlines()[0][:160] if str(exc) else ""
    return (
        f"the database or a report file holds a value no run writes ({type(exc).__name__}"
        f"{': ' + what if what else ''}): it was edited by hand, so the run cannot be trusted; "
        "nothing after it was checked"
    )


def _short(text: str) -> str:
    return text if len(text) <= MAX_LINE else text[: MAX_LINE - 3] + "..."


def head_problem(head: str) -> str:
    """Why ``head`` (as --head gives it) is no chain head ("" if it is one)."""
    h = head.strip().lower()
    if len(h) != 64 or any(c not in "0123456789abcdef" for c in h):
        return f"--head {head[:80]!r}: give the 64 hex digits of a chain head"
    return ""


def _reference(folder: Path | None, head: str | None) -> tuple[dict[str, Any] | None, str, str]:
    """The chain to compare with: (results.json's chain or None, its source, a problem)."""
    if head is not None:
        if problem := head_problem(head):
            return None, "", problem
        return {"head": head.strip().lower()}, "--head", ""
    if folder is None:
        return (
            None,
            "",
            "chain head not compared: give --head HEX (the head published with the results) "
            "or a folder holding the run's results.json",
        )
    path = folder / "results.json"
    try:
        data = json.loads(read_regular(path, MAX_RESULTS_JSON), object_pairs_hook=unique_keys)
    except FileNotFoundError:
        return (
            None,
            "",
            f"{path}: missing, so the chain head cannot be compared (deleted hands and edits of "
            "columns no replay records would go unseen); give --head HEX, the head published "
            "with the results (an interrupted run has none yet: `uno-arena tournament report "
            f"{folder}` writes one from the database as it is now)",
        )
    except DuplicateKeyError as exc:
        return None, "", f"{path}: has {exc}, which uno-arena never writes: it was edited"
    except (OSError, ValueError, RecursionError) as exc:
        return None, "", f"{path}: unreadable ({type(exc).__name__}); give --head HEX"
    ref = data.get("chain") if isinstance(data, dict) else None
    if not isinstance(ref, dict) or not isinstance(ref.get("head"), str):
        return (
            None,
            "",
            f"{path}: has no chain head (written before verify had one, or edited); "
            "give --head HEX",
        )
    ref["tournament_id"] = data.get("tournament_id")
    return ref, str(path), ""


class _Lines:
    """Problems, at most one line per hand (its columns joined)."""

    def __init__(self) -> None:
        self.by_hand: dict[str, list[str]] = {}
        self.other: list[str] = []

    def hand(self, hid: str, what: str) -> None:
        items = self.by_hand.setdefault(hid, [])
        if what not in items:
            items.append(what)

    def add(self, line: str) -> None:
        self.other.append(_short(line))

    def lines(self) -> list[str]:
        """The run's own problems first (its configuration, chain, decision): a cause
        behind a list of hands was shown only as problem 386 of 386 (an examination)."""
        out = [_short(f"{hid}: " + "; ".join(items)) for hid, items in self.by_hand.items()]
        return self.other + out


def _verify(
    folder: Path | None,
    store: ResultStore,
    head: str | None,
    progress: Callable[[int, int], None] | None,
) -> VerifyReport:
    config = load_config(store, folder or store.location)
    meta = store.meta()
    tid = str(meta.get("tournament_id", ""))
    try:  # an adaptive run's block tables: the ones its store records (checked below)
        plan_list = config.plan(tid, store)
    except ValueError:  # an unreadable record: the sequential check names it
        plan_list = config.plan(tid)
    plan = {h.hand_id: h for h in plan_list}
    plan_ids = [h.hand_id for h in plan_list]
    raw = chain.scan(store)
    rep = VerifyReport(hands=len(raw.digests), planned=len(plan))
    out = _Lines()
    for hid in raw.duplicates:
        out.hand(hid, "hands: stored more than once (a duplicated hand row)")
    for hid, what in raw.seat_problems.items():
        out.hand(hid, what)
    for hid in raw.orphans:
        out.hand(hid, "seats: seat rows of a hand that is not stored (its hand row was deleted)")

    replays: Path | None = folder / "replays" if folder is not None else None
    files: set[str] | None = None
    rep.rewrite = rewrite_command(folder, store)
    if replays is not None:
        try:
            files = set(os.listdir(replays))
        except (FileNotFoundError, NotADirectoryError):
            files = None
            if raw.digests and isinstance(store, Store):  # a SQLite run writes every file
                out.add(
                    f"{replays}: no replays folder, so no replay file was checked (the hands "
                    f"were checked against the database's copies); `{rep.rewrite}` writes the "
                    "files again from the database"
                )
            elif raw.digests:  # a shard of a shared store writes none (only report --out does)
                rep.replays_absent = True
    named: set[str] = set()
    for i, h in enumerate(store.hand_rows()):
        if progress is not None and i % 200 == 0:
            progress(i, rep.hands)
        name = replay_name(h.hand_id)
        named.add(name)
        _check_hand(h, plan, store, replays, files, name, out)
    if files is not None:
        planned_file = {replay_name(hid): hid for hid in plan_ids}
        for extra in sorted(f for f in files - named if f.endswith(".json")):
            if extra in planned_file:
                out.hand(
                    planned_file[extra],
                    f"not in the database, though its replay file replays/{extra} is there",
                )
            else:
                out.add(f"replays/{extra}: a replay file of no hand in the database")

    now = chain.compute(store, plan_ids, raw)
    rep.head = now.head
    ref, source, problem = _reference(folder, head)
    rep.head_source = source
    if problem:
        out.add(problem)
    elif ref is not None:
        if ref.get("algorithm") in chain.OLDER or (
            "algorithm" not in ref and ref["head"] != now.head
        ):  # an older run's chain (without its decision or configuration), or a head one published
            for alg in chain.OLDER:
                if ref.get("algorithm") not in (None, alg):
                    continue
                older = chain.compute(store, plan_ids, raw, algorithm=alg)
                if ref.get("algorithm") == alg or ref["head"] == older.head:
                    now = older
                    rep.head, rep.legacy = older.head, alg
                    rep.unchained = _unchained(alg, config.sequential)
                    break
        _compare_chain(now, ref, plan_ids, tid, out, had_problems=bool(out.by_hand))
    if config.sequential:  # stopped by its decision: the prefix up to the stop is complete
        from .verify_settled import check_sequential

        seq = check_sequential(store, config, plan_list, reported=_reported_stop(folder))
        for hid, what in seq.by_hand:
            out.hand(hid, what)
        for line in seq.other:
            out.add(line)
        rep.sequential = seq.summary
        if seq.stop_hands is not None:
            rep.planned = seq.stop_hands
        elif not seq.other:  # a record that cannot be trusted has no stop to count hands to:
            # the hands after the real stop were listed as missing, hundreds of lines
            _missing_against_schedule(store, ref, plan_ids, set(raw.digests), out)
    else:
        _missing_against_schedule(store, ref, plan_ids, set(raw.digests), out)
    if folder is not None and ref is not None and not out.lines():
        # the hands, incidents and configuration are the chain's: the report files are what
        # people read, written again from them and compared. An older run's chain as well
        # (results.json's chain is then the older kind, and only it may differ): a results.json
        # that merely claims the older chain must not turn the comparison off
        from .verify_reports import check_reports

        checked = check_reports(folder, store, config, tid, older_chain=bool(rep.legacy))
        for line in checked.problems:
            out.add(line)
        rep.reports_absent = checked.absent
    if progress is not None:
        progress(rep.hands, rep.hands)
    rep.problems = out.lines()
    rep.checked = sum(1 for hid in raw.digests if hid not in out.by_hand)
    return rep


def _check_hand(
    h: HandRecord,
    plan: dict[str, Any],
    store: ResultStore,
    replays: Path | None,
    files: set[str] | None,
    name: str,
    out: _Lines,
) -> bool:
    """Check one hand; True if nothing differs."""
    hid = h.hand_id
    before = len(out.by_hand.get(hid, []))
    spec = plan.get(hid)
    if spec is None:
        out.hand(hid, "hands.hand_id: not a hand of this tournament's schedule")
    unreadable = ""
    try:
        stored = store.replay_bytes(hid)
    except zlib.error as exc:
        stored, unreadable = b"", str(exc)[:120]
    data: dict[str, Any] | None = None
    db_ok = False
    if unreadable:
        out.hand(
            hid, f"replays.data: the database's copy of the replay is unreadable ({unreadable})"
        )
    elif stored is None:
        out.hand(hid, "replays.data: the database holds no replay of this hand")
    elif hashlib.sha256(stored).hexdigest() != h.content_hash:
        out.hand(
            hid,
            "hands.content_hash/replays.data: the database's copy of the replay does not match "
            "the stored hash (the replay or the hash was edited)",
        )
    else:
        db_ok = True
    checked = False
    if replays is not None and files is not None:
        if name not in files:
            out.hand(hid, f"replay file replays/{name} is missing")
        else:
            path = replays / name
            try:
                from_file = load(path)
            except ReplayError as exc:
                out.hand(hid, f"replays/{name}: {exc}")
            else:
                if content_hash(from_file) == h.content_hash:
                    # the same content as the database's copy, when that one matches too
                    verdict = check(from_file, path)
                    checked = True
                    if not verdict.ok:
                        out.hand(hid, f"replays/{name}: {verdict.message}")
                        db_ok = False  # the database's copy is the same record
                    else:
                        data = from_file
                else:
                    verdict = check(from_file, path)
                    why = verdict.message if not verdict.ok else HASH_DIFFERS
                    out.hand(hid, f"replays/{name}: {why}")
    if data is None and db_ok and stored is not None:
        try:
            data = json.loads(stored)
        except ValueError:
            out.hand(hid, "replays.data: the database's copy of the replay is not JSON")
    if data is not None:
        try:
            validate(data)
            again = check(data) if not checked else None
            if again is not None and not again.ok:
                out.hand(hid, f"replay: {again.message}")
            else:
                for col, msg in compare(h, expected(data, spec)):
                    out.hand(hid, f"{col}: {msg}")
        except (ReplayError, ReplayMismatchError) as exc:
            out.hand(hid, f"replay: {exc}")
    elif spec is not None:  # no trustworthy replay: the schedule's columns at least
        bots = [s.bot for s in h.seats]
        if tuple(bots) != spec.bots:
            out.hand(hid, f"seats.bot: stored {bots}, the schedule says {list(spec.bots)}")
        if h.match_seed != spec.seed:
            out.hand(hid, f"hands.match_seed: stored {h.match_seed}, the schedule says {spec.seed}")
    return len(out.by_hand.get(hid, [])) == before


def _compare_chain(
    now: chain.Chain,
    ref: dict[str, Any],
    plan_ids: list[str],
    tid: str,
    out: _Lines,
    *,
    had_problems: bool,
) -> None:
    if ref.get("tournament_id") not in (None, tid):
        out.add(f"results.json is of tournament {ref.get('tournament_id')}, the database of {tid}")
        return
    if ref["head"] == now.head:
        return
    if ref.get("algorithm") not in (None, chain.ALGORITHM, *chain.OLDER):
        out.add(
            f"results.json's chain is {str(ref.get('algorithm'))[:40]!r}, this verify computes "
            f"{chain.ALGORITHM!r}: compare with --head from a report of this version"
        )
        return
    positions = ref.get("hands_digests")
    got_cols = ref.get("columns")
    columns: dict[str, Any] = got_cols if isinstance(got_cols, dict) else {}
    named = False
    if isinstance(positions, str) and len(positions) == chain.SHORT * len(plan_ids):
        for k, hid in enumerate(plan_ids):
            want = positions[k * chain.SHORT : (k + 1) * chain.SHORT]
            got = now.digests.get(hid)
            if want == chain.ABSENT and got is None:
                continue
            if got is None:
                out.hand(
                    hid,
                    "hands: deleted (results.json's chain holds this hand; the database does not)",
                )
                named = True
            elif want == chain.ABSENT:
                out.hand(hid, "hands: added after results.json was written (not in its chain)")
                named = True
            elif got[: chain.SHORT] != want:
                if hid not in out.by_hand:
                    cols = _changed_columns(now, ref, k, hid)
                    out.hand(
                        hid,
                        f"{cols}: differs from the value chained into results.json when the "
                        "report was written",
                    )
                named = True
    for key, what in _CHAINED_PARTS:
        if columns.get(key) not in (None, now.columns.get(key)):
            out.add(what)
            named = True
    if not named and not had_problems:
        out.add(
            f"chain head {now.head[:16]}... differs from {ref['head'][:16]}... in "
            f"{'--head' if 'hands_digests' not in ref else 'results.json'}: since the head was "
            "published a hand was edited, deleted, added or reordered, or the stored "
            "configuration, incidents or sequential decision were edited (a head alone cannot "
            "say which)"
        )


_CHAINED_PARTS = (
    (
        chain.CONFIG,
        "meta.config: the stored configuration differs from the one chained into results.json "
        "(an edited forfeit policy, size or stopping rule changes the report without touching "
        "a hand)",
    ),
    (
        chain.DECISION,
        "meta.sequential: the stored sequential decision differs from the one chained into "
        "results.json (a look, a pair's status or the stop was edited, or the record was "
        "rolled back: the report written from it would say another thing)",
    ),
    (
        chain.INCIDENTS,
        "incidents: the crashes and given-up bots stored differ from those chained into "
        "results.json (an incident was edited, added or deleted)",
    ),
)
"""What results.json's chain holds beside the hands (``columns``), and the line for each."""


def _changed_columns(now: chain.Chain, ref: dict[str, Any], k: int, hid: str) -> str:
    """The columns of hand ``hid`` (schedule position ``k``) whose one-byte digest differs from
    results.json's."""
    ref_cols = ref.get("column_digests")
    mine = now.hand_columns.get(hid)
    if isinstance(ref_cols, dict) and mine is not None:
        w = chain.COLUMN_SHORT
        names = sorted(set(mine) | {c for c in ref_cols if isinstance(ref_cols[c], str)})
        diff = []
        for c in names:
            text = ref_cols.get(c)
            want = text[k * w : (k + 1) * w] if isinstance(text, str) else None
            if want == "." * w:
                want = None  # the column was empty (0) in this hand
            if mine.get(c) != want:
                diff.append(c)
        if diff:
            return ", ".join(diff)
    return "its rows"


def _unchained(algorithm: str, sequential: bool) -> str:
    """What an older chain leaves out of a run like this one ('' if nothing it has)."""
    what = ["its configuration"] if algorithm == chain.LEGACY else []
    if sequential:
        what.append("its sequential decision")
    return " and ".join(what) + (" are" if len(what) > 1 else " is") if what else ""


def _reported_stop(folder: Path | None) -> dict[str, Any] | None:
    """The stop results.json reports for a sequential run (None: no report, or no stop)."""
    if folder is None:
        return None
    try:
        data = json.loads(read_regular(folder / "results.json", MAX_RESULTS_JSON))
    except (OSError, ValueError):
        return None
    seq = data.get("sequential") if isinstance(data, dict) else None
    stop = seq.get("stop") if isinstance(seq, dict) else None
    return stop if isinstance(stop, dict) else None


def _missing_against_schedule(
    store: ResultStore,
    ref: dict[str, Any] | None,
    plan_ids: list[str],
    stored: set[str],
    out: _Lines,
) -> None:
    """In a finished run every hand of the schedule is stored."""
    finished = False
    if ref is not None and ref.get("hands") == len(plan_ids):
        finished = True
    shards = store.shards()
    if shards and all(s.state == "finished" for s in shards):
        finished = True
    if not finished:
        return
    for hid in plan_ids:
        if hid not in stored and hid not in out.by_hand:
            out.hand(hid, "hands: missing (the run is finished, and the schedule has this hand)")


def print_report(rep: VerifyReport, where: object, stream: TextIO | None = None) -> None:
    stream = stream or sys.stdout
    for line in rep.problems[:MAX_LINES]:
        print(line, file=stream)
    if len(rep.problems) > MAX_LINES:
        print(f"... and {len(rep.problems) - MAX_LINES} more problems", file=stream)
    missing = rep.planned - rep.hands
    todo = f"; {count(missing, 'planned hand')} not played yet" if missing > 0 and rep.ok else ""
    if rep.sequential and rep.ok:
        todo = f"; {rep.sequential}"
    if rep.unchained and rep.ok:
        todo += (
            f"; an older run's chain ({rep.legacy}): {rep.unchained} not chained, so an edit "
            "would go unseen (`uno-arena tournament report` writes the new chain)"
        )
    if rep.reports_absent and rep.ok:
        todo += (
            f"; not there, so not compared: {', '.join(rep.reports_absent)} "
            f"(`{rep.rewrite}` writes them from the database)"
        )
    if rep.replays_absent and rep.ok:
        todo += (
            "; no replay files in the folder (a shard writes none), so the hands were checked "
            f"against the database's copies (`{rep.rewrite}` writes the files)"
        )
    if rep.ok:
        print(
            f"{where}: verified {rep.checked} of {rep.hands} stored hands: every replay "
            f"confirmed by the engine, every column by the replay, the schedule and the chain "
            f"head {rep.head[:16]}... ({rep.head_source}){todo}",
            file=stream,
        )
    else:
        print(
            f"{where}: {len(rep.problems)} problem{'' if len(rep.problems) == 1 else 's'} in "
            f"{rep.hands} stored hands "
            f"({rep.checked} confirmed)",
            file=stream,
        )
