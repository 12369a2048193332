package main

import (
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/logsink"
)

// TestReadmeManagementAPI runs every shell block of docs/management-api.md, "Management API by
// example" (moved there from the README with this test) against a live serve: business units (create with a Windows zone id, replace with
// If-Match), reminder settings (create from the file the guide names, publish, a send-time
// change re-timing the pending rows in place, list, deactivate), the support run-now of a
// row waiting for 2030 (then sent to the staff member and the unit's managers), and a report
// subscription (create, rollout, run-now of the current period, its runs, and its file,
// which counts the three reminders sent this week - a run right after creation is not empty).
// Timers tick every second.
func TestReadmeManagementAPI(t *testing.T) {
	const setting = `"guid":"7c9e2f4a-1b3d-4e5f-8a6b-9c0d1e2f3a4b"`
	runReadmeSection(t, readmeSection{
		File:    "docs/management-api.md",
		Heading: "Management API by example",
		Env:     map[string]string{"DueWorkSchedule": "*/1 * * * * *", "OutboxRelaySchedule": "*/1 * * * * *"},
		Want: []string{
			"",
			`{"id":"bu-per","name":"Perth","timeZone":"Australia/Perth","timeZoneGiven":"W. Australia Standard Time","roles":{"managers":["perth.manager@example.test"]},"version":1,`,
			`"name":"Perth office","timeZone":"Australia/Perth","roles":{"managers":["perth.manager@example.test","ops@example.test"]},"version":2,`,
			all(setting, `"propagation":{"change":["created"],"status":"Complete"`, `"sendLocalTime":"09:00"`, `"version":1}`, "\nevent 0: processed\n"),
			all(setting, `"propagation":{"change":["sendTime"],"status":"Complete","sourcesProcessed":1,"rowsDeactivated":0,"rowsEnsured":0,"rowsUpdatedInPlace":3}`, `"sendLocalTime":"08:30"`, `"version":2}`),
			all(`{"items":[{"businessUnitId":"bu-per"`, setting, `"isActive":true`),
			all("3 row(s), newest first", "RunNow: row 1 is Pending"),
			all(setting, `"isActive":false`, `"propagation":{"change":["deactivated"],"status":"Complete","sourcesProcessed":0,"rowsDeactivated":2`, `"version":3}`),
			all(`"guid":"5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d","businessUnitId":"bu-per"`, `"rollout":{"mode":"Shadow","source":"default"}`, `"mode":"RunNowAllowlist","version":1`),
			all(`"runKeyHash":"rfdc05fb38c9ea6195e982b5b"`, `"kind":"Manual"`, `"requestedBy":"you","reason":"the board meets today"`),
			all(`"runKeyHash":"rfdc05fb38c9ea6195e982b5b"`, `"kind":"Manual"`, `"status":"Completed"`, `"kind":"Scheduled","status":"Pending"`),
			all("periodStartUtc,periodEndUtc,businessUnitId,", ",bu-per,", ",Police check expiry (Perth),3,0,0,0"),
		},
		After: func(t *testing.T, n int, stdout, logs *logsink.Buffer) {
			if n == 6 { // the run-now row is sent to the staff member and the unit's managers
				for _, r := range []string{"liam.brown@example.test", "perth.manager@example.test", "ops@example.test"} {
					waitFor(t, "serve's stdout", stdout, logs, `"businessUnitId":"bu-per","channel":"log","recipient":"`+r+`"`, 20*time.Second)
				}
			}
		},
	})
}
