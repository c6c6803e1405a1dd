"""A bot with no rated hand under ``forfeit = "exclude"`` (it crashed at once, and the stand-in
played every seat of it, which the policy leaves out of the ratings). An examination:

* the new-version test accepted H1, "crash is better than b50 by 10 Elo", for a candidate that
  never played a hand (the fit gave a bot it never saw an arbitrary rating, with a small error);
* a settled run skipped every look ("fewer than 96 hands for some bot") to its budget, and its
  stop line ranked the crashed bot first.

Such a bot is now left out of the fit and the ranking, and the lines say so. Hands the engine
really plays, along the run's own plan and looks."""

from __future__ import annotations

import random
from collections.abc import Callable

from uno_server.engine import Hand, HeuristicBot, RuleSet
from uno_server.engine.simulate import play_hand
from uno_tournament.config import BotSpec, TournamentConfig
from uno_tournament.ratings import Finish, HandResult
from uno_tournament.report_settled import why_line
from uno_tournament.settled_run import SequentialRecord, catch_up

from .test_settled_run import _Meta

EPS = {"h": 0.0, "b25": 0.25, "b50": 0.5, "r": 1.0, "crash": 1.0}
CRASH = "crash"


def _config(**kw: object) -> TournamentConfig:
    bots = tuple(BotSpec(n, ("x",)) for n in EPS)
    return TournamentConfig(name="x", bots=bots, seed=77, **kw)  # type: ignore[arg-type]


def _excluded(h: HandResult, *, named: bool = False) -> HandResult | None:
    """The hand as the ratings see it when the stand-in played the crashed bot's seat (``named``:
    the hand names the left-out bot, as ``standings.rated_result`` does since 2026-12-06)."""
    rest = tuple(f for f in h.finishes if f.bot != CRASH)
    if len(rest) == len(h.finishes):
        return h
    if len(rest) < 2:
        return None
    out_first = h.out_first and h.finishes[0].bot != CRASH  # finishes are in finishing order
    rated = tuple(Finish(f.bot, f.seat, f.place) for f in rest)
    return HandResult(h.hand_id, h.deal_id, rated, out_first, (CRASH,) if named else ())


def play_run(
    cfg: TournamentConfig,
    seed: int,
    rec: SequentialRecord,
    result_of: Callable[[HandResult], HandResult | None],
    stored: dict[str, HandResult | None],
) -> SequentialRecord:
    """The run's hands as the runner plays them (a look's hands at a time, adaptive blocks at
    the recorded tables), each stored as ``result_of`` rates it; the record at its stop."""
    rng = random.Random(seed)
    rules = RuleSet(scoring="single_hand")
    ids = [h.hand_id for h in cfg.plan("T")]
    while True:
        p = cfg.plan("T", _Meta(rec))
        upto = rec.next_boundary()
        if upto is None:
            return rec
        for spec in p[rec.through : upto]:
            bots = [HeuristicBot(seed=rng.getrandbits(63), randomness=EPS[b]) for b in spec.bots]
            hand = play_hand(Hand.deal(rules, spec.seed, 0), bots)
            played = HandResult.from_points(
                spec.hand_id,
                spec.deal_id,
                spec.bots[hand.winner],
                [(b, s, hand.points_held(s)) for s, b in enumerate(spec.bots)],
            )
            stored[spec.hand_id] = result_of(played)
        catch_up(rec, ids, stored, list(EPS))


def _run(cfg: TournamentConfig, seed: int) -> SequentialRecord:
    """The run with the crashed bot's seats left out from its first hand."""
    return play_run(cfg, seed, SequentialRecord.new(cfg, cfg.plan("T")), _excluded, {})


def test_a_candidate_with_no_rated_hand_is_never_accepted() -> None:
    cfg = _config(until="", max_hands=480, candidate=CRASH, baseline="b50", indifference_elo=10)
    rec = _run(cfg, 1)
    assert rec.stop is not None and rec.newversion is not None
    assert rec.stop["reason"] == "budget", rec.stop
    line = rec.stop["line"]
    assert "undecided: crash has no rated hand" in line and "stand-in" in line, line
    assert all(not look["looked"] for look in rec.looks), rec.looks
    assert "crash: no rated hand" in rec.newversion.progress_line()
    why = why_line(rec)  # the report's "why the run stopped"
    assert "before the test could look: crash has no rated hand" in why, why
    # the baseline may be the one left out too; and a JSON round trip keeps the reason
    again = SequentialRecord.from_dict(rec.to_dict())
    assert again.newversion is not None and again.newversion.unrated == CRASH


def test_a_settled_run_leaves_an_unrated_bot_out_of_its_looks_and_its_ranking() -> None:
    cfg = _config(until="settled", max_hands=1152, alpha=0.05, indifference_elo=10)
    rec = _run(cfg, 2)
    assert rec.stop is not None
    looked = [look for look in rec.looks if look["looked"]]
    assert looked, rec.looks  # the four rated bots are looked at
    for look in rec.looks:
        assert CRASH not in look["ranking"], look
    decided = {p["pair"] for look in looked for p in look["pairs"] if p["status"] != "open"}
    assert decided, looked[-1]
    assert not any(CRASH in p for p in decided)
    assert "crash left out: no rated hand" in rec.stop["line"], rec.stop["line"]
    assert not rec.stop["line"].startswith(("stopped: budget, 4 pairs", "crash"))
