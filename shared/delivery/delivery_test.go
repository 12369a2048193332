package delivery_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/sql/sqlite"
)

func TestKeyIsStableAndNormalisesRecipient(t *testing.T) {
	t.Parallel()
	a := delivery.Key("k", "log", "Alice@Example.test ")
	if a != delivery.Key("k", "log", "alice@example.test") || !strings.HasPrefix(a, "dlv_") || len(a) != 36 {
		t.Fatalf("key %q", a)
	}
	for _, other := range []string{delivery.Key("k2", "log", "alice@example.test"), delivery.Key("k", "email", "alice@example.test"), delivery.Key("k", "log", "bob@example.test")} {
		if other == a {
			t.Fatal("different (key, channel, recipient) must differ")
		}
	}
}

func TestBuildCollapsesDuplicatesAndRejectsBlanks(t *testing.T) {
	t.Parallel()
	jobs, msgs, err := delivery.Build([]delivery.Request{
		{SchedulerKey: "k", Channel: "log", Recipient: "a@example.test", Payload: 1, LocalDate: "2026-10-01"},
		{SchedulerKey: "k", Channel: "log", Recipient: "A@example.test", Payload: 1},
	})
	if err != nil || len(jobs) != 1 || len(msgs) != 1 || msgs[0].MessageID != jobs[0].DeliveryKey || msgs[0].Destination != topology.NotificationDispatchQueue {
		t.Fatalf("%+v %+v %v", jobs, msgs, err)
	}
	if jobs[0].EffectKey != jobs[0].DeliveryKey || jobs[0].LocalDate != "2026-10-01" {
		t.Fatalf("effect key and local day: %+v", jobs[0])
	}
	if _, _, err := delivery.Build([]delivery.Request{{SchedulerKey: "k", Channel: "log"}}); err == nil {
		t.Fatal("blank recipient accepted")
	}
}

// provider is the far side of a test channel: it records what arrived, deduplicating by
// delivery key when the channel is idempotent (as a provider honouring Idempotency-Key does).
type provider struct {
	mu        sync.Mutex
	got       []delivery.Message
	seen      map[string]bool
	calls     int
	dedupe    bool
	failWith  error // returned before anything arrives
	afterSend error // returned after the message arrived (e.g. automation.Unknown(timeout))
	panicAt   string
	lookup    func(key string) (delivery.LookupStatus, error)
}

func (p *provider) deliveries() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.got)
}

func (p *provider) send(_ context.Context, m delivery.Message) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.calls++
	if p.panicAt == "before" {
		panic("crash between claim and send")
	}
	if p.failWith != nil {
		return "", p.failWith
	}
	if p.seen == nil {
		p.seen = map[string]bool{}
	}
	if !(p.dedupe && p.seen[m.DeliveryKey]) {
		p.got = append(p.got, m)
	}
	p.seen[m.DeliveryKey] = true
	if p.panicAt == "after" {
		panic("crash between send and complete")
	}
	if p.afterSend != nil {
		return "", p.afterSend
	}
	return "ref-" + m.DeliveryKey, nil
}

// testChannel is a delivery.Channel over a provider with declared traits.
type testChannel struct {
	p      *provider
	traits delivery.Traits
}

func (c *testChannel) Traits() delivery.Traits { return c.traits }
func (c *testChannel) ValidateRecipient(addr string) error {
	if !strings.Contains(addr, "@") {
		return errors.New("no @")
	}
	return nil
}
func (c *testChannel) Send(ctx context.Context, m delivery.Message) (string, error) {
	return c.p.send(ctx, m)
}

// lookingChannel adds the provider's lookup.
type lookingChannel struct{ testChannel }

func (c *lookingChannel) Lookup(_ context.Context, m delivery.Message) (delivery.LookupStatus, string, error) {
	if c.p.lookup != nil {
		st, err := c.p.lookup(m.DeliveryKey)
		return st, "lookup-" + m.DeliveryKey, err
	}
	c.p.mu.Lock()
	defer c.p.mu.Unlock()
	if c.p.seen[m.DeliveryKey] {
		return delivery.LookupDelivered, "lookup-" + m.DeliveryKey, nil
	}
	return delivery.LookupNotDelivered, "", nil
}

type env struct {
	st       store.Store
	clock    *automation.ManualClock
	bus      *bus.Memory
	relay    *delivery.Relay
	disp     *delivery.Dispatcher
	support  *delivery.Support
	tpl      *delivery.Templates
	mu       sync.Mutex
	outcomes []delivery.Outcome
	n        int
}

func newEnv(t *testing.T, channels map[string]delivery.Channel) *env {
	t.Helper()
	st, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "d.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	e := &env{st: st, clock: automation.NewManualClock(storetest.T0), bus: bus.NewMemory(&bus.MemoryOptions{MaxDeliveryCount: 3})}
	e.tpl = &delivery.Templates{Store: st, Clock: e.clock}
	e.relay = &delivery.Relay{Store: st, Publisher: e.bus, Clock: e.clock}
	e.disp = &delivery.Dispatcher{Store: st, Templates: e.tpl, Channels: channels, Clock: e.clock, Lease: time.Minute,
		OnOutcome: func(o delivery.Outcome) { e.mu.Lock(); e.outcomes = append(e.outcomes, o); e.mu.Unlock() }}
	e.support = &delivery.Support{Store: st, Clock: e.clock}
	e.bus.Subscribe(topology.NotificationDispatchQueue, e.disp.Handle)
	e.bus.Subscribe(topology.DeliveryFactsTopic, (&delivery.Projector{Store: st, Clock: e.clock}).Handle)
	return e
}

// queue completes one due scheduler row with a delivery to each (channel, recipient) pair and
// returns the delivery keys.
// sentOne is an env whose "log" channel is ch, with one delivery to a@example.test queued
// and pumped (its first attempt made); it returns the env and the delivery key.
func sentOne(t *testing.T, ch delivery.Channel) (*env, string) {
	t.Helper()
	e := newEnv(t, map[string]delivery.Channel{"log": ch})
	key := e.queue(t, nil, "log", "a@example.test")[0]
	e.pump(t)
	return e, key
}

func (e *env) queue(t *testing.T, payload any, pairs ...string) []string {
	t.Helper()
	ctx := context.Background()
	e.n++
	c := storetest.Candidate(e.n, e.clock.Now())
	if _, err := e.st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: e.clock.Now(), Candidates: []automation.Candidate{c}}); err != nil {
		t.Fatal(err)
	}
	rows, err := e.st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: e.clock.Now(), Lease: time.Minute, Limit: 1})
	if err != nil || len(rows) != 1 {
		t.Fatalf("claim: %v %v", rows, err)
	}
	var reqs []delivery.Request
	for i := 0; i < len(pairs); i += 2 {
		reqs = append(reqs, delivery.Request{SchedulerKey: c.SchedulerKey, BusinessUnitID: "bu-1", Channel: pairs[i], Recipient: pairs[i+1],
			Template: "reminder", Payload: payload, LocalDate: "2026-10-01"})
	}
	jobs, msgs, err := delivery.Build(reqs)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.st.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: rows[0].ID, Token: rows[0].Version, Now: e.clock.Now(), Deliveries: jobs, Outbox: msgs}); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, j := range jobs {
		keys = append(keys, j.DeliveryKey)
	}
	return keys
}

// pump relays the outbox and drains the bus until both are empty.
func (e *env) pump(t *testing.T) {
	t.Helper()
	for i := 0; i < 100; i++ {
		n, err := e.relay.RunOnce(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		d, err := e.bus.Drain(context.Background(), 0)
		if err != nil {
			t.Fatal(err)
		}
		if n == 0 && d == 0 {
			return
		}
	}
	t.Fatal("pump did not settle")
}

// sweep advances the clock by d, then runs the dispatcher's sweep and pumps.
func (e *env) sweep(t *testing.T, d time.Duration) delivery.SweepResult {
	t.Helper()
	e.clock.Advance(d)
	r, err := e.disp.Sweep(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	e.pump(t)
	return r
}

func (e *env) job(t *testing.T, key string) store.NotificationJob {
	t.Helper()
	j, err := e.st.NotificationGetByKey(context.Background(), key)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func dispatchMsg(key string) bus.Message {
	return bus.Message{ID: key, Destination: topology.NotificationDispatchQueue, Body: []byte(`{"deliveryKey":"` + key + `"}`)}
}

func TestDispatchSendsOnceEvenWhenRedelivered(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	key := e.queue(t, map[string]string{"x": "y"}, "log", "a@example.test")[0]
	e.pump(t)
	if p.deliveries() != 1 || p.got[0].DeliveryKey != key || p.got[0].PayloadJSON != `{"x":"y"}` {
		t.Fatalf("sent %+v", p.got)
	}
	// The broker redelivers the same message (e.g. the ack was lost), twice.
	for i := 0; i < 2; i++ {
		if err := e.disp.Handle(context.Background(), dispatchMsg(key)); err != nil {
			t.Fatal(err)
		}
	}
	if p.deliveries() != 1 || p.calls != 1 {
		t.Fatalf("sent %d times", p.calls)
	}
	job := e.job(t, key)
	if job.Status != store.NotificationSent || job.ProviderReference != "ref-"+key || job.AttemptCount != 1 || job.Revision != 3 {
		t.Fatalf("job %+v", job)
	}
	if msgs, _ := e.st.OutboxListUnpublished(context.Background(), store.OutboxListParams{Limit: 10}); len(msgs) != 0 {
		t.Fatalf("outbox still has %d", len(msgs))
	}
}

// A publish failure keeps the outbox row; the next relay run publishes it with the same id.
type flakyPublisher struct {
	bus.Publisher
	fails int
}

func (f *flakyPublisher) Publish(ctx context.Context, m bus.Message) error {
	if f.fails > 0 {
		f.fails--
		return errors.New("broker unavailable")
	}
	return f.Publisher.Publish(ctx, m)
}

func TestRelayKeepsMessagesUntilTheBrokerAccepts(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	key := e.queue(t, nil, "log", "a@example.test")[0]
	e.relay.Publisher = &flakyPublisher{Publisher: e.bus, fails: 1}
	if n, err := e.relay.RunOnce(context.Background()); err == nil || n != 0 {
		t.Fatalf("first run: %d %v", n, err)
	}
	msgs, _ := e.st.OutboxListUnpublished(context.Background(), store.OutboxListParams{Limit: 10})
	if len(msgs) != 1 || msgs[0].Attempts != 1 || msgs[0].MessageID != key {
		t.Fatalf("outbox %+v", msgs)
	}
	// The failed row waits for its RetryAt (the relay's RetryDelay, 1 s by default).
	if n, err := e.relay.RunOnce(context.Background()); err != nil || n != 0 {
		t.Fatalf("run before RetryAt: %d %v", n, err)
	}
	e.clock.Advance(time.Second)
	e.pump(t)
	if p.deliveries() != 1 {
		t.Fatalf("sent %d", p.deliveries())
	}
}

func TestLiveSendClaimBlocksASecondSender(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	key := e.queue(t, nil, "log", "a@example.test")[0]
	ctx := context.Background()
	claim, err := e.st.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: key, Now: e.clock.Now(), Lease: time.Minute})
	if err != nil || !claim.Claimed || claim.InDoubt {
		t.Fatal(claim, err)
	}
	if err := e.disp.Handle(ctx, dispatchMsg(key)); !errors.Is(err, delivery.ErrInFlight) || p.calls != 0 {
		t.Fatalf("second sender during a live claim: %v, calls %d", err, p.calls)
	}
	// The lease expires: the claim is taken over in doubt and the non-idempotent channel is
	// never called blindly; the first sender's late finish is refused.
	e.clock.Advance(time.Minute)
	if err := e.disp.Handle(ctx, dispatchMsg(key)); err != nil || p.calls != 0 {
		t.Fatalf("after lease expiry: %v, calls %d", err, p.calls)
	}
	if j := e.job(t, key); j.Status != store.NotificationUnknown || j.NextAttemptOn != nil {
		t.Fatalf("job %+v", j)
	}
	if err := e.st.NotificationFinish(ctx, store.NotificationFinishParams{ID: claim.Job.ID, Token: claim.Job.Version, Now: e.clock.Now(), Status: store.NotificationSent}); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale finish: %v", err)
	}
}

// crashOnce runs one dispatch of key whose channel panics at the given point, as a process
// that dies there: nothing after the panic runs.
func crashOnce(t *testing.T, e *env, p *provider, key, at string) {
	t.Helper()
	p.panicAt = at
	func() {
		defer func() {
			if r := recover(); r == nil {
				t.Fatal("the channel did not crash")
			}
		}()
		_ = e.disp.Handle(context.Background(), dispatchMsg(key))
	}()
	p.panicAt = ""
	if j := e.job(t, key); j.Status != store.NotificationSending {
		t.Fatalf("after the crash the job is %s, want Sending", j.Status)
	}
}

// Done when (issue 5): a crash between claim and send, or between send and recording the
// outcome, leads to exactly one delivery or one UNKNOWN awaiting resolution - never two -
// for every kind of channel.
func TestCrashAtEveryDispatchStepNeverSendsTwice(t *testing.T) {
	t.Parallel()
	type want struct {
		status     store.NotificationStatus
		deliveries int
	}
	cases := []struct {
		name    string
		channel func(*provider) delivery.Channel
		before  want // crash between claim and send
		after   want // crash between send and complete
	}{
		{"not idempotent, no lookup", func(p *provider) delivery.Channel { return &testChannel{p: p} },
			want{store.NotificationUnknown, 0}, want{store.NotificationUnknown, 1}},
		{"idempotent (same key resent, provider deduplicates)", func(p *provider) delivery.Channel {
			p.dedupe = true
			return &testChannel{p: p, traits: delivery.Traits{Idempotent: true}}
		}, want{store.NotificationSent, 1}, want{store.NotificationSent, 1}},
		{"lookup", func(p *provider) delivery.Channel { return &lookingChannel{testChannel{p: p}} },
			want{store.NotificationSent, 1}, want{store.NotificationSent, 1}},
	}
	for _, tc := range cases {
		for _, at := range []string{"before", "after"} {
			t.Run(tc.name+"/"+at, func(t *testing.T) {
				t.Parallel()
				p := &provider{}
				e := newEnv(t, map[string]delivery.Channel{"log": tc.channel(p)})
				key := e.queue(t, nil, "log", "a@example.test")[0]
				if _, err := e.relay.RunOnce(context.Background()); err != nil {
					t.Fatal(err)
				}
				crashOnce(t, e, p, key, at)
				// The broker redelivers at once: the claim is still live, nothing is sent.
				if err := e.disp.Handle(context.Background(), dispatchMsg(key)); !errors.Is(err, delivery.ErrInFlight) {
					t.Fatalf("redelivery during the dead sender's lease: %v", err)
				}
				// Later sweeps (a restarted process) take over, several times over.
				for i := 0; i < 3; i++ {
					e.sweep(t, time.Hour)
				}
				w := tc.before
				if at == "after" {
					w = tc.after
				}
				j := e.job(t, key)
				if j.Status != w.status || p.deliveries() != w.deliveries {
					t.Fatalf("status %s, deliveries %d; want %s, %d", j.Status, p.deliveries(), w.status, w.deliveries)
				}
				if j.Status == store.NotificationUnknown {
					page, err := e.support.ListUnknown(context.Background(), "bu-1", 0, 10)
					if err != nil || len(page.Items) != 1 || page.Items[0].DeliveryKey != key {
						t.Fatalf("manual-resolution queue: %+v %v", page, err)
					}
				}
			})
		}
	}
}

func TestTransientFailuresBackOffThenHold(t *testing.T) {
	t.Parallel()
	p := &provider{failWith: errors.New("connection refused")}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	key := e.queue(t, nil, "log", "a@example.test")[0]
	e.pump(t) // attempt 1 fails: retry in 5 min
	j := e.job(t, key)
	if j.Status != store.NotificationQueued || j.NextAttemptOn == nil || !j.NextAttemptOn.Equal(storetest.T0.Add(5*time.Minute)) || j.RetryCount != 1 {
		t.Fatalf("after the first failure: %+v", j)
	}
	// A redelivered message before the retry time sends nothing.
	if err := e.disp.Handle(context.Background(), dispatchMsg(key)); err != nil || p.calls != 1 {
		t.Fatalf("early redelivery: %v, calls %d", err, p.calls)
	}
	if r := e.sweep(t, 4*time.Minute); r.Claimed != 0 {
		t.Fatalf("swept before the retry time: %+v", r)
	}
	if wake, _ := e.st.NotificationNextWakeUp(context.Background()); wake == nil || !wake.Equal(storetest.T0.Add(5*time.Minute)) {
		t.Fatalf("wake-up %v", wake)
	}
	e.sweep(t, time.Minute)    // attempt 2 at +5 min: retry in 15 min
	e.sweep(t, 15*time.Minute) // attempt 3: retry in 1 h
	r := e.sweep(t, time.Hour) // attempt 4: the ladder is exhausted
	if p.calls != 4 || r.Failed != 1 {
		t.Fatalf("calls %d, sweep %+v", p.calls, r)
	}
	j = e.job(t, key)
	if j.Status != store.NotificationFailed || !j.IsOnSupportHold || j.NextAttemptOn != nil || !strings.Contains(j.LastError, "connection refused") {
		t.Fatalf("held job %+v", j)
	}
	if r := e.sweep(t, 24*time.Hour); r.Claimed != 0 {
		t.Fatal("a held job was retried")
	}
}

func TestUnknownOutcomeByChannelKind(t *testing.T) {
	t.Parallel()
	timeout := automation.Unknown(errors.New("read: i/o timeout"))
	t.Run("not idempotent: manual resolution at once", func(t *testing.T) {
		t.Parallel()
		p := &provider{afterSend: timeout}
		e, key := sentOne(t, &testChannel{p: p})
		e.sweep(t, 48*time.Hour)
		if j := e.job(t, key); j.Status != store.NotificationUnknown || j.NextAttemptOn != nil || p.calls != 1 {
			t.Fatalf("job %+v calls %d", j, p.calls)
		}
	})
	t.Run("idempotent: resent with the same key until it answers", func(t *testing.T) {
		t.Parallel()
		p := &provider{afterSend: timeout, dedupe: true}
		e, key := sentOne(t, &testChannel{p: p, traits: delivery.Traits{Idempotent: true}})
		e.sweep(t, 5*time.Minute)
		if j := e.job(t, key); j.Status != store.NotificationQueued || j.RetryCount != 2 || p.calls != 2 {
			t.Fatalf("job %+v calls %d", j, p.calls)
		}
		p.afterSend = nil
		e.sweep(t, 15*time.Minute)
		j := e.job(t, key)
		if j.Status != store.NotificationSent || p.deliveries() != 1 || p.calls != 3 {
			t.Fatalf("job %+v deliveries %d calls %d", j, p.deliveries(), p.calls)
		}
		for _, m := range p.got {
			if m.DeliveryKey != key {
				t.Fatal("a retry used another idempotency key")
			}
		}
	})
	t.Run("idempotent: ladder exhausted goes to manual resolution, never Failed", func(t *testing.T) {
		t.Parallel()
		p := &provider{afterSend: timeout, dedupe: true}
		e, key := sentOne(t, &testChannel{p: p, traits: delivery.Traits{Idempotent: true}})
		for i := 0; i < 5; i++ {
			e.sweep(t, 2*time.Hour)
		}
		if j := e.job(t, key); j.Status != store.NotificationUnknown || j.NextAttemptOn != nil || p.calls != 4 {
			t.Fatalf("job %+v calls %d", j, p.calls)
		}
	})
	t.Run("lookup: asks later, then records what the provider says", func(t *testing.T) {
		t.Parallel()
		p := &provider{afterSend: timeout}
		answers := []delivery.LookupStatus{delivery.LookupUnknown, delivery.LookupDelivered}
		p.lookup = func(string) (delivery.LookupStatus, error) {
			a := answers[0]
			answers = answers[1:]
			return a, nil
		}
		e, key := sentOne(t, &lookingChannel{testChannel{p: p}})
		j := e.job(t, key)
		if j.Status != store.NotificationUnknown || j.NextAttemptOn == nil || !j.NextAttemptOn.Equal(storetest.T0.Add(5*time.Minute)) {
			t.Fatalf("after the timeout: %+v", j)
		}
		e.sweep(t, 5*time.Minute) // lookup: unknown yet → again in 15 min
		if j := e.job(t, key); j.Status != store.NotificationUnknown || j.NextAttemptOn == nil {
			t.Fatalf("after the first lookup: %+v", j)
		}
		e.sweep(t, 15*time.Minute) // lookup: delivered
		if j := e.job(t, key); j.Status != store.NotificationSent || j.ProviderReference != "lookup-"+key || p.calls != 1 {
			t.Fatalf("after the second lookup: %+v calls %d", j, p.calls)
		}
	})
}

func TestInvalidRecipientFailsOnlyThatRecipient(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	keys := e.queue(t, nil, "log", "not-an-address", "log", "b@example.test")
	e.pump(t)
	bad, good := e.job(t, keys[0]), e.job(t, keys[1])
	if bad.Status != store.NotificationFailed || bad.IsOnSupportHold || !strings.Contains(bad.LastError, "recipient not valid for channel log") {
		t.Fatalf("bad recipient: %+v", bad)
	}
	if good.Status != store.NotificationSent || p.deliveries() != 1 {
		t.Fatalf("good recipient: %+v", good)
	}
}

func TestMalformedDispatchMessagesAreDeadLettered(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	key := e.queue(t, nil, "log", "a@example.test")[0]
	one := `{"deliveryKey":"` + key + `"}`
	for name, body := range map[string]string{"not json": `nope`, "no key": `{}`, "unknown field": `{"deliveryKey":"x","extra":1}`, "unknown key": `{"deliveryKey":"dlv_0000"}`,
		"a second message after a real one": one + one, "text after a real one": one + "x"} {
		err := e.disp.Handle(context.Background(), bus.Message{ID: "m", Body: []byte(body)})
		if !automation.IsPermanent(err) {
			t.Errorf("%s: err = %v, want dead-letter", name, err)
		}
	}
	if p.calls != 0 {
		t.Fatal("sent on a malformed message")
	}
}

func TestUnknownChannelFailsTheJobPermanently(t *testing.T) {
	t.Parallel()
	e := newEnv(t, map[string]delivery.Channel{})
	key := e.queue(t, nil, "sms", "a@example.test")[0]
	e.pump(t)
	if j := e.job(t, key); j.Status != store.NotificationFailed || !strings.Contains(j.LastError, "unknown channel") {
		t.Fatalf("job %+v", j)
	}
}

// contentChannel needs a rendered template.
func contentChannel(p *provider) delivery.Channel {
	return &testChannel{p: p, traits: delivery.Traits{NeedsContent: true}}
}

func TestTemplatesRenderWithBusinessUnitOverrideAndVersions(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"email": contentChannel(p)})
	ctx := context.Background()
	save := func(bu, subject string, expected *int64) (store.NotificationTemplate, error) {
		return e.tpl.Save(ctx, store.NotificationTemplate{Key: "reminder", BusinessUnitID: bu, Subject: subject,
			Text: "Hello {{.source.name}}, due {{.targetDate}} ({{.recipient}})", HTML: "<p>Hello {{.source.name}}</p>", CreatedBy: "ops@example.test"}, expected)
	}
	if _, err := save("", "Default {{.settingName}}", nil); err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	if _, err := save("bu-1", "BU one v1", &zero); err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	v2, err := save("bu-1", "BU one v2 for {{.source.name}}", &one)
	if err != nil || v2.Version != 2 {
		t.Fatalf("v2: %+v %v", v2, err)
	}
	if _, err := save("bu-1", "lost update", &one); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale expected version: %v", err)
	}
	payload := map[string]any{"settingName": "Police check", "targetDate": "2026-10-31", "source": map[string]any{"name": "Amelia <script>"}}
	key := e.queue(t, payload, "email", "a@example.test")[0]
	e.pump(t)
	if p.deliveries() != 1 {
		t.Fatalf("deliveries %d", p.deliveries())
	}
	c := p.got[0].Content
	if c == nil || c.Subject != "BU one v2 for Amelia <script>" || c.TemplateVersion != 2 ||
		c.Text != "Hello Amelia <script>, due 2026-10-31 (a@example.test)" || c.HTML != "<p>Hello Amelia &lt;script&gt;</p>" {
		t.Fatalf("content %+v", c)
	}
	if j := e.job(t, key); j.TemplateVersion != 2 {
		t.Fatalf("template version not recorded: %+v", j)
	}
	// Another business unit gets the default.
	tpl, err := e.tpl.Get(ctx, "reminder", "bu-2")
	if err != nil || tpl.Version != 1 || tpl.BusinessUnitID != "" {
		t.Fatalf("default: %+v %v", tpl, err)
	}
}

func TestTemplateRenderErrorNamesTheMissingField(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"email": contentChannel(p)})
	if _, err := e.tpl.Save(context.Background(), store.NotificationTemplate{Key: "reminder", Subject: "Hi {{.source.staffName}}",
		Text: "body", CreatedBy: "ops"}, nil); err != nil {
		t.Fatal(err)
	}
	for _, payload := range []any{map[string]any{"source": map[string]any{"other": 1}}, map[string]any{"source": map[string]any{"staffName": nil}}} {
		key := e.queue(t, payload, "email", "a@example.test")[0]
		e.pump(t)
		j := e.job(t, key)
		if j.Status != store.NotificationFailed || !strings.Contains(j.LastError, `subject: missing field "source.staffName"`) {
			t.Fatalf("job %+v", j)
		}
	}
	if p.calls != 0 {
		t.Fatal("sent with a blank field")
	}
	// A channel that needs content fails without a template (Failed on support hold until
	// the template is saved: TestMissingTemplateWaitsOnHold); the log-like channel sends
	// without one.
	key := e.queue(t, nil, "email", "a@example.test")[0]
	e.disp.Templates = nil
	e.pump(t)
	if j := e.job(t, key); j.Status != store.NotificationFailed || !strings.Contains(j.LastError, "not found") {
		t.Fatalf("no template: %+v", j)
	}
}

func TestTemplateThatDoesNotParseIsRejectedAtSave(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	cases := map[string]store.NotificationTemplate{
		"subject":   {Key: "k", Subject: "{{.x", Text: "t", CreatedBy: "ops"},
		"text":      {Key: "k", Subject: "s", Text: "{{if .x}}", CreatedBy: "ops"},
		"html":      {Key: "k", Subject: "s", HTML: "<a href=\"{{.x}\">", CreatedBy: "ops"},
		"key":       {Key: "bad key!", Subject: "s", Text: "t", CreatedBy: "ops"},
		"template":  {Key: "k", Subject: "s", CreatedBy: "ops"},
		"createdBy": {Key: "k", Subject: "s", Text: "t"},
	}
	for field, tpl := range cases {
		_, err := e.tpl.Save(ctx, tpl, nil)
		var ae *automation.Error
		if !automation.IsInvalid(err) || !errors.As(err, &ae) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: %v", field, err)
		}
	}
	if _, err := e.tpl.Get(ctx, "k", ""); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("a rejected template was stored: %v", err)
	}
}

// Facts: every status change is one fact with its own event id and a higher revision; the
// projection counts each command once however often and in whatever order facts arrive.
func TestFactsProjectionIsExactUnderReplayAndReordering(t *testing.T) {
	t.Parallel()
	p := &provider{}
	timeout := &provider{afterSend: automation.Unknown(errors.New("timeout"))}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}, "slow": &testChannel{p: timeout}})
	// Capture every fact message the relay publishes.
	var facts []bus.Message
	e.bus.Subscribe(topology.DeliveryFactsTopic, func(_ context.Context, m bus.Message) error { facts = append(facts, m); return nil })
	keys := e.queue(t, nil, "log", "a@example.test", "log", "bad", "slow", "c@example.test")
	e.pump(t)
	byKey := map[string][]store.DeliveryFact{}
	for _, m := range facts {
		f, err := delivery.DecodeFact(m.Body)
		if err != nil || m.ID != f.EventID {
			t.Fatalf("fact %s: %v", m.Body, err)
		}
		byKey[f.CommandID] = append(byKey[f.CommandID], f)
	}
	for _, k := range keys {
		fs := byKey[k]
		if len(fs) != 2 || fs[0].Status != store.NotificationSending || fs[0].Revision != 2 || fs[1].Revision != 3 || fs[0].EventID == fs[1].EventID || fs[0].LocalDate != "2026-10-01" {
			t.Fatalf("facts of %s: %+v", k, fs)
		}
	}
	proj := &delivery.Projector{Store: e.st, Clock: e.clock}
	apply := func(ms []bus.Message) {
		for _, m := range ms {
			if err := proj.Handle(context.Background(), m); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := store.DeliveryDayCounts{LocalDate: "2026-10-01", Sent: 1, Failed: 1, Unknown: 1}
	check := func(when string) {
		t.Helper()
		c, err := e.support.Counts(context.Background(), "bu-1", "2026-09-01", "2026-10-31")
		if err != nil || len(c.Days) != 1 || c.Days[0] != want || c.FreshTo == nil || !c.FreshTo.Equal(storetest.T0) {
			t.Fatalf("%s: %+v %v", when, c, err)
		}
	}
	// Reversed order first (newest fact first), then everything again twice.
	rev := make([]bus.Message, len(facts))
	for i, m := range facts {
		rev[len(facts)-1-i] = m
	}
	apply(rev)
	check("out of order")
	apply(facts)
	apply(facts)
	check("replayed")
	// An operator resolves the UNKNOWN one as Sent: one more fact, the counts move.
	page, err := e.support.ListUnknown(context.Background(), "bu-1", 0, 0)
	if err != nil || len(page.Items) != 1 {
		t.Fatal(page, err)
	}
	e.clock.Advance(time.Hour)
	if _, err := e.support.Resolve(context.Background(), delivery.ResolveRequest{BusinessUnitID: "bu-1", DeliveryKey: page.Items[0].DeliveryKey,
		ExpectedVersion: page.Items[0].Version, Status: store.NotificationSent, Operator: "ops@example.test", Reason: "provider portal shows it delivered"}); err != nil {
		t.Fatal(err)
	}
	n := len(facts)
	e.pump(t)
	if len(facts) != n+1 {
		t.Fatalf("resolution facts: %d", len(facts)-n)
	}
	apply(facts[n:])
	apply(facts) // the whole history replayed after the resolution changes nothing
	want = store.DeliveryDayCounts{LocalDate: "2026-10-01", Sent: 2, Failed: 1}
	c, err := e.support.Counts(context.Background(), "bu-1", "2026-10-01", "2026-10-01")
	if err != nil || len(c.Days) != 1 || c.Days[0] != want || !c.FreshTo.Equal(storetest.T0.Add(time.Hour)) {
		t.Fatalf("after resolution: %+v %v", c, err)
	}
	if err := proj.Handle(context.Background(), bus.Message{ID: "x", Body: []byte(`{"eventId":"x"}`)}); !automation.IsPermanent(err) {
		t.Fatalf("malformed fact: %v", err)
	}
}

func TestResolveGuardsVersionScopeAndInput(t *testing.T) {
	t.Parallel()
	p := &provider{afterSend: automation.Unknown(errors.New("timeout"))}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	var keys []string
	for i := 0; i < 3; i++ {
		keys = append(keys, e.queue(t, nil, "log", fmt.Sprintf("u%d@example.test", i))...)
	}
	e.pump(t)
	ctx := context.Background()
	page, err := e.support.ListUnknown(ctx, "bu-1", 0, 2)
	if err != nil || len(page.Items) != 2 || page.NextAfter == 0 {
		t.Fatalf("page 1: %+v %v", page, err)
	}
	page2, err := e.support.ListUnknown(ctx, "bu-1", page.NextAfter, 2)
	if err != nil || len(page2.Items) != 1 || page2.NextAfter != 0 || page2.Items[0].DeliveryKey != keys[2] {
		t.Fatalf("page 2: %+v %v", page2, err)
	}
	if other, _ := e.support.ListUnknown(ctx, "bu-2", 0, 10); len(other.Items) != 0 {
		t.Fatal("another business unit sees the queue")
	}
	item := page.Items[0]
	req := delivery.ResolveRequest{BusinessUnitID: "bu-1", DeliveryKey: item.DeliveryKey, ExpectedVersion: item.Version,
		Status: store.NotificationFailed, Operator: "ops", Reason: "provider says it bounced"}
	bad := []func(r *delivery.ResolveRequest){
		func(r *delivery.ResolveRequest) { r.Status = store.NotificationQueued },
		func(r *delivery.ResolveRequest) { r.Operator = " " },
		func(r *delivery.ResolveRequest) { r.Reason = "" },
		func(r *delivery.ResolveRequest) { r.ExpectedVersion = 0 },
		func(r *delivery.ResolveRequest) { r.DeliveryKey = "x" },
		// The audit rule of every person's action (automation.CheckAudit): no NUL, no
		// right-to-left override, bounded.
		func(r *delivery.ResolveRequest) { r.Operator = "ops\x00" },
		func(r *delivery.ResolveRequest) { r.Operator = "ops.\u202Eenaj" },
		func(r *delivery.ResolveRequest) { r.Operator = strings.Repeat("x", 10000) },
		func(r *delivery.ResolveRequest) { r.Reason = "bounced\x00" },
		func(r *delivery.ResolveRequest) { r.Reason = "the \u202Eprovider" },
		func(r *delivery.ResolveRequest) { r.Reason = strings.Repeat("x", 10000) },
	}
	for i, f := range bad {
		r := req
		f(&r)
		if _, err := e.support.Resolve(ctx, r); !automation.IsInvalid(err) {
			t.Errorf("bad request %d: %v", i, err)
		}
	}
	other := req
	other.BusinessUnitID = "bu-2"
	if _, err := e.support.Resolve(ctx, other); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("out-of-scope business unit: %v", err)
	}
	stale := req
	stale.ExpectedVersion--
	if _, err := e.support.Resolve(ctx, stale); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale version: %v", err)
	}
	if j := e.job(t, item.DeliveryKey); j.Status != store.NotificationUnknown || j.Version != item.Version {
		t.Fatalf("a refused resolution changed the job: %+v", j)
	}
	j, err := e.support.Resolve(ctx, req)
	if err != nil || j.Status != store.NotificationFailed || j.ResolvedBy != "ops" || j.ResolutionReason != "provider says it bounced" || j.ResolvedOn == nil {
		t.Fatalf("resolved: %+v %v", j, err)
	}
	if _, err := e.support.Resolve(ctx, req); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("second resolution: %v", err)
	}
	if _, err := e.support.Counts(ctx, "bu-1", "2026-10-02", "2026-10-01"); !automation.IsInvalid(err) {
		t.Fatalf("reversed range: %v", err)
	}
	if _, err := e.support.Counts(ctx, "bu-1", "2026-01-01", "2027-06-01"); !automation.IsInvalid(err) {
		t.Fatalf("range too long: %v", err)
	}
}

func TestBackoffJitterNeverRetriesEarly(t *testing.T) {
	t.Parallel()
	p := &provider{failWith: errors.New("451 try later")}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	e.disp.Backoff = scheduler.Backoff{Steps: scheduler.DefaultBackoff, JitterFraction: 0.1, Rand: func() float64 { return 0.5 }}
	key := e.queue(t, nil, "log", "a@example.test")[0]
	e.pump(t)
	if j := e.job(t, key); j.NextAttemptOn == nil || !j.NextAttemptOn.Equal(storetest.T0.Add(5*time.Minute+15*time.Second)) {
		t.Fatalf("next attempt %v", j.NextAttemptOn)
	}
}

func TestLogChannelWritesTheMessageOrItsLine(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	c := &delivery.LogChannel{W: &b}
	if _, err := c.Send(context.Background(), delivery.Message{DeliveryKey: "dlv_1", Recipient: "a@example.test", Payload: json.RawMessage(`{"a":1}`), Content: &delivery.Content{Subject: "s"}}); err != nil {
		t.Fatal(err)
	}
	c.Line = func(m delivery.Message) any { return map[string]string{"k": m.DeliveryKey} }
	if _, err := c.Send(context.Background(), delivery.Message{DeliveryKey: "dlv_2", Recipient: "a@example.test"}); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `"content":{"subject":"s"`) || lines[1] != `{"k":"dlv_2"}` {
		t.Fatalf("%q", lines)
	}
	if c.ValidateRecipient("") == nil || c.Traits().Idempotent {
		t.Fatal("log channel traits")
	}
}

// A delivery that fails on configuration (its channel needs a template the unit does not
// have) waits Failed on support hold with the reason, so support releases it once the
// template is saved; it is not a permanent failure, and no sweep retries it meanwhile.
func TestMissingTemplateWaitsOnHold(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"email": contentChannel(p)})
	key := e.queue(t, map[string]any{"settingName": "Police check"}, "email", "a@example.test")[0]
	e.pump(t)
	j := e.job(t, key)
	if j.Status != store.NotificationFailed || !j.IsOnSupportHold || !strings.Contains(j.LastError, "configuration") ||
		!strings.Contains(j.LastError, `"reminder"`) || !strings.Contains(j.LastError, "release") || p.deliveries() != 0 {
		t.Fatalf("job %+v, deliveries %d: want Failed on hold, naming the template", j, p.deliveries())
	}
	if r := e.sweep(t, 24*time.Hour); r.Claimed != 0 {
		t.Fatal("a held job was retried")
	}
}
