"""Generate the Grafana dashboards of UNO Arena (deploy/grafana/dashboards/*.json).

Plain Python dicts in Grafana's dashboard JSON model (schemaVersion 39), so the generator needs
nothing beyond the standard library. Run ``make dashboards`` (or this file) after editing;
``--check`` exits 1 when a checked-in file differs from what this code generates (a test runs it).

Every query is PromQL over the metrics of ``uno-arena serve`` (``uno_*``) and of the tournament
runner (``uno_tournament_*``); none filters on ``job``, so it does not matter whether the
server's metrics come from its own target or from the runner's (embedded server). The server
creates every per-bot series at zero when a bot is registered, so no query needs a fallback for
a counter that was never incremented (a fallback would hide a misspelt metric name too).

Runner series carry a ``tournament`` label (the ``$tournament`` variable) and are added up per
tournament, so two runs stay apart and the shards of one run add up to it.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DATASOURCE_UID = "uno-arena-prometheus"
DATASOURCE = {"type": "prometheus", "uid": DATASOURCE_UID}
OUT = Path(__file__).resolve().parent / "dashboards"
RATE = "$__rate_interval"
BOT = '{bot=~"$bot"}'
TOURNAMENT = '{tournament=~"$tournament"}'
BOT_T = '{bot=~"$bot",tournament=~"$tournament"}'

Json = dict[str, Any]


@dataclass
class Query:
    expr: str
    legend: str = ""
    instant: bool = False


@dataclass
class Panel:
    title: str
    description: str
    queries: list[Query]
    kind: str = "timeseries"
    unit: str = "short"
    w: int = 8
    h: int = 8
    extra: Json = field(default_factory=dict)
    options: Json = field(default_factory=dict)
    overrides: list[Json] = field(default_factory=list)
    decimals: int | None = None
    minimum: float | None = None
    maximum: float | None = None


@dataclass
class Row:
    title: str
    panels: list[Panel]


def per_minute(metric: str, by: str = "bot") -> str:
    return f"sum by ({by}) (rate({metric}{BOT}[{RATE}])) * 60"


def latency(q: float) -> str:
    return (
        f"histogram_quantile({q}, sum by (bot, le) "
        f"(rate(uno_decision_latency_seconds_bucket{BOT}[{RATE}])))"
    )


def ci_overrides() -> list[Json]:
    """Shade the band between the 95% bounds; the bounds themselves are not drawn."""
    return [
        {
            "matcher": {"id": "byName", "options": "95% high"},
            "properties": [
                {"id": "custom.fillBelowTo", "value": "95% low"},
                {"id": "custom.lineWidth", "value": 0},
                {"id": "custom.fillOpacity", "value": 20},
                {"id": "color", "value": {"mode": "fixed", "fixedColor": "blue"}},
            ],
        },
        {
            "matcher": {"id": "byName", "options": "95% low"},
            "properties": [
                {"id": "custom.lineWidth", "value": 0},
                {"id": "color", "value": {"mode": "fixed", "fixedColor": "blue"}},
            ],
        },
        {
            "matcher": {"id": "byName", "options": "rating"},
            "properties": [
                {"id": "custom.lineWidth", "value": 2},
                {"id": "color", "value": {"mode": "fixed", "fixedColor": "dark-blue"}},
            ],
        },
    ]


def rating_band(bot_matcher: str) -> list[Query]:
    """One bot's rating in the selected tournament (the shards of one run fit on the same
    store, so their ratings agree; ``avg`` joins them)."""
    by = "avg by (tournament, bot)"
    return [
        Query(f"{by} (uno_tournament_rating{bot_matcher})", "rating"),
        Query(f"{by} (uno_tournament_rating_ci_low{bot_matcher})", "95% low"),
        Query(f"{by} (uno_tournament_rating_ci_high{bot_matcher})", "95% high"),
    ]


def per_run(metric: str, matcher: str = TOURNAMENT) -> str:
    """A runner series added up over the processes of one tournament (the runner, or the
    shards of ``--shard I/N``: each reports its own share)."""
    return f"sum by (tournament) ({metric}{matcher})"


WIN_RATE = (
    f"sum by (tournament, bot) (uno_tournament_bot_wins_total{BOT_T}) / "
    f"(sum by (tournament, bot) (uno_tournament_bot_hands_total{BOT_T}) > 0)"
)
PACE = f"sum by (tournament) (rate(uno_tournament_hands_stored_total{TOURNAMENT}[1m]))"


# ------------------------------------------------------------------------------ overview


def overview_rows() -> list[Row]:
    return [
        Row(
            "Tournament",
            [
                Panel(
                    "Tournament progress",
                    "Hands stored out of the hands planned, per tournament (the shards of one "
                    "run added up).",
                    [
                        Query(
                            f"{per_run('uno_tournament_hands_completed')} / "
                            f"{per_run('uno_tournament_hands_planned')}",
                            "{{tournament}}",
                        )
                    ],
                    kind="gauge",
                    unit="percentunit",
                    w=4,
                    h=6,
                    minimum=0,
                    maximum=1,
                ),
                Panel(
                    "ETA",
                    "Time to finish the plan at the pace of the last minute (hands stored per "
                    "second, from the counter of stored hands). No value while nothing is "
                    "stored: a stalled run has no ETA.",
                    [
                        Query(
                            f"({per_run('uno_tournament_hands_planned')} - "
                            f"{per_run('uno_tournament_hands_completed')}) / ({PACE} > 0)",
                            "{{tournament}}",
                        )
                    ],
                    kind="stat",
                    unit="s",
                    w=4,
                    h=6,
                ),
                Panel(
                    "Hands stored / planned",
                    "Hands stored so far, and how many are planned in all, per tournament.",
                    [
                        Query(per_run("uno_tournament_hands_completed"), "stored {{tournament}}"),
                        Query(per_run("uno_tournament_hands_planned"), "planned {{tournament}}"),
                    ],
                    kind="stat",
                    w=4,
                    h=6,
                    decimals=0,
                ),
                Panel(
                    "Active matches",
                    "Matches in play on the server(s) right now.",
                    [Query("sum(uno_active_matches)", "active")],
                    kind="stat",
                    w=4,
                    h=6,
                    decimals=0,
                ),
                Panel(
                    "Connected bots",
                    "Bot streams currently connected to the server(s).",
                    [Query("sum(uno_connected_bots)", "connected")],
                    kind="stat",
                    w=4,
                    h=6,
                    decimals=0,
                ),
                Panel(
                    "Scrape targets up",
                    "Prometheus targets of UNO Arena that answered their last scrape.",
                    [
                        Query('sum(up{job=~"uno-.*"})', "up"),
                        Query('count(up{job=~"uno-.*"})', "all"),
                    ],
                    kind="stat",
                    w=4,
                    h=6,
                    decimals=0,
                ),
                Panel(
                    "Hands per second",
                    "Hands finished per second on the server(s), and hands stored per second "
                    "by each tournament (it drops to 0 when a run stalls).",
                    [
                        Query(f"sum(rate(uno_hands_total[{RATE}]))", "server"),
                        Query(
                            "sum by (tournament) "
                            f"(rate(uno_tournament_hands_stored_total{TOURNAMENT}[{RATE}]))",
                            "stored {{tournament}}",
                        ),
                    ],
                    unit="ops",
                    w=12,
                ),
                Panel(
                    "Moves per second",
                    "Actions applied per second, by who decided them (bot, timeout default, "
                    "built-in AI after a takeover).",
                    [
                        Query(
                            f"sum by (source) (rate(uno_moves_total[{RATE}]))",
                            "{{source}}",
                        )
                    ],
                    unit="ops",
                    w=12,
                ),
            ],
        ),
        Row(
            "Leaderboard",
            [
                Panel(
                    "Rating per bot",
                    "Plackett-Luce rating (Elo scale) of every bot in each tournament, refitted "
                    "every few seconds once 8 hands are stored. Higher is stronger.",
                    [
                        Query(
                            f"avg by (tournament, bot) (uno_tournament_rating{BOT_T})",
                            "{{bot}} {{tournament}}",
                        )
                    ],
                    w=12,
                    decimals=0,
                ),
                Panel(
                    "Leaderboard (rating now)",
                    "The latest rating of every bot, strongest first (pick one tournament).",
                    [
                        Query(
                            f"sort_desc(avg by (tournament, bot) (uno_tournament_rating{BOT_T}))",
                            "{{bot}} {{tournament}}",
                            instant=True,
                        )
                    ],
                    kind="bargauge",
                    w=12,
                    decimals=0,
                    extra={
                        "targets_format": "table",
                        "transformations": [
                            {
                                "id": "organize",
                                "options": {"excludeByName": {"Time": True, "tournament": True}},
                            },
                            {
                                "id": "sortBy",
                                "options": {"sort": [{"field": "Value", "desc": True}]},
                            },
                        ],
                    },
                    options={
                        "orientation": "horizontal",
                        "displayMode": "gradient",
                        "reduceOptions": {"calcs": [], "fields": "/^Value$/", "values": True},
                    },
                ),
                Panel(
                    "Win rate per bot",
                    "Share of its stored hands each bot won (finished first). With four seats "
                    "a bot of average strength wins about 25%.",
                    [Query(WIN_RATE, "{{bot}} {{tournament}}")],
                    unit="percentunit",
                    w=12,
                    minimum=0,
                ),
                Panel(
                    "Live Elo per bot",
                    "The sequential Elo of the runner's progress display: quicker to move, "
                    "noisier than the Plackett-Luce rating.",
                    [
                        Query(
                            f"avg by (tournament, bot) (uno_tournament_live_elo{BOT_T})",
                            "{{bot}} {{tournament}}",
                        )
                    ],
                    w=12,
                    decimals=0,
                ),
                Panel(
                    "Rating with 95% CI: $bot",
                    "One panel per bot (repeated over the bot variable): the rating and its "
                    "95% confidence band (pick one tournament). Overlapping bands mean the "
                    "order is not settled yet.",
                    rating_band(BOT_T),
                    # four per row: Grafana's default for a repeat without maxPerRow (a key
                    # the dashboard schema does not have; it would not survive a round trip)
                    w=6,
                    decimals=0,
                    overrides=ci_overrides(),
                    extra={"repeat": "bot", "repeatDirection": "h"},
                ),
            ],
        ),
        Row(
            "Bot speed and faults",
            [
                *(
                    Panel(
                        f"Decision latency p{int(q * 100)} per bot",
                        f"{int(q * 100)}th percentile of the time from the server's decision "
                        "request to the bot's accepted answer (network plus thinking); a "
                        "decision that timed out counts at its deadline, so a percentile at "
                        "the deadline means timeouts.",
                        [Query(latency(q), "{{bot}}")],
                        unit="s",
                        w=8,
                    )
                    for q in (0.5, 0.95, 0.99)
                ),
                Panel(
                    "Timeouts per bot (per minute)",
                    "Decisions a bot did not answer in time; the server played the default "
                    "action and gave the seat a strike.",
                    [Query(per_minute("uno_timeouts_total"), "{{bot}}")],
                    w=6,
                ),
                Panel(
                    "Faults and late answers per bot (per minute)",
                    "Rejected actions, in two kinds that never overlap. Faults: malformed, not "
                    "legal now, another bot's seat, an unknown request. Late answers: answers to "
                    "a request that had already closed (another seat or the UNO window's timer "
                    "closed a chance while the answer was on its way); a correct bot gets some.",
                    [
                        Query(per_minute("uno_illegal_actions_total"), "{{bot}} faults"),
                        Query(per_minute("uno_late_actions_total"), "{{bot}} late answers"),
                    ],
                    w=6,
                ),
                Panel(
                    "Disconnects per bot (per minute)",
                    "Bot streams that ended (a bot that crashes, restarts or loses its network).",
                    [Query(per_minute("uno_disconnects_total"), "{{bot}}")],
                    w=6,
                ),
                Panel(
                    "Takeovers per bot (per minute)",
                    "Seats handed to the built-in AI (too many strikes, or the bot stayed away).",
                    [Query(per_minute("uno_takeovers_total"), "{{bot}}")],
                    w=6,
                ),
            ],
        ),
        Row(
            "Server and runner health",
            [
                Panel(
                    "Server errors (per second)",
                    "Requests the server answered with a gRPC error, the five most frequent "
                    "status codes (the server logs each kind, rate-limited).",
                    [
                        Query(
                            f"topk(5, sum by (code) (rate(uno_server_errors_total[{RATE}])))",
                            "{{code}}",
                        )
                    ],
                    unit="ops",
                    w=6,
                ),
                Panel(
                    "Matches finished (per second)",
                    "Matches that ended, by how they ended (completed, cancelled, ...).",
                    [
                        Query(
                            f"sum by (outcome) (rate(uno_matches_total[{RATE}]))",
                            "{{outcome}}",
                        )
                    ],
                    unit="ops",
                    w=6,
                ),
                Panel(
                    "Runner retries and bot crashes",
                    "Hands the runner had to play again (server restart, cancelled match, "
                    "transient errors), and bot processes that exited during the run (the "
                    "runner restarts them), per tournament.",
                    [
                        Query(
                            "sum by (tournament) (increase("
                            f"uno_tournament_hand_retries_total{TOURNAMENT}[{RATE}]))",
                            "hand retries {{tournament}}",
                        ),
                        Query(
                            "sum by (tournament, bot) "
                            f"(increase(uno_tournament_bot_crashes_total{BOT_T}[{RATE}]))",
                            "crashes {{bot}} {{tournament}}",
                        ),
                    ],
                    w=6,
                ),
                Panel(
                    "CPU of the server and the runner",
                    "CPU seconds per second of the game server and the tournament runner "
                    "processes (1 = one core busy). A server near 1 is at its limit.",
                    [
                        Query(
                            "sum by (process) (rate(process_cpu_seconds_total"
                            f'{{process=~"server|runner"}}[{RATE}]))',
                            "{{process}}",
                        )
                    ],
                    unit="percentunit",
                    w=6,
                ),
            ],
        ),
    ]


# ------------------------------------------------------------------------------ one bot


def bot_rows() -> list[Row]:
    return [
        Row(
            "Strength",
            [
                Panel(
                    "Rating with 95% CI",
                    "The bot's Plackett-Luce rating (Elo scale) and its 95% confidence band "
                    "in the selected tournament.",
                    rating_band(BOT_T),
                    w=12,
                    decimals=0,
                    overrides=ci_overrides(),
                ),
                Panel(
                    "Win rate",
                    "Share of the bot's stored hands it won.",
                    [Query(WIN_RATE, "{{bot}} {{tournament}}")],
                    unit="percentunit",
                    w=6,
                    minimum=0,
                ),
                Panel(
                    "Hands played / won",
                    "Hands of this bot stored in the selected tournament, and how many it won.",
                    [
                        Query(per_run("uno_tournament_bot_hands_total", BOT_T), "played"),
                        Query(per_run("uno_tournament_bot_wins_total", BOT_T), "won"),
                    ],
                    kind="stat",
                    w=6,
                    decimals=0,
                ),
            ],
        ),
        Row(
            "Speed",
            [
                Panel(
                    "Decision latency p50 / p95 / p99",
                    "Percentiles of the time from decision request to accepted answer; a "
                    "timed-out decision counts at its deadline.",
                    [
                        Query(latency(0.5), "p50"),
                        Query(latency(0.95), "p95"),
                        Query(latency(0.99), "p99"),
                    ],
                    unit="s",
                    w=12,
                ),
                Panel(
                    "Decision latency distribution",
                    "Answers per second in each latency bucket (a heatmap over time).",
                    [
                        Query(
                            f"sum by (le) (rate(uno_decision_latency_seconds_bucket{BOT}[{RATE}]))",
                            "{{le}}",
                        )
                    ],
                    kind="heatmap",
                    w=12,
                    extra={"targets_format": "heatmap"},
                    options={
                        "calculate": False,
                        "yAxis": {"unit": "s"},
                        "cellGap": 1,
                        "color": {"scheme": "Oranges", "mode": "scheme"},
                        "legend": {"show": True},
                        "tooltip": {"show": True, "yHistogram": True},
                    },
                ),
                Panel(
                    "Decisions per second",
                    "Decisions of the bot per second (answered, or timed out).",
                    [
                        Query(
                            f"sum(rate(uno_decision_latency_seconds_count{BOT}[{RATE}]))",
                            "decisions",
                        )
                    ],
                    unit="ops",
                    w=12,
                ),
            ],
        ),
        Row(
            "Faults",
            [
                Panel(
                    "Timeouts, disconnects, takeovers (per minute)",
                    "Late answers, dropped streams and seats handed to the built-in AI.",
                    [
                        Query(per_minute("uno_timeouts_total"), "timeouts"),
                        Query(per_minute("uno_disconnects_total"), "disconnects"),
                        Query(per_minute("uno_takeovers_total"), "takeovers"),
                    ],
                    w=12,
                ),
                Panel(
                    "Faults and late answers by reason (per minute)",
                    "Rejected actions of the bot: the five most frequent reasons of its faults "
                    "(malformed, not legal now...), and its late answers (answers to a request "
                    "that had already closed; a correct bot gets some).",
                    [
                        Query(
                            f"topk(5, {per_minute('uno_illegal_actions_total', 'reason')})",
                            "fault: {{reason}}",
                        ),
                        Query(
                            per_minute("uno_late_actions_total", "reason"),
                            "late: {{reason}}",
                        ),
                    ],
                    w=12,
                ),
            ],
        ),
    ]


# ------------------------------------------------------------------------------ JSON model


def bot_variable(*, multi: bool) -> Json:
    return {
        "name": "bot",
        "label": "Bot",
        "type": "query",
        "datasource": DATASOURCE,
        "query": {
            "query": "label_values(uno_decision_latency_seconds_count, bot)",
            "refId": "bot",
        },
        # no "definition" (the editor's display copy of the query): not in the dashboard
        # schema, so it would not survive a round trip; Grafana shows query.query instead
        "refresh": 2,
        "sort": 1,
        "multi": multi,
        "includeAll": multi,
        **({"allValue": ".*", "current": {"text": "All", "value": "$__all"}} if multi else {}),
    }


def tournament_variable() -> Json:
    """Which tournaments the runner panels show: each run has its own id (``NAME-xxxxxx``),
    the shards of one run share it."""
    query = "label_values(uno_tournament_hands_planned, tournament)"
    return {
        "name": "tournament",
        "label": "Tournament",
        "description": "The tournament id of a run (its shards share it); All shows each "
        "selected run apart.",
        "type": "query",
        "datasource": DATASOURCE,
        "query": {"query": query, "refId": "tournament"},
        "refresh": 2,
        "sort": 2,
        "multi": True,
        "includeAll": True,
        "allValue": ".*",
        "current": {"text": "All", "value": "$__all"},
    }


def panel_json(p: Panel, pid: int, x: int, y: int) -> Json:
    fmt = p.extra.get("targets_format", "time_series")
    targets = [
        {
            "refId": chr(ord("A") + i),
            "datasource": DATASOURCE,
            "expr": q.expr,
            "legendFormat": q.legend,
            "range": not q.instant,
            "instant": q.instant,
            "format": fmt,
        }
        for i, q in enumerate(p.queries)
    ]
    defaults: Json = {"unit": p.unit}
    if p.decimals is not None:
        defaults["decimals"] = p.decimals
    if p.minimum is not None:
        defaults["min"] = p.minimum
    if p.maximum is not None:
        defaults["max"] = p.maximum
    if p.kind == "timeseries":
        defaults["custom"] = {"drawStyle": "line", "lineWidth": 1, "fillOpacity": 0}
    options: Json = {"legend": {"displayMode": "list", "placement": "bottom", "showLegend": True}}
    if p.kind in ("heatmap", "bargauge"):
        options = {}  # their own legend options (a time-series legend is not theirs)
    if p.kind in ("stat", "gauge"):
        options = {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False}}
    options.update(p.options)
    out: Json = {
        "id": pid,
        "type": p.kind,
        "title": p.title,
        "description": p.description,
        "datasource": DATASOURCE,
        "gridPos": {"h": p.h, "w": p.w, "x": x, "y": y},
        "targets": targets,
        "fieldConfig": {"defaults": defaults, "overrides": p.overrides},
        "options": options,
    }
    out.update({k: v for k, v in p.extra.items() if k != "targets_format"})
    return out


def dashboard(uid: str, title: str, description: str, rows: list[Row], *, multi: bool) -> Json:
    panels: list[Json] = []
    pid = 1
    y = 0
    for row in rows:
        panels.append(
            {
                "id": pid,
                "type": "row",
                "title": row.title,
                "collapsed": False,
                "gridPos": {"h": 1, "w": 24, "x": 0, "y": y},
                "panels": [],
            }
        )
        pid += 1
        y += 1
        x = 0
        row_h = 0
        for p in row.panels:
            if x + p.w > 24:
                x, y, row_h = 0, y + row_h, 0
            panels.append(panel_json(p, pid, x, y))
            pid += 1
            x += p.w
            row_h = max(row_h, p.h)
        y += row_h
    return {
        "uid": uid,
        "title": title,
        "description": description,
        "tags": ["uno-arena"],
        "timezone": "browser",
        "editable": True,
        "graphTooltip": 1,
        "schemaVersion": 39,
        "version": 1,
        "refresh": "5s",
        "time": {"from": "now-15m", "to": "now"},
        "timepicker": {},
        "annotations": {"list": []},
        "links": [
            {
                "title": "UNO Arena dashboards",
                "type": "dashboards",
                "tags": ["uno-arena"],
                "asDropdown": True,
                "includeVars": True,
                "keepTime": True,
            }
        ],
        "templating": {"list": [tournament_variable(), bot_variable(multi=multi)]},
        "panels": panels,
    }


def dashboards() -> dict[str, Json]:
    """File name -> dashboard JSON model."""
    return {
        "uno-arena-overview.json": dashboard(
            "uno-arena-overview",
            "UNO Arena: tournament overview",
            "A running tournament: progress, pace, leaderboard, and which bots are slow or "
            "misbehaving.",
            overview_rows(),
            multi=True,
        ),
        "uno-arena-bot.json": dashboard(
            "uno-arena-bot",
            "UNO Arena: one bot",
            "Strength, speed and faults of one bot.",
            bot_rows(),
            multi=False,
        ),
        "uno-arena-league.json": league_dashboard(),
    }


# ------------------------------------------------------------------------------ league

LEAGUE = '{league=~"$league"}'
VERSION = '{league=~"$league",bot=~"$bot"}'
"""The series of ``league run --metrics-port`` (uno_tournament.league.metrics): per version
(``bot``, ``version``, ``author``; bounded by the manifest's limits), in a ``league``."""
BY_VERSION = "by (league, bot, version)"
VERSION_LEGEND = "{{bot}}@{{version}}"


def league_rows() -> list[Row]:
    dashed = {
        "matcher": {"id": "byRegexp", "options": ".* 95% (low|high)$"},
        "properties": [
            {"id": "custom.lineStyle", "value": {"fill": "dash", "dash": [4, 4]}},
            {"id": "custom.lineWidth", "value": 1},
        ],
    }
    return [
        Row(
            "Ratings",
            [
                Panel(
                    "Rating with 95% interval per version",
                    "Each version's rating (Elo scale) after every refit of the league, its 95% "
                    "interval drawn dashed. A retired version is still rated (its hands stay in "
                    "the fit); a new version appears at its first refit.",
                    [
                        Query(
                            f"max {BY_VERSION} (uno_league_version_rating{VERSION})", VERSION_LEGEND
                        ),
                        Query(
                            f"max {BY_VERSION} (uno_league_version_rating_low{VERSION})",
                            f"{VERSION_LEGEND} 95% low",
                        ),
                        Query(
                            f"max {BY_VERSION} (uno_league_version_rating_high{VERSION})",
                            f"{VERSION_LEGEND} 95% high",
                        ),
                    ],
                    w=16,
                    h=10,
                    overrides=[dashed],
                    decimals=0,
                ),
                Panel(
                    "Interval width per version",
                    "High minus low of each version's 95% interval: how far the league is from "
                    "knowing the version's strength; it narrows as the version plays.",
                    [
                        Query(
                            f"max {BY_VERSION} (uno_league_version_rating_high{VERSION}) - "
                            f"max {BY_VERSION} (uno_league_version_rating_low{VERSION})",
                            VERSION_LEGEND,
                        )
                    ],
                    h=10,
                    decimals=0,
                ),
            ],
        ),
        Row(
            "Play",
            [
                Panel(
                    "Hands per version (per minute)",
                    "Hands stored per minute that each version played (the rate of a counter "
                    "of this run: it falls to 0 for a version that is not seated).",
                    [
                        Query(
                            f"sum {BY_VERSION} "
                            f"(rate(uno_league_version_hands_played_total{VERSION}[{RATE}])) * 60",
                            VERSION_LEGEND,
                        )
                    ],
                    unit="short",
                ),
                Panel(
                    "Hands per version (in the league)",
                    "Hands stored in the league that each version played, over every run.",
                    [
                        Query(
                            f"max {BY_VERSION} (uno_league_version_hands{VERSION})",
                            VERSION_LEGEND,
                        )
                    ],
                ),
                Panel(
                    "Versions",
                    "Versions of the league that play (active) and that no longer do "
                    "(retired: replaced by a newer version, or given up on).",
                    [
                        Query(
                            'max by (league) (uno_league_versions{league=~"$league",'
                            'state="active"})',
                            "active",
                        ),
                        Query(
                            'max by (league) (uno_league_versions{league=~"$league",'
                            'state="retired"})',
                            "retired",
                        ),
                    ],
                    decimals=0,
                    minimum=0,
                ),
            ],
        ),
        Row(
            "Refits",
            [
                Panel(
                    "Refit duration",
                    "Wall time of the last refit: one fit over every hand of the league, in a "
                    "process of its own while the next block plays.",
                    [Query(f"max by (league) (uno_league_refit_seconds{LEAGUE})", "refit")],
                    unit="s",
                    w=12,
                ),
                Panel(
                    "Refits per minute and hands in the last refit",
                    "Refits recorded per minute (one after each block, unless the previous "
                    "one is still running) and the hands the last one fitted.",
                    [
                        Query(
                            f"sum by (league) (rate(uno_league_refits_total{LEAGUE}[{RATE}])) * 60",
                            "refits per minute",
                        ),
                        Query(f"max by (league) (uno_league_refit_hands{LEAGUE})", "hands"),
                    ],
                    w=12,
                ),
            ],
        ),
    ]


def league_variables() -> list[Json]:
    league = {
        "name": "league",
        "label": "League",
        "description": "The league folder's name (``league run --metrics-port``).",
        "type": "query",
        "datasource": DATASOURCE,
        "query": {"query": "label_values(uno_league_versions, league)", "refId": "league"},
        "refresh": 2,
        "sort": 1,
        "multi": True,
        "includeAll": True,
        "allValue": ".*",
        "current": {"text": "All", "value": "$__all"},
    }
    bot = {
        "name": "bot",
        "label": "Bot",
        "description": "Bots of the league (each with its versions).",
        "type": "query",
        "datasource": DATASOURCE,
        "query": {"query": "label_values(uno_league_version_hands, bot)", "refId": "bot"},
        "refresh": 2,
        "sort": 1,
        "multi": True,
        "includeAll": True,
        "allValue": ".*",
        "current": {"text": "All", "value": "$__all"},
    }
    return [league, bot]


def league_dashboard() -> Json:
    model = dashboard(
        "uno-arena-league",
        "UNO Arena: league",
        "A standing league (league run --metrics-port): every version's rating with its "
        "interval over the refits, its pace, the versions active and retired, and the refits.",
        league_rows(),
        multi=True,
    )
    model["templating"] = {"list": league_variables()}
    return model


def render(model: Json) -> str:
    return json.dumps(model, indent=2, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="Generate deploy/grafana/dashboards/*.json")
    ap.add_argument("--check", action="store_true", help="exit 1 if a checked-in file is stale")
    ap.add_argument("--out", type=Path, default=OUT, help="output folder")
    args = ap.parse_args(argv)
    stale = []
    for name, model in dashboards().items():
        path = args.out / name
        text = render(model)
        if args.check:
            if not path.is_file() or path.read_text() != text:
                stale.append(str(path))
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path}")
    if stale:
        print(
            "stale dashboards (run `make dashboards`): " + ", ".join(stale),
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
