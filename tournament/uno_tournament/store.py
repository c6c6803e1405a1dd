"""The tournament's durable record: one SQLite file (WAL) per output folder.

Every finished hand is one transaction: the hand row (``INSERT ... ON CONFLICT(hand_id) DO
NOTHING``), its four seat rows and its replay. A hand id is stable across runs, so a hand that
is played again after a crash is stored once. Bot incidents (crashes, restarts, failed starts,
bots given up on) are kept too. ``schema_version`` says which layout a file has. (One module,
about 890 lines: the schema, its migrations and every query over it change together; the
PostgreSQL dialect is :mod:`~uno_tournament.pgstore`.)

Layout (schema 2):

* ``hands``: one row per hand, with ``content_hash``, the SHA-256 of the hand's replay in
  canonical JSON (sorted keys, no spaces), so ``uno-arena tournament verify`` can check every
  replay file against the database;
* ``seats``: one row per seat; ``response_ms`` is the bot's decision times as little-endian
  uint32 (a JSON list in schema 1 files);
* ``replays``: the replay of each hand, zlib-compressed canonical JSON, kept apart so that
  reports and live ratings never read it;
* ``meta``, ``incidents``, ``schema_version``.

* ``shards``: the shards that play the run (address, host, state, hands done, last heartbeat),
  added in place to older files (a new table; readers that do not know it ignore it).

A schema 1 file (the first release) is upgraded in place when it is opened.

:class:`ResultStore` holds every query; :class:`Store` is the SQLite file of one output folder
and :class:`uno_tournament.pgstore.PgStore` the same tables in a PostgreSQL database shared by
the shards of a run on many machines. Both write a hand the same way: one transaction, keyed by
the hand id (``ON CONFLICT(hand_id) DO NOTHING``), with the content hash.
"""

from __future__ import annotations

import contextlib
import dataclasses
import fcntl
import hashlib
import json
import os
import socket
import sqlite3
import threading
import time
import zlib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

IntArray = npt.NDArray[np.int64]
BoolArray = npt.NDArray[np.bool_]

SCHEMA_VERSION = 2
DB_NAME = "tournament.sqlite"

_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS hands (
    hand_id TEXT PRIMARY KEY,
    table_no INTEGER NOT NULL,
    block INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    deal_id TEXT NOT NULL,
    match_seed INTEGER NOT NULL,
    hand_seed INTEGER NOT NULL,
    dealer INTEGER NOT NULL,
    match_id TEXT NOT NULL,
    winner_seat INTEGER NOT NULL,
    moves INTEGER NOT NULL,
    duration_s REAL NOT NULL,
    finished_at REAL NOT NULL,
    content_hash TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS seats (
    hand_id TEXT NOT NULL REFERENCES hands(hand_id),
    seat INTEGER NOT NULL,
    bot TEXT NOT NULL,
    place INTEGER NOT NULL,
    points_left INTEGER NOT NULL,
    points_won INTEGER NOT NULL,
    timeouts INTEGER NOT NULL,
    strikes INTEGER NOT NULL,
    illegal INTEGER NOT NULL,
    taken_over INTEGER NOT NULL,
    takeover_cause TEXT NOT NULL,
    decisions INTEGER NOT NULL,
    response_ms BLOB NOT NULL,
    late INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (hand_id, seat)
);
CREATE INDEX IF NOT EXISTS seats_bot ON seats(bot);
CREATE TABLE IF NOT EXISTS replays (
    hand_id TEXT PRIMARY KEY REFERENCES hands(hand_id),
    data BLOB NOT NULL
);
CREATE TABLE IF NOT EXISTS incidents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    bot TEXT NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL
);
"""

_SHARDS_SCHEMA = """
CREATE TABLE IF NOT EXISTS shards (
    shard TEXT PRIMARY KEY,
    addr TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    state TEXT NOT NULL,
    planned INTEGER NOT NULL,
    done INTEGER NOT NULL,
    started_at REAL NOT NULL,
    heartbeat_at REAL NOT NULL
);
"""

_SEAT_COLS = (
    "hand_id, seat, bot, place, points_left, points_won, timeouts, strikes, illegal, taken_over, "
    "takeover_cause, decisions, response_ms, late"
)
"""The seats columns, ``late`` last: an older store gains it at the end (ALTER TABLE)."""
ADD_LATE = "ALTER TABLE seats ADD COLUMN late INTEGER NOT NULL DEFAULT 0"
"""Schema migration of a store written before ``seats.late`` existed (rows get 0)."""

_HAND_COLS = (
    "hand_id, table_no, block, deal, rotation, deal_id, match_seed, hand_seed, dealer, match_id, "
    "winner_seat, moves, duration_s, finished_at, content_hash"
)


class StoreError(Exception):
    """The database is missing, unreadable, of another schema version, or not a tournament."""


LOCK_NAME = "tournament.lock"


class RunLock:
    """The one process that plays a run folder (``run`` or ``resume``): an exclusive ``flock``
    on ``<folder>/tournament.lock``, which the kernel releases when the process ends, however it
    ends (a kill -9 leaves no stale lock). A second ``run`` or ``resume`` of the folder is
    refused in one line, naming the process that holds it."""

    def __init__(self, folder: Path, fd: int) -> None:
        self.folder = folder
        self.fd: int | None = fd

    @classmethod
    def acquire(cls, folder: Path) -> RunLock:
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise StoreError(
                f"{folder}: cannot create the run folder ({exc.strerror or exc}); "
                "give a folder you may write (--out DIR)"
            ) from None
        path = folder / LOCK_NAME
        try:
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as exc:
            raise StoreError(
                f"{path}: cannot open the run's lock file ({exc.strerror or exc}); "
                "give a folder you may write (--out DIR)"
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 200, 0).decode(errors="replace").strip() or "another process"
            os.close(fd)
            raise StoreError(
                f"{folder} is being played by {holder[:100]}; wait for it to finish or stop it "
                f"(Ctrl-C), then: uno-arena tournament resume {folder}"
            ) from None
        except OSError as exc:
            os.close(fd)
            raise StoreError(
                f"{path}: cannot lock the run folder ({exc.strerror or exc}); give a folder on "
                "a local file system that supports locks (--out DIR)"
            ) from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"process {os.getpid()} on {socket.gethostname()}\n".encode(), 0)
        return cls(folder, fd)

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)  # closing the last descriptor drops the flock
            self.fd = None


REPLAY_ZLIB_LEVEL = 3
"""zlib level of a stored replay: 3 costs half of level 6's CPU (0.15 against 0.32 ms a hand of
21 KB) for 12 % more bytes (2.9 against 2.6 KB a hand). Only the stored form changes: what is
hashed (content hash, chain) is the uncompressed canonical JSON, and any level decompresses."""


def canonical_json(replay: dict[str, Any]) -> bytes:
    """The replay as canonical JSON: sorted keys, no spaces, UTF-8."""
    return json.dumps(replay, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


MAX_REPLAY_JSON = 64 << 20
"""The most a stored replay may inflate to (64 MiB; a hand of 60 moves is about 32 KB)."""


def inflate(blob: bytes) -> bytes:
    """A stored replay's JSON from its zlib blob, refusing one that inflates beyond
    :data:`MAX_REPLAY_JSON` (an edited database's zlib bomb would otherwise fill the memory of
    whoever verifies it) with ``zlib.error``, as a corrupt blob is."""
    d = zlib.decompressobj()
    out = d.decompress(blob, MAX_REPLAY_JSON + 1)
    if len(out) > MAX_REPLAY_JSON or d.unconsumed_tail:
        raise zlib.error(f"the replay inflates beyond {MAX_REPLAY_JSON >> 20} MiB")
    out += d.flush()
    if not d.eof:
        raise zlib.error("incomplete or truncated stream")
    return out


def content_hash(replay: dict[str, Any]) -> str:
    """SHA-256 (hex) of the replay's canonical JSON: the same for a replay file and the store."""
    return hashlib.sha256(canonical_json(replay)).hexdigest()


@dataclass
class SeatRecord:
    seat: int
    bot: str
    place: int
    points_left: int
    points_won: int
    timeouts: int = 0
    strikes: int = 0
    illegal: int = 0
    """Real faults: the seat's bot's actions the server rejected as malformed or not legal
    (``MatchSeat.rejected_actions``). Never a late answer."""
    taken_over: bool = False
    """A stand-in played this seat (in whole or in part): a takeover by the server (strikes, a
    disconnect) or the runner's fallback for a bot it gave up on. The hand is a forfeit."""
    takeover_cause: str = ""
    decisions: int = 0
    response_ms: list[int] = field(default_factory=list)
    late: int = 0
    """Answers that arrived after their request had closed (``MatchSeat.stale_actions``): a
    protocol race a correct bot cannot always avoid (another seat's action closed an optional
    chance while the answer was in flight), so neither a fault nor a strike. 0 in hands stored
    before the column existed (their ``illegal`` counted these too)."""


@dataclass
class HandRecord:
    hand_id: str
    table: int
    block: int
    deal: int
    rotation: int
    deal_id: str
    match_seed: int
    hand_seed: int
    dealer: int
    match_id: str
    winner_seat: int
    moves: int
    duration_s: float
    seats: list[SeatRecord]
    replay: dict[str, Any]
    finished_at: float = 0.0
    content_hash: str = ""
    replay_raw: bytes = b""
    """The replay's canonical JSON, when the player already made it (a shard worker sends it
    so the writer need not serialize the replay again)."""

    @property
    def winner(self) -> str:
        return self.seats[self.winner_seat].bot


@dataclass
class Columns:
    """Every stored hand in columns, in hand-id order, without the replays (what the ratings,
    the reports and the live leaderboard need). Seat arrays are (hands, seats)."""

    hand_ids: list[str]
    deal_ids: list[str]
    bot_names: list[str]
    """Names behind the bot indices, in order of first appearance."""
    bots: IntArray
    places: IntArray
    points_left: IntArray
    points_won: IntArray
    timeouts: IntArray
    strikes: IntArray
    illegal: IntArray
    late: IntArray
    taken_over: BoolArray
    decisions: IntArray
    winner_seat: IntArray
    moves: IntArray
    response_ms: dict[str, IntArray]
    """Every decision time of each bot (ms)."""

    @property
    def n_hands(self) -> int:
        return len(self.hand_ids)


@dataclass
class ShardStatus:
    """One shard of a run as the store records it."""

    shard: str
    """``I/N``."""
    addr: str
    """The shard's game server (host:port), for external bots."""
    host: str
    pid: int
    state: str
    """``starting``, ``playing``, ``finished``, ``stopped`` or ``failed``."""
    planned: int
    done: int
    started_at: float
    heartbeat_at: float


class ResultStore:
    """Every query of a tournament's record, over a DB-API connection (``?`` placeholders;
    a subclass translates them). One writer thread and readers share :attr:`lock`."""

    seq_col = "rowid"
    """A column that grows with every stored hand (the order in which hands were committed,
    or close to it: :meth:`new_hands` tolerates gaps and late commits)."""

    late_sql = "late"
    """How to read ``seats.late``: the column, or ``0`` in a store opened read-only that was
    written before the column existed."""

    def __init__(self, location: str) -> None:
        self.location = location
        """Where the record is, for messages (a file path, or a URL without its password)."""
        self.lock = threading.RLock()

    def _seat_select(self, prefix: str = "") -> str:
        """The seat columns :func:`_seat` reads, in its order."""
        cols = [f"{prefix}{c}" for c in _SEAT_COLS.split(", ")]
        cols[-1] = self.late_sql if self.late_sql != "late" else f"{prefix}late"
        return ", ".join(cols)

    # ------------------------------------------------------------------ dialect

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        raise NotImplementedError

    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        raise NotImplementedError

    def _transaction(self) -> contextlib.AbstractContextManager[Any]:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ meta

    def meta(self) -> dict[str, Any]:
        with self.lock:
            rows = self._execute("SELECT key, value FROM meta").fetchall()
        out: dict[str, Any] = {}
        for k, v in rows:
            try:
                out[k] = json.loads(v)
            except (TypeError, ValueError, RecursionError):
                # every value was written as JSON: this one was edited (a traceback before)
                raise StoreError(
                    f"{self.location}: the stored {str(k)[:40]!r} is not the JSON the run wrote "
                    "(the database was edited); restore it from a copy"
                ) from None
        return out

    def tournament_id(self, meta: dict[str, Any] | None = None) -> str:
        """The stored tournament's id (from ``meta`` if read already), or a StoreError."""
        tid = (self.meta() if meta is None else meta).get("tournament_id")
        if not isinstance(tid, str) or not tid:
            raise StoreError(
                f"{self.location}: the database names no tournament (its tournament_id is "
                "missing: it was edited); restore it from a copy"
            )
        return tid

    def set_meta(self, key: str, value: Any) -> None:
        with self.lock, self._transaction():
            self._execute(
                "INSERT INTO meta VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, json.dumps(value)),
            )

    def init_meta(self, meta: dict[str, Any]) -> dict[str, Any]:
        """Write each key that is not set yet (a first writer wins, later ones keep what is
        there); returns the meta now stored."""
        with self.lock, self._transaction():
            for k, v in meta.items():
                self._execute(
                    "INSERT INTO meta VALUES (?, ?) ON CONFLICT(key) DO NOTHING",
                    (k, json.dumps(v)),
                )
        return self.meta()

    # ------------------------------------------------------------------ hands

    def add_hand(self, h: HandRecord) -> bool:
        """Store a finished hand in one transaction; False if the hand id was already stored."""
        with self.lock, self._transaction():
            return self._insert(h)

    def add_hands(self, hands: Iterable[HandRecord]) -> int:
        """Store many hands in one transaction (bulk loads); returns how many were new."""
        with self.lock, self._transaction():
            return sum(self._insert(h) for h in hands)

    def _insert(self, h: HandRecord) -> bool:
        raw = h.replay_raw or canonical_json(h.replay)
        digest = hashlib.sha256(raw).hexdigest()
        cur = self._execute(
            f"INSERT INTO hands ({_HAND_COLS}) VALUES "
            "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(hand_id) DO NOTHING",
            (
                h.hand_id,
                h.table,
                h.block,
                h.deal,
                h.rotation,
                h.deal_id,
                _i64(h.match_seed),
                _i64(h.hand_seed),
                h.dealer,
                h.match_id,
                h.winner_seat,
                h.moves,
                h.duration_s,
                h.finished_at or time.time(),
                digest,
            ),
        )
        if cur.rowcount != 1:
            return False
        h.content_hash = digest
        self._executemany(
            f"INSERT INTO seats ({_SEAT_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            [
                (
                    h.hand_id,
                    s.seat,
                    s.bot,
                    s.place,
                    s.points_left,
                    s.points_won,
                    s.timeouts,
                    s.strikes,
                    s.illegal,
                    int(s.taken_over),
                    s.takeover_cause,
                    s.decisions,
                    np.asarray(s.response_ms, dtype="<u4").tobytes(),
                    s.late,
                )
                for s in h.seats
            ],
        )
        self._execute(
            "INSERT INTO replays VALUES (?, ?)", (h.hand_id, zlib.compress(raw, REPLAY_ZLIB_LEVEL))
        )
        return True

    def done_ids(self) -> set[str]:
        with self.lock:
            return {r[0] for r in self._execute("SELECT hand_id FROM hands")}

    def count(self) -> int:
        with self.lock:
            return int(self._execute("SELECT COUNT(*) FROM hands").fetchone()[0])

    def replay(self, hand_id: str) -> dict[str, Any] | None:
        """The stored replay of a hand (None if the hand is not stored)."""
        with self.lock:
            row = self._execute("SELECT data FROM replays WHERE hand_id = ?", (hand_id,)).fetchone()
        if row is None:
            return None
        data: dict[str, Any] = json.loads(inflate(row[0]))
        return data

    def replay_bytes(self, hand_id: str) -> bytes | None:
        """The stored replay of a hand as its canonical JSON (None if the hand is not stored):
        its SHA-256 is the content hash, without parsing it (``tournament verify``)."""
        with self.lock:
            row = self._execute("SELECT data FROM replays WHERE hand_id = ?", (hand_id,)).fetchone()
        return None if row is None else inflate(row[0])

    def replays(self, hand_ids: Iterable[str]) -> Iterator[tuple[str, dict[str, Any]]]:
        """``(hand_id, replay)`` for the given hands that are stored."""
        for hid in hand_ids:
            rep = self.replay(hid)
            if rep is not None:
                yield hid, rep

    def hand_rows(self) -> Iterator[HandRecord]:
        """Every stored hand with its seats, WITHOUT its replay (``replay`` is {}), in hand id
        order. Streams: seats are read alongside, one hand at a time.

        The hands are read first, their seats after: a hand and its seats are stored in one
        transaction, so every hand read has its seats in the second read, even where each read
        sees its own snapshot (PostgreSQL, with shards still writing). Seats of hands stored
        between the two reads are skipped."""
        hand_rows = self._execute(f"SELECT {_HAND_COLS} FROM hands ORDER BY hand_id")
        seat_rows = iter(
            self._execute(f"SELECT {self._seat_select()} FROM seats ORDER BY hand_id, seat")
        )
        pending = next(seat_rows, None)
        for r in hand_rows:
            seats: list[SeatRecord] = []
            while pending is not None and pending[0] < r[0]:  # a hand newer than the first read
                pending = next(seat_rows, None)
            while pending is not None and pending[0] == r[0]:
                seats.append(_seat(pending))
                pending = next(seat_rows, None)
            yield _hand_row(r, seats)

    def hand_row(self, hand_id: str) -> HandRecord | None:
        """One stored hand with its seats, WITHOUT its replay (None if it is not stored); for
        ``uno-arena replay`` and ``tournament verify``."""
        with self.lock:
            row = self._execute(
                f"SELECT {_HAND_COLS} FROM hands WHERE hand_id = ?", (hand_id,)
            ).fetchone()
            if row is None:
                return None
            seats = self._execute(
                f"SELECT {self._seat_select()} FROM seats WHERE hand_id = ? ORDER BY seat",
                (hand_id,),
            ).fetchall()
        return _hand_row(row, [_seat(s) for s in seats])

    def hands(self) -> Iterator[HandRecord]:
        """Every stored hand with its seats and its replay, in hand id order (reads every
        replay: for tools and tests; reports use :meth:`columns`)."""
        for h in self.hand_rows():
            h.replay = self.replay(h.hand_id) or {}
            yield h

    def columns(self, bot_order: Sequence[str] = ()) -> Columns:
        """Every stored hand in columns (see :class:`Columns`); never reads a replay.

        ``bot_order`` fixes the first bot indices (the rest follow in order of appearance)."""
        names: list[str] = list(bot_order)
        index = {b: i for i, b in enumerate(names)}
        hand_ids: list[str] = []
        deal_ids: list[str] = []
        winner: list[int] = []
        moves: list[int] = []
        for hid, did, w, m in self._execute(
            "SELECT hand_id, deal_id, winner_seat, moves FROM hands ORDER BY hand_id"
        ):
            hand_ids.append(hid)
            deal_ids.append(did)
            winner.append(w)
            moves.append(m)
        n = len(hand_ids)
        row_of = {h: i for i, h in enumerate(hand_ids)}
        top = self._execute("SELECT COALESCE(MAX(seat), 3) FROM seats").fetchone()[0]
        width = max(4, int(top) + 1)
        cols = {
            k: np.zeros((n, width), dtype=np.int64)
            for k in (
                "places",
                "left",
                "won",
                "timeouts",
                "strikes",
                "illegal",
                "late",
                "decisions",
            )
        }
        bots = np.full((n, width), -1, dtype=np.int64)
        taken = np.zeros((n, width), dtype=np.bool_)
        ms_parts: dict[int, list[IntArray]] = {}
        for (
            hid,
            seat,
            bot,
            place,
            left,
            won,
            tout,
            strikes,
            illegal,
            tk,
            dec,
            ms,
            late,
        ) in self._execute(
            "SELECT hand_id, seat, bot, place, points_left, points_won, timeouts, strikes, "
            f"illegal, taken_over, decisions, response_ms, {self.late_sql} FROM seats"
        ):
            i = row_of.get(hid)
            if i is None:
                continue
            b = index.get(bot)
            if b is None:
                b = index[bot] = len(names)
                names.append(bot)
            bots[i, seat] = b
            cols["places"][i, seat] = place
            cols["left"][i, seat] = left
            cols["won"][i, seat] = won
            cols["timeouts"][i, seat] = tout
            cols["strikes"][i, seat] = strikes
            cols["illegal"][i, seat] = illegal
            cols["late"][i, seat] = late
            cols["decisions"][i, seat] = dec
            taken[i, seat] = bool(tk)
            if ms:
                ms_parts.setdefault(b, []).append(_ms(ms))
        return Columns(
            hand_ids=hand_ids,
            deal_ids=deal_ids,
            bot_names=names,
            bots=bots,
            places=cols["places"],
            points_left=cols["left"],
            points_won=cols["won"],
            timeouts=cols["timeouts"],
            strikes=cols["strikes"],
            illegal=cols["illegal"],
            late=cols["late"],
            taken_over=taken,
            decisions=cols["decisions"],
            winner_seat=np.array(winner, dtype=np.int64),
            moves=np.array(moves, dtype=np.int64),
            response_ms={
                names[b]: np.concatenate(parts).astype(np.int64) for b, parts in ms_parts.items()
            },
        )

    def hashes(self) -> dict[str, str]:
        """``hand_id -> content_hash`` of every stored hand."""
        with self.lock:
            return dict(self._execute("SELECT hand_id, content_hash FROM hands"))

    # ------------------------------------------------------------------ incidents

    def add_incident(self, bot: str, kind: str, detail: str) -> None:
        with self.lock, self._transaction():
            self._execute(
                "INSERT INTO incidents (at, bot, kind, detail) VALUES (?, ?, ?, ?)",
                (time.time(), bot, kind, detail),
            )

    def incidents(self, kinds: Sequence[str] | None = None) -> list[tuple[float, str, str, str]]:
        with self.lock:
            rows = self._execute(
                "SELECT at, bot, kind, detail FROM incidents ORDER BY id"
            ).fetchall()
        return [
            (float(a), str(b), str(k), str(d)) for a, b, k, d in rows if kinds is None or k in kinds
        ]

    # ------------------------------------------------------------------ shards

    def set_shard(self, status: ShardStatus) -> None:
        """Record (or update) a shard's address, state and progress."""
        with self.lock, self._transaction():
            self._execute(
                "INSERT INTO shards VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(shard) DO "
                "UPDATE SET addr = excluded.addr, host = excluded.host, pid = excluded.pid, "
                "state = excluded.state, planned = excluded.planned, done = excluded.done, "
                "started_at = excluded.started_at, heartbeat_at = excluded.heartbeat_at",
                (
                    status.shard,
                    status.addr,
                    status.host,
                    status.pid,
                    status.state,
                    status.planned,
                    status.done,
                    status.started_at,
                    status.heartbeat_at,
                ),
            )

    def shards(self) -> list[ShardStatus]:
        """Every shard recorded, by shard name (empty for a file that has no shards table)."""
        with self.lock:
            try:
                rows = self._execute(
                    "SELECT shard, addr, host, pid, state, planned, done, started_at, "
                    "heartbeat_at FROM shards ORDER BY shard"
                ).fetchall()
            except sqlite3.OperationalError:
                return []
        return [ShardStatus(*r) for r in rows]

    # ------------------------------------------------------------------ following a run

    def new_hands(self, after: int, overlap: int = 0) -> tuple[list[HandRecord], int]:
        """Hands stored after position ``after`` of :attr:`seq_col` (``overlap`` positions
        earlier too, for stores whose positions are handed out before commit), WITHOUT replays,
        and the highest position seen. A watcher dedupes by hand id."""
        low = max(0, after - overlap)
        with self.lock:
            hands = self._execute(
                f"SELECT {self.seq_col}, {_HAND_COLS} FROM hands WHERE {self.seq_col} > ? "
                f"ORDER BY {self.seq_col}",
                (low,),
            ).fetchall()
            if not hands:
                return [], after
            seats = self._execute(
                f"SELECT {self._seat_select('s.')} FROM seats s JOIN hands h ON "
                f"h.hand_id = s.hand_id WHERE h.{self.seq_col} > ? ORDER BY s.hand_id, s.seat",
                (low,),
            ).fetchall()
        by_hand: dict[str, list[SeatRecord]] = {}
        for r in seats:
            by_hand.setdefault(r[0], []).append(_seat(r))
        out = [_hand_row(r[1:], by_hand.get(r[1], [])) for r in hands]
        return out, max([after, *(int(r[0]) for r in hands)])


class Store(ResultStore):
    """The SQLite file of one output folder; one writer process at a time. The runner writes
    hands from a writer thread and incidents from its event loop: every use holds
    :attr:`lock`."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        super().__init__(str(path))
        self.path = path
        self.conn = conn

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> sqlite3.Cursor:
        return self.conn.execute(sql, params)

    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.conn.executemany(sql, rows)

    def _transaction(self) -> contextlib.AbstractContextManager[Any]:
        return self.conn

    # ------------------------------------------------------------------ open

    @classmethod
    def create(cls, folder: Path, meta: dict[str, Any]) -> Store:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / DB_NAME
        if path.exists():
            raise StoreError(
                f"{folder} already holds a tournament; resume it with "
                f"`uno-arena tournament resume {folder}` or choose another output folder"
            )
        store = cls(path, _connect(path))
        # the stored configuration holds the bots' tokens (a resume starts them again with
        # them): readable by its owner only, not by every user of the machine (it was 0644;
        # an examination); SQLite gives its -wal and -shm files the same mode
        os.chmod(path, 0o600)
        with store.conn:
            store.conn.executescript(_SCHEMA + _SHARDS_SCHEMA)
            store.conn.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
            store.conn.executemany(
                "INSERT INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in meta.items()]
            )
        return store

    @classmethod
    def open(cls, folder: Path, *, readonly: bool = False) -> Store:
        """Open a folder's database (``readonly``: for a watcher beside a running writer; no
        upgrade, no new table)."""
        path = folder / DB_NAME
        if not path.is_file():
            if path.exists() or path.is_symlink():
                raise StoreError(
                    f"{path}: not a regular file (a folder, device, pipe or broken link); a "
                    "tournament's database is the file its run wrote"
                )
            raise StoreError(f"{folder}: no tournament here ({DB_NAME} is missing)")
        try:
            conn = _connect(path)
        except sqlite3.DatabaseError as exc:
            if not readonly or _writable(folder):
                raise _unreadable(path, exc) from exc
            conn = _connect_archive(path)
        try:
            row = conn.execute("SELECT version FROM schema_version").fetchone()
            conn.execute("SELECT key FROM meta LIMIT 1").fetchall()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise _unreadable(path, exc) from exc
        version = row[0] if row else None
        if version == 1 and not _schema_1_layout(conn):
            conn.close()
            raise StoreError(
                f"{path}: its schema_version says 1, but its tables are schema "
                f"{SCHEMA_VERSION}'s: the file was edited, and no upgrade can read it; restore "
                "the run's folder from a copy"
            )
        if version == 1 and not readonly:
            try:
                _upgrade_1_to_2(conn)
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise StoreError(f"{path}: cannot upgrade it from schema 1 ({exc})") from exc
        elif version == 1:  # read-only: an older run's database is not upgraded here
            conn.close()
            raise StoreError(
                f"{path}: an older run's database (schema 1); `uno-arena tournament report "
                f"{folder}` upgrades it to schema {SCHEMA_VERSION}, then try again"
            )
        elif version != SCHEMA_VERSION:
            conn.close()
            raise StoreError(
                f"{path}: schema version {version if version is not None else '?'}, this runner "
                f"reads {SCHEMA_VERSION}"
            )
        try:
            has_late = any(r[1] == "late" for r in conn.execute("PRAGMA table_info(seats)"))
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise _unreadable(path, exc) from exc
        if not readonly:
            try:
                with conn:
                    conn.executescript(_SHARDS_SCHEMA)
                    if not has_late:
                        conn.execute(ADD_LATE)
                        has_late = True
            except sqlite3.DatabaseError as exc:
                conn.close()
                raise _unreadable(path, exc) from exc
        store = cls(path, conn)
        if not has_late:
            store.late_sql = "0"
        return store

    def check_damage(self) -> None:
        """Raise a StoreError if SQLite finds the file damaged (``PRAGMA quick_check``: every
        page, not only those a query happens to read). Report and resume call it before they
        write from the file: a page of replays overwritten mid-file was read around, and the
        reports were rewritten with exit status 0."""
        with self.lock:
            try:
                rows = self.conn.execute("PRAGMA quick_check(5)").fetchall()
            except sqlite3.DatabaseError as exc:
                rows = [(str(exc),)]
        problems = [" ".join(str(r[0]).split()) for r in rows if r and r[0] != "ok"]
        if problems:
            raise StoreError(
                f"{self.path}: the database is damaged ({'; '.join(problems)[:300]}); restore "
                "it from a copy (`uno-arena tournament verify` names the hands it can still "
                "confirm)"
            )

    def close(self) -> None:
        with self.lock:
            self.conn.close()


def _unreadable(path: Path, exc: sqlite3.DatabaseError) -> StoreError:
    """The error for a file SQLite cannot read as a tournament database: a damaged SQLite file
    (its header says SQLite) is named damaged, with the way out; anything else is not one."""
    try:
        with open(path, "rb") as f:
            header = f.read(16)
    except OSError:
        header = b""
    if header == b"SQLite format 3\0":
        return StoreError(
            f"{path}: the database is damaged ({str(exc)[:160]}); restore it from a copy"
        )
    return StoreError(f"{path}: not a tournament database ({exc})")


def _seat(r: Sequence[Any]) -> SeatRecord:
    """A seat row (hand_id first) as a SeatRecord."""
    return SeatRecord(
        seat=r[1],
        bot=r[2],
        place=r[3],
        points_left=r[4],
        points_won=r[5],
        timeouts=r[6],
        strikes=r[7],
        illegal=r[8],
        taken_over=bool(r[9]),
        takeover_cause=r[10],
        decisions=r[11],
        response_ms=_ms(r[12]).tolist(),
        late=int(r[13]) if len(r) > 13 else 0,
    )


def _hand_row(r: Sequence[Any], seats: list[SeatRecord]) -> HandRecord:
    """A hands row (the columns of ``_HAND_COLS``) as a HandRecord without its replay."""
    return HandRecord(
        hand_id=r[0],
        table=r[1],
        block=r[2],
        deal=r[3],
        rotation=r[4],
        deal_id=r[5],
        match_seed=r[6] & (2**64 - 1),
        hand_seed=r[7] & (2**64 - 1),
        dealer=r[8],
        match_id=r[9],
        winner_seat=r[10],
        moves=r[11],
        duration_s=r[12],
        finished_at=r[13],
        content_hash=r[14],
        replay={},
        seats=seats,
    )


def _ms(value: bytes | str) -> IntArray:
    """Decision times from a seat row: uint32 bytes (schema 2) or a JSON list (schema 1)."""
    if isinstance(value, bytes | bytearray | memoryview):
        return np.frombuffer(bytes(value), dtype="<u4").astype(np.int64)
    return np.asarray(json.loads(value) if value else [], dtype=np.int64)


def _i64(v: int) -> int:
    """SQLite integers are signed 64-bit: store uint64 seeds in two's complement."""
    return v - 2**64 if v >= 2**63 else v


def _writable(folder: Path) -> bool:
    """Whether this process may create files in ``folder`` (SQLite's journal and WAL index)."""
    try:
        return os.access(folder, os.W_OK) and not os.statvfs(folder).f_flag & os.ST_RDONLY
    except OSError:
        return False


def _connect_archive(path: Path) -> sqlite3.Connection:
    """A database in a folder this process cannot write (an archive on read-only media, a
    colleague's folder), opened to read: SQLite cannot make its WAL index there, so it is
    opened as immutable, which is exact only if no write-ahead log waits to be merged."""
    wal = path.with_name(path.name + "-wal")
    try:
        pending = wal.stat().st_size > 0
    except OSError:
        pending = False
    if pending:
        raise StoreError(
            f"{path}: the folder cannot be written and the database has writes not yet merged "
            f"({wal.name}); copy the folder somewhere writable and read the copy"
        )
    try:
        conn = sqlite3.connect(
            f"{path.resolve().as_uri()}?mode=ro&immutable=1", uri=True, check_same_thread=False
        )
        conn.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    except sqlite3.DatabaseError as exc:
        raise _unreadable(path, exc) from exc
    return conn


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(
        str(path), timeout=30.0, isolation_level="DEFERRED", check_same_thread=False
    )
    try:
        conn.execute("PRAGMA journal_mode=WAL")
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
    except sqlite3.DatabaseError:
        conn.close()
        raise
    return conn


def _schema_1_layout(conn: sqlite3.Connection) -> bool:
    """Whether the file's ``hands`` table is schema 1's (each replay a JSON text in
    ``hands.replay``), whatever its ``schema_version`` row says."""
    try:
        return any(r[1] == "replay" for r in conn.execute("PRAGMA table_info(hands)"))
    except sqlite3.DatabaseError:
        return False


def _upgrade_1_to_2(conn: sqlite3.Connection) -> None:
    """Schema 1 kept each replay as JSON text in ``hands.replay``: move it to ``replays``
    (compressed), record its content hash, and mark the file as schema 2. One transaction."""
    new_hands = _SCHEMA[_SCHEMA.index("CREATE TABLE IF NOT EXISTS hands") :]
    new_hands = new_hands[: new_hands.index(");") + 2].replace(
        "IF NOT EXISTS hands (", "hands_v2 ("
    )
    replays = _SCHEMA[_SCHEMA.index("CREATE TABLE IF NOT EXISTS replays") :]
    replays = replays[: replays.index(");") + 2]
    conn.execute("PRAGMA foreign_keys=OFF")
    try:
        with conn:
            conn.execute(new_hands)
            conn.execute(replays)
            rows = conn.execute(
                "SELECT hand_id, table_no, block, deal, rotation, deal_id, match_seed, hand_seed, "
                "dealer, match_id, winner_seat, moves, duration_s, finished_at, replay FROM hands"
            )
            for r in rows.fetchall():
                raw = canonical_json(json.loads(r[14]))
                conn.execute(
                    f"INSERT INTO hands_v2 ({_HAND_COLS}) VALUES "
                    "(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (*r[:14], hashlib.sha256(raw).hexdigest()),
                )
                conn.execute("INSERT INTO replays VALUES (?, ?)", (r[0], zlib.compress(raw)))
            conn.execute("DROP TABLE hands")
            conn.execute("ALTER TABLE hands_v2 RENAME TO hands")
            conn.execute("UPDATE schema_version SET version = 2")
    finally:
        conn.execute("PRAGMA foreign_keys=ON")


FOLLOW_OVERLAP = 4096
"""How far back (in store positions) a follower re-reads: PostgreSQL hands out a hand's position
when its transaction starts writing, so a position may become visible after higher ones."""


def hand_to_json(rec: HandRecord) -> dict[str, Any]:
    """A finished hand as JSON (a shard worker's message to the runner). With the replay's
    canonical JSON made (``replay_raw``), that text travels as one string and the replay
    without its events (the runner stores the text as it is, and reads only the replay's hand
    id); otherwise the replay, its events already converted."""
    out = {
        f.name: getattr(rec, f.name)
        for f in dataclasses.fields(rec)
        if f.name not in ("seats", "replay", "replay_raw")
    }
    out["seats"] = [dataclasses.asdict(s) for s in rec.seats]
    if rec.replay_raw:
        out["replay"] = {k: v for k, v in rec.replay.items() if k != "events"}
        out["replay_raw"] = rec.replay_raw.decode()
    else:
        out["replay"] = rec.replay
    return out


def hand_from_json(data: dict[str, Any]) -> HandRecord:
    d = dict(data)
    seats = [SeatRecord(**s) for s in d.pop("seats")]
    raw = d.pop("replay_raw", None)
    if isinstance(raw, str):
        d["replay_raw"] = raw.encode()
    return HandRecord(seats=seats, **d)
