package budgetapi_test

import (
	"context"
	"strings"
	"testing"
)

// A budget write's reason goes to BudgetAudit.Reason, nvarchar(2000) on SQL Server: a longer
// one was accepted on SQLite and would fail the insert (500) on SQL Server. The one audit
// rule (automation.CheckReasonText) bounds it at 1000 characters, within the column: a longer
// one is a 422 naming the field, and nothing is written, on every dialect.
func TestBudgetReasonIsBoundedAndALongOneChangesNothing(t *testing.T) {
	e := newEnv(t)
	path := "/api/budgets/campaigns/c1?businessUnitId=bu-1"
	long := strings.Repeat("r", 1001)
	r := e.call(t, "PUT", path, `{"currency":"USD","maxCost":"30","reason":"`+long+`"}`, opHdr)
	want(t, r, 422, "create with a 1001-character reason")
	if !strings.Contains(string(r.Body), `"reason"`) {
		t.Fatalf("the refusal does not name reason: %s", r.Body)
	}
	want(t, e.call(t, "GET", path, ""), 404, "a refused create wrote a budget")
	want(t, e.call(t, "PUT", path, `{"currency":"USD","maxCost":"30","reason":"`+strings.Repeat("r", 1000)+`"}`, opHdr), 201, "create with 1000")
	before := e.call(t, "GET", path, "")
	want(t, e.call(t, "PUT", path, `{"maxCost":"40","reason":"`+long+`"}`, opHdr, `If-Match: "1"`), 422, "raise with a long reason")
	want(t, e.call(t, "POST", "/api/budgets/campaigns/c1/resume?businessUnitId=bu-1", `{"reason":"`+long+`"}`, opHdr, `If-Match: "1"`), 422, "resume with a long reason")
	if after := e.call(t, "GET", path, ""); string(after.Body) != string(before.Body) {
		t.Fatalf("refused changes changed the budget:\n%s\n%s", before.Body, after.Body)
	}
	if audit, _ := e.st.BudgetAuditList(context.Background(), "bu-1", "c1", 10); len(audit) != 1 {
		t.Fatalf("audit rows = %d, want 1 (the create)", len(audit))
	}
}
