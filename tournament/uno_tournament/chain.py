"""A hash chain over a run's stored hands, so that a deleted, duplicated, reordered or edited hand
shows, also in the columns no replay records (decision times, illegal counts, durations).

Each stored hand is encoded canonically: its ``hands`` row and its ``seats`` rows, every column
the store has (whatever columns a later schema adds are covered too), with the replay's content
hash among them. The hands are taken in the schedule's order (hands that are not in the schedule
follow, by hand id). With ``d_i = SHA-256(encoding of hand i)``::

    link_0 = SHA-256("uno-arena-chain/2")
    link_i = SHA-256(link_{i-1} || d_i)
    head   = SHA-256(link_n || SHA-256(incidents) || SHA-256(configuration)
                    || SHA-256(sequential decision))

where the incidents (crashes, bots given up on: the report's crash counts and † marks) are
encoded in the order stored, and the configuration is the one the store keeps (``meta.config``,
canonical JSON): the report reads its forfeit policy, its size and its stopping rule, so an
edit there changes the report without touching a hand (an examination changed ``forfeit`` from
"last" to "count" and verify passed). The sequential decision (``meta.sequential``, canonical
JSON, ``null`` for a run without one) is chained for the same reason: ``verify`` re-derives it
from the hands, but a record may trail the hands (a run killed between a hand and its look), so
a record rolled back to its first looks, its stop removed, was accepted as a trailing one and
the report written from it said "undecided" (an examination, with ``verify --head``).
``uno-arena-chain/2`` (without the decision) and ``uno-arena-chain/1`` (without the
configuration either, and its own ``link_0``) are still computed for the results.json of older
runs.

The head is written into ``results.json`` (``chain``) and the reports; ``uno-arena tournament
verify`` recomputes it. ``results.json`` also keeps, to name what changed, a short digest of
each hand by schedule position (``hands_digests``: 12 hex digits, or dots where a hand was not
stored), a one-byte digest per hand of each column no replay vouches for (``column_digests``),
and the incidents' (with how many incidents they cover) and the configuration's digests
(``columns``).
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .fileread import TextFileError, read_text_file
from .store import ResultStore

ALGORITHM = "uno-arena-chain/3"
LEGACY = "uno-arena-chain/1"
"""The chain of runs reported before the configuration was chained."""
NO_DECISION = "uno-arena-chain/2"
"""The chain of runs reported before the sequential decision was chained."""
OLDER = (NO_DECISION, LEGACY)
"""The older chains verify still computes, newest first."""
CONFIG = "config"
DECISION = "sequential"
SHORT = 12
"""Hex digits kept of each hand's digest in results.json."""
ABSENT = "." * SHORT
INCIDENTS = "incidents"
INCIDENTS_SEEN = "incidents_seen"
"""How many incidents the incidents' digest covers (in ``columns``): ``report`` and ``resume``
check that the first that many are still stored as chained (later ones are new, not edits)."""
SKIP_COLUMNS = frozenset({"seq"})
"""Storage positions (PostgreSQL's identity column), not results."""
REPLAY_CHECKED = frozenset(
    {
        "hands.hand_id",
        "hands.table_no",
        "hands.block",
        "hands.deal",
        "hands.rotation",
        "hands.deal_id",
        "hands.match_seed",
        "hands.hand_seed",
        "hands.dealer",
        "hands.match_id",
        "hands.winner_seat",
        "hands.moves",
        "hands.content_hash",
        "seats.seat",
        "seats.bot",
        "seats.place",
        "seats.points_left",
        "seats.points_won",
        "seats.timeouts",
        "seats.strikes",
        "seats.taken_over",
        "seats.takeover_cause",
    }
)
"""Columns verify compares with the replay and the engine, hand by hand. Every other column
(decision counts and times, illegal answers, durations, and any column a later schema adds) gets
a one-byte digest per hand in results.json (``column_digests``), so that verify can name it."""
COLUMN_SHORT = 2


_BYTES = (bytes, bytearray, memoryview)
_EMPTY = (None, 0, "")
"""0 (and 0.0, False), "" (and an empty blob, as hex), NULL."""


def _empty(v: Any) -> bool:
    return v in _EMPTY


def _set(row: dict[str, Any]) -> dict[str, Any]:
    """A row without its empty values (0, "", NULL): a column a schema migration adds with a
    zero default encodes as if it were absent, so the upgrade of an older store keeps its
    chain. Nothing is lost: within one table the names are fixed, so a value that changes to
    or from zero still changes the encoding."""
    return {k: v for k, v in row.items() if v not in _EMPTY}


def _encode(obj: Any) -> bytes:
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


@dataclass
class HandRows:
    """One hand's rows as stored: column -> value (bytes as hex)."""

    hand_id: str
    row: dict[str, Any]
    seats: list[dict[str, Any]]

    def digest(self) -> str:
        enc = {"hand": _set(self.row), "seats": [_set(s) for s in self.seats]}
        return hashlib.sha256(_encode(enc)).hexdigest()

    def column_digests(self) -> dict[str, str]:
        """A one-byte digest of each column no replay vouches for (that is not empty)."""
        out: dict[str, str] = {}
        for k, v in self.row.items():
            col = f"hands.{k}"
            if col not in REPLAY_CHECKED and v not in _EMPTY:
                out[col] = _short_digest(self.hand_id, col, v)
        names = {k for st in self.seats for k in st}
        for k in sorted(names):
            col = f"seats.{k}"
            if col in REPLAY_CHECKED:
                continue
            values = [(st.get("seat"), st.get(k)) for st in self.seats]
            if any(v not in _EMPTY for _, v in values):
                out[col] = _short_digest(self.hand_id, col, values)
        return out


def _short_digest(hand_id: str, col: str, value: Any) -> str:
    """One byte of SHA-256 over the value's repr (ints, floats, text and lists of them: the same
    from SQLite and PostgreSQL)."""
    return hashlib.sha256(repr((hand_id, col, value)).encode()).hexdigest()[:COLUMN_SHORT]


@dataclass
class RawScan:
    """What one pass over every stored hand's rows gives: each hand's digests, and what is wrong
    with the rows' shape. Streams: no hand's rows are kept."""

    digests: dict[str, str] = field(default_factory=dict)
    """hand id -> the SHA-256 of its rows' encoding."""
    column_digests: dict[str, dict[str, str]] = field(default_factory=dict)
    """hand id -> :meth:`HandRows.column_digests`."""
    duplicates: list[str] = field(default_factory=list)
    """Hand ids stored more than once (a table that lost its primary key)."""
    seat_problems: dict[str, str] = field(default_factory=dict)
    """hand id -> what is wrong with its seat rows (missing, duplicated, extra)."""
    orphans: list[str] = field(default_factory=list)
    """Hand ids that have seat rows but no hand row."""

    @property
    def hand_ids(self) -> list[str]:
        return list(self.digests)


def _rows(store: ResultStore, sql: str) -> Iterator[dict[str, Any]]:
    cur = store._execute(sql)
    names = [d[0] for d in cur.description]
    keep = [(i, n) for i, n in enumerate(names) if n not in SKIP_COLUMNS]
    for r in cur:
        yield {n: bytes(r[i]).hex() if isinstance(r[i], _BYTES) else r[i] for i, n in keep}


def _seat_problem(numbers: list[Any], seats_per_hand: int) -> str:
    if numbers == list(range(seats_per_hand)):
        return ""
    if len(set(numbers)) != len(numbers):
        return f"seats.seat: seat rows {numbers}: a seat is stored twice"
    missing = sorted(set(range(seats_per_hand)) - set(numbers))
    extra = sorted(set(numbers) - set(range(seats_per_hand)), key=str)
    what = []
    if missing:
        what.append(f"no row for seat {', '.join(map(str, missing))}")
    if extra:
        what.append(f"rows for seats that do not exist {extra}")
    return "seats.seat: " + ("; ".join(what) or f"seat rows {numbers}")


def scan(store: ResultStore, seats_per_hand: int = 4) -> RawScan:
    """One pass over every hand and seat row as stored (every column), by hand id."""
    out = RawScan()
    with store.lock:
        seat_iter = _rows(store, "SELECT * FROM seats ORDER BY hand_id, seat")
        pending = next(seat_iter, None)
        orphans: set[str] = set()
        for h in _rows(store, "SELECT * FROM hands ORDER BY hand_id"):
            hid = str(h.pop("hand_id"))
            if hid in out.digests:
                out.duplicates.append(hid)
                continue
            while pending is not None and str(pending["hand_id"]) < hid:
                orphans.add(str(pending["hand_id"]))
                pending = next(seat_iter, None)
            rows: list[dict[str, Any]] = []
            while pending is not None and str(pending["hand_id"]) == hid:
                pending.pop("hand_id")
                rows.append(pending)
                pending = next(seat_iter, None)
            problem = _seat_problem([s.get("seat") for s in rows], seats_per_hand)
            if problem:
                out.seat_problems[hid] = problem
            hand = HandRows(hid, h, rows)
            out.digests[hid] = hand.digest()
            out.column_digests[hid] = hand.column_digests()
        while pending is not None:
            orphans.add(str(pending["hand_id"]))
            pending = next(seat_iter, None)
    out.orphans = sorted(orphans - set(out.digests))
    return out


def config_digest(store: ResultStore) -> str:
    """SHA-256 of the stored configuration (``meta.config``), canonically encoded."""
    return hashlib.sha256(_encode(store.meta().get("config"))).hexdigest()


def decision_digest(store: ResultStore) -> str:
    """SHA-256 of the stored sequential decision (``meta.sequential``; ``null`` if none),
    canonically encoded."""
    return hashlib.sha256(_encode(store.meta().get(DECISION))).hexdigest()


def incidents_digest(store: ResultStore, first: int | None = None) -> tuple[str, int]:
    """SHA-256 of the stored incidents in the order stored (``first``: of the first ``first``
    only), and how many it covers. Incidents are only ever appended, so the digest of the
    first n of them is what a results.json written when there were n still holds."""
    h = hashlib.sha256()
    n = 0
    for row in _rows(store, "SELECT * FROM incidents ORDER BY id"):
        if first is not None and n >= first:
            break
        h.update(_encode(row) + b"\n")
        n += 1
    return h.hexdigest(), n


@dataclass
class Chain:
    head: str
    hands: int
    digests: dict[str, str]
    """hand id -> full digest of its rows."""
    positions: str
    """The short digest of each planned hand by schedule position (``ABSENT``: not stored)."""
    columns: dict[str, str]
    """``incidents`` -> the digest of the incidents (``incidents_seen``: how many), and the
    configuration's and the sequential decision's digests."""
    column_positions: dict[str, str] = field(default_factory=dict)
    """column -> its one-byte digest of each planned hand by schedule position ("..": not
    stored), for the columns no replay vouches for."""
    hand_columns: dict[str, dict[str, str]] = field(default_factory=dict)
    """hand id -> the one-byte digests of its columns (not written to results.json)."""
    algorithm: str = ALGORITHM

    def to_json(self) -> dict[str, Any]:
        return {
            "algorithm": self.algorithm,
            "head": self.head,
            "hands": self.hands,
            "hands_digests": self.positions,
            "columns": self.columns,
            "column_digests": self.column_positions,
            "about": "uno-arena tournament verify recomputes this from the database; a "
            "different head means a hand was edited, deleted, added or reordered since",
        }


def order(hand_ids: Sequence[str], plan_ids: Sequence[str]) -> list[str]:
    """Stored hand ids in chain order: the schedule's, then hands outside it by id."""
    stored = set(hand_ids)
    planned = set(plan_ids)
    return [h for h in plan_ids if h in stored] + sorted(stored - planned)


def compute(
    store: ResultStore,
    plan_ids: Sequence[str],
    raw: RawScan | None = None,
    algorithm: str = ALGORITHM,
) -> Chain:
    """The chain of what the store holds now (``raw``: a scan already made; ``algorithm``:
    :data:`ALGORITHM`, or one of :data:`OLDER` for an older run's results.json)."""
    if algorithm not in (ALGORITHM, *OLDER):
        raise ValueError(f"unknown chain algorithm {algorithm!r}")
    raw = raw if raw is not None else scan(store)
    digests = raw.digests
    link = hashlib.sha256(algorithm.encode()).digest()
    for hid in order(list(digests), plan_ids):
        link = hashlib.sha256(link + bytes.fromhex(digests[hid])).digest()
    inc, n_inc = incidents_digest(store)
    columns = {INCIDENTS: inc[:16], INCIDENTS_SEEN: str(n_inc)}
    if algorithm == LEGACY:
        head = hashlib.sha256(link + bytes.fromhex(inc)).hexdigest()
    else:
        cfg = config_digest(store)
        parts = link + bytes.fromhex(inc) + bytes.fromhex(cfg)
        columns[CONFIG] = cfg[:16]
        if algorithm == ALGORITHM:
            dec = decision_digest(store)
            parts += bytes.fromhex(dec)
            columns[DECISION] = dec[:16]
        head = hashlib.sha256(parts).hexdigest()
    positions = "".join(digests[h][:SHORT] if h in digests else ABSENT for h in plan_ids)
    per_hand = raw.column_digests
    names = sorted({c for hid in plan_ids for c in per_hand.get(hid, {})})
    none = "." * COLUMN_SHORT
    column_positions = {
        c: "".join(per_hand[h].get(c, none) if h in per_hand else none for h in plan_ids)
        for c in names
    }
    return Chain(
        head, len(digests), digests, positions, columns, column_positions, per_hand, algorithm
    )


class StoreChangedError(RuntimeError):
    """The database lost or changed a hand (or its configuration) since the results.json in
    its folder was written from it: writing the reports again would hide it."""


def changed_since(
    ref: Any, now: Chain, plan_ids: Sequence[str], store: ResultStore | None = None
) -> str | None:
    """What the store lost or changed since ``ref`` (the ``chain`` of a results.json written
    from it) was written, or ``None``: a hand the chain holds that the store no longer has or
    holds otherwise, or another configuration. Hands stored since (a resumed run's) and a
    sequential decision or incidents that grew are not changes (unless results.json chained
    every planned hand: a finished run stores no more), but an incident the chain holds that
    was edited or deleted is. ``None`` too for a chain of another algorithm or plan,
    which this cannot compare (``verify`` says what it can)."""
    if not isinstance(ref, dict):
        return "results.json holds no chain to compare the database with"
    if ref.get("algorithm") not in (ALGORITHM, *OLDER):
        return f"results.json's chain is of an unknown kind ({str(ref.get('algorithm'))[:40]!r})"
    # each hand's digest is the same under every chain kind: an older run's chain compares too
    columns = ref.get("columns")
    # the configuration first: an edit that also changed the plan's size (more blocks) made
    # the positions below incomparable, and the edit went unseen (an examination)
    if isinstance(columns, dict) and columns.get(CONFIG) not in (None, now.columns.get(CONFIG)):
        return "the stored configuration differs from the one chained into results.json"
    positions = ref.get("hands_digests")
    if not isinstance(positions, str) or len(positions) != SHORT * len(plan_ids):
        # cut, removed or of another plan (the configuration, compared above, sets the plan):
        # a results.json whose chain cannot be compared must not pass as one that matches
        return "results.json's chain does not list this run's planned hands"
    chained = 0
    for k, hid in enumerate(plan_ids):
        want = positions[k * SHORT : (k + 1) * SHORT]
        if want == ABSENT:
            continue
        chained += 1
        got = now.digests.get(hid)
        if got is None:
            return f"hand {hid} is in results.json's chain but no longer in the database"
        if got[:SHORT] != want:
            return f"hand {hid} in the database differs from the one chained into results.json"
    problem = _unplanned_added(ref.get("hands"), chained, now, plan_ids)
    if problem is not None:
        return problem
    finished = chained == len(plan_ids) > 0  # results.json chained every planned hand
    if not isinstance(columns, dict):
        return None
    return _incidents_changed(columns, now.columns, store, finished)  # store:
    # the one ``now`` was computed from, to read its first incidents again


def _unplanned_added(
    ref_hands: Any, chained: int, now: Chain, plan_ids: Sequence[str]
) -> str | None:
    """A hand outside the schedule stored since results.json (which chained ``ref_hands``
    hands, ``chained`` of them planned): a run stores only planned hands, so it was put there
    by hand (an examination copied a hand under a new id; the report counted "25 of 24
    hands" and a win more)."""
    if not isinstance(ref_hands, int) or isinstance(ref_hands, bool):
        return None
    planned = set(plan_ids)
    extra = sorted(h for h in now.digests if h not in planned)
    if len(extra) <= ref_hands - chained:
        return None
    return (
        f"hand {extra[0][:80]} is not in the schedule and was stored after results.json was written"
    )


EDITED_INCIDENT = "an incident (a crash, a bot given up on) chained into results.json was edited"


def _some_prefix_matches(store: ResultStore, want: str) -> bool:
    """Whether the digest of the first n stored incidents, for some n, begins with ``want``
    (an older results.json's digest of the incidents it chained, without their count)."""
    h = hashlib.sha256()
    if h.hexdigest().startswith(want):
        return True
    for row in _rows(store, "SELECT * FROM incidents ORDER BY id"):
        h.update(_encode(row) + b"\n")
        if h.hexdigest().startswith(want):
            return True
    return False


def _incidents_changed(
    columns: dict[str, Any],
    current: dict[str, str],
    store: ResultStore | None,
    finished: bool = False,
) -> str | None:
    """An incident chained into results.json (the first ``incidents_seen`` of them) that the
    store no longer holds as chained; incidents stored since are new, not changes, unless
    results.json chained every planned hand (``finished``): a finished run stores no more
    (an examination added a "given up" for the winner, and report marked it †). ``current``:
    the store's chain's ``columns`` (the digest and count of every incident stored now)."""
    seen, want = columns.get(INCIDENTS_SEEN), columns.get(INCIDENTS)
    if store is None or not isinstance(want, str) or len(want) < 16:
        return None
    added = (
        "an incident (a crash, a bot given up on) was stored after results.json chained every "
        "planned hand: a finished run stores none"
    )
    if seen is None:  # a results.json written before incidents_seen: some first n must match
        if finished and not current.get(INCIDENTS, "").startswith(want):
            return added if _some_prefix_matches(store, want) else EDITED_INCIDENT
        if _some_prefix_matches(store, want):
            return None
        return EDITED_INCIDENT
    if not isinstance(seen, str):
        return None
    if not seen.isdigit() or len(seen) > 12:
        return None
    got, n = incidents_digest(store, int(seen))
    if n < int(seen):
        return (
            f"results.json chains {seen} incidents (crashes, bots given up on), the database "
            f"holds {n}"
        )
    if got[: len(want)] != want:
        return EDITED_INCIDENT
    if finished and int(current.get(INCIDENTS_SEEN, "0")) > int(seen):
        return added
    return None


def _reported(out: Path) -> dict[str, Any] | None:
    """``out/results.json`` as an object, or ``None`` when it is missing, unreadable or not an
    object. Read as verify reads it: a pipe, a device or a link to one is named, not waited on
    or read for ever."""
    try:
        old = json.loads(read_text_file(out / "results.json", 1 << 30, "results.json"))
    except (TextFileError, ValueError, RecursionError):
        return None
    return old if isinstance(old, dict) else None


def reports_of_another(out: Path, tid: str | None) -> str | None:
    """The tournament id of the reports ``out`` holds, when it is not ``tid`` (``None``: any
    reports at all): a run must not write its reports over another's, or ``unchanged``
    could not tell an edited database id from a new tournament."""
    old = _reported(out)
    if old is None or "tournament_id" not in old:
        return None
    other = str(old["tournament_id"])[:80]
    return other if other != tid else None


def unchanged(
    out: Path, tid: str, plan_ids: list[str], store: ResultStore, now: Chain | None = None
) -> None:
    """Raise :class:`StoreChangedError` if ``out/results.json`` (when it is there,
    readable and of this tournament) chains a hand or a configuration the database no longer
    holds as chained: ``report`` or ``resume`` rewrote results.json from an edited database,
    and ``verify`` then passed it (an examination deleted a hand and resumed: it was played
    again with another result; it set a bot's illegal count and reported: the report showed
    it). ``now``: the store's chain, if computed already."""
    old = _reported(out)
    if old is None:
        if not os.path.lexists(out / "results.json"):
            return  # no report yet
        # there, but empty, cut short, not JSON, or a pipe or a link to a device: treated as
        # absent, it let report and resume write over an edited database unseen (an
        # examination truncated it after deleting a hand, and resumed: the hand was played
        # again and verify passed)
        raise StoreChangedError(
            f"{out}: results.json is not a report this program wrote (empty, cut short, not "
            "JSON, or not a file), so the database cannot be compared with it and an edit "
            f"since the last report would go unseen; `uno-arena tournament verify {out}` "
            "checks what it can. Restore results.json from a copy, or, to report the database "
            "as it is now, move results.json away first"
        )
    if old.get("tournament_id") != tid:
        # a new run never writes over another tournament's reports (runner.start refuses the
        # folder), so the database's id was changed, which turned every check below off (an
        # examination edited meta.tournament_id and an illegal count, and reported)
        raise StoreChangedError(
            f"{out}: results.json reports tournament {str(old.get('tournament_id'))[:80]!r}, "
            f"but the database holds {tid[:80]!r}: one of the two was changed since the last "
            f"report; `uno-arena tournament verify {out}` names every change. Restore the "
            "changed one from a copy, or, to report the database as it is now, move "
            "results.json away first"
        )
    if now is None:  # the chain of the store as it is, computed only when there is a chain
        now = compute(store, plan_ids)  # to compare it with (it reads every stored hand)
    problem = changed_since(old.get("chain"), now, plan_ids, store)
    seq = old.get("sequential")
    reported = seq.get("stop") if isinstance(seq, dict) else None
    if problem is None and reported:
        record = store.meta().get("sequential")
        if not (isinstance(record, dict) and record.get("stop")):
            # a stop, once reported, stays: a record rolled back to looks before it would be
            # reported "not stopped yet" (an examination, without verify --head)
            problem = (
                f"results.json reports the run stopped ({reported.get('reason')} after "
                f"{reported.get('hands')} hands), but the stored decision has no stop"
            )
    if problem is not None:
        raise StoreChangedError(
            f"{out}: {problem} (the database or results.json was changed since the last "
            f"report); `uno-arena tournament verify {out}` names every change and which of the "
            "two holds it. Restore the changed one from a copy, or, to report the database as "
            "it is now, move results.json away first"
        )


def markdown_line(c: Chain) -> str:
    return (
        f"\nChain head: `{c.head}` over {c.hands} hands ({c.algorithm}; "
        "`uno-arena tournament verify` recomputes it from the database).\n"
    )


def html_line(c: Chain) -> str:
    return (
        f"<p>Chain head: <code>{c.head}</code> over {c.hands} hands ({c.algorithm}; "
        "<code>uno-arena tournament verify</code> recomputes it from the database).</p>\n"
    )
