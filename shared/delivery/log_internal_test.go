package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// Each outcome's log line has its message and errorCode: a wait for the channel's limits,
// a wait for quiet hours and a retry each have their own words, and the rest say their
// status (alerts match errorCode without parsing the error text).
func TestOutcomeLogLineNamesTheOutcome(t *testing.T) {
	t.Parallel()
	next := time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	busy := "send: " + ErrProviderBusy.Error()
	for _, tc := range []struct {
		name      string
		o         Outcome
		msg, code string
	}{
		{"sent", Outcome{Status: store.NotificationSent}, "delivery sent", ""},
		{"failed", Outcome{Status: store.NotificationFailed, Error: "refused"}, "delivery failed", "DeliveryFailed"},
		{"skipped", Outcome{Status: store.NotificationSkipped, Error: "opted out"}, "delivery skipped", "DeliverySkipped"},
		{"unknown", Outcome{Status: store.NotificationUnknown, Resolution: ResolutionManual, Error: "no answer"}, "delivery unknown", "DeliveryUnknown"},
		{"retry", Outcome{Status: store.NotificationQueued, Resolution: ResolutionRetry, NextAttemptOn: &next, Error: "503"}, "delivery retry scheduled", "DeliveryRetryScheduled"},
		{"quiet hours", Outcome{Status: store.NotificationQueued, Resolution: ResolutionWait, NextAttemptOn: &next, Error: "waiting for quiet hours"}, "delivery waiting for quiet hours", "DeliveryQuietHours"},
		{"channel's limits", Outcome{Status: store.NotificationQueued, Resolution: ResolutionWait, NextAttemptOn: &next, Error: busy}, "delivery waiting for the channel's limits", "DeliveryProviderBusy"},
		{"limits on a lookup", Outcome{Status: store.NotificationUnknown, Resolution: ResolutionLookup, NextAttemptOn: &next, Error: busy}, "delivery waiting for the channel's limits", "DeliveryProviderBusy"},
	} {
		var buf bytes.Buffer
		d := &Dispatcher{Log: slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
		d.log(context.Background(), tc.o)
		var rec struct{ Msg, ErrorCode string }
		if err := json.Unmarshal(buf.Bytes(), &rec); err != nil {
			t.Fatalf("%s: log line %q: %v", tc.name, buf.String(), err)
		}
		if rec.Msg != tc.msg || rec.ErrorCode != tc.code {
			t.Errorf("%s: logged %q with errorCode %q, want %q with %q", tc.name, rec.Msg, rec.ErrorCode, tc.msg, tc.code)
		}
	}
}
