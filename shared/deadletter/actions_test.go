package deadletter_test

import (
	"context"
	"errors"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/deadletter"
	"github.com/automation-platform/automation/shared/store"
)

// audit is an in-memory store.DeadLetterAuditStore with the SQL stores' rules (storetest
// checks those): one action per ETag.
type audit struct {
	mu   sync.Mutex
	rows map[string]store.DeadLetterAudit
}

func newAudit() *audit { return &audit{rows: map[string]store.DeadLetterAudit{}} }

func (a *audit) DeadLetterAuditInsert(ctx context.Context, r store.DeadLetterAudit) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.rows[r.ETag]; ok {
		return store.ErrConflict
	}
	a.rows[r.ETag] = r
	return nil
}

func (a *audit) DeadLetterAuditGet(ctx context.Context, etag string) (store.DeadLetterAudit, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	r, ok := a.rows[etag]
	if !ok {
		return r, store.ErrNotFound
	}
	return r, nil
}

func (a *audit) DeadLetterAuditDelete(ctx context.Context, etag string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.rows, etag)
	return nil
}

func (a *audit) DeadLetterAuditTakeOver(ctx context.Context, r store.DeadLetterAudit, staleBefore time.Time) (bool, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	old, ok := a.rows[r.ETag]
	if !ok || !old.ActedOn.Before(staleBefore) {
		return false, nil
	}
	old.Action, old.Operator, old.Reason, old.BatchID, old.ActedOn = r.Action, r.Operator, r.Reason, r.BatchID, r.ActedOn
	a.rows[r.ETag] = old
	return true, nil
}

func (a *audit) DeadLetterAuditCount(ctx context.Context, action store.DeadLetterAction, since time.Time) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	n := 0
	for _, r := range a.rows {
		if r.Action == action && r.ActedOn.After(since) {
			n++
		}
	}
	return n, nil
}

func (a *audit) DeadLetterAuditList(ctx context.Context, p store.DeadLetterAuditListParams) ([]store.DeadLetterAudit, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []store.DeadLetterAudit
	for _, r := range a.rows {
		if p.Scope.All() || (r.BusinessUnitID != "" && p.Scope.Allows(r.BusinessUnitID)) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ActedOn.After(out[j].ActedOn) })
	return out[:min(len(out), p.Limit)], nil
}

func deadLetters(t *testing.T, clock automation.Clock, ms ...bus.Message) (*bus.Memory, []deadletter.Item, *deadletter.Service, *audit) {
	t.Helper()
	b := bus.NewMemory(&bus.MemoryOptions{Now: clock.Now})
	for _, m := range ms {
		b.RecordDeadLetter(m, "refused "+m.ID)
	}
	a := newAudit()
	s := &deadletter.Service{Box: b, Audit: a, Clock: clock}
	items, _, err := s.List(context.Background(), automation.AllBusinessUnits(), deadletter.ListParams{Limit: 50})
	if err != nil || len(items) != len(ms) {
		t.Fatalf("list: %v %v", items, err)
	}
	return b, items, s, a
}

// A requeue and a discard are audited and taken once: a repeat of the same action (the same
// ETag: a double click, a retried form) replays the first and sends nothing; the other
// action on a dead letter already acted on is 412 naming who did what; an ETag read from
// another message than the id names now is 412; a discard needs a reason; nothing is
// changed by a refused action.
func TestActionsAreAuditedOnceAndGuarded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := automation.NewManualClock(time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC))
	b, items, s, a := deadLetters(t, clock,
		bus.Message{ID: "a", Destination: "tracking", Body: []byte(`{"event_id":"a","business_unit_id":"bu-1"}`)},
		bus.Message{ID: "b", Destination: "tracking", Body: []byte(`{"event_id":"b","business_unit_id":"bu-1"}`)})
	all := automation.AllBusinessUnits()
	req := deadletter.ActRequest{ID: items[0].ID, ETag: items[0].ETag, Operator: "jane", Reason: "unit created"}
	res, err := s.Requeue(ctx, all, req)
	if err != nil || res.Replayed || res.Operator != "jane" || res.DeadLetter.MessageID != "a" || b.Len("tracking") != 1 {
		t.Fatalf("requeue: %+v %v, queued %d", res, err, b.Len("tracking"))
	}
	if r, err := a.DeadLetterAuditGet(ctx, items[0].ETag); err != nil || r.Action != store.DeadLetterRequeue || r.Reason != "unit created" || !r.ActedOn.Equal(clock.Now()) {
		t.Fatalf("audit: %+v %v", r, err)
	}
	again, err := s.Requeue(ctx, all, req)
	if err != nil || !again.Replayed || again.Operator != "jane" || b.Len("tracking") != 1 {
		t.Fatalf("a repeated requeue: %+v %v, queued %d (want the first's answer and one message)", again, err, b.Len("tracking"))
	}
	_, err = s.Discard(ctx, all, deadletter.ActRequest{ID: items[0].ID, ETag: items[0].ETag, Operator: "joe", Reason: "spam"})
	if automation.CodeOf(err) != automation.CodePreconditionFailed || !strings.Contains(err.Error(), "requeued by jane") {
		t.Fatalf("discard after the requeue: %v, want 412 naming the requeue", err)
	}
	// A discard needs its reason.
	_, err = s.Discard(ctx, all, deadletter.ActRequest{ID: items[1].ID, ETag: items[1].ETag, Operator: "joe"})
	if automation.CodeOf(err) != automation.CodeInvalidInput || len(b.DeadLetters()) != 1 {
		t.Fatalf("discard without a reason: %v, dead letters %d", err, len(b.DeadLetters()))
	}
	// An ETag read from another message: the id now names b, the form was read from a.
	_, err = s.Discard(ctx, all, deadletter.ActRequest{ID: items[1].ID, ETag: "0123456789abcdef0123456789abcdef", Operator: "joe", Reason: "spam"})
	if automation.CodeOf(err) != automation.CodePreconditionFailed || len(b.DeadLetters()) != 1 {
		t.Fatalf("a stale etag: %v, dead letters %d", err, len(b.DeadLetters()))
	}
	d, err := s.Discard(ctx, all, deadletter.ActRequest{ID: items[1].ID, ETag: items[1].ETag, Operator: "joe", Reason: "a test message"})
	if err != nil || d.Action != store.DeadLetterDiscard || len(b.DeadLetters()) != 0 || b.Len("tracking") != 1 {
		t.Fatalf("discard: %+v %v; dead %d, queued %d", d, err, len(b.DeadLetters()), b.Len("tracking"))
	}
	acts, err := s.Actions(ctx, automation.BusinessUnits("bu-1"), 10)
	if err != nil || len(acts) != 2 {
		t.Fatalf("actions: %+v %v", acts, err)
	}
	if acts, _ := s.Actions(ctx, automation.BusinessUnits("bu-2"), 10); len(acts) != 0 {
		t.Fatalf("bu-2 sees bu-1's actions: %+v", acts)
	}
	// Without an audit store nothing is done.
	if _, err := (&deadletter.Service{Box: b}).Requeue(ctx, all, req); automation.CodeOf(err) != automation.CodeUnavailable {
		t.Fatalf("without an audit: %v", err)
	}
}

// Requeues are paced like releases: at most RequeuePerMinute in any minute, counted from the
// audit; a bulk requeue requeues the allowance and defers the rest (untouched); a single one
// past it is 429; a minute later the rest go.
func TestRequeuesArePaced(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := automation.NewManualClock(time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC))
	var ms []bus.Message
	for _, id := range []string{"a", "b", "c", "d"} {
		ms = append(ms, bus.Message{ID: id, Destination: "tracking", Body: []byte(`{"business_unit_id":"bu-1"}`)})
	}
	b, items, s, _ := deadLetters(t, clock, ms...)
	s.RequeuePerMinute = 2
	all := automation.AllBusinessUnits()
	var refs []deadletter.Ref
	for _, it := range items[:3] {
		refs = append(refs, deadletter.Ref{ID: it.ID, ETag: it.ETag})
	}
	res, err := s.RequeueMany(ctx, all, deadletter.BulkRequest{Refs: refs, Operator: "jane", Reason: "route fixed"})
	if err != nil || len(res.Done) != 2 || len(res.Deferred) != 1 || res.Deferred[0].ID != items[2].ID || res.NextOn == nil || b.Len("tracking") != 2 {
		t.Fatalf("bulk: %+v %v, queued %d", res, err, b.Len("tracking"))
	}
	if res.Done[0].BatchID == "" || res.Done[0].BatchID != res.BatchID {
		t.Fatalf("batch id: %+v", res)
	}
	_, err = s.Requeue(ctx, all, deadletter.ActRequest{ID: items[3].ID, ETag: items[3].ETag, Operator: "jane", Reason: "route fixed"})
	if automation.CodeOf(err) != automation.CodeTooManyRequests || b.Len("tracking") != 2 {
		t.Fatalf("past the pace: %v, queued %d", err, b.Len("tracking"))
	}
	if _, err := s.RequeueMany(ctx, all, deadletter.BulkRequest{Refs: refs, Operator: "jane"}); automation.CodeOf(err) != automation.CodeInvalidInput {
		t.Fatalf("a bulk requeue without a reason: %v", err)
	}
	clock.Advance(time.Minute)
	res, err = s.RequeueMany(ctx, all, deadletter.BulkRequest{Refs: refs, Operator: "jane", Reason: "route fixed"})
	if err != nil || len(res.Done) != 3 || !res.Done[0].Replayed || res.Done[2].Replayed || len(res.Deferred) != 0 || b.Len("tracking") != 3 {
		t.Fatalf("a minute later: %+v %v, queued %d (want two replays and one requeue)", res, err, b.Len("tracking"))
	}
}

// The list masks personal data in the original message (e-mail addresses, phone numbers),
// keeping its members in order; a requeue sends the original bytes.
func TestBodiesAreMasked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := automation.NewManualClock(time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC))
	orig := `{"to":"amelia.nguyen@example.test","phone":"+61 412 345 678","n":12345678,"business_unit_id":"bu-1"}`
	b, items, s, _ := deadLetters(t, clock,
		bus.Message{ID: "a", Destination: "notification-dispatch", Body: []byte(orig)},
		bus.Message{ID: "b", Destination: "notification-dispatch", Body: []byte(`call +61 412 345 678 or mail amelia.nguyen@example.test`)})
	if got := string(items[0].Body); got != `{"to":"a***@example.test","phone":"***5678","n":12345678,"business_unit_id":"bu-1"}` {
		t.Fatalf("masked body: %s", got)
	}
	if got := items[1].BodyText; strings.Contains(got, "amelia.nguyen") || strings.Contains(got, "412 345") {
		t.Fatalf("masked text: %s", got)
	}
	if _, err := s.Requeue(ctx, automation.AllBusinessUnits(), deadletter.ActRequest{ID: items[0].ID, ETag: items[0].ETag, Operator: "jane", Reason: "fixed"}); err != nil {
		t.Fatal(err)
	}
	var sent []byte
	b.Subscribe("notification-dispatch", func(ctx context.Context, m bus.Message) error { sent = m.Body; return nil })
	if _, err := b.Drain(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if string(sent) != orig {
		t.Fatalf("the requeued message: %s, want the original bytes", sent)
	}
}

// errRefused is a bus that refused a requeue: nothing was requeued.
var errRefused = errors.New("the entity refused the message: nothing was sent")

// gatedBox is a bus.DeadLetterBox whose first requeue waits at the gate and then fails (a
// bus that refused it: nothing was requeued).
type gatedBox struct {
	bus.DeadLetterBox
	entered, gate chan struct{}
	once          sync.Once
}

func (g *gatedBox) DeadLetterRequeue(ctx context.Context, id string) (bus.DeadLetter, error) {
	first := false
	g.once.Do(func() { first = true })
	if first {
		close(g.entered)
		<-g.gate
		return bus.DeadLetter{}, errRefused
	}
	return g.DeadLetterBox.DeadLetterRequeue(ctx, id)
}

// A second requeue of the same dead letter (a double click, another operator on the same
// list) that arrives while the first is still with the bus never hears "done": the first
// may yet fail (here it does, and its audit row is withdrawn), and then nothing was
// requeued. With the etag it is answered Conflict (in progress), not a replay of an action
// that never happened; without it, 404 as a later one (TestDeadLetterAPIUnderAttack's
// contract: one caller hears it requeued). Once the first failed, a requeue does it.
func TestConcurrentRequeueWhileTheFirstIsInFlightIsNotAnsweredDone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	clock := automation.NewManualClock(time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC))
	b, items, s, _ := deadLetters(t, clock,
		bus.Message{ID: "a", Destination: "tracking", Body: []byte(`{"event_id":"a","business_unit_id":"bu-1"}`)})
	g := &gatedBox{DeadLetterBox: b, entered: make(chan struct{}), gate: make(chan struct{})}
	s.Box = g
	all := automation.AllBusinessUnits()
	req := deadletter.ActRequest{ID: items[0].ID, ETag: items[0].ETag, Operator: "jane", Reason: "unit created"}
	firstErr := make(chan error, 1)
	go func() {
		_, err := s.Requeue(ctx, all, req)
		firstErr <- err
	}()
	<-g.entered
	withETag, errWith := s.Requeue(ctx, all, deadletter.ActRequest{ID: items[0].ID, ETag: items[0].ETag, Operator: "joe", Reason: "same list"})
	_, errWithout := s.Requeue(ctx, all, deadletter.ActRequest{ID: items[0].ID, Operator: "joe", Reason: "no etag"})
	close(g.gate)
	if err := <-firstErr; err == nil {
		t.Fatal("the first requeue succeeded although the bus refused it")
	}
	if len(b.DeadLetters()) != 1 || b.Len("tracking") != 0 {
		t.Fatalf("dead letters %d, queued %d: want the dead letter still there, nothing queued", len(b.DeadLetters()), b.Len("tracking"))
	}
	if errWith == nil {
		t.Fatalf("a requeue with the etag during the first's bus call heard it done (%+v) and nothing was requeued", withETag)
	}
	if automation.CodeOf(errWith) != automation.CodeConflict || automation.CodeOf(errWithout) != automation.CodeNotFound {
		t.Fatalf("concurrent requeues: with etag %v, without %v; want Conflict (in progress) and NotFound", errWith, errWithout)
	}
	if res, err := s.Requeue(ctx, all, req); err != nil || res.Replayed || b.Len("tracking") != 1 {
		t.Fatalf("requeue after the failed one: %+v %v, queued %d", res, err, b.Len("tracking"))
	}
}

// timeoutBox is a bus.DeadLetterBox whose requeues time out without an answer (the bus may
// or may not have acted) while timeouts is true.
type timeoutBox struct {
	bus.DeadLetterBox
	timeouts bool
}

func (b *timeoutBox) DeadLetterRequeue(ctx context.Context, id string) (bus.DeadLetter, error) {
	if b.timeouts {
		return bus.DeadLetter{}, context.DeadlineExceeded
	}
	return b.DeadLetterBox.DeadLetterRequeue(ctx, id)
}

// An action recorded whose process died before its bus call (or whose bus call timed out,
// so it may or may not have been done) leaves the dead letter listed with an audit row on
// it. Until AbandonedAfter has passed, another action on it hears Conflict (with the etag)
// or NotFound (without), as while a call is in flight; after it, the next action takes the
// recorded one over, exactly once between concurrent callers, and is done once. Before
// this, such a dead letter answered Conflict for good and could never be requeued.
func TestAnActionThatNeverReachedTheBusIsTakenOver(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	all := automation.AllBusinessUnits()
	for _, crash := range []string{"died after the audit", "the bus call timed out"} {
		t.Run(crash, func(t *testing.T) {
			t.Parallel()
			clock := automation.NewManualClock(time.Date(2026, 10, 5, 9, 0, 0, 0, time.UTC))
			b, items, s, a := deadLetters(t, clock,
				bus.Message{ID: "a", Destination: "tracking", Body: []byte(`{"event_id":"a","business_unit_id":"bu-1"}`)})
			it := items[0]
			if crash == "died after the audit" {
				if err := a.DeadLetterAuditInsert(ctx, store.DeadLetterAudit{ETag: it.ETag, Action: store.DeadLetterRequeue, DeadLetterID: it.ID,
					Destination: "tracking", MessageID: "a", BusinessUnitID: "bu-1", Operator: "jane", Reason: "unit created", ActedOn: clock.Now()}); err != nil {
					t.Fatal(err)
				}
			} else {
				box := &timeoutBox{DeadLetterBox: b, timeouts: true}
				s.Box = box
				_, err := s.Requeue(ctx, all, deadletter.ActRequest{ID: it.ID, ETag: it.ETag, Operator: "jane", Reason: "unit created"})
				if err == nil || !errors.Is(err, context.DeadlineExceeded) {
					t.Fatalf("a requeue whose bus call timed out: %v, want the timeout", err)
				}
				if r, err := a.DeadLetterAuditGet(ctx, it.ETag); err != nil || r.Operator != "jane" {
					t.Fatalf("the audit of a requeue that may have been done: %+v %v, want it kept", r, err)
				}
				box.timeouts = false
			}
			clock.Advance(deadletter.AbandonedAfter)
			_, errWith := s.Requeue(ctx, all, deadletter.ActRequest{ID: it.ID, ETag: it.ETag, Operator: "joe", Reason: "retry"})
			_, errWithout := s.Requeue(ctx, all, deadletter.ActRequest{ID: it.ID, Operator: "joe", Reason: "retry"})
			if automation.CodeOf(errWith) != automation.CodeConflict || automation.CodeOf(errWithout) != automation.CodeNotFound || b.Len("tracking") != 0 {
				t.Fatalf("at AbandonedAfter: with etag %v, without %v, queued %d; want Conflict, NotFound, nothing", errWith, errWithout, b.Len("tracking"))
			}
			clock.Advance(time.Second)
			var wg sync.WaitGroup
			results := make([]deadletter.ActResult, 4)
			errs := make([]error, 4)
			for i := range results {
				wg.Add(1)
				go func() {
					defer wg.Done()
					results[i], errs[i] = s.Requeue(ctx, all, deadletter.ActRequest{ID: it.ID, ETag: it.ETag, Operator: "joe", Reason: "retry"})
				}()
			}
			wg.Wait()
			done := 0
			for i := range results {
				if errs[i] == nil && !results[i].Replayed {
					done++
				}
			}
			if done != 1 || b.Len("tracking") != 1 || len(b.DeadLetters()) != 0 {
				t.Fatalf("take-over: %d done (%v), queued %d, dead letters %d; want one requeue", done, errs, b.Len("tracking"), len(b.DeadLetters()))
			}
			if r, err := a.DeadLetterAuditGet(ctx, it.ETag); err != nil || r.Operator != "joe" || r.Reason != "retry" || !r.ActedOn.Equal(clock.Now()) {
				t.Fatalf("audit after the take-over: %+v %v, want joe's action", r, err)
			}
			if again, err := s.Requeue(ctx, all, deadletter.ActRequest{ID: it.ID, ETag: it.ETag, Operator: "an", Reason: "again"}); err != nil || !again.Replayed || again.Operator != "joe" || b.Len("tracking") != 1 {
				t.Fatalf("a repeat after the take-over: %+v %v, queued %d", again, err, b.Len("tracking"))
			}
		})
	}
}
