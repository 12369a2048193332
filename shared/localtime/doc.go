// Package localtime holds the platform's notion of local calendar time:
// zone-less calendar dates ([Date]), local wall-clock times of day
// ([TimeOfDay]), IANA time zones loaded from an embedded tzdata ([LoadZone]),
// and the DST product rule ([Resolve], [ResolveDetail]) that turns a local
// date and wall time in a zone into a single UTC instant.
//
// # DST product rule
//
// Source: docs/architecture.md#dst-product-rule.
//
//   - A local time that does not exist (spring-forward gap) moves forward by
//     the gap's length: 02:30 on Sydney's DST start day becomes 03:30 AEDT,
//     and 12:00 on Pacific/Apia's skipped day 2011-12-30 becomes 12:00 on
//     2011-12-31.
//   - A local time that occurs twice (fall-back overlap) takes the earlier
//     instant.
//   - Day offsets are calendar days on local dates ([Date.AddDays]), never
//     multiples of 24 hours.
//
// The rule is implemented explicitly from the zone's UTC offsets around the
// wall time (see [ResolveDetail]); it does not depend on what [time.Date]
// happens to do for non-existent or ambiguous wall times, which the time
// package leaves unspecified. [time.Time.ZoneBounds] is used only as a hint
// for where transitions are, because its bounds are approximate for years
// served by a zone's POSIX TZ rule and wrong on 31 December of leap years
// (golang/go#81583).
//
// # Why the tzdata is embedded
//
// Results must not depend on the host's zoneinfo. Two hosts with different
// /usr/share/zoneinfo (or a ZONEINFO variable, or a container without tzdata)
// would otherwise compute different UTC instants for the same local intent.
// This package therefore embeds a pinned copy of Go's zoneinfo.zip
// (IANA release [TZDataVersion]) and [LoadZone] reads only that copy; it never
// consults host files, the ZONEINFO variable, or the time/tzdata fallback.
//
// Because a tzdata release can change future offsets (governments change DST
// rules), callers must store the local intent — zone id, local [Date] and
// [TimeOfDay] — alongside any computed UTC instant, and record
// [TZDataVersion] with it. When [TZDataVersion] changes (a new zoneinfo.zip is
// embedded), pending rows are recomputed from the stored local intent; the
// stored UTC instant is a cache, not the source of truth.
//
// To update the tzdata: copy $(go env GOROOT)/lib/time/zoneinfo.zip from the
// new Go release into this directory, bump [TZDataVersion] and the checksum in
// zone_test.go, and regenerate testdata/tz/oracle_cases.txt with
// testdata/tz/gen_oracle_cases.sh.
//
// Nothing in this package reads the current time; callers pass instants in.
package localtime
