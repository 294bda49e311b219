# Sourced by the image test: podman set up for this sandbox, a run id, timings and cleanup (no shebang: a library).
# Why the settings: the sandbox refuses crun's rlimits and hybrid cgroups (runc + cgroupfs, no default ulimits), has
# no systemd (events to a file) and no registry to pull from (every image is built here).

TEST_IMAGE_CONF="${TMPDIR:-/tmp}/test-image-containers.$$.conf"
cat > "$TEST_IMAGE_CONF" <<'CONF'
[containers]
default_ulimits = []
[engine]
runtime = "runc"
cgroup_manager = "cgroupfs"
events_logger = "file"
CONF
export CONTAINERS_CONF="$TEST_IMAGE_CONF"

# step NAME: start a timed step; done_step prints its duration. Every timing goes to the summary at the end.
TIMINGS=()
step() { STEP_NAME="$1"; STEP_START=$SECONDS; printf '\n== %s\n' "$1"; }
done_step() {
  local took=$((SECONDS - STEP_START))
  TIMINGS+=("$(printf '%-52s %4d s' "$STEP_NAME" "$took")")
  printf '   %s: %d s\n' "$STEP_NAME" "$took"
}
summary() { printf '\n== timings\n'; printf '   %s\n' "${TIMINGS[@]}"; }

fail() { printf 'test-image: FAIL: %s\n' "$*" >&2; exit 1; }
ok() { printf '   ok: %s\n' "$*"; }

# wait_http URL [SECONDS]: poll until URL answers 200.
wait_http() {
  local url="$1" limit="${2:-60}" i
  for ((i = 0; i < limit * 4; i++)); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "$url" 2>/dev/null)" = 200 ] && return 0
    sleep 0.25
  done
  return 1
}

# free_port: an unused loopback port for publishing.
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
