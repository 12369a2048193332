#!/usr/bin/env bash
# `make test/azure`: the SQL Server, Service Bus and Azurite suites against real servers.
#
#   1. start docker-compose.azure.yml (SQL Server 2022, the Service Bus emulator with
#      scripts/azure-stack/servicebus-config.json, Azurite), all on 127.0.0.1;
#   2. wait until each answers (SQL Server a query, the emulator its /health, Azurite a
#      connection), at most AZURE_STACK_TIMEOUT seconds each (default 180);
#   3. create the database `automation` and run `automation migrate` on it;
#   4. run the SQL Server conformance suite (sql/mssql) and the Service Bus and Azurite
#      suites (shared/azure) with AUTOMATION_SQLSERVER_DSN, AUTOMATION_SERVICEBUS_CONNECTION
#      and AZURITE_CONNECTION set, so none of them skips;
#   5. stop and remove the containers (AZURE_STACK_KEEP=1 leaves them running).
#
# Needs Docker with the compose plugin and ACCEPT_EULA=Y (the SQL Server and emulator
# licences). Never run on the development machines (a docker CLI but no engine there);
# without an engine or the compose plugin it says so and exits 2 before starting anything.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
: "${ACCEPT_EULA:?set ACCEPT_EULA=Y to accept the SQL Server and Service Bus emulator licences}"
export ACCEPT_EULA
export MSSQL_SA_PASSWORD="${MSSQL_SA_PASSWORD:-Automation_Test_2022}"
timeout=${AZURE_STACK_TIMEOUT:-180}
log="${TMPDIR:-/tmp}/automation-azure-stack-$(id -u).log"
go=${GO:-go}

# The emulator's connection string (its documented static key, not a secret): plain AMQP
# on localhost:5672.
readonly SERVICEBUS_CONNECTION='Endpoint=sb://localhost;SharedAccessKeyName=RootManageSharedAccessKey;SharedAccessKey=SAS_KEY_VALUE;UseDevelopmentEmulator=true;'
# Azurite's well-known development account (a published constant, not a secret).
readonly AZURITE_CONNECTION='DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==;BlobEndpoint=http://127.0.0.1:10000/devstoreaccount1;QueueEndpoint=http://127.0.0.1:10001/devstoreaccount1;TableEndpoint=http://127.0.0.1:10002/devstoreaccount1;'

# sql_dsn DATABASE: the go-mssqldb DSN of the container's sa login (no TLS on 127.0.0.1).
sql_dsn() { printf 'sqlserver://sa:%s@127.0.0.1:1433?database=%s&encrypt=disable' "$MSSQL_SA_PASSWORD" "$1"; }

compose=(docker compose -f docker-compose.azure.yml)
say() { echo "azure-stack: $*" >&2; }

# Before anything starts: a Docker engine and the compose plugin (a docker CLI alone, as on
# the development machines, cannot run the containers).
if ! command -v docker >/dev/null 2>&1; then
	say "needs Docker with the compose plugin: no docker command on PATH"
	exit 2
fi
if ! docker compose version >/dev/null 2>&1; then
	say "needs Docker with the compose plugin: \`docker compose version\` failed (install docker-compose-plugin)"
	exit 2
fi
if ! docker info >/dev/null 2>&1; then
	say "needs a running Docker engine: \`docker info\` failed (start the daemon, or check access to its socket)"
	exit 2
fi

cleanup() {
	local rc=$?
	if [ "$rc" -ne 0 ]; then
		say "failed (exit $rc); the containers' last log lines:"
		"${compose[@]}" logs --tail 50 >&2 || true
	fi
	if [ "${AZURE_STACK_KEEP:-}" != 1 ]; then
		"${compose[@]}" down -v >&2 || true
	fi
}
trap cleanup EXIT

# wait_for NAME COMMAND...: run COMMAND every 2 s until it succeeds or the timeout passes.
wait_for() {
	local name=$1 deadline=$((SECONDS + timeout))
	shift
	until "$@" >/dev/null 2>&1; do
		if [ "$SECONDS" -ge "$deadline" ]; then
			say "$name not ready after ${timeout}s"
			return 1
		fi
		sleep 2
	done
	say "$name ready"
}

sqlcmd() {
	"${compose[@]}" exec -T sqlserver /opt/mssql-tools18/bin/sqlcmd -C -S localhost -U sa -P "$MSSQL_SA_PASSWORD" -b "$@"
}

"${compose[@]}" up -d
wait_for "SQL Server" sqlcmd -Q "SELECT 1"
wait_for "Service Bus emulator" curl -fsS http://127.0.0.1:5300/health
wait_for "Azurite" bash -c 'exec 3<>/dev/tcp/127.0.0.1/10000 && exec 3<>/dev/tcp/127.0.0.1/10002'

sqlcmd -Q "IF DB_ID('automation') IS NULL CREATE DATABASE automation"
AUTOMATION_SQLSERVER_DSN="$(sql_dsn automation)" "$go" run ./functions migrate

AUTOMATION_SQLSERVER_DSN="$(sql_dsn master)" \
	AUTOMATION_SERVICEBUS_CONNECTION="$SERVICEBUS_CONNECTION" \
	AZURITE_CONNECTION="$AZURITE_CONNECTION" \
	"$go" test -count=1 -v ./sql/mssql/ ./shared/azure/ 2>&1 | tee "$log"
# A suite that skipped did not run: fail rather than report a pass.
if grep -E -- '--- SKIP: (TestConformance|TestMigrateTwiceIsNoop|TestServiceBusConformance|TestTrace)' "$log"; then
	say "a real-server suite skipped (above): its variable did not reach it"
	exit 1
fi
