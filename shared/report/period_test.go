package report_test

import (
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/report"
)

// The named periods of a run-now follow the subscription's own schedule (weekly, Monday
// 08:00 Sydney): the current period so far, the last full one, and - before the rule's
// first occurrence or in its first period - periods as long as its first interval.
func TestNamedPeriods(t *testing.T) {
	t.Parallel()
	sched, err := report.Compile(weekly().Recurrence, "Australia/Sydney")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, now  string
		period     report.Period
		start, end string
	}{
		{"current", "2027-03-24T03:00:00Z", report.PeriodCurrent, "2027-03-21T21:00:00Z", "2027-03-24T03:00:00Z"},
		{"default is current", "2027-03-24T03:00:00Z", "", "2027-03-21T21:00:00Z", "2027-03-24T03:00:00Z"},
		{"previous", "2027-03-24T03:00:00Z", report.PeriodPrevious, "2027-03-14T21:00:00Z", "2027-03-21T21:00:00Z"},
		{"previous in the first period", "2027-03-03T00:00:00Z", report.PeriodPrevious, "2027-02-21T21:00:00Z", "2027-02-28T21:00:00Z"},
		{"current before dtStart", "2027-02-10T00:00:00Z", report.PeriodCurrent, "2027-02-03T00:00:00Z", "2027-02-10T00:00:00Z"},
		{"previous before dtStart", "2027-02-10T00:00:00Z", report.PeriodPrevious, "2027-01-27T00:00:00Z", "2027-02-03T00:00:00Z"},
		// Across the end of DST (4 April 2027): the week has 169 hours.
		{"previous across DST", "2027-04-06T00:00:00Z", report.PeriodPrevious, "2027-03-28T21:00:00Z", "2027-04-04T22:00:00Z"},
	}
	for _, tc := range cases {
		start, end, err := report.NamedPeriod(sched, tc.period, utc(tc.now))
		if err != nil || start != utc(tc.start) || end != utc(tc.end) {
			t.Errorf("%s: [%s, %s) %v, want [%s, %s)", tc.name, start, end, err, tc.start, tc.end)
		}
	}
	if _, _, err := report.NamedPeriod(sched, "last-week", utc("2027-03-24T03:00:00Z")); !automation.IsInvalid(err) {
		t.Errorf("unknown period: %v", err)
	}
}

// A run right after a subscription is created reports on a whole period of what already
// happened (it used to start at the subscription's creation: an empty CSV), and the period
// is chosen by name or given as instants, never both.
func TestRunNowRightAfterCreateCoversAWholePeriod(t *testing.T) {
	t.Parallel()
	now := utc("2027-02-10T00:00:00Z") // dtStart (1 March) is still ahead
	e := newEnv(t, now)
	e.create(t, subGuid, weekly())
	e.setMode(t, subGuid, report.ModeRunNowAllowlist)
	cur, err := e.svc.RunNow(ctx, automation.AllBusinessUnits(), subGuid, "8b0a4c1e-2d3f-4a5b-9c6d-7e8f9a0b1c21", report.RunNowInput{}, "ops")
	if err != nil || cur.PeriodEndUTC != now || cur.PeriodStartUTC != now.Add(-7*24*time.Hour) {
		t.Fatalf("run-now right after create: [%s, %s) %v", cur.PeriodStartUTC, cur.PeriodEndUTC, err)
	}
	prev, err := e.svc.RunNow(ctx, automation.AllBusinessUnits(), subGuid, "8b0a4c1e-2d3f-4a5b-9c6d-7e8f9a0b1c22", report.RunNowInput{Period: report.PeriodPrevious}, "ops")
	if err != nil || prev.PeriodEndUTC != now.Add(-7*24*time.Hour) || prev.PeriodStartUTC != now.Add(-14*24*time.Hour) {
		t.Fatalf("previous period: [%s, %s) %v", prev.PeriodStartUTC, prev.PeriodEndUTC, err)
	}
	both := report.RunNowInput{Period: report.PeriodCurrent, PeriodEndUTC: ptr(now)}
	if _, err := e.svc.RunNow(ctx, automation.AllBusinessUnits(), subGuid, "8b0a4c1e-2d3f-4a5b-9c6d-7e8f9a0b1c23", both, "ops"); !automation.IsInvalid(err) {
		t.Fatalf("a named period with instants: %v", err)
	}
	if _, err := e.svc.RunNow(ctx, automation.AllBusinessUnits(), subGuid, "8b0a4c1e-2d3f-4a5b-9c6d-7e8f9a0b1c24", report.RunNowInput{Period: "yesterday"}, "ops"); !automation.IsInvalid(err) {
		t.Fatalf("an unknown period: %v", err)
	}
}
