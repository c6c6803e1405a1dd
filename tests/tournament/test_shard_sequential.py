"""Shards of one store run one sequential test.

An examination started ``--shard 0/2`` with ``alpha = 0.05``, then ``--shard 1/2`` with
``alpha = 0.3, indifference_elo = 200`` on the same store: the second was accepted, its test
replaced the run's stored one, and both shards stopped "settled" on the looser test. A shard with
another ``--candidate`` was accepted the same way, and verify then found 134 problems. These
settings are not in the identity's digest (old runs would be refused), so join_store compares
them with the stored configuration's."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest

from uno_tournament.config import BotSpec, TournamentConfig
from uno_tournament.sharding import ShardError, join_store
from uno_tournament.store import Store


def _config(**kw: object) -> TournamentConfig:
    base = TournamentConfig(
        name="sq",
        seed=7,
        bots=tuple(BotSpec(b, command=("x", b), cwd="/") for b in ("a", "b", "c", "d")),
        until="settled",
        max_hands=768,
    )
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def _store(tmp_path: Path) -> Store:
    return Store.create(tmp_path / "run", {})


def test_a_shard_with_another_test_is_refused(tmp_path: Path) -> None:
    store = _store(tmp_path)
    try:
        tid = join_store(store, _config(), shards=2)
        assert join_store(store, _config(), shards=2) == tid
        with pytest.raises(ShardError, match=re.escape("its alpha is 0.05, yours 0.3")):
            join_store(store, _config(alpha=0.3), shards=2)
        with pytest.raises(
            ShardError, match=re.escape("its indifference_elo is 10.0, yours 200.0")
        ):
            join_store(store, _config(indifference_elo=200.0), shards=2)
        with pytest.raises(ShardError, match="its candidate is not set, yours 'c'"):
            join_store(store, _config(candidate="c", baseline="d"), shards=2)
        # the stored test is untouched by the refusals
        assert join_store(store, _config(), shards=2) == tid
        assert store.meta()["config"]["alpha"] == 0.05
    finally:
        store.close()


def test_a_new_version_shard_must_test_the_same_pair(tmp_path: Path) -> None:
    store = _store(tmp_path)
    try:
        mine = _config(until="", candidate="a", baseline="b")
        tid = join_store(store, mine, shards=2)
        assert join_store(store, mine, shards=2) == tid
        with pytest.raises(ShardError, match="its candidate is 'a', yours 'c'"):
            join_store(store, _config(until="", candidate="c", baseline="d"), shards=2)
        with pytest.raises(ShardError, match="its baseline is 'b', yours 'c'"):
            join_store(store, _config(until="", candidate="a", baseline="c"), shards=2)
        with pytest.raises(ShardError, match="its until is not set, yours 'settled'"):
            join_store(store, _config(candidate="a", baseline="b"), shards=2)
    finally:
        store.close()


def test_a_fixed_size_shard_joining_a_settled_run_is_told_which_kind(tmp_path: Path) -> None:
    store = _store(tmp_path)
    try:
        join_store(store, _config(), shards=2)
        fixed = _config(until="", max_hands=0, hands=768)
        with pytest.raises(ShardError) as err:
            join_store(store, fixed, shards=2)
        assert 'its run is until = "settled", yours a fixed size of hands = 768' in str(err.value)
    finally:
        store.close()


def test_resume_of_a_postgres_runs_folder_says_how_to_carry_on(tmp_path: Path) -> None:
    """A ``--store postgresql://`` run keeps only logs/ in its folder; resume said "no
    tournament here (tournament.sqlite is missing)" with no way forward (an examination)."""
    from tests.refusal import refused

    logs = tmp_path / "run" / "logs"
    logs.mkdir(parents=True)
    line = {"event": "run started", "store": "postgresql://uno:***@db:5432/t1", "shard": "0/2"}
    (logs / "tournament.log").write_text('{"event": "other"}\n' + json.dumps(line) + "\n")
    got = refused("tournament", "resume", str(tmp_path / "run"))
    assert "stored its results in PostgreSQL (postgresql://uno:***@db:5432/t1)" in got, got
    assert "--shard 0/2 --store URL" in got, got
    # a folder with no run at all keeps its message
    (tmp_path / "empty").mkdir()
    assert "no tournament here" in refused("tournament", "resume", str(tmp_path / "empty"))


def test_a_dying_servers_reason_shows_each_sentence_once(tmp_path: Path) -> None:
    """``league run --bind 8.8.8.8``: the server's refusal was shown twice in one line (as text,
    then again after its JSON log line) (an examination)."""
    from uno_tournament.shard import ServerProcess

    sp = object.__new__(ServerProcess)
    sp.log_path = tmp_path / "server.log"
    msg = "uno-arena: server.host: 8.8.8.8 is not an address of this machine"
    sp.log_path.write_text(f'{msg}\n{{"event": "server stopped"}}\n{msg}\n')
    why = sp._why("exited with status 2")
    assert why.count("8.8.8.8") == 1 and '"server stopped"' in why, why
