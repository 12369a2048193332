package store

import "testing"

// TestItemsRefusesALengthWithALeadingZero: NewEnvelope writes each length in its one
// decimal form; a length with a leading zero ("01:", "00:") is not one it writes, so the
// row is damaged and refused (a netstring's length has no leading zero), not read as
// though it were whole.
func TestItemsRefusesALengthWithALeadingZero(t *testing.T) {
	for _, body := range []string{"01:a,0:,2:{},1:b,0:,1:x,", "1:a,00:,2:{},1:b,0:,1:x,", "1:a,0:,02:{},1:b,0:,1:x,", "0000000001:a,0:,2:{},1:b,0:,1:x,"} {
		m := OutboxMessage{MessageID: "envelope:a+1", Destination: "f", Body: []byte(body), Envelope: true}
		if items, err := m.Items(); err == nil {
			t.Errorf("body %q: %d items, want an error", body, len(items))
		}
	}
	good := OutboxMessage{MessageID: "envelope:a+1", Destination: "f", Body: []byte("1:a,0:,2:{},1:b,0:,1:x,"), Envelope: true}
	if items, err := good.Items(); err != nil || len(items) != 2 {
		t.Fatalf("a good body: %+v %v", items, err)
	}
}
