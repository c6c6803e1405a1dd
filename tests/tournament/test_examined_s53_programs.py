"""Examined in session 53: ``resume`` of a tournament folder played a bot whose program changed
between the kill and the resume without a word (one rating built from two programs); a shard's
``[sandbox]`` limits were not part of the store's identity."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from uno_tournament import bot_programs, runner
from uno_tournament.cli import main
from uno_tournament.config import BotSpec, SandboxSpec, TournamentConfig
from uno_tournament.sharding import ShardError, identity_digest, join_store
from uno_tournament.store import DB_NAME, Store, StoreError


def _config(folder: Path, memory_mb: int = 1024) -> TournamentConfig:
    box = SandboxSpec(memory_mb=memory_mb)
    bots = [
        BotSpec("mine", command=("{python}", "mybot.py", "--name", "{name}"), cwd=str(folder)),
        *(
            BotSpec(n, command=("{python}", "-m", "uno_bot.x", "--name", "{name}"), sandbox=box)
            for n in ("b", "c", "d")
        ),
    ]
    return TournamentConfig(name="p53", seed=5, hands=24, bots=tuple(bots))


def _bot(folder: Path, text: str = 'RANDOMNESS = "1.0"\n') -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "mybot.py").write_text(text)
    return folder


def _stored_programs(out: Path) -> Any:
    with sqlite3.connect(out / DB_NAME) as conn:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (bot_programs.META_KEY,))
        got = row.fetchone()
    return None if got is None else json.loads(got[0])


def _start(out: Path, config: TournamentConfig, monkeypatch: pytest.MonkeyPatch) -> None:
    """``runner.start`` up to the first hand: the store it creates, no server or bot."""

    def no_play(r: runner.Runner, lock: Any = None) -> int:
        r.store.close()
        if lock is not None:
            lock.release()
        return 0

    monkeypatch.setattr(runner, "_run", no_play)
    assert runner.start(config, out) == 0


def _recorder(played: list[runner.Runner]) -> Any:
    """A ``runner._run`` that plays nothing and keeps the runner it was given."""

    def run(r: runner.Runner, lock: Any = None) -> int:
        played.append(r)
        r.log.close()
        r.store.close()
        if lock is not None:
            lock.release()
        return 0

    return run


def test_a_folder_run_records_its_programs_and_resume_refuses_an_edited_bot(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    bots, out = _bot(tmp_path / "bots"), tmp_path / "run"
    _start(out, _config(bots), monkeypatch)
    assert _stored_programs(out)["mine"]["command"][1].startswith("file:sha256:")
    (bots / "mybot.py").write_text('RANDOMNESS = "0.0"\n')  # edited after the kill
    played: list[runner.Runner] = []
    monkeypatch.setattr(runner, "_run", _recorder(played))
    assert main(["tournament", "resume", str(out)]) == 2
    err = capsys.readouterr().err
    assert not played  # refused before anything started
    assert err.count("\n") == 1 and "Traceback" not in err
    assert "bot mine's command argument 1 is 'file:sha256:" in err
    assert "when the run started, now 'file:sha256:" in err
    assert "the file 'mybot.py' has other content" in err
    assert main(["tournament", "resume", str(out), "--shards", "2"]) == 2
    assert "bot mine's command argument 1" in capsys.readouterr().err
    assert not played
    (bots / "mybot.py").write_text('RANDOMNESS = "1.0"\n')  # the program the run started with
    assert main(["tournament", "resume", str(out)]) == 0
    assert len(played) == 1


def test_a_folder_store_recorded_before_the_programs_resumes_and_records_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    bots, out = _bot(tmp_path / "bots"), tmp_path / "old"
    config = _config(bots)
    meta = {"tournament_id": "p53-old", "config": config.to_dict()}
    meta["identity"] = identity_digest(config)
    Store.create(out, meta).close()  # a run started before the programs were recorded
    played: list[runner.Runner] = []
    monkeypatch.setattr(runner, "_run", _recorder(played))
    assert runner.resume(out) == 0
    assert _stored_programs(out) == bot_programs.programs(config)
    store = Store.open(out)
    try:
        store.set_meta(bot_programs.META_KEY, _without_sandbox(config))  # an older record
        bot_programs.check_resume(store, config, out)
        assert store.meta()[bot_programs.META_KEY] == bot_programs.programs(config)
    finally:
        store.close()


def _without_sandbox(config: TournamentConfig) -> dict[str, Any]:
    """The programs as a store recorded them before the sandbox limits were part of them."""
    return {
        k: {kk: vv for kk, vv in v.items() if kk != "sandbox"}
        for k, v in bot_programs.programs(config).items()
    }


def test_other_sandbox_limits_are_another_bot(tmp_path: Path) -> None:
    bots = _bot(tmp_path / "bots")
    store = Store.create(tmp_path / "shared", {})
    try:
        tid = join_store(store, _config(bots), shards=2)
        assert join_store(store, _config(bots), shards=2) == tid
        with pytest.raises(ShardError) as exc:
            join_store(store, _config(bots, memory_mb=512), shards=2)
        msg = str(exc.value)
        assert "\n" not in msg
        assert "bot b's sandbox memory_mb is 1024, yours 512" in msg
        assert "[sandbox]" in msg
        # a store recorded before the limits were: joined, and the limits recorded
        store.set_meta(bot_programs.META_KEY, _without_sandbox(_config(bots)))
        assert join_store(store, _config(bots, memory_mb=512), shards=2) == tid
        with pytest.raises(ShardError, match="memory_mb is 512, yours 1024"):
            join_store(store, _config(bots), shards=2)
    finally:
        store.close()


def test_store_error_is_what_resume_raises(tmp_path: Path) -> None:
    bots = _bot(tmp_path / "bots")
    config = _config(bots)
    store = Store.create(tmp_path / "s", {bot_programs.META_KEY: bot_programs.programs(config)})
    try:
        _bot(bots, "edited\n")
        with pytest.raises(StoreError, match="bot mine's command argument 1"):
            bot_programs.check_resume(store, config, tmp_path / "s")
    finally:
        store.close()
