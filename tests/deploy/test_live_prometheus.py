"""A real Prometheus scrapes a short live tournament; every dashboard query must return data.

The tournament is deploy/tournament/arena.toml with one block (120 hands, about half a minute),
its flaky bot dropping its stream more often so that disconnects show within the run. The
embedded server's metrics come from the runner's metrics port. Queries are evaluated through
Prometheus's HTTP API, with Grafana's variables replaced as Grafana would ($__rate_interval for a
1 s scrape interval; $bot as "All" and as one bot).
"""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from pathlib import Path
from typing import Any

from .common import DASHBOARDS, DEPLOY, ROOT, load_json, need_tool, panels

RATE_INTERVAL = "5s"
DEADLINE_S = 50.0
# queries whose data must be more than the fallback zero by the end of the run
MUST_BE_NONZERO = (
    "Hands per second",
    "Moves per second",
    "Decision latency p50 per bot",
    "Rating per bot",
    "Win rate per bot",
    "Timeouts per bot (per minute)",
    "Illegal actions per bot (per minute)",
    "Connected bots",
    "Active matches",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def instant(prom: str, expr: str) -> list[dict[str, Any]]:
    res = get(f"{prom}/api/v1/query?" + urllib.parse.urlencode({"query": expr}))
    assert res["status"] == "success", (expr, res)
    data: list[dict[str, Any]] = res["data"]["result"]
    return data


def queries(bot: str) -> dict[str, str]:
    """'dashboard / panel / refId' -> PromQL with Grafana's variables filled in."""
    out = {}
    for path in DASHBOARDS:
        for p in panels(load_json(path)):
            for t in p.get("targets", []):
                expr = t["expr"].replace("$__rate_interval", RATE_INTERVAL).replace("$bot", bot)
                out[f"{path.stem} / {p['title']} / {t['refId']} [bot={bot}]"] = expr
    return out


def test_every_panel_query_returns_data(tmp_path: Path) -> None:
    prometheus = need_tool("prometheus")
    runner_port, prom_port = free_port(), free_port()
    prom = f"http://127.0.0.1:{prom_port}"
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        "  - job_name: uno-tournament\n"
        f"    static_configs: [{{targets: ['127.0.0.1:{runner_port}']}}]\n"
    )
    arena = (DEPLOY / "tournament" / "arena.toml").read_text()
    arena = arena.replace("{config_dir}", str(DEPLOY / "tournament"))
    arena = arena.replace('"--disconnect-every", "8"', '"--disconnect-every", "3"')
    (tmp_path / "arena.toml").write_text(arena)

    log = (tmp_path / "logs.txt").open("w")
    procs: list[subprocess.Popen[bytes]] = []
    try:
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
        procs.append(
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "uno_server.cli",
                    "tournament",
                    "run",
                    str(tmp_path / "arena.toml"),
                    "--blocks",
                    "1",
                    "--out",
                    str(tmp_path / "out"),
                    "--metrics-port",
                    str(runner_port),
                    "--quiet",
                ],
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=ROOT,
            )
        )
        want = {**queries(".*"), **queries("py-flaky")}
        must_keys = [k for k in want if "[bot=.*]" in k and k.split(" / ")[1] in MUST_BE_NONZERO]
        seen: dict[str, bool] = {}  # query -> returned a non-zero value at some point
        start = time.monotonic()
        scrapes = 0
        while time.monotonic() - start < DEADLINE_S:
            time.sleep(1.0)
            try:
                up = instant(prom, "up")
            except OSError:
                continue  # Prometheus still starting
            scrapes = (
                int(float(instant(prom, "count_over_time(up[1m])")[0]["value"][1])) if up else 0
            )
            for key, expr in want.items():
                res = instant(prom, expr)
                if res:
                    nonzero = any(float(r["value"][1]) != 0 for r in res)
                    seen[key] = seen.get(key, False) or nonzero
            done = set(seen) == set(want)
            must = all(
                v
                for k, v in seen.items()
                if "[bot=.*]" in k and k.split(" / ")[1] in MUST_BE_NONZERO
            )
            if done and must and scrapes >= 5:
                break
            if procs[1].poll() is not None and time.monotonic() - start > 5:
                break
        labels = get(
            f"{prom}/api/v1/label/bot/values?"
            + urllib.parse.urlencode({"match[]": "uno_decision_latency_seconds_count"})
        )["data"]
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                p.send_signal(signal.SIGINT)
        for p in reversed(procs):
            try:
                p.wait(timeout=15)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        log.close()

    report = "\n".join(
        f"  {'data, non-zero' if seen[k] else 'data, zero' if k in seen else 'NO DATA':15} {k}"
        for k in sorted(want)
    )
    print(f"\n{scrapes} scrapes; dashboard queries:\n{report}")
    missing = sorted(set(want) - set(seen))
    assert scrapes >= 5, f"only {scrapes} scrapes\n{(tmp_path / 'logs.txt').read_text()[-3000:]}"
    assert not missing, "no data:\n" + "\n".join(f"{k}: {want[k]}" for k in missing)
    zero = [k for k in must_keys if not seen[k]]
    assert not zero, f"only zeros: {zero}"
    assert set(labels) == {"py-heuristic", "py-random", "py-graded-25", "py-graded-50", "py-flaky"}
