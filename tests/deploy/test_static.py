"""Static checks of deploy/: dashboards, Prometheus, Compose, Dockerfile and Kubernetes files."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import kubernetes_validate  # type: ignore[import-untyped]
import pytest

from uno_tournament.config import load as load_tournament

from .common import (
    DASHBOARDS,
    DEPLOY,
    K8S,
    ROOT,
    load_json,
    load_yaml,
    load_yaml_all,
    need_tool,
    panels,
)

PROVISIONING = DEPLOY / "grafana" / "provisioning"
K8S_VERSION = "1.30.0"


def datasource_uid() -> str:
    ds = load_yaml(PROVISIONING / "datasources" / "prometheus.yml")["datasources"]
    assert len(ds) == 1 and ds[0]["type"] == "prometheus"
    return str(ds[0]["uid"])


# ------------------------------------------------------------------------------ dashboards


def test_dashboards_are_generated_from_code() -> None:
    res = subprocess.run(
        [sys.executable, str(DEPLOY / "grafana" / "dashboards.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stderr
    assert {p.name for p in DASHBOARDS} == {
        "uno-arena-overview.json",
        "uno-arena-bot.json",
        "uno-arena-league.json",
    }


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_dashboard_ids_and_datasource(path: Path) -> None:
    d = load_json(path)
    uid = datasource_uid()
    ps = panels(d)
    ids = [p["id"] for p in ps]
    assert len(ids) == len(set(ids)), f"duplicate panel ids in {path.name}"
    queried = [p for p in ps if p["type"] != "row"]
    assert queried
    for p in queried:
        assert p["datasource"] == {"type": "prometheus", "uid": uid}, p["title"]
        assert p["targets"], p["title"]
        for t in p["targets"]:
            assert t["datasource"]["uid"] == uid, p["title"]
            assert t["expr"].strip(), p["title"]
        assert p.get("description"), f"{p['title']}: every panel says what it means"
    for v in d["templating"]["list"]:
        assert v["datasource"]["uid"] == uid


def test_overview_has_the_panels_of_the_issue() -> None:
    overview = next(p for p in DASHBOARDS if p.stem == "uno-arena-overview")
    titles = " | ".join(p["title"].lower() for p in panels(load_json(overview)))
    for want in (
        "active matches",
        "hands per second",
        "moves per second",
        "decision latency p50",
        "decision latency p95",
        "decision latency p99",
        "timeouts per bot",
        "faults and late answers per bot",
        "disconnects per bot",
        "rating with 95% ci",
        "win rate per bot",
        "connected bots",
        "tournament progress",
        "eta",
        "server errors",
    ):
        assert want in titles, want


def test_dashboard_provider_path_is_mounted_in_compose() -> None:
    provider = load_yaml(PROVISIONING / "dashboards" / "uno-arena.yml")["providers"][0]
    grafana = load_yaml(DEPLOY / "docker-compose.yml")["services"]["grafana"]
    mounts = dict(v.split(":")[1::-1][:2] for v in grafana["volumes"])  # target -> source
    assert mounts[provider["options"]["path"]] == "./grafana/dashboards"
    assert mounts["/etc/grafana/provisioning"] == "./grafana/provisioning"
    home = grafana["environment"]["GF_DASHBOARDS_DEFAULT_HOME_DASHBOARD_PATH"]
    assert home.startswith(provider["options"]["path"] + "/")
    assert (DEPLOY / "grafana" / "dashboards" / Path(home).name).is_file()


# ------------------------------------------------------------------------------ Prometheus


def k8s_prometheus_config() -> str:
    for doc in load_yaml_all(DEPLOY / "k8s" / "prometheus.yaml"):
        if doc["kind"] == "ConfigMap":
            return str(doc["data"]["prometheus.yml"])
    raise AssertionError("no Prometheus ConfigMap in deploy/k8s/prometheus.yaml")


def test_promtool_check_config(tmp_path: Path) -> None:
    promtool = need_tool("promtool")
    k8s = tmp_path / "k8s-prometheus.yml"
    k8s.write_text(k8s_prometheus_config())
    files = [*sorted((DEPLOY / "prometheus").glob("*.yml")), k8s]
    assert len(files) == 3
    res = subprocess.run(
        [promtool, "check", "config", *map(str, files)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert res.returncode == 0, res.stdout + res.stderr


# ------------------------------------------------------------------------------ Compose


def compose() -> dict[str, Any]:
    data = load_yaml(DEPLOY / "docker-compose.yml")
    assert isinstance(data, dict)
    return data


def test_compose_services_and_files() -> None:
    c = compose()
    services = c["services"]
    assert set(services) == {"server", "tournament", "prometheus", "grafana"}
    for name, s in services.items():
        build = s.get("build")
        if build:
            context = (DEPLOY / build["context"]).resolve()
            assert context == ROOT, name
            assert (context / build["dockerfile"]).is_file(), name
        for v in s.get("volumes", []):
            src = v.split(":")[0]
            if src.startswith("."):
                assert (DEPLOY / src).exists(), f"{name}: {src}"
            else:
                assert src in c["volumes"], f"{name}: named volume {src}"
        for dep in s.get("depends_on", {}):
            assert dep in services, f"{name} depends on {dep}"
    # files named in the commands exist in the image (copied from the repository)
    for name in ("server", "tournament"):
        for arg in services[name]["command"]:
            if str(arg).startswith("/app/"):
                assert (ROOT / arg[len("/app/") :]).is_file(), f"{name}: {arg}"


def test_compose_ports_match_the_scrape_targets() -> None:
    services = compose()["services"]
    server = tomllib.loads((DEPLOY / "server" / "server.toml").read_text())["server"]
    cmd = [str(a) for a in services["tournament"]["command"]]
    runner_port = int(cmd[cmd.index("--metrics-port") + 1])
    assert cmd[cmd.index("--metrics-host") + 1] == "0.0.0.0"
    assert cmd[cmd.index("--server") + 1] == f"server:{server['port']}"
    want = {f"server:{server['metrics_port']}", f"tournament:{runner_port}"}
    prom = load_yaml(DEPLOY / "prometheus" / "prometheus.yml")
    targets = {
        t for job in prom["scrape_configs"] for sc in job["static_configs"] for t in sc["targets"]
    }
    assert targets == want
    published = {
        name: {int(p.split(":")[1]) for p in s.get("ports", [])} for name, s in services.items()
    }
    assert server["metrics_port"] in published["server"]
    assert server["port"] in published["server"]
    assert runner_port in published["tournament"]
    assert 9090 in published["prometheus"]
    assert 3000 in published["grafana"]
    ds = load_yaml(PROVISIONING / "datasources" / "prometheus.yml")["datasources"][0]
    assert ds["url"] == "http://prometheus:9090"


def test_dockerfile_copies_exist() -> None:
    text = (DEPLOY / "Dockerfile").read_text()
    copies = re.findall(r"^COPY\s+(.+)$", text, flags=re.M)
    assert copies
    for line in copies:
        *sources, _dest = line.split()
        for src in sources:
            assert (ROOT / src).exists(), src
    assert (DEPLOY / "Dockerfile.dockerignore").is_file()


# ------------------------------------------------------------------------------ tokens, configs


def bot_tokens_of(toml_text: str) -> dict[str, str]:
    return {b["name"]: b["token"] for b in tomllib.loads(toml_text)["bots"]}


def k8s_docs() -> list[dict[str, Any]]:
    return [d for p in K8S if p.name != "kustomization.yaml" for d in load_yaml_all(p)]


def test_demo_tokens_agree_everywhere() -> None:
    arena = bot_tokens_of((DEPLOY / "tournament" / "arena.toml").read_text())
    server = tomllib.loads((DEPLOY / "server" / "server.toml").read_text())["bots"]
    assert server == arena
    secrets = {d["metadata"]["name"]: d for d in k8s_docs() if d["kind"] == "Secret"}
    tokens = dict(secrets["uno-arena-tokens"]["stringData"])
    tokens.pop("admin-token")
    assert tokens == arena
    k8s_tournament = secrets["uno-arena-tournament"]["stringData"]["tournament.toml"]
    assert bot_tokens_of(k8s_tournament) == arena
    deployments = {d["metadata"]["name"]: d for d in k8s_docs() if d["kind"] == "Deployment"}
    server_args = deployments["uno-arena-server"]["spec"]["template"]["spec"]["containers"][0][
        "args"
    ]
    assert {a.split("=")[1] for a in server_args if a.startswith("--bot=")} == set(arena)


def test_demo_tournament_config_loads() -> None:
    cfg = load_tournament(DEPLOY / "tournament" / "arena.toml")
    assert [b.name for b in cfg.bots] == list(
        bot_tokens_of((DEPLOY / "tournament" / "arena.toml").read_text())
    )
    assert (DEPLOY / "bots" / "flaky_bot.py").is_file()


# ------------------------------------------------------------------------------ Kubernetes


@pytest.mark.parametrize("path", [p for p in K8S if p.name != "kustomization.yaml"], ids=str)
def test_k8s_manifests_validate(path: Path) -> None:
    for doc in load_yaml_all(path):
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_k8s_references_resolve() -> None:
    kust = load_yaml(DEPLOY / "k8s" / "kustomization.yaml")
    manifests = sorted(p.name for p in K8S if p.name != "kustomization.yaml")
    assert sorted(kust["resources"]) == manifests
    docs = k8s_docs()
    by_kind: dict[str, dict[str, dict[str, Any]]] = {}
    for d in docs:
        if d["kind"] != "Namespace":
            assert d["metadata"]["namespace"] == "uno-arena"
        by_kind.setdefault(d["kind"], {})[d["metadata"]["name"]] = d
    workloads = [*by_kind["Deployment"].values(), *by_kind["Job"].values()]
    for w in workloads:
        spec = w["spec"]["template"]["spec"]
        for vol in spec.get("volumes", []):
            if "configMap" in vol:
                assert vol["configMap"]["name"] in by_kind["ConfigMap"]
            if "secret" in vol:
                assert vol["secret"]["secretName"] in by_kind["Secret"]
        for c in spec["containers"]:
            for env in c.get("env", []):
                ref = env.get("valueFrom", {}).get("secretKeyRef")
                if ref:
                    assert ref["key"] in by_kind["Secret"][ref["name"]]["stringData"], ref
        sa = spec.get("serviceAccountName")
        if sa:
            assert sa in by_kind["ServiceAccount"]
    server = by_kind["Deployment"]["uno-arena-server"]["spec"]["template"]["spec"]
    c = server["containers"][0]
    for probe in ("startupProbe", "livenessProbe", "readinessProbe"):
        assert c[probe]["grpc"]["port"] == 50051, probe
    svc = by_kind["Service"]["uno-arena-server"]
    assert svc["spec"]["sessionAffinity"] == "ClientIP"
    job = by_kind["Job"]["uno-arena-tournament"]["spec"]["template"]["spec"]["containers"][0]
    assert "--server=uno-arena-server:50051" in job["args"]


# ------------------------------------------------------------------------------ sharded run

SHARDS = sorted((DEPLOY / "k8s" / "shards").glob("*.yaml"))


def shard_docs() -> dict[str, dict[str, dict[str, Any]]]:
    by_kind: dict[str, dict[str, dict[str, Any]]] = {}
    for p in SHARDS:
        if p.name == "kustomization.yaml":
            continue
        for d in load_yaml_all(p):
            assert d["metadata"]["namespace"] == "uno-arena"
            by_kind.setdefault(d["kind"], {})[d["metadata"]["name"]] = d
    return by_kind


@pytest.mark.parametrize("path", [p for p in SHARDS if p.name != "kustomization.yaml"], ids=str)
def test_shard_manifests_validate(path: Path) -> None:
    for doc in load_yaml_all(path):
        kubernetes_validate.validate(doc, K8S_VERSION, strict=True)


def test_indexed_job_plays_one_shard_per_index_into_the_shared_store(tmp_path: Path) -> None:
    kust = load_yaml(DEPLOY / "k8s" / "shards" / "kustomization.yaml")
    assert sorted(kust["resources"]) == sorted(p.name for p in SHARDS if p.name != kust_name())
    by_kind = shard_docs()
    job = by_kind["Job"]["uno-arena-shards"]["spec"]
    n = job["completions"]
    assert job["completionMode"] == "Indexed" and job["parallelism"] == n >= 2
    assert job["backoffLimitPerIndex"] >= 1  # a failed index is retried, alone
    pod = job["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    c = pod["containers"][0]
    args = c["args"]
    assert args[:2] == ["tournament", "run"]
    assert f"--shard=$(JOB_COMPLETION_INDEX)/{n}" in args
    assert not any(a.startswith("--store") for a in args)  # the URL holds a password
    env = {e["name"]: e for e in c["env"]}
    assert (
        "job-completion-index" in env["JOB_COMPLETION_INDEX"]["valueFrom"]["fieldRef"]["fieldPath"]
    )
    ref = env["UNO_ARENA_STORE"]["valueFrom"]["secretKeyRef"]
    secret = by_kind["Secret"][ref["name"]]["stringData"]
    # the URL agrees with the server it names and the credentials the server starts with
    svc = by_kind["Service"]["uno-arena-postgres"]
    sts = by_kind["StatefulSet"]["uno-arena-postgres"]
    port = svc["spec"]["ports"][0]["port"]
    assert secret[ref["key"]] == (
        f"postgresql://{secret['user']}:{secret['password']}@uno-arena-postgres:{port}/"
        f"{secret['database']}"
    )
    assert sts["spec"]["serviceName"] == "uno-arena-postgres"
    assert svc["spec"]["selector"].items() <= sts["spec"]["template"]["metadata"]["labels"].items()
    pg_env = {
        e["name"]: e["valueFrom"]["secretKeyRef"]
        for e in sts["spec"]["template"]["spec"]["containers"][0]["env"]
        if "valueFrom" in e
    }
    assert {k: v["key"] for k, v in pg_env.items()} == {
        "POSTGRES_USER": "user",
        "POSTGRES_PASSWORD": "password",
        "POSTGRES_DB": "database",
    }
    # the config the pods mount is a valid tournament configuration
    vol = next(v for v in pod["volumes"] if "secret" in v)
    mount = next(m for m in c["volumeMounts"] if m["name"] == vol["name"])
    config_path = args[2]
    assert config_path.startswith(mount["mountPath"] + "/")
    text = by_kind["Secret"][vol["secret"]["secretName"]]["stringData"][Path(config_path).name]
    (tmp_path / "t.toml").write_text(text)
    assert len(load_tournament(tmp_path / "t.toml").bots) >= 4
    # external bots and Prometheus find every shard pod through the headless Service
    headless = by_kind["Service"][pod["subdomain"]]["spec"]
    assert headless["clusterIP"] == "None"
    assert headless["selector"].items() <= job["template"]["metadata"]["labels"].items()
    assert {p["port"] for p in headless["ports"]} == {
        int(a.split("=")[1]) for a in args if a.startswith(("--port=", "--metrics-port="))
    }
    assert "uno-arena-shards.uno-arena.svc.cluster.local" in k8s_prometheus_config()


def kust_name() -> str:
    return "kustomization.yaml"
