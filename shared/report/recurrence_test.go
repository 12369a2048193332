package report_test

import (
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
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

func utc(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t.UTC()
}

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
			s := mustSchedule(t, tc.rule, tc.dtStart, "Australia/Sydney")
			start := time.Now()
			err := s.Validate(now, time.Hour)
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
}

// BenchmarkScheduleNext measures finding the next run of a weekly rule ten years after its
// DTSTART (rrule-go iterates from DTSTART) and of an hourly rule one year after.
func BenchmarkScheduleNext(b *testing.B) {
	for _, bc := range []struct{ name, rule, dtStart, after string }{
		{"weekly-10y", "FREQ=WEEKLY;BYDAY=MO", "2027-03-01T08:00", "2037-03-20T00:00:00Z"},
		{"hourly-1y", "FREQ=HOURLY", "2027-03-01T08:00", "2028-03-20T00:00:00Z"},
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
		})
	}
}
