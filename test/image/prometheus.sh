# Sourced by the image test: a real Prometheus (Debian's) scrapes the compose instances and evaluates
# deploy/prometheus/alerts.yaml. No shebang: a library; needs podman.sh's step/ok/fail/free_port and python3.
#
# The rules are the shipped ones with every `for:` cut to PROM_FOR (the expressions untouched), scraped and evaluated
# every second, so that a condition held for a few seconds fires. Listens on 127.0.0.1 only; its data and config are
# in a temporary directory removed by prometheus_stop.

PROM_FOR=2s
PROM_PID=""
PROM_DIR=""

prometheus_stop() {
  if [ -n "$PROM_PID" ]; then kill "$PROM_PID" 2> /dev/null && wait "$PROM_PID" 2> /dev/null; fi
  PROM_PID=""
  [ -z "$PROM_DIR" ] || rm -rf "$PROM_DIR"
}

# prometheus_start TARGET...: scrape each host:port as job validation-api.
prometheus_start() {
  PROM_DIR="$(mktemp -d)"
  PROM_PORT=$(free_port)
  sed -E "s/^( *)for: .*/\1for: $PROM_FOR/" "$ROOT/deploy/prometheus/alerts.yaml" > "$PROM_DIR/alerts.yaml"
  {
    printf 'global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n'
    printf 'rule_files:\n  - %s/alerts.yaml\n' "$PROM_DIR"
    printf 'scrape_configs:\n  - job_name: validation-api\n    static_configs:\n      - targets:\n'
    for t in "$@"; do printf '          - "%s"\n' "$t"; done
  } > "$PROM_DIR/prometheus.yml"
  promtool check config "$PROM_DIR/prometheus.yml" > /dev/null || fail "promtool check config"
  prometheus --config.file="$PROM_DIR/prometheus.yml" --storage.tsdb.path="$PROM_DIR/data" \
    --web.listen-address="127.0.0.1:$PROM_PORT" --log.level=warn > "$PROM_DIR/log" 2>&1 &
  PROM_PID=$!
  PROM="http://127.0.0.1:$PROM_PORT"
  wait_http "$PROM/-/ready" 30 || { cat "$PROM_DIR/log" >&2; fail "Prometheus never became ready"; }
}

# prom_query PROMQL: the query's result as "labels value" lines (instant vector).
prom_query() {
  curl -s --get "$PROM/api/v1/query" --data-urlencode "query=$1" | python3 -c '
import json, sys
for r in json.load(sys.stdin)["data"]["result"]:
    print(",".join(f"{k}={v}" for k, v in sorted(r["metric"].items())), r["value"][1])'
}

# firing_alerts: the firing alerts, one "alertname instance dataset" line each, sorted.
firing_alerts() {
  curl -s "$PROM/api/v1/alerts" | python3 -c '
import json, sys
for a in sorted(json.load(sys.stdin)["data"]["alerts"], key=lambda a: sorted(a["labels"].items())):
    if a["state"] == "firing":
        l = a["labels"]
        print(l["alertname"], l.get("instance", "-"), l.get("dataset", "-"))'
}

# poll SECONDS COMMAND...: run COMMAND every 0.5 s until it succeeds or SECONDS pass.
poll() {
  local limit=$1 i
  shift
  for ((i = 0; i < limit * 2; i++)); do "$@" && return 0; sleep 0.5; done
  return 1
}

# What a healthy pair should fire: DatasetAged/DatasetExpired for each dataset /readyz reports aged or expired on
# each instance (the image ships some data past its maximum age: see data/datasets.json), and nothing else.
expected_alerts() {
  local port
  for port in "$@"; do
    curl -s "http://127.0.0.1:$port/readyz" | python3 -c '
import json, sys
names = {"aged": "ValidationApiDatasetAged", "expired": "ValidationApiDatasetExpired"}
for d in json.load(sys.stdin)["datasets"]:
    if d["state"] in names:
        print(names[d["state"]], "127.0.0.1:'"$port"'", d["name"])'
  done | LC_ALL=C sort
}

both_up() { [ "$(prom_query 'sum(up{job="validation-api"})' | awk '{print $NF}')" = 2 ]; }
# Rules evaluated over at least 5 s of scrapes of both instances: long past every shortened `for:`.
scraped_long_enough() { [ "$(prom_query 'min(count_over_time(up{job="validation-api"}[30s]))' | awk '{print $NF}')" -ge 6 ] 2> /dev/null; }
down_fires() { firing_alerts | grep -q "^ValidationApiInstanceDown 127.0.0.1:$1 "; }
