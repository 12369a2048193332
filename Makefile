# Automation pipeline. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
SCENARIO ?= testdata/scenarios/realistic.json
BENCH_ROWS ?= 100000
BENCH_DELIVERIES ?= 20000
BENCH_REPLAY_EVENTS ?= 50000
BENCH_COMMANDS ?= 5000
SEEDS ?= 200

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-zA-Z0-9_/.-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-16s %s\n", $$1, $$2}'

.PHONY: run
run: ## Replay the realistic scenario on the embedded default (SQLite, in-process bus)
	@$(GO) run ./functions replay $(SCENARIO)

.PHONY: test
test: node_modules ## Run the whole test suite (starts Azurite on 127.0.0.1 for the Table/Blob tests)
	@set -e; export "$$(scripts/azurite.sh start)"; trap 'scripts/azurite.sh stop >/dev/null' EXIT; \
	  $(GO) tool gotestsum --format pkgname-and-test-fails --format-hide-empty-pkg -- -count=1 ./...

node_modules: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch node_modules

.PHONY: azurite/start azurite/stop
azurite/start: node_modules ## Start Azurite (in-memory) on 127.0.0.1; prints AZURITE_CONNECTION=…
	@scripts/azurite.sh start
azurite/stop: ## Stop Azurite
	@scripts/azurite.sh stop

.PHONY: chromium
chromium: ## Install Chromium from the distribution's packages for the console's browser tests (skipped when present)
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
	  echo "chromium present: $$(command -v chromium || command -v chromium-browser)"; \
	else \
	  SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update && $$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium; \
	fi

.PHONY: test/race
test/race: ## Run the suite with the race detector (needs cgo)
	$(GO) test -count=1 -race ./...

.PHONY: test/golden
test/golden: ## Rewrite the replay golden files after an intended output change
	$(GO) test ./shared/replay -run TestGoldenScenarios -update

.PHONY: bench
bench: ## Burn-down of 100,000 due rows (BENCH_ROWS), dispatch of 20,000 deliveries (BENCH_DELIVERIES) replay of 1,000…50,000 events (BENCH_REPLAY_EVENTS) and gateway ingest of 40 batches of 500 events and 5,000 campaign commands (BENCH_COMMANDS) through the worker platform with the simulated provider on SQLite: rows/s, deliveries/s, µs/event, events/s, p99 ms per batch and commands/s
	$(GO) test ./shared/app/ -run '^$$' -bench BurnDown -benchtime 1x -args -burndown.rows=$(BENCH_ROWS)
	$(GO) test ./shared/delivery/ -run '^$$' -bench Dispatch -benchtime 1x -args -dispatch.deliveries=$(BENCH_DELIVERIES)
	$(GO) test ./shared/replay/ -run '^$$' -bench Replay -benchtime 1x -timeout 30m -args -replay.max=$(BENCH_REPLAY_EVENTS)
	$(GO) test ./shared/gateway/ -run '^$$' -bench IngestBatch -benchtime 1x
	$(GO) test ./shared/attribute/ -run '^$$' -bench CounterOps -benchtime 1x
	$(GO) test ./shared/campaign/ -run '^$$' -bench WorkerCommands -benchtime 1x -args -campaign.commands=$(BENCH_COMMANDS)

.PHONY: sim
sim: ## Deterministic fault simulation of SEEDS seeds (default 200; `make sim SEEDS=10000` is the long run): docs/simulation.md
	$(GO) run ./functions sim -seeds $(SEEDS)

.PHONY: package
package: ## Build dist/functionapp.zip: linux/amd64 handler, host.json, function folders
	bash infra/scripts/package.sh

.PHONY: build
build: ## Build bin/automation
	$(GO) build -o bin/automation ./functions

.PHONY: lint
lint: ## go vet and gofmt check
	$(GO) vet ./...
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi

.PHONY: tz/windows
tz/windows: ## Refresh the vendored CLDR windowsZones (Windows → IANA zone ids) from npm cldr-core
	bash testdata/tz/refresh_windows_zones.sh

.PHONY: tz/oracle
tz/oracle: ## Regenerate the DST oracle cases (needs python3 and tzoracle.py, which is not in the repo: docs/architecture.md#dst-oracle)
	bash testdata/tz/gen_oracle_cases.sh
