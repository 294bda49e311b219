# Validation and Lookup API — build, run, test. Node 20; dependencies from the npm registry (package-lock.json).
SHELL := /bin/bash
export REDOCLY_TELEMETRY := off
export NPM_CONFIG_UPDATE_NOTIFIER := false
# .npmrc makes npm silent (so `npm run keys` prints the key alone); make's own npm calls show warnings and errors.
export NPM_CONFIG_LOGLEVEL := warn
export DATA_DIR ?= ./var

NPX := npx --no-install
STAMP := node_modules/.install-stamp

.PHONY: run build test generate check-generated lint docs bench soak geoip clean install

$(STAMP): package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch $@

install: $(STAMP)

## generate: rewrite generated/ from openapi.yaml
generate: $(STAMP)
	$(NPX) openapi-typescript openapi.yaml -o generated/api.ts
	$(NPX) openapi-typescript openapi.yaml -o clients/typescript/src/schema.ts

## check-generated: fail when generated/ is stale against openapi.yaml
check-generated: $(STAMP)
	@tmp=$$(mktemp -d); \
	$(NPX) openapi-typescript openapi.yaml -o $$tmp/api.ts >/dev/null 2>&1; \
	if ! diff -q $$tmp/api.ts generated/api.ts >/dev/null; then \
	  echo "generated/api.ts is stale against openapi.yaml: run 'make generate' and commit it"; rm -rf $$tmp; exit 1; \
	fi; \
	if ! diff -q $$tmp/api.ts clients/typescript/src/schema.ts >/dev/null; then \
	  echo "clients/typescript/src/schema.ts is stale against openapi.yaml: run 'make generate' and commit it"; rm -rf $$tmp; exit 1; \
	fi; rm -rf $$tmp; echo "generated/ and the SDK types are up to date"

## lint: the contract (redocly, examples checked) and the types
lint: $(STAMP)
	$(NPX) redocly lint openapi.yaml
	$(NPX) tsc -p tsconfig.json --noEmit

## docs: the Redoc page served at /docs
docs: dist/docs/index.html
dist/docs/index.html: openapi.yaml redocly.yaml $(STAMP)
	@mkdir -p dist/docs
	$(NPX) redocly build-docs openapi.yaml --inlineBundle -o $@

## build: generated types, compiled TypeScript, docs page
build: generate docs
	@rm -rf dist/src dist/generated  # no compiled module outlives its source
	$(NPX) tsc -p tsconfig.build.json

## geoip: the bundled GeoLite2 databases, fetched once into DATA_DIR/geoip
geoip:
	@bash scripts/fetch-geoip.sh

## data: refresh every shipped dataset that has a public source (bank tables, BIN ranges, email lists, GeoLite2)
## and record its date in data/datasets.json; how often: docs/data-sources.md
.PHONY: data
data: $(STAMP)
	node --import tsx scripts/refresh-data.ts

## run: build and start in the foreground on the embedded default
run: build geoip
	npm start

## test: every test, the spec lint and the generated-types drift check
test: $(STAMP) check-generated lint docs
	$(NPX) vitest run

## bench: throughput and latency against bare Koa and node:http (not part of test)
bench: build
	node --import tsx bench/run.ts

## soak: 60 s of mixed traffic (not part of test)
soak: build
	node --import tsx bench/soak.ts

clean:
	rm -rf dist node_modules/.install-stamp
