# Automation pipeline. `make help` lists the targets.
SHELL := /bin/bash
GO ?= go
SCENARIO ?= testdata/scenarios/realistic.json
BENCH_ROWS ?= 100000
BENCH_DELIVERIES ?= 20000
BENCH_REPLAY_EVENTS ?= 50000
BENCH_COMMANDS ?= 5000
SEEDS ?= 200
BENCH_HERD_ROWS ?= 100000
BENCH_E2E_ROWS ?= 20000
BENCH_W6_RATE ?= 2000
BENCH_W6_DURATION ?= 5m
BENCH_PEERS ?= ../shared/bench

.DEFAULT_GOAL := help

.PHONY: help
help: ## List the targets
	@grep -hE '^[a-zA-Z0-9_/.-]+:.*## ' $(MAKEFILE_LIST) | awk 'BEGIN {FS = ":.*## "}; {printf "  %-16s %s\n", $$1, $$2}'

.PHONY: run
run: ## Replay the realistic scenario on the embedded default (SQLite, in-process bus)
	@$(GO) run ./functions replay $(SCENARIO)

.PHONY: test
test: node_modules ## Run the whole test suite (starts Azurite and the OpenID provider on 127.0.0.1 for the Table/Blob and OIDC tests)
	@set -e; export "$$(scripts/azurite.sh start)"; export "$$(scripts/oidc.sh start)"; \
	  trap 'scripts/azurite.sh stop >/dev/null; scripts/oidc.sh stop >/dev/null' EXIT; \
	  $(GO) tool gotestsum --format pkgname-and-test-fails --format-hide-empty-pkg -- -count=1 ./...

node_modules: package.json package-lock.json
	npm ci --no-audit --no-fund
	@touch node_modules

.PHONY: oidc/start oidc/stop
oidc/start: node_modules ## Start the local OpenID provider (oidc-provider) on 127.0.0.1:9090; prints OIDC_PROVIDER_ISSUER=…
	@scripts/oidc.sh start
oidc/stop: ## Stop the local OpenID provider
	@scripts/oidc.sh stop

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

.PHONY: test/azure
test/azure: ## Real servers in Docker (docker-compose.azure.yml: SQL Server 2022, the Service Bus emulator, Azurite): wait, `automation migrate`, then the SQL Server, Service Bus and Azurite suites against them; needs ACCEPT_EULA=Y
	@GO=$(GO) bash scripts/azure-stack.sh

.PHONY: test/race
test/race: ## Run the suite with the race detector (needs cgo); ends with the skipped tests and why, like `make test`
	@$(GO) tool gotestsum --format pkgname-and-test-fails --format-hide-empty-pkg -- -count=1 -race ./...

.PHONY: test/golden
test/golden: ## Rewrite the replay golden files after an intended output change
	$(GO) test ./shared/replay -run TestGoldenScenarios -update

.PHONY: bench
bench: ## One table of every workload in testdata/bench/workloads.txt (W1 burn-down of BENCH_ROWS, W2 herd of BENCH_HERD_ROWS queued and sent behind serve, W4 end to end, dispatch, replay, gateway ingest, W5 counters, campaign commands, W6 sustained pipeline at BENCH_W6_RATE logins/s for BENCH_W6_DURATION and its burst): rate, p50/p99, peak RSS, and the ratio to the raw-SQL floor and River when ../shared/bench is present
	@BENCH_ROWS=$(BENCH_ROWS) BENCH_HERD_ROWS=$(BENCH_HERD_ROWS) BENCH_E2E_ROWS=$(BENCH_E2E_ROWS) BENCH_DELIVERIES=$(BENCH_DELIVERIES) BENCH_COMMANDS=$(BENCH_COMMANDS) \
	  BENCH_W6_RATE=$(BENCH_W6_RATE) BENCH_W6_DURATION=$(BENCH_W6_DURATION) BENCH_REPLAY_EVENTS=$(BENCH_REPLAY_EVENTS) $(GO) run ./shared/benchtable -workloads testdata/bench/workloads.txt -peers $(BENCH_PEERS) -log bench.log

.PHONY: bench/growth
bench/growth: ## W1 burn-down at 10k, 100k and 1M rows, each beside the floor and River (long: the 1M setup alone takes minutes)
	@$(GO) run ./shared/benchtable -workloads testdata/bench/growth.txt -peers $(BENCH_PEERS) -log bench-growth.log

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
