package store

import (
	"strings"
	"testing"
)

// TestItemsRefusesAnEnvelopeCutAtAnItem: a framed body has no terminator, so a body cut
// right after an item's last netstring still reads as whole items. The envelope's
// MessageId names how many it carries ("+{n-1}"): fewer (or more) is a damaged row, refused
// (the relay would otherwise publish the items left and mark the row, dropping the rest).
// The first format is held to the same count.
func TestItemsRefusesAnEnvelopeCutAtAnItem(t *testing.T) {
	msgs := []OutboxMessage{
		{MessageID: "a+1", Destination: "d", Body: []byte("1")},
		{MessageID: "b", Destination: "d", SessionID: "s", Body: []byte("2")},
		{MessageID: "c", Destination: "d", Body: []byte("3")},
	}
	env, err := NewEnvelope(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if items, err := env.Items(); err != nil || len(items) != 3 {
		t.Fatalf("whole: %+v %v", items, err)
	}
	two, _ := NewEnvelope(msgs[:2])
	cut := env
	cut.Body = two.Body // the first two items' bytes: cut right after the second
	if items, err := cut.Items(); err == nil {
		t.Errorf("an envelope of 3 cut after its second item: %d items, want an error", len(items))
	}
	more := two
	more.Body = env.Body // 3 items in an envelope named for 2
	if items, err := more.Items(); err == nil {
		t.Errorf("an envelope of 2 carrying 3: %d items, want an error", len(items))
	}
	first := OutboxMessage{MessageID: "envelope:a+2", Destination: "d", Envelope: true,
		Body: []byte(`[{"messageId":"a","body":1},{"messageId":"b","body":2}]`)}
	if items, err := first.Items(); err == nil || !strings.Contains(err.Error(), "2 items") {
		t.Errorf("a first-format envelope of 3 with 2 items: %d items, %v; want an error", len(items), err)
	}
}
