package bus

import "testing"

// TestTakeWaiting: the first message is waited for, then only what is already waiting is
// taken, at most n; a closed queue ends the batch, and a closed empty queue answers !ok.
func TestTakeWaiting(t *testing.T) {
	q := make(chan Message, 5)
	for _, id := range []string{"a", "b", "c"} {
		q <- Message{ID: id}
	}
	if b, ok := TakeWaiting(q, 2); !ok || len(b) != 2 || b[0].ID != "a" || b[1].ID != "b" {
		t.Fatalf("first batch %v %v, want a, b", b, ok)
	}
	if b, ok := TakeWaiting(q, 5); !ok || len(b) != 1 || b[0].ID != "c" {
		t.Fatalf("second batch %v %v, want c alone (nothing else waiting)", b, ok)
	}
	q <- Message{ID: "d"}
	q <- Message{ID: "e"}
	close(q)
	if b, ok := TakeWaiting(q, 0); !ok || len(b) != 1 || b[0].ID != "d" {
		t.Fatalf("n=0 %v %v, want d alone", b, ok)
	}
	if b, ok := TakeWaiting(q, 5); !ok || len(b) != 1 || b[0].ID != "e" {
		t.Fatalf("after close %v %v, want e", b, ok)
	}
	if b, ok := TakeWaiting(q, 5); ok || b != nil {
		t.Fatalf("closed and empty: %v %v, want nothing and !ok", b, ok)
	}
}
