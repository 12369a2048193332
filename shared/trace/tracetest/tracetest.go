package tracetest

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/trace"
)

// Run runs the conformance suite. open is called once per subtest and must return an empty
// store (it registers its own cleanup with t).
func Run(t *testing.T, open func(t *testing.T) trace.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s trace.Store)
	}{
		{"WriteJobRoundTrip", testWriteJobRoundTrip},
		{"WriteJobIdempotent", testWriteJobIdempotent},
		{"WriteJobsBatch", testWriteJobsBatch},
		{"JobsByKeyOrdering", testJobsByKeyOrdering},
		{"JobsByBusinessUnitDay", testJobsByBusinessUnitDay},
		{"JobsByBusinessUnitDayRejects", testJobsByBusinessUnitDayRejects},
		{"BlobRoundTrip", testBlobRoundTrip},
		{"BlobOverwrite", testBlobOverwrite},
		{"BlobConcurrentOverwrite", testBlobConcurrentOverwrite},
		{"BlobNotFound", testBlobNotFound},
		{"BlobInvalidNames", testBlobInvalidNames},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.fn(t, open(t))
		})
	}
}

// base is the instant the suite's records start at (millisecond precision, UTC).
var base = time.Date(2026, 3, 14, 10, 0, 0, 123_000_000, time.UTC)

func record(guid string, attempt int, version int64, started time.Time) trace.JobRecord {
	return trace.JobRecord{
		SchedulerKey:   "reminder:s1:staff:" + guid + ":expiresOn:2026-04-01:30",
		RowGuid:        guid,
		RowID:          42,
		BusinessUnitID: "bu-1",
		AutomationType: "Reminder",
		Attempt:        attempt,
		Version:        version,
		Outcome:        trace.OutcomeCompleted,
		StartedOn:      started,
		FinishedOn:     started.Add(1500 * time.Millisecond),
	}
}

func write(t *testing.T, s trace.Store, recs ...trace.JobRecord) {
	t.Helper()
	for _, r := range recs {
		if err := s.WriteJob(t.Context(), r); err != nil {
			t.Fatalf("WriteJob(%s/%d/v%d): %v", r.RowGuid, r.Attempt, r.Version, err)
		}
	}
}

// sameRecord compares two records, instants by instant (not by location).
func sameRecord(a, b trace.JobRecord) bool {
	if !a.StartedOn.Equal(b.StartedOn) || !a.FinishedOn.Equal(b.FinishedOn) {
		return false
	}
	a.StartedOn, a.FinishedOn, b.StartedOn, b.FinishedOn = time.Time{}, time.Time{}, time.Time{}, time.Time{}
	return a == b
}

func ident(r trace.JobRecord) string {
	return fmt.Sprintf("%s/%d/v%d", r.RowGuid, r.Attempt, r.Version)
}

func idents(rs []trace.JobRecord) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = ident(r)
	}
	return out
}

func testWriteJobRoundTrip(t *testing.T, s trace.Store) {
	sydney := time.FixedZone("AEDT", 11*3600)
	tests := []struct {
		name string
		rec  trace.JobRecord
	}{
		{"every field", trace.JobRecord{
			SchedulerKey: "reminder:k-every", RowGuid: "g-every", RowID: 1<<40 + 7, BusinessUnitID: "bu-1",
			AutomationType: "Reminder", Attempt: 3, Version: 1<<33 + 1, Outcome: trace.OutcomeHeld,
			ReasonCode: "MaxRetries", ErrorCode: "Internal", Message: "smtp: 451 try later; ünïcode ✓",
			StartedOn: base, FinishedOn: base.Add(time.Second),
			TraceBlobName: trace.BlobName("g-every", 3, 1<<33+1),
		}},
		{"non-UTC instants", trace.JobRecord{
			SchedulerKey: "reminder:k-zone", RowGuid: "g-zone", BusinessUnitID: "bu-1", AutomationType: "Reminder",
			Attempt: 1, Version: 1, Outcome: trace.OutcomeDeactivated, ReasonCode: "SourceNoLongerValid",
			StartedOn: base.In(sydney), FinishedOn: base.Add(time.Minute).In(sydney),
		}},
		{"zero FinishedOn and empty strings", trace.JobRecord{
			SchedulerKey: "reminder:k-zero", RowGuid: "g-zero", BusinessUnitID: "bu-1", AutomationType: "Reminder",
			Attempt: 1, Version: 2, Outcome: trace.OutcomeLeaseLost, StartedOn: base,
		}},
	}
	for _, tt := range tests {
		write(t, s, tt.rec)
		got, err := s.JobsByKey(t.Context(), tt.rec.SchedulerKey)
		if err != nil {
			t.Fatalf("%s: JobsByKey: %v", tt.name, err)
		}
		if len(got) != 1 {
			t.Fatalf("%s: JobsByKey returned %d rows, want 1", tt.name, len(got))
		}
		if !sameRecord(got[0], tt.rec) {
			t.Errorf("%s: round trip\n got: %+v\nwant: %+v", tt.name, got[0], tt.rec)
		}
		if got[0].StartedOn.Location() != time.UTC || (!got[0].FinishedOn.IsZero() && got[0].FinishedOn.Location() != time.UTC) {
			t.Errorf("%s: instants not in UTC: %v, %v", tt.name, got[0].StartedOn, got[0].FinishedOn)
		}
		if tt.rec.FinishedOn.IsZero() && !got[0].FinishedOn.IsZero() {
			t.Errorf("%s: zero FinishedOn came back as %v", tt.name, got[0].FinishedOn)
		}
	}
	if got, err := s.JobsByKey(t.Context(), "reminder:unknown"); err != nil || len(got) != 0 {
		t.Errorf("JobsByKey(unknown) = %v, %v; want no rows", got, err)
	}
}

func testWriteJobIdempotent(t *testing.T, s trace.Store) {
	first := record("g1", 1, 5, base)
	first.Outcome, first.ErrorCode, first.Message = trace.OutcomeRetrying, "Timeout", "first write"
	again := first
	again.Outcome, again.ErrorCode, again.Message = trace.OutcomeCompleted, "", "second write"
	again.FinishedOn = first.FinishedOn.Add(time.Minute)
	again.TraceBlobName = trace.BlobName("g1", 1, 5)
	write(t, s, first, again, again)

	got, err := s.JobsByKey(t.Context(), first.SchedulerKey)
	if err != nil {
		t.Fatalf("JobsByKey: %v", err)
	}
	if len(got) != 1 || !sameRecord(got[0], again) {
		t.Fatalf("after rewriting the same (RowGuid, Attempt, Version): %+v, want only %+v", got, again)
	}
	day, err := s.JobsByBusinessUnitDay(t.Context(), "bu-1", "2026-03-14", 100)
	if err != nil || len(day) != 1 {
		t.Errorf("JobsByBusinessUnitDay after overwrite = %d rows, %v; want 1", len(day), err)
	}

	// Another Version (a re-claim after a lost lease) or another Attempt is another row.
	write(t, s, record("g1", 1, 6, base.Add(time.Minute)), record("g1", 2, 7, base.Add(2*time.Minute)))
	got, err = s.JobsByKey(t.Context(), first.SchedulerKey)
	if err != nil {
		t.Fatalf("JobsByKey: %v", err)
	}
	if want := []string{"g1/1/v5", "g1/1/v6", "g1/2/v7"}; !slices.Equal(idents(got), want) {
		t.Errorf("rows %v, want %v", idents(got), want)
	}
}

// testWriteJobsBatch: trace.WriteJobs (one batch when the store implements BatchWriter)
// stores exactly what one-by-one writes would, across keys and business units, and is
// idempotent when the same batch is written again.
func testWriteJobsBatch(t *testing.T, s trace.Store) {
	var recs []trace.JobRecord
	for i := 0; i < 30; i++ {
		r := record(fmt.Sprintf("b%02d", i), 1, 2, base.Add(time.Duration(i)*time.Minute))
		if i%3 == 0 {
			r.BusinessUnitID = "bu-2"
		}
		recs = append(recs, r)
	}
	for round := 0; round < 2; round++ {
		if err := trace.WriteJobs(t.Context(), s, recs); err != nil {
			t.Fatalf("WriteJobs round %d: %v", round, err)
		}
	}
	for _, r := range []trace.JobRecord{recs[0], recs[29]} {
		got, err := s.JobsByKey(t.Context(), r.SchedulerKey)
		if err != nil || len(got) != 1 || got[0].RowGuid != r.RowGuid || got[0].BusinessUnitID != r.BusinessUnitID {
			t.Fatalf("JobsByKey(%s) = %+v, %v", r.SchedulerKey, got, err)
		}
	}
	bu2, err := s.JobsByBusinessUnitDay(t.Context(), "bu-2", base.Format("2006-01-02"), 100)
	if err != nil || len(bu2) != 10 {
		t.Fatalf("bu-2 rows: %d, %v", len(bu2), err)
	}
}

func testJobsByKeyOrdering(t *testing.T, s trace.Store) {
	key := "report-subscription:r1:scheduled:2026-03-01T00:00:00Z"
	mk := func(guid string, attempt int, version int64, started time.Time) trace.JobRecord {
		r := record(guid, attempt, version, started)
		r.SchedulerKey = key
		return r
	}
	// Written out of order; one other key interleaved.
	write(t, s,
		mk("r1", 3, 9, base.Add(2*time.Hour)),
		mk("r1", 1, 3, base),
		record("other", 1, 1, base.Add(30*time.Minute)),
		mk("r1", 2, 6, base.Add(time.Hour)),
		mk("r1", 4, 12, base.Add(24*time.Hour)),
	)
	got, err := s.JobsByKey(t.Context(), key)
	if err != nil {
		t.Fatalf("JobsByKey: %v", err)
	}
	if want := []string{"r1/1/v3", "r1/2/v6", "r1/3/v9", "r1/4/v12"}; !slices.Equal(idents(got), want) {
		t.Errorf("JobsByKey = %v, want %v (oldest first, every attempt, no other key)", idents(got), want)
	}
	for i := 1; i < len(got); i++ {
		if got[i].StartedOn.Before(got[i-1].StartedOn) {
			t.Errorf("row %d started %v before row %d (%v)", i, got[i].StartedOn, i-1, got[i-1].StartedOn)
		}
	}
}

func testJobsByBusinessUnitDay(t *testing.T, s trace.Store) {
	day := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	sydney := time.FixedZone("AEDT", 11*3600)
	newYork := time.FixedZone("EDT", -4*3600)
	mk := func(guid, bu string, started time.Time) trace.JobRecord {
		r := record(guid, 1, 1, started)
		r.BusinessUnitID = bu
		return r
	}
	write(t, s,
		mk("late", "bu-1", day.Add(23*time.Hour+59*time.Minute+59*time.Second+999*time.Millisecond)),
		mk("first", "bu-1", day),
		mk("noon", "bu-1", day.Add(12*time.Hour)),
		// 2026-03-14 08:00 in Sydney is 2026-03-13 21:00 UTC: the previous UTC day.
		mk("sydney-prev", "bu-1", time.Date(2026, 3, 14, 8, 0, 0, 0, sydney)),
		// 2026-03-13 21:00 in New York is 2026-03-14 01:00 UTC: this UTC day.
		mk("newyork-this", "bu-1", time.Date(2026, 3, 13, 21, 0, 0, 0, newYork)),
		mk("next-day", "bu-1", day.Add(24*time.Hour)),
		mk("prev-day", "bu-1", day.Add(-time.Millisecond)),
		mk("other-bu", "bu-2", day.Add(6*time.Hour)),
		mk("prefix-bu", "bu-10", day.Add(6*time.Hour)),
	)
	tests := []struct {
		name  string
		bu    string
		day   string
		limit int
		want  []string
	}{
		{"whole day oldest first", "bu-1", "2026-03-14", 100, []string{"first/1/v1", "newyork-this/1/v1", "noon/1/v1", "late/1/v1"}},
		{"limit keeps the oldest", "bu-1", "2026-03-14", 2, []string{"first/1/v1", "newyork-this/1/v1"}},
		{"limit one", "bu-1", "2026-03-14", 1, []string{"first/1/v1"}},
		{"previous UTC day", "bu-1", "2026-03-13", 100, []string{"sydney-prev/1/v1", "prev-day/1/v1"}},
		{"next UTC day", "bu-1", "2026-03-15", 100, []string{"next-day/1/v1"}},
		{"other business unit", "bu-2", "2026-03-14", 100, []string{"other-bu/1/v1"}},
		{"unknown business unit", "bu-3", "2026-03-14", 100, nil},
		{"empty day", "bu-1", "2026-03-16", 100, nil},
	}
	for _, tt := range tests {
		got, err := s.JobsByBusinessUnitDay(t.Context(), tt.bu, tt.day, tt.limit)
		if err != nil {
			t.Errorf("%s: JobsByBusinessUnitDay: %v", tt.name, err)
			continue
		}
		if !slices.Equal(idents(got), tt.want) {
			t.Errorf("%s: JobsByBusinessUnitDay(%s, %s, %d) = %v, want %v", tt.name, tt.bu, tt.day, tt.limit, idents(got), tt.want)
		}
		for _, r := range got {
			if r.BusinessUnitID != tt.bu {
				t.Errorf("%s: row %s of business unit %s", tt.name, ident(r), r.BusinessUnitID)
			}
		}
	}
}

func testJobsByBusinessUnitDayRejects(t *testing.T, s trace.Store) {
	write(t, s, record("g", 1, 1, base))
	tests := []struct {
		name  string
		day   string
		limit int
	}{
		{"empty day", "", 10},
		{"not a date", "yesterday", 10},
		{"slashes", "2026/03/14", 10},
		{"no zero padding", "2026-3-14", 10},
		{"impossible date", "2026-02-30", 10},
		{"month 13", "2026-13-01", 10},
		{"with time", "2026-03-14T00:00:00Z", 10},
		{"trailing space", "2026-03-14 ", 10},
		{"zero limit", "2026-03-14", 0},
		{"negative limit", "2026-03-14", -5},
	}
	for _, tt := range tests {
		got, err := s.JobsByBusinessUnitDay(t.Context(), "bu-1", tt.day, tt.limit)
		if err == nil {
			t.Errorf("%s: JobsByBusinessUnitDay(%q, %d) = %d rows, want an error", tt.name, tt.day, tt.limit, len(got))
		}
	}
}

func testBlobRoundTrip(t *testing.T, s trace.Store) {
	big := bytes.Repeat([]byte("0123456789abcdef"), 64*1024) // 1 MiB
	tests := []struct {
		name string
		blob string
		data []byte
	}{
		{"BlobName", trace.BlobName("3f2a9c1e-0000-4000-8000-000000000001", 2, 17), []byte(`{"error":"smtp 451"}`)},
		{"flat name", "diag.json", []byte("flat")},
		{"deep name", "reports/bu-1/2026/03/run.csv", []byte("a,b\n1,2\n")},
		{"binary", "bin/all-bytes", func() []byte {
			b := make([]byte, 256)
			for i := range b {
				b[i] = byte(i)
			}
			return b
		}()},
		{"empty", "empty.json", []byte{}},
		{"large", "large.bin", big},
	}
	for _, tt := range tests {
		in := bytes.Clone(tt.data)
		if err := s.PutBlob(t.Context(), tt.blob, in); err != nil {
			t.Fatalf("%s: PutBlob(%q): %v", tt.name, tt.blob, err)
		}
		for i := range in { // the store must not keep the caller's slice
			in[i] = 'X'
		}
		got, err := s.GetBlob(t.Context(), tt.blob)
		if err != nil {
			t.Fatalf("%s: GetBlob(%q): %v", tt.name, tt.blob, err)
		}
		if !bytes.Equal(got, tt.data) {
			t.Errorf("%s: GetBlob returned %d bytes, want the %d written", tt.name, len(got), len(tt.data))
		}
	}
}

func testBlobOverwrite(t *testing.T, s trace.Store) {
	name := trace.BlobName("g-over", 1, 1)
	for _, data := range []string{"a long first version of the diagnostics", "short", ""} {
		if err := s.PutBlob(t.Context(), name, []byte(data)); err != nil {
			t.Fatalf("PutBlob: %v", err)
		}
		got, err := s.GetBlob(t.Context(), name)
		if err != nil {
			t.Fatalf("GetBlob: %v", err)
		}
		if string(got) != data {
			t.Errorf("after overwrite GetBlob = %q, want %q", got, data)
		}
	}
	// A sibling is independent.
	sibling := trace.BlobName("g-over", 2, 1)
	if err := s.PutBlob(t.Context(), sibling, []byte("sibling")); err != nil {
		t.Fatalf("PutBlob: %v", err)
	}
	if got, err := s.GetBlob(t.Context(), name); err != nil || string(got) != "" {
		t.Errorf("writing a sibling changed %s to %q, %v", name, got, err)
	}
}

// testBlobConcurrentOverwrite writes one name from many goroutines (retries of one
// attempt): whatever wins, the blob is one whole write, never a mix.
func testBlobConcurrentOverwrite(t *testing.T, s trace.Store) {
	name := trace.BlobName("g-race", 1, 1)
	const writers = 8
	payload := func(i int) []byte { return bytes.Repeat([]byte{byte('a' + i)}, 64*1024-i*1000) }
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for i := range writers {
		wg.Go(func() { errs[i] = s.PutBlob(t.Context(), name, payload(i)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent PutBlob %d: %v", i, err)
		}
	}
	got, err := s.GetBlob(t.Context(), name)
	if err != nil {
		t.Fatalf("GetBlob: %v", err)
	}
	for i := range writers {
		if bytes.Equal(got, payload(i)) {
			return
		}
	}
	t.Errorf("blob after concurrent writes is %d bytes starting %q: not any one writer's data", len(got), got[:min(len(got), 8)])
}

func testBlobNotFound(t *testing.T, s trace.Store) {
	existing := trace.BlobName("g-known", 1, 1)
	if err := s.PutBlob(t.Context(), existing, []byte("x")); err != nil {
		t.Fatalf("PutBlob: %v", err)
	}
	tests := []struct {
		name string
		blob string
	}{
		{"never written", trace.BlobName("g-unknown", 1, 1)},
		{"other attempt of a known row", trace.BlobName("g-known", 2, 1)},
		{"prefix of an existing name", "scheduler/g-known"},
		{"top-level prefix", "scheduler"},
		{"existing name plus suffix", existing + ".bak"},
	}
	for _, tt := range tests {
		got, err := s.GetBlob(t.Context(), tt.blob)
		if !errors.Is(err, trace.ErrBlobNotFound) {
			t.Errorf("%s: GetBlob(%q) = %q, %v; want trace.ErrBlobNotFound", tt.name, tt.blob, got, err)
		}
	}
}

func testBlobInvalidNames(t *testing.T, s trace.Store) {
	tests := []string{
		"",
		".",
		"..",
		"../x",
		"/abs",
		"/",
		"a/../../b",
		"a/../b",
		"a/..",
		"./a",
		"a//b",
		"a/",
	}
	for _, name := range tests {
		if err := s.PutBlob(t.Context(), name, []byte("escape")); err == nil {
			t.Errorf("PutBlob(%q) = nil, want an error", name)
		}
		if _, err := s.GetBlob(t.Context(), name); err == nil || errors.Is(err, trace.ErrBlobNotFound) {
			t.Errorf("GetBlob(%q) = %v, want an invalid-name error (not ErrBlobNotFound)", name, err)
		}
	}
}
