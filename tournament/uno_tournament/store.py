"""The tournament's durable record: one SQLite file (WAL) per output folder.

Every finished hand is one transaction: the hand row (``INSERT ... ON CONFLICT(hand_id) DO
NOTHING``), its four seat rows and its replay. A hand id is stable across runs, so a hand that
is played again after a crash is stored once. Bot incidents (crashes, restarts, failed starts)
are kept too. ``schema_version`` says which layout a file has.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA_VERSION = 1
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
    replay TEXT NOT NULL
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
    response_ms TEXT NOT NULL,
    PRIMARY KEY (hand_id, seat)
);
CREATE INDEX IF NOT EXISTS seats_bot ON seats(bot);
CREATE TABLE IF NOT EXISTS incidents (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at REAL NOT NULL,
    bot TEXT NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL
);
"""


class StoreError(Exception):
    """The database is missing, of another schema version, or not a tournament."""


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
    taken_over: bool = False
    takeover_cause: str = ""
    decisions: int = 0
    response_ms: list[int] = field(default_factory=list)


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

    @property
    def winner(self) -> str:
        return self.seats[self.winner_seat].bot


class Store:
    """One tournament database. Not shared between threads; one writer process at a time."""

    def __init__(self, path: Path, conn: sqlite3.Connection) -> None:
        self.path = path
        self.conn = conn

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
        with store.conn:
            store.conn.executescript(_SCHEMA)
            store.conn.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
            store.conn.executemany(
                "INSERT INTO meta VALUES (?, ?)", [(k, json.dumps(v)) for k, v in meta.items()]
            )
        return store

    @classmethod
    def open(cls, folder: Path) -> Store:
        path = folder / DB_NAME
        if not path.is_file():
            raise StoreError(f"{folder}: no tournament here ({DB_NAME} is missing)")
        conn = _connect(path)
        try:
            row = conn.execute("SELECT version FROM schema_version").fetchone()
        except sqlite3.DatabaseError as exc:
            conn.close()
            raise StoreError(f"{path}: not a tournament database ({exc})") from exc
        if row is None or row[0] != SCHEMA_VERSION:
            conn.close()
            raise StoreError(
                f"{path}: schema version {row[0] if row else '?'}, this runner reads "
                f"{SCHEMA_VERSION}"
            )
        return cls(path, conn)

    def close(self) -> None:
        self.conn.close()

    # ------------------------------------------------------------------ meta

    def meta(self) -> dict[str, Any]:
        return {k: json.loads(v) for k, v in self.conn.execute("SELECT key, value FROM meta")}

    def set_meta(self, key: str, value: Any) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT INTO meta VALUES (?, ?) "
                "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                (key, json.dumps(value)),
            )

    # ------------------------------------------------------------------ hands

    def add_hand(self, h: HandRecord) -> bool:
        """Store a finished hand in one transaction; False if the hand id was already stored."""
        with self.conn:
            cur = self.conn.execute(
                "INSERT INTO hands VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "ON CONFLICT(hand_id) DO NOTHING",
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
                    json.dumps(h.replay, separators=(",", ":")),
                ),
            )
            if cur.rowcount != 1:
                return False
            self.conn.executemany(
                "INSERT INTO seats VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                        json.dumps(s.response_ms, separators=(",", ":")),
                    )
                    for s in h.seats
                ],
            )
        return True

    def done_ids(self) -> set[str]:
        return {r[0] for r in self.conn.execute("SELECT hand_id FROM hands")}

    def count(self) -> int:
        return int(self.conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0])

    def hands(self) -> Iterator[HandRecord]:
        """Every stored hand with its seats, in hand id order."""
        seats: dict[str, list[SeatRecord]] = {}
        for r in self.conn.execute("SELECT * FROM seats ORDER BY hand_id, seat"):
            seats.setdefault(r[0], []).append(
                SeatRecord(
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
                    response_ms=json.loads(r[12]),
                )
            )
        for r in self.conn.execute("SELECT * FROM hands ORDER BY hand_id"):
            yield HandRecord(
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
                replay=json.loads(r[14]),
                seats=seats.get(r[0], []),
            )

    # ------------------------------------------------------------------ incidents

    def add_incident(self, bot: str, kind: str, detail: str) -> None:
        with self.conn:
            self.conn.execute(
                "INSERT INTO incidents (at, bot, kind, detail) VALUES (?, ?, ?, ?)",
                (time.time(), bot, kind, detail),
            )

    def incidents(self, kinds: Sequence[str] | None = None) -> list[tuple[float, str, str, str]]:
        rows = self.conn.execute("SELECT at, bot, kind, detail FROM incidents ORDER BY id")
        return [
            (float(a), str(b), str(k), str(d)) for a, b, k, d in rows if kinds is None or k in kinds
        ]


def _i64(v: int) -> int:
    """SQLite integers are signed 64-bit: store uint64 seeds in two's complement."""
    return v - 2**64 if v >= 2**63 else v


def _connect(path: Path) -> sqlite3.Connection:
    conn = sqlite3.connect(str(path), timeout=30.0, isolation_level="DEFERRED")
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
    return conn
