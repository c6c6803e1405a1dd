"""Examined in session 53: the end of a sequential run printed its stop line and then a Python
traceback from ``report.write_all`` (only OSError was caught), with no report written; a budget
too small for any look was "waiting for the first look" at the start, one look in results.json
and "24 hands a table" of 8 tables; counts of one read "1 hands"."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from uno_tournament import report, report_settled
from uno_tournament.config import BotSpec, TournamentConfig
from uno_tournament.player import RunnerError
from uno_tournament.plural import count
from uno_tournament.runlog import RunLog
from uno_tournament.sequential_runner import SequentialMixin
from uno_tournament.settled_run import SequentialRecord, settled_plan


def _finishing(tmp_path: Path) -> tuple[Any, list[str]]:
    """What ``_finish_sequential`` reads of a runner whose decision stopped at 384 hands."""
    said: list[str] = []
    (tmp_path / "logs").mkdir()
    seq = SimpleNamespace(stop={"hands": 384, "reason": "settled"}, status_line=lambda: "done")
    runner = SimpleNamespace(
        seq=seq,
        _seq_ids=[f"h{i}" for i in range(384)],
        _seq_stored=set(),
        log=RunLog(tmp_path / "logs" / "tournament.log", tournament="t"),
        say=said.append,
        out=tmp_path,
        store=object(),
        config=None,
        tid="t",
        stream=None,
    )
    return runner, said


def test_a_failure_writing_the_reports_is_one_line_and_logged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def broken(*_: object, **__: object) -> None:
        raise KeyError("ranking")  # any bug of the reports, not only a full disk

    monkeypatch.setattr(report, "write_all", broken)
    runner, said = _finishing(tmp_path)
    with pytest.raises(RunnerError) as exc:
        SequentialMixin._finish_sequential(runner, 384)
    runner.log.close()
    msg = str(exc.value)
    assert said == [f"finished: 384 hands in {tmp_path}"]  # the stop came first, then the error
    assert "\n" not in msg
    assert "every hand is stored" in msg and "KeyError: 'ranking'" in msg
    assert msg.endswith(f"write them with: uno-arena tournament report {tmp_path}")
    text = (tmp_path / "logs" / "tournament.log").read_text()
    logged = [json.loads(line) for line in text.splitlines()]
    failed = [e for e in logged if e["event"] == "reports not written"]
    assert failed and "KeyError" in failed[0]["error"]
    assert "Traceback" in failed[0]["traceback"]


def test_a_full_disk_still_says_to_free_space(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def full(*_: object, **__: object) -> None:
        raise OSError(28, "No space left on device", str(tmp_path / "results.json"))

    monkeypatch.setattr(report, "write_all", full)
    runner, _ = _finishing(tmp_path)
    with pytest.raises(RunnerError, match=r"No space left on device.*Free space on that disk"):
        SequentialMixin._finish_sequential(runner, 384)
    runner.log.close()


def _budget_24() -> SequentialRecord:
    bots = tuple(
        BotSpec(n, command=("{python}", "-m", "uno_bot.x", "--name", "{name}"))
        for n in ("h", "b25", "b50", "rnd")
    )
    config = TournamentConfig(name="m24", seed=777, until="settled", max_hands=24, bots=bots)
    return SequentialRecord.new(config, settled_plan(config, "m24-x"))


def test_a_budget_below_the_first_look_says_so_everywhere() -> None:
    rec = _budget_24()
    note = "no look within the budget of 24 hands (the first look needs 96 hands of every bot)"
    assert rec.status_line() == note  # the start line said "waiting for the first look"
    rec.looks.append({"through": 24, "hands": 24, "looked": False, "note": "too few"})
    rec.through = 24
    rec.stop = {"reason": "budget", "hands": 24, "line": "stopped: budget after 24 hands"}
    assert report_settled.to_json(rec)["looks"] == 0  # it said 1 beside "no look was taken"
    text = report_settled.markdown(rec)
    assert note in text
    assert "24 hands a table;" not in text  # 24 hands over 6 of the block's 8 tables
    assert "24 hands a table in a full block" in text
    assert "| 0* | 6 | 6 | 6 | 6 |" in text
    assert "24 of its 192 hands were played, deal by deal across 6 of its 8 tables" in text


def test_counts_of_one_are_singular() -> None:
    import io

    from uno_tournament.verify import VerifyReport, print_report

    assert count(1, "hand") == "1 hand" and count(2, "hand") == "2 hands"
    assert count(0, "deal") == "0 deals"
    out = io.StringIO()
    print_report(VerifyReport(hands=23, planned=24, checked=23), "d", out)
    assert "; 1 planned hand not played yet" in out.getvalue()  # "1 planned hands"
    summary = SimpleNamespace(forfeit_policy="exclude", forfeited_hands=1)
    policy = report.Summary.__dict__["policy_text"].fget
    assert policy(summary).endswith("; 1 hand had a stand-in.")


def test_a_bot_not_rated_is_not_described_with_a_limit() -> None:
    """Examiner 1 (forfeit = "exclude"): a bot rated in one deal only, last in every hand, was
    "not rated" and in the same note "never went out first ... only an upper limit"."""
    import numpy as np

    from uno_tournament.rating_model import Outcomes
    from uno_tournament.standings import fit_ratings

    names = ["A", "B", "C", "D", "E"]
    rows: list[list[tuple[str, int]]] = []
    order = ["A", "B", "C", "D"]
    for d in range(12):  # four bots that beat each other both ways
        for k in range(4):
            seated = [order[(s + k) % 4] for s in range(4)]
            ranked = seated[d % 4 :] + seated[: d % 4]
            rows.append([(b, ranked.index(b) + 1) for b in seated])
    for k in range(4):  # one deal of E, last every time: rated in fewer than two deals
        seated = [["A", "B", "C", "E"][(s + k) % 4] for s in range(4)]
        rows.append([(b, 4 if b == "E" else ["A", "B", "C"].index(b) + 1) for b in seated])
    ix = {b: i for i, b in enumerate(names)}
    bots = np.array([[ix[b] for b, _ in h] for h in rows], dtype=np.int64)
    places = np.array([[p for _, p in h] for h in rows], dtype=np.int64)
    cluster = np.repeat(np.arange(len(rows) // 4), 4)
    r, note = fit_ratings(Outcomes(bots, places, cluster, len(rows) // 4), names)
    assert r is not None and not r.rated[ix["E"]]
    assert "E never went out first" not in note
    assert "upper limit" not in note
