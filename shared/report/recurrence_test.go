package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/automation/automationtest"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/report"
)

func mustSchedule(t *testing.T, rule, dtStart, zone string) *report.Schedule {
	t.Helper()
	s, err := report.Compile(report.Recurrence{RRule: rule, DTStart: dtStart}, zone)
	if err != nil {
		t.Fatalf("compile %q: %v", rule, err)
	}
	return s
}

func utc(s string) time.Time { return automationtest.Instant(s).UTC() }

// nextN lists n successive occurrences after `after`.
func nextN(t *testing.T, s *report.Schedule, after time.Time, n int) []string {
	t.Helper()
	var out []string
	for i := 0; i < n; i++ {
		o, ok := s.Next(after)
		if !ok {
			break
		}
		out = append(out, o.Date.String()+" "+o.Time.String()+" "+o.At.Format(time.RFC3339))
		after = o.At
	}
	return out
}

// TestScheduleNext covers the product's rules on both sides of UTC: the April DST end in
// Sydney (08:00 stays 08:00, the UTC instant moves), spring-forward gaps (moved forward by
// the gap), fall-back overlaps (the earlier instant), a 30-minute DST zone, a fixed
// +05:45 zone, a transition at local midnight, and RFC 5545's "31st" rule.
func TestScheduleNext(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, rule, dtStart, zone, after string
		want                             []string
	}{
		{"weekly Monday 08:00 across Sydney's April DST end", "FREQ=WEEKLY;BYDAY=MO", "2027-03-01T08:00", "Australia/Sydney", "2027-03-25T00:00:00Z",
			[]string{"2027-03-29 08:00 2027-03-28T21:00:00Z", "2027-04-05 08:00 2027-04-04T22:00:00Z", "2027-04-12 08:00 2027-04-11T22:00:00Z"}},
		{"monthly on the 31st skips shorter months (RFC 5545)", "FREQ=MONTHLY;BYMONTHDAY=31", "2027-01-31T09:00", "Australia/Sydney", "2027-01-01T00:00:00Z",
			[]string{"2027-01-31 09:00 2027-01-30T22:00:00Z", "2027-03-31 09:00 2027-03-30T22:00:00Z", "2027-05-31 09:00 2027-05-30T23:00:00Z", "2027-07-31 09:00 2027-07-30T23:00:00Z"}},
		{"last day of the month with BYMONTHDAY=-1", "FREQ=MONTHLY;BYMONTHDAY=-1", "2027-01-31T09:00", "UTC", "2027-01-31T10:00:00Z",
			[]string{"2027-02-28 09:00 2027-02-28T09:00:00Z", "2027-03-31 09:00 2027-03-31T09:00:00Z"}},
		{"Sydney spring-forward gap moves 02:30 forward by the gap", "FREQ=DAILY", "2026-10-03T02:30", "Australia/Sydney", "2026-10-02T00:00:00Z",
			[]string{"2026-10-03 02:30 2026-10-02T16:30:00Z", "2026-10-04 02:30 2026-10-03T16:30:00Z", "2026-10-05 02:30 2026-10-04T15:30:00Z"}},
		{"Sydney fall-back overlap takes the earlier 02:30", "FREQ=DAILY", "2027-04-03T02:30", "Australia/Sydney", "2027-04-02T00:00:00Z",
			[]string{"2027-04-03 02:30 2027-04-02T15:30:00Z", "2027-04-04 02:30 2027-04-03T15:30:00Z", "2027-04-05 02:30 2027-04-04T16:30:00Z"}},
		{"New York spring-forward gap (west of UTC)", "FREQ=WEEKLY;BYDAY=SU", "2027-03-07T02:30", "America/New_York", "2027-03-01T00:00:00Z",
			[]string{"2027-03-07 02:30 2027-03-07T07:30:00Z", "2027-03-14 02:30 2027-03-14T07:30:00Z", "2027-03-21 02:30 2027-03-21T06:30:00Z"}},
		{"New York fall-back overlap takes the earlier 01:30", "FREQ=DAILY", "2027-11-06T01:30", "America/New_York", "2027-11-06T00:00:00Z",
			[]string{"2027-11-06 01:30 2027-11-06T05:30:00Z", "2027-11-07 01:30 2027-11-07T05:30:00Z", "2027-11-08 01:30 2027-11-08T06:30:00Z"}},
		{"Lord Howe's 30-minute DST shift", "FREQ=DAILY", "2026-10-03T02:15", "Australia/Lord_Howe", "2026-10-02T00:00:00Z",
			[]string{"2026-10-03 02:15 2026-10-02T15:45:00Z", "2026-10-04 02:15 2026-10-03T15:45:00Z", "2026-10-05 02:15 2026-10-04T15:15:00Z"}},
		{"fixed +05:45 offset", "FREQ=WEEKLY;BYDAY=MO", "2027-03-29T08:00", "Asia/Kathmandu", "2027-03-28T00:00:00Z",
			[]string{"2027-03-29 08:00 2027-03-29T02:15:00Z", "2027-04-05 08:00 2027-04-05T02:15:00Z"}},
		{"transition at local midnight (Santiago spring forward)", "FREQ=DAILY", "2026-09-05T00:30", "America/Santiago", "2026-09-05T00:00:00Z",
			[]string{"2026-09-05 00:30 2026-09-05T04:30:00Z", "2026-09-06 00:30 2026-09-06T04:30:00Z", "2026-09-07 00:30 2026-09-07T03:30:00Z"}},
		{"two wall times in one gap resolve to one instant, sent once", "FREQ=DAILY;BYHOUR=2,3;BYMINUTE=30", "2026-10-04T02:30", "Australia/Sydney", "2026-10-03T00:00:00Z",
			[]string{"2026-10-04 02:30 2026-10-03T16:30:00Z", "2026-10-05 02:30 2026-10-04T15:30:00Z", "2026-10-05 03:30 2026-10-04T16:30:00Z"}},
		{"UNTIL in UTC is an instant (inclusive), not a local wall time", "FREQ=WEEKLY;BYDAY=MO;UNTIL=20270328T210000Z", "2027-03-01T08:00", "Australia/Sydney", "2027-03-25T00:00:00Z",
			[]string{"2027-03-29 08:00 2027-03-28T21:00:00Z"}},
		{"COUNT ends the rule", "FREQ=DAILY;COUNT=2", "2027-01-01T09:00", "UTC", "2026-12-01T00:00:00Z",
			[]string{"2027-01-01 09:00 2027-01-01T09:00:00Z", "2027-01-02 09:00 2027-01-02T09:00:00Z"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := mustSchedule(t, tc.rule, tc.dtStart, tc.zone)
			got := nextN(t, s, utc(tc.after), len(tc.want)+1)
			if len(got) > len(tc.want) && !strings.Contains(tc.rule, "UNTIL") && !strings.Contains(tc.rule, "COUNT") {
				got = got[:len(tc.want)]
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Fatalf("occurrences:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tc.want, "\n"))
			}
		})
	}
}

func TestSchedulePrevAndContains(t *testing.T) {
	t.Parallel()
	s := mustSchedule(t, "FREQ=WEEKLY;BYDAY=MO", "2027-03-01T08:00", "Australia/Sydney")
	p, ok := s.Prev(utc("2027-04-04T22:00:00Z"))
	if !ok || p.At != utc("2027-03-28T21:00:00Z") {
		t.Fatalf("prev = %+v %v", p, ok)
	}
	if _, ok := s.Prev(utc("2027-02-28T21:00:00Z")); ok {
		t.Fatal("an occurrence before DTSTART")
	}
	if !s.Contains(localtime.MustDate("2027-04-05"), localtime.TimeOfDay{Hour: 8}) {
		t.Fatal("Monday 08:00 is an occurrence")
	}
	for _, bad := range []struct {
		d string
		h int
	}{{"2027-04-06", 8}, {"2027-04-05", 9}, {"2027-02-22", 8}} {
		if s.Contains(localtime.MustDate(bad.d), localtime.TimeOfDay{Hour: bad.h}) {
			t.Fatalf("%s %02d:00 is not an occurrence", bad.d, bad.h)
		}
	}
}

func TestScheduleValidate(t *testing.T) {
	t.Parallel()
	now := utc("2026-09-01T00:00:00Z")
	cases := []struct {
		name, rule, dtStart, field, contains string
	}{
		{"February 30th never occurs", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=30", "2026-09-01T08:00", "recurrence", "never occurs"},
		{"a minutely rule that never matches is rejected quickly", "FREQ=MINUTELY;INTERVAL=60;BYMONTH=4;BYMONTHDAY=31", "2026-09-01T08:00", "recurrence", "never occurs"},
		{"a rule that ended", "FREQ=DAILY;COUNT=3", "2026-01-01T08:00", "recurrence", "never occurs"},
		{"UNTIL in the past", "FREQ=WEEKLY;UNTIL=20260101T000000Z", "2025-06-01T08:00", "recurrence", "never occurs"},
		{"every 15 minutes is under the minimum", "FREQ=MINUTELY;INTERVAL=15", "2026-09-01T08:00", "recurrence.rrule", "minimum interval"},
		{"two runs 30 minutes apart each day", "FREQ=DAILY;BYHOUR=8;BYMINUTE=0,30", "2026-09-01T08:00", "recurrence.rrule", "minimum interval"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			// Compile refuses what it can tell without evaluating the rule; Validate the rest.
			s, err := report.Compile(report.Recurrence{RRule: tc.rule, DTStart: tc.dtStart}, "Australia/Sydney")
			if err == nil {
				err = s.Validate(now, time.Hour)
			}
			if time.Since(start) > 20*time.Second {
				t.Errorf("validation took %s", time.Since(start))
			}
			var ae *automation.Error
			if err == nil || !automation.IsInvalid(err) || !asErr(err, &ae) || ae.Field != tc.field || !strings.Contains(err.Error(), tc.contains) {
				t.Fatalf("err = %v, want %s error about %q", err, tc.field, tc.contains)
			}
		})
	}
	for _, ok := range []string{"FREQ=HOURLY", "FREQ=WEEKLY;BYDAY=MO", "FREQ=MONTHLY;BYMONTHDAY=31", "FREQ=YEARLY;BYMONTH=2;BYMONTHDAY=29"} {
		if err := mustSchedule(t, ok, "2026-09-01T08:00", "Australia/Sydney").Validate(now, time.Hour); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

func TestCompileRejects(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ rule, dtStart, zone, field string }{
		"empty rule":       {"", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"unknown property": {"FREQ=WEEKLY;FOO=1", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"no FREQ":          {"BYDAY=MO", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"DTSTART inside":   {"DTSTART:20260901T080000\nRRULE:FREQ=DAILY", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"TZID inside":      {"FREQ=DAILY;TZID=Europe/Paris", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"secondly":         {"FREQ=SECONDLY", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"bysecond":         {"FREQ=DAILY;BYSECOND=30", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"bad BYHOUR":       {"FREQ=DAILY;BYHOUR=25", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"bad BYDAY":        {"FREQ=WEEKLY;BYDAY=XX", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"dtStart offset":   {"FREQ=DAILY", "2026-09-01T08:00+10:00", "UTC", "recurrence.dtStart"},
		"dtStart date":     {"FREQ=DAILY", "2026-02-30T08:00", "UTC", "recurrence.dtStart"},
		"dtStart missing":  {"FREQ=DAILY", "", "UTC", "recurrence.dtStart"},
		"unknown zone":     {"FREQ=DAILY", "2026-09-01T08:00", "Mars/Olympus", "businessUnitId"},
		// rrule-go takes a zero DTSTART as "now" on the host's clock.
		"dtStart year 1":  {"FREQ=DAILY", "0001-01-01T00:00", "UTC", "recurrence.dtStart"},
		"dtStart 1969":    {"FREQ=HOURLY", "1969-12-31T23:00", "UTC", "recurrence.dtStart"},
		"COUNT=0":         {"FREQ=DAILY;COUNT=0", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"INTERVAL=0":      {"FREQ=DAILY;INTERVAL=0", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"INTERVAL=+2":     {"FREQ=DAILY;INTERVAL=+2", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"COUNT too large": {"FREQ=HOURLY;COUNT=10001", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"FREQ twice":      {"FREQ=DAILY;FREQ=HOURLY", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"BYDAY twice":     {"FREQ=WEEKLY;BYDAY=MO;BYDAY=TU", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		// rrule-go panics (index out of range) on these; found by fuzzing Compile+Validate.
		"53rd Monday of a month":          {"FREQ=MONTHLY;BYDAY=53MO", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"-6th Friday of a month":          {"FREQ=MONTHLY;BYDAY=-6FR", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"6th Monday of February (yearly)": {"FREQ=YEARLY;BYMONTH=2;BYDAY=6MO", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		"BYEASTER (not RFC 5545)":         {"FREQ=YEARLY;BYEASTER=400", "2026-09-01T08:00", "UTC", "recurrence.rrule"},
		// No period ever has a second run time: rrule-go walked every minute to year 9999.
		"minutely BYSETPOS=2":       {"FREQ=MINUTELY;BYSETPOS=2", "2026-09-01T08:00", "UTC", "recurrence"},
		"hourly BYSETPOS=-2":        {"FREQ=HOURLY;BYSETPOS=-2", "2026-09-01T08:00", "UTC", "recurrence"},
		"daily BYSETPOS past times": {"FREQ=DAILY;BYHOUR=8,20;BYSETPOS=3,-3", "2026-09-01T08:00", "UTC", "recurrence"},
	}
	for name, tc := range cases {
		_, err := report.Compile(report.Recurrence{RRule: tc.rule, DTStart: tc.dtStart}, tc.zone)
		var ae *automation.Error
		if err == nil || !asErr(err, &ae) || ae.Field != tc.field {
			t.Errorf("%s: err = %v, want an invalid %s", name, err, tc.field)
		}
	}
	if _, err := report.Compile(report.Recurrence{RRule: "RRULE:FREQ=WEEKLY;BYDAY=MO", DTStart: "2026-09-07T08:00"}, "UTC"); err != nil {
		t.Errorf("the RRULE: prefix is allowed: %v", err)
	}
	// RFC 5545 section 3.1: names and values are case-insensitive.
	s, err := report.Compile(report.Recurrence{RRule: "rrule:freq=weekly;byday=mo;until=20261231t000000z", DTStart: "2026-09-07T08:00"}, "UTC")
	if err != nil {
		t.Fatalf("lower-case rule: %v", err)
	}
	if o, ok := s.Next(utc("2026-09-08T00:00:00Z")); !ok || o.At != utc("2026-09-14T08:00:00Z") {
		t.Errorf("lower-case rule: next = %+v %v", o, ok)
	}
}

// BenchmarkScheduleNext measures finding the next run of a weekly rule ten years after its
// DTSTART, of an hourly rule one year after, and of an hourly rule from 1970 (the iteration
// starts near the instant asked about, so the age of DTSTART does not matter).
func BenchmarkScheduleNext(b *testing.B) {
	for _, bc := range []struct{ name, rule, dtStart, after string }{
		{"weekly-10y", "FREQ=WEEKLY;BYDAY=MO", "2027-03-01T08:00", "2037-03-20T00:00:00Z"},
		{"hourly-1y", "FREQ=HOURLY", "2027-03-01T08:00", "2028-03-20T00:00:00Z"},
		{"hourly-since-1970", "FREQ=HOURLY", "1970-01-01T00:00", "2028-03-20T00:00:00Z"},
	} {
		s, err := report.Compile(report.Recurrence{RRule: bc.rule, DTStart: bc.dtStart}, "Australia/Sydney")
		if err != nil {
			b.Fatal(err)
		}
		after := utc(bc.after)
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				if _, ok := s.Next(after); !ok {
					b.Fatal("no next")
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/next")
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "next/s")
		})
	}
}

// TestRulesThatNeverReachTheirClockAreRefused: rrule-go looks for the next hour (minute) a
// rule allows without a bound, so FREQ=HOURLY;INTERVAL=2;BYHOUR=1 from an even hour spun a
// core forever on create (and in every poll, had it been stored). Such rules, and INTERVALs
// large enough to overflow rrule-go's date arithmetic (FREQ=MONTHLY;INTERVAL=2^63-1
// panicked), are a 4xx now; rules whose clock does reach an allowed value still work.
func TestRulesThatNeverReachTheirClockAreRefused(t *testing.T) {
	t.Parallel()
	now := utc("2026-09-01T00:00:00Z")
	check := func(rule, dtStart string) error {
		done := make(chan error, 1)
		go func() {
			s, err := report.Compile(report.Recurrence{RRule: rule, DTStart: dtStart}, "Australia/Sydney")
			if err == nil {
				err = s.Validate(now, time.Hour)
			}
			done <- err
		}()
		select {
		case err := <-done:
			return err
		case <-time.After(time.Minute):
			t.Fatalf("%s from %s: still evaluating after a minute (spins forever)", rule, dtStart)
			return nil
		}
	}
	for _, tc := range []struct{ rule, dtStart, field string }{
		{"FREQ=HOURLY;INTERVAL=2;BYHOUR=1", "2026-09-01T00:00", "recurrence"},
		{"FREQ=HOURLY;INTERVAL=24;BYHOUR=5", "2026-09-01T00:00", "recurrence"},
		{"FREQ=MINUTELY;INTERVAL=60;BYMINUTE=30", "2026-09-01T08:00", "recurrence"},
		{"FREQ=MINUTELY;INTERVAL=120;BYHOUR=1", "2026-09-01T00:00", "recurrence"},
		{"FREQ=MONTHLY;INTERVAL=9223372036854775807", "2026-09-01T00:00", "recurrence.rrule"},
		{"FREQ=DAILY;INTERVAL=1000001", "2026-09-01T00:00", "recurrence.rrule"},
	} {
		err := check(tc.rule, tc.dtStart)
		var ae *automation.Error
		if err == nil || !asErr(err, &ae) || ae.Field != tc.field {
			t.Errorf("%s from %s: err = %v, want an invalid %s", tc.rule, tc.dtStart, err, tc.field)
		}
	}
	for _, tc := range []struct{ rule, dtStart, next string }{
		{"FREQ=HOURLY;INTERVAL=2;BYHOUR=1,5", "2026-09-01T01:00", "2026-09-01T15:00:00Z"},     // 01:00 AEST
		{"FREQ=MINUTELY;INTERVAL=90;BYMINUTE=30", "2026-09-01T00:00", "2026-09-01T00:30:00Z"}, // 10:30 AEST
		{"FREQ=MINUTELY;INTERVAL=1000000", "2026-09-01T00:00", "2028-07-26T00:40:00Z"},        // 10:40 AEST
	} {
		if err := check(tc.rule, tc.dtStart); err != nil {
			t.Errorf("%s from %s: %v", tc.rule, tc.dtStart, err)
			continue
		}
		if o, ok := mustSchedule(t, tc.rule, tc.dtStart, "Australia/Sydney").Next(now.Add(-time.Second)); !ok || o.At != utc(tc.next) {
			t.Errorf("%s from %s: next = %+v %v, want %s", tc.rule, tc.dtStart, o, ok, tc.next)
		}
	}
}
