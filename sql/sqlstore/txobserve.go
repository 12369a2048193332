package sqlstore

import (
	"database/sql"
	"runtime"
	"strings"
	"time"
)

// TxObserver hears, for each write transaction's fn, the store method that ran it (its
// kind: "CampaignClaimMany", "OutboxClaim", …) and how long the fn held the transaction,
// wall time, once it had its turn (the wait for the writer not included); and, for each
// commit on the pinned writer, kind "COMMIT" and how long the COMMIT took. It is a
// diagnosis hook for benchmarks (W6's writer hold per kind, docs/performance.md "What tipped
// W6"); SetTxObserver may be called at any time; nil, the default, costs an atomic load.
// It is called on the transaction's goroutine and must be cheap and safe for concurrent use.
type TxObserver func(kind string, hold time.Duration)

// SetTxObserver sets the store's TxObserver (nil: none); transactions begun after it hear it.
func (s *Store) SetTxObserver(fn TxObserver) {
	if fn == nil {
		s.txObs.Store(nil)
		return
	}
	s.txObs.Store(&fn)
}

// observed wraps fn so that the observer hears its kind and hold (fn itself when no
// observer is set). skip is the number of frames between the store method and the caller
// of observed.
func (s *Store) observed(fn func(*sql.Tx) error, skip int) func(*sql.Tx) error {
	p := s.txObs.Load()
	if p == nil {
		return fn
	}
	obs := *p
	kind := "?"
	pcs := make([]uintptr, 8)
	n := runtime.Callers(skip+2, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		name := f.Function
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		// The first exported method on the way up (closures and helpers such as inTx are
		// skipped: "func1", "inTx", "campaignFinishOne").
		if name != "" && name[0] >= 'A' && name[0] <= 'Z' {
			kind = name
			break
		}
		if !more {
			break
		}
	}
	return func(tx *sql.Tx) error {
		t := time.Now() // a duration meter on the monotonic clock, not an instant of the injected Clock
		err := fn(tx)
		obs(kind, time.Since(t))
		return err
	}
}

// commitWatch starts timing a COMMIT for the observer: the monotonic clock's reading when an
// observer is set, else the zero time (no reading on the hot path).
func (s *Store) commitWatch() time.Time {
	if s.txObs.Load() == nil {
		return time.Time{}
	}
	return time.Now() // a duration meter on the monotonic clock, not an instant of the injected Clock
}

// observeCommit tells the observer how long a COMMIT on the writer took (since: commitWatch's
// reading; the zero time, taken with no observer set, is not reported).
func (s *Store) observeCommit(since time.Time) {
	if p := s.txObs.Load(); p != nil && !since.IsZero() {
		(*p)("COMMIT", time.Since(since))
	}
}
