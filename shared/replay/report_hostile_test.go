package replay_test

import (
	"strings"
	"testing"
)

// Ids from the scenario went into request paths unescaped: a space or "%" made
// httptest.NewRequest panic (the replay crashed), and "/" or ".." could reach another
// route. Each id is one path segment now, and a bad one is an ordinary 4xx api line.
func TestReportInputIdsAreOnePathSegment(t *testing.T) {
	t.Parallel()
	sum, out := runReport(t, `{"at":"2027-03-01T00:00:00Z","reportSubscription":{"guid":"a b%zz","businessUnitId":"bu-syd"}},
	 {"at":"2027-03-01T00:00:01Z","reportSubscriptionDelete":{"guid":"x?y#z"}},
	 {"at":"2027-03-01T00:00:02Z","reportRunNow":{"subscriptionGuid":"../../report-runs/ownership/acquire"}},
	 {"at":"2027-03-01T00:00:03Z","reportRollout":{"businessUnitId":"bu-syd/x","mode":"Cutover"}},
	 {"at":"2027-03-01T00:00:04Z","reportRollout":{"subscriptionGuid":"%","mode":null}},
	 {"at":"2027-03-01T00:00:05Z","reportSubscriptionDelete":{"guid":".."}}`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if sum.Rejected != 6 || len(lines) != 7 || !strings.Contains(lines[5], `"error":"reportSubscriptionDelete.guid \"..\" is not an id"`) {
		t.Fatalf("rejected %d:\n%s", sum.Rejected, out)
	}
	for _, want := range []string{`"PUT /api/report-subscriptions/a%20b%25zz"`, `"DELETE /api/report-subscriptions/x%3Fy%23z"`,
		`"POST /api/report-subscriptions/..%2F..%2Freport-runs%2Fownership%2Facquire/runs"`, `"status":404`} {
		if !strings.Contains(out, want) {
			t.Errorf("no %s in:\n%s", want, out)
		}
	}
}
