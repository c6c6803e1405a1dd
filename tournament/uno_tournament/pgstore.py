"""The tournament's record in PostgreSQL: one database shared by the shards of a run.

``uno-arena tournament run CONFIG --shard I/N --store postgresql://USER:PASSWORD@HOST/DB``
plays shard I of N and writes each finished hand here, exactly as the SQLite store does: one
transaction per hand (hand, seats, compressed replay, content hash), keyed by the hand id with
``INSERT ... ON CONFLICT (hand_id) DO NOTHING``, so a shard that is killed and started again (a
Kubernetes Indexed Job retrying its index) finishes its share with no hand lost and none stored
twice, and two processes that happen to play the same hand store it once.

The tables are the SQLite store's (schema 2, see :mod:`uno_tournament.store`) in PostgreSQL
types, plus ``hands.seq``, an identity column that lets a watcher read the hands stored since
its last look (:meth:`ResultStore.new_hands`). Hand ids are compared in the "C" collation, so
the database orders them as Python and SQLite do. One database (or one schema, with
``?options=-csearch_path%3Dname`` in the URL) holds one tournament; the runner refuses to mix
another tournament, seed or configuration into it (:mod:`uno_tournament.sharding`).

Errors are one line that names the store without its password: a malformed URL, a server that
cannot be reached, a wrong password, a missing database, a database that holds no tournament.
psycopg 3 is an optional dependency: ``pip install 'uno-arena[postgres]'``.
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import urllib.parse
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from .store import ADD_LATE, SCHEMA_VERSION, ResultStore, ShardStatus, StoreError

if TYPE_CHECKING:
    import psycopg

SCHEMES = ("postgresql://", "postgres://")
CONNECT_TIMEOUT_S = 10

_PG_SCHEMA = """
CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT COLLATE "C" PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS hands (
    hand_id TEXT COLLATE "C" PRIMARY KEY,
    table_no INTEGER NOT NULL,
    block INTEGER NOT NULL,
    deal INTEGER NOT NULL,
    rotation INTEGER NOT NULL,
    deal_id TEXT COLLATE "C" NOT NULL,
    match_seed BIGINT NOT NULL,
    hand_seed BIGINT NOT NULL,
    dealer INTEGER NOT NULL,
    match_id TEXT NOT NULL,
    winner_seat INTEGER NOT NULL,
    moves INTEGER NOT NULL,
    duration_s DOUBLE PRECISION NOT NULL,
    finished_at DOUBLE PRECISION NOT NULL,
    content_hash TEXT NOT NULL,
    seq BIGINT GENERATED ALWAYS AS IDENTITY UNIQUE
);
CREATE TABLE IF NOT EXISTS seats (
    hand_id TEXT COLLATE "C" NOT NULL REFERENCES hands(hand_id),
    seat INTEGER NOT NULL,
    bot TEXT COLLATE "C" NOT NULL,
    place INTEGER NOT NULL,
    points_left INTEGER NOT NULL,
    points_won INTEGER NOT NULL,
    timeouts INTEGER NOT NULL,
    strikes INTEGER NOT NULL,
    illegal INTEGER NOT NULL,
    taken_over INTEGER NOT NULL,
    takeover_cause TEXT NOT NULL,
    decisions INTEGER NOT NULL,
    response_ms BYTEA NOT NULL,
    late INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (hand_id, seat)
);
CREATE INDEX IF NOT EXISTS seats_bot ON seats(bot);
CREATE TABLE IF NOT EXISTS replays (
    hand_id TEXT COLLATE "C" PRIMARY KEY REFERENCES hands(hand_id),
    data BYTEA NOT NULL
);
CREATE TABLE IF NOT EXISTS incidents (
    id BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    at DOUBLE PRECISION NOT NULL,
    bot TEXT NOT NULL,
    kind TEXT NOT NULL,
    detail TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS shards (
    shard TEXT COLLATE "C" PRIMARY KEY,
    addr TEXT NOT NULL,
    host TEXT NOT NULL,
    pid INTEGER NOT NULL,
    state TEXT NOT NULL,
    planned INTEGER NOT NULL,
    done INTEGER NOT NULL,
    started_at DOUBLE PRECISION NOT NULL,
    heartbeat_at DOUBLE PRECISION NOT NULL
)
"""

_LOCK_KEY = 0x554E4F41  # "UNOA": serializes schema creation among shards starting together


def is_url(text: str) -> bool:
    """Whether a ``--store`` value names a PostgreSQL database (else it is a folder)."""
    return text.startswith(SCHEMES)


def redact(url: str) -> str:
    """The URL without its password (for messages and logs)."""
    try:
        parts = urllib.parse.urlsplit(url)
        if parts.password is None:
            return url
    except ValueError:
        return url.rsplit("@", maxsplit=1)[-1]
    user = parts.username or ""
    host = parts.netloc.rsplit("@", maxsplit=1)[-1]
    netloc = f"{user}:***@{host}"
    return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, parts.query, ""))


def _psycopg() -> Any:
    try:
        import psycopg
    except ImportError as exc:
        raise StoreError(
            "a PostgreSQL store needs psycopg 3: pip install 'uno-arena[postgres]'"
        ) from exc
    return psycopg


def explain(exc: BaseException, where: str) -> str:
    """One line for a failed connection or query."""
    text = " ".join(str(exc).split())
    low = text.lower()
    if "password authentication failed" in low:
        user = re.search(r'for user "([^"]*)"', text)
        who = f" for user {user.group(1)}" if user else ""
        return f"{where}: PostgreSQL refused the password{who}; check the URL's user and password"
    if "no password supplied" in low:
        return f"{where}: PostgreSQL asks for a password; put it in the URL (USER:PASSWORD@HOST)"
    m = re.search(r'database "([^"]*)" does not exist', text)
    if m:
        return (
            f"{where}: database {m.group(1)} does not exist on that server; create it "
            f"(createdb {m.group(1)}) or name another in the URL"
        )
    if "connection refused" in low:
        return (
            f"{where}: cannot reach PostgreSQL (connection refused); is the server running and "
            "listening on that host and port?"
        )
    if "timeout" in low or "timed out" in low:
        return f"{where}: cannot reach PostgreSQL (no answer within {CONNECT_TIMEOUT_S} s)"
    if "could not translate host name" in low or "name or service not known" in low:
        return f"{where}: cannot resolve the PostgreSQL host name; check the URL"
    if "no such file or directory" in low and "socket" in low:
        return f"{where}: no PostgreSQL server on that Unix socket; is it running?"
    return f"{where}: PostgreSQL error: {text}"


def pyformat(sql: str, cache: dict[str, str]) -> str:
    """The SQL the stores write for SQLite (``?`` placeholders) as psycopg takes it (``%s``),
    memoised in ``cache``."""
    q = cache.get(sql)
    if q is None:
        q = cache[sql] = sql.replace("?", "%s")
    return q


class PgStore(ResultStore):
    """A tournament's tables in a PostgreSQL database (see the module docstring)."""

    seq_col = "seq"

    def __init__(self, url: str, conn: psycopg.Connection[Any]) -> None:
        super().__init__(redact(url))
        self.url = url
        self.conn = conn
        self._sql: dict[str, str] = {}
        self._held: set[str] = set()
        """The shards whose advisory lock this connection holds (:meth:`hold_shard`)."""

    # ------------------------------------------------------------------ one process a shard

    def hold_shard(self, shard: str) -> None:
        """Take the session advisory lock of (this tournament, ``shard``) for the life of this
        connection, or refuse in one line while another process holds it. Two processes that
        played one ``--shard I/N`` at once played the same hands, overwrote each other's shards
        row and lost the run's ``stopped:`` line. PostgreSQL drops the lock when the holder's
        session ends, however it ends (a kill -9, a lost pod), so a restart is not refused by a
        dead process."""
        if shard in self._held:
            return
        tid = str(self.meta().get("tournament_id", ""))
        raw = hashlib.sha256(f"uno-arena shard\0{tid}\0{shard}".encode()).digest()[:8]
        key = int.from_bytes(raw, "big", signed=True)
        with self.lock:
            row = self._execute("SELECT pg_try_advisory_lock(?)", (key,)).fetchone()
        if row and row[0]:
            self._held.add(shard)
            return
        holder = next((s for s in self.shards() if s.shard == shard), None)
        who = f"process {holder.pid} on {holder.host}" if holder is not None else "another process"
        raise StoreError(
            f"shard {shard} of tournament {tid or '?'} is being played by {who} (store "
            f"{self.location}); wait for it to finish or stop it, then run the same command again"
        )

    def set_shard(self, status: ShardStatus) -> None:
        """A shard's row, written only by the process that holds the shard (:meth:`hold_shard`:
        its first write takes the lock, before any hand of the shard is played)."""
        self.hold_shard(status.shard)
        super().set_shard(status)

    # ------------------------------------------------------------------ dialect

    def _q(self, sql: str) -> str:
        return pyformat(sql, self._sql)

    def _execute(self, sql: str, params: Sequence[Any] = ()) -> Any:
        try:
            return self.conn.execute(self._q(sql), params)
        except _psycopg().OperationalError as exc:
            raise StoreError(explain(exc, self.location)) from exc

    def _executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> None:
        try:
            with self.conn.cursor() as cur:
                cur.executemany(self._q(sql), list(rows))
        except _psycopg().OperationalError as exc:
            raise StoreError(explain(exc, self.location)) from exc

    def _transaction(self) -> contextlib.AbstractContextManager[Any]:
        return self.conn.transaction()

    def close(self) -> None:
        with self.lock, contextlib.suppress(Exception):
            self.conn.close()

    # ------------------------------------------------------------------ open

    @classmethod
    def connect(cls, url: str, *, create: bool = False) -> PgStore:
        """Open the store at ``url``; ``create`` makes the tables if the database has none
        (shards that start together take turns under an advisory lock). Without ``create`` a
        database that holds no tournament is an error."""
        pg = _psycopg()
        where = f"store {redact(url)}"
        if not is_url(url):
            raise StoreError(f"{where}: a PostgreSQL URL starts with postgresql://")
        try:
            pg.conninfo.conninfo_to_dict(url)
        except pg.ProgrammingError as exc:
            raise StoreError(
                f"{where}: not a valid PostgreSQL URL ({' '.join(str(exc).split())})"
            ) from exc
        try:
            conn = pg.connect(
                url,
                autocommit=True,
                connect_timeout=CONNECT_TIMEOUT_S,
                application_name="uno-arena",
            )
        except pg.Error as exc:
            raise StoreError(explain(exc, where)) from exc
        store = cls(url, conn)
        try:
            store._prepare(create)
        except pg.Error as exc:
            store.close()
            raise StoreError(explain(exc, where)) from exc
        except StoreError:
            store.close()
            raise
        return store

    def _prepare(self, create: bool) -> None:
        where = f"store {self.location}"
        exists = self.conn.execute(
            "SELECT to_regclass('meta') IS NOT NULL AND to_regclass('hands') IS NOT NULL"
        ).fetchone()
        if not (exists and exists[0]):
            if not create:
                raise StoreError(
                    f"{where}: no tournament in this database (start one with "
                    "`uno-arena tournament run CONFIG --store URL`)"
                )
            with self.conn.transaction():
                self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
                for stmt in _PG_SCHEMA.split(";"):
                    if stmt.strip():
                        self.conn.execute(stmt)
                if self.conn.execute("SELECT COUNT(*) FROM schema_version").fetchone() == (0,):
                    self.conn.execute("INSERT INTO schema_version VALUES (%s)", (SCHEMA_VERSION,))
        row = self.conn.execute("SELECT version FROM schema_version").fetchone()
        version = row[0] if row else None
        if version != SCHEMA_VERSION:
            raise StoreError(
                f"{where}: schema version {version if version is not None else '?'}, this "
                f"runner reads {SCHEMA_VERSION}"
            )
        if not self._has_late():  # a store written before seats.late: add it (rows get 0)
            try:
                with self.conn.transaction():
                    self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
                    if not self._has_late():
                        self.conn.execute(ADD_LATE)
            except _psycopg().errors.InsufficientPrivilege:
                self.late_sql = "0"  # a reader without the right to alter: read zeros

    def _has_late(self) -> bool:
        row = self.conn.execute(
            "SELECT COUNT(*) FROM information_schema.columns WHERE table_schema = "
            "current_schema() AND table_name = 'seats' AND column_name = 'late'"
        ).fetchone()
        return bool(row and row[0])
