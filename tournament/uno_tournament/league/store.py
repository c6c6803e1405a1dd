"""The league's own records, ``league.sqlite`` in the league folder: its settings, every
submitted version with its state, and the tokens of remote bots.

A version's ``state`` is ``active`` (it plays), ``refused`` (its build or gate failed;
``reason`` says why), or ``retired`` (a newer version of the same bot replaced it; its history
is kept). Every change is one SQLite transaction, so a kill -9 at any moment leaves either the
old state or the new one.

The same records in PostgreSQL (``--store URL``) are :class:`.pgleague.PgLeagueStore`, this class
over another connection; :mod:`.records` opens the one a command names.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = [
    "DB_NAME",
    "REMOTE",
    "STORE_NOTE",
    "LeagueError",
    "LeagueStore",
    "Version",
]

DB_NAME = "league.sqlite"
STORE_NOTE = "league.store"
"""In the folder of a league whose records are in PostgreSQL: the store's URL without its
password, so that a command given the folder alone can say where the league is."""
REMOTE = "remote"
"""The ``language`` of a version that is a remote bot (one a token admitted after its gate on
its first connection); no manifest may claim it."""
SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE versions (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    version TEXT NOT NULL,
    author TEXT NOT NULL,
    language TEXT NOT NULL,
    folder TEXT NOT NULL,
    manifest TEXT NOT NULL,
    submitted_at REAL NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('active', 'refused', 'retired')),
    reason TEXT NOT NULL DEFAULT '',
    gate TEXT NOT NULL DEFAULT '{}',
    UNIQUE (name, version)
);
CREATE TABLE tokens (
    name TEXT PRIMARY KEY,
    author TEXT NOT NULL,
    token_sha256 TEXT NOT NULL,
    created_at REAL NOT NULL
);
"""
_PLAY_SCHEMA = """
CREATE TABLE IF NOT EXISTS refits (
    id INTEGER PRIMARY KEY,
    at REAL NOT NULL,
    hands INTEGER NOT NULL,
    note TEXT NOT NULL DEFAULT ''
);
CREATE TABLE IF NOT EXISTS history (
    refit INTEGER NOT NULL REFERENCES refits (id),
    version_id INTEGER NOT NULL REFERENCES versions (id),
    rating REAL NOT NULL,
    low REAL NOT NULL,
    high REAL NOT NULL,
    hands INTEGER NOT NULL,
    PRIMARY KEY (refit, version_id)
);
CREATE TABLE IF NOT EXISTS replacements (
    old_id INTEGER PRIMARY KEY REFERENCES versions (id),
    new_id INTEGER NOT NULL REFERENCES versions (id),
    retired_at REAL NOT NULL,
    verdict TEXT NOT NULL CHECK (verdict IN ('better', 'not better', 'undecided yet')),
    test TEXT NOT NULL DEFAULT '{}'
);
"""
"""What ``league run`` adds: the rating history (one ``refits`` row per refit, and a ``history``
row per rated version in it) and the new-version verdict of every replacement. Created when a
league is opened (a league made before ``league run`` existed gains them)."""


def league_around(folder: Path) -> Path | None:
    """The league whose folder holds ``folder`` (a folder above it with the records of one),
    if any: as the user wrote it when it is one of the given path's parents (``L`` for
    ``L/bots``), else resolved."""
    where = folder.resolve()
    for parents in (folder.parents, where.parents):
        for parent in parents:
            if not (parent / DB_NAME).is_file() and not (parent / STORE_NOTE).is_file():
                continue
            if where.is_relative_to(parent.resolve()):  # not so for L/../x
                return parent
    return None


def private(path: Path) -> None:
    """Make the league database ``path`` (and its ``-wal`` and ``-shm``) its owner's only, as
    ``init`` makes it now: a league made before kept its seed readable by every user."""
    for p in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        with contextlib.suppress(OSError):  # not ours to change, or gone: left as it is
            if p.stat().st_mode & 0o077:
                p.chmod(0o600)


class LeagueError(RuntimeError):
    """A league command that cannot be done; the message says what to do instead."""


@dataclass(frozen=True)
class Version:
    id: int
    name: str
    version: str
    author: str
    language: str
    folder: str
    submitted_at: float
    state: str
    reason: str
    gate: dict[str, Any]

    @property
    def key(self) -> str:
        return f"{self.name}@{self.version}"

    @property
    def remote(self) -> bool:
        """A remote bot: run by its author, connected with a league token, not launched."""
        return self.language == REMOTE


class LeagueStore:
    """The league's records over a DB-API connection with ``?`` placeholders (SQLite here;
    :class:`~uno_tournament.league.pgleague.PgLeagueStore` translates them for PostgreSQL).
    Every change is one transaction that holds the store's write lock from its start."""

    meta_table = "meta"
    """The table of the settings (PostgreSQL shares its database with the hand store, whose
    ``meta`` is the tournament's: there it is ``league_meta``)."""

    def __init__(self, path: Path, conn: Any) -> None:
        self.path = path
        self.conn = conn
        self.location = str(path)
        """Where the records are, for messages (a file, or a URL without its password)."""

    # ------------------------------------------------------------------ dialect

    def _x(self, sql: str, params: Sequence[Any] = ()) -> Any:
        return self.conn.execute(sql, params)

    def _xmany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        self.conn.executemany(sql, rows)

    @contextlib.contextmanager
    def _tx(self) -> Iterator[None]:
        """One write transaction, the store's write lock taken at its start (SQLite:
        ``BEGIN IMMEDIATE``), so two writers never interleave their reads and writes."""
        with self.conn:
            self.conn.execute("BEGIN IMMEDIATE")
            yield

    @classmethod
    def create(cls, folder: Path, settings: dict[str, Any]) -> LeagueStore:
        """A new league database, written whole beside its place and renamed into it (a kill
        during ``init`` leaves no half-made league)."""
        path = folder / DB_NAME
        tmp = folder / f".{DB_NAME}.new"
        try:
            folder.mkdir(parents=True, exist_ok=True)
            if path.exists():
                raise LeagueError(
                    f"{folder} already holds a league; use it, or choose another folder"
                )
            tmp.unlink(missing_ok=True)
            # its settings hold the deals' secret seed (and its tokens' hashes): readable by
            # the league's user only (it was 0644; an examination), from the file's first byte;
            # SQLite gives its -wal and -shm files the same mode
            os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600))
            conn = sqlite3.connect(tmp)
            try:
                conn.executescript(_SCHEMA)
                with conn:
                    conn.execute("INSERT INTO schema_version VALUES (?)", (SCHEMA_VERSION,))
                    conn.execute("INSERT INTO meta VALUES ('settings', ?)", (json.dumps(settings),))
                    conn.execute(
                        "INSERT INTO meta VALUES ('created_at', ?)", (json.dumps(time.time()),)
                    )
            finally:
                conn.close()
            tmp.rename(path)
        except (OSError, sqlite3.Error) as exc:
            why = getattr(exc, "strerror", None) or str(exc)
            raise LeagueError(
                f"{folder}: cannot create the league here ({why}); give a folder you may write"
            ) from None
        return cls.open(folder)

    @classmethod
    def open(cls, folder: Path, *, readonly: bool = False) -> LeagueStore:
        """The league in ``folder``; ``readonly``: for a viewer (``serve --league``), which
        changes nothing (a league made by ``init`` has every table already)."""
        path = folder / DB_NAME
        note = folder / STORE_NOTE
        if not path.is_file() and note.is_file():
            where = note.read_text(errors="replace").strip()[:200]
            raise LeagueError(
                f"{folder}: this league's records are in the PostgreSQL store {where}; "
                "add --store URL (with its password) to the command"
            )
        if not path.is_file() and (outer := league_around(folder)) is not None:
            # its bots folder, say: `league init` there is refused, as it should be (an
            # examination followed the advice below and was refused)
            raise LeagueError(
                f"{folder}: a folder inside the league {outer}, not a league; give the "
                f"league's folder, {outer}"
            )
        if not path.is_file():
            raise LeagueError(
                f"{folder}: no league here ({DB_NAME} is missing); start one with "
                f"`uno-arena league init {folder}`"
            )
        try:
            if readonly:
                conn = sqlite3.connect(
                    f"{path.resolve().as_uri()}?mode=ro", uri=True, isolation_level=None, timeout=30
                )
            else:
                conn = sqlite3.connect(path, isolation_level=None, timeout=30)
                conn.execute("PRAGMA journal_mode=WAL")
            row = conn.execute("SELECT version FROM schema_version").fetchone()
        except sqlite3.DatabaseError as exc:
            raise LeagueError(f"{path}: not a league database ({exc})") from None
        if row is None or row[0] != SCHEMA_VERSION:
            conn.close()
            raise LeagueError(f"{path}: league schema {row[0] if row else '?'}, expected 1")
        if not readonly:
            conn.executescript(_PLAY_SCHEMA)
            private(path)
        return cls(path, conn)

    def close(self) -> None:
        self.conn.close()

    def _loads(self, text: Any, what: str) -> dict[str, Any]:
        """Stored JSON ``text`` of ``what`` (a table's column) as a dict: a damaged value (an
        edited database) is one line naming the database and the value, not a traceback."""
        try:
            value = json.loads(text)
            if not isinstance(value, dict):
                raise ValueError(f"a JSON {type(value).__name__}, not an object")
        except (TypeError, ValueError) as exc:
            why = " ".join(str(exc).split())[:200]
            raise LeagueError(f"{self.location}: not a league database ({what}: {why})") from None
        return value

    def settings(self) -> dict[str, Any]:
        table = self.meta_table
        row = self._x(f"SELECT value FROM {table} WHERE key = 'settings'").fetchone()
        if row is None:
            return {}
        settings = self._loads(row[0], f"{table}.settings")
        for key in ("rules", "time_control", "faults", "sandbox", "league"):
            if not isinstance(settings.get(key, {}), dict):
                raise LeagueError(
                    f"{self.location}: not a league database ({table}.settings: {key} is no table)"
                )
        if not isinstance(settings.get("seed", 1), int):
            raise LeagueError(
                f"{self.location}: not a league database ({table}.settings: seed is no integer)"
            )
        return settings

    # ------------------------------------------------------------------ versions

    def versions(self, name: str | None = None) -> list[Version]:
        q = (
            "SELECT id, name, version, author, language, folder, submitted_at, state, reason, "
            "gate FROM versions"
        )
        args: tuple[Any, ...] = ()
        if name is not None:
            q += " WHERE name = ?"
            args = (name,)
        rows = self._x(q + " ORDER BY id", args).fetchall()
        return [
            Version(
                int(r[0]),
                str(r[1]),
                str(r[2]),
                str(r[3]),
                str(r[4]),
                str(r[5]),
                float(r[6]),
                str(r[7]),
                str(r[8]),
                self._loads(r[9], f"versions.gate of {r[1]}@{r[2]}"),
            )
            for r in rows
        ]

    def owner(self, name: str) -> str | None:
        """The author who first submitted a bot of this name (it is theirs from then on)."""
        row = self._x(
            "SELECT author FROM versions WHERE name = ? ORDER BY id LIMIT 1", (name,)
        ).fetchone()
        if row is None:
            row = self._x("SELECT author FROM tokens WHERE name = ?", (name,)).fetchone()
        return str(row[0]) if row else None

    def record(
        self,
        *,
        name: str,
        version: str,
        author: str,
        language: str,
        folder: str,
        manifest: dict[str, Any],
        state: str,
        reason: str = "",
        gate: dict[str, Any] | None = None,
    ) -> list[str]:
        """Record a judged submission in one transaction; an ``active`` one retires the bot's
        active versions before it. Returns the keys it retired."""
        now = time.time()
        retired: list[str] = []
        with self._tx():
            # checked again inside the write lock: a submission judged at the same time on
            # another machine may have taken the name or the version since submit() checked
            first = self._x(
                "SELECT author FROM versions WHERE name = ? ORDER BY id LIMIT 1", (name,)
            ).fetchone()
            if first is not None and str(first[0]) != author:
                raise LeagueError(
                    f"{name}: the name belongs to another author ({first[0]}); choose another name"
                )
            if self._x(
                "SELECT 1 FROM versions WHERE name = ? AND version = ?", (name, version)
            ).fetchone():
                raise LeagueError(f"{name}@{version}: this version was submitted already")
            old: list[tuple[int, str]] = []
            if state == "active":
                old = self._x(
                    "SELECT id, version FROM versions WHERE name = ? AND state = 'active'",
                    (name,),
                ).fetchall()
                for vid, ver in old:
                    self._x(
                        "UPDATE versions SET state = 'retired', reason = ? WHERE id = ?",
                        (f"replaced by {name}@{version}", vid),
                    )
                    retired.append(f"{name}@{ver}")
            row = self._x(
                "INSERT INTO versions (name, version, author, language, folder, manifest, "
                "submitted_at, state, reason, gate) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
                "RETURNING id",
                (
                    name,
                    version,
                    author,
                    language,
                    folder,
                    json.dumps(manifest),
                    now,
                    state,
                    reason,
                    json.dumps(gate or {}),
                ),
            ).fetchone()
            for vid, _ in old:  # the verdict starts undecided; refits of league run decide it
                self._x(
                    "INSERT INTO replacements (old_id, new_id, retired_at, verdict) "
                    "VALUES (?, ?, ?, 'undecided yet')",
                    (vid, int(row[0]), now),
                )
        return retired

    def manifest(self, version_id: int) -> dict[str, Any]:
        row = self._x("SELECT manifest FROM versions WHERE id = ?", (version_id,)).fetchone()
        return self._loads(row[0], f"versions.manifest of version {version_id}") if row else {}

    def give_up(self, version_id: int, why: str) -> None:
        """Retire a version ``league run`` gave up on (it crashed too often or never
        connected): it is not scheduled again; its hands stay."""
        with self._tx():
            self._x(
                "UPDATE versions SET state = 'retired', reason = ? WHERE id = ? AND state = "
                "'active'",
                (f"given up: {why}"[:2000], version_id),
            )

    def retire(self, name: str, why: str) -> list[str]:
        """Retire the active version of bot ``name`` by the organiser's hand (``league
        retire``), in one transaction: it is not scheduled again; its hands and history stay.
        Returns the keys it retired (none: no active version)."""
        with self._tx():
            rows = self._x(
                "SELECT version FROM versions WHERE name = ? AND state = 'active'", (name,)
            ).fetchall()
            self._x(
                "UPDATE versions SET state = 'retired', reason = ? WHERE name = ? AND state = "
                "'active'",
                (f"retired by the organiser: {why}"[:2000], name),
            )
        return [f"{name}@{r[0]}" for r in rows]

    # ------------------------------------------------------------------ ratings over time

    def add_refit(
        self, hands: int, rows: list[tuple[int, float, float, float, int]], note: str = ""
    ) -> int:
        """One refit's ratings, ``(version id, rating, low, high, hands)`` each, in one
        transaction. Returns the refit's number."""
        with self._tx():
            row = self._x(
                "INSERT INTO refits (at, hands, note) VALUES (?, ?, ?) RETURNING id",
                (time.time(), hands, note),
            ).fetchone()
            rid = int(row[0])
            self._xmany(
                "INSERT INTO history VALUES (?, ?, ?, ?, ?, ?)",
                [(rid, vid, r, lo, hi, n) for vid, r, lo, hi, n in rows],
            )
        return rid

    def refits(self) -> list[tuple[int, float, int, str]]:
        """``(refit, at, hands, note)``, oldest first."""
        return [
            (int(a), float(b), int(c), str(d))
            for a, b, c, d in self._x("SELECT id, at, hands, note FROM refits ORDER BY id")
        ]

    def history(self) -> list[tuple[int, int, float, float, float, int]]:
        """``(refit, version id, rating, low, high, hands)``, by refit then version."""
        return [
            (int(a), int(b), float(c), float(d), float(e), int(f))
            for a, b, c, d, e, f in self._x(
                "SELECT refit, version_id, rating, low, high, hands FROM history "
                "ORDER BY refit, version_id"
            )
        ]

    def replacements(self) -> list[tuple[int, int, float, str, dict[str, Any]]]:
        """``(old id, new id, retired at, verdict, test state)`` of every replacement."""
        return [
            (int(a), int(b), float(c), str(d), self._loads(e, f"replacements.test of {a}"))
            for a, b, c, d, e in self._x(
                "SELECT old_id, new_id, retired_at, verdict, test FROM replacements ORDER BY old_id"
            )
        ]

    def set_verdict(self, old_id: int, verdict: str, test: dict[str, Any]) -> None:
        with self._tx():
            self._x(
                "UPDATE replacements SET verdict = ?, test = ? WHERE old_id = ?",
                (verdict, json.dumps(test), old_id),
            )

    # ------------------------------------------------------------------ tokens

    def add_token(self, name: str, author: str, token: str) -> None:
        digest = hashlib.sha256(token.encode()).hexdigest()
        with self._tx():
            self._x("INSERT INTO tokens VALUES (?, ?, ?, ?)", (name, author, digest, time.time()))

    def tokens(self) -> list[tuple[str, str, str]]:
        """``(name, author, token SHA-256)`` of every remote bot's token, by name."""
        return [
            (str(n), str(a), str(d))
            for n, a, d in self._x("SELECT name, author, token_sha256 FROM tokens ORDER BY name")
        ]

    def revoke_token(self, name: str) -> list[str]:
        """Forget a remote bot's token and retire its active version ("token revoked"), in one
        transaction; its hands and history stay. Returns the keys it retired."""
        with self._tx():
            cur = self._x("DELETE FROM tokens WHERE name = ?", (name,))
            if cur.rowcount == 0:
                raise LeagueError(
                    f"{name}: no token of that name; `uno-arena league status` lists the tokens"
                )
            rows = self._x(
                "SELECT id, version FROM versions WHERE name = ? AND language = ? AND state = "
                "'active'",
                (name, REMOTE),
            ).fetchall()
            self._x(
                "UPDATE versions SET state = 'retired', reason = 'token revoked' WHERE name = ? "
                "AND language = ? AND state = 'active'",
                (name, REMOTE),
            )
        return [f"{name}@{v}" for _, v in rows]

    def token_names(self) -> list[tuple[str, str]]:
        return [
            (str(n), str(a)) for n, a in self._x("SELECT name, author FROM tokens ORDER BY name")
        ]
