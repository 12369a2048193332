package report

import (
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/teambition/rrule-go"

	"github.com/automation-platform/automation/shared/localtime"
)

// reference evaluates the schedule the slow, obviously right way: every occurrence from the
// rule's own DTSTART up to `until` (floating), resolved with the DST product rule.
func (s *Schedule) reference(t *testing.T, until time.Time) []Occurrence {
	t.Helper()
	o := s.opts
	o.Dtstart = s.dtstart
	if o.Until.IsZero() || until.Before(o.Until) {
		o.Until = until
	}
	r, err := rrule.NewRRule(o)
	if err != nil {
		t.Fatal(err)
	}
	var out []Occurrence
	next := r.Iterator()
	for w, ok := next(); ok; w, ok = next() {
		out = append(out, s.occurrence(w))
	}
	return out
}

// TestScheduleAgreesWithFullIterationFromDTSTART checks Next, Prev and Contains, which
// start iterating near the instant asked about, against every occurrence counted from the
// rule's DTSTART, for rules whose period, interval, week start, set positions and defaults
// taken from DTSTART all matter, at random instants years after DTSTART.
func TestScheduleAgreesWithFullIterationFromDTSTART(t *testing.T) {
	t.Parallel()
	rules := []struct{ rule, dtStart, zone string }{
		{"FREQ=HOURLY;INTERVAL=5", "1999-03-07T01:17", "Australia/Sydney"},
		{"FREQ=MINUTELY;INTERVAL=97", "2019-05-01T10:03", "America/New_York"},
		{"FREQ=HOURLY;BYHOUR=1,2,3;BYMINUTE=30", "2001-01-01T00:00", "America/New_York"},
		{"FREQ=DAILY;INTERVAL=3;BYHOUR=2,14;BYMINUTE=30", "1998-10-04T09:00", "Australia/Sydney"},
		{"FREQ=DAILY", "2004-10-31T02:30", "Australia/Lord_Howe"},
		{"FREQ=WEEKLY;INTERVAL=2;WKST=SU;BYDAY=SU,TU", "1997-08-05T08:00", "Australia/Sydney"},
		{"FREQ=WEEKLY;INTERVAL=3", "1993-03-14T02:30", "America/New_York"},
		{"FREQ=MONTHLY", "1996-01-31T09:00", "Australia/Sydney"},
		{"FREQ=MONTHLY;INTERVAL=5;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1", "1995-07-19T17:45", "America/New_York"},
		{"FREQ=MONTHLY;BYDAY=1SU;BYHOUR=2;BYMINUTE=30", "1990-01-01T00:00", "America/New_York"},
		{"FREQ=YEARLY", "1996-02-29T08:00", "Australia/Sydney"},
		{"FREQ=YEARLY;INTERVAL=3;BYWEEKNO=1,53;BYDAY=MO", "1991-06-01T06:00", "Europe/London"},
		{"FREQ=YEARLY;BYMONTH=3,10;BYDAY=-1SU;BYHOUR=1,2;BYMINUTE=30", "1992-01-01T00:00", "Europe/Berlin"},
		{"FREQ=WEEKLY;BYDAY=MO;UNTIL=20270315T000000Z", "1995-03-06T08:00", "Australia/Sydney"},
		{"FREQ=DAILY;COUNT=9000", "2003-02-01T07:00", "Asia/Kathmandu"},
		{"FREQ=HOURLY;INTERVAL=7;BYMONTH=3,10;BYDAY=SU", "1994-02-03T05:00", "Europe/Berlin"},
		{"FREQ=MINUTELY;INTERVAL=45;BYDAY=MO;BYHOUR=9,10", "2011-12-29T09:15", "Pacific/Apia"},
		{"FREQ=DAILY;INTERVAL=2;BYMONTHDAY=29,30,31", "2000-02-29T02:30", "America/Santiago"},
	}
	lo, hi := time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2031, 1, 1, 0, 0, 0, 0, time.UTC)
	for n, rc := range rules {
		t.Run(rc.rule, func(t *testing.T) {
			t.Parallel()
			rng := rand.New(rand.NewPCG(6, uint64(n))) // one per subtest: they run in parallel
			s, err := Compile(Recurrence{RRule: rc.rule, DTStart: rc.dtStart}, rc.zone)
			if err != nil {
				t.Fatal(err)
			}
			all := s.reference(t, s.floating(hi).Add(2*NeverOccursHorizon))
			for i := 0; i < 40; i++ {
				at := lo.Add(time.Duration(rng.Int64N(int64(hi.Sub(lo)))))
				if o := all[rng.IntN(len(all))]; i%4 == 0 && o.At.Before(hi) { // exactly on an occurrence, too
					at = o.At
				}
				var wantNext, wantPrev *Occurrence
				for j := range all {
					o := all[j]
					if o.At.After(at) && (wantNext == nil || o.At.Before(wantNext.At)) {
						wantNext = &all[j]
					}
					if o.At.Before(at) && (wantPrev == nil || o.At.After(wantPrev.At)) {
						wantPrev = &all[j]
					}
				}
				next, ok := s.Next(at)
				if (wantNext != nil) != ok || (ok && next != *wantNext) {
					t.Fatalf("Next(%s) = %+v %v, want %+v", at.Format(time.RFC3339), next, ok, wantNext)
				}
				prev, ok := s.Prev(at)
				if (wantPrev != nil) != ok || (ok && prev != *wantPrev) {
					t.Fatalf("Prev(%s) = %+v %v, want %+v", at.Format(time.RFC3339), prev, ok, wantPrev)
				}
				if wantNext != nil && !s.Contains(wantNext.Date, wantNext.Time) {
					t.Fatalf("Contains(%s %s) = false", wantNext.Date, wantNext.Time)
				}
				if w := s.floating(at).Truncate(time.Minute); !containsWall(all, w) && s.Contains(localtime.Date{Year: w.Year(), Month: w.Month(), Day: w.Day()},
					localtime.TimeOfDay{Hour: w.Hour(), Minute: w.Minute()}) {
					t.Fatalf("Contains(%s) = true for a wall time that is no occurrence", w)
				}
			}
		})
	}
}

func containsWall(all []Occurrence, w time.Time) bool {
	for _, o := range all {
		if o.Date.Year == w.Year() && o.Date.Month == w.Month() && o.Date.Day == w.Day() && o.Time.Hour == w.Hour() && o.Time.Minute == w.Minute() {
			return true
		}
	}
	return false
}

// TestScheduleWorkDoesNotGrowWithTheAgeOfDTSTART: finding the next or previous run of an
// hourly rule whose DTSTART is decades old must not walk every hour since DTSTART (it did:
// about 2 s per call for a DTSTART in 1500, on every GET, list item and run). Allocations
// count the work deterministically.
func TestScheduleWorkDoesNotGrowWithTheAgeOfDTSTART(t *testing.T) {
	s, err := Compile(Recurrence{RRule: "FREQ=HOURLY", DTStart: "1970-01-01T00:00"}, "Australia/Sydney")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 9, 1, 0, 30, 0, 0, time.UTC)
	for name, f := range map[string]func(){
		"Next":     func() { s.Next(at) },
		"Prev":     func() { s.Prev(at) },
		"Contains": func() { s.Contains(localtime.MustDate("2026-09-01"), localtime.TimeOfDay{Hour: 10}) },
	} {
		if n := testing.AllocsPerRun(1, f); n > 20000 {
			t.Errorf("%s: %.0f allocations for one call (it walks from DTSTART)", name, n)
		}
	}
}

// rrule-go panics on some rules (index out of range); the poller runs handlers in their own
// goroutines, where a panic would stop the whole process. A panic inside the library ends
// the iteration and is reported by Err (and Validate) instead. The rule is built past
// Compile's checks, as a stored rule a future rrule-go version might trip on.
func TestSchedulePanicInRRuleIsAnError(t *testing.T) {
	t.Parallel()
	s, err := Compile(Recurrence{RRule: "FREQ=MONTHLY;BYDAY=1MO", DTStart: "2026-09-07T08:00"}, "UTC")
	if err != nil {
		t.Fatal(err)
	}
	s.opts.Byweekday = []rrule.Weekday{rrule.MO.Nth(53)} // index out of range in rrule-go
	at := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	if o, ok := s.Next(at); ok {
		t.Fatalf("Next = %+v", o)
	}
	if s.Err() == nil {
		t.Fatal("Err() = nil after a panic in rrule-go")
	}
	if err := s.Validate(at, time.Hour); err == nil || !strings.Contains(err.Error(), "cannot be evaluated") {
		t.Fatalf("Validate = %v", err)
	}
}

// A rule whose day filters no date ever satisfies produced nothing, so rrule-go walked every
// day (every minute of the allowed hours) to year 9999 before Validate could say "never
// occurs": up to 7 s of CPU per request for FREQ=MINUTELY;BYMONTH=1;BYMONTHDAY=31;
// BYWEEKNO=53,-1. The day filters are tried once on a yearly grid first. Allocations count
// the work deterministically.
func TestNeverMatchingDayFiltersAreRefusedCheaply(t *testing.T) {
	now := time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC)
	for _, rule := range []string{
		"FREQ=MINUTELY;BYHOUR=23;BYMONTH=1;BYMONTHDAY=-1,31;BYWEEKNO=53,-1",
		"FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=30",
		"FREQ=DAILY;BYYEARDAY=366;BYMONTH=2",
		"FREQ=WEEKLY;BYMONTH=4;BYMONTHDAY=31;BYDAY=MO",
	} {
		var err error
		n := testing.AllocsPerRun(1, func() {
			var s *Schedule
			if s, err = Compile(Recurrence{RRule: rule, DTStart: "2026-01-01T00:00"}, "UTC"); err == nil {
				err = s.Validate(now, time.Hour)
			}
		})
		if err == nil || !strings.Contains(err.Error(), "never occurs") {
			t.Errorf("%s: %v", rule, err)
		}
		if n > 50000 {
			t.Errorf("%s: %.0f allocations to find it never occurs", rule, n)
		}
	}
	// Day filters that do match keep working, ordinals included (ignored below MONTHLY).
	for _, rule := range []string{"FREQ=HOURLY;BYMONTH=2;BYMONTHDAY=29", "FREQ=DAILY;BYDAY=1MO;BYMONTH=3", "FREQ=MINUTELY;INTERVAL=60;BYWEEKNO=53;BYDAY=TH"} {
		s, err := Compile(Recurrence{RRule: rule, DTStart: "2026-01-01T00:00"}, "UTC")
		if err == nil {
			err = s.Validate(now, time.Hour)
		}
		if err != nil {
			t.Errorf("%s: %v", rule, err)
		}
	}
}

// Prev widens its look-back window eightfold each time it finds nothing; past 292 years the
// window overflowed time.Duration, went negative and the search never reached DTSTART.
func TestPrevFarAfterTheLastOccurrence(t *testing.T) {
	t.Parallel()
	s, err := Compile(Recurrence{RRule: "FREQ=DAILY;UNTIL=19710101T000000", DTStart: "1970-01-01T09:00"}, "UTC")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan Occurrence, 1)
	go func() {
		o, _ := s.Prev(time.Date(2600, 1, 1, 0, 0, 0, 0, time.UTC))
		done <- o
	}()
	select {
	case o := <-done:
		if want := time.Date(1970, 12, 31, 9, 0, 0, 0, time.UTC); !o.At.Equal(want) {
			t.Fatalf("Prev = %+v, want %s", o, want)
		}
	case <-time.After(time.Minute):
		t.Fatal("Prev did not return within a minute")
	}
}
