package quiethours_test

import (
	"errors"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/automation/automationtest"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/quiethours"
)

func tod(s string) localtime.TimeOfDay {
	t, err := localtime.ParseTimeOfDay(s)
	if err != nil {
		panic(err)
	}
	return t
}

var utc = automationtest.Instant

// The expected instants come from the team's DST oracle script (Python's zoneinfo), not
// from our Go code: e.g. `tzoracle.py Australia/Sydney 2026-10-04 02:30` gives
// 2026-10-03T16:30:00Z (the end in the spring-forward gap moved forward an hour).
func TestDecide(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, zone, start, end, now string
		transactional               bool
		wait                        bool
		until                       string
	}{
		{"inside, before midnight", "Australia/Sydney", "21:00", "08:00", "2026-10-03T12:00:00Z", false, true, "2026-10-03T21:00:00Z"},
		{"at the start instant", "Australia/Sydney", "22:00", "08:00", "2026-10-03T12:00:00Z", false, true, "2026-10-03T21:00:00Z"},
		{"transactional passes", "Australia/Sydney", "21:00", "08:00", "2026-10-03T12:00:00Z", true, false, ""},
		{"after the window, DST day", "Australia/Sydney", "21:00", "08:00", "2026-10-03T21:00:00Z", false, false, ""},
		{"end in the spring-forward gap moves forward", "Australia/Sydney", "22:00", "02:30", "2026-10-03T15:30:00Z", false, true, "2026-10-03T16:30:00Z"},
		{"end in the fall-back overlap takes the first instant", "Australia/Sydney", "22:00", "02:30", "2026-04-04T15:00:00Z", false, true, "2026-04-04T15:30:00Z"},
		{"after the first 02:30 of the overlap", "Australia/Sydney", "22:00", "02:30", "2026-04-04T15:45:00Z", false, false, ""},
		{"before the window opens", "Australia/Sydney", "22:00", "02:30", "2026-04-04T10:59:00Z", false, false, ""},
		{"opens at 22:00 local", "Australia/Sydney", "22:00", "02:30", "2026-04-04T11:00:00Z", false, true, "2026-04-04T15:30:00Z"},
		{"New York, end in the gap", "America/New_York", "21:00", "02:15", "2026-03-08T06:00:00Z", false, true, "2026-03-08T07:15:00Z"},
		{"New York, opening the evening before", "America/New_York", "21:00", "02:15", "2026-03-08T02:00:00Z", false, true, "2026-03-08T07:15:00Z"},
		{"New York, fall back, end ambiguous", "America/New_York", "21:00", "01:30", "2026-11-01T01:00:00Z", false, true, "2026-11-01T05:30:00Z"},
		{"a window within one day", "Asia/Ho_Chi_Minh", "12:00", "13:00", "2026-06-01T05:30:00Z", false, true, "2026-06-01T06:00:00Z"},
		{"Ho Chi Minh City overnight", "Asia/Ho_Chi_Minh", "21:00", "08:00", "2026-06-01T14:00:00Z", false, true, "2026-06-02T01:00:00Z"},
		{"at the end instant it may go", "Asia/Ho_Chi_Minh", "21:00", "08:00", "2026-06-02T01:00:00Z", false, false, ""},
	}
	for _, c := range cases {
		w := quiethours.Window{Start: tod(c.start), End: tod(c.end), ZoneID: c.zone}
		d, err := w.Decide(utc(c.now), c.transactional)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if d.Wait != c.wait {
			t.Errorf("%s: wait %v, want %v (until %s)", c.name, d.Wait, c.wait, d.Until)
			continue
		}
		if c.wait && !d.Until.Equal(utc(c.until)) {
			t.Errorf("%s: until %s, want %s", c.name, d.Until.Format(time.RFC3339), c.until)
		}
	}
}

// Bad windows name the member.
func TestValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		w     quiethours.Window
		field string
	}{
		{quiethours.Window{Start: tod("21:00"), End: tod("21:00"), ZoneID: "Australia/Sydney"}, "quietHours.end"},
		{quiethours.Window{Start: tod("21:00"), End: tod("08:00"), ZoneID: "Mars/Olympus_Mons"}, "quietHours.timeZoneId"},
		{quiethours.Window{Start: localtime.TimeOfDay{Hour: 25}, End: tod("08:00"), ZoneID: "UTC"}, "quietHours.start"},
	} {
		err := c.w.Validate()
		var ae *automation.Error
		if !errors.As(err, &ae) || ae.Code != automation.CodeInvalidInput || !automationtest.NamesField(ae, c.field) {
			t.Errorf("%+v: %v, want InvalidInput naming %s", c.w, err, c.field)
		}
		if _, err := c.w.Decide(utc("2026-06-01T00:00:00Z"), false); err == nil {
			t.Errorf("%+v: Decide accepted a bad window", c.w)
		}
	}
}
