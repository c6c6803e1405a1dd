"""``league run DIR --store URL [--shard I/N]``: a league in PostgreSQL, on one machine or many.

Each shard is a ``league run`` process with its own game server and its own copies of the
league's bots (every active version and the house bots, launched on every shard). The shards
share the league's database and nothing else:

1. **A block's plan is recorded once.** Before block B, a shard reads the plan of B from
   ``league_blocks``. If there is none, it makes one from its own view (the matchmaking of
   :mod:`.matchmaking` over every shard's stored hands) and records it with ``INSERT ... ON
   CONFLICT (block) DO NOTHING``; whichever shard gets there first wins, and every shard reads
   the plan back, so all play the same tables. The plan records N; a shard of another N is
   refused with one line until that block is done.
2. **A shard plays the tables t with t % N == I** of the plan, hand by hand into the store (one
   transaction per hand, keyed by the hand id): a shard killed and started again plays only
   the hands of its tables that are not stored yet.
3. **The barrier.** The next block starts when every hand of this one is stored (counted in the
   store). A shard that waits looks whether the shards it waits for run: each running shard
   holds the advisory lock (``RUN_LOCK``, I) of the database, which PostgreSQL drops when its
   process ends. After :data:`DEAD_GRACE_S` without the lock of a shard whose hands are missing,
   it says in one line which shard, how many of its hands are stored, and the command that
   starts it, and keeps waiting (Ctrl-C stops it). A shard that runs but stores nothing for
   :data:`STALL_S` is named too.
4. **Ratings.** Shard 0 refits after each block (one writer of the rating history); the others
   read the standings from the store like any viewer.

``--store URL`` alone is shard 0 of 1: the same plans, no barrier (every table is its own), and
remote bots play as in a SQLite league. With N > 1, remote bots are not scheduled (a remote bot
connects to one server, and its tables may fall to another shard), ``--hands N`` counts the
hands of every shard in the blocks this shard took part in (shards started together stop after
the same block), and ``--until settled`` is refused.

Bots a shard launches must exist on its machine: a submission records its built folder by its
absolute path, and a league on many machines shares its folder at that same path on every
machine (NFS or any shared volume). A version whose folder is missing is one line naming the
folder, and the shard stops before it plays (it does not give the version up: the others can).
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..player import RunnerError
from ..sharding import ShardSpec
from .hands import LEAGUE_ID
from .matchmaking import block_specs
from .pgleague import RUN_LOCK, PgLeagueStore
from .ratings import server_name
from .remote import Seated
from .run import POLL_S, LeagueRunner
from .store import Version

__all__ = ["DEAD_GRACE_S", "STALL_S", "BlockPlans", "Plan", "ShardedLeagueRunner"]

DEAD_GRACE_S = 5.0
"""How long a missing shard may be without its lock before the waiting shards name it (a shard
restarting after a crash takes its lock within a second or two)."""
STALL_S = 300.0
"""A running shard that stores no hand of the block for this long is named too."""
HANDS_PER_TABLE = 24

_SCHEMA = """
CREATE TABLE IF NOT EXISTS league_blocks (
    block BIGINT PRIMARY KEY,
    shards INTEGER NOT NULL,
    tables TEXT NOT NULL,
    hands INTEGER NOT NULL,
    planned_by INTEGER NOT NULL,
    at DOUBLE PRECISION NOT NULL
);
CREATE INDEX IF NOT EXISTS hands_block ON hands (block)
"""


@dataclass(frozen=True)
class Plan:
    block: int
    shards: int
    tables: list[tuple[str, ...]]
    hands: int
    planned_by: int

    def mine(self, part: ShardSpec) -> list[int]:
        """The tables shard ``part`` plays."""
        return [t for t in range(len(self.tables)) if t % part.count == part.index]


class BlockPlans:
    """The plans of the league's blocks, the barrier's counts and the shards' locks, read from
    and written to the league's database (on the league store's connection)."""

    def __init__(self, league: PgLeagueStore) -> None:
        self.league = league

    def setup(self) -> None:
        with self.league._tx():
            for stmt in _SCHEMA.split(";"):
                if stmt.strip():
                    self.league._x(stmt)

    def get(self, block: int) -> Plan | None:
        row = self.league._x(
            "SELECT block, shards, tables, hands, planned_by FROM league_blocks WHERE block = ?",
            (block,),
        ).fetchone()
        if row is None:
            return None
        tables = [tuple(str(b) for b in t) for t in json.loads(row[2])]
        return Plan(int(row[0]), int(row[1]), tables, int(row[3]), int(row[4]))

    def put(self, block: int, part: ShardSpec, tables: list[tuple[str, ...]], hands: int) -> Plan:
        """Record this plan of ``block`` unless one is there; the plan that is there after."""
        with self.league._tx():
            self.league._x(
                "INSERT INTO league_blocks VALUES (?, ?, ?, ?, ?, ?) "
                "ON CONFLICT (block) DO NOTHING",
                (block, part.count, json.dumps(tables), hands, part.index, time.time()),
            )
        plan = self.get(block)
        assert plan is not None
        return plan

    def last(self) -> int | None:
        row = self.league._x("SELECT MAX(block) FROM league_blocks").fetchone()
        return None if row is None or row[0] is None else int(row[0])

    def stored(self, block: int) -> dict[int, int]:
        """Hands of ``block`` stored, per table."""
        return {
            int(t): int(n)
            for t, n in self.league._x(
                "SELECT table_no, COUNT(*) FROM hands WHERE block = ? GROUP BY table_no", (block,)
            ).fetchall()
        }

    def stored_ids(self, block: int) -> set[str]:
        rows = self.league._x("SELECT hand_id FROM hands WHERE block = ?", (block,)).fetchall()
        return {str(r[0]) for r in rows}

    def counts(self) -> dict[str, int]:
        """Hands each server name has played, every shard's."""
        rows = self.league._x("SELECT bot, COUNT(*) FROM seats GROUP BY bot").fetchall()
        return {str(b): int(n) for b, n in rows}

    def running(self, index: int) -> bool:
        """Whether shard ``index``'s ``league run`` holds its lock (is alive)."""
        row = self.league._x(
            "SELECT COUNT(*) FROM pg_locks WHERE locktype = 'advisory' AND granted AND "
            "database = (SELECT oid FROM pg_database WHERE datname = current_database()) AND "
            "classid = ? AND objid = ? AND objsubid = 2",
            (RUN_LOCK, index),
        ).fetchone()
        return bool(row and row[0])


class ShardedLeagueRunner(LeagueRunner):
    """``league run --store URL [--shard I/N]`` (see the module docstring)."""

    def __init__(self, *args: Any, part: ShardSpec, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        assert isinstance(self.league, PgLeagueStore)
        self.part = part
        self.plans = BlockPlans(self.league)
        self.block_hands = 0
        """Hands of the blocks this run finished, every shard's (``--hands`` with N > 1)."""
        if part.count > 1:
            self.again += f" --shard {part}"

    def _load(self) -> None:
        super()._load()
        self.plans.setup()
        last = self.plans.last()
        if last is not None:
            plan = self.plans.get(last)
            assert plan is not None
            done = sum(self.plans.stored(last).values()) >= plan.hands
            self.block = last + 1 if done else last  # an unfinished block is finished first
        self.counts.update(self.plans.counts())

    async def _refit(self, *, force: bool = False) -> None:
        if self.part.index == 0:  # one writer of the rating history
            await super()._refit(force=force)

    def _unavailable(self, bot: str) -> bool:
        """A planned bot this shard does not seat (retired or given up after the plan was made,
        e.g. while the league was down amid the block) is played by the stand-in, a forfeit, so
        that the block is finished as planned."""
        seated = bot in self.house_procs or any(s.name == bot for s in self.seated.values())
        return not seated or super()._unavailable(bot)

    async def _seat(self, v: Version, others: list[Version]) -> None:
        if not v.remote and not Path(v.folder).is_dir():
            raise RunnerError(
                f"{v.key}: its built folder {v.folder[:200]} is not on this machine; a league "
                "on many machines shares its folder at the same path on every machine (NFS or "
                f"a shared volume): mount it there, then: {self.again}"
            )
        await super()._seat(v, others)

    async def _play_block(self) -> bool:
        ready = await self._sync()
        single = self.part.count == 1
        if single and await self._play_gate():
            return True
        if self._still_connecting():
            return False
        plan = self.plans.get(self.block)
        if plan is None:
            tables = await self._tables(ready_pool(ready, single))
            if not tables:
                return False
            plan = self.plans.put(self.block, self.part, tables, HANDS_PER_TABLE * len(tables))
        if plan.shards != self.part.count:
            raise RunnerError(
                f"block {plan.block} of this league was planned for {plan.shards} shard(s) and "
                f"is not finished; finish it with --shard I/{plan.shards} (this run is shard "
                f"{self.part})"
            )
        mine = set(plan.mine(self.part))
        if await self._unknown(plan, mine):
            return False  # a version accepted since this shard looked: launch it first
        done = self.plans.stored_ids(self.block)
        specs = [
            s
            for s in block_specs(LEAGUE_ID, self.config.seed, self.block, plan.tables)
            if s.table in mine and s.hand_id not in done
        ]
        if single and self.budget is not None:
            specs = specs[: max(0, self.budget - self.played)]
        shown = [t for i, t in enumerate(plan.tables) if i in mine]
        self._say_block(shown, ready, len(specs))
        await self._play_specs(specs)
        if self.stop_requested or self.fatal is not None:
            return True
        if not single and not await self._barrier(plan):
            return True
        # (one shard: a block cut short by --hands, or with an absent remote bot's hands
        # skipped, is done for this run; the next run finishes the last one first)
        self.counts.update(self.plans.counts())
        self.block += 1
        self.block_hands += plan.hands
        if not single and self.budget is not None and self.block_hands >= self.budget:
            self.stop_requested = True
        if self.fatal is None and (self._refit_task is None or self._refit_task.done()):
            self._refit_task = asyncio.get_running_loop().create_task(self._refit())
        return True

    async def _unknown(self, plan: Plan, mine: set[int]) -> bool:
        """Whether the plan seats an active version this shard has not launched yet."""
        planned = {b for i, t in enumerate(plan.tables) if i in mine for b in t}
        missing = planned - set(self.by_name) - set(self.house_procs)
        if not missing:
            return False
        active = {server_name(v) for v in self.league.versions() if v.state == "active"}
        return bool(missing & active)

    async def _barrier(self, plan: Plan) -> bool:
        """Wait until every hand of the block is stored; False if the run stops first. Names
        a shard whose hands are missing and that does not run (or stores nothing)."""
        n = self.part.count
        since = time.monotonic()
        last_total = -1
        last_progress = since
        said = ""
        while not self.stop_requested and self.fatal is None:
            stored = self.plans.stored(plan.block)
            total = sum(stored.values())
            if total >= plan.hands:
                if said:
                    self.say(f"block {plan.block}: every shard's hands are stored; going on")
                return True
            now = time.monotonic()
            if total != last_total:
                last_total, last_progress = total, now
            behind: dict[int, tuple[int, int]] = {}  # shard: (its hands stored, its hands)
            for t in range(len(plan.tables)):
                have, need = behind.get(t % n, (0, 0))
                behind[t % n] = (have + stored.get(t, 0), need + HANDS_PER_TABLE)
            note = ""
            for j, (have, need) in sorted(behind.items()):
                if have >= need:
                    continue
                if now - since > DEAD_GRACE_S and not self.plans.running(j):
                    note = (
                        f"block {plan.block} waits for shard {j}/{n}: it is not running "
                        f"({have} of its {need} hands stored); start it: uno-arena league run "
                        f"{self.league_dir} --store URL --shard {j}/{n}"
                    )
                    break
                if now - last_progress > STALL_S:
                    note = (
                        f"block {plan.block} waits for shard {j}/{n}: it runs but stored no "
                        f"hand for {STALL_S:.0f} s ({have} of its {need} hands stored); see "
                        "its log"
                    )
                    break
            if note and note != said:
                self.say(note)
                said = note
            await self._pause(POLL_S)
        return False


def ready_pool(ready: list[Seated], single: bool) -> list[Seated]:
    """The versions a plan may seat: with N > 1 no remote bot (it is on one shard's server)."""
    return ready if single else [s for s in ready if s.proc is not None]
