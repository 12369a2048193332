package automation_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// TestIntentOf classifies errors the way every consumer (scheduler, dispatcher, bus,
// Functions host) reads them: through wrapping at any depth and errors.Join.
func TestIntentOf(t *testing.T) {
	t.Parallel()
	cause := errors.New("boom")
	cases := []struct {
		name   string
		err    error
		want   automation.Intent
		reason automation.ReasonCode
		after  time.Duration
	}{
		{"nil", nil, automation.IntentNone, "", 0},
		{"unmarked", cause, automation.IntentRetry, "", 0},
		{"coded but unmarked", automation.Errorf(automation.CodeConflict, "x"), automation.IntentRetry, "", 0},
		{"permanent", automation.Permanent(cause), automation.IntentPermanent, "", 0},
		{"permanent with reason", automation.PermanentReason(automation.ReasonPermanentError, cause), automation.IntentPermanent, automation.ReasonPermanentError, 0},
		{"retry after", automation.RetryAfter(time.Minute, cause), automation.IntentRetryAfter, "", time.Minute},
		{"retry after a negative delay is now", automation.RetryAfter(-time.Second, cause), automation.IntentRetryAfter, "", 0},
		{"unknown", automation.Unknown(cause), automation.IntentUnknown, "", 0},
		{"wrapped", fmt.Errorf("send: %w", automation.Unknown(cause)), automation.IntentUnknown, "", 0},
		{"wrapped permanent", fmt.Errorf("ctx: %w", automation.Permanent(cause)), automation.IntentPermanent, "", 0},
		{"double-wrapped", fmt.Errorf("a: %w", fmt.Errorf("b: %w", automation.PermanentReason("X", cause))), automation.IntentPermanent, "X", 0},
		{"mark inside a coded error", &automation.Error{Code: automation.CodeInvalidInput, Message: "m", Err: automation.Permanent(cause)}, automation.IntentPermanent, "", 0},
		{"joined: unmarked then marked", errors.Join(cause, automation.Unknown(cause)), automation.IntentUnknown, "", 0},
		{"joined: another error then permanent", errors.Join(errors.New("x"), automation.Permanent(cause)), automation.IntentPermanent, "", 0},
		{"joined: the first mark wins", errors.Join(automation.Permanent(cause), automation.Unknown(cause)), automation.IntentPermanent, "", 0},
		{"joined: the first mark wins (other order)", errors.Join(automation.RetryAfter(time.Second, cause), automation.Permanent(cause)), automation.IntentRetryAfter, "", time.Second},
		{"joined, none marked", errors.Join(cause, errors.New("other")), automation.IntentRetry, "", 0},
		{"outer mark wins over inner", automation.Unknown(automation.Permanent(cause)), automation.IntentUnknown, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := automation.IntentOf(c.err); got != c.want {
				t.Errorf("IntentOf = %q, want %q", got, c.want)
			}
			if got := automation.IsPermanent(c.err); got != (c.want == automation.IntentPermanent) {
				t.Errorf("IsPermanent = %v", got)
			}
			if got := automation.PermanentReasonOf(c.err); got != c.reason {
				t.Errorf("PermanentReasonOf = %q, want %q", got, c.reason)
			}
			d, ok := automation.RetryAfterOf(c.err)
			if ok != (c.want == automation.IntentRetryAfter) || d != c.after {
				t.Errorf("RetryAfterOf = %v, %v; want %v", d, ok, c.after)
			}
			if c.err != nil && c.want != automation.IntentRetry && !errors.Is(c.err, cause) {
				t.Error("the mark hides the cause from errors.Is")
			}
		})
	}
}

// A mark is transparent: same text, errors.Is and errors.As see through it, and marking
// nil is nil (so `return automation.Permanent(err)` after a call that succeeded is safe).
func TestIntentMarksAreTransparent(t *testing.T) {
	t.Parallel()
	inner := automation.Invalid("data.x", "bad")
	for name, mark := range map[string]func(error) error{
		"Permanent":       automation.Permanent,
		"PermanentReason": func(e error) error { return automation.PermanentReason("R", e) },
		"RetryAfter":      func(e error) error { return automation.RetryAfter(time.Second, e) },
		"Unknown":         automation.Unknown,
	} {
		if mark(nil) != nil {
			t.Errorf("%s(nil) is not nil", name)
		}
		err := mark(inner)
		var ae *automation.Error
		if err.Error() != inner.Error() || !errors.Is(err, inner) || !errors.As(err, &ae) || ae.Field != "data.x" ||
			automation.CodeOf(err) != automation.CodeInvalidInput {
			t.Errorf("%s: %q hides what it marks", name, err)
		}
	}
}
