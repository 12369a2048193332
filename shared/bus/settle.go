package bus

import (
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// SettleAction is what a consumer does with a delivered message once its handler returned.
type SettleAction int

// Settle actions.
const (
	ActionComplete   SettleAction = iota // done: remove the message
	ActionRedeliver                      // abandon it: deliver it again (after Delay, if any)
	ActionDeadLetter                     // give up: move it to the dead-letter list/queue
)

func (a SettleAction) String() string {
	switch a {
	case ActionComplete:
		return "Complete"
	case ActionRedeliver:
		return "Redeliver"
	case ActionDeadLetter:
		return "DeadLetter"
	}
	return "SettleAction(?)"
}

// Settlement is the outcome of Settle.
type Settlement struct {
	Action SettleAction
	// Delay (ActionRedeliver) is the earliest redelivery the handler asked for with
	// automation.RetryAfter; 0 leaves the transport's own backoff in charge.
	Delay time.Duration
}

// Settle is the one place a bus handler's error (its automation.Intent) becomes message
// settlement, for every transport (Memory; the Service Bus harness):
//
//	handler result                         action
//	nil                                    ActionComplete
//	automation.Permanent                   ActionDeadLetter at once, err as the reason
//	any error at deliveryCount >= max      ActionDeadLetter (MaxDeliveryCount reached)
//	automation.RetryAfter(d, …)            ActionRedeliver, Delay d
//	automation.Unknown, any other error    ActionRedeliver (the handler's own idempotence
//	                                       decides on redelivery; the delivery Dispatcher
//	                                       settles UNKNOWN sends itself and never returns them)
//
// deliveryCount is the 1-based count of the delivery that just failed.
func Settle(err error, deliveryCount, maxDeliveryCount int) Settlement {
	switch automation.IntentOf(err) {
	case automation.IntentNone:
		return Settlement{Action: ActionComplete}
	case automation.IntentPermanent:
		return Settlement{Action: ActionDeadLetter}
	}
	if deliveryCount >= maxDeliveryCount {
		return Settlement{Action: ActionDeadLetter}
	}
	d, _ := automation.RetryAfterOf(err)
	return Settlement{Action: ActionRedeliver, Delay: d}
}
