"""Prometheus metrics of the tournament runner, on their own registry.

``uno_tournament_rating{bot}`` and ``uno_tournament_rating_ci_low/high{bot}`` come from the
Plackett-Luce fit (refitted every few seconds while hands come in);
``uno_tournament_live_elo{bot}`` is the sequential Elo of the progress display.
``uno_tournament_bot_given_up{bot}`` is 1 for a bot the runner gave up on (a stand-in plays its
seats) and ``uno_tournament_bot_forfeits_total{bot}`` counts the hands rated as its forfeits.
``uno_tournament_event_loop_lag_seconds`` is how late the runner's event loop wakes a 10 ms
sleep: the stalls of the runner itself (the tables run in the server's own process).
``uno_tournament_bot_illegal_actions_total{bot}`` counts real faults (actions rejected as
malformed or not legal) and ``uno_tournament_bot_late_answers_total{bot}`` the answers that came
after their request had closed (a race a correct bot cannot always avoid), apart.
``uno_tournament_hands_stored_total`` counts the hands this process stored: the dashboards
derive the pace and the ETA from its ``rate()``, which falls to 0 in a stall (a gauge of the
pace would keep its last value).

Every series carries a ``tournament`` label (the tournament id), so that two runs scraped by one
Prometheus stay apart and the shards of one run add up; the runner's ``process_*`` and
``python_*`` series carry ``process="runner"`` besides.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.metrics_core import Metric

from uno_server.service.metrics import Labelled, add_process_collectors
from uno_server.web.guard import start_metrics_server


class TournamentMetrics:
    def __init__(self, tournament: str = "", *, process: bool = True) -> None:
        r = CollectorRegistry()
        if process:
            add_process_collectors(r, "runner")
        self.tournament = tournament
        self.registry = CollectorRegistry()
        """What the metrics page serves: every series of ``r``, labelled with the tournament."""
        self.registry.register(Labelled(r, {"tournament": tournament}))
        self.rating = Gauge(
            "uno_tournament_rating", "Plackett-Luce rating (Elo scale)", ["bot"], registry=r
        )
        self.ci_low = Gauge(
            "uno_tournament_rating_ci_low", "Lower 95% bound of the rating", ["bot"], registry=r
        )
        self.ci_high = Gauge(
            "uno_tournament_rating_ci_high", "Upper 95% bound of the rating", ["bot"], registry=r
        )
        self.live_elo = Gauge(
            "uno_tournament_live_elo", "Sequential Elo (live display)", ["bot"], registry=r
        )
        self.hands_completed = Gauge(
            "uno_tournament_hands_completed", "Hands stored so far", registry=r
        )
        self.hands_planned = Gauge("uno_tournament_hands_planned", "Hands planned", registry=r)
        self.hands_stored = Counter(
            "uno_tournament_hands_stored",
            "Hands stored by this process (rate() of it is the pace)",
            registry=r,
        )
        self.hand_retries = Counter(
            "uno_tournament_hand_retries", "Hand attempts that had to be repeated", registry=r
        )
        self.bot_crashes = Counter(
            "uno_tournament_bot_crashes", "Bot process exits during the run", ["bot"], registry=r
        )
        self.bot_hands = Counter(
            "uno_tournament_bot_hands",
            "Hands stored that the bot played itself (a seat a stand-in played is a forfeit)",
            ["bot"],
            registry=r,
        )
        self.bot_wins = Counter(
            "uno_tournament_bot_wins",
            "Hands the bot won itself (place 1; a stand-in's win is not the bot's)",
            ["bot"],
            registry=r,
        )
        self.bot_illegal = Counter(
            "uno_tournament_bot_illegal_actions",
            "Actions of the bot rejected as malformed or not legal (real faults), in stored hands",
            ["bot"],
            registry=r,
        )
        self.bot_late = Counter(
            "uno_tournament_bot_late_answers",
            "Answers of the bot that came after their request had closed (an optional chance "
            "another seat's action ended while the answer was in flight): a race, not a fault",
            ["bot"],
            registry=r,
        )
        self.bot_forfeits = Counter(
            "uno_tournament_bot_forfeits",
            "Hands in which a stand-in played the bot's seat, rated as the forfeit policy says",
            ["bot"],
            registry=r,
        )
        self.bot_given_up = Gauge(
            "uno_tournament_bot_given_up",
            "1 if the runner gave up on the bot (a stand-in plays its seats), else 0",
            ["bot"],
            registry=r,
        )
        self.loop_lag = Histogram(
            "uno_tournament_event_loop_lag_seconds",
            "How late the runner's event loop wakes a 10 ms sleep",
            buckets=(0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0),
            registry=r,
        )
        self.loop_lag_max = Gauge(
            "uno_tournament_event_loop_lag_max_seconds",
            "The longest event-loop stall of the runner so far",
            registry=r,
        )
        self.refit_seconds = Gauge(
            "uno_tournament_refit_seconds",
            "Wall time of the last live rating refit (in a worker thread)",
            registry=r,
        )
        self.pairs_open = Gauge(
            "uno_tournament_pairs_open",
            "Adjacent pairs of the ranking a sequential run (until = settled) has not decided",
            registry=r,
        )
        self.hands_expected = Gauge(
            "uno_tournament_hands_expected",
            "Hands a sequential run still expects to play before its decision (-1: unknown)",
            registry=r,
        )

    def set_sequential(self, pairs_open: int, hands_expected: int | None) -> None:
        """A sequential run (``until = "settled"``): adjacent pairs still open, and the hands
        still expected before the decision (-1: not projected yet)."""
        self.pairs_open.set(pairs_open)
        self.hands_expected.set(-1 if hands_expected is None else hands_expected)

    def serve(self, port: int, addr: str = "127.0.0.1") -> None:
        start_metrics_server(port, addr, self.registry)

    def set_ratings(self, elo: Mapping[str, tuple[float, float, float]]) -> None:
        for bot, (e, lo, hi) in elo.items():
            self.rating.labels(bot).set(e)
            self.ci_low.labels(bot).set(lo)
            self.ci_high.labels(bot).set(hi)

    def set_live(self, elo: Mapping[str, float]) -> None:
        for bot, e in elo.items():
            self.live_elo.labels(bot).set(e)


class Registries:
    """Several collectors served as one /metrics page (the runner's and its servers', told
    apart by their ``shard`` label). The list may grow while it is served."""

    def __init__(self, collectors: list[Any]) -> None:
        self.collectors = collectors

    def collect(self) -> Iterator[Metric]:
        merged: dict[str, Metric] = {}
        for c in list(self.collectors):
            for fam in c.collect():
                have = merged.get(fam.name)
                if have is None:
                    merged[fam.name] = fam
                else:  # one family per name on a page: the shards' samples side by side
                    have.samples.extend(fam.samples)
        yield from merged.values()
