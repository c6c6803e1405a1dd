"""The league's hand store and the one ``league run`` that writes it.

* A SQLite league keeps its hands in ``DIR/play/tournament.sqlite`` (the tournament store,
  :class:`~uno_tournament.store.Store`), made whole in a folder of its own and renamed into
  place the first time; ``league run`` holds ``DIR/play/tournament.lock`` (an ``flock``).
* A PostgreSQL league (``--store URL``) keeps them in the same database as its records, in the
  tournament's PostgreSQL tables (:class:`~uno_tournament.pgstore.PgStore`: one transaction per
  hand, keyed by the hand id, ``ON CONFLICT DO NOTHING``); ``league run`` holds a session-level
  advisory lock of that database (:meth:`.pgleague.PgLeagueStore.try_run_lock`), which
  PostgreSQL drops when the run's connection ends, however it ends.

Either way a hand is stored in one transaction, and hands per version, the next block and the
ratings are read back from the store, so a kill -9 loses no stored hand. The refit process opens
the store itself (:func:`fit_store`): the folder, or the URL.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..config import BotSpec, TournamentConfig
from ..pgstore import PgStore, is_url, redact
from ..store import DB_NAME as HANDS_DB
from ..store import ResultStore, RunLock, Store, StoreError
from .pgleague import PgLeagueStore
from .ratings import LeagueFit, fit_league
from .store import LeagueError, LeagueStore

__all__ = ["LEAGUE_ID", "PLAY_DIR", "fit_store", "league_config", "open_hands"]

PLAY_DIR = "play"
LEAGUE_ID = "league"


def league_config(settings: dict[str, Any], concurrency: int) -> TournamentConfig:
    """The tournament settings a league's hands are played with (the bots are the league's,
    launched by the runner; the four here only make a valid config)."""
    slots = [
        dataclasses.asdict(BotSpec(name=f"league-slot-{i}", token=f"unused-slot-token-{i}"))
        for i in range(4)
    ]
    return TournamentConfig.from_dict(
        {
            "name": LEAGUE_ID,
            "bots": slots,
            "seed": int(settings.get("seed", 1)),
            "blocks": 1,
            "concurrency": concurrency,
            "rules": settings.get("rules", {}),
            "time_control": settings.get("time_control", {}),
            "faults": settings.get("faults", {}),
            "sandbox": settings.get("sandbox", {}),
        }
    )


def _meta(settings: dict[str, Any]) -> dict[str, Any]:
    return {
        "tournament_id": LEAGUE_ID,
        "config": league_config(settings, 8).to_dict(),
        "created_at": time.time(),
    }


def fit_store(location: str, policy: str) -> LeagueFit:
    """In the refit process: one fit over the hands stored at ``location`` (the play folder,
    or the PostgreSQL URL), on a connection of its own."""
    store: ResultStore
    if is_url(location):
        store = PgStore.connect(location)
    else:
        store = Store.open(Path(location), readonly=True)
    try:
        return fit_league(store, policy)
    finally:
        store.close()


def _sqlite_hands(play: Path, settings: dict[str, Any]) -> Store:
    """The folder's hand store, made whole in a folder of its own and renamed into place the
    first time (a kill during its creation leaves no half-made store)."""
    if not (play / HANDS_DB).is_file():
        new = play / ".new-store"
        shutil.rmtree(new, ignore_errors=True)
        Store.create(new, _meta(settings)).close()
        os.replace(new / HANDS_DB, play / HANDS_DB)
        shutil.rmtree(new, ignore_errors=True)
    return Store.open(play)


def _pg_hands(url: str, settings: dict[str, Any]) -> PgStore:
    """The league's hand tables in its PostgreSQL database (made by the first run)."""
    store = PgStore.connect(url, create=True)
    try:
        meta = store.init_meta(_meta(settings))  # the first writer's meta stays
        if meta.get("tournament_id") != LEAGUE_ID:
            raise StoreError(
                f"store {redact(url)} holds tournament {str(meta.get('tournament_id'))[:60]}'s "
                "hands, not a league's; give the league a database of its own"
            )
    except BaseException:
        store.close()
        raise
    return store


def open_hands(
    league_dir: Path, league: LeagueStore, url: str | None, shard: int = 0
) -> tuple[ResultStore, Callable[[], None]]:
    """Take the league's run lock (of ``shard``, in PostgreSQL) and open its hand store;
    returns the store and what releases the lock. A second ``league run`` of the league (or
    of the shard) is one line (:class:`LeagueError`)."""
    play = league_dir / PLAY_DIR
    if url is None:
        try:
            lock = RunLock.acquire(play)
        except StoreError:
            raise LeagueError(
                f"{league_dir}: another `league run` plays this league; stop it (Ctrl-C) first"
            ) from None
        try:
            return _sqlite_hands(play, league.settings()), lock.release
        except StoreError as exc:
            lock.release()
            raise LeagueError(str(exc)) from None
        except BaseException:
            lock.release()
            raise
    if not isinstance(league, PgLeagueStore) or not league.try_run_lock(shard):
        which = f"shard {shard} of this league" if shard else "this league"
        raise LeagueError(
            f"{league.location}: another `league run` plays {which}; stop it (Ctrl-C) first"
        )
    play.mkdir(parents=True, exist_ok=True)  # replays and logs stay on this machine
    try:
        return _pg_hands(url, league.settings()), lambda: None  # the lock ends with `league`
    except StoreError as exc:
        raise LeagueError(str(exc)) from None
