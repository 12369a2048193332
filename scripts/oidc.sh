#!/usr/bin/env bash
# A local OpenID provider (oidc-provider, pinned in package.json) for the OIDC tests, like
# scripts/azurite.sh for Azurite.
#
#   scripts/oidc.sh start    start it in the background on 127.0.0.1:$OIDC_PORT (9090), wait
#                            for its discovery document, print OIDC_PROVIDER_ISSUER=<issuer>
#   scripts/oidc.sh stop     stop the instance started by `start`
#
#   export "$(scripts/oidc.sh start)" && go test ./shared/app/ -run OIDCProvider ; scripts/oidc.sh stop
#
# Installs the pinned package with `npm ci` when node_modules lacks it.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
port=${OIDC_PORT:-9090}
state_dir="${TMPDIR:-/tmp}/automation-oidc-$(id -u)-${port}"
pid_file="$state_dir/oidc.pid"
log_file="$state_dir/oidc.log"
issuer="http://127.0.0.1:${port}"

say() { echo "oidc.sh: $*" >&2; }

# running_pid
. "$root/scripts/pidfile.sh"

ready() { curl -fsS "$issuer/.well-known/openid-configuration" >/dev/null 2>&1; }

start() {
	if running_pid >/dev/null && ready; then
		echo "OIDC_PROVIDER_ISSUER=$issuer"
		return
	fi
	[[ -d $root/node_modules/oidc-provider ]] || (cd "$root" && npm ci --no-audit --no-fund >&2)
	mkdir -p "$state_dir"
	OIDC_PORT=$port nohup node "$root/scripts/oidc-provider.mjs" >"$log_file" 2>&1 &
	write_pid $!
	for _ in $(seq 1 100); do
		if ready; then
			echo "OIDC_PROVIDER_ISSUER=$issuer"
			return
		fi
		sleep 0.2
	done
	say "not ready after 20 s; log: $log_file"
	tail -n 20 "$log_file" >&2 || true
	exit 1
}

stop() {
	local pid
	if pid=$(running_pid); then
		kill "$pid"
	fi
	rm -f "$pid_file" "$log_file"
	rmdir "$state_dir" 2>/dev/null || true
}

case "${1:-}" in
start) start ;;
stop) stop ;;
*)
	echo "usage: scripts/oidc.sh start|stop" >&2
	exit 2
	;;
esac
