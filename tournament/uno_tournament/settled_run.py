"""Runs that stop by a sequential decision: ``until = "settled"`` and ``tournament run --candidate
NEW --baseline OLD``. The harness side of issue 24; the statistics are
:mod:`uno_tournament.settled` (the anytime-valid confidence sequences) and
:mod:`uno_tournament.newversion` (the new-version GSPRT).

The plan
--------
A sequential run plans ``max_hands`` hands (its budget) in the usual order, block by block and
within a block deal by deal across the tables:

* ``until = "settled"`` (**adaptive**): blocks of :func:`adaptive_tables` tables (8 for 8 bots).
  Block 0 is a balanced design (:func:`first_block`, a function of the configuration). Block
  ``k`` is chosen at the look after block ``k - 1`` by
  :func:`uno_tournament.adaptive.next_block_tables` from that look (the stored hands) and the
  seed, and **recorded** in the record's ``blocks`` with the look, before any table sees it.
  The plan is a function of the record (:func:`settled_plan` with the store): every hand's id,
  table, deal, rotation and deal seed are fixed in advance; a block's bots come from its
  recorded tables (the hands of blocks not chosen yet have ``bots == ()`` until
  :func:`resolve` fills them in). A resumed run, ``--shards N`` workers, ``--shard I/N`` pods,
  ``verify`` and the report all rebuild the same plan from the store, never by running the
  chooser again on other data; ``verify`` also re-runs it on the re-derived looks and compares;
* ``--candidate NEW --baseline OLD``: blocks of :data:`NEWVERSION_TABLES` tables (fewer if the
  field has fewer pairs), each seating NEW and OLD with two bots of the field
  (:func:`uno_tournament.newversion.newversion_tables`), cut at ``max_hands``: a fixed plan,
  a function of the configuration and the tournament id only.

The looks
---------
A look is taken on exactly the first ``k * look_every`` hands of the plan's order, once each of
them is stored (:func:`uno_tournament.settled.advance`): for an adaptive run ``look_every`` is
a block (its looks combine per-block fits, ``by_block=True``, which stay valid when the tables
follow the data); for a new-version test it is one round of deals across all tables (every
table's deal in its 4 seat rotations), repeated until it is at least a duplicate block's 24
hands. A look is therefore a function of the stored hands alone: a run
resumed after ``kill -9``, another shard, and ``verify`` (which re-derives every look from the
hands) reach the same decisions at the same hand counts.

The record
----------
The decision is kept in the store's ``meta`` table under :data:`META_KEY` (SQLite and
PostgreSQL alike; no new table, so a store written before this needs no migration): the test's
whole state, every look (its hand count and, for ``until = "settled"``, each adjacent pair's
status and interval; for the new-version test its LLR), and the stop (``settled``, ``budget``,
``H1``, ``H0``) with the hands it used. Hands played past the stop (in flight when it came, or
played by a pod that had not seen it yet) are stored like any other hand; the report and
``verify`` name them as past the stop, and they are not in the decision.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from . import schedule
from .adaptive import block_hands, floor_tables, next_block_tables
from .newversion import (
    NewVersionState,
    given_up,
    gone_stop,
    newversion_tables,
    no_rated_note,
    stop_line_of,
)
from .plural import count
from .rating_model import HandResult
from .schedule import HANDS_PER_BLOCK, ROTATIONS, HandSpec
from .settled import (
    SettledDecision,
    SettledState,
    advance,
    fit_hands,
    information_at,
    left_out,
    stop_line,
)
from .settled_budget import no_look_note

__all__ = [
    "META_KEY",
    "SequentialRecord",
    "catch_up",
    "look_every",
    "run_looks",
    "settled_design",
    "settled_plan",
]

META_KEY = "sequential"
"""The key of the decision in the store's ``meta`` table."""
RECORD_VERSION = 2
"""2: ``until = "settled"`` records the tables of each block (adaptive scheduling)."""
ADAPTIVE_TABLES = 8
"""Tables of each block of an adaptive run (24 hands each: a look every 192 hands)."""
NEWVERSION_TABLES = 4
"""Tables per block of a new-version test (each seats NEW, OLD and two field bots)."""


def _names(config: Any) -> tuple[str, ...]:
    return tuple(b.name for b in config.bots)


def field_of(config: Any) -> list[str]:
    """The bots of a new-version test other than the candidate and the baseline."""
    return [n for n in _names(config) if n not in (config.candidate, config.baseline)]


def adaptive(config: Any) -> bool:
    """The run schedules for information (``until = "settled"``): each block's tables are chosen
    from the hands before it (:mod:`uno_tournament.adaptive`) and recorded in the store."""
    return config.until == "settled" and not config.candidate


def adaptive_tables(names: Sequence[str]) -> int:
    """Tables of each block of an adaptive run: :data:`ADAPTIVE_TABLES`, or twice the floor
    (:func:`uno_tournament.adaptive.floor_tables`, the tables that seat every bot) when that
    is more, so as many tables again go to the open pairs. A small field repeats its four-bot
    combinations (a table twice is two tables of other deals): its block was one table for 4
    bots, 24 hands of 6 deals, too few for a block's own fit (a pair 145 Elo apart stayed
    open to a 600-hand budget; an examination). Runs stored before keep their blocks'
    size (:func:`settled_plan` reads it from the record)."""
    return max(ADAPTIVE_TABLES, 2 * floor_tables(names))


def first_block(config: Any) -> list[tuple[str, ...]]:
    """Block 0's tables of an adaptive run (a balanced design, before any look: a function of
    the configuration alone)."""
    names = _names(config)
    st = SettledState(names, alpha=config.alpha, indifference_elo=config.indifference_elo)
    return next_block_tables(st, None, names, adaptive_tables(names), 0, config.seed)


def recorded_blocks(store: Any) -> list[list[tuple[str, ...]]] | None:
    """The tables of each block the store's record holds (None: no record, or one without
    blocks). An unreadable record raises ValueError."""
    raw = store.meta().get(META_KEY)
    if raw is None:
        return None
    try:
        rec = SequentialRecord.from_dict(raw)
    except (KeyError, TypeError) as exc:
        raise ValueError(f"the stored sequential decision is unreadable ({exc})"[:200]) from exc
    return rec.tables()


def settled_plan(config: Any, tournament_id: str, store: Any = None) -> list[HandSpec]:
    """The plan of a sequential run (see the module docstring). For an adaptive run the hands of
    blocks whose tables are recorded in ``store`` (block 0 always) are complete; the later
    blocks' hands have their ids, deal seeds and positions but no bots yet (``bots == ()``:
    :func:`resolve` fills them in once the record holds their tables)."""
    names = _names(config)
    if adaptive(config):
        blocks = recorded_blocks(store) if store is not None else None
        if not blocks:
            blocks = [first_block(config)]
        return list(
            _adaptive_plan(
                tournament_id,
                names,
                config.seed,
                config.max_hands,
                len(blocks[0]),  # a run's own block size, as recorded (see adaptive_tables)
                tuple(tuple(tuple(t) for t in b) for b in blocks),
            )
        )
    return list(
        _plan(
            tournament_id,
            names,
            config.seed,
            config.pair_meetings,
            config.max_hands,
            config.candidate,
            config.baseline,
        )
    )


@functools.lru_cache(maxsize=2)  # a plan is up to 2,000,000 hands
def _adaptive_plan(
    tid: str,
    names: tuple[str, ...],
    seed: int,
    max_hands: int,
    n_tables: int,
    blocks: tuple[tuple[tuple[str, ...], ...], ...],
) -> tuple[HandSpec, ...]:
    if max_hands < 1:
        raise ValueError("a sequential run needs max_hands")
    out: list[HandSpec] = []
    block = 0
    while len(out) < max_hands:
        if block < len(blocks):
            if len(blocks[block]) != n_tables:
                raise ValueError(
                    f"the recorded block {block} has {len(blocks[block])} tables, the "
                    f"configuration plans {n_tables}"
                )
            for tb in blocks[block]:
                if len(set(tb)) != len(tb) or not set(tb) <= set(names):
                    raise ValueError(
                        f"the recorded block {block} has a table {list(tb)!r} that is not four "
                        "distinct bots of the configuration"[:200]
                    )
            out += block_hands(tid, blocks[block], block, seed)
        else:  # not chosen yet: the ids and deal seeds only
            out += _unchosen(tid, n_tables, block, seed)
        block += 1
    return tuple(out[:max_hands])


def _unchosen(tid: str, n_tables: int, block: int, seed: int) -> list[HandSpec]:
    """A block whose tables are not chosen yet: each hand's id, table, deal, rotation and deal
    seed (all fixed in advance), no bots."""
    return [
        HandSpec(
            schedule.hand_id(tid, t, block, d, r),
            t,
            block,
            d,
            r,
            schedule.deal_seed(seed, t, block, d),
            (),
        )
        for d in range(schedule.DEALS_PER_BLOCK)
        for t in range(n_tables)
        for r in range(ROTATIONS)
    ]


def resolve(spec: HandSpec, blocks: Sequence[Sequence[Sequence[str]]]) -> HandSpec:
    """``spec`` with its bots, from the recorded tables of its block (unchanged if it has them).
    Raises LookupError if its block's tables are not recorded yet."""
    if spec.bots:
        return spec
    if spec.block >= len(blocks):
        raise LookupError(f"block {spec.block}'s tables are not recorded yet")
    tb = tuple(blocks[spec.block][spec.table])
    return dataclasses.replace(
        spec, bots=schedule.seating(tb, spec.deal, spec.rotation), table_bots=tb
    )


@functools.lru_cache(maxsize=2)  # a plan is up to 2,000,000 hands
def _plan(
    tid: str,
    names: tuple[str, ...],
    seed: int,
    pair_meetings: int,
    max_hands: int,
    candidate: str,
    baseline: str,
) -> tuple[HandSpec, ...]:
    if max_hands < 1:
        raise ValueError("a sequential run needs max_hands")
    if candidate:
        field = [n for n in names if n not in (candidate, baseline)]
        n_tables = min(math.comb(len(field), 2), NEWVERSION_TABLES)
        out: list[HandSpec] = []
        block = 0
        while len(out) < max_hands:
            tables = newversion_tables(candidate, baseline, field, n_tables, block, seed)
            out += block_hands(tid, tables, block, seed)
            block += 1
        return tuple(out[:max_hands])
    tables = schedule.tables_for(names, pair_meetings=pair_meetings, seed=seed)
    blocks = max(1, math.ceil(max_hands / (len(tables) * HANDS_PER_BLOCK)))
    full = schedule.plan(tid, names, blocks=blocks, seed=seed, pair_meetings=pair_meetings)
    return tuple(full[:max_hands])


def _block_hands(config: Any) -> int:
    """The hands of one block of a sequential run's plan."""
    names = _names(config)
    if adaptive(config):
        return adaptive_tables(names) * HANDS_PER_BLOCK
    if config.candidate:
        field = [n for n in names if n not in (config.candidate, config.baseline)]
        return min(math.comb(len(field), 2), NEWVERSION_TABLES) * HANDS_PER_BLOCK
    tables = schedule.tables_for(names, pair_meetings=config.pair_meetings, seed=config.seed)
    return len(tables) * HANDS_PER_BLOCK


def settled_design(config: Any) -> schedule.Design:
    """The first block's tables (the whole block, even where the budget cuts it: the run's
    first line names the blocks' true size) and the budget's blocks, with the reason the
    run's first line prints."""
    # the first block alone: a plan of the whole budget (up to 2,000,000 hands) made here
    # beside the run's own doubled the memory a run starts with
    per_block = _block_hands(config)
    first = dataclasses.replace(config, max_hands=per_block)
    by_table = {h.table: h.table_bots for h in settled_plan(first, "design")}
    tables = [by_table[t] for t in sorted(by_table)]  # a small field's repeats included
    blocks = math.ceil(config.max_hands / per_block)
    n = len(tables)
    size = f"blocks of {n} table{'s' if n != 1 else ''} ({per_block} hands)"
    cut = ""
    if config.max_hands < per_block:  # it said "blocks of 6 tables" for 24 hands of 8 tables
        at = min(n, math.ceil(config.max_hands / ROTATIONS))  # deal by deal across the tables
        cut = f"; the budget is less than one block: {config.max_hands} of its hands, at {at}"
        cut += f" of its {n} tables"
    if config.candidate:
        why = (
            f"new-version test {config.candidate} vs {config.baseline} (delta0 0, delta1 "
            f"{config.indifference_elo:g} Elo, alpha = beta = {config.alpha:g}), at most "
            f"{config.max_hands} hands; {size}{cut}"
        )
    else:
        why = (
            f"until settled (alpha {config.alpha:g}, indifference {config.indifference_elo:g} "
            f"Elo), at most {config.max_hands} hands; {size}, each block's chosen at the look "
            f"before it for the open pairs{cut}"
        )
    return schedule.Design(tables, blocks, why)


def look_every(plan: Sequence[HandSpec]) -> int:
    """Hands between looks: a round of deals across the first block's tables, repeated until it
    is at least a block's 24 hands (a divisor of the block's 6 deals, so looks fall on deal
    boundaries)."""
    n_tables = len({h.table for h in plan if h.block == plan[0].block}) if plan else 1
    one = n_tables * ROTATIONS
    for k in (1, 2, 3, 6):
        if one * k >= HANDS_PER_BLOCK:
            return one * k
    return one * 6


# ------------------------------------------------------------------------------ the record


@dataclasses.dataclass
class SequentialRecord:
    """The decision of a sequential run, as :data:`META_KEY` stores it (JSON via
    :meth:`to_dict`)."""

    kind: str
    """``"settled"`` or ``"new-version"``."""
    plan_hands: int
    look_every: int
    state: SettledState | None = None
    newversion: NewVersionState | None = None
    through: int = 0
    """Hands of the plan's order covered by the looks so far."""
    looks: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    stop: dict[str, Any] | None = None
    """``{"reason": ..., "hands": ..., "line": ...}`` once the run has stopped."""
    blocks: list[list[list[str]]] | None = None
    """``until = "settled"``: the tables of each block chosen so far (block ``k`` is chosen at
    the look after block ``k - 1``; block 0 before any): the plan's record, from which every
    process rebuilds the same plan. None for a new-version test (its plan is fixed)."""
    seed: int = 0
    """The tournament seed the blocks were chosen with."""
    n_tables: int = 0
    """Tables of each block (adaptive runs)."""
    played: int | None = dataclasses.field(default=None, compare=False)
    """Hands of the plan stored so far, as the runner counts them (not in the JSON): the
    progress line's projection moves with them between looks."""
    _need_at: tuple[int, float | None] = dataclasses.field(
        default=(-1, None), init=False, repr=False, compare=False
    )

    def tables(self) -> list[list[tuple[str, ...]]] | None:
        """The recorded tables of each block, as tuples (None for a fixed plan)."""
        if self.blocks is None:
            return None
        return [[tuple(t) for t in b] for b in self.blocks]

    @classmethod
    def new(cls, config: Any, plan: Sequence[HandSpec]) -> SequentialRecord:
        n = len(plan)
        if config.candidate:
            nv = NewVersionState(
                config.candidate,
                config.baseline,
                delta0=0.0,
                delta1=config.indifference_elo,
                alpha=config.alpha,
                beta=config.alpha,
            )
            return cls("new-version", n, look_every(plan), newversion=nv)
        st = SettledState(
            _names(config), alpha=config.alpha, indifference_elo=config.indifference_elo
        )
        k = adaptive_tables(_names(config))
        return cls(
            "settled",
            n,
            min(n, k * HANDS_PER_BLOCK),
            state=st,
            blocks=[list(map(list, first_block(config)))],
            seed=int(config.seed),
            n_tables=k,
        )

    # -------------------------------------------------------------- reading

    @property
    def stopped(self) -> bool:
        return self.stop is not None

    @property
    def stop_hands(self) -> int | None:
        """Hands of the plan's order the decision used (the stop), or None while it runs."""
        return None if self.stop is None else int(self.stop["hands"])

    def next_boundary(self) -> int | None:
        """The plan prefix the next look needs, or None when no look is left."""
        if self.stop is not None or self.through >= self.plan_hands:
            return None
        return min(self.through + self.look_every, self.plan_hands)

    def last_look(self) -> dict[str, Any] | None:
        return self.looks[-1] if self.looks else None

    def open_pairs(self) -> list[str]:
        last = self.last_look()
        if self.kind != "settled" or last is None:
            return []
        return [p["pair"] for p in last.get("pairs", []) if p["status"] == "open"]

    def _need(self) -> float | None:
        """Hands past the last look the decision is projected to need (each open pair's
        interval, or the LLR, moves with the information, which grows with the hands); None
        before the first look or when nothing can be projected (an interval not finite yet)."""
        if self._need_at[0] != len(self.looks):  # once a look: the runner asks every hand
            self._need_at = (len(self.looks), self._project())
        return self._need_at[1]

    def _project(self) -> float | None:
        last = self.last_look()
        if last is None or not last.get("looked"):
            return None
        at = max(1, int(last["through"]))
        need = 0.0
        if self.kind == "settled":
            assert self.state is not None
            st = self.state
            for p in last.get("pairs", []):
                if p["status"] != "open":
                    continue
                low, high = float(p["low"]), float(p["high"])
                if not (math.isfinite(low) and math.isfinite(high)):
                    return None
                mid, half = (low + high) / 2.0, (high - low) / 2.0
                target = max(abs(mid), st.indifference_elo - abs(mid))
                t_now = information_at(half, st.rho, st.alpha_pair)
                t_need = information_at(target, st.rho, st.alpha_pair)
                need = max(need, at * t_need / t_now - at)
            return need
        assert self.newversion is not None
        return self.newversion.hands_to_decide(at)

    def projected_stop(self) -> tuple[int, bool] | None:
        """The plan's hand count at the look the decision is projected at, and whether the
        projection lies beyond the budget (the count is then the look past the budget's end,
        or 0 if too far to say); None once stopped or when nothing can be projected. The run
        stops only at a look, so the projection is rounded up to one, at least the next."""
        need = None if self.stop is not None else self._need()
        if need is None:
            return None
        at = int(self.looks[-1]["through"])
        if not need < 100.0 * self.plan_hands:
            return 0, True
        target = at + max(1, math.ceil(need / self.look_every)) * self.look_every
        if at + need > self.plan_hands:
            return target, True
        return min(target, self.plan_hands), False

    def _played(self) -> int:
        return min(self.plan_hands, max(self.through, self.played or 0))

    def expected_hands(self) -> int | None:
        """Hands still expected before the decision (:meth:`projected_stop`, less the hands
        played since the last look), capped at the budget's; None when not projected."""
        if self.stop is not None:
            return 0
        proj = self.projected_stop()
        if proj is None:
            return None
        end = self.plan_hands if proj[1] else proj[0]
        return max(0, end - self._played())

    def expected_text(self) -> str:
        """The progress line's projection: ``about 163 hands still expected (to the look at
        384)``, ``... more than the 475 the budget leaves``, or '' before the first look."""
        last = self.last_look()
        if self.stop is not None or last is None or not last.get("looked"):
            return ""
        played = self._played()
        left = self.plan_hands - played
        proj = self.projected_stop()
        if proj is None:
            return f"the hands still expected are not known yet ({left} left in the budget)"
        target, beyond = proj
        # the whole run's figures: a --shard I/N pod's line starts with its own share's count
        # ("284/300 hands, 16 to go"; an examination read them as one)
        whole = f" (whole run: {played} of {self.plan_hands} hands stored)"
        if beyond:
            if not target:
                return f"far more hands still expected than the {left} the budget leaves{whole}"
            more = f"about {count(target - played, 'hand')} still expected, more"
            return f"{more} than the {left} the budget leaves{whole}"
        if target <= played:
            return f"the look at {target} hands is due"
        return f"about {count(target - played, 'hand')} still expected (to the look at {target})"

    def stop_text(self) -> str:
        """The stop line with what the report adds to it: why a new-version test's budget came
        first (:meth:`NewVersionState.budget_hint`, :meth:`~NewVersionState.limits_note`); the
        record's line itself stays as ``verify`` re-derives it."""
        assert self.stop is not None
        line = str(self.stop["line"])
        nv = self.newversion
        if nv is not None and self.stop["reason"] == "budget":
            line += "".join(f"; {x}" for x in (nv.limits_note(), nv.budget_hint()) if x)
        return line

    def status_line(self) -> str:
        """The progress line's sequential part: the pairs decided and open and the hands still
        expected, or the new-version test's LLR line; after the stop, the stop line."""
        if self.stop is not None:
            return self.stop_text()
        if self.kind == "new-version":
            assert self.newversion is not None
            text = self.newversion.progress_line()
        else:
            last = self.last_look()
            if last is None or not last.get("looked"):
                return no_look_note(self) or "waiting for the first look"
            pairs = last.get("pairs", [])
            opened = [p["pair"] for p in pairs if p["status"] == "open"]
            text = f"{len(pairs) - len(opened)} of {len(pairs)} pairs decided"
            if opened:
                text += ", open: " + ", ".join(opened[:6]) + (" ..." if len(opened) > 6 else "")
        exp = self.expected_text()
        return f"{text}; {exp}" if exp else text

    # -------------------------------------------------------------- JSON

    def to_dict(self) -> dict[str, Any]:
        return {
            "version": RECORD_VERSION,
            "kind": self.kind,
            "plan_hands": self.plan_hands,
            "look_every": self.look_every,
            "through": self.through,
            "state": self.state.to_dict() if self.state is not None else None,
            "newversion": self.newversion.to_dict() if self.newversion is not None else None,
            "looks": self.looks,
            "stop": self.stop,
            "blocks": self.blocks,
            "seed": self.seed,
            "n_tables": self.n_tables,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SequentialRecord:
        if not isinstance(data, Mapping) or data.get("version") not in (1, RECORD_VERSION):
            raise ValueError("the stored sequential decision is of an unknown version")
        if data.get("version") == 1 and data.get("kind") == "settled":
            raise ValueError(
                'the stored decision is of an `until = "settled"` run of an earlier version '
                "(a fixed plan, without recorded block tables); it cannot be continued: start "
                "the run again in a new folder"
            )
        kind = data.get("kind")
        if kind not in ("settled", "new-version"):
            raise ValueError(f"the stored sequential decision has kind {kind!r}"[:120])
        st = SettledState.from_dict(data["state"]) if data.get("state") is not None else None
        nv = (
            NewVersionState.from_dict(data["newversion"])
            if data.get("newversion") is not None
            else None
        )
        if (kind == "settled") != (st is not None) or (kind == "new-version") != (nv is not None):
            raise ValueError("the stored sequential decision lacks its test's state")
        return cls(
            str(kind),
            int(data["plan_hands"]),
            int(data["look_every"]),
            st,
            nv,
            int(data["through"]),
            list(data["looks"]),
            dict(data["stop"]) if data.get("stop") is not None else None,
            _blocks_of(data.get("blocks"), str(kind)),
            int(data.get("seed") or 0),
            int(data.get("n_tables") or 0),
        )

    def decision_of(self) -> dict[str, Any]:
        """What ``verify`` compares with a re-derivation: the stop, the looks (hand counts,
        statuses, LLRs) and every pair's claim, without the record's bookkeeping."""
        d = self.to_dict()
        keys = ("kind", "plan_hands", "look_every", "through", "looks", "stop", "blocks")
        return {k: d[k] for k in keys}


def _blocks_of(raw: Any, kind: str) -> list[list[list[str]]] | None:
    """The recorded block tables, checked for shape (a list of blocks, each a list of tables of
    four names)."""
    if kind != "settled":
        return None
    if not isinstance(raw, list) or not raw:
        raise ValueError("the stored sequential decision has no block tables")
    out: list[list[list[str]]] = []
    for b in raw:
        if not isinstance(b, list) or not b:
            raise ValueError("the stored sequential decision has a malformed block")
        tables = []
        for t in b:
            if not isinstance(t, list) or len(t) != 4 or not all(isinstance(x, str) for x in t):
                raise ValueError("the stored sequential decision has a malformed table")
            tables.append([str(x) for x in t])
        out.append(tables)
    return out


# ------------------------------------------------------------------------------ the looks


def _pairs_of(st: SettledState, ranking: Sequence[str]) -> list[dict[str, Any]]:
    out = []
    for x, y in itertools.pairwise(ranking):
        p = st.pair(x, y)
        out.append(
            {
                "pair": f"{x}~{y}",
                "status": p.status,
                "claim": p.claim(),
                "low": p.to_dict()["low"],
                "high": p.to_dict()["high"],
                "claimed_at": p.claimed_at,
            }
        )
    return out


def _decision(st: SettledState, hands: int, ranking: Sequence[str]) -> SettledDecision:
    adj = tuple(dataclasses.replace(st.pair(x, y)) for x, y in itertools.pairwise(ranking))
    return SettledDecision(hands, tuple(ranking), adj, True)


def catch_up(
    record: SequentialRecord,
    plan_ids: Sequence[str],
    stored: Mapping[str, HandResult | None],
    names: Sequence[str],
) -> SequentialRecord:
    """Take every look that is due on ``stored`` (hand id -> its rated result, None if the
    forfeit policy leaves it out) and return the record (changed in place). A pure function of
    the record and the stored hands: the runner calls it in its refit process, ``verify``
    calls it from an empty record."""
    if record.stop is not None:
        return record
    if record.kind == "settled":
        assert record.state is not None
        st = record.state
        blocks = record.blocks
        while st.settled_at is None and st.through < record.plan_hands:
            upto = min(st.through + record.look_every, record.plan_hands)
            if blocks is not None and upto > len(blocks) * record.look_every:
                break  # the block's tables are not recorded (an edited record): no look
            decs = advance(
                st, plan_ids[:upto], stored, record.look_every, by_block=blocks is not None
            )
            if not decs:
                break
            dec = decs[-1]
            record.looks.append(
                {
                    "through": st.through,
                    "hands": dec.hands,
                    "looked": dec.looked,
                    "note": dec.note,
                    "ranking": list(dec.ranking),
                    "pairs": _pairs_of(st, dec.ranking) if dec.looked else [],
                }
            )
            if (
                blocks is not None
                and not dec.settled
                and st.through < record.plan_hands
                and len(blocks) * record.look_every <= st.through
            ):
                # the next block's tables, from this look (the hands so far) alone: recorded
                # with the look, so every process plays and re-derives the same plan
                chosen = next_block_tables(
                    st, dec, names, record.n_tables, len(blocks), record.seed
                )
                blocks.append([list(t) for t in chosen])
        record.through = st.through
        if st.settled_at is not None:
            final = record.looks[-1]
            dec = _decision(st, int(final["hands"]), final["ranking"])
            record.stop = {
                "reason": "settled",
                "hands": st.settled_at,
                "line": stop_line(dec, budget_reached=False)
                + left_out(st, final["ranking"])
                + f" after {st.settled_at} hands",
            }
        elif st.through >= record.plan_hands:
            last = record.looks[-1] if record.looks else None
            ranking = last["ranking"] if last else list(st.bots)
            dec = _decision(st, st.through, ranking)
            record.stop = {
                "reason": "budget",
                "hands": st.through,
                "line": stop_line(dec, budget_reached=True)
                + left_out(st, ranking)
                + f" after {st.through} hands",
            }
        return record
    assert record.newversion is not None
    nv = record.newversion
    while record.through < record.plan_hands:
        upto = min(record.through + record.look_every, record.plan_hands)
        prefix = plan_ids[:upto]
        if any(h not in stored for h in prefix):
            break
        results = [r for h in prefix if (r := stored[h]) is not None]
        start, record.through = record.through, upto
        gone = given_up(nv, [r for h in plan_ids[start:upto] if (r := stored[h]) is not None])
        # only bots with a rated hand are fitted: a bot whose every seat the stand-in played
        # (left out under forfeit "exclude") got the fit's arbitrary value, and an examination's
        # candidate that crashed at once was "better than the baseline" by 349 Elo
        seated = {f.bot for r in results for f in r.finishes}
        unrated = [b for b in (nv.candidate, nv.baseline) if b not in seated]
        rated = tuple(n for n in names if n in seated)
        if unrated:
            nv.unrated, nv.hands = ", ".join(unrated), len(results)
            record.looks.append(
                {"through": upto, "hands": len(results), "looked": False, "note": no_rated_note(nv)}
            )
            if gone:
                record.stop = gone_stop(nv, gone, upto)
                return record
            continue
        nv.unrated = ""
        fitted = fit_hands(results, rated, bounds=True) if len(rated) >= 2 else None
        if fitted is None:
            record.looks.append({"through": upto, "hands": len(results), "looked": False})
            continue
        d = nv.look(fitted)
        look: dict[str, Any] = {
            "through": upto,
            "hands": d.hands,
            "looked": d.looked,
            "llr": d.llr,
            "gap": d.gap if math.isfinite(d.gap) else None,
            "se": d.se if math.isfinite(d.se) else None,
            "verdict": d.verdict,
        }
        if d.looked and nv.bounded:  # the gap's one-sided limits, not an LLR, were read
            look["bounded"] = nv.limits_text()
        record.looks.append(look)
        if nv.verdict in ("H0", "H1"):
            record.stop = {"reason": nv.verdict, "hands": upto, "line": stop_line_of(nv, upto)}
            return record
        if gone:
            record.stop = gone_stop(nv, gone, upto)
            return record
    if record.through >= record.plan_hands and record.stop is None:
        nv.verdict = "budget"
        nv.decided_at = nv.hands
        record.stop = {"reason": "budget", "hands": record.through, "line": stop_line_of(nv, None)}
    return record


def run_looks(
    record: dict[str, Any],
    plan_ids: list[str],
    stored: dict[str, HandResult | None],
    names: list[str],
) -> dict[str, Any]:
    """:func:`catch_up` on the record's JSON (what the runner sends its refit process)."""
    return catch_up(SequentialRecord.from_dict(record), plan_ids, stored, names).to_dict()


def pair_history(record: SequentialRecord) -> dict[str, list[tuple[int, str]]]:
    """Each pair's status at each look (``{"a~b": [(hands, status), ...]}``; a pair appears
    from the first look at which it is adjacent), for the report's plot and table."""
    out: dict[str, list[tuple[int, str]]] = {}
    for look in record.looks:
        if not look.get("looked"):
            continue
        for p in look.get("pairs", []):
            a, b = p["pair"].split("~")
            key = "~".join(sorted((a, b)))
            out.setdefault(key, []).append((int(look["through"]), str(p["status"])))
    return out
