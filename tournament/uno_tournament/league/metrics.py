"""Prometheus series of ``league run --metrics-port PORT``, per version of the league.

Every series carries ``league`` (the league folder's name, cut to 64 characters); the
per-version ones carry ``bot``, ``version`` and ``author`` besides, whose values are bounded by
the manifest's limits (40, 32 and 40 characters; a house bot has version and author
``house``), so a league has as many series as it has versions:

- ``uno_league_version_hands{...}``: hands stored in the league that the version played (read
  back from the store at the start, so a resumed run continues the count), and
  ``uno_league_version_hands_played_total{...}``: hands this process stored that it played
  (a counter from 0: ``rate()`` of it is the version's pace, which falls to 0 when it stops);
- ``uno_league_version_rating{...}``, ``uno_league_version_rating_low{...}`` and
  ``uno_league_version_rating_high{...}``: the last refit's rating and 95% interval (Elo
  scale), set after every refit (and at the start, from the store's last refit);
- ``uno_league_version_active{...}``: 1 while the version is active, 0 once it is retired;
- ``uno_league_versions{league, state}``: versions ``active`` and ``retired`` (refused ones are
  under ``refused``);
- ``uno_league_refits_total{league}``: refits recorded by this process, and
  ``uno_league_refit_seconds{league}``: the wall time of the last one (the fit runs in a
  process of its own while the next block plays);
- ``uno_league_refit_hands{league}``: hands in the last refit.

The page also carries the runner's ``process_*`` series (``process="league"``).

``scraped`` is set the first time the page is read: ``league run --metrics-wait S`` holds its
first block until then, so that Prometheus has the counters at 0 before their first increment
and ``rate()`` counts the first block's hands.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

from prometheus_client import CollectorRegistry, Counter, Gauge
from prometheus_client.metrics_core import Metric

from uno_server.service.metrics import Labelled, add_process_collectors
from uno_server.web.guard import start_metrics_server

from .ratings import server_name
from .store import LeagueStore, Version

__all__ = ["HOUSE_LABEL", "LeagueMetrics", "league_label"]

HOUSE_LABEL = "house"
"""The version and author of a house bot in its labels."""
VERSION_LABELS = ("bot", "version", "author")
STATES = ("active", "retired", "refused")


def league_label(name: str) -> str:
    return name[:64] or "league"


class _Seen:
    """A collector without series that marks the page as read (by a scrape)."""

    def __init__(self, seen: threading.Event) -> None:
        self.seen = seen

    def describe(self) -> list[Metric]:
        return []  # so that registering it does not count as a scrape

    def collect(self) -> Iterator[Metric]:
        self.seen.set()
        return iter(())


class LeagueMetrics:
    def __init__(self, league: str, *, process: bool = True) -> None:
        r = CollectorRegistry()
        if process:
            add_process_collectors(r, "league")
        self.league = league_label(league)
        self.registry = CollectorRegistry()
        """What the metrics page serves: every series of ``r``, labelled with the league."""
        self.registry.register(Labelled(r, {"league": self.league}))
        self.scraped = threading.Event()
        """Set when the page is first read (a scrape, or anyone's GET)."""
        self.registry.register(_Seen(self.scraped))
        labels = list(VERSION_LABELS)
        self.hands = Gauge(
            "uno_league_version_hands",
            "Hands stored in the league that the version played (all runs)",
            labels,
            registry=r,
        )
        self.hands_played = Counter(
            "uno_league_version_hands_played",
            "Hands stored by this process that the version played (rate() of it is its pace)",
            labels,
            registry=r,
        )
        self.rating = Gauge(
            "uno_league_version_rating",
            "The version's rating in the last refit (Plackett-Luce, Elo scale)",
            labels,
            registry=r,
        )
        self.low = Gauge(
            "uno_league_version_rating_low",
            "Lower 95% bound of the version's rating in the last refit",
            labels,
            registry=r,
        )
        self.high = Gauge(
            "uno_league_version_rating_high",
            "Upper 95% bound of the version's rating in the last refit",
            labels,
            registry=r,
        )
        self.active = Gauge(
            "uno_league_version_active",
            "1 while the version is active, 0 once it is retired (replaced or given up)",
            labels,
            registry=r,
        )
        self.versions = Gauge(
            "uno_league_versions", "Versions of the league by state", ["state"], registry=r
        )
        self.refits = Counter("uno_league_refits", "Refits recorded by this process", registry=r)
        self.refit_seconds = Gauge(
            "uno_league_refit_seconds",
            "Wall time of the last refit (in its own process, while play goes on)",
            registry=r,
        )
        self.refit_hands = Gauge("uno_league_refit_hands", "Hands in the last refit", registry=r)
        for s in STATES:
            self.versions.labels(s).set(0)
        self._labels: dict[str, tuple[str, str, str]] = {}
        """Server name -> (bot, version, author)."""

    def serve(self, port: int, addr: str = "127.0.0.1") -> None:
        start_metrics_server(port, addr, self.registry)

    def start(self, league: LeagueStore, counts: dict[str, int], port: int, addr: str) -> None:
        """The series of every version the league has (retired ones keep their hands and last
        rating), at their stored values, then the metrics page (an ``OSError`` if the port
        cannot be had)."""
        versions = [v for v in league.versions() if v.state != "refused"]
        for v in versions:
            self.add_version(server_name(v), v, counts.get(server_name(v), 0))
        self.set_states(league.versions())
        self.load(league, {v.id: server_name(v) for v in versions})
        self.serve(port, addr)

    # ------------------------------------------------------------------ versions

    def add_version(self, server_name: str, v: Version, hands: int) -> None:
        """A version's series, created at their start values (so that ``rate()`` and
        ``increase()`` see its first hand)."""
        key = (v.name, v.version, v.author)
        self._labels[server_name] = key
        self.hands.labels(*key).set(hands)
        self.hands_played.labels(*key)
        self.active.labels(*key).set(1 if v.state == "active" else 0)

    def add_house(self, name: str, hands: int) -> None:
        key = (name, HOUSE_LABEL, HOUSE_LABEL)
        self._labels[name] = key
        self.hands.labels(*key).set(hands)
        self.hands_played.labels(*key)
        self.active.labels(*key).set(1)

    def set_states(self, versions: list[Version]) -> None:
        counts = dict.fromkeys(STATES, 0)
        for v in versions:
            counts[v.state] = counts.get(v.state, 0) + 1
            key = (v.name, v.version, v.author)
            if key in self._labels.values():
                self.active.labels(*key).set(1 if v.state == "active" else 0)
        for s, n in counts.items():
            self.versions.labels(s).set(n)

    def hand(self, server_names: list[str], totals: dict[str, int]) -> None:
        """One stored hand, its seats' server names; ``totals`` the hands per server name."""
        for b in server_names:
            key = self._labels.get(b)
            if key is None:
                continue
            self.hands_played.labels(*key).inc()
            self.hands.labels(*key).set(totals.get(b, 0))

    # ------------------------------------------------------------------ ratings

    def set_ratings(self, rows: dict[str, tuple[float, float, float]]) -> None:
        """``server name -> (rating, low, high)`` of a refit."""
        for b, (e, lo, hi) in rows.items():
            key = self._labels.get(b)
            if key is None:
                continue
            self.rating.labels(*key).set(e)
            self.low.labels(*key).set(lo)
            self.high.labels(*key).set(hi)

    def refit(self, seconds: float, hands: int) -> None:
        self.refits.inc()
        self.refit_seconds.set(seconds)
        self.refit_hands.set(hands)

    def load(self, league: LeagueStore, server_name: dict[int, str]) -> None:
        """The last recorded refit's ratings (a resumed run shows them before its own)."""
        hist = league.history()
        refits = league.refits()
        if not refits:
            return
        last = refits[-1][0]
        self.refit_hands.set(refits[-1][2])
        self.set_ratings(
            {
                server_name[vid]: (r, lo, hi)
                for rid, vid, r, lo, hi, _ in hist
                if rid == last and vid in server_name
            }
        )
