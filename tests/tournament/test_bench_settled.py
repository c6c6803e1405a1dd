"""``make bench-settled``'s own hand player (:func:`uno_tournament.bench_settled.play_heuristic`)
plays exactly the hands the engine's :func:`~uno_server.engine.simulate.play_hand` plays with
``HeuristicBot`` seats: the bench's figures must not depend on the shortcut that makes it fast."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from uno_server.engine import Hand, HeuristicBot, RuleSet
from uno_server.engine.simulate import play_hand
from uno_tournament.bench_settled import play_heuristic


def _outcome(hand: Hand) -> tuple[object, ...]:
    return (
        hand.winner,
        hand.turn,
        tuple(hand.points_held(s) for s in range(4)),
        tuple(tuple(sorted(h)) for h in hand.hands),
        tuple(hand.discard),
    )


@pytest.mark.parametrize(
    "eps",
    [(0.0, 0.0, 0.0, 0.0), (0.0, 0.1, 0.2, 0.3), (0.2, 0.2, 0.2, 0.2), (0.5, 0.65, 0.8, 1.0)],
)
def test_play_heuristic_plays_the_engines_hands(eps: tuple[float, ...]) -> None:
    rules = RuleSet(scoring="single_hand")
    rng = random.Random(hash(eps) & 0xFFFF)
    for _ in range(60):
        deal = rng.getrandbits(40)
        seeds = [rng.getrandbits(63) for _ in range(4)]
        bots = [HeuristicBot(seed=s, randomness=e) for s, e in zip(seeds, eps, strict=True)]
        want = play_hand(Hand.deal(rules, deal, 0), bots)
        got = play_heuristic(Hand.deal(rules, deal, 0), seeds, eps)
        assert _outcome(got) == _outcome(want), f"deal {deal}, randomness {eps}"


def test_resume_reads_the_log_and_plays_only_the_rest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A bench run in pieces (``--log`` then ``--resume``) reports exactly what one run reports:
    the logged runs are read back by kind and seed, not played again."""
    import json

    from uno_tournament import bench_settled as bs

    log = tmp_path / "runs.jsonl"
    small = ["--max-hands", "384", "--nv-max-hands", "192", "--log", str(log)]
    bs.main(["--tournaments", "1", "--aa", "1", "--newversion", "1", *small])
    whole = capsys.readouterr().out
    lines = [json.loads(x) for x in log.read_text().splitlines()]
    assert sorted((x["kind"], x["seed"]) for x in lines) == [
        ("aa", 100_001),
        ("ladder", 1),
        ("nv:delta0", 200_001),
        ("nv:delta1", 200_001),
    ]
    # a second ladder tournament on top: only it is played, the rest is read from the log
    bs.main(["--tournaments", "2", "--aa", "1", "--newversion", "1", "--resume", *small])
    out = capsys.readouterr()
    assert "resumed: 4 runs" in out.err and "1 to play" in out.err
    assert len(log.read_text().splitlines()) == 5
    assert "1 of 1 runs" in out.err  # the progress counts the runs played, not those read
    again = bs.main(["--tournaments", "1", "--aa", "1", "--newversion", "1", "--resume", *small])
    assert capsys.readouterr().out == whole  # nothing played: the same report
    assert again in (0, 1)
    # runs logged with other settings are not reused
    bs.main(
        [
            "--tournaments",
            "1",
            "--aa",
            "1",
            "--newversion",
            "1",
            "--resume",
            *small[2:],
            "--max-hands",
            "576",
        ]
    )
    assert "resumed: 2 runs" in capsys.readouterr().err  # only the new-version tests match
    log.write_text(log.read_text() + "not json\n")
    with pytest.raises(SystemExit) as e:
        bs.main(["--tournaments", "1", "--aa", "1", "--newversion", "1", "--resume", *small])
    assert e.value.code == 2
    assert "is not a run's outcome" in capsys.readouterr().err


def test_time_left_weighs_the_runs_by_their_hands() -> None:
    """The cheap new-version tests run first: counted as one run each, 400 of them done in a
    minute would promise the remaining 400 tournaments in another minute."""
    import time

    from uno_tournament import bench_settled as bs

    kw = {"max_hands": 8064}
    nv, ladder, aa = ("nv:delta0", 1, {"max_hands": 4800}), ("ladder", 1, kw), ("aa", 2, kw)
    assert bs.job_weight(ladder) < bs.job_weight(aa)
    assert bs.job_weight(nv) < bs.job_weight(ladder) / 20
    jobs = [nv] * 400 + [ladder, aa] * 200
    done = sum(map(bs.job_weight, jobs[:400]))
    line = bs.progress_bar(400, 800, time.time() - 60.0, (done, sum(map(bs.job_weight, jobs))))
    minutes = int(line.split("about ")[1].split(" min")[0])
    assert minutes > 20  # by count it would say 1
    assert "about 1 min left" in bs.progress_bar(400, 800, time.time() - 60.0)
