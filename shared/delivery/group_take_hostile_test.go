package delivery_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// beginFailsStore fails every NotificationFinishGroup before its transaction begins (a
// BeginTx that fails: the database is down, or ctx ended while waiting for the writer), so
// take is never called. After limit calls it calls take itself, to end a loop that would
// otherwise never end.
type beginFailsStore struct {
	delivery.DispatchStore
	mu    sync.Mutex
	calls int
	limit int
}

var errBegin = errors.New("begin: the database is down")

func (s *beginFailsStore) NotificationFinishGroup(ctx context.Context, take func() []store.NotificationFinishParams) ([]store.NotificationFinishParams, []error, error) {
	s.mu.Lock()
	s.calls++
	n := s.calls
	s.mu.Unlock()
	if n > s.limit {
		return take(), nil, errBegin // ends the loop: the group is taken
	}
	return nil, nil, errBegin
}

// TestGroupCommitWhoseTransactionNeverBegan: a group commit whose store call fails before
// the transaction began (take not called) fails the outcomes waiting once, as a failed
// record of them; it does not call the store again and again for the same outcomes (a hot
// loop for as long as the database is down, each turn adding an error to the batch's).
func TestGroupCommitWhoseTransactionNeverBegan(t *testing.T) {
	t.Parallel()
	for _, conc := range []int{1, 4} {
		p := &provider{}
		e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
		st := &beginFailsStore{DispatchStore: e.st, limit: 50}
		e.disp.Store, e.disp.ChannelConcurrency = st, conc
		keys := queueN(t, e, "log", 3)
		var msgs []bus.Message
		for _, k := range keys {
			msgs = append(msgs, dispatchMsg(k))
		}
		errs := e.disp.HandleBatch(context.Background(), msgs)
		for i, err := range errs {
			if !errors.Is(err, errBegin) {
				t.Errorf("concurrency %d: message %d: %v, want the failed record", conc, i, err)
			}
		}
		if st.calls > len(keys) {
			t.Errorf("concurrency %d: %d store calls for %d outcomes whose transaction never began", conc, st.calls, len(keys))
		}
	}
}
