#!/usr/bin/env bash
# Refreshes shared/localtime/cldr/windowsZones.json and its LICENSE from Unicode CLDR's
# official JSON release on npm (package cldr-core, file supplemental/windowsZones.json).
# Usage: testdata/tz/refresh_windows_zones.sh   (env CLDR_CORE_VERSION to pin a version)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dest="$root/shared/localtime/cldr"
version="${CLDR_CORE_VERSION:-latest}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm pack --silent "cldr-core@$version" >/dev/null)
tar -xzf "$work"/cldr-core-*.tgz -C "$work" package/supplemental/windowsZones.json package/LICENSE package/package.json
cp "$work/package/supplemental/windowsZones.json" "$dest/windowsZones.json"
cp "$work/package/LICENSE" "$dest/LICENSE"
echo "windowsZones.json from cldr-core $(sed -n 's/.*"version": *"\([^"]*\)".*/\1/p' "$work/package/package.json" | head -1)"
