"""Static checks of the monitoring setup that issue 13 asked for: the k8s tournament is the demo
tournament, Grafana's provisioning folder is complete, no host port clashes with node_exporter,
`make monitor` waits for a last scrape, and the dashboards' queries are per tournament, with
no fallback that could hide a misspelt metric."""

from __future__ import annotations

import re
import tomllib
from typing import Any

from .common import DASHBOARDS, DEPLOY, K8S, load_json, load_yaml, load_yaml_all, panels

PROVISIONING = DEPLOY / "grafana" / "provisioning"
NODE_EXPORTER_PORT = 9100


def k8s_secret(name: str) -> dict[str, Any]:
    for path in K8S:
        for d in load_yaml_all(path):
            if d.get("kind") == "Secret" and d["metadata"]["name"] == name:
                return d
    raise AssertionError(f"no Secret {name} in deploy/k8s")


def test_k8s_tournament_is_the_demo_tournament() -> None:
    """Equal to deploy/tournament/arena.toml but for where the output and the flaky bot live."""
    text = k8s_secret("uno-arena-tournament")["stringData"]["tournament.toml"]
    k8s = tomllib.loads(text)
    arena = tomllib.loads((DEPLOY / "tournament" / "arena.toml").read_text())
    assert k8s["tournament"].pop("output") == "/data/arena"
    arena["tournament"].pop("output")
    for bot in arena["bots"]:
        bot["command"] = [
            a.replace("{config_dir}/../bots/", "/app/deploy/bots/") for a in bot["command"]
        ]
    assert k8s == arena


def test_provisioning_folder_is_complete() -> None:
    """Grafana reads datasources/, dashboards/, plugins/ and alerting/; a missing folder is
    logged as an error at every start."""
    for sub in ("datasources", "dashboards", "plugins", "alerting"):
        files = sorted((PROVISIONING / sub).glob("*.yml"))
        assert files, f"deploy/grafana/provisioning/{sub}/ has no provisioning file"
        for f in files:
            assert load_yaml(f)["apiVersion"] == 1, f


def test_no_host_port_is_node_exporters() -> None:
    compose = load_yaml(DEPLOY / "docker-compose.yml")
    for name, svc in compose["services"].items():
        for p in svc.get("ports", []):
            host = int(str(p).split(":")[0])
            assert host != NODE_EXPORTER_PORT, f"{name}: host port {p} is node_exporter's"
    local = load_yaml(DEPLOY / "prometheus" / "local.yml")
    for job in local["scrape_configs"]:
        for sc in job["static_configs"]:
            for t in sc["targets"]:
                assert not t.endswith(f":{NODE_EXPORTER_PORT}"), f"make monitor scrapes {t}"


def test_make_monitor_lingers_for_a_last_scrape() -> None:
    text = (DEPLOY / "monitor.sh").read_text()
    assert "--metrics-linger" in text


# ------------------------------------------------------------------------------ dashboards


def dashboard_targets() -> list[tuple[str, dict[str, Any], str]]:
    return [
        (path.stem, p, t["expr"])
        for path in DASHBOARDS
        for p in panels(load_json(path))
        for t in p.get("targets", [])
    ]


def test_no_query_hides_a_missing_series_behind_a_fallback() -> None:
    """``a or b * 0`` turns a misspelt ``a`` into a plausible zero; the server creates its
    series at zero instead (tests/service/test_observability.py)."""
    for dash, p, expr in dashboard_targets():
        assert " or " not in expr and "* 0" not in expr, f"{dash} / {p['title']}: {expr}"


def test_runner_queries_are_per_tournament() -> None:
    for path in DASHBOARDS:
        if path.stem == "uno-arena-league":  # per league (test_league_dashboard.py)
            continue
        names = [v["name"] for v in load_json(path)["templating"]["list"]]
        assert "tournament" in names, path.name
    for dash, p, expr in dashboard_targets():
        if "uno_tournament_" not in expr:
            continue
        where = f"{dash} / {p['title']}: {expr}"
        for m in re.finditer(r"uno_tournament_\w+(\{[^}]*\})?", expr):
            assert m.group(1) and 'tournament=~"$tournament"' in m.group(1), where
        assert "by (tournament" in expr, where


def test_pace_and_eta_come_from_the_counter_of_stored_hands() -> None:
    exprs = {p["title"]: e for _, p, e in dashboard_targets()}
    assert "rate(uno_tournament_hands_stored_total" in exprs["ETA"]
    for _, p, e in dashboard_targets():
        assert "hands_per_second" not in e, p["title"]


def test_leaderboard_is_sorted_strongest_first() -> None:
    board = next(p for _, p, _ in dashboard_targets() if p["title"] == "Leaderboard (rating now)")
    assert board["targets"][0]["expr"].startswith("sort_desc(")
    sort = [t for t in board.get("transformations", []) if t["id"] == "sortBy"]
    assert sort and sort[0]["options"]["sort"] == [{"field": "Value", "desc": True}]


def test_heatmap_has_no_time_series_legend() -> None:
    heatmaps = [p for _, p, _ in dashboard_targets() if p["type"] == "heatmap"]
    assert heatmaps
    for p in heatmaps:
        legend = p["options"].get("legend", {})
        assert not {"displayMode", "placement", "showLegend"} & set(legend), p["title"]
