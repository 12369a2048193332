package localtime

import (
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
		// ARCHITECTURE.md §4.3, DST product rule: 02:30 on Sydney's DST start
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

// transitionsIn lists loc's offset changes in [from, to) as (instant,
// offset before, offset after), using ZoneBounds.
type transition struct {
	at            time.Time
	before, after time.Duration
}

func transitionsIn(loc *time.Location, from, to time.Time) []transition {
	var out []transition
	for s := from; s.Before(to); {
		lt := s.In(loc)
		_, off := lt.Zone()
		_, end := lt.ZoneBounds()
		if end.IsZero() || !end.Before(to) {
			break
		}
		_, next := end.In(loc).Zone()
		if next != off {
			out = append(out, transition{end.UTC(), time.Duration(off) * time.Second, time.Duration(next) * time.Second})
		}
		s = end
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
