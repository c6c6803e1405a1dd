"""Realistic tournament folders of any size, fast: for ``make bench-report`` and the loop-lag test.

A folder made here looks like one the runner wrote: the configuration and tournament id in the
store's meta, every hand of the plan's first ``n`` hands in the database (hand row, four seat rows
with decision times, the compressed replay, its content hash) and its replay file on disk.

The finishing orders come from the rating model itself, with the weight of places 2-4 that
engine-played hands show (0.31), strengths spread like heuristic bots of graded randomness and
the seat terms of real hands; a few seats are played by a stand-in (forfeits). The replays are
real hands the engine played between heuristic bots, with events shaped like the service's
(``sequence``, ``hand_number``, ``time`` and one kind per event) and the hand's own id, seating,
seeds and schedule slot, so the files and the database have the sizes of a real run (about 20 KB
per replay file and 7 KB per hand in SQLite).
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from uno_server.engine import Hand, HeuristicBot, RuleSet
from uno_server.engine.simulate import play_hand

from .config import TournamentConfig
from .ratings import ELO_PER_NAT
from .replay import REPLAY_FORMAT, write_replay
from .standings import places
from .store import HandRecord, SeatRecord, Store

LOSER_WEIGHT = 0.31
SEAT_ELO = (0.0, 5.0, -3.0, -2.0)
STAND_IN_RATE = 0.002


def _kind(name: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def template_replays(n: int, seed: int = 1) -> list[dict[str, Any]]:
    """``n`` hands the engine plays between heuristic bots, as replay dicts (no identity yet)."""
    rules = RuleSet(scoring="single_hand")
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        hand_seed = rng.getrandbits(63)
        bots = [HeuristicBot(rng.getrandbits(32), randomness=rng.random() * 0.6) for _ in range(4)]
        hand = play_hand(Hand.deal(rules, hand_seed, 0), bots)
        events = []
        for i, e in enumerate(hand.log, start=1):
            body = {k: (list(v) if isinstance(v, tuple) else v) for k, v in e._asdict().items()}
            events.append(
                {
                    "sequence": str(i),
                    "hand_number": 1,
                    "time": "2026-01-01T00:00:00.000000000Z",
                    _kind(type(e).__name__): body,
                }
            )
        out.append(
            {
                "rules": rules.to_dict(),
                "seed": hand_seed,
                "dealer": 0,
                "actions": [list(a) for a in hand.actions],
                "result": {
                    "winner": hand.winner,
                    "points_held": [hand.points_held(s) for s in range(4)],
                },
                "events": events,
            }
        )
    return out


def make_folder(
    folder: Path,
    config: TournamentConfig,
    n_hands: int,
    *,
    seed: int = 1,
    templates: int = 200,
    batch: int = 1000,
    progress: Callable[[int, int], None] | None = None,
) -> str:
    """Write a tournament folder holding the plan's first ``n_hands`` hands; returns its id."""
    tid = f"{config.name}-synthetic"
    plan = config.plan(tid)[:n_hands]
    if len(plan) < n_hands:
        raise ValueError(f"the configuration plans only {len(plan)} hands")
    rng = np.random.default_rng(seed)
    names = [b.name for b in config.bots]
    elo = np.linspace(250.0, -250.0, len(names))
    theta = {n: e / ELO_PER_NAT for n, e in zip(names, elo, strict=True)}
    gamma = np.asarray(SEAT_ELO) / ELO_PER_NAT
    pool = template_replays(templates, seed)
    store = Store.create(
        folder,
        {"tournament_id": tid, "config": config.to_dict(), "created_at": time.time()},
    )
    try:
        pending: list[HandRecord] = []
        for i, spec in enumerate(plan):
            t = pool[i % len(pool)]
            u_first = np.array([theta[b] for b in spec.bots]) + gamma + rng.gumbel(size=4)
            winner = int(np.argmax(u_first))
            points = list(t["result"]["points_held"])
            if points[winner] != 0:  # the template's winner holds 0 points: move it
                w0 = points.index(0)
                points[winner], points[w0] = points[w0], points[winner]
            u_later = LOSER_WEIGHT * np.array([theta[b] for b in spec.bots]) + rng.gumbel(size=4)
            order = [s for s in np.argsort(-u_later) if s != winner]
            rest = sorted((p for s, p in enumerate(points) if s != winner))
            for s, p in zip(order, rest, strict=True):
                points[int(s)] = p
            stand_in = [bool(rng.random() < STAND_IN_RATE) for _ in range(4)]
            place = places(winner, points)
            seats = [
                SeatRecord(
                    seat=s,
                    bot=b,
                    place=place[s],
                    points_left=points[s],
                    points_won=sum(points) if s == winner else 0,
                    timeouts=int(stand_in[s]),
                    strikes=int(stand_in[s]),
                    taken_over=stand_in[s],
                    takeover_cause="strikes" if stand_in[s] else "",
                    decisions=int(rng.integers(15, 60)),
                    response_ms=rng.lognormal(1.5, 0.8, int(rng.integers(15, 60)))
                    .astype(np.int64)
                    .tolist(),
                )
                for s, b in enumerate(spec.bots)
            ]
            replay = {
                "format": REPLAY_FORMAT,
                "tournament": tid,
                "hand_id": spec.hand_id,
                "match_id": f"m-{i:08d}",
                "rules": t["rules"],
                "seed": t["seed"],
                "match_seed": spec.seed,
                "dealer": 0,
                "schedule": {
                    "table": spec.table,
                    "block": spec.block,
                    "deal": spec.deal,
                    "rotation": spec.rotation,
                    "table_bots": list(spec.table_bots),
                },
                "bots": list(spec.bots),
                "fallback_seats": [],
                "stand_in_seats": [s for s in range(4) if stand_in[s]],
                "actions": t["actions"],
                "result": {"winner": winner, "points_held": points},
                "events": t["events"],
            }
            pending.append(
                HandRecord(
                    hand_id=spec.hand_id,
                    table=spec.table,
                    block=spec.block,
                    deal=spec.deal,
                    rotation=spec.rotation,
                    deal_id=spec.deal_id,
                    match_seed=spec.seed,
                    hand_seed=int(t["seed"]),
                    dealer=0,
                    match_id=f"m-{i:08d}",
                    winner_seat=winner,
                    moves=len(t["actions"]),
                    duration_s=float(rng.uniform(0.3, 3.0)),
                    seats=seats,
                    replay=replay,
                )
            )
            if len(pending) == batch or i == len(plan) - 1:
                store.add_hands(pending)
                for h in pending:
                    write_replay(folder / "replays", h.replay)
                pending = []
                if progress is not None:
                    progress(i + 1, len(plan))
    finally:
        store.close()
    return tid
