package localtime

import "fmt"

// TimeOfDay is a local wall-clock time of day with minute precision, in the
// zone of whatever it is combined with (see [Resolve]). Hour is 0..23 and
// Minute is 0..59. The zero value is midnight, 00:00.
type TimeOfDay struct {
	Hour, Minute int
}

// ParseTimeOfDay parses s in the strict 24-hour form "HH:MM" (exactly two
// hour digits, ':', two minute digits, nothing else), 00:00 through 23:59.
// It returns an error quoting s for anything else, e.g. "9:00" (width),
// "25:00" (hour out of range), "09:60" (minute out of range), "24:00",
// "09:00:00".
func ParseTimeOfDay(s string) (TimeOfDay, error) {
	if len(s) != 5 || s[2] != ':' {
		return TimeOfDay{}, fmt.Errorf("localtime: invalid time of day %q: want HH:MM (24-hour, 00:00..23:59)", s)
	}
	h, ok1 := atoiDigits(s[0:2])
	m, ok2 := atoiDigits(s[3:5])
	if !ok1 || !ok2 {
		return TimeOfDay{}, fmt.Errorf("localtime: invalid time of day %q: want HH:MM (24-hour, 00:00..23:59)", s)
	}
	if h > 23 {
		return TimeOfDay{}, fmt.Errorf("localtime: invalid time of day %q: hour %d out of range 00..23", s, h)
	}
	if m > 59 {
		return TimeOfDay{}, fmt.Errorf("localtime: invalid time of day %q: minute %d out of range 00..59", s, m)
	}
	return TimeOfDay{Hour: h, Minute: m}, nil
}

// IsValid reports whether t is within 00:00..23:59.
func (t TimeOfDay) IsValid() bool {
	return t.Hour >= 0 && t.Hour <= 23 && t.Minute >= 0 && t.Minute <= 59
}

// String returns the time as "HH:MM" (zero-padded, 24-hour). Invalid values
// are formatted field by field without normalisation.
func (t TimeOfDay) String() string {
	return fmt.Sprintf("%02d:%02d", t.Hour, t.Minute)
}

// MarshalText implements [encoding.TextMarshaler]; it returns "HH:MM", or an
// error if t is not within 00:00..23:59.
func (t TimeOfDay) MarshalText() ([]byte, error) {
	return marshalValid(t.IsValid(), "time of day", t)
}

// UnmarshalText implements [encoding.TextUnmarshaler]; it accepts exactly
// what [ParseTimeOfDay] accepts and returns its error otherwise (t is left
// unchanged on error).
func (t *TimeOfDay) UnmarshalText(b []byte) error { return unmarshalWith(t, b, ParseTimeOfDay) }
