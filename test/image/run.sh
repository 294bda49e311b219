#!/usr/bin/env bash
# make test-image: build the container image on local bases and check it from outside, then two instances on one Redis.
#
# Needs podman, runc, podman-compose, debootstrap, curl, prometheus (.ci/run installs them). Every port is on 127.0.0.1; builds
# reach the npm registry and Debian's mirror only. Containers, volumes, the network and the service image it makes
# are removed on exit; the base images are kept as a cache (TEST_IMAGE_FRESH=1 rebuilds them).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

# The tools, from Debian's packages when absent (as root; .ci/run installs them the same way).
need=()
for tool in podman runc podman-compose debootstrap curl prometheus; do command -v "$tool" > /dev/null 2>&1 || need+=("$tool"); done
if [ ${#need[@]} -gt 0 ]; then
  [ "$(id -u)" = 0 ] || { echo "test-image: needs ${need[*]} (apt-get install ${need[*]})" >&2; exit 1; }
  echo "test-image: installing ${need[*]}"
  DEBIAN_FRONTEND=noninteractive apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" > /dev/null
fi
. test/image/podman.sh
. test/image/bases.sh
. test/image/prometheus.sh

RUN="vls-test-$$"
IMAGE="localhost/validation-api:$RUN"
VOLUME="$RUN-data"
MAX_IMAGE_MB=400
DRAIN_S=10 # SHUTDOWN_TIMEOUT_MS's default
LOG="$(mktemp)"
started=$SECONDS
# The build stage's image is left unnamed: whatever unnamed image appears during this run is this run's own.
dangling_before="$(podman images -q --filter dangling=true | sort)"

cleanup() {
  local rc=$?
  set +e
  prometheus_stop
  podman rm -f -t 0 "$RUN-a" "$RUN-b" > /dev/null 2>&1
  if [ -n "${COMPOSE_UP:-}" ]; then
    compose down -v > /dev/null 2>&1
    podman network rm -f "${RUN}_default" > /dev/null 2>&1
  fi
  podman volume rm -f "$VOLUME" > /dev/null 2>&1
  podman rmi -f "$IMAGE" > /dev/null 2>&1
  comm -13 <(printf '%s\n' "$dangling_before") <(podman images -q --filter dangling=true | sort) |
    xargs -r podman rmi -f > /dev/null 2>&1
  rm -f "$TEST_IMAGE_CONF" "$LOG"
  [ "$rc" = 0 ] || printf 'test-image: failed after %d s\n' $((SECONDS - started)) >&2
}
trap cleanup EXIT

# podman prints an error per container for the healthcheck timer it cannot create without systemd; the checks run
# below with `podman healthcheck run` instead. Everything else it says is kept.
quiet() { "$@" 2> >(grep -v 'systemd connection' >&2); }
compose() {
  VLS_IMAGE="$IMAGE" REDIS_IMAGE="$REDIS_IMAGE" VLS_PORT_1="$PORT_1" VLS_PORT_2="$PORT_2" \
    podman-compose -p "$RUN" -f compose.yaml "$@"
}
status() { curl -s -o /dev/null -w '%{http_code}' "${@:2}" "$1"; }
bic() { status "http://127.0.0.1:$1/api/v1/bic/DEUTDEFF" -H "X-Api-Key: $2"; }

build_bases

step "image: podman build (base overridden)"
podman build --quiet --format docker --network host -f Containerfile -t "$IMAGE" \
  --build-arg "BUILD_IMAGE=$BUILD_IMAGE" --build-arg "NODE_IMAGE=$NODE_IMAGE" . > /dev/null
size=$(podman image inspect --format '{{.Size}}' "$IMAGE")
size_mb=$((size / 1000000))
printf '   image %s: %d MB unpacked (limit %d MB), of which (MB):\n' "$IMAGE" "$size_mb" "$MAX_IMAGE_MB"
printf '     %-30s %5d\n' "Debian base" $(($(podman image inspect --format '{{.Size}}' "$DEBIAN_IMAGE") / 1000000))
podman run --rm --entrypoint sh "$IMAGE" -c \
  'du -sm /usr/local/bin/node /app/node_modules /app/geoip /app/dist /app/data /app/openapi.yaml' 2> /dev/null |
  awk '{printf "     %-30s %5d\n", $2, $1}'
[ "$size_mb" -lt "$MAX_IMAGE_MB" ] || fail "the image is $size_mb MB, over $MAX_IMAGE_MB MB"
done_step

step "run: first start, read-only root, data volume"
PORT_A=$(free_port)
quiet podman run -d --name "$RUN-a" --read-only -v "$VOLUME:/data" -p "127.0.0.1:$PORT_A:8080" "$IMAGE" > /dev/null
wait_http "http://127.0.0.1:$PORT_A/healthz" 60 || { podman logs "$RUN-a" | tail -n 20; fail "/healthz never answered 200"; }
ok "/healthz 200 after $((SECONDS - STEP_START)) s"
wait_http "http://127.0.0.1:$PORT_A/readyz" 30 || fail "/readyz never answered 200"
ok "/readyz 200"
# The first key is on stderr, alone in its stream (stdout is the JSON log).
KEY=$(podman logs "$RUN-a" 2>&1 > /dev/null | grep -oE 'vls_[A-Za-z0-9_-]{20,}' | head -n 1 || true)
[ -n "$KEY" ] || fail "no first key on stderr"
! podman logs "$RUN-a" 2> /dev/null | grep -q "$KEY" || fail "the first key is on stdout too"
ok "first key printed on stderr"
[ "$(bic "$PORT_A" "$KEY")" = 200 ] || fail "GET /api/v1/bic/DEUTDEFF with the first key"
ok "GET /api/v1/bic/DEUTDEFF 200 with it"
uid=$(podman exec "$RUN-a" cat /proc/1/status | awk '/^Uid:/ {print $2}')
[ "$uid" != 0 ] || fail "the service runs as root"
ok "the service process runs as uid $uid"
[ "$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}}' "$RUN-a")" = true ] || fail "root filesystem not read-only"
! podman exec "$RUN-a" touch /app/probe 2> /dev/null || fail "/app is writable"
ok "read-only root filesystem (/app not writable), serving"
podman healthcheck run "$RUN-a" > /dev/null 2>&1 || fail "the image's HEALTHCHECK fails"
ok "the image's HEALTHCHECK passes"
CLI_KEY=$(podman exec "$RUN-a" keys create --name via-exec --per-minute 5)
for _ in 1 2 3 4 5 6 7 8; do [ "$(bic "$PORT_A" "$CLI_KEY")" = 200 ] && break; sleep 0.25; done
[ "$(bic "$PORT_A" "$CLI_KEY")" = 200 ] || fail "a key made with podman exec ... keys create is refused"
ok "a key created with 'podman exec ... keys create' answers 200"
done_step

step "stop: SIGTERM drains and exits 0"
t0=$(date +%s%N)
podman kill --signal TERM "$RUN-a" > /dev/null
code=$(podman wait "$RUN-a")
took_ms=$((($(date +%s%N) - t0) / 1000000))
[ "$code" = 0 ] || fail "exit code $code after SIGTERM"
[ "$took_ms" -lt $((DRAIN_S * 1000)) ] || fail "SIGTERM took $took_ms ms, over the $DRAIN_S s drain time"
ok "exit code 0 after $took_ms ms"
done_step

step "restart on the same volume"
PORT_B=$(free_port)
quiet podman run -d --name "$RUN-b" --read-only -v "$VOLUME:/data" -p "127.0.0.1:$PORT_B:8080" "$IMAGE" > /dev/null
wait_http "http://127.0.0.1:$PORT_B/readyz" 60 || fail "the restarted container never became ready"
[ "$(bic "$PORT_B" "$KEY")" = 200 ] && [ "$(bic "$PORT_B" "$CLI_KEY")" = 200 ] || fail "keys lost across the restart"
! podman logs "$RUN-b" 2>&1 | grep -q 'Created the first API key' || fail "a second first key was created"
ok "both keys still answer 200; no new first key"
quiet podman rm -f -t "$DRAIN_S" "$RUN-b" > /dev/null
done_step

step "compose: two instances and Redis"
PORT_1=$(free_port) PORT_2=$(free_port)
COMPOSE_UP=1
compose up -d > "$LOG" 2>&1 || { grep -v 'systemd connection' "$LOG"; fail "podman-compose up"; }
for port in "$PORT_1" "$PORT_2"; do
  wait_http "http://127.0.0.1:$port/readyz" 60 || fail "instance on $port never became ready"
done
ok "both instances ready (ports $PORT_1, $PORT_2)"
api1=$(podman ps --filter "label=io.podman.compose.project=$RUN" --filter "label=com.docker.compose.service=api-1" --format '{{.Names}}')
SHARED=$(podman exec "$api1" keys create --name shared --per-minute 10)
sleep 1 # both instances read the store's change feed every 250 ms
codes=()
for i in $(seq 1 30); do
  if [ $((i % 2)) = 1 ]; then port=$PORT_1; else port=$PORT_2; fi
  codes+=("$(bic "$port" "$SHARED")")
done
passed=$(printf '%s\n' "${codes[@]}" | grep -c '^200$' || true)
refused=$(printf '%s\n' "${codes[@]}" | grep -c '^429$' || true)
[ "$passed" = 10 ] && [ "$refused" = 20 ] || fail "30 requests over both instances, 10 a minute: $passed passed, $refused refused (${codes[*]})"
ok "30 requests over both instances with a 10/minute key: 10 answered 200, 20 answered 429"
done_step

step "prometheus: scrape the pair, evaluate deploy/prometheus/alerts.yaml (for: $PROM_FOR)"
prometheus_start "127.0.0.1:$PORT_1" "127.0.0.1:$PORT_2"
poll 30 both_up || fail "Prometheus does not see both instances up: $(prom_query 'up')"
ok "both targets up"
poll 60 scraped_long_enough || fail "Prometheus did not scrape both instances for 6 s"
expected="$(expected_alerts "$PORT_1" "$PORT_2")"
firing="$(firing_alerts | LC_ALL=C sort)"
[ "$firing" = "$expected" ] || fail "on a healthy pair, firing: [$firing]; expected only the datasets /readyz calls aged or expired: [$expected]"
ok "a healthy pair fires no alert but DatasetAged/Expired, for each dataset /readyz reports so: $(echo "$expected" | awk 'NF {print $3}' | sort -u | paste -sd, -)"
api2=$(podman ps --filter "label=io.podman.compose.project=$RUN" --filter "label=com.docker.compose.service=api-2" --format '{{.Names}}')
t0=$SECONDS
quiet podman stop -t 15 "$api2" > /dev/null
poll 60 down_fires "$PORT_2" || fail "ValidationApiInstanceDown did not fire for the stopped instance: $(firing_alerts)"
! down_fires "$PORT_1" || fail "ValidationApiInstanceDown fires for the running instance too"
ok "instance api-2 stopped: ValidationApiInstanceDown fires for 127.0.0.1:$PORT_2 after $((SECONDS - t0)) s, not for api-1"
prometheus_stop
done_step

summary
printf '   %-52s %4d s\n' "total" $((SECONDS - started))
printf 'test-image: passed; image %d MB unpacked\n' "$size_mb"
