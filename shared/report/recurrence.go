package report

import (
	"fmt"
	"strings"
	"time"

	"github.com/teambition/rrule-go"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
)

// Recurrence is when a subscription runs: an RFC 5545 RRULE value evaluated on the business
// unit's local wall clock, starting at DTStart (ARCHITECTURE §7). Example: weekly on Monday
// at 08:00 local is {"rrule": "FREQ=WEEKLY;BYDAY=MO", "dtStart": "2026-09-07T08:00"}.
//
// RFC 5545 semantics apply as written: "FREQ=MONTHLY;BYMONTHDAY=31" runs only in months that
// have a 31st (use BYMONTHDAY=-1 for the last day of every month). The time zone is always
// the business unit's, so DTSTART and TZID may not appear inside RRule; an UNTIL written in
// UTC ("...Z") is converted to the local wall clock, any other UNTIL is local.
type Recurrence struct {
	RRule   string `json:"rrule"`
	DTStart string `json:"dtStart"` // local "YYYY-MM-DDTHH:MM"
}

// Evaluation bounds.
const (
	// NeverOccursHorizon: a rule with no occurrence within this time after "now" is rejected
	// as never occurring (it would otherwise be searched until year 9999).
	NeverOccursHorizon = 30 * 365 * 24 * time.Hour
	// intervalCheckHorizon and intervalCheckCount bound the minimum-interval check: the
	// first occurrences of the rule, up to this many or this long after DTSTART.
	intervalCheckHorizon = 10 * 365 * 24 * time.Hour
	intervalCheckCount   = 1000
	// maxShift bounds how far the DST product rule can move a wall time (a skipped day).
	maxShift = 26 * time.Hour
)

// Occurrence is one run time: the local intent (date and wall time in the zone) and the UTC
// instant the DST product rule gives for it (localtime.Resolve, ARCHITECTURE §4.3).
type Occurrence struct {
	Date localtime.Date
	Time localtime.TimeOfDay
	At   time.Time // UTC
}

// Schedule is a compiled Recurrence in one zone.
//
// Occurrences are computed by rrule-go on a floating clock - the local wall time written as
// if it were UTC, which has no DST - and each wall time is then converted with
// localtime.Resolve: a wall time in a spring-forward gap moves forward by the gap, an
// ambiguous one takes the earlier instant. Go's time.Date never decides a gap or an overlap.
type Schedule struct {
	zoneID  string
	loc     *time.Location
	opts    rrule.ROption // floating clock
	until   time.Time     // floating; zero when the rule has none
	dtstart time.Time     // floating
}

// Compile parses r for the zone zoneID. Errors are automation.Invalid naming the field
// ("recurrence.rrule", "recurrence.dtStart").
func Compile(r Recurrence, zoneID string) (*Schedule, error) {
	loc, err := localtime.LoadZone(zoneID)
	if err != nil {
		return nil, automation.Invalid("businessUnitId", "the business unit's time zone is unusable: %v", err)
	}
	d, t, err := parseLocalDateTime(r.DTStart)
	if err != nil {
		return nil, automation.Invalid("recurrence.dtStart", "%v", err)
	}
	raw := strings.TrimSpace(r.RRule)
	raw = strings.TrimPrefix(raw, "RRULE:")
	switch up := strings.ToUpper(raw); {
	case raw == "":
		return nil, automation.Invalid("recurrence.rrule", "is required (an RFC 5545 RRULE such as FREQ=WEEKLY;BYDAY=MO)")
	case len(raw) > 500:
		return nil, automation.Invalid("recurrence.rrule", "is longer than 500 characters")
	case strings.ContainsAny(raw, "\r\n"):
		return nil, automation.Invalid("recurrence.rrule", "must be one RRULE value, without DTSTART or other lines")
	case strings.Contains(up, "DTSTART") || strings.Contains(up, "TZID"):
		return nil, automation.Invalid("recurrence.rrule", "may not contain DTSTART or TZID: the start is dtStart and the zone is the business unit's")
	}
	opts, err := rrule.StrToROptionInLocation(raw, time.UTC)
	if err != nil {
		return nil, automation.Invalid("recurrence.rrule", "is not a valid RFC 5545 RRULE: %v", err)
	}
	if opts.Freq == rrule.SECONDLY {
		return nil, automation.Invalid("recurrence.rrule", "FREQ=SECONDLY is not supported: reports run at whole minutes")
	}
	for _, s := range opts.Bysecond {
		if s != 0 {
			return nil, automation.Invalid("recurrence.rrule", "BYSECOND other than 0 is not supported: reports run at whole minutes")
		}
	}
	if opts.Count < 0 || opts.Interval < 0 {
		return nil, automation.Invalid("recurrence.rrule", "COUNT and INTERVAL must be positive")
	}
	sch := &Schedule{zoneID: zoneID, loc: loc}
	sch.dtstart = time.Date(d.Year, d.Month, d.Day, t.Hour, t.Minute, 0, 0, time.UTC)
	opts.Dtstart = sch.dtstart
	if !opts.Until.IsZero() {
		if untilIsUTC(raw) {
			// An UNTIL instant: compare it on the floating clock as the local wall time it is.
			w := opts.Until.In(loc)
			opts.Until = time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), 0, time.UTC)
		}
		sch.until = opts.Until
	}
	if _, err := rrule.NewRRule(*opts); err != nil {
		return nil, automation.Invalid("recurrence.rrule", "%v", err)
	}
	sch.opts = *opts
	return sch, nil
}

func untilIsUTC(raw string) bool {
	for _, part := range strings.Split(raw, ";") {
		k, v, _ := strings.Cut(part, "=")
		if strings.EqualFold(strings.TrimSpace(k), "UNTIL") {
			return strings.HasSuffix(strings.ToUpper(strings.TrimSpace(v)), "Z")
		}
	}
	return false
}

// parseLocalDateTime reads "YYYY-MM-DDTHH:MM".
func parseLocalDateTime(s string) (localtime.Date, localtime.TimeOfDay, error) {
	ds, ts, ok := strings.Cut(s, "T")
	if !ok {
		return localtime.Date{}, localtime.TimeOfDay{}, fmt.Errorf("must be a local date and time \"YYYY-MM-DDTHH:MM\" (no offset), got %q", s)
	}
	d, err := localtime.ParseDate(ds)
	if err != nil {
		return d, localtime.TimeOfDay{}, err
	}
	t, err := localtime.ParseTimeOfDay(ts)
	return d, t, err
}

// ZoneID is the schedule's IANA zone.
func (s *Schedule) ZoneID() string { return s.zoneID }

// Location is the schedule's zone.
func (s *Schedule) Location() *time.Location { return s.loc }

// iterator returns an rrule iterator on the floating clock bounded by until (floating):
// the rule's own UNTIL or until, whichever is earlier. The bound keeps a rule that never
// matches from being searched to year 9999.
func (s *Schedule) iterator(until time.Time) func() (time.Time, bool) {
	o := s.opts
	if o.Until.IsZero() || until.Before(o.Until) {
		o.Until = until
	}
	r, err := rrule.NewRRule(o)
	if err != nil { // validated by Compile; only the bound changed
		return func() (time.Time, bool) { return time.Time{}, false }
	}
	return r.Iterator()
}

// floating returns the local wall time of instant t on the floating clock.
func (s *Schedule) floating(t time.Time) time.Time {
	w := t.In(s.loc)
	return time.Date(w.Year(), w.Month(), w.Day(), w.Hour(), w.Minute(), w.Second(), w.Nanosecond(), time.UTC)
}

// occurrence resolves a floating wall time with the DST product rule.
func (s *Schedule) occurrence(w time.Time) Occurrence {
	d := localtime.Date{Year: w.Year(), Month: w.Month(), Day: w.Day()}
	t := localtime.TimeOfDay{Hour: w.Hour(), Minute: w.Minute()}
	return Occurrence{Date: d, Time: t, At: localtime.Resolve(s.loc, d, t)}
}

// Next returns the earliest occurrence whose instant is after `after` (UTC), searching up to
// NeverOccursHorizon ahead; ok is false when there is none (the rule ended, or never matches).
// The earliest instant is not always the earliest wall time (a wall time in a gap moves
// forward), so wall times up to maxShift past the first hit are compared too.
func (s *Schedule) Next(after time.Time) (Occurrence, bool) {
	next := s.iterator(s.floating(after).Add(NeverOccursHorizon))
	lo := s.floating(after).Add(-maxShift)
	var best Occurrence
	found := false
	for {
		w, ok := next()
		if !ok || (found && w.After(s.floating(best.At).Add(maxShift))) {
			return best, found
		}
		if w.Before(lo) {
			continue
		}
		o := s.occurrence(w)
		if o.At.After(after) && (!found || o.At.Before(best.At)) {
			best, found = o, true
		}
	}
}

// Prev returns the latest occurrence whose instant is before `before` (UTC); ok is false
// when there is none.
func (s *Schedule) Prev(before time.Time) (Occurrence, bool) {
	next := s.iterator(s.floating(before).Add(maxShift))
	var best Occurrence
	found := false
	for {
		w, ok := next()
		if !ok {
			return best, found
		}
		o := s.occurrence(w)
		if o.At.Before(before) && (!found || o.At.After(best.At)) {
			best, found = o, true
		}
	}
}

// Contains reports whether the local intent (date, wall time) is an occurrence of the rule.
func (s *Schedule) Contains(d localtime.Date, t localtime.TimeOfDay) bool {
	w := time.Date(d.Year, d.Month, d.Day, t.Hour, t.Minute, 0, 0, time.UTC)
	next := s.iterator(w)
	for {
		x, ok := next()
		if !ok {
			return false
		}
		if x.Equal(w) {
			return true
		}
	}
}

// MinInterval returns the shortest wall-clock gap between consecutive occurrences among the
// rule's first intervalCheckCount occurrences within intervalCheckHorizon of DTSTART (0
// when it has fewer than two there). The gap is measured on the rule's own clock: DST
// changes are the product rule's doing, not the subscriber's.
func (s *Schedule) MinInterval() time.Duration {
	next := s.iterator(s.dtstart.Add(intervalCheckHorizon))
	var prev time.Time
	var min time.Duration
	for i := 0; i < intervalCheckCount; i++ {
		w, ok := next()
		if !ok {
			break
		}
		if i > 0 {
			if g := w.Sub(prev); min == 0 || g < min {
				min = g
			}
		}
		prev = w
	}
	return min
}

// Validate checks that the schedule occurs after now and never more often than
// minInterval. Errors are automation.Invalid naming "recurrence" or "recurrence.rrule".
func (s *Schedule) Validate(now time.Time, minInterval time.Duration) error {
	if _, ok := s.Next(now); !ok {
		return automation.Invalid("recurrence", "never occurs after %s in %s (checked %d years ahead): the rule ended, or matches no date",
			now.UTC().Format(time.RFC3339), s.zoneID, int(NeverOccursHorizon/(365*24*time.Hour)))
	}
	if g := s.MinInterval(); g > 0 && g < minInterval {
		return automation.Invalid("recurrence.rrule", "occurs every %s at times; the minimum interval between runs is %s", g, minInterval)
	}
	return nil
}
