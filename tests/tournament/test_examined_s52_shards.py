"""Examined in session 52: a shard with another bot program under the same name joined a shared
store and was rated as the same bot; two processes played the same --shard I/N at once."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uno_tournament import bot_programs
from uno_tournament.config import BotSpec, TournamentConfig
from uno_tournament.pgstore import PgStore
from uno_tournament.sharding import ShardError, ShardSpec, join_store
from uno_tournament.store import ShardStatus, StoreError


def _config(folder: Path, randomness: str = "0.75", env: str = "1") -> TournamentConfig:
    bots = [
        BotSpec(
            "a",
            command=("{python}", str(folder / "bot.py"), "--randomness", randomness),
            cwd=str(folder),
            env={"LEVEL": env, "DATA": str(folder / "data")},
        ),
        *(BotSpec(n, command=("{python}", "-m", "uno_bot.x", "--name", "{name}")) for n in "bcd"),
    ]
    return TournamentConfig(name="fp", seed=3, bots=tuple(bots))


def _folder(root: Path, name: str, script: str = "print('bot')\n") -> Path:
    f = root / name
    (f / "data").mkdir(parents=True)
    (f / "bot.py").write_text(script)
    return f


def test_the_same_bot_from_another_folder_joins_another_program_is_refused(
    pg_url: str, tmp_path: Path
) -> None:
    here = _folder(tmp_path, "machine-1")
    there = _folder(tmp_path, "pod/elsewhere")  # the same script under another path
    edited = _folder(tmp_path, "edited", "print('a better bot')\n")
    store = PgStore.connect(pg_url, create=True)
    try:
        tid = join_store(store, _config(here), shards=2)
        assert join_store(store, _config(there), shards=2) == tid
        with pytest.raises(ShardError) as exc:
            join_store(store, _config(there, randomness="0.0"), shards=2)
        msg = str(exc.value)
        assert "\n" not in msg
        assert "bot a's command argument 3 is '0.75', yours '0.0'" in msg
        with pytest.raises(ShardError, match="bot a's command argument 1 is 'file:sha256:"):
            join_store(store, _config(edited), shards=2)
        with pytest.raises(ShardError, match="bot a's env LEVEL is '1', yours '2'"):
            join_store(store, _config(here, env="2"), shards=2)
    finally:
        store.close()


def test_a_store_recorded_before_the_programs_resumes_and_records_them(
    pg_url: str, tmp_path: Path
) -> None:
    here = _folder(tmp_path, "m")
    store = PgStore.connect(pg_url, create=True)
    try:
        tid = join_store(store, _config(here), shards=2)
        store._execute("DELETE FROM meta WHERE key = ?", (bot_programs.META_KEY,))  # an old run
        assert join_store(store, _config(here, randomness="0.5"), shards=2) == tid
        assert (
            json.loads(
                store._execute(
                    "SELECT value FROM meta WHERE key = ?", (bot_programs.META_KEY,)
                ).fetchone()[0]
            )["a"]["command"][3]
            == "0.5"
        )
        with pytest.raises(ShardError, match=r"argument 3 is '0\.5', yours '0\.75'"):
            join_store(store, _config(here), shards=2)
    finally:
        store.close()


def test_fingerprints_drop_paths_keep_placeholders(tmp_path: Path) -> None:
    f = _folder(tmp_path, "x")
    fp = bot_programs.fingerprint(
        BotSpec(
            "a",
            command=("{python}", "bot.py", "--trace", str(f / "later.jsonl"), f"--data={f}/data"),
            cwd=str(f),
        )
    )
    assert fp["command"][0] == "{python}"
    assert fp["command"][1].startswith("file:sha256:")
    assert fp["command"][2:] == ["--trace", "path:later.jsonl", "--data=path:data"]
    assert bot_programs.fingerprint(BotSpec("e", token="t")) == {"external": True}


def test_a_second_process_for_the_same_shard_is_refused_until_the_first_ends(
    pg_url: str, tmp_path: Path
) -> None:
    here = _folder(tmp_path, "m")
    first = PgStore.connect(pg_url, create=True)
    second = PgStore.connect(pg_url)
    try:
        join_store(first, _config(here), shard=ShardSpec(0, 2))
        st = ShardStatus("0/2", "10.0.0.1:1", "pod-0", 4242, "playing", 10, 1, 1.0, 2.0)
        first.set_shard(st)
        join_store(second, _config(here), shard=ShardSpec(1, 2))  # another shard: fine
        with pytest.raises(StoreError) as exc:
            join_store(second, _config(here), shard=ShardSpec(0, 2))
        msg = str(exc.value)
        assert "\n" not in msg and "shard 0/2 of tournament fp-" in msg
        assert "being played by process 4242 on pod-0" in msg
        # the runner's own first write takes the lock too: the row is not overwritten
        with pytest.raises(StoreError, match="being played by process 4242"):
            second.set_shard(ShardStatus("0/2", "x", "pod-9", 9, "starting", 10, 0, 3.0, 3.0))
        assert [s.pid for s in first.shards() if s.shard == "0/2"] == [4242]
        first.close()  # the holder ends (as a kill -9 does): the next one takes the shard
        join_store(second, _config(here), shard=ShardSpec(0, 2))
        second.set_shard(ShardStatus("0/2", "x", "pod-9", 9, "starting", 10, 0, 3.0, 3.0))
    finally:
        first.close()
        second.close()
