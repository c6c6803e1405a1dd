"""A real Prometheus scrapes a real ``league run --metrics-port``; every panel query of the
Grafana league dashboard must return real, non-zero data over the run (issue 26, "Seeing it").

The pattern and the helpers are test_live_prometheus's: the runner holds its metrics page up
after its last hand (--metrics-linger) until Prometheus has scraped it after the wait began,
then Ctrl-C ends the wait; every query is evaluated as a RANGE query over the whole run, with
``$league`` as All and ``$bot`` as All and as one bot (named as that test's per-bot choice), and
must be non-zero at some point; then each metric name is misspelt in turn and the same check
must fail, naming the panel.

The league: ``py-flaky@1`` replaced by ``py-flaky@2`` before play (a retired version), and
``b@1`` of another author; the house bots fill the tables. 96 hands, four blocks: refits, a
pace per version, ratings with intervals.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

from ..tournament.test_league_run import RANDOM, _enter, _new_league
from .common import DEPLOY, ROOT, load_json, need_tool
from .test_live_prometheus import (
    FLAKY,
    check,
    free_port,
    get,
    last_scrape,
    mutations,
    processes,
    query_range,
    release_lingering,
    targets,
    wait_scraped,
)

DASHBOARD = DEPLOY / "grafana" / "dashboards" / "uno-arena-league.json"
DEADLINE_S = 300.0  # a hang, not a pace: the run takes about 20 s on a quiet machine
HANDS = 96
JOB = "uno-league"


def test_every_league_panel_shows_real_data_and_a_typo_names_its_panel(tmp_path: Path) -> None:
    prometheus = need_tool("prometheus")
    league = _new_league(tmp_path)
    _enter(league, FLAKY, "1", "ann")
    _enter(league, FLAKY, "2", "ann")  # py-flaky@1 retired: the retired count is 1
    _enter(league, "b", "1", "bob", RANDOM)
    metrics_port, prom_port = free_port(), free_port()
    prom = f"http://127.0.0.1:{prom_port}"
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\nscrape_configs:\n"
        f"  - job_name: {JOB}\n    static_configs: [{{targets: ['127.0.0.1:{metrics_port}']}}]\n"
    )
    log = (tmp_path / "logs.txt").open("w")  # closed by processes() with the processes
    out = tmp_path / "league-run.txt"
    start = time.time()
    with processes(log) as procs, out.open("w") as handle:
        procs.append(
            subprocess.Popen(
                [
                    prometheus,
                    f"--config.file={cfg}",
                    f"--storage.tsdb.path={tmp_path / 'tsdb'}",
                    f"--web.listen-address=127.0.0.1:{prom_port}",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        )
        runner = subprocess.Popen(
            [
                *(sys.executable, "-m", "uno_server.cli", "league", "run", str(league)),
                *(
                    "--hands",
                    str(HANDS),
                    "--metrics-port",
                    str(metrics_port),
                    "--metrics-wait",
                    "120",
                ),
                *("--metrics-linger", str(int(DEADLINE_S))),
            ],
            stdout=handle,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
            env={**os.environ, "PYTHONUNBUFFERED": "1", "GRPC_VERBOSITY": "ERROR"},
        )
        procs.append(runner)
        wait_scraped(prom, JOB, timeout_s=DEADLINE_S)
        lingering: dict[str, float] = {}
        while time.time() - start < DEADLINE_S and runner.poll() is None:
            time.sleep(0.5)
            release_lingering(prom, runner, out, JOB, lingering)
        end = time.time()
        assert runner.poll() == 0, f"league run: {runner.poll()}\n{out.read_text()[-3000:]}"
        # released by release_lingering: Prometheus scraped the final values after the wait began
        assert lingering.get(JOB) == -1, (lingering, last_scrape(prom, JOB))

        model = load_json(DASHBOARD)
        tgts = [
            (d, t, r, e.replace("$league", ".*")) for d, t, r, e in targets({DASHBOARD.stem: model})
        ]
        assert len({t for _, t, _, _ in tgts}) >= 6 and len(tgts) >= 9, tgts
        problems, seen = check(prom, tgts, start, end)
        report = "\n".join(f"  {v:12.4g}  {k}" for k, v in seen.items())
        print(f"\nlargest value of each league query over the run ({end - start:.0f} s):\n{report}")
        assert not problems, "\n".join(problems) + f"\n{out.read_text()[-3000:]}"

        # the dashboard's variables find the league and its bots
        for var in model["templating"]["list"]:
            metric, label = var["query"]["query"][len("label_values(") : -1].split(", ")
            query = urllib.parse.urlencode({"match[]": metric})
            vals = get(f"{prom}/api/v1/label/{label}/values?{query}")["data"]
            assert vals, var["query"]
            assert {"league": {"league"}, "bot": {FLAKY, "b"}}[label] <= set(vals), vals

        # the counters were scraped at 0 before their first increment: rate() sees the first
        for counter in ("uno_league_version_hands_played_total", "uno_league_refits_total"):
            counted = [
                r for r in query_range(prom, counter, start, end) if float(r["values"][-1][1]) > 0
            ]
            assert counted, counter
            for r in counted:
                assert r["values"][0][1] == "0", (counter, r["metric"], r["values"][:3])

        # a misspelt metric name fails the check, naming every panel that uses it
        for name, mutated in mutations(tgts):
            found, _ = check(prom, mutated, start, end)
            for dash, title, ref, _ in mutated:
                assert any(p.startswith(f"{dash} / {title} / {ref} ") for p in found), (
                    f"misspelling {name} in {dash} / {title} / {ref} went unnoticed"
                )
