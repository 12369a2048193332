package replay_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/replay"
)

func TestReportInputKindsAreValidated(t *testing.T) {
	t.Parallel()
	base := `{"start":"2027-03-01T00:00:00Z","until":"2027-03-02T00:00:00Z","tick":"30s","businessUnits":[{"id":"bu-syd","name":"S","timeZone":"Australia/Sydney"}],"inputs":[%s]}`
	for name, in := range map[string]string{
		"two kinds":    `{"at":"2027-03-01T00:00:00Z","reportRunNow":{"subscriptionGuid":"x"},"reportRollout":{"businessUnitId":"bu-syd","mode":"Cutover"}}`,
		"no kind":      `{"at":"2027-03-01T00:00:00Z"}`,
		"unknown kind": `{"at":"2027-03-01T00:00:00Z","reportFoo":{}}`,
	} {
		if _, err := replay.Parse([]byte(strings.Replace(base, "%s", in, 1))); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Bad report inputs are answered, not fatal: each becomes an api line with a 4xx.
	raw := strings.Replace(base, "%s", `{"at":"2027-03-01T00:00:00Z","reportRunNow":{"subscriptionGuid":"x","extra":1}},
	 {"at":"2027-03-01T00:00:01Z","reportRunNow":{"subscriptionGuid":"5e0c8a52-3b1f-4d6e-9a7c-2f4b6d8e0a1c"}},
	 {"at":"2027-03-01T00:00:02Z","oldScheduler":{"action":"steal","schedulerKey":"k"}},
	 {"at":"2027-03-01T00:00:03Z","reportRollout":{"businessUnitId":"bu-syd","mode":"Everything"}}`, 1)
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
	if sum.Rejected != 4 || len(lines) != 5 || !strings.Contains(lines[1], `"status":404`) || !strings.Contains(lines[3], `"status":422`) {
		t.Fatalf("rejected %d:\n%s", sum.Rejected, out.String())
	}
}
