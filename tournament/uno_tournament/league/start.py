"""``league run``: the league's records and hand store opened, its run lock held, and the
runner that plays it: :class:`.run.LeagueRunner` for a league folder, or with ``--store URL``
:class:`.shards.ShardedLeagueRunner` (block plans in the database; ``--shard I/N``, else 0/1)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any, TextIO

from ..player import RunnerError
from ..sharding import ShardSpec
from .hands import open_hands
from .records import open_league
from .run import LeagueRunner
from .settings import league_sandbox
from .shards import ShardedLeagueRunner
from .store import LeagueError

__all__ = ["run_league"]


def run_league(
    league_dir: Path,
    *,
    store_url: str | None = None,
    shard: ShardSpec | None = None,
    hands: int | None = None,
    until_settled: bool = False,
    tables: int = 1,
    house: bool = True,
    concurrency: int = 8,
    stream: TextIO | None = None,
    metrics_port: int | None = None,
    metrics_host: str = "127.0.0.1",
    metrics_linger_s: float = 0.0,
    metrics_wait_s: float = 0.0,
    web_port: int | None = None,
    web_host: str = "127.0.0.1",
    server_host: str = "127.0.0.1",
    server_port: int = 0,
) -> int:
    """``league run``: open (or start) the league's hand store, hold its lock, play
    (``store_url``: the league and its hands are in that PostgreSQL database, played by the
    block plans of :mod:`.shards`, as ``shard`` I/N of it or as 0/1)."""
    league = open_league(league_dir, store_url)
    try:
        # a sandbox turned off without the organiser's `required = false` runs nothing (and
        # with it, the warning): before the hand store is made or the run's lock taken
        league_sandbox(league.settings(), league.location)
        part = shard or ShardSpec(0, 1)
        store, release = open_hands(league_dir, league, store_url, part.index)
        try:
            os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
            cls: Any = LeagueRunner
            extra: dict[str, Any] = {}
            if store_url is not None:  # block plans in the database, shard I/N or 0/1
                cls, extra = ShardedLeagueRunner, {"part": part}
            runner: LeagueRunner = cls(
                league_dir,
                league,
                store,
                store_url=store_url,
                hands=hands,
                until_settled=until_settled,
                tables=tables,
                house=house,
                concurrency=concurrency,
                stream=stream,
                metrics_port=metrics_port,
                metrics_host=metrics_host,
                metrics_linger_s=metrics_linger_s,
                metrics_wait_s=metrics_wait_s,
                web_port=web_port,
                web_host=web_host,
                server_host=server_host,
                server_port=server_port,
                **extra,
            )
            try:
                return asyncio.run(runner.run())
            except RunnerError as exc:
                raise LeagueError(str(exc)) from None
            finally:
                runner.log.close()
        finally:
            store.close()
            release()
    finally:
        league.close()
