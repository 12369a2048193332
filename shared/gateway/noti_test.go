package gateway_test

import (
	"context"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/store"
)

// enqueued records what a NotiDelivery asked the store to enqueue.
type enqueued struct {
	calls []store.NotificationEnqueueParams
}

func (e *enqueued) NotificationEnqueue(_ context.Context, p store.NotificationEnqueueParams) error {
	e.calls = append(e.calls, p)
	return nil
}

// A noti message is one JSON value: a body with a second value after the payload is bad
// input (automation.Invalid, dead-lettered) and enqueues nothing, as an unknown member does;
// the payload alone enqueues its deliveries.
func TestNotiTakesOnePayload(t *testing.T) {
	t.Parallel()
	const payload = `{"event_id":"e-1","source":"/app","business_unit_id":"bu-1","route":"noti",` +
		`"notification":{"template":"t","channels":["log"],"recipients":["a@example.test"]}}`
	for _, c := range []struct {
		name, body string
		want       int // deliveries enqueued; 0: refused
	}{
		{"the payload", payload, 1},
		{"a second value after it", payload + ` {"event_id":"e-2"}`, 0},
		{"text after it", payload + `x`, 0},
		{"an unknown member", `{"colour":"red",` + payload[1:], 0},
	} {
		st := &enqueued{}
		n := &gateway.NotiDelivery{Store: st, Clock: automation.NewManualClock(time.Date(2026, 7, 10, 16, 0, 0, 0, time.UTC))}
		err := n.Handle(context.Background(), []byte(c.body))
		switch {
		case c.want == 0 && (!automation.IsInvalid(err) || len(st.calls) != 0):
			t.Errorf("%s: err %v, %d enqueues; want bad input and none", c.name, err, len(st.calls))
		case c.want > 0 && (err != nil || len(st.calls) != 1 || len(st.calls[0].Deliveries) != c.want):
			t.Errorf("%s: err %v, enqueues %+v; want %d delivery", c.name, err, st.calls, c.want)
		}
	}
}
