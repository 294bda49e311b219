# Validation and Lookup API — build, run, test. Node 24 LTS (engines >=24.21.0, the pin in .nvmrc); dependencies from the
# npm registry (package-lock.json).
SHELL := /bin/bash
export REDOCLY_TELEMETRY := off
export NPM_CONFIG_UPDATE_NOTIFIER := false
# .npmrc makes npm silent (so `npm run keys` prints the key alone); make's own npm calls show warnings and errors.
export NPM_CONFIG_LOGLEVEL := warn
export DATA_DIR ?= ./var

NPX := npx --no-install
# Holds the Node node_modules was built with ("node v24.21.0"); scripts/with-node refuses any other.
STAMP := node_modules/.install-stamp

# The Node every target runs on. When the system node is older than the engines floor (or .node/ already holds
# one), the pinned Node of .nvmrc is fetched from the npm registry into .node/ once and put first on PATH, with its
# headers as npm_config_nodedir (a native module that compiles does so against them, with no download).
# scripts/with-node decides, for make and the npm scripts alike.
NODE_PIN := $(shell tr -d ' \nv' < .nvmrc)
ifeq ($(shell scripts/with-node --source),local)
NODE_DEP := .node/bin/node
export PATH := $(CURDIR)/.node/bin:$(PATH)
export npm_config_nodedir := $(CURDIR)/.node
NODE_WANTED := node v$(NODE_PIN)
else
NODE_DEP :=
NODE_WANTED := node $(shell node -v)
endif
# node_modules built with another Node: install again (its native modules would not load).
ifneq ($(shell cat $(STAMP) 2>/dev/null),$(NODE_WANTED))
.PHONY: $(STAMP)
endif

# Make's own dependency tracking: each step below is a file target, so a second `make run` with nothing changed
# regenerates, recompiles and rebuilds nothing and starts in seconds.
API_TYPES := generated/api.ts
SDK_TYPES := clients/typescript/src/schema.ts
# Stamped only after tsc succeeded; it sits in dist/src, so removing the compiled tree removes it too.
BUILD_STAMP := dist/src/.built
# What tsc compiles, and its folders: adding, removing or renaming a file changes its folder's time, so a deleted
# source also triggers a rebuild (and with it the removal of its compiled module).
TS_SOURCES := $(shell find src -name '*.ts')
TS_DIRS := $(shell find src generated -type d)
GEOIP_DIR := $(DATA_DIR)/geoip
GEOIP_FILES := $(GEOIP_DIR)/GeoLite2-City.mmdb $(GEOIP_DIR)/GeoLite2-ASN.mmdb $(GEOIP_DIR)/GeoLite2-City.slim.mmdb
ifneq ($(GEOIP_NEWER_CITY),0)
GEOIP_FILES += $(GEOIP_DIR)/GeoLite2-City.latest.mmdb
endif

.PHONY: run build test test-fast test-image generate check-generated lint docs bench bench-fixed bench-memory bench-jobs soak geoip clean install node

## node: the pinned Node (.nvmrc) in .node/, fetched from the npm registry (automatic when the system node is older)
node: .node/bin/node
.node/bin/node: .nvmrc
	@bash scripts/fetch-node.sh
	@touch $@

$(STAMP): package.json package-lock.json | $(NODE_DEP)
	npm ci --no-audit --no-fund
	@echo "$(NODE_WANTED)" > $@

install: $(STAMP)

## generate: generated/ and the SDK types from openapi.yaml, when openapi.yaml (or the tools) changed
generate: $(API_TYPES) $(SDK_TYPES)
$(API_TYPES): openapi.yaml $(STAMP)
	$(NPX) openapi-typescript openapi.yaml -o $@
# The SDK's types are made by its own script (its build runs it too) and never committed: the typecheck, knip and the
# SDK's tests read them (vitest's global setup, test/support/sdk-types.ts, makes them for a bare `npm test`).
$(SDK_TYPES): openapi.yaml $(STAMP)
	npm --prefix clients/typescript run generate

## check-generated: fail when generated/ is stale against openapi.yaml (the SDK's types are not committed: its
## test clients/typescript/test/schema.test.ts holds them to generated/api.ts)
check-generated: $(STAMP)
	@tmp=$$(mktemp -d); \
	$(NPX) openapi-typescript openapi.yaml -o $$tmp/api.ts >/dev/null 2>&1; \
	if ! diff -q $$tmp/api.ts generated/api.ts >/dev/null; then \
	  echo "generated/api.ts is stale against openapi.yaml: run 'make generate' and commit it"; rm -rf $$tmp; exit 1; \
	fi; rm -rf $$tmp; echo "generated/ is up to date"

## lint: the contract (redocly, examples checked), the types, and unused files, exports and dependencies (knip.jsonc)
lint: $(STAMP) $(SDK_TYPES)
	$(NPX) redocly lint openapi.yaml
	$(NPX) tsc -p tsconfig.json --noEmit
	$(NPX) knip

## docs-config: docs/configuration.md's reference table from src/config.ts (after adding or changing a setting)
.PHONY: docs-config
docs-config: $(STAMP)
	node --import tsx scripts/config-docs.ts

## docs: the Redoc page served at /docs
docs: dist/docs/index.html
dist/docs/index.html: openapi.yaml redocly.yaml $(STAMP)
	@mkdir -p dist/docs
	$(NPX) redocly build-docs openapi.yaml --inlineBundle -o $@

## build: generated types, compiled TypeScript, docs page (each only when its inputs changed)
build: $(BUILD_STAMP) $(SDK_TYPES) docs
$(BUILD_STAMP): $(TS_SOURCES) $(TS_DIRS) $(API_TYPES) tsconfig.json tsconfig.build.json $(STAMP)
	@rm -rf dist/src dist/generated  # no compiled module outlives its source
	$(NPX) tsc -p tsconfig.build.json
	@touch $@

## geoip: the bundled GeoLite2 databases, fetched into DATA_DIR/geoip when one is missing (GEOIP_NEWER_CITY=0: no newer City)
geoip: $(GEOIP_FILES)
$(GEOIP_FILES) &: | $(NODE_DEP)
	@bash scripts/fetch-geoip.sh

## data: refresh every shipped dataset that has a public source (bank tables, BIN ranges, email lists, GeoLite2)
## and record its date in data/datasets.json; how often: docs/data-sources.md
.PHONY: data
data: $(STAMP)
	node --import tsx scripts/refresh-data.ts

## run: build (only what changed) and start in the foreground on the embedded default; `npm start` without npm's own start-up
# Two malloc arenas instead of glibc's eight per core: the threads' retained free memory was ~15 MB RSS (ADR 0034);
# the main thread's young generation capped (src/heap-tuning.ts NODE_START_FLAGS, ADR 0039).
run: build geoip
	MALLOC_ARENA_MAX=$${MALLOC_ARENA_MAX:-2} GLIBC_TUNABLES=$${GLIBC_TUNABLES:-glibc.malloc.mmap_threshold=8192} node --max-semi-space-size=4 dist/src/main.js

## test: every test, the spec lint and the generated-types drift check (the gate)
test: $(STAMP) $(SDK_TYPES) check-generated lint docs
	$(NPX) vitest run

## test-fast: the fast loop (seconds; no build, lint or drift check first): every file of test/unit and test/contract
## but those tagged `// @module-tag slow` under their header (vitest's file tag; each says why: it starts processes or
## Redis, loads zxcvbn, makes many TLS handshakes, or needs a process of its own). `vitest run --tags-filter='!slow'`
## would load the tagged files only to skip their tests, so they are left out by name. Files share their worker
## processes (--isolate=false: half the CPU time) on every core; `make test` isolates each.
TEST_FAST = $(shell grep -L -E '^// @module-tag slow\b' test/unit/*.test.ts test/contract/*.test.ts)
test-fast: $(STAMP) $(SDK_TYPES)
	$(NPX) vitest run --isolate=false --maxWorkers=100% $(TEST_FAST)

## test-image: the container image and compose.yaml, checked from outside (podman, runc, podman-compose, debootstrap;
## .ci/run installs them and runs this after make test; not part of test): builds local Debian, Node 24 and Redis
## bases, the image on them, and checks start, first key, read-only root, non-root user, keys CLI through podman
## exec, SIGTERM, restart on the volume, and two instances sharing one Redis's limits. Prints its timings.
test-image:
	bash test/image/run.sh

## bench: throughput and latency against bare Koa, node:http and the Fastify peer (not part of test; BENCHMARKS.md)
bench: build
	node --import tsx bench/run.ts

## bench-fixed: only the fixed bench (Koa, node:http, the Fastify peer, BIC, IBAN, card, IP in turn; wrk, then autocannon)
bench-fixed: build geoip
	BENCH_ONLY=koa,http,fastify-peer,bic,iban,card,ip node --import tsx bench/run.ts

## bench-memory: RSS after start and after password requests, and each dataset's share
bench-memory: build geoip
	node --import tsx bench/memory.ts

## bench-jobs: one verification job of BENCH_JOB_ITEMS (100,000) addresses on Redis with two job workers, then on the
## embedded queue: items/s, SMTP sessions, RSS above idle, Redis memory, BIC p99 beside it, first result line
bench-jobs: build
	node --import tsx bench/smtp-jobs.ts

## soak: 60 s of mixed traffic (not part of test)
soak: build
	node --import tsx bench/soak.ts

clean:
	rm -rf dist node_modules/.install-stamp
