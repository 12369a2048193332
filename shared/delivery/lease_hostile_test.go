package delivery_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/preference"
	"github.com/automation-platform/automation/shared/scheduler"
	"github.com/automation-platform/automation/shared/store"
)

// slowChannel is a looking channel whose sends take simulated time: before the provider
// gets the message, before runs (it may advance the clock or start another sweeper).
type slowChannel struct {
	lookingChannel
	before func(m delivery.Message)
}

func (c *slowChannel) Send(ctx context.Context, m delivery.Message) (string, error) {
	if c.before != nil {
		c.before(m)
	}
	return c.p.send(ctx, m)
}

// retrying queues n deliveries whose first attempt failed before reaching the provider and
// whose retry is now due.
func retrying(t *testing.T, e *env, p *provider, n int) []string {
	t.Helper()
	var keys []string
	for i := 0; i < n; i++ {
		keys = append(keys, e.queue(t, nil, "log", "a@example.test")...)
	}
	p.failWith = errors.New("connection refused")
	e.pump(t)
	p.failWith = nil
	e.clock.Advance(time.Hour)
	for _, k := range keys {
		if j := e.job(t, k); j.Status != store.NotificationQueued || j.NextAttemptOn == nil || j.NextAttemptOn.After(e.clock.Now()) {
			t.Fatalf("not a due retry: %+v", j)
		}
	}
	return keys
}

// A sweep that claimed a batch and sends one job after another must not hold claims whose
// lease runs out while earlier sends are slow: a second sweeper takes those over (in doubt),
// looks them up - not delivered yet - and sends, and the first sweeper then sends again.
// Each job is claimed when its turn comes, so its lease covers its own send only.
func TestSlowSendsInASweepNeverLetAClaimExpireUnsent(t *testing.T) {
	t.Parallel()
	p := &provider{}
	ch := &slowChannel{lookingChannel: lookingChannel{testChannel{p: p}}}
	e := newEnv(t, map[string]delivery.Channel{"log": ch})
	keys := retrying(t, e, p, 3)
	second := *e.disp
	second.OnOutcome = nil
	var mu sync.Mutex
	calls, nested := 0, false
	ch.before = func(delivery.Message) {
		mu.Lock()
		if nested {
			mu.Unlock()
			return
		}
		calls++
		n := calls
		e.clock.Advance(40 * time.Second) // each send takes 40 s of the 1 min lease
		if n == 2 {
			nested = true
		}
		mu.Unlock()
		if n == 2 {
			// Another instance's OutboxRelay timer fires during the second send.
			if _, err := second.Sweep(context.Background()); err != nil {
				t.Error(err)
			}
			mu.Lock()
			nested = false
			mu.Unlock()
		}
	}
	e.disp.SweepBatch = 3
	if _, err := e.disp.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	p.mu.Lock()
	perKey := map[string]int{}
	for _, m := range p.got {
		perKey[m.DeliveryKey]++
	}
	p.mu.Unlock()
	for _, k := range keys {
		if perKey[k] != 1 {
			t.Errorf("%s delivered %d times", k, perKey[k])
		}
		if j := e.job(t, k); j.Status != store.NotificationSent {
			t.Errorf("%s is %s", k, j.Status)
		}
	}
}

// A claim whose lease ran out before the channel was called may be taken over at any
// moment: the channel is not called on it. A clean claim goes back to the retry ladder
// (nothing was sent); an in-doubt one is left for the next claimer, still in doubt.
func TestProcessNeverCallsTheChannelOnAnExpiredClaim(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &lookingChannel{testChannel{p: p}}})
	key := e.queue(t, nil, "log", "a@example.test")[0]
	ctx := context.Background()
	claim, err := e.st.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: key, Now: e.clock.Now(), Lease: time.Minute})
	if err != nil || !claim.Claimed {
		t.Fatal(claim, err)
	}
	e.clock.Advance(2 * time.Minute) // e.g. the template store was slow
	if _, err := e.disp.Process(ctx, claim); err != nil {
		t.Fatal(err)
	}
	j := e.job(t, key)
	if p.calls != 0 || j.Status != store.NotificationQueued || j.NextAttemptOn == nil {
		t.Fatalf("calls %d, job %+v", p.calls, j)
	}
	// In doubt: a takeover claim that expires before its lookup leaves the job Sending.
	e.clock.Advance(time.Hour)
	key2 := e.queue(t, nil, "log", "b@example.test")[0]
	first, _ := e.st.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: key2, Now: e.clock.Now(), Lease: time.Minute})
	e.clock.Advance(time.Minute)
	takeover, err := e.st.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: key2, Now: e.clock.Now(), Lease: time.Minute})
	if err != nil || !takeover.InDoubt || first.Job.Version == takeover.Job.Version {
		t.Fatal(takeover, err)
	}
	e.clock.Advance(2 * time.Minute)
	if _, err := e.disp.Process(ctx, takeover); err != nil {
		t.Fatal(err)
	}
	if j := e.job(t, key2); p.calls != 0 || j.Status != store.NotificationSending {
		t.Fatalf("calls %d, job %+v", p.calls, j)
	}
}

// The channel call is bounded by what is left of the claim's lease.
func TestChannelCallEndsWithTheLease(t *testing.T) {
	t.Parallel()
	var deadline time.Time
	var ok bool
	e := newEnv(t, map[string]delivery.Channel{"log": delivery.FuncChannel(func(ctx context.Context, m delivery.Message) (string, error) {
		deadline, ok = ctx.Deadline()
		return "ref", nil
	})})
	e.queue(t, nil, "log", "a@example.test")
	start := time.Now()
	e.pump(t)
	end := time.Now()
	if !ok || deadline.After(end.Add(e.disp.Lease)) || deadline.Before(start.Add(e.disp.Lease)) {
		t.Fatalf("deadline %v (set %v), want the lease %s from the call (%v..%v)", deadline, ok, e.disp.Lease, start, end)
	}
}

// A delivery whose dispatch message was lost for good (dead-lettered while SQL was down) is
// not lost: once it has waited QueuedGrace the sweep starts it, once; the message turning
// up after all sends nothing more.
func TestSweepStartsADeliveryWhoseMessageWasLost(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"log": &testChannel{p: p}})
	key := e.queue(t, nil, "log", "a@example.test")[0] // its outbox message is never relayed
	sweep := func(d time.Duration) delivery.SweepResult {
		e.clock.Advance(d)
		r, err := e.disp.Sweep(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	if r := sweep(5 * time.Minute); r.Claimed != 0 || p.calls != 0 {
		t.Fatalf("within the grace: %+v, calls %d", r, p.calls)
	}
	if r := sweep(10 * time.Minute); r.Sent != 1 || p.deliveries() != 1 {
		t.Fatalf("after the grace: %+v, deliveries %d", r, p.deliveries())
	}
	if err := e.disp.Handle(context.Background(), dispatchMsg(key)); err != nil || p.calls != 1 {
		t.Fatalf("late message: %v, calls %d", err, p.calls)
	}
	if j := e.job(t, key); j.Status != store.NotificationSent || j.AttemptCount != 1 {
		t.Fatalf("job %+v", j)
	}
}

// An expired send claim counts as a failed attempt (docs/architecture.md#failure-backoff-and-rescue): a delivery that
// kills its sender every time (crash between claim and send, or between send and
// recording) is not resent forever on an idempotent or looking channel. After the attempts
// of the backoff ladder it waits, Unknown, for a person.
func TestSenderThatCrashesEveryTimeEndsOnTheManualQueue(t *testing.T) {
	t.Parallel()
	for name, mk := range map[string]func(*provider) delivery.Channel{
		"idempotent": func(p *provider) delivery.Channel {
			p.dedupe = true
			return &testChannel{p: p, traits: delivery.Traits{Idempotent: true}}
		},
		"lookup": func(p *provider) delivery.Channel { return &lookingChannel{testChannel{p: p}} },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			p := &provider{}
			e := newEnv(t, map[string]delivery.Channel{"log": mk(p)})
			key := e.queue(t, nil, "log", "a@example.test")[0]
			if _, err := e.relay.RunOnce(context.Background()); err != nil {
				t.Fatal(err)
			}
			crashOnce(t, e, p, key, "before")
			for i := 0; i < 10; i++ {
				e.clock.Advance(time.Hour)
				p.panicAt = "before"
				func() {
					defer func() { _ = recover() }()
					_, _ = e.disp.Sweep(context.Background())
				}()
				p.panicAt = ""
			}
			j := e.job(t, key)
			if j.Status != store.NotificationUnknown || j.NextAttemptOn != nil || p.calls > 4 {
				t.Fatalf("after 11 crashes: %s, %d channel calls (attempts %d)", j.Status, p.calls, j.AttemptCount)
			}
			page, err := e.support.ListUnknown(context.Background(), "bu-1", 0, 10)
			if err != nil || len(page.Items) != 1 {
				t.Fatalf("manual queue: %+v %v", page, err)
			}
		})
	}
}

// A delivery whose every claim dies before its gate (DispatchHooks.BeforeGate) uses up its
// attempts and would wait, UNKNOWN, for a person. When the recipient opted out at or before
// its first claim, no attempt can have sent (each gate read follows its claim and would have
// seen the opt-out), so the first-claim rule ends it Skipped on this path too; an opt-out
// after the first claim leaves it UNKNOWN (an attempt may have passed its gate).
func TestExhaustedInDoubtDeliveryHonoursAnOptOutBeforeItsFirstClaim(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name          string
		beforeClaim   bool
		want          store.NotificationStatus
		wantErrSubstr string
	}{
		{name: "opted out before the first claim", beforeClaim: true, want: store.NotificationSkipped, wantErrSubstr: "opted out of marketing email messages"},
		{name: "opted out after the first claim", want: store.NotificationUnknown, wantErrSubstr: "attempts without an outcome"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			p := &provider{}
			e := newEnv(t, map[string]delivery.Channel{"email": &testChannel{p: p, traits: delivery.Traits{Idempotent: true}}})
			if err := e.st.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: "bu-1", Name: "Unit", TimeZoneID: "Australia/Sydney"}); err != nil {
				t.Fatal(err)
			}
			svc := &preference.Service{Store: e.st, Clock: e.clock, UnitCacheTTL: -1}
			e.disp.Gate = svc
			optOut := func() {
				if err := svc.OptOut(ctx, "bu-1", "linh@example.test", "email", "", preference.SourceListUnsubscribe, "linh@example.test"); err != nil {
					t.Fatal(err)
				}
			}
			key := e.queue(t, map[string]any{"points": 5}, "email", "linh@example.test")[0]
			if tc.beforeClaim {
				e.clock.Advance(time.Second)
				optOut()
				e.clock.Advance(time.Second)
			}
			crash := errors.New("the sender died before its gate")
			e.disp.Hooks = &delivery.DispatchHooks{BeforeGate: func(context.Context, store.NotificationJob, bool) error { return crash }}
			if err := e.disp.Handle(ctx, dispatchMsg(key)); !errors.Is(err, crash) {
				t.Fatalf("first claim: %v, want the crash", err)
			}
			if !tc.beforeClaim {
				e.clock.Advance(time.Second)
				optOut()
			}
			// Every later claim dies too, until the ladder is used up.
			for i := 0; i < 12 && e.job(t, key).Status == store.NotificationSending; i++ {
				e.clock.Advance(time.Hour)
				if j := e.job(t, key); j.AttemptCount > len(scheduler.DefaultBackoff) {
					e.disp.Hooks = nil // the claim that finds the ladder used up
				}
				if _, err := e.disp.Sweep(ctx); err != nil && !errors.Is(err, crash) {
					t.Fatal(err)
				}
			}
			j := e.job(t, key)
			if j.Status != tc.want || p.deliveries() != 0 || j.SentOn != nil || !strings.Contains(j.LastError, tc.wantErrSubstr) {
				t.Fatalf("after %d attempts: %s %q, %d sent; want %s naming %q, none sent", j.AttemptCount, j.Status, j.LastError, p.deliveries(), tc.want, tc.wantErrSubstr)
			}
			if j.AttemptCount <= len(scheduler.DefaultBackoff) {
				t.Fatalf("ended after %d attempts: the ladder (%d steps) was not used up", j.AttemptCount, len(scheduler.DefaultBackoff))
			}
		})
	}
}
