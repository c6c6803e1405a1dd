"""Static checks of the monitoring setup that issue 13 asked for: the k8s tournament is the demo
tournament, Grafana's provisioning folder is complete, no host port clashes with node_exporter,
and `make monitor` waits for a last scrape."""

from __future__ import annotations

import tomllib
from typing import Any

from .common import DEPLOY, K8S, load_yaml, load_yaml_all

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
