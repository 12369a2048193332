package automationtest

import "time"

// Instant parses s, an RFC 3339 instant written in a test ("2026-10-01T00:00:00Z"), in the
// location its offset gives; a bad literal is the test's own bug, so it panics.
func Instant(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}
