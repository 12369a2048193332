package azure

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"time"
)

// Key layout of the AutomationJob table. TraceStore's doc comment explains the design; the
// helpers here are the only code that builds PartitionKey and RowKey values.
const (
	keyPartitionPrefix      = "key_" // + hash of the SchedulerKey
	buDayPartitionPrefix    = "bu_"  // + business unit + "_" + UTC day
	identityPartitionPrefix = "row_" // + RowGuid

	// rowKeyInstant is StartedOn in a RowKey: fixed width, so lexical order is time order.
	rowKeyInstant = "20060102T150405.000Z"
	// partitionDay is the UTC day in a business-unit partition.
	partitionDay = "20060102"

	// maxPlainSegment bounds an id used verbatim inside a key; longer ids are hashed.
	maxPlainSegment = 128
	// hashedSegmentMarker starts a hashed id. It is outside the plain alphabet, so a hashed
	// id never equals a plain one.
	hashedSegmentMarker = "~"
)

// shortHash is the first 128 bits of SHA-256, in hex (32 characters).
func shortHash(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:16])
}

// plainSegmentByte reports whether b may appear in an id used verbatim inside a key: ASCII
// letters, digits, '-' and '.'. Everything Table Storage forbids in keys (/ \ # ? and
// control characters) is outside this set, and so are '_' (our separator), '~' (the hash
// marker), the single quote (which the SDK and OData filters need escaped) and '%' (which some
// services mishandle in keys).
func plainSegmentByte(b byte) bool {
	return 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9' || b == '-' || b == '.'
}

// keySegment returns id in a form that is safe inside a PartitionKey or RowKey and never
// collides with the form of another id: id itself when it is 1..128 plain bytes (GUIDs,
// "bu-syd"), otherwise "~" + shortHash(id). The real id is stored as a property too, and
// queries filter on it, so even a hash collision could not mix two ids' rows.
func keySegment(id string) string {
	if id != "" && len(id) <= maxPlainSegment {
		plain := true
		for i := 0; i < len(id); i++ {
			if !plainSegmentByte(id[i]) {
				plain = false
				break
			}
		}
		if plain {
			return id
		}
	}
	return hashedSegmentMarker + shortHash(id)
}

// keyPartition is the partition holding every attempt of one SchedulerKey:
// "key_" + shortHash(schedulerKey). Keys can be long and contain ':' and anything a source
// id contains, so they are always hashed.
func keyPartition(schedulerKey string) string {
	return keyPartitionPrefix + shortHash(schedulerKey)
}

// buDayPartition is the partition holding one business unit's attempts that started on
// one UTC day: "bu_" + keySegment(businessUnitID) + "_" + yyyyMMdd.
func buDayPartition(businessUnitID string, day time.Time) string {
	return buDayPartitionPrefix + keySegment(businessUnitID) + "_" + day.UTC().Format(partitionDay)
}

// indexRowKey is the RowKey of an attempt in both index partitions:
// StartedOn (UTC, milliseconds, fixed width) + "_" + keySegment(RowGuid) + "_" +
// attempt (at least 3 digits) + "_v" + version (19 digits). Lexical order is StartedOn
// order, then row, attempt and version; the (RowGuid, Attempt, Version) part makes it
// unique within any partition.
func indexRowKey(started time.Time, rowGuid string, attempt int, version int64) string {
	return started.UTC().Format(rowKeyInstant) + "_" + keySegment(rowGuid) + "_" + fmt.Sprintf("%03d_v%019d", attempt, version)
}

// identityPartition and identityRowKey address the entity that records where the index
// entities of one (RowGuid, Attempt, Version) were written, so a rewrite that changes
// StartedOn, SchedulerKey or BusinessUnitID can remove the old ones.
func identityPartition(rowGuid string) string {
	return identityPartitionPrefix + keySegment(rowGuid)
}

func identityRowKey(attempt int, version int64) string {
	return fmt.Sprintf("%03d_v%019d", attempt, version)
}

// validTableKey reports whether k is acceptable as a PartitionKey or RowKey: non-empty, at
// most 1 KiB in UTF-16 (the keys built here are ASCII, so 512 bytes are a safe bound), and
// free of / \ # ? and control characters.
func validTableKey(k string) bool {
	if k == "" || len(k) > 512 {
		return false
	}
	for _, r := range k {
		switch {
		case r == '/', r == '\\', r == '#', r == '?', r < 0x20, 0x7f <= r && r <= 0x9f:
			return false
		}
	}
	return true
}
