"""The SQLite store: one transaction per hand, idempotent hand ids, schema version."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from uno_tournament.store import DB_NAME, HandRecord, SeatRecord, Store, StoreError


def _hand(hand_id: str, winner: int = 0) -> HandRecord:
    bots = ["a", "b", "c", "d"]
    return HandRecord(
        hand_id=hand_id,
        table=0,
        block=0,
        deal=0,
        rotation=0,
        deal_id="t0/b0/d0",
        match_seed=2**64 - 5,
        hand_seed=12345,
        dealer=0,
        match_id="m1",
        winner_seat=winner,
        moves=40,
        duration_s=0.5,
        seats=[
            SeatRecord(
                s,
                b,
                1 if s == winner else 2 + s,
                0 if s == winner else 10 * s,
                0,
                response_ms=[1, 2],
            )
            for s, b in enumerate(bots)
        ],
        replay={"hand_id": hand_id},
    )


def test_a_hand_is_stored_once_per_id(tmp_path: Path) -> None:
    store = Store.create(tmp_path, {"tournament_id": "x"})
    assert store.add_hand(_hand("x/t0/b0/d0/r0"))
    assert not store.add_hand(_hand("x/t0/b0/d0/r0", winner=2))  # replayed after a crash
    assert store.add_hand(_hand("x/t0/b0/d0/r1"))
    assert store.count() == 2
    hands = list(store.hands())
    assert [h.hand_id for h in hands] == ["x/t0/b0/d0/r0", "x/t0/b0/d0/r1"]
    assert hands[0].winner_seat == 0 and len(hands[0].seats) == 4
    assert hands[0].match_seed == 2**64 - 5  # uint64 seeds survive SQLite's int64
    assert hands[0].seats[1].response_ms == [1, 2]
    rows = store.conn.execute("SELECT COUNT(*) FROM seats").fetchone()[0]
    assert rows == 8
    store.close()


def test_reopen_keeps_meta_and_hands_and_checks_the_schema(tmp_path: Path) -> None:
    store = Store.create(tmp_path, {"tournament_id": "x", "config": {"a": 1}})
    store.add_hand(_hand("x/1"))
    store.add_incident("a", "crash", "exited with status 1")
    store.close()
    with pytest.raises(StoreError, match="already holds a tournament"):
        Store.create(tmp_path, {})
    again = Store.open(tmp_path)
    assert again.meta()["config"] == {"a": 1}
    assert again.done_ids() == {"x/1"}
    assert again.incidents(["crash"])[0][1:] == ("a", "crash", "exited with status 1")
    assert again.conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    again.close()
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.execute("UPDATE schema_version SET version = 99")
    conn.commit()
    conn.close()
    with pytest.raises(StoreError, match="schema version 99"):
        Store.open(tmp_path)


def test_a_current_file_whose_version_was_edited_to_1_is_called_edited(tmp_path: Path) -> None:
    """An examination set schema_version to 1 in a current file: verify (read-only) told the
    user that `report` would upgrade it, and report then failed inside the upgrade (no column
    `replay`). The tables, not the row, say which schema a file has."""
    store = Store.create(tmp_path, {"tournament_id": "x", "config": {"a": 1}})
    store.add_hand(_hand("x/1"))
    store.close()
    conn = sqlite3.connect(tmp_path / DB_NAME)
    conn.execute("UPDATE schema_version SET version = 1")
    conn.commit()
    conn.close()
    for readonly in (True, False):
        with pytest.raises(StoreError) as err:
            Store.open(tmp_path, readonly=readonly)
        text = str(err.value)
        assert "says 1, but its tables are schema 2's: the file was edited" in text, text
        assert "upgrade" in text and "report" not in text, text
    conn = sqlite3.connect(tmp_path / DB_NAME)
    assert conn.execute("SELECT version FROM schema_version").fetchone() == (1,)  # untouched
    conn.close()


def test_open_without_a_tournament_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(StoreError, match="no tournament here"):
        Store.open(tmp_path)
