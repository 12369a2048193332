package azure

import (
	"strings"
	"testing"

	"github.com/Azure/azure-sdk-for-go/sdk/messaging/azservicebus"
)

// A dead letter's ID names its entity and sequence number and reads back; a requeued copy's
// MessageId differs from the original (duplicate detection would drop it) and fits Service
// Bus's 128 characters; a subqueue message maps to the original message, its route and the
// broker's reason.
func TestServiceBusDeadLetterMapping(t *testing.T) {
	t.Parallel()
	sub := DeadLetterEntity{Topic: "tracking", Subscription: "attributes"}
	q := DeadLetterEntity{Queue: "notification-dispatch"}
	for _, c := range []struct {
		e   DeadLetterEntity
		seq int64
	}{{sub, 42}, {q, 0}, {DeadLetterEntity{Queue: "a@b"}, 7}} {
		id := deadLetterID(c.e, c.seq)
		path, seq, ok := parseDeadLetterID(id)
		if !ok || path != c.e.path() || seq != c.seq {
			t.Errorf("%s: parsed %q %d %v", id, path, seq, ok)
		}
	}
	for _, bad := range []string{"", "tracking", "@5", "tracking/attributes@", "tracking/attributes@-1", "x@y"} {
		if _, _, ok := parseDeadLetterID(bad); ok {
			t.Errorf("%q parsed", bad)
		}
	}
	if id := requeueID("evt-1:tracking", 42); id != "evt-1:tracking~rq42" {
		t.Errorf("requeue id %q", id)
	}
	long := strings.Repeat("x", 128)
	if id := requeueID(long, 42); len(id) > maxServiceBusMessageID || id == long || id != requeueID(long, 42) || id == requeueID(long, 43) {
		t.Errorf("long requeue id %q", id)
	}
	seq, reason, desc, session := int64(42), "MaxDeliveryCountExceeded", "Message could not be consumed after 10 delivery attempts.", "CUST-1"
	dl := toDeadLetter(sub, &azservicebus.ReceivedMessage{MessageID: "evt-1:tracking", Body: []byte(`{"event_id":"evt-1"}`), DeliveryCount: 10,
		SequenceNumber: &seq, DeadLetterReason: &reason, DeadLetterErrorDescription: &desc, SessionID: &session})
	if dl.ID != "tracking/attributes@42" || dl.Message.Destination != "tracking" || dl.Message.ID != "evt-1:tracking" || dl.Message.SessionID != "CUST-1" ||
		dl.Message.DeliveryCount != 10 || string(dl.Message.Body) != `{"event_id":"evt-1"}` || dl.Reason != reason+": "+desc {
		t.Fatalf("%+v", dl)
	}
	if q.destination() != "notification-dispatch" || sub.destination() != "tracking" {
		t.Fatal("destinations")
	}
}
