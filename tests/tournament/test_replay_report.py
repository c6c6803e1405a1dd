"""Replay files confirm or locate a divergence; reports are written from a store."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path
from typing import Any

from uno_server.cli import main as cli_main
from uno_server.engine import Hand, HeuristicBot, RuleSet
from uno_tournament.config import BotSpec, TournamentConfig
from uno_tournament.replay import check
from uno_tournament.report import FILES, write_all
from uno_tournament.schedule import plan
from uno_tournament.standings import places
from uno_tournament.store import HandRecord, SeatRecord, Store


def _play(rules: RuleSet, seed: int, strengths: list[float]) -> tuple[Hand, list[list[int]]]:
    hand = Hand.deal(rules, seed, 0)
    bots = [HeuristicBot(seed + i, randomness=p) for i, p in enumerate(strengths)]
    actions: list[list[int]] = []
    while not hand.over:
        seat = hand.pending_seats()[0]
        from uno_server.engine.views import seat_view

        a = bots[seat].choose(seat_view(hand, seat))
        hand.apply(seat, a)
        actions.append([seat, a])
    return hand, actions


def _replay(seed: int = 11) -> dict[str, Any]:
    rules = RuleSet(scoring="single_hand")
    hand, actions = _play(rules, seed, [0, 0.5, 1, 0.25])
    return {
        "rules": rules.to_dict(),
        "seed": seed,
        "dealer": 0,
        "bots": ["a", "b", "c", "d"],
        "actions": actions,
        "result": {"winner": hand.winner, "points_held": [hand.points_held(s) for s in range(4)]},
    }


def test_replay_confirms_a_recorded_hand_and_finds_divergences(tmp_path: Path) -> None:
    rep = _replay()
    assert check(rep).ok
    wrong_result = copy.deepcopy(rep)
    wrong_result["result"]["winner"] = (rep["result"]["winner"] + 1) % 4
    v = check(wrong_result)
    assert not v.ok and "winner" in v.message
    tampered = copy.deepcopy(rep)
    tampered["actions"][3][1] = 9999
    v = check(tampered)
    assert not v.ok and "diverges at action 4" in v.message
    other_seed = copy.deepcopy(rep)
    other_seed["seed"] = rep["seed"] + 1
    assert not check(other_seed).ok
    good, bad = tmp_path / "good.json", tmp_path / "bad.json"
    good.write_text(json.dumps(rep))
    bad.write_text(json.dumps(tampered))
    assert cli_main(["replay", str(good)]) == 0
    assert cli_main(["replay", str(bad)]) == 1


def test_reports_are_written_from_the_store(tmp_path: Path) -> None:
    names = ["s0", "s25", "s50", "s100"]
    strength = {"s0": 0.0, "s25": 0.25, "s50": 0.5, "s100": 1.0}
    config = TournamentConfig(
        name="r", bots=tuple(BotSpec(n, token="x" * 8) for n in names), blocks=1
    )
    store = Store.create(tmp_path, {"tournament_id": "r", "config": config.to_dict()})
    rules = RuleSet(scoring="single_hand")
    for spec in plan("r", names, blocks=2, seed=1):
        hand, actions = _play(rules, spec.seed % 10_000, [strength[b] for b in spec.bots])
        pts = [hand.points_held(s) for s in range(4)]
        pl = places(hand.winner, pts)
        store.add_hand(
            HandRecord(
                hand_id=spec.hand_id,
                table=spec.table,
                block=spec.block,
                deal=spec.deal,
                rotation=spec.rotation,
                deal_id=spec.deal_id,
                match_seed=spec.seed,
                hand_seed=spec.seed,
                dealer=0,
                match_id="m",
                winner_seat=hand.winner,
                moves=len(actions),
                duration_s=0.1,
                seats=[
                    SeatRecord(
                        s,
                        b,
                        pl[s],
                        pts[s],
                        sum(pts) if s == hand.winner else 0,
                        decisions=5,
                        response_ms=[1, 2, 3, 50],
                    )
                    for s, b in enumerate(spec.bots)
                ],
                replay={"hand_id": spec.hand_id},
            )
        )
    store.add_incident("s50", "crash", "exited with status 1")
    s = write_all(tmp_path, store, config, "r", planned=48)
    for f in FILES:
        assert (tmp_path / f).stat().st_size > 0
    assert s.bots[0].bot == "s0" and s.bots[-1].bot == "s100"
    assert all(not math.isnan(b.rating) and b.ci_low < b.rating < b.ci_high for b in s.bots)
    s50 = next(b for b in s.bots if b.bot == "s50")
    assert s50.crashes == 1 and s50.p99_decision_ms > s50.mean_decision_ms
    data = json.loads((tmp_path / "results.json").read_text())
    assert data["model"]["cluster"] == "deal" and data["model"]["clusters"] == 12
    assert 0.5 < data["likelihood_of_superiority"]["s0"]["s100"] <= 1.0
    ahead, behind, tied = s.cross["s0"]["s100"]
    assert ahead + behind + tied == 48 and ahead > behind
    md = (tmp_path / "leaderboard.md").read_text()
    assert "| 1 | s0 |" in md and "Cross-table" in md
    csv_lines = (tmp_path / "leaderboard.csv").read_text().splitlines()
    assert csv_lines[0].startswith("rank,bot,rating") and len(csv_lines) == 5
    html = (tmp_path / "report.html").read_text()
    assert html.count("<circle") == 4 and "Likelihood of superiority" in html
    # what a gap means, in every output, with the records to check it against
    assert "What a gap means" in md and "64% for +100" in md and "Going out first" in md
    assert "What a gap means" in html and "Going out first" in html
    assert data["model"]["gap_meaning"].startswith("What a gap means")
    assert data["model"]["places"] == "discounted" and data["model"]["loser_weight"] >= 0
    won, lost = s.first_out["s0"]["s100"]
    assert won + lost <= 48 and won > lost
    assert data["going_out_first"]["s100"]["s0"] == {"won": lost, "lost": won}
    assert "Forfeits: last" in md and data["forfeits"]["policy"] == "last"
    store.close()
