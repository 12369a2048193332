package delivery_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// countingStore counts the dispatcher's store calls: the batch path must take every claim
// of a batch in one NotificationClaimMany and record every outcome in one
// NotificationFinishMany, never the one-by-one calls.
type countingStore struct {
	delivery.DispatchStore
	mu                              sync.Mutex
	claimMany, finishMany, oneByOne int
	finished                        int // outcomes handed to NotificationFinishMany
}

func (c *countingStore) NotificationClaim(ctx context.Context, p store.NotificationClaimParams) (store.NotificationClaimResult, error) {
	c.mu.Lock()
	c.oneByOne++
	c.mu.Unlock()
	return c.DispatchStore.NotificationClaim(ctx, p)
}

func (c *countingStore) NotificationFinish(ctx context.Context, p store.NotificationFinishParams) error {
	c.mu.Lock()
	c.oneByOne++
	c.mu.Unlock()
	return c.DispatchStore.NotificationFinish(ctx, p)
}

func (c *countingStore) NotificationClaimMany(ctx context.Context, p store.NotificationClaimManyParams) ([]store.NotificationClaimResult, error) {
	c.mu.Lock()
	c.claimMany++
	c.mu.Unlock()
	return c.DispatchStore.NotificationClaimMany(ctx, p)
}

func (c *countingStore) NotificationFinishGroup(ctx context.Context, take func() []store.NotificationFinishParams) ([]store.NotificationFinishParams, []error, error) {
	ps, errs, err := c.DispatchStore.NotificationFinishGroup(ctx, take)
	c.mu.Lock()
	c.finishMany++
	c.finished += len(ps)
	c.mu.Unlock()
	return ps, errs, err
}

// queueN queues n deliveries on channel ch (one scheduler row each) and returns their keys.
func queueN(t *testing.T, e *env, ch string, n int) []string {
	t.Helper()
	var keys []string
	for i := 0; i < n; i++ {
		keys = append(keys, e.queue(t, nil, ch, "user"+string(rune('a'+i))+"@example.test")...)
	}
	return keys
}

// HandleBatch claims in one call and records in group commits: every outcome in exactly
// one NotificationFinishMany, no call one by one.
func TestHandleBatchClaimsInOneCallAndRecordsInGroupCommits(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	cs := &countingStore{DispatchStore: e.st}
	e.disp.Store = cs
	keys := queueN(t, e, "log", 5)
	msgs := []bus.Message{dispatchMsg(keys[0]), {ID: "bad", Body: []byte(`{"deliveryKey":1}`)}, dispatchMsg(keys[1]), dispatchMsg("dlv_nope"),
		dispatchMsg(keys[2]), dispatchMsg(keys[0]), dispatchMsg(keys[3]), dispatchMsg(keys[4])}
	errs := e.disp.HandleBatch(context.Background(), msgs)
	if len(errs) != len(msgs) {
		t.Fatalf("%d errors for %d messages", len(errs), len(msgs))
	}
	for i, err := range errs {
		switch i {
		case 1, 3: // a malformed body, an unknown key: dead-lettered
			if automation.IntentOf(err) != automation.IntentPermanent {
				t.Fatalf("message %d: %v, want a permanent error", i, err)
			}
		case 5: // the same key again in the batch: one delivery, answered as its first message
			if err != nil {
				t.Fatalf("repeated key: %v, want nil (sent once with its first message)", err)
			}
		default:
			if err != nil {
				t.Fatalf("message %d: %v", i, err)
			}
		}
	}
	if cs.claimMany != 1 || cs.finishMany < 1 || cs.finishMany > 5 || cs.finished != 5 || cs.oneByOne != 0 {
		t.Fatalf("store calls: %d claim batches, %d record groups of %d outcomes in all, %d one by one", cs.claimMany, cs.finishMany, cs.finished, cs.oneByOne)
	}
	if p.calls != 5 || p.deliveries() != 5 {
		t.Fatalf("%d sends, %d deliveries; want 5 each", p.calls, p.deliveries())
	}
	for _, k := range keys {
		j := e.job(t, k)
		if j.Status != store.NotificationSent || j.ProviderReference != "ref-"+k || j.Revision != 3 || j.AttemptCount != 1 {
			t.Fatalf("job %s: %+v", k, j)
		}
	}
	if len(e.outcomes) != 5 {
		t.Fatalf("%d outcomes reported, want 5", len(e.outcomes))
	}
	// The delivery projection follows the batch's facts (claim and outcome of each job).
	e.pump(t)
	counts, err := e.st.DeliveryCountsByDay(context.Background(), store.DeliveryCountsParams{BusinessUnitID: "bu-1", From: "2026-10-01", To: "2026-10-01"})
	if err != nil || len(counts.Days) != 1 || counts.Days[0].Sent != 5 {
		t.Fatalf("projection: %+v %v", counts, err)
	}
	// The bus redelivers the whole batch: nothing is sent twice, nothing is an error.
	for i, err := range e.disp.HandleBatch(context.Background(), []bus.Message{dispatchMsg(keys[0]), dispatchMsg(keys[4])}) {
		if err != nil {
			t.Fatalf("redelivery %d: %v", i, err)
		}
	}
	if p.calls != 5 {
		t.Fatalf("a redelivered batch sent again: %d calls", p.calls)
	}
}

// A crash between a send of a batch and the record of its outcome (the AfterSend fault
// point, as the simulator uses it) records nothing further and starts no further send; the
// outcomes committed before it stay (a finished send is recorded as it finishes: with one
// send at a time, the first send is Sent before the second starts). The restarted
// dispatcher then finds the other claims in doubt: a channel that cannot deduplicate is
// never called again (UNKNOWN), an idempotent one is called again with the same delivery
// key as its idempotency key, and the provider keeps one delivery each.
func TestBatchCrashBetweenSendAndRecordRecordsNothingFurther(t *testing.T) {
	t.Parallel()
	for _, idempotent := range []bool{false, true} {
		p := &provider{dedupe: idempotent}
		e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p, traits: delivery.Traits{Idempotent: idempotent}}})
		e.disp.ChannelConcurrency = 1 // one send at a time: the crash comes after exactly two
		keys := queueN(t, e, "log", 3)
		sends := 0
		errCrash := errors.New("crash")
		e.disp.Hooks = &delivery.DispatchHooks{AfterSend: func(_ context.Context, _ store.NotificationJob, sendErr error) error {
			if sendErr != nil {
				t.Errorf("send: %v", sendErr)
			}
			if sends++; sends == 2 {
				return errCrash
			}
			return nil
		}}
		errs := e.disp.HandleBatch(context.Background(), []bus.Message{dispatchMsg(keys[0]), dispatchMsg(keys[1]), dispatchMsg(keys[2])})
		if errs[0] != nil {
			t.Fatalf("message 0, recorded before the crash: %v", errs[0])
		}
		for i, err := range errs[1:] {
			if !errors.Is(err, errCrash) {
				t.Fatalf("message %d after the crash: %v", i+1, err)
			}
		}
		if p.calls != 2 || len(e.outcomes) != 1 {
			t.Fatalf("%d sends, %d outcomes recorded; want 2 and 1 (the first send's)", p.calls, len(e.outcomes))
		}
		if j := e.job(t, keys[0]); j.Status != store.NotificationSent {
			t.Fatalf("job %s, sent and recorded before the crash: %s, want Sent", keys[0], j.Status)
		}
		for _, k := range keys[1:] {
			if j := e.job(t, k); j.Status != store.NotificationSending {
				t.Fatalf("job %s after the crash: %s, want Sending", k, j.Status)
			}
		}
		// The restarted process: the hook no longer crashes; sweeps take the expired claims over.
		e.disp.Hooks = nil
		for i := 0; i < 3; i++ {
			e.sweep(t, time.Hour)
		}
		for _, k := range keys[1:] {
			j := e.job(t, k)
			want := store.NotificationUnknown
			if idempotent {
				want = store.NotificationSent
			}
			if j.Status != want {
				t.Fatalf("idempotent %v: job %s is %s, want %s", idempotent, k, j.Status, want)
			}
		}
		if !idempotent && (p.calls != 2 || p.deliveries() != 2) {
			t.Fatalf("a channel without deduplication was called again: %d calls", p.calls)
		}
		if idempotent {
			if p.deliveries() != 3 {
				t.Fatalf("idempotent: %d deliveries, want 3 (one per key)", p.deliveries())
			}
			for _, m := range p.got {
				if m.DeliveryKey != keys[0] && m.DeliveryKey != keys[1] && m.DeliveryKey != keys[2] {
					t.Fatalf("a resend under another key: %s", m.DeliveryKey)
				}
			}
		}
	}
}

// A claim of a batch that goes stale while the batch sends (its lease ran out and another
// sender took it over, in doubt) is not recorded by the batch: the other sender owns its
// outcome. The batch's other outcomes are recorded.
func TestStaleClaimWithinABatchIsLeftToItsNewOwner(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	e.disp.ChannelConcurrency = 1
	keys := queueN(t, e, "log", 3)
	ctx := context.Background()
	claims, err := e.st.NotificationClaimMany(ctx, store.NotificationClaimManyParams{DeliveryKeys: keys, Now: e.clock.Now(), Lease: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	var takeover store.NotificationClaimResult
	e.disp.Hooks = &delivery.DispatchHooks{AfterSend: func(ctx context.Context, job store.NotificationJob, _ error) error {
		if job.DeliveryKey != keys[2] {
			return nil
		}
		// The last send of the batch ran past the lease; another sender takes the claim over.
		e.clock.Advance(2 * time.Minute)
		var err error
		takeover, err = e.st.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: job.DeliveryKey, Now: e.clock.Now(), Lease: time.Minute})
		if err != nil || !takeover.Claimed || !takeover.InDoubt {
			t.Errorf("takeover: %+v %v", takeover, err)
		}
		return nil
	}}
	outs, err := e.disp.ProcessBatch(ctx, claims)
	if err != nil || len(outs) != 3 {
		t.Fatalf("process batch: %d outcomes, %v", len(outs), err)
	}
	for _, k := range keys[:2] {
		if j := e.job(t, k); j.Status != store.NotificationSent {
			t.Fatalf("job %s: %s, want Sent", k, j.Status)
		}
	}
	j := e.job(t, keys[2])
	if j.Status != store.NotificationSending || j.Version != takeover.Job.Version {
		t.Fatalf("the stale claim's job: %s v%d, want Sending v%d (the new owner's)", j.Status, j.Version, takeover.Job.Version)
	}
	if len(e.outcomes) != 2 {
		t.Fatalf("%d outcomes reported, want 2 (the stale one is not)", len(e.outcomes))
	}
	if _, err := e.disp.ProcessBatch(ctx, make([]store.NotificationClaimResult, store.MaxBatch+1)); err == nil {
		t.Fatal("an oversized batch was accepted")
	}
}

// countingTemplates counts template reads.
type countingTemplates struct {
	delivery.TemplateStore
	mu    sync.Mutex
	reads int
}

func (c *countingTemplates) NotificationTemplateGet(ctx context.Context, key, bu string) (store.NotificationTemplate, error) {
	c.mu.Lock()
	c.reads++
	c.mu.Unlock()
	return c.TemplateStore.NotificationTemplateGet(ctx, key, bu)
}

// A batch reads each (template, business unit) once, however many of its jobs render it,
// and renders every job with that version; the next batch reads again, so a template saved
// between batches is used by the next one.
func TestBatchReadsEachTemplateOnce(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"email": contentChannel(p)})
	ctx := context.Background()
	save := func(subject string) {
		if _, err := e.tpl.Save(ctx, store.NotificationTemplate{Key: "reminder", Subject: subject, Text: "Hi {{.recipient}}", CreatedBy: "ops@example.test"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	save("v1")
	ct := &countingTemplates{TemplateStore: e.st}
	e.disp.Templates = &delivery.Templates{Store: ct, Clock: e.clock}
	keys := queueN(t, e, "email", 4)
	var msgs []bus.Message
	for _, k := range keys[:3] {
		msgs = append(msgs, dispatchMsg(k))
	}
	if err := errors.Join(e.disp.HandleBatch(ctx, msgs)...); err != nil {
		t.Fatal(err)
	}
	if ct.reads != 1 {
		t.Fatalf("%d template reads for a batch of 3 jobs of one template, want 1", ct.reads)
	}
	save("v2")
	if err := errors.Join(e.disp.HandleBatch(ctx, []bus.Message{dispatchMsg(keys[3])})...); err != nil {
		t.Fatal(err)
	}
	if ct.reads != 2 || p.deliveries() != 4 {
		t.Fatalf("%d reads, %d deliveries", ct.reads, p.deliveries())
	}
	for i, m := range p.got {
		want := "v1"
		if i == 3 {
			want = "v2"
		}
		if m.Content == nil || m.Content.Subject != want {
			t.Fatalf("delivery %d: content %+v, want subject %s", i, m.Content, want)
		}
	}
}
