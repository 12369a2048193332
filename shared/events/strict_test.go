package events_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
)

// A CloudEvent naming "id" twice was accepted with the last value: the id is the dedupe
// key, so a repeated member (anywhere) is refused, like a lone surrogate escape that would
// be stored as U+FFFD. Names differing in case are different members of a map.
func TestParseRefusesRepeatedMembersAndLoneSurrogates(t *testing.T) {
	t.Parallel()
	const tail = `"source":"/hr","type":"Staff.Upserted","businessunitid":"bu-1","entitytype":"Staff","entityguid":"g-1","revision":1`
	for name, c := range map[string]struct{ doc, field string }{
		"id twice":            {`{"specversion":"1.0","id":"a","id":"b",` + tail + `,"data":{}}`, "id"},
		"businessunit twice":  {`{"specversion":"1.0","id":"a",` + tail + `,"businessunitid":"bu-2","data":{}}`, "businessunitid"},
		"data member twice":   {`{"specversion":"1.0","id":"a",` + tail + `,"data":{"email":"x","email":"y"}}`, "data.email"},
		"lone high surrogate": {`{"specversion":"1.0","id":"a\ud800",` + tail + `,"data":{}}`, "event"},
		"lone low surrogate":  {`{"specversion":"1.0","id":"a",` + tail + `,"data":{"name":"\udc00"}}`, "event"},
	} {
		_, err := events.Parse([]byte(c.doc))
		var ae *automation.Error
		if !errors.As(err, &ae) || ae.Field != c.field {
			t.Errorf("%s: err = %v, want invalid %q", name, err, c.field)
		}
	}
	ev, err := events.Parse([]byte(`{"specversion":"1.0","id":"a\ud83d\ude00",` + tail + `,"data":{"email":"x","Email":"y"}}`))
	if err != nil || ev.ID != "a😀" || ev.Data["Email"] != "y" {
		t.Errorf("a surrogate pair and names differing in case: %+v %v", ev, err)
	}
}

// id, source and subject were unbounded (100,000 characters were accepted); they are bounded
// by the columns that store them, counted in UTF-16 code units like nvarchar.
func TestParseBoundsIDSourceSubject(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		field string
		max   int
	}{{"id", events.MaxIDLength}, {"source", events.MaxSourceLength}, {"subject", events.MaxSubjectLength}} {
		at := func(n int, unit string) error {
			m := validEvent()
			m[c.field] = strings.Repeat(unit, n)
			_, err := events.Parse(encode(t, m))
			return err
		}
		if err := at(c.max, "a"); err != nil {
			t.Errorf("%s of %d characters: %v", c.field, c.max, err)
		}
		for _, tooLong := range []error{at(c.max+1, "a"), at(c.max/2+1, "😀"), at(100_000, "a")} {
			var ae *automation.Error
			if !errors.As(tooLong, &ae) || ae.Field != c.field || !strings.Contains(ae.Message, "longer than") {
				t.Errorf("%s over %d: err = %v", c.field, c.max, tooLong)
			}
		}
	}
}

// businessunitid and entityguid were accepted up to 200 characters, but every SQL Server
// column they land in is nvarchar(100): the event passed Parse and failed in the store. They
// (and entitytype, stored the same way) are bounded at 100 when parsed.
func TestParseBoundsTokenExtensionsByTheirColumns(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		field string
		max   int
	}{{"businessunitid", events.MaxBusinessUnitIDLength}, {"entitytype", events.MaxEntityTypeLength}, {"entityguid", events.MaxEntityGuidLength}} {
		if c.max != 100 {
			t.Errorf("%s: bound %d, the columns hold 100", c.field, c.max)
		}
		at := func(n int) (events.Event, error) {
			m := validEvent()
			m[c.field] = strings.Repeat("a", n)
			return events.Parse(encode(t, m))
		}
		if ev, err := at(c.max); err != nil || len(ev.BusinessUnitID)+len(ev.EntityType)+len(ev.EntityGuid) < c.max {
			t.Errorf("%s of %d characters: %+v %v", c.field, c.max, ev, err)
		}
		for _, n := range []int{c.max + 1, 200, 100_000} {
			_, err := at(n)
			var ae *automation.Error
			if !errors.As(err, &ae) || ae.Field != c.field || !strings.Contains(ae.Message, "longer than 100") {
				t.Errorf("%s of %d characters: err = %v", c.field, n, err)
			}
		}
	}
}
