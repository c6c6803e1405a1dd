"""``make bench-engine``: complete four-seat hands per second, UNO Arena against RLCard.

Both sides play whole four-seat hands with uniformly random legal agents, alternating several
rounds in the same process on the same core; the medians are compared. The comparison is not
like for like in UNO Arena's disfavour: RLCard's UNO has no Wild Draw Four challenge, no UNO call
or catch, no play-after-draw decision and no scoring, while UNO Arena runs the full rules
(DECISIONS.md defaults) including the UNO window answers of every seat.

RLCard is measured as its UNO environment with its ``RandomAgent``s, stepping the environment
(faster than ``env.run``, which also records trajectories). For transparency the bare RLCard game
object (no environment, no agents, no state encoding) is measured too and printed.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from typing import Any

from uno_server.engine import BUILD, Hand, RandomBot, RuleSet
from uno_server.engine.simulate import play_hand


def uno_arena_round(hands: int, seed: int) -> tuple[float, float]:
    rules = RuleSet()
    bots = [RandomBot(seed * 4 + k) for k in range(4)]
    actions = 0
    t0 = time.perf_counter()
    for i in range(hands):
        h = Hand.deal(rules, seed * 1_000_003 + i, i % 4)
        play_hand(h, bots)
        actions += len(h.actions)
    return hands / (time.perf_counter() - t0), actions / hands


def make_rlcard_env(seed: int) -> tuple[Any, list[Any]]:
    import rlcard
    from rlcard.agents import RandomAgent

    env = rlcard.make("uno", config={"seed": seed})
    env.game.configure({"game_num_players": 4})
    env.num_players = 4
    agents = [RandomAgent(num_actions=env.num_actions) for _ in range(4)]
    env.set_agents(agents)
    return env, agents


def rlcard_round(env: Any, agents: list[Any], hands: int) -> tuple[float, float]:
    steps = 0
    t0 = time.perf_counter()
    for _ in range(hands):
        state, pid = env.reset()
        while not env.is_over():
            state, pid = env.step(agents[pid].step(state))
            steps += 1
    return hands / (time.perf_counter() - t0), steps / hands


def rlcard_game_round(env: Any, hands: int, seed: int) -> float:
    rng = random.Random(seed)
    game = env.game
    t0 = time.perf_counter()
    for _ in range(hands):
        st, _pid = game.init_game()
        while not game.is_over():
            st, _pid = game.step(rng.choice(st["legal_actions"]))
    return hands / (time.perf_counter() - t0)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5, help="alternations of the two (default 5)")
    ap.add_argument("--hands", type=int, default=2000, help="UNO Arena hands per round")
    ap.add_argument("--rlcard-hands", type=int, default=500, help="RLCard hands per round")
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.hands < 1 or args.rlcard_hands < 1:
        print(
            "bench-engine: --rounds, --hands and --rlcard-hands must be positive", file=sys.stderr
        )
        return 2
    print(f"python {sys.version.split()[0]}, engine {BUILD}")
    try:
        env, agents = make_rlcard_env(1)
    except ImportError:
        print(
            "bench-engine: rlcard is not installed; run it through `make bench-engine`",
            file=sys.stderr,
        )
        return 2
    ours: list[float] = []
    theirs: list[float] = []
    bare: list[float] = []
    for r in range(args.rounds):
        x, our_len = uno_arena_round(args.hands, r)
        y, their_len = rlcard_round(env, agents, args.rlcard_hands)
        z = rlcard_game_round(env, args.rlcard_hands, r)
        ours.append(x)
        theirs.append(y)
        bare.append(z)
        print(
            f"round {r + 1}/{args.rounds}: uno-arena {x:,.0f} hands/s ({our_len:.0f} actions/hand)"
            f" | rlcard env+agents {y:,.0f} hands/s ({their_len:.0f} steps/hand)"
            f" | rlcard bare game {z:,.0f} hands/s",
            flush=True,
        )
    x, y, z = statistics.median(ours), statistics.median(theirs), statistics.median(bare)
    print(
        f"medians: uno-arena {x:,.0f}, rlcard env+agents {y:,.0f}, rlcard bare game {z:,.0f}"
        f" hands/s; ratio against the bare game {x / z:.2f}"
    )
    print(f"bench-engine: uno-arena {x:.0f} hands/s, rlcard {y:.0f} hands/s, ratio {x / y:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
