package localtime

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzParseDate checks that ParseDate accepts exactly the canonical
// "YYYY-MM-DD" spellings of real dates: anything accepted round-trips
// byte-for-byte through String and MarshalText/UnmarshalText and agrees with
// the time package's calendar; anything rejected gets an error quoting the
// input.
func FuzzParseDate(f *testing.F) {
	for _, s := range []string{
		"2026-10-04", "2028-02-29", "2027-02-29", "2026-04-31", "2026-13-01",
		"2026-1-01", "", "2026-01-01T00:00", "0001-01-01", "9999-12-31",
		"0000-01-01", "2026-00-00", "+026-01-01", "2026-01-0\x00",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseDate(s)
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("error %q does not quote input %q", err, s)
			}
			if d != (Date{}) {
				t.Fatalf("non-zero Date %#v returned with error", d)
			}
			return
		}
		if got := d.String(); got != s {
			t.Fatalf("ParseDate(%q).String() = %q", s, got)
		}
		if !d.IsValid() || d.IsZero() {
			t.Fatalf("ParseDate(%q) = %#v: IsValid=%v IsZero=%v", s, d, d.IsValid(), d.IsZero())
		}
		// Agrees with the time package's calendar (no normalisation).
		tt := time.Date(d.Year, d.Month, d.Day, 0, 0, 0, 0, time.UTC)
		if y, m, dd := tt.Date(); y != d.Year || m != d.Month || dd != d.Day {
			t.Fatalf("ParseDate(%q) accepted a date time.Date normalises to %s", s, tt.Format(time.DateOnly))
		}
		if got := tt.Format(time.DateOnly); got != s {
			t.Fatalf("time.Format = %q, input %q", got, s)
		}
		b, err := d.MarshalText()
		if err != nil || string(b) != s {
			t.Fatalf("MarshalText() = %q, %v; want %q", b, err, s)
		}
		var back Date
		if err := back.UnmarshalText(b); err != nil || back != d {
			t.Fatalf("UnmarshalText(%q) = %#v, %v; want %#v", b, back, err, d)
		}
		// Day arithmetic is invertible.
		if got := d.AddDays(1).AddDays(-1); got != d {
			t.Fatalf("%s +1 -1 day = %s", d, got)
		}
	})
}

// FuzzParseTimeOfDay is the TimeOfDay counterpart of FuzzParseDate.
func FuzzParseTimeOfDay(f *testing.F) {
	for _, s := range []string{"00:00", "23:59", "24:00", "25:00", "9:00", "09:60", "", "09:00:00", "-1:00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tod, err := ParseTimeOfDay(s)
		if err != nil {
			if !strings.Contains(err.Error(), strconv.Quote(s)) {
				t.Fatalf("error %q does not quote input %q", err, s)
			}
			return
		}
		if !tod.IsValid() {
			t.Fatalf("ParseTimeOfDay(%q) = %#v is not valid", s, tod)
		}
		if got := tod.String(); got != s {
			t.Fatalf("ParseTimeOfDay(%q).String() = %q", s, got)
		}
		var back TimeOfDay
		if err := back.UnmarshalText([]byte(s)); err != nil || back != tod {
			t.Fatalf("UnmarshalText(%q) = %#v, %v", s, back, err)
		}
	})
}
