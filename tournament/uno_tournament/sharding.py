"""Which shard plays what, where the results go, and which runs may share a store.

* ``--shards N`` (one machine): the runner starts N shard workers, each its own process group
  with a game server and its own copies of the launched bots, and stays the single writer of
  the store (:mod:`uno_tournament.worker`). The default N is what the machine's cores allow:
  a hand costs about 70 CPU-ms (23 in its shard's server, the rest following the tables and in
  the bots; ``make bench-tournament``), so with half the usable cores as shards
  (:func:`default_shards`) every core is busy while no server reaches its own core's limit.
* ``--shard I/N`` (many machines, a Kubernetes Indexed Job with ``--shard
  $JOB_COMPLETION_INDEX/N``): this process plays shard I only, with its server and bots, and
  writes to a shared PostgreSQL store (``--store postgresql://...``).

Both split the schedule with :func:`uno_tournament.schedule.partition`: by deal, in a seeded
order, so a hand plays the same whichever shard plays it, and the result of N shards is the
result of one process with the same seed.

A store holds one tournament. The first shard to reach an empty store writes the tournament's
identity (:func:`identity`: name, seed, size, bots, rules, time control, fault policy), the
bots' programs (:mod:`uno_tournament.bot_programs`: each command and environment with every
file replaced by its content's digest and every other path by its last part, and the
``[sandbox]`` limits each bot runs under) and the number of shards; a process that brings
another identity, another program or other limits under a bot's name or another N is refused
with one line (:func:`join_store`), so two runs are never mixed. What may differ between the
shards of one run: where the bots' files and working folders are (they depend on the
machine), the output folder, the concurrency. While a shard plays, its process holds a
PostgreSQL advisory lock of (tournament, shard) (:meth:`PgStore.hold_shard
<uno_tournament.pgstore.PgStore.hold_shard>`): a second process for the same shard is refused.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import bot_programs
from .config import ConfigError, TournamentConfig
from .plural import count
from .store import ResultStore, Store, StoreError

_SHARD_RE = re.compile(r"^\s*(\d*)\s*/\s*(\d*)\s*\Z")
MAX_SHARDS = 1024


class ShardError(Exception):
    """A bad --shard/--shards value or a store that belongs to another run."""


@dataclass(frozen=True)
class ShardSpec:
    """Shard ``index`` of ``count`` (``I/N``)."""

    index: int
    count: int

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    @classmethod
    def parse(cls, text: str) -> ShardSpec:
        m = _SHARD_RE.match(text)
        if not m:
            raise ShardError(f"--shard {text!r}: give I/N, e.g. --shard 0/3 (shard 0 of 3)")
        index, count = m.groups()
        if not index:
            raise ShardError(
                f"--shard {text!r}: the shard index is empty; in a Kubernetes Indexed Job "
                "pass --shard $(JOB_COMPLETION_INDEX)/N"
            )
        if not count:
            raise ShardError(f"--shard {text!r}: give the number of shards after the '/'")
        i, n = int(index), int(count)
        if not 1 <= n <= MAX_SHARDS:
            raise ShardError(f"--shard {text!r}: the number of shards must be 1-{MAX_SHARDS}")
        if not 0 <= i < n:
            raise ShardError(f"--shard {text!r}: the index must be 0-{n - 1}")
        return cls(i, n)


def usable_cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def default_shards(cores: int | None = None) -> int:
    """Shards one machine can keep busy: half its usable cores, at least 1 (see the module
    docstring and the README's Performance section for the measurement behind the half)."""
    return max(1, (cores if cores is not None else usable_cores()) // 2)


def check_shards(n: int) -> int:
    if not 1 <= n <= MAX_SHARDS:
        raise ShardError(f"--shards must be 1-{MAX_SHARDS}, got {n}")
    return n


# ------------------------------------------------------------------------ run identity

IDENTITY_KEYS = (
    "name",
    "seed",
    "blocks",
    "hands",
    "precision_elo",
    "pair_meetings",
    "bots",
    "rules",
    "time_control",
    "faults",
)


def identity(config: TournamentConfig) -> dict[str, Any]:
    """What makes two runs the same tournament: everything that decides which hands are
    planned and how they are rated. The bots' programs are compared apart
    (:mod:`uno_tournament.bot_programs`: a digest that covered them would refuse every store
    recorded before they were)."""
    d = config.to_dict()
    out = {k: d[k] for k in IDENTITY_KEYS}
    out["bots"] = [b["name"] for b in d["bots"]]
    return out


def identity_digest(config: TournamentConfig) -> str:
    raw = json.dumps(identity(config), sort_keys=True, separators=(",", ":")).encode()
    return hashlib.sha256(raw).hexdigest()[:16]


def _difference(stored: dict[str, Any], mine: dict[str, Any]) -> str:
    for k in IDENTITY_KEYS:
        a, b = stored.get(k), mine.get(k)
        if a != b:
            if k == "bots":
                return f"its bots are {', '.join(map(str, a or []))}, yours {', '.join(b or [])}"
            if isinstance(a, dict) and isinstance(b, dict):
                for sub in sorted(set(a) | set(b)):
                    if a.get(sub) != b.get(sub):
                        return f"its {k}.{sub} is {a.get(sub)!r}, yours {b.get(sub)!r}"
            return f"its {k} is {a!r}, yours {b!r}"
    return "its configuration differs from yours"


SEQUENTIAL_KEYS = ("until", "alpha", "indifference_elo", "max_hands", "candidate", "baseline")
"""The settings of a run's sequential test (``until = "settled"`` or a new-version test). They
are not in the identity's digest (that would refuse every run stored before they were checked),
so :func:`join_store` compares them with the stored configuration's: a shard started with
``alpha = 0.3`` or another candidate joined a store and its test replaced the run's."""


def _sequential_difference(theirs: TournamentConfig | None, mine: TournamentConfig) -> str:
    if theirs is None:
        return ""
    a, b = theirs.to_dict(), mine.to_dict()
    for k in SEQUENTIAL_KEYS:
        if a.get(k) != b.get(k):
            return f"its {k} is {_setting(a.get(k))}, yours {_setting(b.get(k))}"
    return ""


def _setting(v: object) -> str:
    return "not set" if v in ("", 0, None) else repr(v)


def _kind_difference(theirs: TournamentConfig | None, mine: TournamentConfig) -> str:
    """The difference in kind, when one run is sequential and the other of a fixed size (the
    size keys alone read "its hands is 0, yours 768")."""
    if theirs is None or theirs.sequential == mine.sequential:
        return ""

    def kind(c: TournamentConfig) -> str:
        if c.candidate:
            return f"a new-version test of {c.candidate} against {c.baseline}"
        if c.sequential:
            return 'until = "settled"'
        if c.hands:
            return f"a fixed size of hands = {c.hands}"
        if c.precision_elo:
            return f"a fixed size of precision_elo = {c.precision_elo:g}"
        return f"a fixed size of blocks = {c.blocks}"

    return f"its run is {kind(theirs)}, yours {kind(mine)}"


def new_tournament_id(name: str) -> str:
    return f"{name}-{secrets.token_hex(3)}"


def join_store(
    store: ResultStore,
    config: TournamentConfig,
    *,
    config_text: str = "",
    shards: int | None = None,
    shard: ShardSpec | None = None,
) -> str:
    """Make ``store`` hold this tournament, or check that it already does; returns the
    tournament id. An empty store takes this run's identity (the first of several shards
    starting together wins, the others read what it wrote); a store of another tournament,
    seed or configuration, or of another number of shards, is refused. With ``shard`` (and a
    PostgreSQL store) this process also takes that shard's lock (:meth:`PgStore.hold_shard`),
    which its first shards row would take otherwise."""
    if shard is not None and shards is None:
        shards = shard.count
    mine = identity(config)
    digest = identity_digest(config)
    programs = bot_programs.programs(config)
    wanted: dict[str, Any] = {
        "tournament_id": new_tournament_id(config.name),
        "config": config.to_dict(),
        "config_text": config_text,
        "identity": digest,
        "created_at": time.time(),
        bot_programs.META_KEY: programs,  # a store recorded before them gets this process's
    }
    if shards is not None:
        wanted["shards"] = shards
    meta = store.init_meta(wanted)
    where = f"store {store.location}"
    try:
        theirs: TournamentConfig | None = TournamentConfig.from_dict(meta["config"])
    except (KeyError, TypeError, ValueError, ConfigError):
        theirs = None
    if meta.get("identity") != digest:
        stored = identity(theirs) if theirs is not None else {}
        why = _kind_difference(theirs, config) or _difference(stored, mine)
        raise ShardError(
            f"{where} holds tournament {meta.get('tournament_id', '?')}, not this one: "
            f"{why}. A store holds one tournament: use another database "
            "(or schema) for a new run, or the configuration that started this one"
        )
    stored_programs = meta.get(bot_programs.META_KEY)
    why = bot_programs.difference(stored_programs, programs)
    if why:
        raise ShardError(
            f"{where} holds tournament {meta.get('tournament_id', '?')}, whose bots are not "
            f"this process's: {why}. Every shard must run the same programs under the same "
            "names under the same [sandbox] limits (their hands are rated together): give each "
            "shard the same bots and limits, or use "
            "another database for another run"
        )
    why = _sequential_difference(theirs, config)
    if why:
        raise ShardError(
            f"{where} holds tournament {meta.get('tournament_id', '?')}, whose sequential test "
            f"is not this process's: {why}. Every shard must run the same test (its decision "
            "is the whole run's): give the configuration and the --candidate/--baseline that "
            "started it"
        )
    if bot_programs.unrecorded(stored_programs):  # recorded before the sandbox limits were
        store.set_meta(bot_programs.META_KEY, programs)
    if shards is not None and meta.get("shards", shards) != shards:
        raise ShardError(
            f"{where} is played by {count(meta['shards'], 'shard')}; this process says --shard I/"
            f"{shards}. Use the same N as the rest of the run (the partition depends on it)"
        )
    tid = store.tournament_id(meta)
    hold = getattr(store, "hold_shard", None)
    if shard is not None and hold is not None:
        hold(str(shard))
    return tid


def open_store(location: str, *, create: bool = False) -> ResultStore:
    """A store by ``--store`` value: a postgresql:// URL, or a tournament folder (SQLite)."""
    from .pgstore import PgStore, is_url

    if is_url(location):
        return PgStore.connect(location, create=create)
    if "://" in location:
        scheme = location.split("://", 1)[0]
        raise StoreError(
            f"--store {scheme}://...: unknown kind of store; give a postgresql:// URL or a "
            "tournament folder"
        )
    return Store.open(Path(location))
