package sqlite_test

import (
	"testing"

	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/sql/sqlite"
)

// TestReservationSetStatusGuardsAttemptAndOrder: ReservationSetStatus changes a HELD
// reservation only for the Attempt and OrderId its caller read (issue 32: a release deciding
// on attempt 1 must not release attempt 2's hold). With the command re-held as attempt 2,
// the statement naming attempt 1, or attempt 2 with attempt 1's order, changes no row; the
// current attempt and order change one. sql/mssql runs the same check against SQL Server.
func TestReservationSetStatusGuardsAttemptAndOrder(t *testing.T) {
	t.Parallel()
	st, q := planStore(t)
	storetest.CheckReservationGuard(t, st, st.DB(), q.SQL("ReservationSetStatus"), sqlite.Dialect.EncodeTime(storetest.T0))
}
