package localtime

import (
	"fmt"
	"time"
)

// Resolution reports how [ResolveDetail] mapped a local wall time to an
// instant under the DST product rule (docs/architecture.md#dst-product-rule).
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
// instant, following docs/architecture.md#dst-product-rule:
//
//   - a local time that does not exist (spring-forward gap) moves forward by
//     the gap's length (02:30 on Sydney's DST start day 2026-10-04 ->
//     03:30 AEDT, 2026-10-03T16:30:00Z; Pacific/Apia 2011-12-30 12:00, a
//     skipped day, -> 2011-12-31 12:00 +14:00);
//   - an ambiguous local time (fall-back overlap) takes the EARLIER instant.
//
// It returns the instant with Location [time.UTC]; its seconds are zero
// except where the zone's offset itself has seconds (historical local mean
// time). d and t are expected to be valid; out-of-range fields are
// normalised as by [time.Date]. It panics if loc is nil. See [ResolveDetail]
// to learn which case applied.
func Resolve(loc *time.Location, d Date, t TimeOfDay) time.Time {
	u, _ := ResolveDetail(loc, d, t)
	return u
}

// resolveWindow bounds the zone history examined around a wall time. It must
// exceed the largest UTC offset magnitude in the tzdata (under 16h, even for
// local mean time), so every instant that could show the wall time, and the
// transition before any gap containing it, lie inside the window.
const resolveWindow = 48 * time.Hour

// segment is a stretch of constant UTC offset of a zone, beginning at begin
// (an exact transition instant, except for the first segment, which begins
// at the window start) and lasting until the next segment's begin.
type segment struct {
	begin  time.Time // UTC
	offset time.Duration
}

// ResolveDetail is [Resolve] plus the [Resolution] that applied: Normal,
// Gap (shifted forward by the gap length) or Overlap (earlier instant
// chosen). The instant is in UTC (Location [time.UTC]). It panics if loc is
// nil.
//
// The rule (docs/architecture.md#dst-product-rule) is computed explicitly
// from the zone's offsets, not from [time.Date]'s unspecified gap/overlap
// behaviour: the wall time is read as if it were UTC ("wall"); for every
// offset o the zone uses in [wall-48h, wall+48h], u = wall-o is a candidate
// if the zone's offset at instant u is o. The earliest candidate wins (Normal
// if it is the only one, Overlap otherwise). With no candidate the wall time
// lies in a gap: a transition at instant T from offset o_p to o_q > o_p with
// T+o_p <= wall < T+o_q, and the answer is wall-o_p — the pre-transition
// offset, the same as moving forward by the gap's length. Whole skipped days
// are handled the same way.
func ResolveDetail(loc *time.Location, d Date, t TimeOfDay) (time.Time, Resolution) {
	if loc == nil {
		panic("localtime: Resolve called with a nil *time.Location")
	}
	wall := time.Date(d.Year, d.Month, d.Day, t.Hour, t.Minute, 0, 0, time.UTC)
	segs := offsetSegments(loc, wall.Add(-resolveWindow), wall.Add(resolveWindow))

	var (
		best  time.Time
		found int
		tried = make(map[time.Duration]bool, len(segs))
	)
	for _, sg := range segs {
		if tried[sg.offset] {
			continue
		}
		tried[sg.offset] = true
		u := wall.Add(-sg.offset)
		if offsetAt(loc, u) != sg.offset {
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

	// Gap: the forward transition whose skipped wall-clock range contains
	// wall. Reading wall with the pre-transition offset moves it forward by
	// the gap's length.
	for i := 1; i < len(segs); i++ {
		tr, op, oq := segs[i].begin, segs[i-1].offset, segs[i].offset
		if oq > op && !wall.Before(tr.Add(op)) && wall.Before(tr.Add(oq)) {
			return wall.Add(-op).UTC(), Gap
		}
	}
	// Unreachable for well-formed zone data (see resolveWindow); fall back to
	// the offset in force at the wall time read as UTC.
	return wall.Add(-offsetAt(loc, wall)).UTC(), Gap
}

// offsetAt returns loc's UTC offset at instant u (local = UTC + offset).
func offsetAt(loc *time.Location, u time.Time) time.Duration {
	_, off := u.In(loc).Zone()
	return time.Duration(off) * time.Second
}

// offsetSegments lists loc's constant-offset segments that intersect
// [from, to], in order, with exact transition instants.
//
// It steps from transition to transition with [time.Time.ZoneBounds], but
// treats the bounds only as hints, because for years served by a zone's POSIX
// TZ rule they may be approximate: away from a DST change they are the UTC
// year's bounds, and in leap years the reported end for instants on 31
// December is 31 December 00:00 UTC, before the instant itself
// (golang/go#81583). Offsets are always read with [time.Time.Zone], which is
// exact, and a transition found other than at a reported bound is located to
// the second by bisection.
func offsetSegments(loc *time.Location, from, to time.Time) []segment {
	segs := []segment{{begin: from.UTC(), offset: offsetAt(loc, from)}}
	s := from
	for {
		_, end := s.In(loc).ZoneBounds()
		if end.IsZero() {
			return segs // no further transitions
		}
		exact := true
		if !end.After(s) {
			// Bogus bound (see above): probe forward instead.
			end, exact = s.Add(time.Hour), false
		}
		if end.After(to) {
			if !exact && offsetAt(loc, to) != segs[len(segs)-1].offset {
				segs = append(segs, segment{begin: firstChange(loc, s, to), offset: offsetAt(loc, to)})
			}
			return segs
		}
		if off := offsetAt(loc, end); off != segs[len(segs)-1].offset {
			begin := end
			if !exact {
				begin = firstChange(loc, s, end)
			}
			segs = append(segs, segment{begin: begin.UTC(), offset: off})
		}
		s = end
	}
}

// firstChange returns the first whole second in (lo, hi] at which loc's
// offset differs from its offset at lo; the offset at hi must differ.
func firstChange(loc *time.Location, lo, hi time.Time) time.Time {
	want := offsetAt(loc, lo)
	for hi.Sub(lo) > time.Second {
		mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Second)
		if !mid.After(lo) {
			mid = lo.Add(time.Second)
		}
		if offsetAt(loc, mid) == want {
			lo = mid
		} else {
			hi = mid
		}
	}
	return hi
}
