package storetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// runInbox checks store.InboxStore (docs/inbox.md).
func runInbox(t *testing.T, open Opener) {
	runCases(t, open, inboxCases)
}

func inboxParams(bu, recipient, key string, now time.Time) store.InboxInsertParams {
	return store.InboxInsertParams{BusinessUnitID: bu, RecipientID: recipient, DeliveryKey: key, Template: "tpl",
		Subject: "Subject " + key, Text: "Text " + key, HTML: "<p>" + key + "</p>", PayloadJSON: `{"k":"` + key + `"}`, Now: now}
}

func inboxInsert(t *testing.T, s store.Store, p store.InboxInsertParams) store.InboxInsertResult {
	t.Helper()
	r, err := s.InboxInsert(context.Background(), p)
	if err != nil {
		t.Fatalf("InboxInsert(%s): %v", p.DeliveryKey, err)
	}
	return r
}

func testInboxIdempotent(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	first := inboxInsert(t, s, inboxParams("bu-1", "user-1", "dlv_a", T0))
	m := first.Message
	if !first.Inserted || m.Seq != 1 || m.Version != 1 || m.ReadOn != nil || !m.CreatedOn.Equal(T0) || m.CreatedOn.Location() != time.UTC ||
		m.Subject != "Subject dlv_a" || m.Text != "Text dlv_a" || m.HTML != "<p>dlv_a</p>" || m.PayloadJSON != `{"k":"dlv_a"}` || m.Template != "tpl" {
		t.Fatalf("first insert = %+v", first)
	}
	// The same delivery again (a resend after an UNKNOWN outcome): nothing new is stored, even
	// with other content or a later instant.
	again := inboxParams("bu-1", "user-1", "dlv_a", T0.Add(time.Hour))
	again.Subject = "changed"
	second := inboxInsert(t, s, again)
	if second.Inserted || second.Message != m {
		t.Fatalf("resend = %+v, want the first message unchanged %+v", second, m)
	}
	// Seq is per recipient: another recipient starts at 1, the same one continues.
	if o := inboxInsert(t, s, inboxParams("bu-1", "user-2", "dlv_b", T0)); o.Message.Seq != 1 {
		t.Fatalf("another recipient's first message has Seq %d", o.Message.Seq)
	}
	if o := inboxInsert(t, s, inboxParams("bu-2", "user-1", "dlv_c", T0)); o.Message.Seq != 1 {
		t.Fatalf("the same recipient id in another business unit has Seq %d", o.Message.Seq)
	}
	if o := inboxInsert(t, s, inboxParams("bu-1", "user-1", "dlv_d", T0)); o.Message.Seq != 2 {
		t.Fatalf("the recipient's second message has Seq %d", o.Message.Seq)
	}
	// A delivery key stored for another recipient is a conflict, never a resend.
	if _, err := s.InboxInsert(ctx, inboxParams("bu-1", "user-9", "dlv_a", T0)); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("the key of another recipient: err = %v, want ErrConflict", err)
	}
	all, err := s.InboxList(ctx, store.InboxListParams{BusinessUnitID: "bu-1", RecipientID: "user-1", Limit: 10})
	if err != nil || len(all) != 2 {
		t.Fatalf("user-1 holds %d messages (%v), want 2", len(all), err)
	}
	if _, err := s.InboxInsert(ctx, inboxParams("bu-1", "", "dlv_e", T0)); err == nil {
		t.Fatal("a message without a recipient was stored")
	}
}

func testInboxConcurrent(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	const senders, keys = 6, 5
	var wg sync.WaitGroup
	inserted := make([]int, senders)
	errs := make([]error, senders)
	for g := range senders {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := range keys {
				r, err := s.InboxInsert(ctx, inboxParams("bu-1", "user-1", fmt.Sprintf("dlv_%d", k), T0))
				if err != nil {
					errs[g] = err
					return
				}
				if r.Inserted {
					inserted[g]++
				}
			}
		}()
	}
	wg.Wait()
	total := 0
	for g := range senders {
		if errs[g] != nil {
			t.Fatalf("sender %d: %v", g, errs[g])
		}
		total += inserted[g]
	}
	if total != keys {
		t.Fatalf("%d senders of %d deliveries inserted %d messages, want %d", senders, keys, total, keys)
	}
	got, err := s.InboxListAfter(ctx, store.InboxListAfterParams{BusinessUnitID: "bu-1", RecipientID: "user-1", Limit: 100})
	if err != nil || len(got) != keys {
		t.Fatalf("stored %d messages (%v), want %d", len(got), err, keys)
	}
	for i, m := range got {
		if m.Seq != int64(i+1) {
			t.Fatalf("Seq %d at position %d: Seq must number the recipient's messages 1, 2, 3, … without gaps", m.Seq, i)
		}
	}
}

func testInboxList(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	for i := 1; i <= 7; i++ {
		inboxInsert(t, s, inboxParams("bu-1", "user-1", fmt.Sprintf("dlv_%d", i), T0.Add(time.Duration(i)*time.Minute)))
	}
	inboxInsert(t, s, inboxParams("bu-1", "user-2", "dlv_other", T0))
	// Mark 2 and 5 read.
	for _, seq := range []int64{2, 5} {
		if _, err := s.InboxMarkRead(ctx, store.InboxMarkReadParams{BusinessUnitID: "bu-1", RecipientID: "user-1", Seq: seq, Version: 1, Now: T0.Add(time.Hour)}); err != nil {
			t.Fatal(err)
		}
	}
	seqs := func(ms []store.InboxMessage) []int64 {
		out := make([]int64, len(ms))
		for i, m := range ms {
			out[i] = m.Seq
		}
		return out
	}
	list := func(state store.InboxState, before int64, limit int) []int64 {
		t.Helper()
		ms, err := s.InboxList(ctx, store.InboxListParams{BusinessUnitID: "bu-1", RecipientID: "user-1", State: state, BeforeSeq: before, Limit: limit})
		if err != nil {
			t.Fatal(err)
		}
		return seqs(ms)
	}
	for _, c := range []struct {
		state  store.InboxState
		before int64
		limit  int
		want   string
	}{
		{"", 0, 3, "[7 6 5]"}, {store.InboxAll, 5, 3, "[4 3 2]"}, {store.InboxAll, 2, 3, "[1]"}, {store.InboxAll, 1, 3, "[]"},
		{store.InboxUnread, 0, 10, "[7 6 4 3 1]"}, {store.InboxUnread, 4, 10, "[3 1]"}, {store.InboxRead, 0, 10, "[5 2]"},
	} {
		if got := fmt.Sprint(list(c.state, c.before, c.limit)); got != c.want {
			t.Errorf("list state=%q before=%d limit=%d = %s, want %s", c.state, c.before, c.limit, got, c.want)
		}
	}
	after, err := s.InboxListAfter(ctx, store.InboxListAfterParams{BusinessUnitID: "bu-1", RecipientID: "user-1", AfterSeq: 4, Limit: 2})
	if err != nil || fmt.Sprint(seqs(after)) != "[5 6]" {
		t.Errorf("after 4, limit 2 = %v (%v), want [5 6]", seqs(after), err)
	}
	if _, err := s.InboxList(ctx, store.InboxListParams{BusinessUnitID: "bu-1", RecipientID: "user-1", State: "unknown", Limit: 1}); err == nil {
		t.Error("an unknown state was accepted")
	}
	if _, err := s.InboxList(ctx, store.InboxListParams{BusinessUnitID: "bu-1", RecipientID: "user-1", Limit: store.MaxBatch + 1}); err == nil {
		t.Error("a limit over MaxBatch was accepted")
	}
	if ms, _ := s.InboxList(ctx, store.InboxListParams{BusinessUnitID: "bu-2", RecipientID: "user-1", Limit: 10}); len(ms) != 0 {
		t.Errorf("another business unit sees %d messages", len(ms))
	}
}

func testInboxMarkRead(t *testing.T, open Opener) {
	ctx := context.Background()
	s := fresh(t, open)
	inboxInsert(t, s, inboxParams("bu-1", "user-1", "dlv_a", T0))
	mark := func(seq, version int64, now time.Time) (store.InboxMessage, error) {
		return s.InboxMarkRead(ctx, store.InboxMarkReadParams{BusinessUnitID: "bu-1", RecipientID: "user-1", Seq: seq, Version: version, Now: now})
	}
	if _, err := mark(1, 7, T0); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale version: err = %v, want ErrLeaseLost", err)
	}
	if m, _ := s.InboxGet(ctx, "bu-1", "user-1", 1); m.ReadOn != nil || m.Version != 1 {
		t.Fatalf("a refused mark changed the message: %+v", m)
	}
	readAt := T0.Add(90 * time.Second)
	m, err := mark(1, 1, readAt)
	if err != nil || m.ReadOn == nil || !m.ReadOn.Equal(readAt) || m.ReadOn.Location() != time.UTC || m.Version != 2 {
		t.Fatalf("mark read = %+v, %v", m, err)
	}
	// Again at the current version: a no-op that keeps the first read instant.
	again, err := mark(1, 2, readAt.Add(time.Hour))
	if err != nil || again.Version != 2 || !again.ReadOn.Equal(readAt) {
		t.Fatalf("mark again = %+v, %v", again, err)
	}
	// The version read before it was marked is stale now.
	if _, err := mark(1, 1, readAt); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("the version before the read: err = %v, want ErrLeaseLost", err)
	}
	if _, err := mark(9, 1, readAt); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("unknown message: err = %v, want ErrNotFound", err)
	}
	if _, err := s.InboxMarkRead(ctx, store.InboxMarkReadParams{BusinessUnitID: "bu-2", RecipientID: "user-1", Seq: 1, Version: 1, Now: readAt}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("another business unit's recipient: err = %v, want ErrNotFound", err)
	}
	if _, err := s.InboxGet(ctx, "bu-1", "user-2", 1); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get of another recipient: err = %v, want ErrNotFound", err)
	}
}
