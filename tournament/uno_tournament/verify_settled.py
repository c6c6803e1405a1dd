"""``verify`` of a run that stopped by a sequential decision (``until = "settled"``,
``--candidate``/``--baseline``).

Such a run plays only a prefix of its plan, so the usual rule ("a finished run stores every
planned hand") does not hold. Instead the decision itself is checked:

* it is **re-derived from the stored hands**: every look is taken again, from an empty test, on
  the same plan prefixes (:func:`uno_tournament.settled_run.catch_up`), and the recorded looks,
  pair statuses, intervals and stop must be what the hands give. An edited decision (a pair's
  status, the stop's hand count or reason, a look removed) does not match; nor does a hand
  edited in a way that changes the ratings;
* **every hand before the stop is stored**: a hand deleted from the middle of the played prefix
  is named (and the re-derived test then cannot reach the recorded stop either);
* hands past the stop (in play when it came) are counted and named in the summary, not errors;
* an adaptive run (``until = "settled"``): the **recorded tables of each block** must be the
  ones the hands before that block choose (:func:`uno_tournament.adaptive.next_block_tables`,
  re-run on the re-derived looks), and every stored hand must sit at its recorded table in its
  recorded seats (``verify`` builds the plan from the record, so a hand whose seats differ is
  named by the usual per-hand check).

A record may trail the hands (a run killed between storing a hand and writing its next look):
its looks must then be the first looks the hands give.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .rating_model import HandResult
from .schedule import HandSpec
from .settled_run import META_KEY, SequentialRecord, catch_up
from .standings import rated_result
from .store import ResultStore

REL_TOL = 1e-6
"""Interval ends and LLRs are compared to this relative tolerance (the fit is deterministic on
one machine; another machine's floating point may differ in the last bits)."""


@dataclass
class SequentialCheck:
    stop_hands: int | None = None
    """The recorded stop (hands of the plan's order the decision used), or None."""
    by_hand: list[tuple[str, str]] = field(default_factory=list)
    other: list[str] = field(default_factory=list)
    summary: str = ""
    past_stop: int = 0


def _same_rules(start: SequentialRecord, recorded: SequentialRecord) -> None:
    """A test recorded before a rule is re-derived without it, as its run continued: the
    new-version test's confidence sequence (:attr:`NewVersionState.sequence`), a settled run's
    bots given up on (:attr:`SettledState.drop_gone`)."""
    if start.newversion is not None and recorded.newversion is not None:
        start.newversion.sequence = recorded.newversion.sequence
    if start.state is not None and recorded.state is not None:
        start.state.drop_gone = recorded.state.drop_gone


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        try:
            x, y = float(a), float(b)
        except (TypeError, ValueError):
            return False
        if math.isinf(x) or math.isinf(y):
            return x == y
        return math.isclose(x, y, rel_tol=REL_TOL, abs_tol=1e-9)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, str) and isinstance(b, str) and a in ("inf", "-inf") and b in ("inf", "-inf"):
        return a == b
    return bool(a == b)


def _look_diff(mine: dict[str, Any], theirs: dict[str, Any]) -> str:
    """What differs between a recorded look and the re-derived one, in a few words."""
    parts = []
    for key in sorted(set(mine) | set(theirs)):
        if key == "pairs":
            continue
        if not _same(mine.get(key), theirs.get(key)):
            parts.append(f"{key} {mine.get(key)!r} vs {theirs.get(key)!r}"[:80])
    a, b = mine.get("pairs") or [], theirs.get("pairs") or []
    for p, q in zip(a, b, strict=False):
        for key in ("pair", "status", "claimed_at", "low", "high"):
            if not _same(p.get(key), q.get(key)):
                parts.append(f"{p.get('pair')} {key} {p.get(key)!r} vs {q.get(key)!r}"[:80])
    if len(a) != len(b):
        parts.append(f"{len(a)} pairs vs {len(b)}")
    return "recorded vs re-derived: " + "; ".join(parts[:3]) if parts else "same values"


def _describe(rec: SequentialRecord | None) -> str:
    if rec is None:
        return "no decision"
    if rec.stop is not None:
        return f"{rec.stop['reason']} after {rec.stop['hands']} hands"
    return f"{len(rec.looks)} looks through {rec.through} hands, no stop"


def _block_problem(recorded: SequentialRecord, fresh: SequentialRecord) -> str:
    """How the recorded block tables of an adaptive run differ from the ones the stored hands
    choose ('' if they agree): block ``k`` must be what the hands of the blocks before it give."""
    mine, theirs = recorded.tables(), fresh.tables()
    if mine is None or theirs is None:
        return ""
    for k in range(min(len(mine), len(theirs))):
        if mine[k] != theirs[k]:
            t = next(
                i
                for i in range(max(len(mine[k]), len(theirs[k])))
                if i >= len(mine[k]) or i >= len(theirs[k]) or mine[k][i] != theirs[k][i]
            )
            got = list(mine[k][t]) if t < len(mine[k]) else "none"
            want = list(theirs[k][t]) if t < len(theirs[k]) else "none"
            return (
                f"block {k}'s recorded tables differ from the ones the hands before it choose "
                f"(table {t}: recorded {got}, re-derived {want}): the record was edited, or a "
                "hand before that block was"
            )
    if len(mine) > len(theirs):
        return (
            f"the record has the tables of {len(mine)} blocks, the stored hands choose only "
            f"{len(theirs)}: a hand is missing, or the record was edited"
        )
    return ""


def _state_problem(
    recorded: SequentialRecord,
    fresh: SequentialRecord,
    config: Any,
    plan: Sequence[HandSpec],
    plan_ids: Sequence[str],
    stored: dict[str, HandResult | None],
    names: Sequence[str],
) -> str:
    """How the record's test state (every pair's status, interval and claim, or the
    new-version test's LLR: what the report's tables print) differs from the one the stored
    hands give after the same looks ('' if it does not). A record that trails the hands (a run
    killed between a hand and its look) is compared with the hands it covers."""
    if len(fresh.looks) != len(recorded.looks):
        if len(fresh.looks) < len(recorded.looks):
            return ""  # the missing looks are named already
        covered = set(plan_ids[: recorded.through])
        again = SequentialRecord.new(config, plan)
        if again.state is not None and recorded.state is not None:
            again.state.rho = recorded.state.rho
        _same_rules(again, recorded)
        fresh = catch_up(again, plan_ids, {h: r for h, r in stored.items() if h in covered}, names)
        if len(fresh.looks) != len(recorded.looks):
            return ""
    if recorded.state is not None and fresh.state is not None:
        mine, theirs = recorded.state.to_dict(), fresh.state.to_dict()
        for key in sorted(set(mine) | set(theirs)):
            if key == "pairs":
                continue
            if not _same(mine.get(key), theirs.get(key)):
                return (
                    f"the record's test state has {key} {mine.get(key)!r}, the stored hands give "
                    f"{theirs.get(key)!r}: the record was edited"
                )
        a = {(p.get("a"), p.get("b")): p for p in mine.get("pairs") or []}
        b = {(p.get("a"), p.get("b")): p for p in theirs.get("pairs") or []}
        if a.keys() != b.keys():
            return "the record's test state names other pairs than the bots give: edited"
        for ab, p in a.items():
            q = b[ab]
            for col in sorted(set(p) | set(q)):
                if not _same(p.get(col), q.get(col)):
                    return (
                        f"the record's pair {ab[0]}~{ab[1]} has {col} {p.get(col)!r}, the "
                        f"stored hands give {q.get(col)!r} (what the report prints as the "
                        "pair's status): the record was edited"
                    )
    if recorded.newversion is not None and fresh.newversion is not None:
        mine, theirs = recorded.newversion.to_dict(), fresh.newversion.to_dict()
        for key in sorted(set(mine) | set(theirs)):
            if not _same(mine.get(key), theirs.get(key)):
                return (
                    f"the record's new-version test has {key} {mine.get(key)!r}, the stored "
                    f"hands give {theirs.get(key)!r}: the record was edited"
                )
    return ""


def check_sequential(
    store: ResultStore,
    config: Any,
    plan: Sequence[HandSpec],
    *,
    reported: dict[str, Any] | None = None,
) -> SequentialCheck:
    """Re-derive the decision from the stored hands and compare it with the record.
    ``reported``: the stop the run's results.json reports (then the record must have it)."""
    finished = reported is not None
    out = SequentialCheck()
    plan_ids = [h.hand_id for h in plan]
    index = {h: k for k, h in enumerate(plan_ids)}
    stored: dict[str, HandResult | None] = {}
    for h in store.hand_rows():
        if h.hand_id in index:
            stored[h.hand_id] = rated_result(h, config.faults.forfeit)
    names = [b.name for b in config.bots]
    raw = store.meta().get(META_KEY)
    recorded: SequentialRecord | None = None
    if raw is not None:
        try:
            recorded = SequentialRecord.from_dict(raw)
        except (KeyError, ValueError, TypeError) as exc:
            out.other.append(f"sequential decision: the stored record is unreadable ({exc})")
            return out
    where = "sequential decision"
    start = SequentialRecord.new(config, plan)
    if recorded is not None and recorded.state is not None and start.state is not None:
        # the mixture's rho was fixed when the run started (a later version may tune it
        # otherwise); any fixed rho is valid, so the re-derivation uses the recorded one
        for key in ("alpha", "indifference_elo", "min_hands_per_bot"):
            if getattr(recorded.state, key) != getattr(start.state, key):
                out.other.append(
                    f"{where}: the record's {key} is {getattr(recorded.state, key)!r}, the "
                    f"configuration's {getattr(start.state, key)!r}"
                )
                return out
        if not _same(recorded.state.rho, start.state.rho):
            # rho is fixed by the settings before the run (settled.tune_rho); one chosen after
            # the hands were seen would move every interval and claim, so it is not taken
            out.other.append(
                f"{where}: the record's rho is {recorded.state.rho!r}, the settings give "
                f"{start.state.rho!r} (the mixture is tuned before the run, from alpha and "
                "indifference_elo: the record was edited, or written by another version)"[:400]
            )
            return out
    if recorded is not None:
        _same_rules(start, recorded)
    fresh = catch_up(start, plan_ids, stored, names)
    if recorded is None:
        if finished or fresh.looks:
            out.other.append(
                f"{where}: none recorded, though the hands give {_describe(fresh)} (the record "
                "was deleted)"
            )
        return out
    out.stop_hands = recorded.stop_hands
    mine, theirs = recorded.decision_of(), fresh.decision_of()
    n = len(recorded.looks)
    for key in ("kind", "plan_hands", "look_every"):
        if mine[key] != theirs[key]:
            out.other.append(
                f"{where}: the record's {key} is {mine[key]!r}, the configuration gives "
                f"{theirs[key]!r}"[:300]
            )
            return out
    bad_block = _block_problem(recorded, fresh)
    if bad_block:
        out.other.append(f"{where}: {bad_block}"[:400])
    unchosen = [h for h in plan if not h.bots and h.hand_id in stored]
    if unchosen:
        out.other.append(
            f"{where}: {len(unchosen)} stored hands (the first {unchosen[0].hand_id}) belong "
            f"to block {unchosen[0].block} or later, whose tables the record lacks: the record "
            "was edited or is not this run's"[:400]
        )
    bad_look = next(
        (
            k
            for k in range(min(n, len(fresh.looks)))
            if not _same(recorded.looks[k], fresh.looks[k])
        ),
        None,
    )
    if bad_look is not None:
        at = recorded.looks[bad_look].get("through")
        what = _look_diff(recorded.looks[bad_look], fresh.looks[bad_look])
        out.other.append(
            f"{where}: look {bad_look + 1} (at {at} hands) differs from the one the stored hands "
            f"give ({what}): the decision was edited, or a hand before it was"[:400]
        )
    elif n > len(fresh.looks):
        out.other.append(
            f"{where}: the record has {n} looks, the stored hands give only {len(fresh.looks)} "
            f"({_describe(recorded)} recorded, {_describe(fresh)} re-derived): a hand before "
            "the stop is missing, or the record was edited"
        )
    elif recorded.stop is None and fresh.stop is not None and n >= len(fresh.looks):
        # a record trails the hands only by looks not yet taken: with the look that decided,
        # the stop is written in the same update (an examination removed it: verify passed,
        # the report said "not stopped yet" and resume waited for ever)
        out.other.append(
            f"{where}: the record has no stop, though its own looks include the one that "
            f"stopped the run ({_describe(fresh)} re-derived): the stop was removed"
        )
    elif recorded.stop is not None and n < len(fresh.looks):
        out.other.append(
            f"{where}: the record stops ({_describe(recorded)}) with {n} of the "
            f"{len(fresh.looks)} looks the stored hands give: a look was removed"
        )
    elif recorded.stop is not None and not _same(recorded.stop, fresh.stop):
        out.other.append(
            f"{where}: the record says {_describe(recorded)}, the stored hands give "
            f"{_describe(fresh)}"
        )
    elif recorded.stop is None and finished:
        out.other.append(
            f"{where}: the run's reports say it ended, but the record has no stop (the hands "
            f"give {_describe(fresh)})"
        )
    state_problem = _state_problem(recorded, fresh, config, plan, plan_ids, stored, names)
    if state_problem and bad_look is None:
        out.other.append(f"{where}: {state_problem}"[:400])
    if reported is not None and recorded.stop is not None and not _same(reported, recorded.stop):
        out.other.append(
            f"{where}: results.json reports {reported.get('reason')} after "
            f"{reported.get('hands')} hands, the record {_describe(recorded)}"[:300]
        )
    if recorded.stop is not None:
        stop = int(recorded.stop["hands"])
        for hid in plan_ids[:stop]:
            if hid not in stored:
                out.by_hand.append(
                    (
                        hid,
                        f"hands: missing (the run stopped by its recorded decision after {stop} "
                        "hands; this hand is before the stop)",
                    )
                )
        out.past_stop = sum(1 for hid in plan_ids[stop:] if hid in stored)
        past = (
            f", {out.past_stop} more stored past it (in play at the stop)" if out.past_stop else ""
        )
        out.summary = f"{recorded.stop['line']}; decision re-derived from the hands{past}"
    return out
