package localtime

import (
	"fmt"
	"time"
)

// Date is a calendar date with no zone and no time of day: a local date of
// some business unit, interpreted in whatever zone that unit uses.
//
// Year is the proleptic Gregorian year, Month is 1..12 and Day is 1..31
// (bounded by the month's length). The zero value Date{} is not a valid
// date; it means "unset" (see [Date.IsZero]).
//
// Dates are compared and shifted in calendar terms; see [Date.AddDays].
type Date struct {
	Year  int
	Month time.Month
	Day   int
}

// ParseDate parses s in the strict form "YYYY-MM-DD" (exactly four year
// digits, two month digits, two day digits, ASCII '-' separators, nothing
// before or after). Years 0001..9999 are accepted.
//
// It returns an error, quoting s, if the form is wrong (e.g. "2026-1-01",
// "2026-01-01T00:00", "") or the date does not exist on the calendar
// (e.g. "2027-02-29", "2026-04-31", "2026-13-01").
func ParseDate(s string) (Date, error) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return Date{}, fmt.Errorf("localtime: invalid date %q: want YYYY-MM-DD", s)
	}
	y, ok1 := atoiDigits(s[0:4])
	m, ok2 := atoiDigits(s[5:7])
	d, ok3 := atoiDigits(s[8:10])
	if !ok1 || !ok2 || !ok3 {
		return Date{}, fmt.Errorf("localtime: invalid date %q: want YYYY-MM-DD", s)
	}
	if y < 1 {
		return Date{}, fmt.Errorf("localtime: invalid date %q: year must be 0001..9999", s)
	}
	if m < 1 || m > 12 {
		return Date{}, fmt.Errorf("localtime: invalid date %q: month %d out of range 01..12", s, m)
	}
	if n := daysIn(y, time.Month(m)); d < 1 || d > n {
		return Date{}, fmt.Errorf("localtime: invalid date %q: day %d out of range 01..%02d for %s %04d",
			s, d, n, time.Month(m), y)
	}
	return Date{Year: y, Month: time.Month(m), Day: d}, nil
}

// MustDate is like [ParseDate] but panics if s is not a valid "YYYY-MM-DD"
// date. It is meant for tests, examples and constants, not for input.
func MustDate(s string) Date {
	d, err := ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

// String returns the date as "YYYY-MM-DD" (year zero-padded to four digits).
// Invalid dates are formatted field by field without normalisation, so
// Date{}.String() is "0000-00-00".
func (d Date) String() string {
	return fmt.Sprintf("%04d-%02d-%02d", d.Year, int(d.Month), d.Day)
}

// IsValid reports whether d is a real calendar date with year 1..9999, i.e.
// whether ParseDate(d.String()) would succeed and return d.
func (d Date) IsValid() bool {
	return d.Year >= 1 && d.Year <= 9999 &&
		d.Month >= time.January && d.Month <= time.December &&
		d.Day >= 1 && d.Day <= daysIn(d.Year, d.Month)
}

// IsZero reports whether d is the zero value Date{} ("unset"). It makes
// `json:",omitzero"` omit unset dates.
func (d Date) IsZero() bool {
	return d == Date{}
}

// AddDays returns the date n calendar days after d (before d if n < 0).
// This is calendar arithmetic on the local date: it never adds multiples of
// 24 hours, so a DST change between the two dates has no effect. Fields of an
// invalid d are normalised as by [time.Date] (e.g. 2026-01-32 is 2026-02-01).
func (d Date) AddDays(n int) Date {
	// Noon UTC: no DST in UTC, so this is pure calendar arithmetic.
	t := time.Date(d.Year, d.Month, d.Day+n, 12, 0, 0, 0, time.UTC)
	y, m, dd := t.Date()
	return Date{Year: y, Month: m, Day: dd}
}

// Compare returns -1 if d is before o, 0 if they are the same date and +1 if
// d is after o (field by field: year, month, day).
func (d Date) Compare(o Date) int {
	switch {
	case d.Year != o.Year:
		return cmpInt(d.Year, o.Year)
	case d.Month != o.Month:
		return cmpInt(int(d.Month), int(o.Month))
	default:
		return cmpInt(d.Day, o.Day)
	}
}

// Before reports whether d is strictly before o.
func (d Date) Before(o Date) bool { return d.Compare(o) < 0 }

// After reports whether d is strictly after o.
func (d Date) After(o Date) bool { return d.Compare(o) > 0 }

// DateOf returns the local calendar date, in loc, of the instant t.
// The zone attached to t is irrelevant; only the instant is used.
// It panics if loc is nil (as [time.Time.In] does).
func DateOf(t time.Time, loc *time.Location) Date {
	y, m, d := t.In(loc).Date()
	return Date{Year: y, Month: m, Day: d}
}

// AnniversaryIn returns the date with orig's month and day in the given year.
// A 29 February anniversary falls on 28 February in common years (more
// generally, the day is clamped to the month's length in that year).
func AnniversaryIn(orig Date, year int) Date {
	day := orig.Day
	if n := daysIn(year, orig.Month); day > n {
		day = n
	}
	return Date{Year: year, Month: orig.Month, Day: day}
}

// MarshalText implements [encoding.TextMarshaler]; it returns "YYYY-MM-DD".
// It returns an error for a date that is not valid (including the zero
// value), so that it never emits text [ParseDate] would reject; use
// `json:",omitzero"` or a *Date for optional dates.
func (d Date) MarshalText() ([]byte, error) { return marshalValid(d.IsValid(), "date", d) }

// UnmarshalText implements [encoding.TextUnmarshaler]; it accepts exactly
// what [ParseDate] accepts and returns ParseDate's error otherwise (d is left
// unchanged on error).
func (d *Date) UnmarshalText(b []byte) error { return unmarshalWith(d, b, ParseDate) }

// marshalValid is v's text when valid, else an error naming what ("date") and v.
func marshalValid(valid bool, what string, v fmt.Stringer) ([]byte, error) {
	if !valid {
		return nil, fmt.Errorf("localtime: cannot marshal invalid %s %s", what, v)
	}
	return []byte(v.String()), nil
}

// unmarshalWith sets *dst to parse(b); on an error it returns parse's error and leaves
// *dst unchanged.
func unmarshalWith[T any](dst *T, b []byte, parse func(string) (T, error)) error {
	v, err := parse(string(b))
	if err != nil {
		return err
	}
	*dst = v
	return nil
}

// daysIn returns the number of days in month m of year y (0 for an invalid
// month).
func daysIn(y int, m time.Month) int {
	switch m {
	case time.January, time.March, time.May, time.July, time.August, time.October, time.December:
		return 31
	case time.April, time.June, time.September, time.November:
		return 30
	case time.February:
		if isLeap(y) {
			return 29
		}
		return 28
	}
	return 0
}

func isLeap(y int) bool {
	return y%4 == 0 && (y%100 != 0 || y%400 == 0)
}

// atoiDigits parses a non-empty string of ASCII digits only (no sign, no
// spaces).
func atoiDigits(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
