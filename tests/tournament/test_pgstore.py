"""The PostgreSQL store against a real server: the SQLite store's writes and reads, concurrent
writers, one-line errors, and a store that refuses a second tournament."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from uno_tournament.config import BotSpec, TournamentConfig
from uno_tournament.pgstore import PgStore, redact
from uno_tournament.sharding import ShardError, join_store
from uno_tournament.store import ShardStatus, Store, StoreError

from .pg import PASSWORD, TempPostgres
from .test_store import _hand


def _ids(n: int) -> list[str]:
    # ids whose order differs between a locale collation and byte order ("t10" < "t9", "T" < "t")
    return [f"x/t{i}/b0/d0/r{i % 4}" for i in range(n)] + [f"x/T{i}/b0/d0/r0" for i in range(3)]


def test_writes_reads_and_columns_match_the_sqlite_store(pg_url: str, tmp_path: Path) -> None:
    pg = PgStore.connect(pg_url, create=True)
    lite = Store.create(tmp_path, {"tournament_id": "x"})
    try:
        assert pg.init_meta({"tournament_id": "x"}) == {"tournament_id": "x"}
        assert pg.init_meta({"tournament_id": "y"})["tournament_id"] == "x"  # first one wins
        for hid in _ids(12):
            for store in (pg, lite):
                assert store.add_hand(_hand(hid, winner=1))
                assert not store.add_hand(_hand(hid, winner=2))  # played again: stored once
        assert pg.count() == lite.count() == 15
        assert pg.done_ids() == lite.done_ids()
        assert pg.hashes() == lite.hashes()
        a, b = pg.columns(["a", "b", "c", "d"]), lite.columns(["a", "b", "c", "d"])
        assert a.hand_ids == b.hand_ids == sorted(a.hand_ids)  # byte order, as in Python
        for f in dataclasses.fields(a):
            va, vb = getattr(a, f.name), getattr(b, f.name)
            if isinstance(va, np.ndarray):
                assert np.array_equal(va, vb), f.name
            elif isinstance(va, dict):
                assert va.keys() == vb.keys() and all(np.array_equal(va[k], vb[k]) for k in va)
            else:
                assert va == vb, f.name
        assert [h.hand_id for h in pg.hand_rows()] == [h.hand_id for h in lite.hand_rows()]
        assert pg.replay("x/t3/b0/d0/r3") == {"hand_id": "x/t3/b0/d0/r3"}
        assert next(iter(pg.hand_rows())).match_seed == 2**64 - 5  # uint64 seeds survive
        pg.add_incident("a", "crash", "exited with status 3")
        assert [r[1:] for r in pg.incidents()] == [("a", "crash", "exited with status 3")]
        # a follower reads only what is new
        got, seq = pg.new_hands(0)
        assert len(got) == 15 and all(len(h.seats) == 4 for h in got)
        assert pg.add_hand(_hand("x/t99/b0/d0/r0"))
        more, seq2 = pg.new_hands(seq)
        assert [h.hand_id for h in more] == ["x/t99/b0/d0/r0"] and seq2 > seq
        st = ShardStatus("1/3", "10.0.0.7:50051", "pod-1", 7, "playing", 40, 3, 1.0, 2.0)
        pg.set_shard(st)
        pg.set_shard(dataclasses.replace(st, done=9, state="finished"))
        assert pg.shards() == [dataclasses.replace(st, done=9, state="finished")]
    finally:
        pg.close()
        lite.close()


def test_two_writers_of_the_same_hands_store_each_once(pg_url: str) -> None:
    """Two shard processes that play the same hands (a retried index beside its old pod): each
    hand is stored by exactly one of them."""
    PgStore.connect(pg_url, create=True).close()
    stores = [PgStore.connect(pg_url) for _ in range(2)]
    won: list[list[bool]] = [[], []]
    barrier = threading.Barrier(2)

    def write(k: int) -> None:
        barrier.wait()
        for hid in _ids(40):
            won[k].append(stores[k].add_hand(_hand(hid)))

    threads = [threading.Thread(target=write, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    try:
        assert [a + b for a, b in zip(won[0], won[1], strict=True)] == [1] * 43
        assert stores[0].count() == 43
        seats = stores[0]._execute("SELECT COUNT(*) FROM seats").fetchone()
        assert seats == (4 * 43,)
    finally:
        for s in stores:
            s.close()


def _config(
    seed: int = 7, bots: tuple[str, ...] = ("a", "b", "c", "d"), cmd: str = "/srv/arena/bot"
) -> TournamentConfig:
    return TournamentConfig(
        name="pg",
        seed=seed,
        bots=tuple(BotSpec(b, command=(cmd, b), cwd="/") for b in bots),
    )


def test_a_store_holds_one_tournament(pg_url: str) -> None:
    store = PgStore.connect(pg_url, create=True)
    try:
        tid = join_store(store, _config(), shards=3)
        # another machine's paths to the same program, another concurrency: the same run
        assert join_store(store, _config(cmd="/opt/bot"), shards=3) == tid
        with pytest.raises(ShardError, match="its seed is 7, yours 8"):
            join_store(store, _config(seed=8), shards=3)
        with pytest.raises(ShardError, match="its bots are a, b, c, d, yours a, b, c, e"):
            join_store(store, _config(bots=("a", "b", "c", "e")), shards=3)
        with pytest.raises(ShardError, match="played by 3 shards"):
            join_store(store, _config(), shards=4)
        assert join_store(store, _config(), shards=None) == tid  # one machine finishing it
    finally:
        store.close()


def test_store_errors_are_one_line_without_the_password(postgres: TempPostgres) -> None:
    db = postgres.new_database()
    try:
        cases = {
            postgres.url(db, password="wrong-one"): "refused the password for user uno",
            postgres.url(db, port=1): "cannot reach PostgreSQL (connection refused)",
            postgres.url("no_such_db"): "database no_such_db does not exist",
            postgres.url(db): "no tournament in this database",
            "postgresql://uno:secret@127.0.0.1:5432/db?nonsense=1": "not a valid PostgreSQL URL",
        }
        for url, want in cases.items():
            with pytest.raises(StoreError) as info:
                PgStore.connect(url)
            msg = str(info.value)
            assert want in msg and "\n" not in msg, msg
            assert PASSWORD not in msg and "wrong-one" not in msg and "secret" not in msg
            assert redact(url) in msg
        # the CLI: one line, exit 2
        res = subprocess.run(
            [
                sys.executable,
                "-m",
                "uno_server.cli",
                "tournament",
                "report",
                "--store",
                postgres.url(db, password="wrong-one"),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
        assert res.returncode == 2
        assert res.stderr.count("\n") == 1 and "refused the password" in res.stderr
        assert "wrong-one" not in res.stderr
    finally:
        postgres.drop_database(db)


def test_a_follower_sees_a_hand_committed_after_a_later_one(pg_url: str) -> None:
    """PostgreSQL hands out ``seq`` before commit, so a shard's hand can become visible after
    a hand with a higher ``seq`` that another shard committed first. The live leaderboards
    (a ``--shard`` runner's heartbeat and ``tournament watch``) must still count it, once."""
    from uno_tournament.store import FOLLOW_OVERLAP
    from uno_tournament.watch import Follower

    PgStore.connect(pg_url, create=True).close()
    slow, fast, reader = (PgStore.connect(pg_url) for _ in range(3))
    follower = Follower(reader, ["a", "b", "c", "d"], "count")
    try:
        with slow.lock, slow._transaction():
            assert slow._insert(_hand("x/t0/b0/d0/r0"))  # takes seq 1, not committed yet
            assert fast.add_hand(_hand("x/t1/b0/d0/r0", winner=2))  # seq 2, committed
            got, seq = reader.new_hands(0, overlap=FOLLOW_OVERLAP)
            assert [h.hand_id for h in got] == ["x/t1/b0/d0/r0"]
            assert follower.poll() == 1
        # what the runner's heartbeat reads next: the late commit, below the last seq seen
        late, _ = reader.new_hands(seq, overlap=FOLLOW_OVERLAP)
        assert "x/t0/b0/d0/r0" in {h.hand_id for h in late}
        assert follower.poll() == 1 and follower.poll() == 0
        assert follower.seen == {"x/t0/b0/d0/r0", "x/t1/b0/d0/r0"}
        assert len(follower.standings) == 2
    finally:
        for s in (slow, fast, reader):
            s.close()


def test_hands_stored_while_hand_rows_reads_never_come_without_seats(pg_url: str) -> None:
    """Each read of a PostgreSQL store sees its own snapshot, and shards keep writing while a
    report or a watcher reads: a hand stored between the read of the hands and the read of the
    seats must not appear as a hand with no seats (it did: an IndexError in the 3-pod test)."""
    pg = PgStore.connect(pg_url, create=True)
    try:
        pg.init_meta({"tournament_id": "x"})
        for i in range(0, 10, 2):
            assert pg.add_hand(_hand(f"x/t{i}/b0/d0/r0"))
        real = pg._execute
        writes = iter(range(1, 10, 2))  # ids between the stored ones, and one after them all

        def racing(sql: str, params: Any = ()) -> Any:
            res = real(sql, params)
            for i in writes:  # another shard commits right after the first read
                assert pg.add_hand(_hand(f"x/t{i}/b0/d0/r0"))
            return res

        pg._execute = racing  # type: ignore[method-assign]
        rows = list(pg.hand_rows())
        pg._execute = real  # type: ignore[method-assign]
        assert [h.hand_id for h in rows] == [f"x/t{i}/b0/d0/r0" for i in range(0, 10, 2)]
        assert all(len(h.seats) == 4 for h in rows), [len(h.seats) for h in rows]
        assert len(list(pg.hand_rows())) == 10
    finally:
        pg.close()
