"""Synthetic four-seat hands from bots of known strength, for validating the ratings.

Every deal seats four bots (cycling through all ``C(N, 4)`` tables in a shuffled order) in a random
circular order and is replayed four times with the seats rotated (duplicate dealing), so each bot
plays every seat of the deck once. A hand's finishing order is sampled as:

* the first seat out from Plackett-Luce with utilities ``theta[bot] + seat_elo[seat]`` (Elo scale),
* the remaining order from Plackett-Luce with ``loser_signal * theta[bot] + later_seat_elo[seat]``,

via the Gumbel-max trick. The deck is shared noise: for each seat, with probability
``deal_correlation`` the hand reuses the deal's Gumbel draw for that seat instead of a fresh one,
so the rotated replays of a deal are dependent (whoever holds the good cards tends to go out first)
while every single hand is still *exactly* the model above. The true ratings are therefore well
defined (the winner-stage Elo) and only the dependence inside a deal departs from independence,
which is what the deal-clustered standard errors must absorb.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from uno_tournament.ratings import ELO_PER_NAT, Finish, FloatArray, HandResult

__all__ = ["SyntheticConfig", "bot_names", "simulate_hands", "true_ratings"]

SEATS = 4
ROTATIONS = 4


@dataclass(frozen=True)
class SyntheticConfig:
    """Parameters of the synthetic tournament (strengths in Elo)."""

    n_bots: int = 8
    spacing_elo: float = 30.0
    n_hands: int = 2000
    seat_elo: tuple[float, float, float, float] = (0.0, -20.0, -10.0, 5.0)
    later_seat_elo: tuple[float, float, float, float] = (0.0, -20.0, -10.0, 5.0)
    loser_signal: float = 1.0
    """Strength weight on places 2-4 relative to the winner (1 = plain Plackett-Luce)."""
    deal_correlation: float = 0.5
    """Probability that a seat's noise is the deal's shared draw rather than a fresh one."""


def bot_names(n: int) -> tuple[str, ...]:
    return tuple(f"bot{i:02d}" for i in range(n))


def true_ratings(cfg: SyntheticConfig) -> FloatArray:
    """True Elo of ``bot_names(cfg.n_bots)``: evenly spaced, centred at 0, bot00 the strongest."""
    n = cfg.n_bots
    out: FloatArray = cfg.spacing_elo * (np.arange(n, 0, -1, dtype=np.float64) - (n + 1) / 2)
    return out


def _gumbel(u: FloatArray) -> FloatArray:
    out: FloatArray = -np.log(-np.log(u))
    return out


def simulate_hands(
    cfg: SyntheticConfig,
    rng: np.random.Generator,
    true_elo: Sequence[float] | FloatArray | None = None,
    *,
    prefix: str = "",
) -> list[HandResult]:
    """Sample ``cfg.n_hands`` hands (a multiple of 4: one deal is four rotated hands)."""
    if cfg.n_hands % ROTATIONS:
        raise ValueError("n_hands must be a multiple of 4 (duplicate dealing)")
    if cfg.n_bots < SEATS:
        raise ValueError("need at least four bots")
    names = bot_names(cfg.n_bots)
    elo = true_ratings(cfg) if true_elo is None else np.asarray(true_elo, dtype=np.float64)
    theta = elo / ELO_PER_NAT
    gamma = np.asarray(cfg.seat_elo) / ELO_PER_NAT
    delta = np.asarray(cfg.later_seat_elo) / ELO_PER_NAT
    n_deals = cfg.n_hands // ROTATIONS

    tables_all = np.array(list(combinations(range(cfg.n_bots), SEATS)), dtype=np.int64)
    reps = -(-n_deals // len(tables_all))
    order = np.concatenate([rng.permutation(len(tables_all)) for _ in range(reps)])[:n_deals]
    tables = tables_all[order]  # (D, 4)
    circular = np.argsort(rng.random((n_deals, SEATS)), axis=1)
    at_pos = np.take_along_axis(tables, circular, axis=1)  # bot at circular position j
    # Rotation r: the bot at position j sits in seat (j + r) % 4.
    seat_bot = np.empty((n_deals, ROTATIONS, SEATS), dtype=np.int64)
    for r in range(ROTATIONS):
        for j in range(SEATS):
            seat_bot[:, r, (j + r) % SEATS] = at_pos[:, j]

    def noise() -> FloatArray:
        shared = rng.random((n_deals, 1, SEATS))
        fresh = rng.random((n_deals, ROTATIONS, SEATS))
        use = rng.random((n_deals, ROTATIONS, SEATS)) < cfg.deal_correlation
        return _gumbel(np.where(use, shared, fresh))

    u_first = theta[seat_bot] + gamma[None, None, :] + noise()
    u_later = cfg.loser_signal * theta[seat_bot] + delta[None, None, :] + noise()
    winner = np.argmax(u_first, axis=2)
    d_idx, r_idx = np.indices((n_deals, ROTATIONS))
    u_later[d_idx, r_idx, winner] = np.inf
    seat_order = np.argsort(-u_later, axis=2, kind="stable")  # winner first

    hands: list[HandResult] = []
    for d in range(n_deals):
        deal_id = f"{prefix}d{d:05d}"
        for r in range(ROTATIONS):
            finishes = tuple(
                Finish(names[int(seat_bot[d, r, s])], int(s), place)
                for place, s in enumerate(seat_order[d, r], start=1)
            )
            hands.append(HandResult(f"{deal_id}r{r}", deal_id, finishes))
    return hands
