package delivery

import (
	"context"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// Gate is asked, before a claimed delivery is rendered and sent, whether the recipient's
// preferences or quiet hours hold it (docs/channels.md#recipient-preferences;
// shared/preference implements it). It is asked on a clean claim, and on an in-doubt one
// once the channel's lookup said the earlier attempt did not arrive. An in-doubt claim on an
// idempotent channel (no lookup) asks it too, but only an opt-out recorded before the job
// was created ends it Skipped (no earlier attempt can have been sent); otherwise the resend
// of an attempt that may have arrived is the same message, not a new one.
type Gate interface {
	// Check decides job at now (UTC). An error means the decision could not be read (the
	// store was unavailable): nothing is sent and the delivery is retried.
	Check(ctx context.Context, job store.NotificationJob, now time.Time) (GateDecision, error)
}

// GateDecision is the Gate's answer: send (the zero value), skip for good, or wait.
type GateDecision struct {
	// Skip: the recipient opted out; the delivery ends Skipped with Reason.
	Skip bool
	// Since, on a Skip, is the instant (UTC) the opt-out was recorded (the preference's
	// ChangedOn); zero when the Gate cannot tell. An in-doubt resend on an idempotent
	// channel is skipped only when Since is before the job's CreatedOn: no earlier attempt
	// of the job can then have passed the gate (Dispatcher.gateInDoubt).
	Since time.Time
	// Wait: quiet hours; the delivery waits until Until (UTC) and is claimed again then,
	// without using up its retry ladder. Reason says so in the recipient's local time
	// ("waiting for quiet hours to end at 2026-10-04 08:00 (Australia/Sydney)").
	Wait   bool
	Until  time.Time
	Reason string
	// ListUnsubscribe, on a send, is the one-click unsubscribe URL (RFC 8058) the message
	// carries (a marketing message on a channel that has one); "" for none.
	ListUnsubscribe string
}
