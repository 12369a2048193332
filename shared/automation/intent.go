package automation

import (
	"errors"
	"time"
)

// Intent is what a failed operation asks of whoever retries it: the one vocabulary of
// "give up", "retry after" and "outcome unknown" shared by the scheduler, the delivery
// channels, the bus and the Functions host (in the spirit of River's JobCancel and
// JobSnooze). Mark an error with Permanent, PermanentReason, RetryAfter or Unknown; read it
// back with IntentOf. An unmarked error means IntentRetry.
//
// Where each intent is turned into behaviour (one place per transport):
//
//	intent           scheduler.Poller        delivery.Dispatcher          bus.Settle              funchost.Router
//	IntentRetry      backoff ladder          backoff ladder               redeliver (delay)       500: host retries
//	IntentRetryAfter backoff ladder          backoff ladder               redeliver after d       500: host retries
//	IntentPermanent  support hold now        job Failed (that recipient)  dead-letter now         200: acknowledged
//	IntentUnknown    backoff ladder          idempotent: ladder; lookup   redeliver (delay)       500: host retries
//	                                         or manual resolution
//
// HTTP statuses come from ErrorCode, not from intents (shared/httpapi.StatusOf).
type Intent string

// Intents.
const (
	// IntentNone: no error.
	IntentNone Intent = ""
	// IntentRetry: a transient failure (nothing was done); retry with backoff.
	IntentRetry Intent = "Retry"
	// IntentRetryAfter: a transient failure that names the earliest useful retry.
	IntentRetryAfter Intent = "RetryAfter"
	// IntentPermanent: retrying can never succeed; give up now.
	IntentPermanent Intent = "Permanent"
	// IntentUnknown: the outcome cannot be known — the request may have been applied
	// (e.g. a provider timeout after the request was written). Never assume it failed.
	IntentUnknown Intent = "Unknown"
)

// intentError marks an error with an intent. It is transparent: Error and Unwrap are those
// of the marked error, so errors.Is and errors.As see through it.
type intentError struct {
	intent Intent
	reason ReasonCode    // IntentPermanent: the FailureReasonCode to record, or ""
	after  time.Duration // IntentRetryAfter: the delay
	err    error
}

func (e *intentError) Error() string { return e.err.Error() }
func (e *intentError) Unwrap() error { return e.err }

func mark(e *intentError) error {
	if e.err == nil {
		return nil
	}
	return e
}

// Permanent marks err as one that retrying cannot fix: a scheduler row goes on support
// hold now, a delivery fails for that recipient, a bus message is dead-lettered, a host
// invocation is acknowledged without retry. Permanent(nil) is nil.
func Permanent(err error) error { return mark(&intentError{intent: IntentPermanent, err: err}) }

// PermanentReason is Permanent with the FailureReasonCode a scheduler row is held with
// (instead of ReasonPermanentError), so support can filter on the cause. It is nil for a
// nil err.
func PermanentReason(reason ReasonCode, err error) error {
	return mark(&intentError{intent: IntentPermanent, reason: reason, err: err})
}

// RetryAfter marks err as transient, worth retrying no earlier than d from now (d < 0 is
// taken as 0). RetryAfter(d, nil) is nil.
func RetryAfter(d time.Duration, err error) error {
	return mark(&intentError{intent: IntentRetryAfter, after: max(d, 0), err: err})
}

// Unknown marks err as an outcome that cannot be known: the request may have been applied.
// Unknown(nil) is nil.
func Unknown(err error) error { return mark(&intentError{intent: IntentUnknown, err: err}) }

// IntentOf returns the intent err was marked with: IntentNone for nil, IntentRetry for an
// unmarked error. Marks are found as errors.As finds them: through %w wrapping at any depth
// and through errors.Join (the first marked error, depth first, wins).
func IntentOf(err error) Intent {
	if err == nil {
		return IntentNone
	}
	var e *intentError
	if errors.As(err, &e) {
		return e.intent
	}
	return IntentRetry
}

// IsPermanent reports whether IntentOf(err) is IntentPermanent.
func IsPermanent(err error) bool { return IntentOf(err) == IntentPermanent }

// PermanentReasonOf returns the reason given to PermanentReason, or "" (also for an error
// marked with another intent).
func PermanentReasonOf(err error) ReasonCode {
	var e *intentError
	if errors.As(err, &e) && e.intent == IntentPermanent {
		return e.reason
	}
	return ""
}

// RetryAfterOf returns the delay given to RetryAfter, and whether err was so marked.
func RetryAfterOf(err error) (time.Duration, bool) {
	var e *intentError
	if errors.As(err, &e) && e.intent == IntentRetryAfter {
		return e.after, true
	}
	return 0, false
}
