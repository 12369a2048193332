package funchost_test

import (
	"encoding/json"
	"testing"

	"github.com/automation-platform/automation/shared/funchost"
)

// A single-message invocation (the single-message Metadata, MessageId and DeliveryCount, no
// *Array key) whose body is a JSON array that the host sent as is was taken for a batch:
// each element became a message of its own, without a MessageId, and the one real message
// was lost among them. Found by a hostile review (issue 32): the single-message Metadata
// decides, so the array is the one message's body.
func TestSingleMessageWithArrayBodyIsNotABatch(t *testing.T) {
	t.Parallel()
	for name, data := range map[string]string{"as is": `[1,{"a":2},"x"]`, "as a string": `"[1,{\"a\":2},\"x\"]"`} {
		req := &funchost.InvocationRequest{
			Data:     map[string]json.RawMessage{"message": json.RawMessage(data)},
			Metadata: map[string]json.RawMessage{"MessageId": json.RawMessage(`"m1"`), "DeliveryCount": json.RawMessage(`"2"`)},
		}
		items, err := funchost.DecodeServiceBusBatch(req, "message", nil)
		if err != nil || len(items) != 1 || items[0].Err != nil {
			t.Fatalf("%s: %d items, %v (%+v): want one message", name, len(items), err, items)
		}
		m := items[0].Message
		if m.MessageID != "m1" || m.DeliveryCount != 2 || string(m.Body) != `[1,{"a":2},"x"]` {
			t.Errorf("%s: got %q %d %s", name, m.MessageID, m.DeliveryCount, m.Body)
		}
	}
}
