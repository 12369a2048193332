package azure

import (
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// These tests need no Azurite: they pin the PartitionKey/RowKey layout documented on
// TraceStore.

var hashedSegment = regexp.MustCompile(`^~[0-9a-f]{32}$`)

func TestKeySegment(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		id     string
		plain  bool // used verbatim; otherwise hashed
		reason string
	}{
		{"guid", "3f2a9c1e-0000-4000-8000-000000000001", true, ""},
		{"upper-case guid", "3F2A9C1E-0000-4000-8000-000000000001", true, ""},
		{"bu id", "bu-syd", true, ""},
		{"dots", "bu.syd.1", true, ""},
		{"128 bytes", strings.Repeat("a", 128), true, ""},
		{"129 bytes", strings.Repeat("a", 129), false, "too long"},
		{"empty", "", false, "empty"},
		{"slash", "bu/1", false, "/ is forbidden in keys"},
		{"backslash", `bu\1`, false, `\ is forbidden in keys`},
		{"hash", "bu#1", false, "# is forbidden in keys"},
		{"question mark", "bu?1", false, "? is forbidden in keys"},
		{"tab", "bu\t1", false, "control character"},
		{"DEL", "bu\x7f1", false, "control character"},
		{"C1 control", "bu\u00851", false, "control character"},
		{"underscore", "bu_1", false, "our separator"},
		{"tilde", "~0123456789abcdef0123456789abcdef", false, "the hash marker: must not pass for a hash"},
		{"quote", "o'brien", false, "OData/SDK quoting"},
		{"percent", "bu%201", false, "percent-decoding surprises"},
		{"space", "bu 1", false, "not in the plain alphabet"},
		{"unicode", "bü-1", false, "not ASCII"},
	}
	for _, tt := range tests {
		got := keySegment(tt.id)
		if tt.plain && got != tt.id {
			t.Errorf("%s: keySegment(%q) = %q, want it verbatim", tt.name, tt.id, got)
		}
		if !tt.plain && !hashedSegment.MatchString(got) {
			t.Errorf("%s: keySegment(%q) = %q, want ~ + 32 hex digits (%s)", tt.name, tt.id, got, tt.reason)
		}
		if !validTableKey(got) {
			t.Errorf("%s: keySegment(%q) = %q is not a valid table key", tt.name, tt.id, got)
		}
		if again := keySegment(tt.id); again != got {
			t.Errorf("%s: keySegment not stable: %q then %q", tt.name, got, again)
		}
	}
	// Distinct ids give distinct segments, hashed or not.
	seen := map[string]string{}
	for _, tt := range tests {
		got := keySegment(tt.id)
		if prev, dup := seen[got]; dup {
			t.Errorf("keySegment(%q) = keySegment(%q) = %q", tt.id, prev, got)
		}
		seen[got] = tt.id
	}
}

func TestKeyPartition(t *testing.T) {
	t.Parallel()
	keys := []string{
		"reminder:0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f:PoliceVetting:3b2d:expiresOn:2026-10-31:30",
		"reminder:0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f:PoliceVetting:3b2d:expiresOn:2026-10-31:7",
		"report-subscription:r1:scheduled:2026-03-01T00:00:00Z",
		"key/with#every?forbidden\\char\x00",
		"",
		strings.Repeat("long:", 400),
	}
	pattern := regexp.MustCompile(`^key_[0-9a-f]{32}$`)
	seen := map[string]string{}
	for _, k := range keys {
		p := keyPartition(k)
		if !pattern.MatchString(p) || !validTableKey(p) {
			t.Errorf("keyPartition(%q) = %q, want key_ + 32 hex digits", k, p)
		}
		if p != keyPartition(k) {
			t.Errorf("keyPartition(%q) not stable", k)
		}
		if prev, dup := seen[p]; dup {
			t.Errorf("keyPartition(%q) = keyPartition(%q)", k, prev)
		}
		seen[p] = k
	}
	// The documented value: sha256("reminder:k"), first 16 bytes in hex.
	if got, want := keyPartition("reminder:k"), "key_"+shortHash("reminder:k"); got != want || len(got) != 36 {
		t.Errorf("keyPartition = %q, want %q", got, want)
	}
}

func TestBUDayPartition(t *testing.T) {
	t.Parallel()
	sydney := time.FixedZone("AEDT", 11*3600)
	tests := []struct {
		name    string
		bu      string
		started time.Time
		want    string
	}{
		{"utc", "bu-syd", time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC), "bu_bu-syd_20260314"},
		{"first millisecond", "bu-1", time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC), "bu_bu-1_20260314"},
		{"last millisecond", "bu-1", time.Date(2026, 3, 14, 23, 59, 59, 999_000_000, time.UTC), "bu_bu-1_20260314"},
		// 08:00 in Sydney on the 14th is 21:00 UTC on the 13th: the UTC day decides.
		{"non-UTC instant", "bu-1", time.Date(2026, 3, 14, 8, 0, 0, 0, sydney), "bu_bu-1_20260313"},
		{"hashed bu", "bu/1", time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC), "bu_~" + shortHash("bu/1") + "_20260314"},
	}
	for _, tt := range tests {
		got := buDayPartition(tt.bu, tt.started)
		if got != tt.want {
			t.Errorf("%s: buDayPartition(%q, %v) = %q, want %q", tt.name, tt.bu, tt.started, got, tt.want)
		}
		if !validTableKey(got) {
			t.Errorf("%s: %q is not a valid table key", tt.name, got)
		}
	}
	// A business unit whose id looks like another's id plus a day stays apart.
	day := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	if buDayPartition("bu-1", day) == buDayPartition("bu-1_20260314", day.AddDate(0, 0, -1)) {
		t.Errorf("business-unit partitions collide")
	}
}

func TestIndexRowKey(t *testing.T) {
	t.Parallel()
	base := time.Date(2026, 3, 14, 10, 0, 0, 123_456_789, time.UTC)
	tests := []struct {
		name    string
		started time.Time
		guid    string
		attempt int
		version int64
		want    string
	}{
		{"documented shape", base, "g-every", 3, 5, "20260314T100000.123Z_g-every_003_v0000000000000000005"},
		{"non-UTC instant", base.In(time.FixedZone("X", -4*3600)), "g", 1, 1, "20260314T100000.123Z_g_001_v0000000000000000001"},
		{"large version", base, "g", 12, 1<<62 + 3, "20260314T100000.123Z_g_012_v4611686018427387907"},
		{"hashed guid", base, "row/1", 1, 1, "20260314T100000.123Z_~" + shortHash("row/1") + "_001_v0000000000000000001"},
	}
	for _, tt := range tests {
		got := indexRowKey(tt.started, tt.guid, tt.attempt, tt.version)
		if got != tt.want {
			t.Errorf("%s: indexRowKey = %q, want %q", tt.name, got, tt.want)
		}
		if !validTableKey(got) {
			t.Errorf("%s: %q is not a valid table key", tt.name, got)
		}
	}
}

// TestIndexRowKeyOrder checks the property JobsByBusinessUnitDay relies on: RowKey order is
// StartedOn order, then row, attempt and version.
func TestIndexRowKeyOrder(t *testing.T) {
	t.Parallel()
	type rec struct {
		started time.Time
		guid    string
		attempt int
		version int64
	}
	t0 := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	ordered := []rec{ // already in the wanted order
		{t0, "a", 1, 1},
		{t0, "a", 1, 2},
		{t0, "a", 1, 10}, // 10 after 2: versions are zero-padded
		{t0, "a", 2, 1},
		{t0, "a", 10, 1},
		{t0, "b", 1, 1},
		{t0.Add(time.Millisecond), "a", 1, 1},
		{t0.Add(time.Second), "a", 1, 1},
		{t0.Add(10 * time.Second), "a", 1, 1},
		{t0.Add(time.Hour), "a", 1, 1},
		{t0.Add(10 * time.Hour), "a", 1, 1},
		{t0.Add(23*time.Hour + 59*time.Minute + 59*time.Second + 999*time.Millisecond), "a", 1, 1},
		{t0.AddDate(0, 0, 1), "a", 1, 1},
		{t0.AddDate(0, 1, 0), "a", 1, 1},
		{t0.AddDate(1, 0, 0), "a", 1, 1},
	}
	var keys []string
	for _, r := range ordered {
		keys = append(keys, indexRowKey(r.started, r.guid, r.attempt, r.version))
	}
	if !slices.IsSorted(keys) {
		t.Errorf("row keys not in StartedOn/row/attempt/version order:\n%s", strings.Join(keys, "\n"))
	}
	if len(slices.Compact(slices.Clone(keys))) != len(keys) {
		t.Errorf("row keys not unique:\n%s", strings.Join(keys, "\n"))
	}
}

func TestIdentityKeys(t *testing.T) {
	t.Parallel()
	if got, want := identityPartition("3f2a9c1e-0000-4000-8000-000000000001"), "row_3f2a9c1e-0000-4000-8000-000000000001"; got != want {
		t.Errorf("identityPartition = %q, want %q", got, want)
	}
	if got := identityPartition("row#1"); !validTableKey(got) || !strings.HasPrefix(got, "row_~") {
		t.Errorf("identityPartition(row#1) = %q", got)
	}
	if got, want := identityRowKey(2, 17), "002_v0000000000000000017"; got != want {
		t.Errorf("identityRowKey = %q, want %q", got, want)
	}
}

func TestValidTableKey(t *testing.T) {
	t.Parallel()
	for _, k := range []string{"key_0123", "bu_bu-1_20260314", "20260314T100000.123Z_g_001_v1", "~x", "ünï"} {
		if !validTableKey(k) {
			t.Errorf("validTableKey(%q) = false", k)
		}
	}
	for _, k := range []string{"", "a/b", `a\b`, "a#b", "a?b", "a\nb", "a\x00b", "a\x7fb", "a\u0090b", strings.Repeat("k", 513)} {
		if validTableKey(k) {
			t.Errorf("validTableKey(%q) = true", k)
		}
	}
}
