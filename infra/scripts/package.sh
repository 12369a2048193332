#!/usr/bin/env bash
# Builds the Functions deployment package for the Go custom handler:
#
#   <out>.zip
#     host.json                 (customHandler.defaultExecutablePath = "automation")
#     automation                (linux/amd64, CGO off, executable bit kept)
#     <Function>/function.json  (every functions/<Function>/function.json; folders at the
#                                repository root that hold a function.json are taken too)
#
# Usage: infra/scripts/package.sh [out.zip]     (default: dist/functionapp.zip; the app
# root is staged in dist/functionapp/, both ignored by git)
# Run from anywhere; paths are resolved from the repository root. Intended to back a
# `make package` target.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
out="${1:-$root/dist/functionapp.zip}"
case "$out" in /*) ;; *) out="$PWD/$out" ;; esac

[ -f "$root/host.json" ] || { echo "package: $root/host.json not found" >&2; exit 1; }

stage="$root/dist/functionapp"
rm -rf "$stage"
mkdir -p "$stage"

# The executable name must match host.json customHandler.description.defaultExecutablePath.
exe="$(sed -n 's/.*"defaultExecutablePath"[[:space:]]*:[[:space:]]*"\([^"]*\)".*/\1/p' "$root/host.json" | head -n1)"
exe="${exe:-automation}"

echo "package: building $exe (linux/amd64)"
(cd "$root" && GOOS=linux GOARCH=amd64 CGO_ENABLED=0 go build -trimpath -ldflags='-s -w' -o "$stage/$exe" ./functions)
chmod 0755 "$stage/$exe"

cp "$root/host.json" "$stage/host.json"

count=0
for fj in "$root"/functions/*/function.json "$root"/*/function.json; do
  [ -e "$fj" ] || continue
  dir="$(basename "$(dirname "$fj")")"
  if [ -e "$stage/$dir" ]; then
    echo "package: function $dir is defined twice" >&2
    exit 1
  fi
  mkdir -p "$stage/$dir"
  cp "$fj" "$stage/$dir/function.json"
  count=$((count + 1))
done
if [ "$count" -eq 0 ]; then
  echo "package: warning: no */function.json found; the app will have no functions" >&2
fi

mkdir -p "$(dirname "$out")"
rm -f "$out"
# Unix permissions are stored in the zip so the handler stays executable on the host
# (Info-ZIP when installed, else Python's zipfile with the mode in external_attr).
if command -v zip >/dev/null; then
  (cd "$stage" && zip -q -r -X "$out" .)
else
  python3 - "$stage" "$out" <<'PY'
import os, sys, zipfile
stage, out = sys.argv[1], sys.argv[2]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for base, dirs, files in os.walk(stage):
        dirs.sort()
        for name in sorted(files):
            path = os.path.join(base, name)
            info = zipfile.ZipInfo.from_file(path, os.path.relpath(path, stage))
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(path, "rb") as f:
                z.writestr(info, f.read())
PY
fi
echo "package: wrote $out ($count functions)"
