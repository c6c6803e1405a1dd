#!/usr/bin/env bash
# `make monitor`: Prometheus (the Debian package's binary, run as your user) scraping a local
# tournament (deploy/tournament/arena.toml, embedded server, metrics on port 9101), for users
# without Docker. Ctrl-C stops both. Environment: PROM_PORT (default 9190, so that it does not
# clash with a Debian prometheus service on 9090), BLOCKS (default: the config's), PYTHON.
# LINGER (default 5): seconds the finished run keeps its metrics up for a last scrape.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON="${PYTHON:-.venv/bin/python}"
PROM_PORT="${PROM_PORT:-9190}"
if ! command -v prometheus >/dev/null; then
  echo "monitor: prometheus is not installed; on Debian/Ubuntu: sudo apt-get install prometheus" >&2
  exit 1
fi
state="$(mktemp -d "${TMPDIR:-/tmp}/uno-arena-monitor.XXXXXX")"
mkdir -p "$state/prometheus" "$state/grafana/datasources" "$state/grafana/dashboards"
sed "s|http://prometheus:9090|http://127.0.0.1:$PROM_PORT|" \
  deploy/grafana/provisioning/datasources/prometheus.yml > "$state/grafana/datasources/prometheus.yml"
sed "s|/var/lib/grafana/dashboards/uno-arena|$PWD/deploy/grafana/dashboards|" \
  deploy/grafana/provisioning/dashboards/uno-arena.yml > "$state/grafana/dashboards/uno-arena.yml"
mkdir -p "$state/grafana/plugins" "$state/grafana/alerting" "$state/grafana/notifiers"
cp deploy/grafana/provisioning/plugins/*.yml "$state/grafana/plugins/"
cp deploy/grafana/provisioning/alerting/*.yml "$state/grafana/alerting/"

prometheus --config.file=deploy/prometheus/local.yml --storage.tsdb.path="$state/prometheus" \
  --web.listen-address="127.0.0.1:$PROM_PORT" >"$state/prometheus.log" 2>&1 &
prom=$!
trap 'kill "$prom" 2>/dev/null || true; wait "$prom" 2>/dev/null || true' EXIT

cat <<MSG

  Prometheus:  http://127.0.0.1:$PROM_PORT   (log: $state/prometheus.log)
  Tournament:  metrics on http://127.0.0.1:9101/metrics (runner and embedded server)

  Grafana (see deploy/README.md, "Without Docker"):
    * a Grafana on this machine can load everything at start:
        GF_PATHS_PROVISIONING=$state/grafana grafana-server ...
      (or copy $state/grafana/* into its provisioning folder and restart it);
    * any other Grafana: add a Prometheus datasource with uid uno-arena-prometheus and URL
      http://<this host>:$PROM_PORT, then import deploy/grafana/dashboards/*.json:
        curl -u admin:admin -H 'Content-Type: application/json' http://GRAFANA:3000/api/datasources \\
          -d '{"name":"UNO Arena Prometheus","uid":"uno-arena-prometheus","type":"prometheus",
               "access":"proxy","url":"http://<this host>:$PROM_PORT"}'

MSG
args=(tournament run deploy/tournament/arena.toml --out "runs/monitor-$(date +%Y%m%d-%H%M%S)"
      --metrics-port 9101 --metrics-linger "${LINGER:-5}")
if [[ -n "${BLOCKS:-}" ]]; then args+=(--blocks "$BLOCKS"); fi
"$PYTHON" -m uno_server.cli "${args[@]}"
echo "tournament over; Prometheus keeps running at http://127.0.0.1:$PROM_PORT until Ctrl-C"
wait "$prom"
