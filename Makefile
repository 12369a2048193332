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

# progress counts the packages `go build -v` names on stderr as it compiles them, one line
# every 50, so a cold build (minutes on 2 cores) is seen to move; a warm one prints nothing.
# Any other line (a compile error) passes through.
progress = awk '/^[^ \#]+$$/ { n++; if (n % 50 == 0) printf "  … %d packages compiled\n", n > "/dev/stderr"; next } { print > "/dev/stderr" } END { if (n) printf "  compiled %d packages\n", n > "/dev/stderr" }'

.PHONY: run
run: ## Replay the realistic scenario on the embedded default (SQLite, in-process bus)
	@echo "make run: building bin/automation (the first build compiles about 540 packages, the standard library included: several minutes on 2 cores; then seconds)" >&2
	@set -o pipefail; $(GO) build -v -o bin/automation ./functions 2>&1 | $(progress)
	@echo "make run: replaying $(SCENARIO) on the embedded default (SQLite in a temporary directory, the in-process bus)" >&2
	@bin/automation replay $(SCENARIO)

.PHONY: test
test: node_modules test/chromium ## Run the whole test suite: npm ci, Chromium when it can (test/chromium), Azurite and the OpenID provider on 127.0.0.1, every package
	@echo "make test: compiling the packages (seconds on a warm build cache; several minutes on a cold one with 2 cores)"
	@set -o pipefail; $(GO) build -v ./... 2>&1 | $(progress)
	@echo "make test: starting Azurite and the OpenID provider (oidc-provider) on 127.0.0.1, on ports of this run's own (scripts/testports.sh), and running every package with gotestsum (about 4-5 minutes on 2 quiet cores once compiled; longer on a busy machine); it ends with the skipped tests and why"
	@set -e; ports=$$(scripts/testports.sh); export $$ports; export "$$(scripts/azurite.sh start)"; export "$$(scripts/oidc.sh start)"; \
	  trap 'scripts/azurite.sh stop >/dev/null; scripts/oidc.sh stop >/dev/null' EXIT; \
	  $(GO) tool gotestsum --format pkgname-and-test-fails --format-hide-empty-pkg -- -count=1 ./...

# test/chromium: the console's browser tests need Chromium. make test installs it (make
# chromium) where it can, as root with apt-get; otherwise it says the one command to run.
.PHONY: test/chromium
test/chromium:
	@if command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1; then \
	  echo "make test: Chromium present ($$(command -v chromium || command -v chromium-browser)): the console's browser tests run"; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	  echo "make test: installing Chromium for the console's browser tests (make chromium: apt-get, a minute or two)"; \
	  $(MAKE) --no-print-directory chromium || echo "make test: make chromium failed: the console's browser tests will skip (run make chromium to see why)"; \
	else \
	  echo "make test: no Chromium here and no root to apt-get it: the console's browser tests will skip. To run them: sudo make chromium"; \
	fi

node_modules: package.json package-lock.json
	@echo "make: npm ci (the pinned Azurite, oidc-provider, Redocly CLI, openapi-typescript, TypeScript and axe-core: package.json)"
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

.PHONY: screenshots
screenshots: node_modules ## Rewrite docs/img/console-*.png, a screenshot of every console page, from the browser test in headless Chromium (make chromium)
	$(GO) test ./shared/api/console -run TestConsoleInABrowser -count=1 -args -update-docs

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
	@echo "make build: building bin/automation (seconds on a warm build cache; several minutes on a cold one with 2 cores)" >&2
	@set -o pipefail; $(GO) build -v -o bin/automation ./functions 2>&1 | $(progress)

.PHONY: lint
lint: node_modules ## go vet, gofmt check, and Redocly CLI's recommended rules on docs/openapi.json (redocly.yaml)
	$(GO) vet ./...
	@out=$$(gofmt -l .); if [ -n "$$out" ]; then echo "gofmt needed:"; echo "$$out"; exit 1; fi
	@$(MAKE) --no-print-directory lint/openapi

.PHONY: lint/openapi
lint/openapi: node_modules ## Lint the bundled API description (docs/openapi.json) with Redocly CLI, recommended rules
	@REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true npx --no-install redocly lint docs/openapi.json

.PHONY: openapi
openapi: ## Rewrite docs/openapi.json, the bundle of every API's OpenAPI document (after editing one)
	$(GO) test ./shared/api/apidoc -run TestBundleFileIsCurrent -count=1 -update

.PHONY: tz/windows
tz/windows: ## Refresh the vendored CLDR windowsZones (Windows → IANA zone ids) from npm cldr-core
	bash testdata/tz/refresh_windows_zones.sh

.PHONY: tz/oracle
tz/oracle: ## Regenerate the DST oracle cases (needs python3 and tzoracle.py, which is not in the repo: docs/architecture.md#dst-oracle)
	bash testdata/tz/gen_oracle_cases.sh
