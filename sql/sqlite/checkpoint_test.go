package sqlite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
)

// TestBackgroundCheckpoint: with the writer's own automatic checkpoint out of reach
// (AutoCheckpointPages far above what the test writes), commits on the writer wake the
// background checkpointer, which copies the log into the database file; Close stops it.
func TestBackgroundCheckpoint(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "c.db")
	st, ckpt, err := open(ctx, path, &Options{AutoCheckpointPages: 1_000_000})
	if err != nil {
		t.Fatal(err)
	}
	// Let the kicks of Open's own writes (if any) settle, then take the file's size.
	time.Sleep(50 * time.Millisecond)
	for len(ckpt.runs) > 0 {
		<-ckpt.runs
	}
	before := fileSize(t, path)
	// About 2 MB of rows through the store's writer: far more than the file held.
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for batch := 0; batch < 4; batch++ {
		var cands []automation.Candidate
		for i := 0; i < 1000; i++ {
			c := storetest.Candidate(batch*1000+i, now)
			c.SchedulerKey += ":" + strings.Repeat("x", 300)
			cands = append(cands, c)
		}
		if _, err := st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: now, Candidates: cands}); err != nil {
			t.Fatal(err)
		}
	}
	deadline := time.After(10 * time.Second)
	for fileSize(t, path) < before+1<<20 {
		select {
		case <-ckpt.runs:
		case <-deadline:
			t.Fatalf("database file %d bytes after the writes (was %d): no background checkpoint copied the log", fileSize(t, path), before)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	select {
	case <-ckpt.done:
	default:
		t.Error("the checkpointer still runs after Close")
	}
}

func fileSize(t *testing.T, path string) int64 {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}
