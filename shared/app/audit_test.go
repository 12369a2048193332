package app_test

import (
	"fmt"
	"testing"
)

// Issue 37, item 7: every write records the principal as its operator. An operate key
// cancelling a row with X-Automation-Operator: jane is audited as the key, jane following as
// the reason; the same action with the bootstrap token keeps jane alone (the token names
// nobody).
func TestAuditRecordsThePrincipal(t *testing.T) {
	e := newScopeEnv(t)
	rec := e.do(routeRequest{method: "POST", path: fmt.Sprintf("/api/support/scheduler-rows/%d/cancel", e.a.row), body: `{"reason":"duplicate"}`,
		headers: []string{op, "jane", "If-Match", `"1"`}}, e.keys["operate key"])
	if rec.Code != 200 {
		t.Fatalf("cancel with the operate key: %d %s", rec.Code, rec.Body)
	}
	var operator, reason string
	if err := e.db.QueryRow(`SELECT Operator, Reason FROM SupportAudit WHERE SchedulerId = ? ORDER BY Id DESC LIMIT 1`, e.a.row).Scan(&operator, &reason); err != nil {
		t.Fatal(err)
	}
	if operator != "key:operate key / jane" || reason != "duplicate" {
		t.Fatalf("audited as %q (reason %q), want the key first", operator, reason)
	}
}
