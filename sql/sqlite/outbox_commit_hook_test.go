package sqlite_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

// TestOutboxCommitHook: the store tells its OnOutboxCommit hook, after the commit, how many
// outbox rows a transaction wrote (the eager publisher's wake, docs/performance.md); a
// transaction that wrote none does not call it.
func TestOutboxCommitHook(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	var mu sync.Mutex
	var calls []int
	var hooked store.OutboxCommitNotifier = st
	hooked.OnOutboxCommit(func(n int) { mu.Lock(); calls = append(calls, n); mu.Unlock() })
	now := time.Date(2026, 12, 4, 9, 0, 0, 0, time.UTC)
	msgs := []store.OutboxMessage{{MessageID: "m1", Destination: "events", Body: []byte(`{}`)}, {MessageID: "m2", Destination: "events", Body: []byte(`{}`)}}
	if err := st.NotificationEnqueue(ctx, store.NotificationEnqueueParams{Now: now, Outbox: msgs}); err != nil {
		t.Fatal(err)
	}
	if err := st.NotificationEnqueue(ctx, store.NotificationEnqueueParams{Now: now}); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(calls) != 1 || calls[0] != 2 {
		t.Fatalf("hook calls %v, want one call with 2 rows", calls)
	}
	n, err := st.OutboxBacklog(ctx)
	if err != nil || n != 2 {
		t.Fatalf("OutboxBacklog = %d, %v; want 2", n, err)
	}
}
