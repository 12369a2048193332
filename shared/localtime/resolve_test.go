package localtime

import (
	"math/rand/v2"
	"sort"
	"strings"
	"testing"
	"time"
)

func TestResolveBriefExamples(t *testing.T) {
	t.Parallel()
	tests := []struct {
		zone, date, hhmm string
		wantUTC          string
		wantLocal        string
		wantRes          Resolution
	}{
		// docs/architecture.md#dst-product-rule: 02:30 on Sydney's DST start
		// day -> 03:30 AEDT.
		{"Australia/Sydney", "2026-10-04", "02:30", "2026-10-03T16:30:00Z", "2026-10-04T03:30:00+11:00", Gap},
		// Ambiguous: the earlier (AEDT, +11) instant.
		{"Australia/Sydney", "2026-04-05", "02:30", "2026-04-04T15:30:00Z", "2026-04-05T02:30:00+11:00", Overlap},
		// Whole skipped day.
		{"Pacific/Apia", "2011-12-30", "12:00", "2011-12-30T22:00:00Z", "2011-12-31T12:00:00+14:00", Gap},
		{"UTC", "2026-10-04", "02:30", "2026-10-04T02:30:00Z", "2026-10-04T02:30:00Z", Normal},
	}
	for _, tc := range tests {
		t.Run(tc.zone+"/"+tc.date+"T"+tc.hhmm, func(t *testing.T) {
			t.Parallel()
			loc := mustZone(t, tc.zone)
			tod, err := ParseTimeOfDay(tc.hhmm)
			if err != nil {
				t.Fatal(err)
			}
			u, res := ResolveDetail(loc, MustDate(tc.date), tod)
			if got := u.Format(time.RFC3339); got != tc.wantUTC {
				t.Errorf("UTC = %s, want %s", got, tc.wantUTC)
			}
			if got := u.In(loc).Format(time.RFC3339); got != tc.wantLocal {
				t.Errorf("local = %s, want %s", got, tc.wantLocal)
			}
			if res != tc.wantRes {
				t.Errorf("Resolution = %v, want %v", res, tc.wantRes)
			}
		})
	}
}

func TestResolveFixedZones(t *testing.T) {
	t.Parallel()
	// Zones built in the test (not from tzdata): fixed offsets have no gaps
	// or overlaps anywhere.
	for _, off := range []int{-12 * 3600, -(9*3600 + 30*60), 0, 5*3600 + 45*60, 14 * 3600} {
		loc := time.FixedZone("F", off)
		for _, d := range []string{"0001-01-01", "1970-01-01", "2026-10-04", "9999-12-31"} {
			for _, tod := range []TimeOfDay{{0, 0}, {2, 30}, {23, 59}} {
				u, res := ResolveDetail(loc, MustDate(d), tod)
				want := time.Date(MustDate(d).Year, MustDate(d).Month, MustDate(d).Day, tod.Hour, tod.Minute, 0, 0, time.UTC).
					Add(-time.Duration(off) * time.Second)
				if !u.Equal(want) || res != Normal || u.Location() != time.UTC {
					t.Errorf("offset %d %s %s: got %v %v, want %v normal", off, d, tod, u, res, want)
				}
			}
		}
	}
}

func TestResolveNilLocationPanics(t *testing.T) {
	t.Parallel()
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "nil") {
			t.Fatalf("recover() = %v, want a panic mentioning nil", r)
		}
	}()
	Resolve(nil, MustDate("2026-10-04"), TimeOfDay{2, 30})
}

func TestResolutionString(t *testing.T) {
	t.Parallel()
	for r, want := range map[Resolution]string{Normal: "normal", Gap: "gap", Overlap: "overlap", 7: "Resolution(7)"} {
		if got := r.String(); got != want {
			t.Errorf("Resolution(%d).String() = %q, want %q", int(r), got, want)
		}
	}
}

// bruteResolve is an independent, slow implementation of the DST product
// rule over the embedded tzdata: it steps through every minute in
// [wall-16h, wall+16h] (UTC offsets in the tested eras are minute multiples
// within -12h..+14h) and reads each instant's local wall clock.
//   - The earliest instant whose wall clock equals the target is the answer
//     (Normal if it is the only one, Overlap otherwise).
//   - If none, the target is skipped: at the first instant whose wall clock
//     passes the target, use the offset in force one minute earlier (the
//     pre-transition offset, i.e. move forward by the gap length).
func bruteResolve(loc *time.Location, wall time.Time) (time.Time, Resolution) {
	var (
		first   time.Time
		matches int
		passed  time.Time
	)
	for i := wall.Add(-16 * time.Hour); !i.After(wall.Add(16 * time.Hour)); i = i.Add(time.Minute) {
		lt := i.In(loc)
		_, off := lt.Zone()
		l := i.Add(time.Duration(off) * time.Second)
		if l.Equal(wall) {
			if matches == 0 {
				first = i
			}
			matches++
		} else if l.After(wall) && passed.IsZero() && matches == 0 {
			passed = i
		}
	}
	switch {
	case matches == 1:
		return first, Normal
	case matches > 1:
		return first, Overlap
	}
	_, off := passed.Add(-time.Minute).In(loc).Zone()
	return wall.Add(-time.Duration(off) * time.Second), Gap
}

// transition is an offset change of a zone at instant at.
type transition struct {
	at            time.Time
	before, after time.Duration
}

// transitionsIn lists loc's offset changes in [from, to), found
// independently of the code under test (and of ZoneBounds): it samples the
// offset hourly and bisects each change to the second. Offsets in real zone
// data never change twice within an hour.
func transitionsIn(loc *time.Location, from, to time.Time) []transition {
	var out []transition
	prev := offsetAt(loc, from)
	for s := from; s.Before(to); s = s.Add(time.Hour) {
		next := s.Add(time.Hour)
		off := offsetAt(loc, next)
		if off == prev {
			continue
		}
		lo, hi := s, next // offset(lo) == prev, offset(hi) == off
		for hi.Sub(lo) > time.Second {
			mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Second)
			if offsetAt(loc, mid) == prev {
				lo = mid
			} else {
				hi = mid
			}
		}
		out = append(out, transition{hi, prev, off})
		prev = off
	}
	return out
}

// TestResolveMatchesBruteForce checks Resolve against bruteResolve around
// every transition of every embedded zone in 2026-2027 (plus historical
// skipped days): at the boundaries of each gap/overlap, one minute either
// side, and inside.
func TestResolveMatchesBruteForce(t *testing.T) {
	t.Parallel()
	type window struct {
		zones    []string
		from, to time.Time
	}
	windows := []window{
		{zoneIDs(t), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2028, 1, 1, 0, 0, 0, 0, time.UTC)},
		{[]string{"Pacific/Apia"}, time.Date(2011, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2012, 1, 1, 0, 0, 0, 0, time.UTC)},
		{[]string{"Pacific/Kwajalein"}, time.Date(1993, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1994, 1, 1, 0, 0, 0, 0, time.UTC)},
		{[]string{"Pacific/Fakaofo"}, time.Date(2011, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2012, 1, 1, 0, 0, 0, 0, time.UTC)},
		{[]string{"Australia/Lord_Howe", "America/Havana", "America/Santiago", "Asia/Beirut", "Antarctica/Troll"},
			time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
	}
	if testing.Short() {
		windows = windows[1:]
	}
	var checked, gaps, overlaps int
	for _, w := range windows {
		sort.Strings(w.zones)
		for _, id := range w.zones {
			loc := mustZone(t, id)
			for _, tr := range transitionsIn(loc, w.from, w.to) {
				lb, la := tr.at.Add(tr.before), tr.at.Add(tr.after) // wall clock just before/at the switch
				lo, hi := lb, la
				if hi.Before(lo) {
					lo, hi = hi, lo
				}
				mid := lo.Add(hi.Sub(lo) / 2).Truncate(time.Minute)
				for _, wall := range []time.Time{lo.Add(-time.Minute), lo, mid, hi.Add(-time.Minute), hi, hi.Add(time.Minute)} {
					d := Date{wall.Year(), wall.Month(), wall.Day()}
					tod := TimeOfDay{wall.Hour(), wall.Minute()}
					got, gotRes := ResolveDetail(loc, d, tod)
					want, wantRes := bruteResolve(loc, wall)
					checked++
					switch wantRes {
					case Gap:
						gaps++
					case Overlap:
						overlaps++
					}
					if !got.Equal(want) || gotRes != wantRes {
						t.Errorf("%s %s %s (transition %s %v->%v): Resolve = %s %v, brute force = %s %v",
							id, d, tod, tr.at.Format(time.RFC3339), tr.before, tr.after,
							got.Format(time.RFC3339), gotRes, want.Format(time.RFC3339), wantRes)
					}
				}
			}
		}
	}
	if gaps == 0 || overlaps == 0 {
		t.Fatalf("brute-force sweep found no gaps (%d) or no overlaps (%d) in %d checks", gaps, overlaps, checked)
	}
	t.Logf("checked %d wall times against brute force: %d gaps, %d overlaps", checked, gaps, overlaps)
}

// TestResolveInvariants checks, for every minute of DST-change days, the
// properties the product rule guarantees: the result's local wall clock is
// the requested one (Normal, Overlap) or later by exactly the gap (Gap);
// Overlap picks an instant with a later twin showing the same wall clock
// and no earlier one. (Results are not monotonic in wall time: a gap time
// 02:30 maps after the real 03:00.)
func TestResolveInvariants(t *testing.T) {
	t.Parallel()
	days := []struct{ zone, date string }{
		{"Australia/Sydney", "2026-10-04"}, {"Australia/Sydney", "2026-04-05"},
		{"America/New_York", "2026-03-08"}, {"America/New_York", "2026-11-01"},
		{"Australia/Lord_Howe", "2026-10-04"}, {"Australia/Lord_Howe", "2026-04-05"},
		{"America/Havana", "2026-03-08"}, {"America/Havana", "2026-11-01"},
		{"America/Santiago", "2026-09-06"}, {"America/Santiago", "2026-04-04"},
		{"Pacific/Apia", "2011-12-30"},
	}
	for _, day := range days {
		t.Run(day.zone+"/"+day.date, func(t *testing.T) {
			t.Parallel()
			loc := mustZone(t, day.zone)
			d := MustDate(day.date)
			var seen [3]int
			for m := 0; m < 24*60; m++ {
				tod := TimeOfDay{m / 60, m % 60}
				u, res := ResolveDetail(loc, d, tod)
				seen[res]++
				wall := time.Date(d.Year, d.Month, d.Day, tod.Hour, tod.Minute, 0, 0, time.UTC)
				lt := u.In(loc)
				_, off := lt.Zone()
				gotWall := u.Add(time.Duration(off) * time.Second)
				switch res {
				case Normal, Overlap:
					if !gotWall.Equal(wall) {
						t.Fatalf("%s %v: local %s, want wall %s", tod, res, lt.Format(time.RFC3339), wall.Format("15:04"))
					}
				case Gap:
					// The gap's length is the offset change at the start of
					// the period u falls in; u must lie within that many
					// minutes after the transition.
					start, _ := lt.ZoneBounds()
					_, ob := start.Add(-time.Second).In(loc).Zone()
					shift := time.Duration(off-ob) * time.Second
					if u.Sub(start) >= shift {
						t.Fatalf("%s gap: %s is not within the gap length %v after the transition %s", tod, u.Format(time.RFC3339), shift, start.Format(time.RFC3339))
					}
					if shift <= 0 || !gotWall.Equal(wall.Add(shift)) {
						t.Fatalf("%s gap: local %s, want wall moved forward by gap %v", tod, lt.Format(time.RFC3339), shift)
					}
				}
				if res == Overlap {
					// A later instant shows the same wall clock.
					found := false
					for dt := time.Minute; dt <= 3*time.Hour; dt += time.Minute {
						l2 := u.Add(dt).In(loc)
						if l2.Format("2006-01-02 15:04") == lt.Format("2006-01-02 15:04") {
							found = true
							break
						}
					}
					if !found {
						t.Fatalf("%s overlap: no later instant with the same wall clock", tod)
					}
					// ...and no earlier one does.
					for dt := time.Minute; dt <= 3*time.Hour; dt += time.Minute {
						if u.Add(-dt).In(loc).Format("2006-01-02 15:04") == lt.Format("2006-01-02 15:04") {
							t.Fatalf("%s overlap: earlier instant %s has the same wall clock", tod, u.Add(-dt).Format(time.RFC3339))
						}
					}
				}
			}
			if seen[Gap]+seen[Overlap] == 0 {
				t.Fatalf("no gap or overlap on %s", day.date)
			}
		})
	}
}

// TestResolveSampledAgainstBruteForce compares Resolve with bruteResolve for
// every embedded zone at fixed awkward dates — including 31 December of leap
// years, where time.Time.ZoneBounds misreports bounds (golang/go#81583) — and
// at pseudo-random wall times in 1975-2100 (after the last non-whole-minute
// UTC offsets, which bruteResolve cannot represent).
func TestResolveSampledAgainstBruteForce(t *testing.T) {
	t.Parallel()
	fixed := []time.Time{
		time.Date(2024, 12, 31, 0, 0, 0, 0, time.UTC),
		time.Date(2024, 12, 31, 23, 59, 0, 0, time.UTC),
		time.Date(2028, 12, 30, 23, 0, 0, 0, time.UTC),
		time.Date(2028, 12, 31, 12, 0, 0, 0, time.UTC),
		time.Date(2029, 1, 1, 0, 30, 0, 0, time.UTC),
		time.Date(2040, 12, 31, 12, 0, 0, 0, time.UTC),
		time.Date(2041, 1, 1, 9, 0, 0, 0, time.UTC),
	}
	perZone := 6
	if testing.Short() {
		perZone = 1
	}
	rng := rand.New(rand.NewPCG(2026, 1004))
	lo := time.Date(1975, 1, 1, 0, 0, 0, 0, time.UTC)
	span := int64(time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC).Sub(lo) / time.Minute)
	ids := zoneIDs(t)
	sort.Strings(ids)
	for _, id := range ids {
		loc := mustZone(t, id)
		walls := append([]time.Time(nil), fixed...)
		for range perZone {
			walls = append(walls, lo.Add(time.Duration(rng.Int64N(span))*time.Minute))
		}
		for _, wall := range walls {
			d := Date{wall.Year(), wall.Month(), wall.Day()}
			tod := TimeOfDay{wall.Hour(), wall.Minute()}
			got, gotRes := ResolveDetail(loc, d, tod)
			want, wantRes := bruteResolve(loc, wall)
			if !got.Equal(want) || gotRes != wantRes {
				t.Errorf("%s %s %s: Resolve = %s %v, brute force = %s %v",
					id, d, tod, got.Format(time.RFC3339), gotRes, want.Format(time.RFC3339), wantRes)
			}
		}
	}
}

// TestOffsetSegmentsLeapYearDec31 pins the ZoneBounds workaround: on 31
// December of a leap year in a rule-based (POSIX TZ footer) year, the
// segments must still tile the window with exact transitions.
func TestOffsetSegmentsLeapYearDec31(t *testing.T) {
	t.Parallel()
	for _, id := range []string{"Australia/Sydney", "America/New_York", "Europe/Warsaw", "Australia/Lord_Howe"} {
		loc := mustZone(t, id)
		for _, y := range []int{2028, 2040} {
			at := time.Date(y, 12, 31, 12, 0, 0, 0, time.UTC)
			if _, end := at.In(loc).ZoneBounds(); end.After(at) {
				t.Logf("%s %d: ZoneBounds end %s is after the instant; golang/go#81583 fixed?", id, y, end.UTC().Format(time.RFC3339))
			}
			from, to := at.Add(-resolveWindow), at.Add(resolveWindow)
			segs := offsetSegments(loc, from, to)
			want := transitionsIn(loc, from, to)
			if len(segs) != len(want)+1 {
				t.Fatalf("%s %d: %d segments, want %d", id, y, len(segs), len(want)+1)
			}
			for i, tr := range want {
				if sg := segs[i+1]; !sg.begin.Equal(tr.at) || sg.offset != tr.after {
					t.Errorf("%s %d: segment %d = %v, want transition %v", id, y, i+1, sg, tr)
				}
			}
		}
	}
}
