package sqlite_test

import (
	"context"
	"database/sql"
	"path/filepath"
	"testing"

	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/sql/sqlite"
	"github.com/automation-platform/automation/sql/sqlstore"
)

// TestReservationSetStatusGuardsAttemptAndOrder: ReservationSetStatus changes a HELD
// reservation only for the Attempt and OrderId its caller read (issue 32: a release deciding
// on attempt 1 must not release attempt 2's hold). With the command re-held as attempt 2,
// the statement naming attempt 1, or attempt 2 with attempt 1's order, changes no row; the
// current attempt and order change one. sql/mssql runs the same check against SQL Server.
func TestReservationSetStatusGuardsAttemptAndOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "g.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	q, err := sqlstore.LoadQueries(sqlite.QueryFiles())
	if err != nil {
		t.Fatal(err)
	}
	storetest.ReholdForGuard(t, st)
	now := sqlite.Dialect.EncodeTime(storetest.T0)
	set := func(attempt int64, order string) int64 {
		t.Helper()
		res, err := st.DB().ExecContext(ctx, q.SQL("ReservationSetStatus"), sql.Named("CommandId", "cmd-guard"), sql.Named("Attempt", attempt),
			sql.Named("OrderId", order), sql.Named("Status", store.ReservationReleased), sql.Named("ActionStatus", nil), sql.Named("Now", now))
		if err != nil {
			t.Fatal(err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	for _, stale := range []struct {
		attempt int64
		order   string
	}{{1, "ord-cmd-guard-1"}, {2, "ord-cmd-guard-1"}, {1, "ord-cmd-guard-2"}} {
		if n := set(stale.attempt, stale.order); n != 0 {
			t.Fatalf("attempt %d, order %s changed %d rows of attempt 2's hold", stale.attempt, stale.order, n)
		}
	}
	if n := set(2, "ord-cmd-guard-2"); n != 1 {
		t.Fatalf("the current attempt changed %d rows, want 1", n)
	}
}
