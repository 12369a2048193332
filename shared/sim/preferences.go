package sim

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/preference"
)

// The recipient preferences' part (docs/channels.md#recipient-preferences): before the run
// the simulation opts some of the SMS settings' numbers out of SMS marketing (as their STOP
// would) and gives some units with SMS settings quiet hours 21:00–07:00 local. Reminder
// deliveries name no category, so they are marketing (the default) and both rules apply.
//
// The window's ends are away from every DST transition of the simulation's zones, so the
// checker's model is the plain one: a local wall time from 21:00 to before 07:00 is quiet.

// Preference invariants.
const (
	// InvNeverOptedOut: the simulated ACS never sent an SMS to an opted-out number; every
	// sms delivery to one ends Skipped with the reason, and nothing else is Skipped.
	InvNeverOptedOut = "never-to-opted-out"
	// InvQuietHours: no sms delivery of a unit with quiet hours was sent (recorded Sent) at
	// a local wall time inside the window; one still waiting says until when.
	InvQuietHours = "never-in-quiet-hours"
)

// quietStart and quietEnd are the simulation's window, local minutes of the day.
const (
	quietStart = 21 * 60
	quietEnd   = 7 * 60
)

// prefPlan is what the run sets up: opted-out numbers by unit, and the units with quiet hours.
type prefPlan struct {
	optedOut map[string]string // number → unit
	quiet    map[string]bool   // unit
	// late: numbers (→ unit) that opt out in the middle of the run, with the LateOptOut
	// fault, between a delivery's creation and its first claim (lateOptOuts).
	late map[string]string
}

// plan derives the setup from the workload alone: every third distinct SMS recipient (in
// the order the operations name them) is opted out, and the next of each three is in the
// late set; the units with SMS settings whose position among them is even get quiet hours.
func (w *Workload) prefPlan() prefPlan {
	p := prefPlan{optedOut: map[string]string{}, quiet: map[string]bool{}, late: map[string]string{}}
	smsSource := map[string]bool{}
	var units []string
	seenUnit := map[string]bool{}
	for _, d := range w.Dates {
		if d.Channel != "sms" {
			continue
		}
		smsSource[d.SourceType] = true
		if !seenUnit[d.Unit] {
			seenUnit[d.Unit] = true
			units = append(units, d.Unit)
		}
	}
	sort.Strings(units)
	for i, u := range units {
		if (int(w.Seed)+i)%2 == 0 {
			p.quiet[u] = true
		}
	}
	seen := map[string]bool{}
	n := 0
	for _, op := range w.Ops {
		if op.Kind != OpEvent || !smsSource[op.SourceType] || !strings.HasPrefix(op.Email, "+") || seen[op.Email] {
			continue
		}
		seen[op.Email] = true
		switch n % 3 {
		case int(w.Seed % 3):
			p.optedOut[op.Email] = op.Unit
		case int((w.Seed + 1) % 3):
			p.late[op.Email] = op.Unit
		}
		n++
	}
	return p
}

// applyPreferences sets the plan up through the runtime's preference service (idempotent:
// a restart applies it again and changes nothing that matters).
func (d *driver) applyPreferences(ctx context.Context) error {
	if d.rt == nil || d.rt.Preferences == nil {
		return fmt.Errorf("the runtime has no preference service")
	}
	p := d.w.prefPlan()
	for number, unit := range p.optedOut {
		if err := d.rt.Preferences.OptOut(ctx, unit, number, "sms", "", preference.SourceSMSStop, number); err != nil {
			return fmt.Errorf("opt %s out: %w", number, err)
		}
	}
	for unit := range p.quiet {
		if _, err := d.rt.Preferences.SetUnitQuietHours(ctx, unit, "sim", preference.QuietHoursInput{Start: "21:00", End: "07:00"}); err != nil {
			return fmt.Errorf("quiet hours of %s: %w", unit, err)
		}
	}
	return nil
}

// lateOptOuts (LateOptOut, after each step) opts out each number of the plan's late set
// that has a delivery created and not yet claimed (Queued with AttemptCount 0), through the
// runtime's preference service, and records the instant for the checker. Each number opts
// out once; a number that never has such a delivery never opts out (and is not checked).
func (d *driver) lateOptOuts(ctx context.Context) error {
	if d.off || d.crashed || !d.kinds[LateOptOut] || d.rt == nil || d.rt.Preferences == nil || d.clock == nil {
		return nil
	}
	if d.chk.lateOptOut == nil {
		d.chk.lateOptOut = map[string]time.Time{}
	}
	var pending []any
	for number := range d.w.prefPlan().late {
		if _, done := d.chk.lateOptOut[number]; !done {
			pending = append(pending, number)
		}
	}
	if len(pending) == 0 {
		return nil
	}
	db, err := d.chk.open()
	if err != nil {
		return err
	}
	rs, err := db.QueryContext(ctx, `SELECT DISTINCT Recipient, BusinessUnitId FROM NotificationJob
		WHERE Channel = 'sms' AND Status = 'Queued' AND AttemptCount = 0 AND Recipient IN (?`+strings.Repeat(",?", len(pending)-1)+`)
		ORDER BY Recipient, BusinessUnitId`, pending...)
	if err != nil {
		return fmt.Errorf("sim: late opt-outs: %w", err)
	}
	type found struct{ number, unit string }
	var due []found
	for rs.Next() {
		var f found
		if err := rs.Scan(&f.number, &f.unit); err != nil {
			rs.Close()
			return err
		}
		due = append(due, f)
	}
	rs.Close()
	if err := rs.Err(); err != nil {
		return err
	}
	for _, f := range due {
		if _, done := d.chk.lateOptOut[f.number]; done {
			continue
		}
		at := d.clock.Now().UTC()
		if err := d.rt.Preferences.OptOut(ctx, f.unit, f.number, "sms", "", preference.SourceSMSStop, f.number); err != nil {
			return fmt.Errorf("sim: late opt-out of %s: %w", f.number, err)
		}
		d.counts[string(LateOptOut)]++
		d.chk.lateOptOut[f.number] = at
	}
	return nil
}

// inQuiet reports whether t is inside the simulation's window in zone.
func inQuiet(t time.Time, zone *time.Location) bool {
	l := t.In(zone)
	m := l.Hour()*60 + l.Minute()
	return m >= quietStart || m < quietEnd
}

// checkPreferences (after the drain): the two invariants over the sms jobs and what the
// simulated ACS sent.
func (c *checker) checkPreferences(r *report, jobs []job) {
	if c.prefErr != nil {
		r.check(InvNeverOptedOut, false, "setup: %v", c.prefErr)
		return
	}
	p := c.w.prefPlan()
	zone := map[string]*time.Location{}
	for _, u := range c.w.Units {
		zone[u.ID] = mustZone(u.Zone)
	}
	// A number that opted out in the middle of the run (LateOptOut) at T: a delivery first
	// claimed after T is held to the opt-out (every gate of it saw it: Skipped, never sent);
	// one first claimed at or before T may have been sent by an attempt that passed its gate
	// before T, and either outcome is right (docs/channels.md#recipient-preferences).
	// A delivery whose first claim at or after T died before its gate (lateCrashed) is held
	// the same way, the same instant included: its takeover is the in-doubt resend the rule
	// decides.
	heldLate := func(j job) bool {
		t, late := c.lateOptOut[j.recipient]
		return late && j.channel == "sms" && (c.lateCrashed[j.key] || j.firstClaimed != nil && j.firstClaimed.After(t))
	}
	byKey := map[string]job{}
	for _, j := range jobs {
		byKey[j.key] = j
	}
	if c.sms != nil {
		for _, rq := range c.sms() {
			if rq.SentThisRequest {
				_, out := p.optedOut[rq.To]
				r.check(InvNeverOptedOut, !out, "ACS sent delivery %s to %s, which opted out of SMS marketing", rq.Tag, rq.To)
				if j, ok := byKey[rq.Tag]; ok && j.recipient == rq.To && heldLate(j) {
					r.check(InvNeverOptedOut, false, "ACS sent delivery %s to %s, which opted out at %s, before the delivery's first claim at %v (died before its gate: %t)",
						rq.Tag, rq.To, c.lateOptOut[rq.To].Format(time.RFC3339Nano), j.firstClaimed, c.lateCrashed[rq.Tag])
				}
			}
		}
	}
	for _, j := range jobs {
		_, out := p.optedOut[j.recipient]
		_, late := c.lateOptOut[j.recipient]
		switch {
		case j.channel == "sms" && out:
			r.check(InvNeverOptedOut, j.status == "Skipped" && strings.Contains(j.lastError, "opted out"),
				"sms delivery %s to opted-out %s is %s (%q), not Skipped", j.key, j.recipient, j.status, j.lastError)
		case heldLate(j):
			r.check(InvNeverOptedOut, j.status == "Skipped" && strings.Contains(j.lastError, "opted out"),
				"sms delivery %s to %s, first claimed at %v (died before its gate: %t), not before its opt-out at %s, is %s (%q), not Skipped", j.key, j.recipient,
				j.firstClaimed, c.lateCrashed[j.key], c.lateOptOut[j.recipient].Format(time.RFC3339Nano), j.status, j.lastError)
		case j.status == "Skipped" && j.channel == "sms" && late:
			r.check(InvNeverOptedOut, strings.Contains(j.lastError, "opted out"), "delivery %s to %s is Skipped without the opt-out: %q", j.key, j.recipient, j.lastError)
		case j.status == "Skipped":
			r.check(InvNeverOptedOut, false, "delivery %s (%s to %s) is Skipped but the recipient never opted out: %q", j.key, j.channel, j.recipient, j.lastError)
		}
		if j.channel != "sms" || !p.quiet[j.unit] {
			continue
		}
		switch {
		case j.status == "Sent" && j.sentOn != nil:
			r.check(InvQuietHours, !inQuiet(*j.sentOn, zone[j.unit]), "sms delivery %s of %s was sent at %s local, inside quiet hours 21:00–07:00",
				j.key, j.unit, j.sentOn.In(zone[j.unit]).Format("2006-01-02 15:04"))
		case j.status == "Queued" && strings.HasPrefix(j.lastError, "waiting for quiet hours"):
			r.check(InvQuietHours, j.next != nil && !inQuiet(*j.next, zone[j.unit]), "sms delivery %s waits until %v, inside quiet hours", j.key, j.next)
		}
	}
}
