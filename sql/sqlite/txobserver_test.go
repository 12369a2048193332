package sqlite_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

// TestTxObserverNamesTheStoreMethod: the writer's observer (W6's hold per kind) hears each
// write transaction under the exported store method that ran it, and each commit as
// "COMMIT", and nothing once it is removed.
func TestTxObserverNamesTheStoreMethod(t *testing.T) {
	t.Parallel()
	s := sqlitetest.Open(t)
	var mu sync.Mutex
	kinds := map[string]int{}
	s.SetTxObserver(func(kind string, hold time.Duration) {
		mu.Lock()
		defer mu.Unlock()
		if hold < 0 {
			t.Errorf("%s: negative hold %s", kind, hold)
		}
		kinds[kind]++
	})
	ctx := context.Background()
	p := store.InboxInsertParams{BusinessUnitID: "bu-1", RecipientID: "CUST-1", DeliveryKey: "dk-1", Subject: "s", Text: "t", Now: time.Date(2026, 12, 5, 11, 0, 0, 0, time.UTC)}
	if _, err := s.InboxInsert(ctx, p); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if kinds["InboxInsert"] != 1 || kinds["COMMIT"] < 1 {
		t.Errorf("kinds = %v; want InboxInsert once and its COMMIT", kinds)
	}
	mu.Unlock()
	s.SetTxObserver(nil)
	p.DeliveryKey = "dk-2"
	if _, err := s.InboxInsert(ctx, p); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if kinds["InboxInsert"] != 1 {
		t.Errorf("kinds = %v after the observer was removed; want no more", kinds)
	}
}
