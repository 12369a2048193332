package localtime

import (
	"fmt"
	"time"
)

// Resolution reports how [ResolveDetail] mapped a local wall time to an
// instant under the DST product rule (ARCHITECTURE.md §4.3, DST product rule).
type Resolution int

const (
	// Normal: the local wall time occurs exactly once; the instant is that
	// occurrence.
	Normal Resolution = iota
	// Gap: the local wall time does not exist (spring-forward gap, or a
	// skipped day); the instant is the wall time moved forward by the gap's
	// length, i.e. the wall time read with the offset in force just before
	// the gap.
	Gap
	// Overlap: the local wall time occurs more than once (fall-back); the
	// instant is the earliest occurrence.
	Overlap
)

// String returns "normal", "gap" or "overlap" ("Resolution(N)" otherwise).
func (r Resolution) String() string {
	switch r {
	case Normal:
		return "normal"
	case Gap:
		return "gap"
	case Overlap:
		return "overlap"
	}
	return fmt.Sprintf("Resolution(%d)", int(r))
}

// Resolve converts the local wall time t on local date d in loc to an
// instant, following ARCHITECTURE.md §4.3, DST product rule:
//
//   - a local time that does not exist (spring-forward gap) moves forward by
//     the gap's length (02:30 on Sydney's DST start day 2026-10-04 ->
//     03:30 AEDT, 2026-10-03T16:30:00Z; Pacific/Apia 2011-12-30 12:00, a
//     skipped day, -> 2011-12-31 12:00 +14:00);
//   - an ambiguous local time (fall-back overlap) takes the EARLIER instant.
//
// It returns the instant with Location [time.UTC]; seconds and nanoseconds
// are zero. d and t are expected to be valid; out-of-range fields are
// normalised as by [time.Date]. It panics if loc is nil. See [ResolveDetail]
// to learn which case applied.
func Resolve(loc *time.Location, d Date, t TimeOfDay) time.Time {
	u, _ := ResolveDetail(loc, d, t)
	return u
}

// resolveWindow bounds the zone periods examined around a wall time. It must
// exceed the largest UTC offset magnitude in the tzdata (under 16h, even for
// local mean time) so that the first period examined can only be "too late"
// or matching and the last only "too early" or matching.
const resolveWindow = 48 * time.Hour

// period is one interval of constant UTC offset of a zone, [start, end).
type period struct {
	start, end       time.Time // UTC instants; meaningful only if has*
	hasStart, hasEnd bool      // false: unbounded in that direction
	offset           time.Duration
}

// contains reports whether the instant u lies in [p.start, p.end).
func (p period) contains(u time.Time) bool {
	return (!p.hasStart || !u.Before(p.start)) && (!p.hasEnd || u.Before(p.end))
}

// ResolveDetail is [Resolve] plus the [Resolution] that applied: Normal,
// Gap (shifted forward by the gap length) or Overlap (earlier instant
// chosen). The instant is in UTC (Location [time.UTC]). It panics if loc is
// nil.
//
// The rule is computed explicitly from the zone's transitions, not from
// [time.Date]'s unspecified gap/overlap behaviour: the wall time is read as if
// it were UTC ("wall"); for every zone period with offset o overlapping
// [wall-48h, wall+48h], wall-o is a candidate if it lies inside that period.
// The earliest candidate wins (Normal if it is the only one, Overlap
// otherwise). With no candidate the wall time is in a gap between consecutive
// periods p and q, and the answer is wall-o_p: the pre-transition offset,
// which is the same as moving forward by the gap's length. Whole skipped days
// are handled the same way.
func ResolveDetail(loc *time.Location, d Date, t TimeOfDay) (time.Time, Resolution) {
	if loc == nil {
		panic("localtime: Resolve called with a nil *time.Location")
	}
	wall := time.Date(d.Year, d.Month, d.Day, t.Hour, t.Minute, 0, 0, time.UTC)
	ps := zonePeriods(loc, wall.Add(-resolveWindow), wall.Add(resolveWindow))

	var (
		best  time.Time
		found int
	)
	for _, p := range ps {
		u := wall.Add(-p.offset)
		if !p.contains(u) {
			continue
		}
		if found == 0 || u.Before(best) {
			best = u
		}
		found++
	}
	switch {
	case found == 1:
		return best.UTC(), Normal
	case found > 1:
		return best.UTC(), Overlap
	}

	// Gap: find consecutive periods p, q such that the wall time read with
	// p's offset is already past p, and read with q's offset is still before
	// q. Using p's (pre-transition) offset moves the time forward by the gap.
	for i := 0; i+1 < len(ps); i++ {
		p, q := ps[i], ps[i+1]
		up, uq := wall.Add(-p.offset), wall.Add(-q.offset)
		if p.hasEnd && !up.Before(p.end) && q.hasStart && uq.Before(q.start) {
			return up.UTC(), Gap
		}
	}
	// Unreachable for well-formed zone data (see resolveWindow); fall back to
	// the offset in force at the wall time read as UTC.
	_, off := wall.In(loc).Zone()
	return wall.Add(-time.Duration(off) * time.Second).UTC(), Gap
}

// zonePeriods lists loc's constant-offset periods, in order, from the one
// containing the instant from up to and including the one containing to.
func zonePeriods(loc *time.Location, from, to time.Time) []period {
	var ps []period
	s := from
	for {
		lt := s.In(loc)
		_, off := lt.Zone()
		start, end := lt.ZoneBounds()
		p := period{
			start:    start.UTC(),
			end:      end.UTC(),
			hasStart: !start.IsZero(),
			hasEnd:   !end.IsZero(),
			offset:   time.Duration(off) * time.Second,
		}
		ps = append(ps, p)
		if !p.hasEnd || p.end.After(to) || !p.end.After(s) {
			// Reached the period containing to, or (malformed data) no
			// progress; stop.
			return ps
		}
		s = p.end
	}
}
