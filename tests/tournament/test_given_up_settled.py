"""A bot given up on after some rated hands, under ``forfeit = "exclude"``, in a settled run.

An examination (stop 51, left open then): a bot that crashed for good after 18 rated hands
kept fewer than ``min_hands_per_bot`` rated hands for ever, so a settled run skipped every look
("fewer than 96 hands for some bot") to its budget; a bot given up on after the first look kept
its adjacent pairs open the same way. Such a bot (seated, every seat of it played by the
stand-in in a look's hands: :attr:`HandResult.excluded`) is now left out of the ranking and of
the first looks' hand count until hands rate it again; the stop line says so. Hands the engine
really plays, along the run's own plan and looks; a state recorded before the rule continues
without it."""

from __future__ import annotations

from uno_tournament.config import TournamentConfig
from uno_tournament.ratings import HandResult
from uno_tournament.report_settled import why_line
from uno_tournament.settled_run import SequentialRecord, catch_up

from .test_unrated_bot import CRASH, EPS, _config, _excluded, play_run


def _run(
    cfg: TournamentConfig,
    seed: int,
    rated: int,
    *,
    drop_gone: bool = True,
    stored: dict[str, HandResult | None] | None = None,
) -> SequentialRecord:
    """The run's hands as the runner plays them; the crashed bot's seats are rated in its first
    ``rated`` hands, then every one is the stand-in's (named in the hand, as rated_result does)."""
    rec = SequentialRecord.new(cfg, cfg.plan("T"))
    if rec.state is not None:
        rec.state.drop_gone = drop_gone
    if rec.newversion is not None:  # the rules of 2026-12-06, or a state recorded before
        rec.newversion.sequence = drop_gone
    seen = 0

    def result_of(played: HandResult) -> HandResult | None:
        nonlocal seen
        if CRASH not in {f.bot for f in played.finishes}:
            return played
        seen += 1
        return played if seen <= rated else _excluded(played, named=True)

    return play_run(cfg, seed, rec, result_of, {} if stored is None else stored)


def test_a_bot_given_up_after_18_rated_hands_no_longer_blocks_every_look() -> None:
    cfg = _config(until="settled", max_hands=1152, alpha=0.05, indifference_elo=10)
    before = _run(cfg, 2, 18, drop_gone=False)  # the defect: every look skipped to the budget
    assert before.stop is not None and before.stop["reason"] == "budget", before.stop
    assert not any(look["looked"] for look in before.looks), before.looks
    rec = _run(cfg, 2, 18)
    assert rec.stop is not None and rec.state is not None
    looked = [look for look in rec.looks if look["looked"]]
    assert looked, rec.looks  # the four bots still playing are looked at
    assert rec.state.gone == (CRASH,)
    for look in looked:
        assert CRASH not in look["ranking"], look
    decided = {p["pair"] for look in looked for p in look["pairs"] if p["status"] != "open"}
    assert decided and not any(CRASH in p for p in decided), looked[-1]
    line = rec.stop["line"]
    assert "crash left out: every later seat played by the stand-in (given up on)" in line, line
    # the state keeps the bots given up on, and one recorded before the rule continues without it
    again = SequentialRecord.from_dict(rec.to_dict())
    assert again.state is not None and again.state.gone == (CRASH,) and again.state.drop_gone
    legacy = rec.to_dict()
    del legacy["state"]["gone"], legacy["state"]["drop_gone"]
    old = SequentialRecord.from_dict(legacy)
    assert old.state is not None and not old.state.drop_gone


def test_a_new_version_test_stops_when_its_candidate_is_given_up_on() -> None:
    """An examination's candidate was given up on after 145 hands under "exclude": every later
    hand was the stand-in's, left out, and the test played to its budget of 480 with "about
    3600 hands still expected" and growing. It now stops undecided at the look after."""
    cfg = _config(until="", max_hands=960, candidate=CRASH, baseline="b50", indifference_elo=10)
    before = _run(cfg, 3, 60, drop_gone=False)
    assert before.stop is not None and before.stop["reason"] == "budget", before.stop
    assert before.stop["hands"] == before.plan_hands
    stored: dict[str, HandResult | None] = {}
    rec = _run(cfg, 3, 60, stored=stored)
    assert rec.stop is not None and rec.newversion is not None
    assert rec.stop["reason"] == "given_up", rec.stop
    assert rec.stop["hands"] < before.stop["hands"] / 2, rec.stop  # hands saved
    line = str(rec.stop["line"])
    assert line.startswith("stopped: undecided: crash given up on (the stand-in played"), line
    assert "no later hand can move the test" in line, line
    assert "crash given up on" in rec.newversion.progress_line()
    assert "was given up on, so no later hand could move it" in why_line(rec)
    # a re-derivation from the stored hands (what verify does) reaches the same stop
    ids = [h.hand_id for h in cfg.plan("T")]
    again = catch_up(SequentialRecord.new(cfg, cfg.plan("T")), ids, stored, list(EPS))
    assert again.decision_of() == rec.decision_of()
