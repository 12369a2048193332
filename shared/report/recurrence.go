package report

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/teambition/rrule-go"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
)

// Recurrence is when a subscription runs: an RFC 5545 RRULE value evaluated on the business
// unit's local wall clock, starting at DTStart (docs/architecture.md#report-subscriptions). Example: weekly on Monday
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
	// MaxCount bounds COUNT: a rule with COUNT is evaluated from its DTSTART every time.
	MaxCount = 10000
	// MaxInterval bounds INTERVAL (rrule-go's date arithmetic overflows on huge ones).
	MaxInterval = 1000000
)

// MinDTStartYear is the earliest year of dtStart.
const MinDTStartYear = 1970

// Occurrence is one run time: the local intent (date and wall time in the zone) and the UTC
// instant the DST product rule gives for it (localtime.Resolve, docs/architecture.md#dst-product-rule).
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
	err     error         // a panic inside rrule-go (see Err)
}

// Err is the panic rrule-go raised while this schedule was evaluated, as an error (nil when
// none): the iteration that panicked ended as if the rule had no more occurrences. A
// Schedule is meant for one goroutine.
func (s *Schedule) Err() error { return s.err }

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
	if d.Year < MinDTStartYear {
		return nil, automation.Invalid("recurrence.dtStart", "must be in %d or later, got %s", MinDTStartYear, r.DTStart)
	}
	// RFC 5545 section 3.1: names and values are case-insensitive.
	raw := strings.ToUpper(strings.TrimSpace(r.RRule))
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
	if err := checkRuleParts(raw); err != nil {
		return nil, err
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
	if err := checkParsed(opts); err != nil {
		return nil, err
	}
	if !someDayMatches(opts, sch.dtstart) {
		return nil, automation.Invalid("recurrence", "never occurs: no date satisfies its BYMONTH, BYMONTHDAY, BYYEARDAY, BYWEEKNO and BYDAY together")
	}
	if !clockReachable(opts, sch.dtstart) {
		return nil, automation.Invalid("recurrence", "never occurs: counting every %d %s from dtStart %s never reaches a BYHOUR/BYMINUTE the rule allows",
			max(opts.Interval, 1), map[rrule.Frequency]string{rrule.HOURLY: "hours", rrule.MINUTELY: "minutes"}[opts.Freq], r.DTStart)
	}
	fillDefaults(opts, sch.dtstart)
	sch.opts = *opts
	return sch, nil
}

// checkRuleParts checks what rrule-go lets through: RFC 5545 section 3.3.10 allows each rule part
// once (rrule-go keeps the last), and COUNT and INTERVAL are positive integers (rrule-go
// reads COUNT=0 as no count at all, and INTERVAL=0 as 1).
func checkRuleParts(raw string) error {
	seen := map[string]bool{}
	for _, part := range strings.Split(raw, ";") {
		name, value, _ := strings.Cut(part, "=")
		if seen[name] {
			return automation.Invalid("recurrence.rrule", "%s appears more than once", name)
		}
		seen[name] = true
		if name != "COUNT" && name != "INTERVAL" {
			continue
		}
		n, err := strconv.Atoi(value)
		if err != nil || n < 1 || value[0] < '1' || value[0] > '9' {
			return automation.Invalid("recurrence.rrule", "%s must be a positive integer, got %q", name, value)
		}
		if name == "COUNT" && n > MaxCount {
			return automation.Invalid("recurrence.rrule", "COUNT may be at most %d (use UNTIL for a longer rule)", MaxCount)
		}
		if name == "INTERVAL" && n > MaxInterval {
			return automation.Invalid("recurrence.rrule", "INTERVAL may be at most %d", MaxInterval)
		}
	}
	return nil
}

// checkParsed refuses what rrule-go accepts but cannot evaluate: BYEASTER (not RFC 5545; an
// offset outside the year panics), a BYDAY ordinal beyond the 5th weekday of a month
// (MONTHLY, or YEARLY with BYMONTH: rrule-go indexes outside the year and panics), and a
// BYSETPOS of a MINUTELY, HOURLY or DAILY rule that no period can have (each period is one
// day's run times of one minute, hour or day; rrule-go then walks every period to year 9999).
func checkParsed(o *rrule.ROption) error {
	if len(o.Byeaster) > 0 {
		return automation.Invalid("recurrence.rrule", "BYEASTER is not part of RFC 5545")
	}
	if o.Freq == rrule.MONTHLY || (o.Freq == rrule.YEARLY && len(o.Bymonth) > 0) {
		for _, w := range o.Byweekday {
			if n := w.N(); n > 5 || n < -5 {
				return automation.Invalid("recurrence.rrule", "BYDAY %s: a month has at most 5 of each weekday (use -5..5)", w)
			}
		}
	}
	if len(o.Bysetpos) == 0 || o.Freq < rrule.DAILY {
		return nil
	}
	size := 1 // run times per period: the expanded BYxxx parts (with repeats, as rrule-go counts them)
	for _, part := range [][]int{o.Byhour, o.Byminute, o.Bysecond} {
		size *= max(len(part), 1)
	}
	if o.Freq >= rrule.HOURLY {
		size /= max(len(o.Byhour), 1)
	}
	if o.Freq >= rrule.MINUTELY {
		size /= max(len(o.Byminute), 1)
	}
	for _, p := range o.Bysetpos {
		if p >= -size && p <= size {
			return nil
		}
	}
	return automation.Invalid("recurrence", "never occurs: each period of the rule has %d run time(s), so BYSETPOS %v selects none", size, o.Bysetpos)
}

// someDayMatches reports whether any date satisfies the day filters of a WEEKLY, DAILY,
// HOURLY or MINUTELY rule. When none does, rrule-go finds no occurrence only after walking
// every period to year 9999 (seconds of CPU for a minutely rule). rrule-go filters days with
// the same year masks whatever the frequency, and below MONTHLY a BYDAY ordinal is ignored,
// so the same filters on a yearly grid (at most 8,000 periods) find a matching date if there
// is one: the Gregorian calendar repeats every 400 years.
func someDayMatches(o *rrule.ROption, dtstart time.Time) (ok bool) {
	if o.Freq < rrule.WEEKLY || len(o.Bymonth)+len(o.Bymonthday)+len(o.Byyearday)+len(o.Byweekno)+len(o.Byweekday) == 0 {
		return true
	}
	p := rrule.ROption{Freq: rrule.YEARLY, Dtstart: time.Date(dtstart.Year(), time.January, 1, 0, 0, 0, 0, time.UTC), Wkst: o.Wkst,
		Bymonth: o.Bymonth, Bymonthday: o.Bymonthday, Byyearday: o.Byyearday, Byweekno: o.Byweekno,
		Byhour: []int{0}, Byminute: []int{0}, Bysecond: []int{0}}
	for _, w := range o.Byweekday {
		p.Byweekday = append(p.Byweekday, weekdays[(w.Day()+1)%7]) // rrule-go: 0 = Monday
	}
	r, err := rrule.NewRRule(p)
	if err != nil {
		return true // the rule itself is checked by rrule.NewRRule above
	}
	defer func() {
		if recover() != nil {
			ok = true // evaluated (and reported) by the schedule itself
		}
	}()
	_, ok = r.Iterator()()
	return ok
}

// clockReachable reports whether an HOURLY or MINUTELY rule can ever reach one of its
// BYHOUR (and BYMINUTE) values. Counting INTERVAL hours (minutes) from DTSTART visits only
// the hours of the day (minutes of the day) congruent to DTSTART's modulo gcd(INTERVAL, 24)
// (gcd(INTERVAL, 1440)); rrule-go looks for the next allowed one without a bound, so a rule
// like FREQ=HOURLY;INTERVAL=2;BYHOUR=1 from an even hour would spin forever.
func clockReachable(o *rrule.ROption, dtstart time.Time) bool {
	var cycle, start int
	switch o.Freq {
	case rrule.HOURLY:
		cycle, start = 24, dtstart.Hour()
	case rrule.MINUTELY:
		cycle, start = 1440, dtstart.Hour()*60+dtstart.Minute()
	default:
		return true
	}
	g := gcd(max(o.Interval, 1), cycle)
	allowed := func(xs []int, v int) bool { return len(xs) == 0 || slices.Contains(xs, v) }
	for v := start % g; v < cycle; v += g {
		h, m := v, -1
		if o.Freq == rrule.MINUTELY {
			h, m = v/60, v%60
		}
		if allowed(o.Byhour, h) && (m < 0 || allowed(o.Byminute, m)) {
			return true
		}
	}
	return false
}

func gcd(a, b int) int {
	for b != 0 {
		a, b = b, a%b
	}
	return a
}

// fillDefaults writes down the rule parts rrule-go would otherwise take from DTSTART (RFC
// 5545 section 3.3.10: the day of the month, month, weekday and time of day of DTSTART), so that
// the iteration can start from another DTSTART on the rule's period grid (see rebase).
func fillDefaults(o *rrule.ROption, dtstart time.Time) {
	if len(o.Byweekno) == 0 && len(o.Byyearday) == 0 && len(o.Bymonthday) == 0 && len(o.Byweekday) == 0 && len(o.Byeaster) == 0 {
		switch o.Freq {
		case rrule.YEARLY:
			if len(o.Bymonth) == 0 {
				o.Bymonth = []int{int(dtstart.Month())}
			}
			o.Bymonthday = []int{dtstart.Day()}
		case rrule.MONTHLY:
			o.Bymonthday = []int{dtstart.Day()}
		case rrule.WEEKLY:
			o.Byweekday = []rrule.Weekday{weekdays[dtstart.Weekday()]}
		}
	}
	if len(o.Byhour) == 0 && o.Freq < rrule.HOURLY {
		o.Byhour = []int{dtstart.Hour()}
	}
	if len(o.Byminute) == 0 && o.Freq < rrule.MINUTELY {
		o.Byminute = []int{dtstart.Minute()}
	}
	if len(o.Bysecond) == 0 && o.Freq < rrule.SECONDLY {
		o.Bysecond = []int{dtstart.Second()}
	}
	if o.Interval < 1 {
		o.Interval = 1
	}
}

var weekdays = [...]rrule.Weekday{time.Sunday: rrule.SU, time.Monday: rrule.MO, time.Tuesday: rrule.TU,
	time.Wednesday: rrule.WE, time.Thursday: rrule.TH, time.Friday: rrule.FR, time.Saturday: rrule.SA}

// rebase returns a DTSTART for iterating the rule from floating wall time `from` on: the
// start of a period of the rule's own grid (DTSTART + k×INTERVAL periods) at least one
// period before `from`, or DTSTART itself when that is not later. Every occurrence at or
// after `from` is the same from either start - the parts DTSTART would supply are written
// down (fillDefaults) and the period grid is kept - while the work no longer grows with the
// time since DTSTART. A rule with COUNT is always counted from its DTSTART.
func (s *Schedule) rebase(from time.Time) time.Time {
	d0, o := s.dtstart, s.opts
	if o.Count > 0 || !from.After(d0) {
		return d0
	}
	n := int64(o.Interval)
	var step int64 // seconds, for the fixed-length periods of the floating clock
	switch o.Freq {
	case rrule.MINUTELY:
		step = 60
	case rrule.HOURLY:
		step = 3600
	case rrule.DAILY:
		step = 86400
	case rrule.WEEKLY:
		step = 7 * 86400
	case rrule.MONTHLY:
		months := int64(from.Year()-d0.Year())*12 + int64(from.Month()-d0.Month())
		if k := months/n - 1; k > 0 {
			return time.Date(d0.Year(), d0.Month()+time.Month(k*n), 1, 0, 0, 0, 0, time.UTC)
		}
		return d0
	case rrule.YEARLY:
		if k := int64(from.Year()-d0.Year())/n - 1; k > 0 {
			return time.Date(d0.Year()+int(k*n), time.January, 1, 0, 0, 0, 0, time.UTC)
		}
		return d0
	default:
		return d0
	}
	if k := (from.Unix()-d0.Unix())/(step*n) - 1; k > 0 {
		return time.Unix(d0.Unix()+k*step*n, 0).UTC()
	}
	return d0
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

// iterator returns an rrule iterator on the floating clock that yields every occurrence
// from `from` to until (floating; it may yield some earlier ones too), bounded by the rule's
// own UNTIL or until, whichever is earlier. The bound keeps a rule that never matches from
// being searched to year 9999; starting near `from` (rebase) keeps the work independent of
// the age of DTSTART.
func (s *Schedule) iterator(from, until time.Time) func() (time.Time, bool) {
	o := s.opts
	if o.Until.IsZero() || until.Before(o.Until) {
		o.Until = until
	}
	o.Dtstart = s.rebase(from)
	r, err := rrule.NewRRule(o)
	if err != nil { // validated by Compile; only the bound changed
		return func() (time.Time, bool) { return time.Time{}, false }
	}
	var next func() (time.Time, bool)
	done := false
	return func() (w time.Time, ok bool) {
		if done {
			return time.Time{}, false
		}
		defer func() {
			if v := recover(); v != nil {
				done, w, ok = true, time.Time{}, false
				if s.err == nil {
					s.err = fmt.Errorf("rrule-go panicked: %v", v)
				}
			}
		}()
		if next == nil {
			next = r.Iterator() // builds the first period's masks: may panic too
		}
		return next()
	}
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
	lo := s.floating(after).Add(-maxShift)
	next := s.iterator(lo, s.floating(after).Add(NeverOccursHorizon))
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
// when there is none. It looks back over a window that grows until it finds one whose wall
// time is far enough inside the window (the DST product rule can reorder instants by up to
// maxShift), or reaches DTSTART.
func (s *Schedule) Prev(before time.Time) (Occurrence, bool) {
	end := s.floating(before).Add(maxShift)
	for span := 8 * maxShift; ; span *= 8 {
		from := s.dtstart // a window past a century (time.Duration ends at 292 years): all of it
		if span < 100*365*24*time.Hour {
			from = s.floating(before).Add(-span)
		}
		whole := !from.After(s.dtstart)
		next := s.iterator(from, end)
		var best Occurrence
		found := false
		for w, ok := next(); ok; w, ok = next() {
			o := s.occurrence(w)
			if o.At.Before(before) && (!found || o.At.After(best.At)) {
				best, found = o, true
			}
		}
		if whole || (found && !s.floating(best.At).Before(from.Add(maxShift))) {
			return best, found
		}
	}
}

// Contains reports whether the local intent (date, wall time) is an occurrence of the rule.
func (s *Schedule) Contains(d localtime.Date, t localtime.TimeOfDay) bool {
	w := time.Date(d.Year, d.Month, d.Day, t.Hour, t.Minute, 0, 0, time.UTC)
	next := s.iterator(w, w)
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
	next := s.iterator(s.dtstart, s.dtstart.Add(intervalCheckHorizon))
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
	_, ok := s.Next(now)
	if s.err != nil {
		return automation.Invalid("recurrence.rrule", "cannot be evaluated: %v", s.err)
	}
	if !ok {
		return automation.Invalid("recurrence", "never occurs after %s in %s (checked %d years ahead): the rule ended, or matches no date",
			now.UTC().Format(time.RFC3339), s.zoneID, int(NeverOccursHorizon/(365*24*time.Hour)))
	}
	g := s.MinInterval()
	if s.err != nil {
		return automation.Invalid("recurrence.rrule", "cannot be evaluated: %v", s.err)
	}
	if g > 0 && g < minInterval {
		return automation.Invalid("recurrence.rrule", "occurs every %s at times; the minimum interval between runs is %s", g, minInterval)
	}
	return nil
}
