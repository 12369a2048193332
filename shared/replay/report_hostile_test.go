package replay_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/replay"
)

// Ids from the scenario went into request paths unescaped: a space or "%" made
// httptest.NewRequest panic (the replay crashed), and "/" or ".." could reach another
// route. Each id is one path segment now, and a bad one is an ordinary 4xx api line.
func TestReportInputIdsAreOnePathSegment(t *testing.T) {
	t.Parallel()
	base := `{"start":"2027-03-01T00:00:00Z","until":"2027-03-02T00:00:00Z","tick":"30s","businessUnits":[{"id":"bu-syd","name":"S","timeZone":"Australia/Sydney"}],"inputs":[%s]}`
	raw := strings.Replace(base, "%s", `{"at":"2027-03-01T00:00:00Z","reportSubscription":{"guid":"a b%zz","businessUnitId":"bu-syd"}},
	 {"at":"2027-03-01T00:00:01Z","reportSubscriptionDelete":{"guid":"x?y#z"}},
	 {"at":"2027-03-01T00:00:02Z","reportRunNow":{"subscriptionGuid":"../../report-runs/ownership/acquire"}},
	 {"at":"2027-03-01T00:00:03Z","reportRollout":{"businessUnitId":"bu-syd/x","mode":"Cutover"}},
	 {"at":"2027-03-01T00:00:04Z","reportRollout":{"subscriptionGuid":"%","mode":null}},
	 {"at":"2027-03-01T00:00:05Z","reportSubscriptionDelete":{"guid":".."}}`, 1)
	sc, err := replay.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	sum, err := replay.Run(context.Background(), sc, &out, nil)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if sum.Rejected != 6 || len(lines) != 7 || !strings.Contains(lines[5], `"error":"reportSubscriptionDelete.guid \"..\" is not an id"`) {
		t.Fatalf("rejected %d:\n%s", sum.Rejected, out.String())
	}
	for _, want := range []string{`"PUT /api/report-subscriptions/a%20b%25zz"`, `"DELETE /api/report-subscriptions/x%3Fy%23z"`,
		`"POST /api/report-subscriptions/..%2F..%2Freport-runs%2Fownership%2Facquire/runs"`, `"status":404`} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no %s in:\n%s", want, out.String())
		}
	}
}
