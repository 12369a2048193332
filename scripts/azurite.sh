#!/usr/bin/env bash
# Azurite (the local Azure Table/Blob/Queue server, pinned in package.json) for the tests of
# shared/azure.
#
#   scripts/azurite.sh start    start it in the background (no-op when already running),
#                               wait until the blob and table ports accept connections, and
#                               print AZURITE_CONNECTION=<connection string> on stdout
#   scripts/azurite.sh stop     stop the instance started by `start` (no-op when none)
#   scripts/azurite.sh status   say whether it runs; print AZURITE_CONNECTION=... when it does
#
#   export "$(scripts/azurite.sh start)" && go test ./shared/azure/ ; scripts/azurite.sh stop
#
# Ports: AZURITE_BLOB_PORT (10000), AZURITE_QUEUE_PORT (10001), AZURITE_TABLE_PORT (10002).
# Data lives in memory only, so every start is empty. State (pid file, log) lives in
# ${TMPDIR:-/tmp}/automation-azurite-<uid>-<blob port>, one directory per instance.
# Installs the pinned Azurite with `npm ci` when node_modules lacks it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
blob_port=${AZURITE_BLOB_PORT:-10000}
queue_port=${AZURITE_QUEUE_PORT:-10001}
table_port=${AZURITE_TABLE_PORT:-10002}
state_dir="${TMPDIR:-/tmp}/automation-azurite-$(id -u)-${blob_port}"
pid_file="$state_dir/azurite.pid"
log_file="$state_dir/azurite.log"
start_timeout=${AZURITE_START_TIMEOUT:-30} # seconds

# The well-known development account of Azurite (a published constant, not a secret),
# spelled out because the Go SDKs do not understand UseDevelopmentStorage=true.
account_key='Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw=='
connection="DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${account_key};BlobEndpoint=http://127.0.0.1:${blob_port}/devstoreaccount1;QueueEndpoint=http://127.0.0.1:${queue_port}/devstoreaccount1;TableEndpoint=http://127.0.0.1:${table_port}/devstoreaccount1;"

say() { echo "azurite.sh: $*" >&2; }

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# running_pid
. "$root/scripts/pidfile.sh"

ready() { port_open "$blob_port" && port_open "$table_port"; }

start() {
	local pid
	if pid=$(running_pid); then
		if ready; then
			say "already running (pid $pid)"
			echo "AZURITE_CONNECTION=$connection"
			return 0
		fi
	elif ready; then
		say "ports $blob_port/$table_port already accept connections (an Azurite not started by this script?); using them"
		echo "AZURITE_CONNECTION=$connection"
		return 0
	fi

	if [[ ! -x $root/node_modules/.bin/azurite ]]; then
		say "installing the pinned Azurite (npm ci)"
		(cd "$root" && npm ci --no-audit --no-fund >&2)
	fi

	mkdir -p "$state_dir"
	if [[ -z ${pid:-} ]]; then
		# Own process group (job control), so stop can end npx and the node process it spawns.
		# --inMemoryPersistence: nothing is written to disk; Azurite refuses --location with it.
		set -m
		(cd "$root" && exec npx --no-install azurite --silent --inMemoryPersistence \
			--blobHost 127.0.0.1 --queueHost 127.0.0.1 --tableHost 127.0.0.1 \
			--blobPort "$blob_port" --queuePort "$queue_port" --tablePort "$table_port" \
			--skipApiVersionCheck) </dev/null >"$log_file" 2>&1 &
		pid=$!
		set +m
		write_pid "$pid"
		say "started (pid $pid, log $log_file)"
	fi

	local deadline=$((SECONDS + start_timeout))
	until ready; do
		if ! kill -0 "$pid" 2>/dev/null; then
			say "Azurite exited during start-up; log:"
			cat "$log_file" >&2 || true
			rm -f "$pid_file"
			return 1
		fi
		if ((SECONDS >= deadline)); then
			say "ports $blob_port/$table_port not open after ${start_timeout}s; log:"
			cat "$log_file" >&2 || true
			stop
			return 1
		fi
		sleep 0.2
	done
	echo "AZURITE_CONNECTION=$connection"
}

stop() {
	local pid
	if ! pid=$(running_pid); then
		rm -f "$pid_file"
		say "not running"
		return 0
	fi
	# The pid is a process-group leader (see start): signal the group, then the pid alone
	# in case the group is gone already.
	kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
	local deadline=$((SECONDS + 10))
	while kill -0 "$pid" 2>/dev/null || kill -0 -- "-$pid" 2>/dev/null; do
		if ((SECONDS >= deadline)); then
			kill -KILL -- "-$pid" 2>/dev/null || kill -KILL "$pid" 2>/dev/null || true
			break
		fi
		sleep 0.2
	done
	rm -f "$pid_file" "$log_file"
	rmdir "$state_dir" 2>/dev/null || true
	say "stopped (pid $pid)"
}

status() {
	local pid
	if pid=$(running_pid) && ready; then
		say "running (pid $pid)"
		echo "AZURITE_CONNECTION=$connection"
	else
		say "not running"
		return 1
	fi
}

case "${1:-}" in
start) start ;;
stop) stop ;;
status) status ;;
*)
	echo "usage: $0 start|stop|status" >&2
	exit 2
	;;
esac
