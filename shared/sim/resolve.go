package sim

import "time"

// resolve is the oracle's own reading of the DST product rule (README "Time"): the instant
// of local date d at hh:mm in loc. A wall time that exists once is that instant; one that
// exists twice (fall-back overlap) is the earlier; one that does not exist (spring-forward
// gap) is moved forward by the gap, which is the wall time read with the offset in force
// before the transition. It shares nothing with shared/localtime but the zone data: the
// candidates are the offsets the zone has within a day and a half either side, each kept
// when the instant it gives shows the same wall time.
func resolve(loc *time.Location, d time.Time, hh, mm int) time.Time {
	naive := time.Date(d.Year(), d.Month(), d.Day(), hh, mm, 0, 0, time.UTC)
	var offsets []int
	for _, h := range []int{-36, -12, 0, 12, 36} {
		_, off := naive.Add(time.Duration(h) * time.Hour).In(loc).Zone()
		seen := false
		for _, o := range offsets {
			seen = seen || o == off
		}
		if !seen {
			offsets = append(offsets, off)
		}
	}
	var best time.Time
	for _, off := range offsets {
		t := naive.Add(-time.Duration(off) * time.Second)
		l := t.In(loc)
		if l.Year() == naive.Year() && l.Month() == naive.Month() && l.Day() == naive.Day() && l.Hour() == hh && l.Minute() == mm {
			if best.IsZero() || t.Before(best) {
				best = t
			}
		}
	}
	if !best.IsZero() {
		return best.UTC()
	}
	// In a gap: the offset before a spring-forward transition is the smaller one.
	low := offsets[0]
	for _, o := range offsets {
		low = min(low, o)
	}
	return naive.Add(-time.Duration(low) * time.Second).UTC()
}

// parseHM reads "HH:MM".
func parseHM(s string) (int, int) {
	t, err := time.Parse("15:04", s)
	if err != nil {
		return 0, 0
	}
	return t.Hour(), t.Minute()
}
