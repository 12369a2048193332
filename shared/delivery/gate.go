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
// idempotent channel (no lookup) asks it too, but only an opt-out recorded at or before the
// job's first claim ends it Skipped (no earlier attempt can have passed the gate); otherwise
// the resend of an attempt that may have arrived is the same message, not a new one.
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
	// channel, or an in-doubt campaign command, is skipped only when Since is not after the
	// job's FirstClaimedOn (its CreatedOn when it has none): no earlier attempt of it can
	// then have passed the gate (Dispatcher.gateInDoubt, campaign.Worker.gate).
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
