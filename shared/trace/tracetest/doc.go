// Package tracetest is the one conformance suite for trace.Store. The local store
// (trace/localtrace) and the Azure Table/Blob store (run against Azurite) both pass it:
//
//	func TestConformance(t *testing.T) {
//		tracetest.Run(t, func(t *testing.T) trace.Store { return openStore(t, t.TempDir()) })
//	}
//
// The contract checked here:
//   - WriteJob is idempotent per (RowGuid, Attempt, Version): a second write overwrites;
//     a different Attempt or Version is another row.
//   - JobsByKey returns every attempt of one SchedulerKey, oldest first, and nothing else.
//   - JobsByBusinessUnitDay partitions by the UTC day of StartedOn, excludes other business
//     units, honours limit (oldest first) and rejects a malformed day or a limit below 1.
//   - PutBlob/GetBlob round-trip bytes exactly; PutBlob overwrites; GetBlob of an unknown
//     name is trace.ErrBlobNotFound; names that could escape the container are rejected.
//   - Instants come back in UTC, equal to what was written at millisecond precision.
package tracetest
