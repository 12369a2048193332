package channel

import (
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/delivery"
)

// repeatabilityFirstSent writes the instant in GMT whatever zone the message's instants
// carry (ACS reads the RFC 1123 "GMT" text as UTC, so a local clock reading would move the
// instant by the zone's offset and ACS would see a different first send), and the same text
// on every attempt: CreatedOn when set, else SentOn.
func TestRepeatabilityFirstSentIsGMT(t *testing.T) {
	t.Parallel()
	hcm := time.FixedZone("UTC+7", 7*3600) // Asia/Ho_Chi_Minh has had no DST since 1975
	created := time.Date(2026, 3, 1, 9, 30, 0, 0, hcm)
	sent := created.Add(time.Hour)
	for _, c := range []struct {
		name string
		m    delivery.Message
		want string
	}{
		{"CreatedOn in a zone", delivery.Message{CreatedOn: created, SentOn: sent}, "Sun, 01 Mar 2026 02:30:00 GMT"},
		{"no CreatedOn: SentOn in a zone", delivery.Message{SentOn: sent}, "Sun, 01 Mar 2026 03:30:00 GMT"},
		{"a later attempt keeps CreatedOn's", delivery.Message{CreatedOn: created.UTC(), SentOn: sent.Add(time.Hour)}, "Sun, 01 Mar 2026 02:30:00 GMT"},
	} {
		if got := repeatabilityFirstSent(c.m); got != c.want {
			t.Errorf("%s: repeatabilityFirstSent = %q, want %q", c.name, got, c.want)
		}
	}
}
