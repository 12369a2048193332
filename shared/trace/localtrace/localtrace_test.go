package localtrace_test

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/trace"
	"github.com/automation-platform/automation/shared/trace/localtrace"
	"github.com/automation-platform/automation/shared/trace/tracetest"
)

func open(t *testing.T, dir string) *localtrace.Store {
	t.Helper()
	s, err := localtrace.Open(dir)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return s
}

func TestConformance(t *testing.T) {
	t.Parallel()
	tracetest.Run(t, func(t *testing.T) trace.Store { return open(t, t.TempDir()) })
}

// TestReopen checks that rows and blobs survive closing and reopening the directory.
func TestReopen(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := localtrace.Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	started := time.Date(2026, 3, 14, 1, 2, 3, 4_000_000, time.UTC)
	rec := trace.JobRecord{SchedulerKey: "k", RowGuid: "g", BusinessUnitID: "bu", AutomationType: "Reminder",
		Attempt: 1, Version: 2, Outcome: trace.OutcomeCompleted, StartedOn: started, FinishedOn: started}
	name := trace.BlobName("g", 1, 2)
	if err := s.WriteJob(t.Context(), rec); err != nil {
		t.Fatalf("WriteJob: %v", err)
	}
	if err := s.PutBlob(t.Context(), name, []byte("diag")); err != nil {
		t.Fatalf("PutBlob: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	s2 := open(t, dir)
	got, err := s2.JobsByKey(t.Context(), "k")
	if err != nil || len(got) != 1 || !got[0].StartedOn.Equal(started) || got[0].Version != 2 {
		t.Errorf("after reopen JobsByKey = %+v, %v", got, err)
	}
	if b, err := s2.GetBlob(t.Context(), name); err != nil || string(b) != "diag" {
		t.Errorf("after reopen GetBlob = %q, %v", b, err)
	}
}

// TestBlobsStayUnderDir checks where blobs land on disk and that no temporary files are
// left behind.
func TestBlobsStayUnderDir(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s := open(t, dir)
	name := trace.BlobName("g", 3, 9)
	for range 3 {
		if err := s.PutBlob(t.Context(), name, []byte("x")); err != nil {
			t.Fatalf("PutBlob: %v", err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "blobs", "scheduler", "g", "003-v9.json")); err != nil {
		t.Errorf("blob not at dir/blobs/%s: %v", name, err)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "blobs", "scheduler", "g"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("blob directory holds %v, want only 003-v9.json", names)
	}
}

// TestInvalidBlobNamesWriteNothing checks that a refused name leaves no file anywhere
// (in particular not next to the blobs directory).
func TestInvalidBlobNamesWriteNothing(t *testing.T) {
	t.Parallel()
	for _, name := range []string{"", ".", "..", "../x", "/abs", "a/../../b", "blobs/../../x"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			s := open(t, dir)
			if err := s.PutBlob(t.Context(), name, []byte("escape")); err == nil {
				t.Errorf("PutBlob(%q) = nil, want an error", name)
			}
			var files []string
			err := filepath.WalkDir(filepath.Dir(dir), func(p string, d os.DirEntry, err error) error {
				if err != nil {
					return err
				}
				rel, _ := filepath.Rel(dir, p)
				switch {
				case d.IsDir(), rel == "trace.db", rel == "trace.db-wal", rel == "trace.db-shm":
				default:
					files = append(files, rel)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 0 {
				t.Errorf("PutBlob(%q) left files %v", name, files)
			}
		})
	}
}

func TestJobsByBusinessUnitDayLimitCap(t *testing.T) {
	t.Parallel()
	s := open(t, t.TempDir())
	tests := []struct {
		limit   int
		wantErr bool
	}{
		{1, false},
		{1000, false},
		{1001, true},
	}
	for _, tt := range tests {
		_, err := s.JobsByBusinessUnitDay(t.Context(), "bu", "2026-03-14", tt.limit)
		if (err != nil) != tt.wantErr {
			t.Errorf("limit %d: err = %v, want error %v", tt.limit, err, tt.wantErr)
		}
	}
}

// TestWriteJobsManyChunks: records written in one WriteJobs are all written with their own
// values, and writing them again replaces rather than duplicates, for every path: 7 records
// (one statement built for its size, in its own transaction), 1000 (the prepared full-size
// statement, in its own transaction) and 2,234 (two prepared statements and a 234-row last
// one, in one transaction).
func TestWriteJobsManyChunks(t *testing.T) {
	t.Parallel()
	for _, n := range []int{7, 1000, 2234} {
		s := open(t, t.TempDir())
		started := time.Date(2026, 3, 14, 1, 2, 3, 0, time.UTC)
		recs := make([]trace.JobRecord, n)
		for i := range recs {
			recs[i] = trace.JobRecord{SchedulerKey: "k" + strconv.Itoa(i%7), RowGuid: "g" + strconv.Itoa(i), BusinessUnitID: "bu",
				AutomationType: "Reminder", Attempt: 1, Version: int64(i), Outcome: trace.OutcomeCompleted,
				StartedOn: started.Add(time.Duration(i) * time.Millisecond), FinishedOn: started}
		}
		for range 2 {
			if err := s.WriteJobs(t.Context(), recs); err != nil {
				t.Fatalf("%d records: WriteJobs: %v", n, err)
			}
		}
		for k := range 7 {
			got, err := s.JobsByKey(t.Context(), "k"+strconv.Itoa(k))
			if err != nil {
				t.Fatal(err)
			}
			want := (len(recs) - k + 6) / 7
			if len(got) != want {
				t.Fatalf("%d records, key k%d: %d rows, want %d", n, k, len(got), want)
			}
			for _, r := range got {
				i := int(r.Version)
				if r.RowGuid != "g"+strconv.Itoa(i) || !r.StartedOn.Equal(recs[i].StartedOn) {
					t.Errorf("%d records: row %+v does not match record %d", n, r, i)
				}
			}
		}
	}
}
