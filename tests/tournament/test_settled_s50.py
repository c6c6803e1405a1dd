"""An examination of run-until-settled and the new-version test: what the progress line, the stop
line, the run's first line and the report say (the statistics are unchanged). Unit tests on
records built by hand: no tournament is played.

- The projection of the hands still expected ignored the block (the run stops only at a look)
  and stayed frozen between looks: "about 5 hands still expected" at 221, 283 and 381 hands of
  a run that needed the whole next 192-hand block; and past the budget it said "about 624" with
  475 hands left, unsaid.
- A new-version test stopped by its budget was said to have "pairs still open"; a gap far beyond
  delta1 left undecided had no word on why; one-sided limits that would decide but for a
  stricter alpha had none either.
- Wording: "blocks of 6 tables" for a budget of 24 hands of an 8-table block; the report's table
  named a pair "a1 ? a4" where the stop line says "a4~a1"; its column "interval of a - b".
"""

from __future__ import annotations

import itertools
import math

from uno_tournament import report_settled
from uno_tournament.config import BotSpec, TournamentConfig
from uno_tournament.newversion import NewVersionState, stop_line_of
from uno_tournament.settled import SettledState
from uno_tournament.settled_run import SequentialRecord, settled_design


def _config(names: list[str], **kw: object) -> TournamentConfig:
    bots = tuple(BotSpec(n, ("x",)) for n in names)
    return TournamentConfig(name="x", bots=bots, seed=3, **kw)  # type: ignore[arg-type]


def _settled(
    bots: tuple[str, ...], plan: int, every: int, at: int, open_pair: tuple[str, str, float, float]
) -> SequentialRecord:
    """A settled run's record after one look at ``at`` hands: the ranking ``bots``, every
    adjacent pair decided but ``open_pair`` (``x, y, low, high``), open with that interval."""
    st = SettledState(bots, alpha=0.05, indifference_elo=10)
    pairs = []
    for x, y in itertools.pairwise(bots):
        low, high = (open_pair[2], open_pair[3]) if (x, y) == open_pair[:2] else (50.0, 90.0)
        status = "open" if (x, y) == open_pair[:2] else "better"
        pairs.append({"pair": f"{x}~{y}", "status": status, "low": low, "high": high})
    look = {"through": at, "hands": at, "looked": True, "ranking": list(bots), "pairs": pairs}
    return SequentialRecord("settled", plan, every, state=st, through=at, looks=[look])


# ------------------------------------------------------------------------------ finding 4


def test_the_projection_rounds_up_to_the_next_look_and_moves_between_looks() -> None:
    """4 bots, max_hands 2000, a look every 192 hands: after the look at 192, one pair open a
    few hands' information from its decision. The run stops only at a look, so the next one
    (384) is the earliest: it said "about 5 hands still expected" at 221, 283 and 381 hands."""
    rec = _settled(("a", "b", "c", "d"), 2000, 192, 192, ("c", "d", -1.0, 10.05))
    assert rec.expected_hands() == 192  # the whole next block, before any hand of it
    assert rec.status_line() == (
        "2 of 3 pairs decided, open: c~d; about 192 hands still expected (to the look at 384)"
    )
    for played, left in ((221, 163), (283, 101), (381, 3)):
        rec.played = played  # what the runner sets as hands are stored
        assert rec.expected_hands() == left
        assert rec.status_line().endswith(f"about {left} hands still expected (to the look at 384)")
    rec.played = 384
    assert rec.expected_hands() == 0 and rec.status_line().endswith("the look at 384 hands is due")


def test_the_runner_moves_the_projection_and_its_metric_with_each_stored_hand() -> None:
    """The runner's part: each stored hand of the plan sets the record's count (the line and
    ``uno_tournament_hands_expected`` were set at the looks only)."""
    from prometheus_client import generate_latest

    from uno_tournament.metrics import TournamentMetrics
    from uno_tournament.sequential_runner import SequentialMixin

    rec = _settled(("a", "b", "c", "d"), 2000, 192, 192, ("c", "d", -1.0, 10.05))
    runner = SequentialMixin()
    runner._init_sequential()
    runner.seq, runner.metrics = rec, TournamentMetrics("T", process=False)
    runner._seq_ids = [f"h{k}" for k in range(2000)]
    for hid in runner._seq_ids[:221]:
        runner._seq_stored[hid] = None
        runner._kick_looks()  # no look is due before the 384th hand
    assert rec.played == 221 and "about 163 hands still expected" in rec.status_line()
    page = generate_latest(runner.metrics.registry).decode()
    assert 'uno_tournament_hands_expected{tournament="T"} 163.0' in page, page


def test_a_projection_past_the_budget_says_so() -> None:
    """9 bots, max_hands 1200, a look every 576: a pair still far from its decision at 576.
    The line said "about 624 hands still expected" (the budget's cap, unsaid) with 475 left."""
    rec = _settled(tuple("abcdefghi"), 1200, 576, 576, ("d", "e", -3.0, 15.0))
    rec.played = 725
    line = rec.status_line()
    assert "more than the 475 the budget leaves" in line, line
    assert "about 624 hands" not in line
    assert rec.expected_hands() == 475  # the metric stays capped at the budget
    # a projection too far to put a number on
    far = _settled(tuple("abcdefghi"), 1200, 576, 576, ("d", "e", -5000.0, 5010.0))
    assert "far more hands still expected than the 624 the budget leaves" in far.status_line()


# ------------------------------------------------------------------------------ finding 5


def _budget_nv(gap: float, se: float) -> SequentialRecord:
    nv = NewVersionState("new", "old", delta0=0.0, delta1=10.0)
    nv.gap, nv.se, nv.hands, nv.looks = gap, se, 480, 5
    nv.llr = nv.llr_of(gap, se)
    nv.verdict, nv.decided_at = "budget", 480
    stop = {"reason": "budget", "hands": 480, "line": stop_line_of(nv, None)}
    look = {"through": 480, "hands": 480, "looked": True, "llr": nv.llr, "gap": gap, "se": se}
    looks: list[dict[str, object]] = [{**look, "verdict": "budget"}]
    return SequentialRecord(
        "new-version", 480, 96, newversion=nv, through=480, looks=looks, stop=stop
    )


def test_a_new_version_budget_stop_speaks_of_the_test_not_of_pairs() -> None:
    rec = _budget_nv(8.0, 6.0)
    why = report_settled.why_line(rec)
    assert "pairs" not in why, why
    assert "before the test decided (LLR 0.83 within its bounds -2.94 and 2.94)" in why, why
    assert report_settled.why_line(rec) in report_settled.markdown(rec)
    assert "far beyond" not in why  # a gap inside [delta0, delta1]: no hint


def test_a_gap_far_beyond_delta1_left_undecided_gets_a_hint() -> None:
    """The gap +741 Elo with delta1 = 10 ended "budget, undecided (LLR 2.41)": the GSPRT
    weighs delta1 against delta0, and its LLR must still reach log((1-beta)/alpha)."""
    se = math.sqrt(10.0 * 736.0 / 2.41)  # the LLR 2.41 at the gap 741
    rec = _budget_nv(741.0, se)
    assert rec.newversion is not None and round(rec.newversion.llr, 2) == 2.41
    more = math.ceil(480 * (rec.newversion.upper / rec.newversion.llr - 1.0))
    line = rec.status_line()
    assert line.startswith(str(rec.stop["line"]) if rec.stop else "")
    assert "far beyond delta1 = 10" in line and "log((1-beta)/alpha) = 2.94" in line, line
    assert f"about {more} more hands at this rate" in line and "larger delta1" in line, line
    assert f"about {more} more hands" in report_settled.why_line(rec)
    low = _budget_nv(-741.0, se)  # and the mirror image, towards H0
    assert "far below delta0" in low.status_line() and "log(beta/(1-alpha))" in low.status_line()
    # a gap beyond the hypotheses but whose 95% interval reaches them is not "far" (an
    # examination's A/A test: "the gap -17 Elo is far below delta0" at -17.4 +- 27.6)
    near = _budget_nv(-25.0, 27.6)
    assert "far below" not in near.status_line(), near.status_line()


# ------------------------------------------------------------------------------ finding 6


def _bounded(alpha: float, verdict: str = "budget") -> NewVersionState:
    nv = NewVersionState("x", "old", alpha=alpha, beta=alpha)
    nv.bounded = "x never went out ahead of the others"
    nv.low, nv.high, nv.hands, nv.verdict = -math.inf, -235.3, 480, verdict  # type: ignore[assignment]
    return nv


def test_one_sided_limits_that_a_strict_alpha_keeps_from_deciding_say_so() -> None:
    nv = _bounded(0.01)
    note = "these limits decide only when alpha >= 0.05, this run's is 0.01"
    assert note in nv.progress_line()
    stop = {"reason": "budget", "hands": 480, "line": stop_line_of(nv, None)}
    rec = SequentialRecord("new-version", 480, 96, newversion=nv, through=480, stop=stop)
    line = rec.status_line()
    assert line.startswith("stopped: budget, undecided (x never went out ahead") and note in line
    assert note in report_settled.why_line(rec)
    assert "one-sided limits, read instead of an LLR, decided nothing" in report_settled.why_line(
        rec
    )
    assert _bounded(0.05).limits_note() == ""  # at 5% the limits decide: nothing to explain


# ------------------------------------------------------------------------------ finding 9


def test_the_first_line_gives_the_blocks_true_size_when_the_budget_cuts_the_first() -> None:
    design = settled_design(_config(list("abcd"), until="settled", max_hands=24))
    assert len(design.tables) == 8, design.tables
    assert "blocks of 6 tables" not in design.reason
    assert "blocks of 8 tables (192 hands)" in design.reason, design.reason
    assert "the budget is less than one block: 24 of its hands, at 6 of its 8 tables" in (
        design.reason
    )
    nv = settled_design(_config(list("abcd"), max_hands=480, candidate="a", baseline="b"))
    assert "blocks of 1 table (24 hands)" in nv.reason and "1 tables" not in nv.reason


def test_the_report_names_pairs_in_the_ranking_order_as_the_stop_line_does() -> None:
    bots = ("a4", "a3", "a2", "a1")  # the ranking, strongest first
    st = SettledState(tuple(sorted(bots)), alpha=0.05, indifference_elo=10)
    p = st.pair("a1", "a4")  # elo[a1] - elo[a4]
    p.low, p.high = -30.0, 5.0
    q = st.pair("a2", "a3")  # a3 better: elo[a2] - elo[a3] within [-40, -12]
    q.low, q.high, q.status, q.claimed_at = -40.0, -12.0, "better", 192
    pairs = [
        {"pair": "a4~a1", "status": "open", "low": -5.0, "high": 30.0},
        {"pair": "a1~a3", "status": "better", "low": 1.0, "high": 9.0},
        {"pair": "a3~a2", "status": "better", "low": 12.0, "high": 40.0},
    ]
    look = {"through": 384, "hands": 384, "looked": True, "ranking": ["a4", "a1", "a3", "a2"]}
    look["pairs"] = pairs
    stop = {"reason": "budget", "hands": 384, "line": "stopped: budget, 1 pair open: a4~a1"}
    rec = SequentialRecord("settled", 384, 192, state=st, through=384, looks=[look], stop=stop)
    md = report_settled.markdown(rec)
    assert "| a4 ? a1 | open | - | [-5, +30] |" in md, md
    assert "| a3 > a2 | better | 192 | [+12, +40] |" in md, md
    assert "a1 ? a4" not in md
    assert "interval of a - b" not in md and "gap, first minus second" in md
    svg = report_settled.svg_timeline(rec)
    assert ">a4~a1</text>" in svg and ">a1~a4<" not in svg
