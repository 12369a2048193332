package replay_test

import (
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/replay"
)

// reportScenario is a one-day scenario of bu-syd (Sydney) whose inputs are inputs (JSON
// objects, comma-separated).
func reportScenario(inputs string) []byte {
	return []byte(`{"start":"2027-03-01T00:00:00Z","until":"2027-03-02T00:00:00Z","tick":"30s","businessUnits":[{"id":"bu-syd","name":"S","timeZone":"Australia/Sydney"}],"inputs":[` + inputs + `]}`)
}

// runReport parses and runs reportScenario(inputs) and returns its summary and output.
func runReport(t *testing.T, inputs string) (replay.SummaryLine, string) {
	t.Helper()
	sc, err := replay.Parse(reportScenario(inputs))
	if err != nil {
		t.Fatal(err)
	}
	sum, out := runScenario(t, sc)
	return sum, string(out)
}

func TestReportInputKindsAreValidated(t *testing.T) {
	t.Parallel()
	for name, in := range map[string]string{
		"two kinds":    `{"at":"2027-03-01T00:00:00Z","reportRunNow":{"subscriptionGuid":"x"},"reportRollout":{"businessUnitId":"bu-syd","mode":"Cutover"}}`,
		"no kind":      `{"at":"2027-03-01T00:00:00Z"}`,
		"unknown kind": `{"at":"2027-03-01T00:00:00Z","reportFoo":{}}`,
	} {
		if _, err := replay.Parse(reportScenario(in)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// Bad report inputs are answered, not fatal: each becomes an api line with a 4xx.
	sum, out := runReport(t, `{"at":"2027-03-01T00:00:00Z","reportRunNow":{"subscriptionGuid":"x","extra":1}},
	 {"at":"2027-03-01T00:00:01Z","reportRunNow":{"subscriptionGuid":"5e0c8a52-3b1f-4d6e-9a7c-2f4b6d8e0a1c"}},
	 {"at":"2027-03-01T00:00:02Z","oldScheduler":{"action":"steal","schedulerKey":"k"}},
	 {"at":"2027-03-01T00:00:03Z","reportRollout":{"businessUnitId":"bu-syd","mode":"Everything"}}`)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if sum.Rejected != 4 || len(lines) != 5 || !strings.Contains(lines[1], `"status":404`) || !strings.Contains(lines[3], `"status":422`) {
		t.Fatalf("rejected %d:\n%s", sum.Rejected, out)
	}
}
