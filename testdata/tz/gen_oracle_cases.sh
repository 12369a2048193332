#!/usr/bin/env bash
# Regenerates testdata/tz/oracle_cases.txt: expected UTC instants for the DST
# product rule (docs/architecture.md#dst-product-rule), computed by the
# independent DST oracle tzoracle.py (Python zoneinfo, docs/architecture.md#dst-oracle), never
# by our Go code. Read by shared/localtime/oracle_test.go.
#
# Output: one case per line, five whitespace-separated fields
#   zone date hh:mm utc local   # kind
# where utc/local are the oracle's output and kind (normal|gap|overlap) is the
# intended category from the list below, verified here with Python zoneinfo
# (fold=0 vs fold=1); generation fails if a case is not in its intended
# category. Transitions were looked up with
#   python3 tzoracle.py --transitions ZONE YEAR
#
# Usage: testdata/tz/gen_oracle_cases.sh   (from anywhere; needs python3)
# Env:   TZORACLE=path/to/tzoracle.py to override the oracle location.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
oracle="${TZORACLE:-$(cd "$(dirname "$0")/../../.." && pwd)/shared/tools/tzoracle.py}"
out="$here/oracle_cases.txt"

# zone date hh:mm intended-kind  (comments after '#')
cases=$(cat <<'EOF'
# Australia/Sydney (east of UTC, +10/+11). 2026: overlap Apr 5 02:00-02:59
# (03:00 AEDT -> 02:00 AEST), gap Oct 4 02:00-02:59 (02:00 AEST -> 03:00 AEDT).
Australia/Sydney 2026-04-05 01:59 normal
Australia/Sydney 2026-04-05 02:00 overlap
Australia/Sydney 2026-04-05 02:30 overlap
Australia/Sydney 2026-04-05 02:59 overlap
Australia/Sydney 2026-04-05 03:00 normal
Australia/Sydney 2026-10-03 09:00 normal
Australia/Sydney 2026-10-04 01:59 normal
Australia/Sydney 2026-10-04 02:00 gap
Australia/Sydney 2026-10-04 02:30 gap
Australia/Sydney 2026-10-04 02:59 gap
Australia/Sydney 2026-10-04 03:00 normal
Australia/Sydney 2026-10-04 09:00 normal
# 2027: overlap Apr 4, gap Oct 3.
Australia/Sydney 2027-04-04 01:59 normal
Australia/Sydney 2027-04-04 02:30 overlap
Australia/Sydney 2027-04-04 03:00 normal
Australia/Sydney 2027-10-03 01:59 normal
Australia/Sydney 2027-10-03 02:30 gap
Australia/Sydney 2027-10-03 03:00 normal
# America/New_York (west of UTC, -05/-04). 2026: gap Mar 8 02:00-02:59,
# overlap Nov 1 01:00-01:59.
America/New_York 2026-03-08 01:59 normal
America/New_York 2026-03-08 02:00 gap
America/New_York 2026-03-08 02:30 gap
America/New_York 2026-03-08 02:59 gap
America/New_York 2026-03-08 03:00 normal
America/New_York 2026-11-01 00:59 normal
America/New_York 2026-11-01 01:00 overlap
America/New_York 2026-11-01 01:30 overlap
America/New_York 2026-11-01 01:59 overlap
America/New_York 2026-11-01 02:00 normal
America/New_York 2027-03-14 02:30 gap
America/New_York 2027-11-07 01:30 overlap
# Australia/Lord_Howe (30-minute DST, +10:30/+11). 2026: overlap Apr 5
# 01:30-01:59, gap Oct 4 02:00-02:29.
Australia/Lord_Howe 2026-04-05 01:29 normal
Australia/Lord_Howe 2026-04-05 01:30 overlap
Australia/Lord_Howe 2026-04-05 01:45 overlap
Australia/Lord_Howe 2026-04-05 01:59 overlap
Australia/Lord_Howe 2026-04-05 02:00 normal
Australia/Lord_Howe 2026-10-04 01:59 normal
Australia/Lord_Howe 2026-10-04 02:00 gap
Australia/Lord_Howe 2026-10-04 02:15 gap
Australia/Lord_Howe 2026-10-04 02:29 gap
Australia/Lord_Howe 2026-10-04 02:30 normal
Australia/Lord_Howe 2027-04-04 01:45 overlap
Australia/Lord_Howe 2027-10-03 02:15 gap
# Asia/Kathmandu: fixed +05:45, no transitions in 2026/2027.
Asia/Kathmandu 2026-01-01 00:00 normal
Asia/Kathmandu 2026-10-04 02:30 normal
Asia/Kathmandu 2027-03-14 23:59 normal
# Asia/Ho_Chi_Minh: fixed +07, no transitions in 2026/2027.
Asia/Ho_Chi_Minh 2026-03-08 02:30 normal
Asia/Ho_Chi_Minh 2026-10-04 00:00 normal
Asia/Ho_Chi_Minh 2027-12-31 23:59 normal
# America/Havana: both transitions at local midnight. 2026: gap Mar 8
# 00:00-00:59 (-05 -> -04), overlap Nov 1 00:00-00:59 (01:00 CDT -> 00:00 CST).
America/Havana 2026-03-07 23:59 normal
America/Havana 2026-03-08 00:00 gap
America/Havana 2026-03-08 00:30 gap
America/Havana 2026-03-08 00:59 gap
America/Havana 2026-03-08 01:00 normal
America/Havana 2026-10-31 23:59 normal
America/Havana 2026-11-01 00:00 overlap
America/Havana 2026-11-01 00:30 overlap
America/Havana 2026-11-01 00:59 overlap
America/Havana 2026-11-01 01:00 normal
America/Havana 2027-03-14 00:00 gap
America/Havana 2027-11-07 00:00 overlap
# America/Santiago: gap at local midnight (2026-09-06 00:00 -04 -> 01:00 -03);
# overlap 23:00-23:59 on Apr 4 (24:00 -03 -> 23:00 -04).
America/Santiago 2026-04-04 22:59 normal
America/Santiago 2026-04-04 23:00 overlap
America/Santiago 2026-04-04 23:30 overlap
America/Santiago 2026-04-04 23:59 overlap
America/Santiago 2026-04-05 00:00 normal
America/Santiago 2026-09-05 23:59 normal
America/Santiago 2026-09-06 00:00 gap
America/Santiago 2026-09-06 00:30 gap
America/Santiago 2026-09-06 00:59 gap
America/Santiago 2026-09-06 01:00 normal
America/Santiago 2027-04-03 23:30 overlap
America/Santiago 2027-09-05 00:00 gap
# Asia/Beirut: gap at local midnight (2026-03-29 00:00 +02 -> 01:00 +03);
# overlap 23:00-23:59 on Oct 24 (24:00 +03 -> 23:00 +02).
Asia/Beirut 2026-03-28 23:59 normal
Asia/Beirut 2026-03-29 00:00 gap
Asia/Beirut 2026-03-29 00:30 gap
Asia/Beirut 2026-03-29 01:00 normal
Asia/Beirut 2026-10-24 22:59 normal
Asia/Beirut 2026-10-24 23:00 overlap
Asia/Beirut 2026-10-24 23:30 overlap
Asia/Beirut 2026-10-25 00:00 normal
# Europe/London (UTC+0/+1). 2026: gap Mar 29 01:00-01:59, overlap Oct 25
# 01:00-01:59.
Europe/London 2026-03-29 00:59 normal
Europe/London 2026-03-29 01:00 gap
Europe/London 2026-03-29 01:30 gap
Europe/London 2026-03-29 02:00 normal
Europe/London 2026-10-25 00:59 normal
Europe/London 2026-10-25 01:00 overlap
Europe/London 2026-10-25 01:30 overlap
Europe/London 2026-10-25 02:00 normal
Europe/London 2027-03-28 01:30 gap
Europe/London 2027-10-31 01:30 overlap
# Pacific/Apia: the whole local day 2011-12-30 does not exist
# (2011-12-29 24:00 -10 -> 2011-12-31 00:00 +14); moves forward 24h.
Pacific/Apia 2011-12-29 23:59 normal
Pacific/Apia 2011-12-30 00:00 gap
Pacific/Apia 2011-12-30 12:00 gap
Pacific/Apia 2011-12-30 23:59 gap
Pacific/Apia 2011-12-31 00:00 normal
Pacific/Apia 2026-10-04 02:30 normal
# 31 December of a leap year in a rule-based (POSIX TZ footer) year, where
# Go's time.Time.ZoneBounds misreports bounds (golang/go#81583).
Australia/Sydney 2028-12-31 12:00 normal
America/New_York 2028-12-31 23:59 normal
Europe/London 2040-12-31 00:30 normal
# UTC itself.
UTC 2026-10-04 02:30 normal
EOF
)

[[ -f "$oracle" ]] || { echo "oracle not found: $oracle" >&2; exit 1; }

# Verifies a case's category with Python zoneinfo: overlap if fold=0 and
# fold=1 differ and both round-trip, gap if they differ and do not.
classify() {
	python3 - "$@" <<'PY'
import sys, datetime as dt
from zoneinfo import ZoneInfo
zone, date, hhmm = sys.argv[1:4]
z = ZoneInfo(zone)
d = dt.date.fromisoformat(date)
h, m = map(int, hhmm.split(":"))
naive = dt.datetime(d.year, d.month, d.day, h, m)
u0 = naive.replace(tzinfo=z, fold=0).astimezone(dt.timezone.utc)
u1 = naive.replace(tzinfo=z, fold=1).astimezone(dt.timezone.utc)
if u0 == u1:
    print("normal")
elif u0.astimezone(z).replace(tzinfo=None) == naive:
    print("overlap")
else:
    print("gap")
PY
}

tzver=$(python3 -c '
try:
    import tzdata; print("tzdata package " + tzdata.IANA_VERSION)
except ImportError:
    try:
        print("system " + open("/usr/share/zoneinfo/tzdata.zi").readline().split()[-1])
    except OSError:
        print("unknown")
')

tmp="$(mktemp "$here/.oracle_cases.XXXXXX")"
trap 'rm -f "$tmp"' EXIT
{
	echo "# Generated by testdata/tz/gen_oracle_cases.sh; do not edit."
	echo "# Oracle: tzoracle.py (Python zoneinfo, tzdata $tzver). Rule: docs/architecture.md#dst-product-rule."
	echo "# zone date hh:mm utc local  # kind"
	while read -r zone date hhmm kind; do
		[[ -z "$zone" || "$zone" == \#* ]] && continue
		got=$(classify "$zone" "$date" "$hhmm")
		if [[ "$got" != "$kind" ]]; then
			echo "case $zone $date $hhmm: intended $kind, Python zoneinfo says $got" >&2
			exit 1
		fi
		read -r utc local < <(python3 "$oracle" "$zone" "$date" "$hhmm")
		printf '%s %s %s %s %s  # %s\n' "$zone" "$date" "$hhmm" "$utc" "$local" "$kind"
	done <<<"$cases"
} >"$tmp"
chmod 0644 "$tmp"
mv "$tmp" "$out"
trap - EXIT
echo "wrote $(grep -vc '^#' "$out") cases to $out"
