"""Runs that stop by a sequential decision (issue 24): ``until = "settled"`` and
``tournament run --candidate NEW --baseline OLD``, wired into the harness.

Unit tests check the config, the plan and the looks on engine-played hands (resume from a saved
record is exact, whatever order the hands arrive in). Real runs (graded engine bots over the
wire) check the early stop, the budget stop, the shard workers following the decision, kill -9
and resume, verify on an early-stopped run and on an edited decision, and the candidate/baseline
command."""

from __future__ import annotations

import json
import math
import random
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from uno_server.engine import Hand, HeuristicBot, RuleSet
from uno_server.engine.simulate import play_hand
from uno_tournament import chain, cli
from uno_tournament.adaptive import block_hands
from uno_tournament.config import BotSpec, ConfigError, TournamentConfig, parse
from uno_tournament.config_stored import load_config
from uno_tournament.ratings import HandResult
from uno_tournament.schedule import plan as schedule_plan
from uno_tournament.settled import SettledState, advance
from uno_tournament.settled_run import (
    META_KEY,
    SequentialRecord,
    adaptive_tables,
    catch_up,
    first_block,
    resolve,
    settled_plan,
)
from uno_tournament.standings import rated_result
from uno_tournament.store import Store

from .helpers import graded, write_config
from .pg import TempPostgres
from .test_resume import kill_at_observed_point

# ------------------------------------------------------------------------------ config


def _tournament(**keys: object) -> dict[str, object]:
    bots = [{"name": f"b{i}", "token": f"token-{i}-0123456789abcdef"} for i in range(4)]
    return {"tournament": {"name": "t", **keys}, "bots": bots}


@pytest.mark.parametrize(
    ("keys", "field"),
    [
        ({"until": "forever"}, "tournament.until"),
        ({"until": 1}, "tournament.until"),
        ({"until": "settled", "alpha": 0}, "tournament.alpha"),
        ({"until": "settled", "alpha": 0.5}, "tournament.alpha"),
        ({"until": "settled", "alpha": "low"}, "tournament.alpha"),
        ({"until": "settled", "indifference_elo": 0}, "tournament.indifference_elo"),
        ({"until": "settled", "indifference_elo": 501}, "tournament.indifference_elo"),
        ({"until": "settled", "max_hands": 23}, "tournament.max_hands"),
        ({"until": "settled", "max_hands": 10**8}, "tournament.max_hands"),
        ({"until": "settled", "max_hands": 2.5}, "tournament.max_hands"),
        ({"until": "settled", "hands": 5000}, "tournament.hands"),
        ({"until": "settled", "precision_elo": 30}, "tournament.precision_elo"),
        ({"until": "settled", "blocks": 2}, "tournament.blocks"),
        ({"alpha": 0.1}, "tournament.alpha"),
        ({"max_hands": 1000}, "tournament.max_hands"),
    ],
)
def test_bad_settled_settings_name_the_field(keys: dict[str, object], field: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse(_tournament(**keys), Path("."))
    assert str(err.value).startswith(field + ":"), str(err.value)


@pytest.mark.parametrize(
    "alpha", [0, 0.5, -0.1, float("nan"), float("inf"), 1e-13, 5e-324, 0.4999999999999, 0.491]
)
def test_every_alpha_out_of_range_gets_one_wording(alpha: float) -> None:
    """0 and 0.5 said "more than 0 and less than 0.5", nan "must be 0-0.5"; 1e-13 and
    0.4999999999999 were taken by a run that report, verify and resume then refused as edited
    (the stored configuration's check had another range), and 5e-324 failed inside the run."""
    with pytest.raises(ConfigError) as err:
        parse(_tournament(until="settled", alpha=alpha), Path("."))
    assert "tournament.alpha: must be at least 1e-9 and at most 0.49, got " in str(err.value)


@pytest.mark.parametrize("alpha", [1e-9, 0.49])
def test_the_ends_of_alpha_are_taken_by_a_file_and_by_a_stored_config(alpha: float) -> None:
    from uno_tournament.config_stored import _check_stored

    c = parse(_tournament(until="settled", alpha=alpha), Path("."))
    assert c.alpha == alpha
    _check_stored(c)  # what report, verify and resume check: the same range


def test_settled_settings_and_defaults() -> None:
    c = parse(_tournament(until="settled"), Path("."))
    assert (c.until, c.alpha, c.indifference_elo, c.max_hands) == ("settled", 0.05, 10.0, 20_000)
    c = parse(
        _tournament(until="settled", alpha=0.1, indifference_elo=25, max_hands=480), Path(".")
    )
    assert (c.alpha, c.indifference_elo, c.max_hands, c.sequential) == (0.1, 25.0, 480, True)
    assert TournamentConfig.from_dict(c.to_dict()) == c
    plain = parse(_tournament(), Path("."))
    assert not plain.sequential and plain.max_hands == 0


def test_cli_refuses_a_bad_settled_config_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cfg = tmp_path / "t.toml"
    cfg.write_text(
        '[tournament]\nname = "t"\nuntil = "settled"\nalpha = 0.7\n'
        + "".join(
            f'[[bots]]\nname = "b{i}"\ntoken = "token-{i}-0123456789abcdef"\n' for i in range(4)
        )
    )
    assert cli.main(["tournament", "run", str(cfg), "--quiet"]) == cli.EXIT_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tournament.alpha" in err[0], err


# ------------------------------------------------------------------------------ the plan


def _config(names: list[str], **kw: object) -> TournamentConfig:
    return TournamentConfig(name="x", bots=tuple(BotSpec(n, ("x",)) for n in names), seed=3, **kw)  # type: ignore[arg-type]


class _Meta:
    """A store as the plan reads it: only its meta table."""

    def __init__(self, rec: SequentialRecord | None) -> None:
        self.rec = rec

    def meta(self) -> dict[str, object]:
        return {} if self.rec is None else {META_KEY: self.rec.to_dict()}


def test_settled_plan_has_block_0_and_the_ids_of_the_rest_cut_at_the_budget() -> None:
    names = ["a", "b", "c", "d", "e"]
    cfg = _config(names, until="settled", max_hands=500)
    p = settled_plan(cfg, "T")
    assert len(p) == 500
    n_tables = adaptive_tables(names)
    assert n_tables == 8  # a small field repeats its 5 combinations (each table, other deals)
    assert adaptive_tables(["a", "b", "c", "d"]) == 8  # was 1 table: 24 hands, 6 deals
    assert adaptive_tables([f"b{i}" for i in range(8)]) == 8
    assert adaptive_tables([f"b{i}" for i in range(20)]) == 14  # twice the 7 floor tables
    block = n_tables * 24
    rec = SequentialRecord.new(cfg, p)
    assert rec.look_every == block and rec.blocks is not None and len(rec.blocks) == 1
    # block 0: the recorded (balanced) tables, 6 deals x 4 rotations each, deal by deal
    assert [h.hand_id for h in p[:block]] == [
        h.hand_id for h in block_hands("T", first_block(cfg), 0, 3)
    ]
    assert all(h.bots for h in p[:block]) and not any(h.bots for h in p[block:])
    # the later blocks: ids, deal seeds and positions fixed in advance, no bots yet
    assert {(h.block, h.table) for h in p[block:]} == {
        (b, t) for b in range(1, math.ceil(500 / block)) for t in range(n_tables)
    }  # the last block cut at the budget after its first deals (a deal spans every table)
    assert cfg.plan("T") == p and cfg.design().tables == [tuple(t) for t in rec.blocks[0]]
    # a recorded block 1 fills its hands in, exactly as resolve() does
    rec.blocks.append([["e", "d", "c", "b"]] * n_tables)
    with_1 = settled_plan(cfg, "T", _Meta(rec))
    assert [h.hand_id for h in with_1] == [h.hand_id for h in p]
    assert with_1[block : 2 * block] == block_hands("T", [("e", "d", "c", "b")] * n_tables, 1, 3)
    assert resolve(p[block], rec.blocks) == with_1[block]
    assert not with_1[2 * block].bots
    with pytest.raises(LookupError):
        resolve(p[2 * block], rec.blocks)


def test_a_fixed_until_keeps_the_fixed_plan() -> None:
    names = ["a", "b", "c", "d", "e"]
    cfg = _config(names, blocks=2)
    assert cfg.plan("T") == schedule_plan("T", names, blocks=2, seed=3)
    assert cfg.plan("T", _Meta(None)) == cfg.plan("T")


def test_new_version_plan_seats_both_versions_at_every_table() -> None:
    names = ["new", "old", "f1", "f2", "f3"]
    cfg = _config(names, until="", max_hands=300, candidate="new", baseline="old")
    p = cfg.plan("T")
    assert len(p) == 300
    assert all({"new", "old"} <= set(h.bots) for h in p)
    assert {b for h in p for b in h.bots} == set(names)


# ------------------------------------------------------------------------------ the looks

EPS = {"a": 0.0, "b": 0.3, "c": 0.65, "d": 1.0}


def _engine_hands(
    cfg: TournamentConfig, seed: int, eps: dict[str, float] | None = None
) -> tuple[list[str], dict[str, HandResult]]:
    """The hands of one run, played as the runner plays them: a look's hands at a time, each
    adaptive block at the tables the record holds (chosen at the look before it)."""
    eps = eps or EPS
    names = list(eps)
    rng = random.Random(seed)
    rules = RuleSet(scoring="single_hand")
    out: dict[str, HandResult] = {}
    rec = SequentialRecord.new(cfg, cfg.plan("T"))
    ids = [h.hand_id for h in cfg.plan("T")]
    while True:
        p = cfg.plan("T", _Meta(rec))
        upto = rec.next_boundary()
        if upto is None:  # stopped (settled, or the budget)
            return ids, out
        for spec in p[rec.through : upto]:
            assert spec.bots, "a hand of a block whose tables are not recorded"
            bots = [HeuristicBot(seed=rng.getrandbits(63), randomness=eps[b]) for b in spec.bots]
            hand = play_hand(Hand.deal(rules, spec.seed, 0), bots)
            out[spec.hand_id] = HandResult.from_points(
                spec.hand_id,
                spec.deal_id,
                spec.bots[hand.winner],
                [(b, s, hand.points_held(s)) for s, b in enumerate(spec.bots)],
            )
        catch_up(rec, ids, dict(out), names)


EPS6 = {"a": 0.0, "b": 0.2, "c": 0.4, "d": 0.6, "e": 0.8, "f": 1.0}


def test_resumed_looks_equal_one_pass_whatever_the_arrival_order() -> None:
    """The record saved (as JSON) part-way and continued, with hands arriving out of order,
    reaches exactly the one-pass decision: same looks, same claims, same block tables, same
    stop."""
    cfg = _config(list(EPS6), until="settled", max_hands=1920, alpha=0.2, indifference_elo=60)
    ids, hands = _engine_hands(cfg, 1, EPS6)
    names = list(EPS6)
    one = catch_up(SequentialRecord.new(cfg, cfg.plan("T")), ids, hands, names)
    assert one.stop is not None and len(one.looks) >= 2
    assert one.blocks is not None and len(one.blocks) == len(one.looks) + (
        one.stop["reason"] != "settled"
    )
    # the blocks after the first follow the open pairs: not the balanced design again
    assert one.blocks[1] != one.blocks[0]
    played = [h for h in ids if h in hands]
    half = played[: len(played) // 2]
    random.Random(5).shuffle(half)  # out of order within the first half
    order = half + played[len(played) // 2 :]
    rec = SequentialRecord.new(cfg, cfg.plan("T"))
    seen: dict[str, HandResult | None] = {}
    for k, hid in enumerate(order, 1):
        seen[hid] = hands[hid]
        if k % 37 == 0:  # a "kill": only the JSON survives
            rec = SequentialRecord.from_dict(json.loads(json.dumps(rec.to_dict())))
        catch_up(rec, ids, seen, names)
    assert rec.decision_of() == one.decision_of()


def test_adaptive_looks_combine_per_block_fits() -> None:
    """The adaptive run's claims come from the per-block combination (each block's hands fitted
    alone, :meth:`SettledState.look_block`), not from the pooled fit of all hands, which is not
    valid when the tables follow the data. Re-derived here look by look with ``advance(...,
    by_block=True)``: the recorded intervals are that combination's, and they differ from the
    pooled fit's."""
    cfg = _config(list(EPS6), until="settled", max_hands=1920, alpha=0.2, indifference_elo=60)
    ids, hands = _engine_hands(cfg, 2, EPS6)
    names = list(EPS6)
    rec = catch_up(SequentialRecord.new(cfg, cfg.plan("T")), ids, hands, names)
    assert rec.state is not None and len(rec.looks) >= 2
    by_block = SettledState(tuple(names), alpha=0.2, indifference_elo=60)
    pooled = SettledState(tuple(names), alpha=0.2, indifference_elo=60)
    by_block.rho = pooled.rho = rec.state.rho
    differs = 0
    for look in rec.looks:
        prefix = ids[: look["through"]]
        advance(by_block, prefix, hands, rec.look_every, by_block=True)
        advance(pooled, prefix, hands, rec.look_every, by_block=False)
        for p in look["pairs"]:
            x, y = p["pair"].split("~")
            mine = by_block.pair(x, y).to_dict()
            assert (p["low"], p["high"], p["status"]) == (mine["low"], mine["high"], mine["status"])
            other = pooled.pair(x, y).to_dict()
            differs += (other["low"], other["high"]) != (mine["low"], mine["high"])
    assert differs > 0


def test_budget_stop_with_the_pairs_open() -> None:
    cfg = _config(list(EPS), until="settled", max_hands=48)
    ids, hands = _engine_hands(cfg, 2)
    rec = catch_up(SequentialRecord.new(cfg, cfg.plan("T")), ids, hands, list(EPS))
    assert rec.stop is not None and rec.stop["reason"] == "budget" and rec.stop["hands"] == 48
    assert "stopped: budget, 3 pairs open" in rec.stop["line"]
    # no look was taken (96 hands of every bot come first): the report says so, not just
    # "pairs still open" over an empty pair table (an examination)
    from uno_tournament.report_settled import why_line

    why = why_line(rec)
    assert "before the sequential test could take a look (fewer than 96 hands" in why, why
    assert "the first look needs 96 hands of every bot" in why, why


# ------------------------------------------------------------------------------ real runs


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "uno_server.cli", *args]


def _settled_config(folder: Path, settings: str, bots: dict[str, float] | None = None) -> Path:
    ps = bots or {"g0": 0.0, "g0b": 0.0, "g1": 0.5, "g2": 1.0}
    cfg = write_config(folder, [graded(n, p) for n, p in ps.items()], name="settle", concurrency=6)
    cfg.write_text(cfg.read_text().replace("blocks = 1\n", settings))
    return cfg


def _record(out: Path) -> dict[str, object]:
    conn = sqlite3.connect(out / "tournament.sqlite")
    try:
        row = conn.execute("SELECT value FROM meta WHERE key = ?", (META_KEY,)).fetchone()
        return dict(json.loads(row[0]))
    finally:
        conn.close()


def _count(out: Path) -> int:
    conn = sqlite3.connect(out / "tournament.sqlite")
    try:
        return int(conn.execute("SELECT COUNT(*) FROM hands").fetchone()[0])
    finally:
        conn.close()


def _rolled_back(out: Path, looks: int) -> dict[str, object]:
    """The run's sequential record as it stood after its first ``looks`` looks: re-derived from
    the hands of those looks only (what an edit rolling the record back would write)."""
    store = Store.open(out, readonly=True)
    try:
        config = load_config(store, out)
        tid = str(store.meta()["tournament_id"])
        plan = config.plan(tid, store)
        every = int(str(_record(out)["look_every"]))
        first = {h.hand_id for h in plan[: looks * every]}
        stored = {
            h.hand_id: rated_result(h, config.faults.forfeit)
            for h in store.hand_rows()
            if h.hand_id in first
        }
        start = SequentialRecord.new(config, plan)
        rec = catch_up(start, [h.hand_id for h in plan], stored, [b.name for b in config.bots])
        out_rec = rec.to_dict()
        # an adaptive run's block tables kept as they were (the hands played at them are
        # stored): only the looks, the state and the stop are rolled back
        out_rec["blocks"] = _record(out).get("blocks")
        return out_rec
    finally:
        store.close()


def _older_chain(out: Path) -> dict[str, object]:
    """The run's chain as the version before the decision was chained wrote it."""
    store = Store.open(out, readonly=True)
    try:
        config = load_config(store, out)
        plan = config.plan(str(store.meta()["tournament_id"]), store)
        return chain.compute(
            store, [h.hand_id for h in plan], algorithm=chain.NO_DECISION
        ).to_json()
    finally:
        store.close()


def _set_record(conn: sqlite3.Connection, record: object) -> None:
    """Store ``record`` as the run's sequential decision (an edit, or the original back)."""
    conn.execute("UPDATE meta SET value = ? WHERE key = ?", (json.dumps(record), META_KEY))
    conn.commit()


def _report(out: Path) -> None:
    r = subprocess.run(
        _cli("tournament", "report", str(out)),
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def _verify(out: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        _cli("tournament", "verify", str(out), *extra),
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )


ADAPTIVE = {"g0": 0.0, "g1": 0.25, "g2": 0.5, "g3": 0.75, "g4": 1.0}
"""Five bots: blocks of eight tables (the five four-bot combinations, some twice), chosen from
the looks."""


EARLY_BUDGET = 1440
"""Seven and a half eight-table blocks (twelve five-table blocks before the blocks of a small
field grew to eight tables): on engine-played hands this field settles at its second look (384
hands) in 9 of 10 simulated runs and at its third in the other (2026-12-06); with five-table
blocks it settled after 2-3 looks (240-360 hands in four runs here) but once reached the fourth
look in CI; a budget of twelve keeps "settled before the
budget" a property of the decision, not a coin toss, and costs nothing when the run settles.
With ``indifference_elo = 300`` a run settled at its first look once (2026-12-05, beside other
jobs), so the shards never played an adaptive block and the test failed: at 200, a pair is
certified tied only with an interval inside +-200, narrower than the first look gives here
(5 of 5 runs since played two blocks or more, 52-73 s)."""
EARLY = f'until = "settled"\nalpha = 0.3\nindifference_elo = 200\nmax_hands = {EARLY_BUDGET}\n'


def test_run_stops_when_settled_on_shards_and_verify_checks_the_decision(tmp_path: Path) -> None:
    """Two shard workers follow the decision: the run stops well before its budget, at a look,
    with every hand before the stop stored and at most the hands in play past it. Five bots,
    so the workers play adaptive blocks whose tables they read from the record. verify
    accepts it, and catches an edited decision and a hand deleted before the stop."""
    for attempt in range(3):  # a run that settles at its first look plays no adaptive block
        where = tmp_path / f"try{attempt}"
        where.mkdir()
        cfg = _settled_config(where, EARLY, ADAPTIVE)
        out = where / "out"
        r = subprocess.run(
            _cli("tournament", "run", str(cfg), "--quiet", "--shards", "2"),
            check=False,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert r.returncode == 0, r.stdout + r.stderr
        rec = _record(out)
        if len(rec["blocks"]) >= 2:  # type: ignore[arg-type]
            break
    stop = rec["stop"]
    assert isinstance(stop, dict) and stop["reason"] == "settled", rec["stop"]
    hands = int(stop["hands"])
    assert hands < EARLY_BUDGET and hands % int(str(rec["look_every"])) == 0
    assert len(rec["blocks"]) >= 2  # type: ignore[arg-type]
    assert r.stdout.strip().splitlines()[-1].startswith("stopped: settled"), r.stdout[-500:]
    stored = _count(out)
    assert stored == hands, (hands, stored)  # no table starts a hand the decision has not allowed
    results = json.loads((out / "results.json").read_text())
    assert results["sequential"]["stop"] == stop
    assert "Why the run stopped" in (out / "leaderboard.md").read_text()
    assert "<rect" in (out / "report.html").read_text()
    v = _verify(out)
    assert v.returncode == 0, v.stdout + v.stderr
    assert "stopped: settled" in v.stdout and "re-derived" in v.stdout

    # an edited decision: a pair's status changed in the record
    conn = sqlite3.connect(out / "tournament.sqlite")
    edited = json.loads(json.dumps(rec))
    pairs = edited["looks"][-1]["pairs"]
    pairs[0]["status"] = "open" if pairs[0]["status"] != "open" else "better"
    _set_record(conn, edited)
    v = _verify(out)
    assert v.returncode == 1 and "sequential decision: look" in v.stdout, v.stdout
    _set_record(conn, rec)
    assert _verify(out).returncode == 0

    # the test's final state, which the report's "Why the run stopped" table prints: an
    # examiner made a pair "better" there, wrote the report again, and verify passed
    edited = json.loads(json.dumps(rec))
    forged = edited["state"]["pairs"][0]
    forged.update(status="better", low=20.0, high=260.0, claimed_at=hands // 2)
    _set_record(conn, edited)
    v = _verify(out)
    assert v.returncode == 1 and f"pair {forged['a']}~{forged['b']}" in v.stdout, v.stdout
    # the mixture's rho chosen after the hands were seen (every interval and claim moves)
    edited = json.loads(json.dumps(rec))
    edited["state"]["rho"] *= 3.0
    _set_record(conn, edited)
    v = _verify(out)
    assert v.returncode == 1 and "the record's rho is" in v.stdout, v.stdout
    # a record of another test (a shard with another alpha wrote it, an examination): the
    # cause comes first, not as problem 386 after every hand past the stop listed as missing
    edited = json.loads(json.dumps(rec))
    edited["state"]["alpha"] = 0.05
    _set_record(conn, edited)
    v = _verify(out)
    assert v.returncode == 1, v.stdout
    first = v.stdout.splitlines()[:2]  # the chain's and the record's lines, before any hand's
    assert "meta.sequential" in first[0] and "the record's alpha is 0.05" in first[1], first
    assert "missing" not in v.stdout, v.stdout[:2000]
    _set_record(conn, rec)
    assert _verify(out).returncode == 0

    # the stop removed, the looks kept (an examination: verify passed, the report said "not
    # stopped yet", and resume waited for ever at 0 hands/s)
    edited = json.loads(json.dumps(rec))
    edited["stop"] = None
    _set_record(conn, edited)
    v = _verify(out)
    assert v.returncode == 1 and "the stop was removed" in v.stdout, v.stdout
    for results_json in (True, False):  # refused by the reported stop, or by the record
        if not results_json:
            (out / "results.json").rename(out / "results.kept")
        res = subprocess.run(
            _cli("tournament", "resume", str(out)),
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        want = "but the stored decision has no stop" if results_json else "has decided but"
        assert res.returncode == 2 and want in res.stderr, res.stderr
    (out / "results.kept").rename(out / "results.json")
    # the last look removed, the stop kept
    edited = json.loads(json.dumps(rec))
    edited["looks"] = edited["looks"][:-1]
    _set_record(conn, edited)
    v = _verify(out)
    assert v.returncode == 1 and "a look was removed" in v.stdout, v.stdout
    _set_record(conn, rec)
    assert _verify(out).returncode == 0

    # the record rolled back to its first look, its stop gone: a consistent record that trails
    # the hands (as a run killed between a hand and its look leaves one), so re-deriving the
    # decision accepts it, and the reports written again from it say "undecided". Only the
    # chain, which holds the decision, sees it: the head published with the results differs
    rolled = _rolled_back(out, looks=1)
    assert rolled["stop"] is None and len(rolled["looks"]) == 1  # type: ignore[arg-type]
    published = results["chain"]["head"]
    kept = (out / "results.json").read_bytes()
    _set_record(conn, rolled)
    # report refuses while results.json reports the stop (a stop, once reported, stays)
    r = subprocess.run(
        _cli("tournament", "report", str(out)),
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 2 and "but the stored decision has no stop" in r.stderr, r.stderr
    assert (out / "results.json").read_bytes() == kept
    (out / "results.json").unlink()  # the deliberate way past it: the head still tells
    _report(out)
    assert json.loads((out / "results.json").read_text())["sequential"]["stop"] is None
    v = _verify(out, "--head", published)
    assert v.returncode == 1 and "chain head" in v.stdout, v.stdout
    (out / "results.json").write_bytes(kept)  # the published results.json names what changed
    v = _verify(out)
    assert v.returncode == 1 and "meta.sequential" in v.stdout, v.stdout
    _set_record(conn, rec)
    _report(out)
    assert _verify(out, "--head", published).returncode == 0
    # a results.json of the version before (uno-arena-chain/2) still verifies, and says the
    # decision is not covered by it
    older = _older_chain(out)
    data = json.loads(kept)
    data["chain"] = older
    (out / "results.json").write_text(json.dumps(data))
    v = _verify(out)
    assert v.returncode == 0 and "sequential decision is not chained" in v.stdout, v.stdout
    (out / "results.json").write_bytes(kept)

    # a hand deleted from the middle of the played prefix
    victim = conn.execute(
        "SELECT hand_id FROM hands WHERE block = 0 AND deal = 1 AND rotation = 2 LIMIT 1"
    ).fetchone()[0]
    conn.execute("DELETE FROM seats WHERE hand_id = ?", (victim,))
    conn.execute("DELETE FROM replays WHERE hand_id = ?", (victim,))
    conn.execute("DELETE FROM hands WHERE hand_id = ?", (victim,))
    conn.commit()
    conn.close()
    v = _verify(out)
    assert v.returncode == 1 and victim in v.stdout, v.stdout


def test_budget_stop_says_which_pairs_are_open(tmp_path: Path) -> None:
    cfg = _settled_config(tmp_path, 'until = "settled"\nmax_hands = 48\n')
    out = tmp_path / "out"
    r = subprocess.run(
        _cli("tournament", "run", str(cfg), "--quiet"),
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("stopped: budget, 3 pairs open:") and "after 48 hands" in last, last
    assert _count(out) == 48
    assert _verify(out).returncode == 0


def test_kill_9_then_resume_continues_the_same_test(tmp_path: Path) -> None:
    """kill -9 after a look, resume: the resumed run's decision is exactly the one the
    sequential test takes on the stored hands in one pass (the same looks, claims and stop)."""
    cfg = _settled_config(  # close bots and a small δ: the test goes on past its first look
        tmp_path,
        'until = "settled"\nalpha = 0.3\nindifference_elo = 20\nmax_hands = 576\n',
        {"g0": 0.0, "g1": 0.1, "g2": 0.2, "g3": 0.3},
    )
    out = tmp_path / "out"
    proc = subprocess.Popen(
        _cli("tournament", "run", str(cfg), "--quiet"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while not (out / "tournament.sqlite").exists() or _looks(out) < 1:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "no look recorded in 120 s"
            time.sleep(0.1)
        kill_at_observed_point(proc, out / "tournament.sqlite", 1, 576)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
    before = _record(out)
    r = subprocess.run(
        _cli("tournament", "resume", str(out), "--quiet"),
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    after = SequentialRecord.from_dict(_record(out))
    assert after.stop is not None
    assert after.looks[: len(before["looks"])] == before["looks"]  # type: ignore[arg-type]
    from uno_tournament.config_stored import load_config
    from uno_tournament.standings import rated_result
    from uno_tournament.store import Store

    store = Store.open(out, readonly=True)
    try:
        config = load_config(store, out)
        p = config.plan(str(store.meta()["tournament_id"]))
        stored = {h.hand_id: rated_result(h, config.faults.forfeit) for h in store.hand_rows()}
    finally:
        store.close()
    fresh = SequentialRecord.new(config, p)
    assert fresh.state is not None and after.state is not None
    fresh.state.rho = after.state.rho
    one = catch_up(fresh, [h.hand_id for h in p], stored, [b.name for b in config.bots])
    assert after.decision_of() == one.decision_of()
    v = _verify(out)
    assert v.returncode == 0, v.stdout + v.stderr


def test_kill_9_in_an_adaptive_block_then_resume_continues_the_same_plan(tmp_path: Path) -> None:
    """Five bots, so the tables of each block after the first follow the open pairs. kill -9
    inside block 1 (its tables chosen at the first look and recorded), at a stored-hand count
    the test has seen; resume. The resumed run plays the recorded tables (the plan the record
    held at the kill is a prefix of the final one), and its whole decision, block tables
    included, is what the sequential test takes on the stored hands in one pass. verify accepts
    it, and catches a recorded block table edited afterwards."""
    cfg = _settled_config(
        tmp_path,
        'until = "settled"\nalpha = 0.05\nindifference_elo = 5\nmax_hands = 576\n',
        ADAPTIVE,
    )
    out = tmp_path / "out"
    db = out / "tournament.sqlite"
    proc = subprocess.Popen(
        _cli("tournament", "run", str(cfg), "--quiet"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:
        deadline = time.monotonic() + 180
        while not db.exists() or _looks(out) < 1:
            assert proc.poll() is None, proc.stdout.read() if proc.stdout else ""
            assert time.monotonic() < deadline, "no look recorded in 180 s"
            time.sleep(0.1)
        at_kill = kill_at_observed_point(proc, db, 200, 576, timeout=180)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=30)
        if proc.stdout is not None:
            proc.stdout.close()
    before = SequentialRecord.from_dict(_record(out))
    assert before.blocks is not None and len(before.blocks) >= 2 and before.stop is None
    assert 192 < at_kill < 384  # inside block 1, whose tables the record holds
    assert _count(out) == at_kill
    r = subprocess.run(
        _cli("tournament", "resume", str(out), "--quiet"),
        check=False,
        capture_output=True,
        text=True,
        timeout=400,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    after = SequentialRecord.from_dict(_record(out))
    assert after.stop is not None and after.blocks is not None
    assert after.blocks[: len(before.blocks)] == before.blocks  # the same plan, continued
    assert after.looks[: len(before.looks)] == before.looks
    from uno_tournament.config_stored import load_config
    from uno_tournament.standings import rated_result
    from uno_tournament.store import Store

    store = Store.open(out, readonly=True)
    try:
        config = load_config(store, out)
        tid = str(store.meta()["tournament_id"])
        p = config.plan(tid, store)
        rows = list(store.hand_rows())
    finally:
        store.close()
    spec = {h.hand_id: h for h in p}
    for h in rows:  # every hand at its recorded table, in its recorded seats
        assert spec[h.hand_id].bots, h.hand_id
        assert tuple(s.bot for s in sorted(h.seats, key=lambda s: s.seat)) == spec[h.hand_id].bots
    stored = {h.hand_id: rated_result(h, config.faults.forfeit) for h in rows}
    fresh = SequentialRecord.new(config, p)
    assert fresh.state is not None and after.state is not None
    fresh.state.rho = after.state.rho
    one = catch_up(fresh, [h.hand_id for h in p], stored, [b.name for b in config.bots])
    assert after.decision_of() == one.decision_of()  # looks, claims, stop and block tables
    v = _verify(out)
    assert v.returncode == 0, v.stdout + v.stderr
    board = (out / "leaderboard.md").read_text()
    assert "Tables each bot sat at" in board and "| 1 | " in board

    # an edited recorded table: block 1's first table seats another bot
    edited = json.loads(json.dumps(_record(out)))
    table = edited["blocks"][1][0]
    table[0] = next(b for b in ADAPTIVE if b not in table)
    conn = sqlite3.connect(db)
    try:
        _set_record(conn, edited)
    finally:
        conn.close()
    v = _verify(out)
    assert v.returncode == 1, v.stdout + v.stderr
    assert "t0/b1/d0/r0: seats.bot" in v.stdout, v.stdout[-3000:]  # the hands no longer match
    from uno_tournament.verify_settled import check_sequential

    store = Store.open(out, readonly=True)
    try:
        check = check_sequential(store, config, config.plan(tid, store))
    finally:
        store.close()
    assert any("block 1's recorded tables differ" in line for line in check.other), check.other

    # a record cut back to block 0: the stored hands of block 1 have no recorded tables
    edited["blocks"] = edited["blocks"][:1]
    conn = sqlite3.connect(db)
    try:
        _set_record(conn, edited)
    finally:
        conn.close()
    assert _verify(out).returncode == 1
    store = Store.open(out, readonly=True)
    try:
        check = check_sequential(store, config, config.plan(tid, store))
    finally:
        store.close()
    assert any("whose tables the record lacks" in line for line in check.other), check.other


def _looks(out: Path) -> int:
    try:
        looks = _record(out)["looks"]
    except (sqlite3.Error, TypeError):
        return 0
    assert isinstance(looks, list)
    return sum(1 for lk in looks if lk.get("looked"))


# ------------------------------------------------------------------------------ new version


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--candidate", "g0"], "together"),
        (["--candidate", "nobody", "--baseline", "g0"], "--candidate 'nobody'"),
        (["--candidate", "g0", "--baseline", "x" * 300], "--baseline 'xxxx"),
        (["--candidate", "g0", "--baseline", "g0"], "two different bots"),
    ],
)
def test_candidate_baseline_arguments_are_checked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], needle: str
) -> None:
    cfg = _settled_config(tmp_path, "")
    assert cli.main(["tournament", "run", str(cfg), "--quiet", *args]) == cli.EXIT_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and needle in err[0] and len(err[0]) < 500, err


def test_a_size_in_the_file_is_not_dropped_by_candidate(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``blocks = 1`` in [tournament] with --candidate started a run of 20000 hands without a
    word (an examination); --blocks on the command line was already refused."""
    cfg = _settled_config(tmp_path, "blocks = 1\n")
    args = ["--candidate", "g0", "--baseline", "g1"]
    assert cli.main(["tournament", "run", str(cfg), "--quiet", *args]) == cli.EXIT_ERROR
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "tournament.blocks: not with --candidate/--baseline" in err[0], err


def _new_version_run(cfg: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    """``tournament run CFG --candidate new --baseline old``, which must exit 0."""
    r = subprocess.run(
        _cli("tournament", "run", str(cfg), "--candidate", "new", "--baseline", "old", *extra),
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    return r


def test_candidate_better_than_baseline_stops_at_h1(tmp_path: Path) -> None:
    """A candidate far better than its baseline is accepted before the budget. The bots' random
    choices differ from run to run (they are seeded by the match id), so the budget is set
    where the engine says the stop lands: in 200 simulated runs of this design the median stop
    was 192 hands and the latest 576, but 2 of the first 60 had not decided by 480 (a CI run
    did not either; a third was stuck by a fit bug of the simulator's, since fixed)."""
    cfg = _settled_config(
        tmp_path,
        'until = "settled"\nalpha = 0.05\nindifference_elo = 50\nmax_hands = 960\n',
        {"new": 0.0, "old": 1.0, "f1": 0.3, "f2": 0.5},
    )
    out = tmp_path / "out"
    r = _new_version_run(cfg)
    last = r.stdout.strip().splitlines()[-1]
    assert last.startswith("stopped: H1 accepted, new is better than old"), last
    rec = _record(out)
    assert rec["kind"] == "new-version" and int(rec["stop"]["hands"]) < 960  # type: ignore[index]
    assert any("LLR:" in line for line in r.stdout.splitlines()), r.stdout[-2000:]
    assert _verify(out).returncode == 0


CRASHY = Path(__file__).with_name("crashy_bot.py")


def test_a_candidate_crashing_on_every_decision_is_rejected(tmp_path: Path) -> None:
    """An examination's candidate crashed on every decision: it was given up on and a stand-in
    played every seat, each a forfeit ("last"), yet the run ended "budget, undecided (LLR
    -0.39)" after 480 hands. It never went out first, so the fit has no gap for the LLR; the
    gap's one-sided limit rejects it at the first look, and verify re-derives that."""
    cfg = _settled_config(
        tmp_path,
        'until = "settled"\nalpha = 0.05\nindifference_elo = 50\nmax_hands = 480\n',
        {"old": 0.5, "f1": 0.3, "f2": 0.6},
    )
    crashy = (
        '[[bots]]\nname = "new"\n'
        f'command = ["{{python}}", "{CRASHY}", "--crash-after", "1", "--log-level", "warning"]\n'
    )
    text = cfg.read_text().replace("[faults]\n", "[faults]\nmax_restarts = 1\n")
    cfg.write_text(text + "\n" + crashy)
    out = tmp_path / "out"
    r = _new_version_run(cfg, "--quiet")
    last = r.stdout.strip().splitlines()[-1]
    # delta0 is 0: "not better than old", not "... by 0 Elo"
    assert last.startswith("stopped: H0 accepted, new is not better than old (new never"), last
    assert "new never went out ahead of the others: the gap is at most" in last, last
    rec = _record(out)
    assert int(rec["stop"]["hands"]) < 480  # type: ignore[index]
    assert "never went out ahead" in (out / "leaderboard.md").read_text()
    v = _verify(out)
    assert v.returncode == 0 and "H0 accepted" in v.stdout, v.stdout


# ------------------------------------------------------------------------------ pods


def _two_pods(
    tmp_path: Path, postgres: TempPostgres
) -> tuple[str, Path, SequentialRecord, dict[str, str]]:
    """One settled run of two ``--shard I/2`` pods into a new PostgreSQL database, checked: both
    stop at the same recorded decision, before the budget, with every hand before the stop."""
    import psycopg

    url = postgres.url(postgres.new_database())
    cfg = _settled_config(tmp_path, EARLY, ADAPTIVE)  # five bots: adaptive blocks
    pods = [
        subprocess.Popen(
            _cli(
                "tournament",
                "run",
                str(cfg),
                "--quiet",
                "--shard",
                f"{i}/2",
                "--store",
                url,
                "--out",
                str(tmp_path / f"pod{i}"),
            ),
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        for i in range(2)
    ]
    try:
        outputs = [p.communicate(timeout=400)[0] for p in pods]
    finally:
        for p in pods:
            if p.poll() is None:
                p.kill()
                p.communicate(timeout=30)
    for p, text in zip(pods, outputs, strict=True):
        assert p.returncode == 0, text
        assert "stopped: settled" in text, text[-1500:]
    with psycopg.connect(url) as conn:
        rows: dict[str, str] = dict(conn.execute("SELECT key, value FROM meta").fetchall())
        ids = {r[0] for r in conn.execute("SELECT hand_id FROM hands")}
    rec = SequentialRecord.from_dict(json.loads(rows[META_KEY]))
    tid = json.loads(rows["tournament_id"])
    assert rec.stop is not None and rec.stop["reason"] == "settled"
    stop = int(rec.stop["hands"])
    from uno_tournament.config import load

    planned = load(cfg).plan(tid)
    assert stop < len(planned)
    assert {h.hand_id for h in planned[:stop]} <= ids
    assert len(ids) <= stop + 2 * rec.look_every + 2 * 6, (stop, len(ids))
    return url, cfg, rec, rows


def test_two_pods_into_postgresql_follow_one_decision(
    tmp_path: Path, postgres: TempPostgres
) -> None:
    """``--shard 0/2`` and ``--shard 1/2`` into one PostgreSQL store: both stop at the same
    recorded decision, before the budget, and the store has every hand before the stop."""
    import psycopg

    for attempt in range(3):  # a run that settles at its first look plays no adaptive block
        where = tmp_path / f"try{attempt}"
        where.mkdir()
        url, cfg, rec, rows = _two_pods(where, postgres)
        assert rec.blocks is not None
        if len(rec.blocks) >= 2:
            break
    # every stored hand at its recorded table: both pods followed the one recorded plan
    assert rec.blocks is not None and len(rec.blocks) >= 2, rec.blocks
    tid = json.loads(rows["tournament_id"])
    from uno_tournament.config import load

    with psycopg.connect(url) as conn:
        seats = conn.execute("SELECT hand_id, seat, bot FROM seats").fetchall()
    from uno_tournament.pgstore import PgStore

    store = PgStore.connect(url)
    try:
        spec = {h.hand_id: h for h in load(cfg).plan(tid, store)}
    finally:
        store.close()
    for hid, seat, bot in seats:
        assert spec[hid].bots[seat] == bot, (hid, seat, bot)


# ------------------------------------------------------------------------------ displays


def test_status_line_metrics_and_report_section_show_the_open_pairs() -> None:
    from prometheus_client import generate_latest

    from uno_tournament import report_settled
    from uno_tournament.metrics import TournamentMetrics

    eps = {"a": 0.0, "b": 0.15, "c": 0.3, "d": 0.45}  # close: pairs stay open past a look
    cfg = _config(list(eps), until="settled", max_hands=960, alpha=0.05, indifference_elo=20)
    ids, hands = _engine_hands(cfg, 1, eps)
    rec = SequentialRecord.new(cfg, cfg.plan("T"))
    assert rec.status_line() == "waiting for the first look"
    seen: dict[str, HandResult | None] = {}
    mid = None
    for hid in ids:
        seen[hid] = hands[hid]
        catch_up(rec, ids, seen, list(eps))
        if mid is None and rec.open_pairs() and rec.looks and rec.looks[-1]["looked"]:
            mid = (rec.status_line(), rec.open_pairs(), rec.expected_hands())
        if rec.stopped:
            break
    assert mid is not None, "no look left a pair open"
    line, opened, expected = mid
    assert f"open: {opened[0]}" in line and "hands still expected" in line
    assert expected is not None and 0 < expected <= 960
    m = TournamentMetrics("T", process=False)
    m.set_sequential(len(opened), expected)
    page = generate_latest(m.registry).decode()
    assert f'uno_tournament_pairs_open{{tournament="T"}} {float(len(opened))}' in page
    assert rec.stop is not None
    md = report_settled.markdown(rec)
    assert "## Why the run stopped" in md and rec.stop["line"] in md
    svg = report_settled.svg_timeline(rec)
    assert svg.count("<rect") >= len(eps) - 1 and "stop" in svg
    assert report_settled.to_json(rec)["stop"] == rec.stop
    assert report_settled.to_json(rec)["blocks"] == rec.blocks
    assert rec.blocks is not None and "Tables each bot sat at" in md
    assert "| 0 | 8 | 8 | 8 | 8 |" in md  # four bots: their one table 8 times a block
    assert f"| {len(rec.blocks) - 1} | 8 | 8 | 8 | 8 |" in md


def test_the_new_version_table_gives_a_95_range_and_ends_with_the_stop() -> None:
    """The table gave the gap +- one standard error, unlabelled, where the progress line gives
    a 95% range; and a run stopped at its budget ended on a row saying "continue" (an
    examination)."""
    from uno_tournament import report_settled

    eps = {"new": 0.3, "old": 0.3, "f1": 0.0, "f2": 1.0}  # equal versions: the budget decides
    cfg = _config(list(eps), max_hands=192, candidate="new", baseline="old", indifference_elo=5)
    ids, hands = _engine_hands(cfg, 2, eps)
    rec = SequentialRecord.new(cfg, cfg.plan("T"))
    catch_up(rec, ids, dict(hands), list(eps))
    assert rec.stop is not None and rec.stop["reason"] == "budget", rec.stop
    md = report_settled.markdown(rec)
    assert "| hands | LLR | gap (Elo, 95%) | verdict |" in md
    rows = [r for r in md.splitlines() if r.startswith("| ") and "LLR" not in r]
    assert rows and rows[-1].endswith("| budget: stopped |"), rows[-1]
    looked = [look for look in rec.looks if look.get("looked") and not look.get("bounded")]
    last = looked[-1]
    assert f"{last['gap']:+.1f} +- {1.96 * last['se']:.1f}" in md
    assert all("continue" in r for r in rows[:-1])
