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

// TestCheckpointRest: after a checkpoint the checkpointer rests for CheckpointInterval, so
// the kicks of later commits wait for the rest to end instead of each running a checkpoint
// (they coalesce into one), and Close does not wait for the rest to end.
func TestCheckpointRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, ckpt, err := open(ctx, filepath.Join(t.TempDir(), "r.db"), &Options{AutoCheckpointPages: 1_000_000, CheckpointInterval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	write := func(batch int) {
		t.Helper()
		if _, err := st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: now, Candidates: []automation.Candidate{storetest.Candidate(batch, now)}}); err != nil {
			t.Fatal(err)
		}
	}
	write(0)
	select {
	case <-ckpt.runs: // the first checkpoint: Open's writes or the one above
	case <-time.After(10 * time.Second):
		t.Fatal("no checkpoint after the first commit")
	}
	for i := 1; i <= 20; i++ {
		write(i)
	}
	select {
	case <-ckpt.runs:
		t.Fatal("a checkpoint ran during the rest")
	case <-time.After(200 * time.Millisecond):
	}
	closed := make(chan error, 1)
	go func() { closed <- st.Close() }()
	select {
	case err := <-closed:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for the rest to end")
	}
}

// TestCheckpointNoRest: a negative CheckpointInterval checkpoints after every commit, as
// before the rest existed.
func TestCheckpointNoRest(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, ckpt, err := open(ctx, filepath.Join(t.TempDir(), "n.db"), &Options{AutoCheckpointPages: 1_000_000, CheckpointInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if ckpt.interval != 0 {
		t.Fatalf("interval %v, want none", ckpt.interval)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	for i := 0; i < 3; i++ {
		for len(ckpt.runs) > 0 {
			<-ckpt.runs
		}
		if _, err := st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: now, Candidates: []automation.Candidate{storetest.Candidate(i, now)}}); err != nil {
			t.Fatal(err)
		}
		select {
		case <-ckpt.runs:
		case <-time.After(10 * time.Second):
			t.Fatalf("commit %d: no checkpoint", i)
		}
	}
}
