package azure

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/data/aztables"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"

	"github.com/automation-platform/automation/shared/trace"
	"github.com/automation-platform/automation/shared/trace/tracetest"
)

// azuriteConnection returns the storage connection string of a running Azurite (or any
// storage account) from the environment, or skips the test with the reason.
func azuriteConnection(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"AZURITE_CONNECTION", "AUTOMATION_STORAGE_CONNECTION"} {
		if v := os.Getenv(name); v != "" {
			if err := tableEndpointReachable(v); err != nil {
				// Configured but down is a failure, not a skip; fail fast instead of after
				// the SDK's retries.
				t.Fatalf("%s is set but %v: is Azurite running? (scripts/azurite.sh start)", name, err)
			}
			return v
		}
	}
	t.Skip("Azurite not running: start it with scripts/azurite.sh start (make test and make test/azure do), " +
		"which prints AZURITE_CONNECTION=...; export it (or AUTOMATION_STORAGE_CONNECTION) and rerun")
	return ""
}

// tableEndpointReachable dials the TableEndpoint of a connection string once per test
// binary (nil when the string has none, e.g. a real account addressed by AccountName).
var tableEndpointReachable = func() func(conn string) error {
	var mu sync.Mutex
	checked := map[string]error{}
	return func(conn string) error {
		mu.Lock()
		defer mu.Unlock()
		if err, ok := checked[conn]; ok {
			return err
		}
		var err error
		for part := range strings.SplitSeq(conn, ";") {
			if v, ok := strings.CutPrefix(part, "TableEndpoint="); ok {
				u, perr := url.Parse(v)
				if perr != nil {
					err = fmt.Errorf("TableEndpoint %q does not parse: %w", v, perr)
					break
				}
				c, derr := net.DialTimeout("tcp", u.Host, 3*time.Second)
				if derr != nil {
					err = fmt.Errorf("its table endpoint %s does not answer: %w", u.Host, derr)
					break
				}
				c.Close()
			}
		}
		checked[conn] = err
		return err
	}
}()

// uniqueNames returns a table and a container name no other test uses, so tests (and
// concurrent runs against one Azurite) never share data.
func uniqueNames(t *testing.T) (table, container string) {
	t.Helper()
	b := make([]byte, 10)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	suffix := hex.EncodeToString(b)
	return "trace" + suffix, "trace-" + suffix
}

// openAzurite opens a TraceStore on a fresh table and container, dropped at cleanup.
func openAzurite(t *testing.T, conn string) *TraceStore {
	t.Helper()
	table, container := uniqueNames(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	s, err := NewTraceStore(ctx, TraceOptions{ConnectionString: conn, Table: table, Container: container})
	if err != nil {
		t.Fatalf("NewTraceStore: %v", err)
	}
	t.Cleanup(func() {
		// t.Context() is already cancelled when cleanups run.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := s.tables.DeleteTable(ctx, table, nil); err != nil {
			t.Errorf("drop table %s: %v", table, err)
		}
		if _, err := s.container.Delete(ctx, nil); err != nil {
			t.Errorf("drop container %s: %v", container, err)
		}
	})
	return s
}

// TestTraceStoreConformance runs the shared trace suite against Azurite.
func TestTraceStoreConformance(t *testing.T) {
	t.Parallel()
	conn := azuriteConnection(t)
	tracetest.Run(t, func(t *testing.T) trace.Store { return openAzurite(t, conn) })
}

// viaWriteJobs routes WriteJob through WriteJobs, so the suite covers the batch path too.
type viaWriteJobs struct{ *TraceStore }

func (s viaWriteJobs) WriteJob(ctx context.Context, r trace.JobRecord) error {
	return s.WriteJobs(ctx, []trace.JobRecord{r})
}

// TestTraceStoreConformanceBatch runs the shared suite with every row written by WriteJobs.
func TestTraceStoreConformanceBatch(t *testing.T) {
	t.Parallel()
	conn := azuriteConnection(t)
	tracetest.Run(t, func(t *testing.T) trace.Store { return viaWriteJobs{openAzurite(t, conn)} })
}

func mustWrite(t *testing.T, s *TraceStore, recs ...trace.JobRecord) {
	t.Helper()
	for _, r := range recs {
		if err := s.WriteJob(t.Context(), r); err != nil {
			t.Fatalf("WriteJob(%s/%d/v%d): %v", r.RowGuid, r.Attempt, r.Version, err)
		}
	}
}

// rowsOf(t)(query) describes a query's rows, failing t on a query error.
func rowsOf(t *testing.T) func([]trace.JobRecord, error) []string {
	return func(rs []trace.JobRecord, err error) []string {
		t.Helper()
		if err != nil {
			t.Fatalf("query: %v", err)
		}
		out := []string{}
		for _, r := range rs {
			out = append(out, r.RowGuid+"@"+r.StartedOn.Format(time.RFC3339Nano)+"/"+r.BusinessUnitID+"/"+r.SchedulerKey)
		}
		return out
	}
}

// TestTraceStoreRewriteMovesIndexes checks what the suite cannot see: rewriting one
// (RowGuid, Attempt, Version) with another StartedOn, business unit or key leaves no row
// behind in the partitions the first write used.
func TestTraceStoreRewriteMovesIndexes(t *testing.T) {
	t.Parallel()
	s := openAzurite(t, azuriteConnection(t))
	day1 := time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
	day2 := day1.AddDate(0, 0, 1)
	first := trace.JobRecord{SchedulerKey: "reminder:k1", RowGuid: "g", BusinessUnitID: "bu-1", AutomationType: "Reminder",
		Attempt: 1, Version: 4, Outcome: trace.OutcomeRetrying, StartedOn: day1}
	moved := first
	moved.SchedulerKey, moved.BusinessUnitID, moved.StartedOn, moved.Outcome = "reminder:k2", "bu-2", day2, trace.OutcomeCompleted
	mustWrite(t, s, first, moved, moved)

	ctx := t.Context()
	if got := rowsOf(t)(s.JobsByKey(ctx, "reminder:k1")); len(got) != 0 {
		t.Errorf("old key still lists %v", got)
	}
	if got := rowsOf(t)(s.JobsByBusinessUnitDay(ctx, "bu-1", "2026-03-14", 10)); len(got) != 0 {
		t.Errorf("old business-unit day still lists %v", got)
	}
	got, err := s.JobsByKey(ctx, "reminder:k2")
	if err != nil || len(got) != 1 || got[0].Outcome != trace.OutcomeCompleted || !got[0].StartedOn.Equal(day2) {
		t.Errorf("new key lists %+v, %v; want the moved row once", got, err)
	}
	if got := rowsOf(t)(s.JobsByBusinessUnitDay(ctx, "bu-2", "2026-03-15", 10)); len(got) != 1 {
		t.Errorf("new business-unit day lists %v, want one row", got)
	}

	// Changing only StartedOn within the same day and key: still one row each.
	again := moved
	again.StartedOn = day2.Add(time.Hour)
	mustWrite(t, s, again)
	if got := rowsOf(t)(s.JobsByKey(ctx, "reminder:k2")); len(got) != 1 {
		t.Errorf("after moving StartedOn, key lists %v, want one row", got)
	}
	if got := rowsOf(t)(s.JobsByBusinessUnitDay(ctx, "bu-2", "2026-03-15", 10)); len(got) != 1 {
		t.Errorf("after moving StartedOn, day lists %v, want one row", got)
	}
}

// TestTraceStoreConcurrentRewrites writes one attempt from many goroutines with different
// StartedOn values: whichever wins, exactly one row remains in each index.
func TestTraceStoreConcurrentRewrites(t *testing.T) {
	t.Parallel()
	s := openAzurite(t, azuriteConnection(t))
	base := time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
	const writers = 6
	errs := make(chan error, writers)
	for i := range writers {
		go func() {
			r := trace.JobRecord{SchedulerKey: "reminder:race", RowGuid: "g-race", BusinessUnitID: "bu-1", AutomationType: "Reminder",
				Attempt: 1, Version: 1, Outcome: trace.OutcomeCompleted, StartedOn: base.Add(time.Duration(i) * time.Minute)}
			errs <- s.WriteJob(t.Context(), r)
		}()
	}
	for range writers {
		if err := <-errs; err != nil {
			t.Errorf("WriteJob: %v", err)
		}
	}
	byKey := rowsOf(t)(s.JobsByKey(t.Context(), "reminder:race"))
	byDay := rowsOf(t)(s.JobsByBusinessUnitDay(t.Context(), "bu-1", "2026-03-14", 100))
	if len(byKey) != 1 || len(byDay) != 1 || byKey[0] != byDay[0] {
		t.Errorf("after concurrent rewrites: by key %v, by day %v; want the same single row", byKey, byDay)
	}
}

// TestTraceStoreUnsafeIDs round-trips ids that cannot appear in table keys verbatim, and a
// key with a quote (OData escaping).
func TestTraceStoreUnsafeIDs(t *testing.T) {
	t.Parallel()
	s := openAzurite(t, azuriteConnection(t))
	started := time.Date(2026, 3, 14, 10, 0, 0, 0, time.UTC)
	tests := []trace.JobRecord{
		{SchedulerKey: "reminder:o'brien:x", RowGuid: "row/1#?", BusinessUnitID: "bu/1#?\\", AutomationType: "Reminder", Attempt: 1, Version: 1, StartedOn: started},
		{SchedulerKey: "reminder:tab\tand ünïcode", RowGuid: "row ü", BusinessUnitID: "bü 'quoted'", AutomationType: "Reminder", Attempt: 1, Version: 1, StartedOn: started},
		{SchedulerKey: "reminder:plain", RowGuid: "g-plain", BusinessUnitID: "bu", AutomationType: "Reminder", Attempt: 1, Version: 1, StartedOn: started},
		// Looks like "bu" + the day suffix: must not show up under "bu".
		{SchedulerKey: "reminder:lookalike", RowGuid: "g-look", BusinessUnitID: "bu_20260314", AutomationType: "Reminder", Attempt: 1, Version: 1, StartedOn: started},
	}
	mustWrite(t, s, tests...)
	for _, r := range tests {
		byKey, err := s.JobsByKey(t.Context(), r.SchedulerKey)
		if err != nil || len(byKey) != 1 || byKey[0].RowGuid != r.RowGuid || byKey[0].BusinessUnitID != r.BusinessUnitID {
			t.Errorf("JobsByKey(%q) = %+v, %v", r.SchedulerKey, byKey, err)
		}
		byDay, err := s.JobsByBusinessUnitDay(t.Context(), r.BusinessUnitID, "2026-03-14", 10)
		if err != nil || len(byDay) != 1 || byDay[0].SchedulerKey != r.SchedulerKey {
			t.Errorf("JobsByBusinessUnitDay(%q) = %+v, %v", r.BusinessUnitID, byDay, err)
		}
	}
}

// TestTraceStoreDayPaging reads a day in small pages of $top and stops at limit.
func TestTraceStoreDayPaging(t *testing.T) {
	t.Parallel()
	s := openAzurite(t, azuriteConnection(t))
	day := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	var recs []trace.JobRecord
	for i := range 25 {
		recs = append(recs, trace.JobRecord{SchedulerKey: "reminder:page", RowGuid: "g", BusinessUnitID: "bu-page", AutomationType: "Reminder",
			Attempt: i + 1, Version: int64(i + 1), StartedOn: day.Add(time.Duration(24-i) * time.Minute)}) // newest written first
	}
	mustWrite(t, s, recs...)
	for _, limit := range []int{1, 7, 25, 100} {
		got, err := s.JobsByBusinessUnitDay(t.Context(), "bu-page", "2026-03-14", limit)
		if err != nil {
			t.Fatalf("limit %d: %v", limit, err)
		}
		if want := min(limit, 25); len(got) != want {
			t.Errorf("limit %d: %d rows, want %d", limit, len(got), want)
		}
		for i := 1; i < len(got); i++ {
			if !got[i-1].StartedOn.Before(got[i].StartedOn) {
				t.Errorf("limit %d: row %d (%v) not after row %d (%v)", limit, i, got[i].StartedOn, i-1, got[i-1].StartedOn)
			}
		}
		if len(got) > 0 && !got[0].StartedOn.Equal(day) {
			t.Errorf("limit %d: first row started %v, want the oldest (%v)", limit, got[0].StartedOn, day)
		}
	}
}

// TestNewTraceStoreExistingResources opens the same table and container twice: the
// second open finds both existing and carries on.
func TestNewTraceStoreExistingResources(t *testing.T) {
	t.Parallel()
	conn := azuriteConnection(t)
	s := openAzurite(t, conn)
	s2, err := NewTraceStore(t.Context(), TraceOptions{ConnectionString: conn, Table: s.tableName, Container: containerName(s)})
	if err != nil {
		t.Fatalf("second NewTraceStore on existing resources: %v", err)
	}
	r := trace.JobRecord{SchedulerKey: "k", RowGuid: "g", BusinessUnitID: "bu", Attempt: 1, Version: 1, StartedOn: time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)}
	mustWrite(t, s, r)
	if got, err := s2.JobsByKey(t.Context(), "k"); err != nil || len(got) != 1 {
		t.Errorf("second store reads %+v, %v", got, err)
	}
}

func containerName(s *TraceStore) string {
	u := strings.TrimSuffix(s.container.URL(), "/")
	return u[strings.LastIndex(u, "/")+1:]
}

// TestTraceStoreWriteJobs writes a poll-sized batch: more rows of one business-unit day
// than one transaction holds, a record repeated in the batch, and a rewrite that moves a
// row written earlier. The result must equal what WriteJob one by one would leave.
func TestTraceStoreWriteJobs(t *testing.T) {
	t.Parallel()
	s := openAzurite(t, azuriteConnection(t))
	day := time.Date(2026, 3, 14, 0, 0, 0, 0, time.UTC)
	earlier := trace.JobRecord{SchedulerKey: "reminder:moved", RowGuid: "g-moved", BusinessUnitID: "bu-a", AutomationType: "Reminder",
		Attempt: 1, Version: 1, Outcome: trace.OutcomeRetrying, StartedOn: day.AddDate(0, 0, -1)}
	mustWrite(t, s, earlier)

	var batch []trace.JobRecord
	for i := range 150 {
		bu := "bu-a"
		if i%3 == 0 {
			bu = "bu-b"
		}
		batch = append(batch, trace.JobRecord{SchedulerKey: fmt.Sprintf("reminder:batch:%03d", i), RowGuid: fmt.Sprintf("g-%03d", i),
			BusinessUnitID: bu, AutomationType: "Reminder", Attempt: 1, Version: int64(i + 1), Outcome: trace.OutcomeCompleted,
			StartedOn: day.Add(time.Duration(i) * time.Second)})
	}
	repeated := batch[7]
	repeated.Outcome, repeated.Message = trace.OutcomeHeld, "last copy wins"
	moved := earlier
	moved.StartedOn, moved.Outcome = day.Add(time.Hour), trace.OutcomeCompleted
	batch = append(batch, repeated, moved)
	if err := s.WriteJobs(t.Context(), batch); err != nil {
		t.Fatalf("WriteJobs: %v", err)
	}
	if err := s.WriteJobs(t.Context(), batch); err != nil { // idempotent
		t.Fatalf("WriteJobs again: %v", err)
	}

	a, err := s.JobsByBusinessUnitDay(t.Context(), "bu-a", "2026-03-14", MaxJobsPerDay)
	if err != nil || len(a) != 100+1 {
		t.Fatalf("bu-a day has %d rows, %v; want 101 (100 of the batch + the moved row)", len(a), err)
	}
	if b, err := s.JobsByBusinessUnitDay(t.Context(), "bu-b", "2026-03-14", MaxJobsPerDay); err != nil || len(b) != 50 {
		t.Errorf("bu-b day has %d rows, %v; want 50", len(b), err)
	}
	if got, err := s.JobsByKey(t.Context(), repeated.SchedulerKey); err != nil || len(got) != 1 || got[0].Message != "last copy wins" {
		t.Errorf("repeated record: %+v, %v; want the last copy once", got, err)
	}
	if got := rowsOf(t)(s.JobsByBusinessUnitDay(t.Context(), "bu-a", "2026-03-13", 10)); len(got) != 0 {
		t.Errorf("the moved row is still listed on its old day: %v", got)
	}
	if got, err := s.JobsByKey(t.Context(), "reminder:moved"); err != nil || len(got) != 1 || !got[0].StartedOn.Equal(moved.StartedOn) {
		t.Errorf("moved record: %+v, %v; want it once, at its new start", got, err)
	}
	if err := s.WriteJobs(t.Context(), nil); err != nil {
		t.Errorf("WriteJobs(nil) = %v", err)
	}
	bad := append([]trace.JobRecord{{SchedulerKey: "reminder:ok", RowGuid: "g-ok", Attempt: 1, Version: 1, StartedOn: day}},
		trace.JobRecord{SchedulerKey: "reminder:bad", RowGuid: "g-bad", Attempt: 1, Version: 1}) // zero StartedOn
	if err := s.WriteJobs(t.Context(), bad); err == nil {
		t.Errorf("WriteJobs with an invalid record = nil, want an error")
	}
	if got := rowsOf(t)(s.JobsByKey(t.Context(), "reminder:ok")); len(got) != 0 {
		t.Errorf("a batch with an invalid record wrote %v; want nothing written", got)
	}
}

// TestTraceWriteJobsHelper runs trace.WriteJobs (what the poller calls) against the store.
func TestTraceWriteJobsHelper(t *testing.T) {
	t.Parallel()
	s := openAzurite(t, azuriteConnection(t))
	started := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)
	recs := []trace.JobRecord{
		{SchedulerKey: "reminder:h1", RowGuid: "g1", BusinessUnitID: "bu", Attempt: 1, Version: 2, StartedOn: started},
		{SchedulerKey: "reminder:h2", RowGuid: "g2", BusinessUnitID: "bu", Attempt: 1, Version: 2, StartedOn: started.Add(time.Second)},
	}
	if err := trace.WriteJobs(t.Context(), s, recs); err != nil {
		t.Fatalf("trace.WriteJobs: %v", err)
	}
	if got := rowsOf(t)(s.JobsByBusinessUnitDay(t.Context(), "bu", "2026-03-14", 10)); len(got) != 2 {
		t.Errorf("day lists %v, want both rows", got)
	}
}

func TestTransactionChunks(t *testing.T) {
	t.Parallel()
	small := func(n int) [][]byte {
		out := make([][]byte, n)
		for i := range out {
			out[i] = []byte("{}")
		}
		return out
	}
	for _, tt := range []struct{ n, chunks int }{{1, 1}, {100, 1}, {101, 2}, {250, 3}} {
		if got := transactionChunks(small(tt.n)); len(got) != tt.chunks {
			t.Errorf("%d entities: %d chunks, want %d", tt.n, len(got), tt.chunks)
		}
	}
	big := make([]byte, maxTransactionBytes/2+1)
	if got := transactionChunks([][]byte{big, big, big}); len(got) != 3 {
		t.Errorf("three entities over half the size limit: %d chunks, want 3", len(got))
	}
}

// --- offline tests: no Azurite needed ---

func TestNewTraceStoreRejectsOptions(t *testing.T) {
	t.Parallel()
	dev := DevelopmentConnectionString(10000, 10001, 10002)
	tests := []struct {
		name string
		opts TraceOptions
		want string
	}{
		{"nothing", TraceOptions{}, "no storage account"},
		{"both", TraceOptions{ConnectionString: dev, TableServiceURL: "https://a.table.core.windows.net/"}, "not both"},
		{"both with credential", TraceOptions{ConnectionString: dev, Credential: fakeCredential{}}, "not both"},
		{"urls without credential", TraceOptions{TableServiceURL: "https://a.table.core.windows.net/", BlobServiceURL: "https://a.blob.core.windows.net/"}, "all required"},
		{"credential without blob url", TraceOptions{TableServiceURL: "https://a.table.core.windows.net/", Credential: fakeCredential{}}, "all required"},
		{"shorthand", TraceOptions{ConnectionString: "UseDevelopmentStorage=true"}, "UseDevelopmentStorage"},
		{"malformed connection string", TraceOptions{ConnectionString: "not a connection string"}, "connection string"},
		{"table starts with a digit", TraceOptions{ConnectionString: dev, Table: "1Trace"}, "invalid table name"},
		{"table too short", TraceOptions{ConnectionString: dev, Table: "ab"}, "invalid table name"},
		{"table with hyphen", TraceOptions{ConnectionString: dev, Table: "automation-job"}, "invalid table name"},
		{"table too long", TraceOptions{ConnectionString: dev, Table: "t" + strings.Repeat("a", 63)}, "invalid table name"},
		{"container upper case", TraceOptions{ConnectionString: dev, Container: "Diagnostics"}, "invalid container name"},
		{"container double hyphen", TraceOptions{ConnectionString: dev, Container: "diag--x"}, "invalid container name"},
		{"container leading hyphen", TraceOptions{ConnectionString: dev, Container: "-diag"}, "invalid container name"},
		{"container trailing hyphen", TraceOptions{ConnectionString: dev, Container: "diag-"}, "invalid container name"},
		{"container too short", TraceOptions{ConnectionString: dev, Container: "ab"}, "invalid container name"},
		{"container underscore", TraceOptions{ConnectionString: dev, Container: "diag_x"}, "invalid container name"},
	}
	for _, tt := range tests {
		// None of these reach the network: validation fails first.
		_, err := NewTraceStore(t.Context(), tt.opts)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: NewTraceStore = %v, want an error mentioning %q", tt.name, err, tt.want)
		}
	}
}

func TestValidNames(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"AutomationJob", "abc", "trace0123456789abcdef", "A" + strings.Repeat("b", 62)} {
		if err := validTableName(n); err != nil {
			t.Errorf("validTableName(%q) = %v", n, err)
		}
	}
	for _, n := range []string{"automation-diagnostics", "abc", "a-b-c", "0ab", strings.Repeat("a", 63)} {
		if err := validContainerName(n); err != nil {
			t.Errorf("validContainerName(%q) = %v", n, err)
		}
	}
	if err := validContainerName(strings.Repeat("a", 64)); err == nil {
		t.Errorf("validContainerName accepted 64 characters")
	}
}

func TestValidBlobName(t *testing.T) {
	t.Parallel()
	valid := []string{
		trace.BlobName("3f2a9c1e-0000-4000-8000-000000000001", 2, 17),
		"diag.json", "reports/bu-1/2026/03/run.csv", "bin/all-bytes", "a b/ü.txt", "x", ".hidden", "a/.b", strings.Repeat("n", 1024),
	}
	for _, n := range valid {
		if err := validBlobName(n); err != nil {
			t.Errorf("validBlobName(%q) = %v, want nil", n, err)
		}
	}
	invalid := []string{
		// the suite's list (trace/tracetest)
		"", ".", "..", "../x", "/abs", "/", "a/../../b", "a/../b", "a/..", "./a", "a//b", "a/",
		// what Blob Storage would alter or reject
		"a./b", "diag.", "a\\b", "a\x00b", "a\nb", "a\x7f", "a\u0085b", "\xff\xfe", strings.Repeat("n", 1025),
	}
	for _, n := range invalid {
		if err := validBlobName(n); err == nil {
			t.Errorf("validBlobName(%q) = nil, want an error", n)
		}
	}
}

// TestTraceStoreValidatesFirst calls a store with no clients: every rejection must
// happen before any request (a request would panic on the nil clients).
func TestTraceStoreValidatesFirst(t *testing.T) {
	t.Parallel()
	s := &TraceStore{}
	ctx := t.Context()
	for _, day := range []string{"", "yesterday", "2026/03/14", "2026-3-14", "2026-02-30", "2026-13-01", "2026-03-14T00:00:00Z", "2026-03-14 "} {
		if _, err := s.JobsByBusinessUnitDay(ctx, "bu", day, 10); err == nil {
			t.Errorf("JobsByBusinessUnitDay(day %q) = nil error", day)
		}
	}
	for _, limit := range []int{0, -1, MaxJobsPerDay + 1} {
		if _, err := s.JobsByBusinessUnitDay(ctx, "bu", "2026-03-14", limit); err == nil {
			t.Errorf("JobsByBusinessUnitDay(limit %d) = nil error", limit)
		}
	}
	for _, name := range []string{"", "../x", "a//b"} {
		if err := s.PutBlob(ctx, name, []byte("x")); err == nil {
			t.Errorf("PutBlob(%q) = nil error", name)
		}
		if _, err := s.GetBlob(ctx, name); err == nil || errors.Is(err, trace.ErrBlobNotFound) {
			t.Errorf("GetBlob(%q) = %v, want an invalid-name error", name, err)
		}
	}
	for _, started := range []time.Time{{}, time.Date(1600, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)} {
		if err := s.WriteJob(ctx, trace.JobRecord{SchedulerKey: "k", RowGuid: "g", Attempt: 1, Version: 1, StartedOn: started}); err == nil {
			t.Errorf("WriteJob(StartedOn %v) = nil error", started)
		}
	}
}

// TestDevelopmentConnectionString checks that both SDKs parse the string (they reject the
// UseDevelopmentStorage shorthand) and that scripts/azurite.sh prints the same account.
func TestDevelopmentConnectionString(t *testing.T) {
	t.Parallel()
	cs := DevelopmentConnectionString(11000, 11001, 11002)
	for _, want := range []string{"AccountName=devstoreaccount1", "BlobEndpoint=http://127.0.0.1:11000/devstoreaccount1", "TableEndpoint=http://127.0.0.1:11002/devstoreaccount1"} {
		if !strings.Contains(cs, want) {
			t.Errorf("connection string %q lacks %q", cs, want)
		}
	}
	if _, err := aztables.NewServiceClientFromConnectionString(cs, nil); err != nil {
		t.Errorf("aztables rejects it: %v", err)
	}
	if _, err := azblob.NewClientFromConnectionString(cs, nil); err != nil {
		t.Errorf("azblob rejects it: %v", err)
	}
	if _, err := aztables.NewServiceClientFromConnectionString("UseDevelopmentStorage=true", nil); err == nil {
		t.Errorf("aztables accepts UseDevelopmentStorage=true now: the comment on DevelopmentConnectionString is out of date")
	}
	script, err := os.ReadFile("../../scripts/azurite.sh")
	if err != nil {
		t.Fatalf("read scripts/azurite.sh: %v", err)
	}
	if !strings.Contains(string(script), azuriteAccountKey) || !strings.Contains(string(script), "AccountName=devstoreaccount1") {
		t.Errorf("scripts/azurite.sh does not print the development account DevelopmentConnectionString uses")
	}
}
