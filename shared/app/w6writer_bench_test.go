package app_test

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// w6Writer gathers the writer's hold per transaction kind (sqlstore.TxObserver: the store
// method that ran the transaction, and how long its fn held the writer's transaction once it
// had its turn; kind "COMMIT" is the physical commits) in windows of w6WriterWindow, for
// W6's "writer-us/login" and, with W6_QUEUES, a line per window naming the kinds that held
// the writer longest, and a first-against-last-minute comparison (what costs more as the
// tables grow: docs/performance.md "What tipped W6").
type w6Writer struct {
	mu      sync.Mutex
	start   time.Time
	windows []map[string]*w6Hold // by window of w6WriterWindow since start
	total   time.Duration
}

// w6Hold is one kind's transactions in a window: count, summed hold, the longest hold.
type w6Hold struct {
	n        int
	sum, max time.Duration
}

const w6WriterWindow = 10 * time.Second

func newW6Writer(start time.Time) *w6Writer { return &w6Writer{start: start} }

// observe is the sqlstore.TxObserver.
func (w *w6Writer) observe(kind string, hold time.Duration) {
	w.mu.Lock()
	defer w.mu.Unlock()
	i := max(0, int(time.Since(w.start)/w6WriterWindow))
	for len(w.windows) <= i {
		w.windows = append(w.windows, map[string]*w6Hold{})
	}
	h := w.windows[i][kind]
	if h == nil {
		h = &w6Hold{}
		w.windows[i][kind] = h
	}
	h.n++
	h.sum += hold
	h.max = max(h.max, hold)
	w.total += hold
}

// held is the writer's summed hold since start (every kind, the commits included).
func (w *w6Writer) held() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.total
}

// line describes window i: the writer's busy time in it, then its kinds by summed hold,
// each as count, summed ms, mean and longest hold ("CampaignFinishMany 120 tx 310ms mean 2.6ms max 40ms").
func (w *w6Writer) line(i int) string {
	w.mu.Lock()
	defer w.mu.Unlock()
	if i >= len(w.windows) {
		return "no transactions"
	}
	return describeHolds(w.windows[i], 8)
}

// span sums the windows [from, to) by kind.
func (w *w6Writer) span(from, to int) map[string]*w6Hold {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[string]*w6Hold{}
	for i := max(0, from); i < min(to, len(w.windows)); i++ {
		for k, h := range w.windows[i] {
			o := out[k]
			if o == nil {
				o = &w6Hold{}
				out[k] = o
			}
			o.n += h.n
			o.sum += h.sum
			o.max = max(o.max, h.max)
		}
	}
	return out
}

// describeHolds lists the top kinds of m by summed hold.
func describeHolds(m map[string]*w6Hold, top int) string {
	var total time.Duration
	kinds := make([]string, 0, len(m))
	for k, h := range m {
		kinds = append(kinds, k)
		total += h.sum
	}
	slices.SortFunc(kinds, func(a, b string) int { return int(m[b].sum - m[a].sum) })
	parts := []string{fmt.Sprintf("busy %s", total.Round(time.Millisecond))}
	for i, k := range kinds {
		if i == top {
			break
		}
		h := m[k]
		parts = append(parts, fmt.Sprintf("%s %d tx %s mean %s max %s", k, h.n, h.sum.Round(time.Millisecond),
			(h.sum/time.Duration(h.n)).Round(time.Microsecond), h.max.Round(100*time.Microsecond)))
	}
	return strings.Join(parts, ", ")
}

// w6DestBacklog counts the unpublished outbox rows per destination (the partial index
// IX_Outbox_UnpublishedByDestination holds exactly them), read on a connection of its own.
func w6DestBacklog(ctx context.Context, db *sql.DB) string {
	rows, err := db.QueryContext(ctx, `SELECT Destination, COUNT(*) FROM Outbox WHERE PublishedOn IS NULL GROUP BY Destination`)
	if err != nil {
		return err.Error()
	}
	defer rows.Close()
	var parts []string
	for rows.Next() {
		var d string
		var n int
		if err := rows.Scan(&d, &n); err != nil {
			return err.Error()
		}
		parts = append(parts, fmt.Sprintf("%s:%d", d, n))
	}
	return "[" + strings.Join(parts, " ") + "]"
}
