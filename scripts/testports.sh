#!/usr/bin/env bash
# Prints the ports one `make test` run gives its own Azurite and OpenID provider, as
# shell assignments (AZURITE_BLOB_PORT, AZURITE_QUEUE_PORT, AZURITE_TABLE_PORT, OIDC_PORT),
# so two runs on one machine (two checkouts, a CI job beside a developer) never share a
# server, and neither run's clean-up stops the other's (scripts/azurite.sh and oidc.sh keep
# their state per port).
#
# The four ports are consecutive, from a random base in 20000-29996 (below Linux's
# ephemeral range, 32768 up), and none of them accepts a connection when chosen; up to 50
# bases are tried. A port set in the environment is kept as it is (a developer's choice).
set -euo pipefail

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

if [[ -n ${AZURITE_BLOB_PORT:-} || -n ${OIDC_PORT:-} ]]; then
	echo "AZURITE_BLOB_PORT=${AZURITE_BLOB_PORT:-10000} AZURITE_QUEUE_PORT=${AZURITE_QUEUE_PORT:-10001} AZURITE_TABLE_PORT=${AZURITE_TABLE_PORT:-10002} OIDC_PORT=${OIDC_PORT:-9090}"
	exit 0
fi
for _ in $(seq 1 50); do
	base=$((20000 + RANDOM % 9997))
	if ! port_open "$base" && ! port_open $((base + 1)) && ! port_open $((base + 2)) && ! port_open $((base + 3)); then
		echo "AZURITE_BLOB_PORT=$base AZURITE_QUEUE_PORT=$((base + 1)) AZURITE_TABLE_PORT=$((base + 2)) OIDC_PORT=$((base + 3))"
		exit 0
	fi
done
echo "testports.sh: no four free consecutive ports found in 50 tries" >&2
exit 1
