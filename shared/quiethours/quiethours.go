package quiethours

import (
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
)

// Window is a quiet-hours window in a zone.
type Window struct {
	Start  localtime.TimeOfDay // local wall time the window opens
	End    localtime.TimeOfDay // local wall time it closes (the next day when not after Start)
	ZoneID string              // IANA zone (the recipient's, else the unit's)
}

// Validate checks w: both ends valid and different (equal ends would be an empty or an
// everlasting window), and a zone that exists. Errors are automation.Invalid naming
// quietHours.start, quietHours.end or quietHours.timeZoneId.
func (w Window) Validate() error {
	var errs []error
	if !w.Start.IsValid() {
		errs = append(errs, automation.Invalid("quietHours.start", "is not a local time HH:MM"))
	}
	if !w.End.IsValid() {
		errs = append(errs, automation.Invalid("quietHours.end", "is not a local time HH:MM"))
	}
	if w.Start.IsValid() && w.End.IsValid() && w.Start == w.End {
		errs = append(errs, automation.Invalid("quietHours.end", "equals the start (%s): a window needs two different ends", w.Start))
	}
	if _, err := localtime.LoadZone(w.ZoneID); err != nil {
		errs = append(errs, automation.Invalid("quietHours.timeZoneId", "zone %q does not exist", w.ZoneID))
	}
	return automation.InvalidFields(errs...)
}

// Decision is what the rule says about one delivery at one instant.
type Decision struct {
	// Wait is true when the delivery must wait; Until is then the instant (UTC) the window
	// ends, when it may go.
	Wait  bool
	Until time.Time
}

// Decide applies w at now (any location) to a delivery: a transactional one never waits; a
// marketing one waits when now is inside a window, until that window's end. Errors: the
// window does not validate.
func (w Window) Decide(now time.Time, transactional bool) (Decision, error) {
	if err := w.Validate(); err != nil {
		return Decision{}, err
	}
	if transactional {
		return Decision{}, nil
	}
	loc, _ := localtime.LoadZone(w.ZoneID)
	now = now.UTC()
	today := localtime.DateOf(now, loc)
	// A window that contains now opened on today's or yesterday's local date (a window is
	// under a day long; a DST day moves its ends by at most the shift).
	for _, d := range []localtime.Date{today.AddDays(-1), today} {
		start, end := w.bounds(loc, d)
		if !now.Before(start) && now.Before(end) {
			return Decision{Wait: true, Until: end}, nil
		}
	}
	return Decision{}, nil
}

// bounds resolves the window that opens on local date d.
func (w Window) bounds(loc *time.Location, d localtime.Date) (start, end time.Time) {
	endDate := d
	if minutes(w.End) <= minutes(w.Start) {
		endDate = d.AddDays(1)
	}
	return localtime.Resolve(loc, d, w.Start), localtime.Resolve(loc, endDate, w.End)
}

func minutes(t localtime.TimeOfDay) int { return t.Hour*60 + t.Minute }
