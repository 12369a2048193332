package delivery_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/preference"
	"github.com/automation-platform/automation/shared/store"
)

func gateEnv(t *testing.T) (*env, *provider, *preference.Service) {
	t.Helper()
	return gateEnvTraits(t, delivery.Traits{})
}

// quietEnv is gateEnv whose unit bu-1 keeps quiet hours from 21:00 to 08:00 (Sydney).
func quietEnv(t *testing.T) (*env, *provider, *preference.Service) {
	t.Helper()
	e, p, svc := gateEnv(t)
	if _, err := svc.SetUnitQuietHours(context.Background(), "bu-1", "jane", preference.QuietHoursInput{Start: "21:00", End: "08:00"}); err != nil {
		t.Fatal(err)
	}
	return e, p, svc
}

// gateEnvTraits is gateEnv whose email channel has traits.
func gateEnvTraits(t *testing.T, traits delivery.Traits) (*env, *provider, *preference.Service) {
	t.Helper()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"email": &testChannel{p: p, traits: traits}})
	if err := e.st.BusinessUnitUpsert(context.Background(), store.BusinessUnit{ID: "bu-1", Name: "Unit", TimeZoneID: "Australia/Sydney"}); err != nil {
		t.Fatal(err)
	}
	svc := &preference.Service{Store: e.st, Clock: e.clock, UnitCacheTTL: -1}
	e.disp.Gate = svc
	return e, p, svc
}

// firstClaim claims the delivery key as a dispatcher would and lets the process die before
// the job's turn (no gate, no send); it returns the claim's instant and the claimed job.
func (e *env) firstClaim(t *testing.T, key string) (time.Time, store.NotificationJob) {
	t.Helper()
	claimedAt := e.clock.Now()
	c, err := e.st.NotificationClaim(context.Background(), store.NotificationClaimParams{DeliveryKey: key, Now: claimedAt, Lease: time.Minute})
	if err != nil || !c.Claimed {
		t.Fatalf("claim: %+v %v", c, err)
	}
	return claimedAt, c.Job
}

// A delivery to an opted-out recipient ends Skipped with the reason, never sent, never
// silently; a transactional one to the same recipient is sent.
func TestOptedOutDeliveryEndsSkippedWithTheReason(t *testing.T) {
	t.Parallel()
	e, p, svc := gateEnv(t)
	ctx := context.Background()
	if err := svc.OptOut(ctx, "bu-1", "linh@example.test", "email", "", preference.SourceListUnsubscribe, "recipient"); err != nil {
		t.Fatal(err)
	}
	marketing := e.queue(t, map[string]any{"points": 5}, "email", "Linh@example.test")[0]
	service := e.queue(t, map[string]any{"category": "service"}, "email", "linh@example.test")[0]
	e.pump(t)
	j := e.job(t, marketing)
	if j.Status != store.NotificationSkipped || !strings.Contains(j.LastError, "opted out of marketing email messages (list-unsubscribe") || j.SentOn != nil {
		t.Fatalf("opted-out delivery = %s %q", j.Status, j.LastError)
	}
	if s := e.job(t, service); s.Status != store.NotificationSent {
		t.Fatalf("transactional delivery = %s %q", s.Status, s.LastError)
	}
	if p.deliveries() != 1 || p.got[0].DeliveryKey != service {
		t.Fatalf("provider got %d messages, want only the transactional one", p.deliveries())
	}
	var skipped int
	for _, o := range e.outcomes {
		if o.Status == store.NotificationSkipped {
			skipped++
		}
	}
	if skipped != 1 {
		t.Fatalf("%d Skipped outcomes reported, want 1", skipped)
	}
	// Redelivered: stays Skipped, nothing sent.
	if err := e.disp.Handle(ctx, dispatchMsg(marketing)); err != nil || p.deliveries() != 1 {
		t.Fatalf("redelivery: %v, %d sent", err, p.deliveries())
	}
}

// A marketing delivery inside quiet hours waits until they end (without using up its
// retry ladder) and is sent then; a transactional one passes.
func TestQuietHoursHoldMarketingUntilTheWindowEnds(t *testing.T) {
	t.Parallel()
	e, p, _ := quietEnv(t)
	// storetest.T0 is 2026-10-01T00:00Z = 10:00 in Sydney: move to 23:00 local (13:00Z).
	e.clock.Advance(13 * time.Hour)
	marketing := e.queue(t, map[string]any{}, "email", "linh@example.test")[0]
	service := e.queue(t, map[string]any{"category": "security"}, "email", "tom@example.test")[0]
	e.pump(t)
	j := e.job(t, marketing)
	until := time.Date(2026, 10, 1, 22, 0, 0, 0, time.UTC) // 08:00 AEST on 2 October
	if j.Status != store.NotificationQueued || j.NextAttemptOn == nil || !j.NextAttemptOn.Equal(until) || j.RetryCount != 0 ||
		j.LastError != "waiting for quiet hours to end at 2026-10-02 08:00 (Australia/Sydney)" {
		t.Fatalf("inside quiet hours = %s next %v retry %d %q", j.Status, j.NextAttemptOn, j.RetryCount, j.LastError)
	}
	if p.deliveries() != 1 || p.got[0].DeliveryKey != service {
		t.Fatalf("provider got %d, want only the transactional delivery", p.deliveries())
	}
	if r := e.sweep(t, 8*time.Hour+59*time.Minute); r.Claimed != 0 || p.deliveries() != 1 {
		t.Fatalf("a minute before the end: %+v, %d sent", r, p.deliveries())
	}
	if r := e.sweep(t, time.Minute); r.Sent != 1 || p.deliveries() != 2 {
		t.Fatalf("at the end: %+v, %d sent", r, p.deliveries())
	}
	if j := e.job(t, marketing); j.Status != store.NotificationSent || !j.SentOn.Equal(until) {
		t.Fatalf("after the window = %s at %v", j.Status, j.SentOn)
	}
}

// An in-doubt claim on an idempotent channel (no lookup: the resend carries the same
// idempotency key) whose earlier claim ended before its gate (the process died on another
// send of its batch, sim seed 9405) asks the gate: an opt-out recorded at or before the
// delivery's first claim ends it Skipped, never sent (no attempt can have passed the gate:
// each gate read follows its claim); an opt-out recorded after the first claim leaves the
// resend as it was (the earlier attempt may have passed the gate and arrived). Issue 38:
// an opt-out between the creation and the first claim was resent (the rule compared with
// CreatedOn).
func TestInDoubtIdempotentResendHonoursAnEarlierOptOut(t *testing.T) {
	t.Parallel()
	const (
		beforeCreation = iota
		beforeFirstClaim
		atFirstClaim
		afterFirstClaim
	)
	for _, tc := range []struct {
		name string
		when int
		want store.NotificationStatus
		sent int
	}{
		{name: "opted out before the delivery", when: beforeCreation, want: store.NotificationSkipped},
		{name: "opted out after the delivery was created, before its first claim", when: beforeFirstClaim, want: store.NotificationSkipped},
		{name: "opted out at the first claim's instant", when: atFirstClaim, want: store.NotificationSkipped},
		{name: "opted out after the first claim", when: afterFirstClaim, want: store.NotificationSent, sent: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, p, svc := gateEnvTraits(t, delivery.Traits{Idempotent: true})
			ctx := context.Background()
			optOut := func() {
				if err := svc.OptOut(ctx, "bu-1", "linh@example.test", "email", "", preference.SourceSMSStop, "linh@example.test"); err != nil {
					t.Fatal(err)
				}
			}
			if tc.when == beforeCreation {
				optOut()
			}
			e.clock.Advance(time.Minute)
			key := e.queue(t, map[string]any{"points": 5}, "email", "linh@example.test")[0]
			if tc.when == beforeFirstClaim {
				e.clock.Advance(time.Second)
				optOut()
				e.clock.Advance(time.Second)
			}
			if tc.when == atFirstClaim {
				optOut()
			}
			// Claimed, and the process died before this job's turn: no gate, no send.
			claimedAt, first := e.firstClaim(t, key)
			if first.FirstClaimedOn == nil || !first.FirstClaimedOn.Equal(claimedAt) {
				t.Fatalf("first claim kept as %v, want %v", first.FirstClaimedOn, claimedAt)
			}
			if tc.when == afterFirstClaim {
				e.clock.Advance(time.Second)
				optOut()
			}
			if r := e.sweep(t, 2*time.Minute); r.Claimed != 1 {
				t.Fatalf("sweep after the lease: %+v", r)
			}
			j := e.job(t, key)
			if j.Status != tc.want || p.deliveries() != tc.sent {
				t.Fatalf("in-doubt resend = %s %q, %d sent; want %s, %d sent", j.Status, j.LastError, p.deliveries(), tc.want, tc.sent)
			}
			if tc.want == store.NotificationSkipped && (!strings.Contains(j.LastError, "opted out of marketing email messages (sms-stop") || j.SentOn != nil) {
				t.Fatalf("skipped with %q, sent on %v", j.LastError, j.SentOn)
			}
			if j.FirstClaimedOn == nil || !j.FirstClaimedOn.Equal(claimedAt) {
				t.Fatalf("the takeover moved the first claim: %v, want %v", j.FirstClaimedOn, claimedAt)
			}
		})
	}
}

// failingGate is a Gate whose decision cannot be read (its store is unavailable).
type failingGate struct{}

func (failingGate) Check(context.Context, store.NotificationJob, time.Time) (delivery.GateDecision, error) {
	return delivery.GateDecision{}, errors.New("preference store unavailable")
}

// An in-doubt claim on a channel that can neither deduplicate nor look up (email over SMTP,
// FCM push) whose earlier claim ended before its gate: an opt-out recorded at or before the
// delivery's first claim proves no attempt sent (every gate saw it), so it ends Skipped,
// never sent, as on an idempotent channel. A later opt-out, or a gate that cannot be read,
// leaves it UNKNOWN for a person: never resent (not exactly-once), never retried (the next
// claim would be clean and send). Issue 38: it went UNKNOWN even when the rule proved
// nothing was sent.
func TestInDoubtClaimWithoutLookupHonoursAnOptOutBeforeItsFirstClaim(t *testing.T) {
	t.Parallel()
	const (
		beforeFirstClaim = iota
		atFirstClaim
		afterFirstClaim
		gateUnreadable
	)
	for _, tc := range []struct {
		name string
		when int
		want store.NotificationStatus
	}{
		{name: "opted out after the delivery was created, before its first claim", when: beforeFirstClaim, want: store.NotificationSkipped},
		{name: "opted out at the first claim's instant", when: atFirstClaim, want: store.NotificationSkipped},
		{name: "opted out after the first claim", when: afterFirstClaim, want: store.NotificationUnknown},
		{name: "opted out before the first claim, preferences unreadable", when: gateUnreadable, want: store.NotificationUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e, p, svc := gateEnvTraits(t, delivery.Traits{})
			ctx := context.Background()
			optOut := func() {
				if err := svc.OptOut(ctx, "bu-1", "linh@example.test", "email", "", preference.SourceListUnsubscribe, "linh@example.test"); err != nil {
					t.Fatal(err)
				}
			}
			e.clock.Advance(time.Minute)
			key := e.queue(t, map[string]any{"points": 5}, "email", "linh@example.test")[0]
			if tc.when == beforeFirstClaim || tc.when == gateUnreadable {
				e.clock.Advance(time.Second)
				optOut()
				e.clock.Advance(time.Second)
			}
			if tc.when == atFirstClaim {
				optOut()
			}
			// Claimed, and the process died before this job's turn: no gate, no send.
			e.firstClaim(t, key)
			if tc.when == afterFirstClaim {
				e.clock.Advance(time.Second)
				optOut()
			}
			if tc.when == gateUnreadable {
				e.disp.Gate = failingGate{}
			}
			if r := e.sweep(t, 2*time.Minute); r.Claimed != 1 {
				t.Fatalf("sweep after the lease: %+v", r)
			}
			j := e.job(t, key)
			if j.Status != tc.want || p.deliveries() != 0 || j.SentOn != nil {
				t.Fatalf("in-doubt claim = %s %q, %d sent; want %s, none sent", j.Status, j.LastError, p.deliveries(), tc.want)
			}
			if tc.want == store.NotificationSkipped && !strings.Contains(j.LastError, "opted out of marketing email messages (list-unsubscribe") {
				t.Fatalf("skipped with %q, want the opt-out named", j.LastError)
			}
			if tc.want == store.NotificationUnknown && j.NextAttemptOn != nil {
				t.Fatalf("UNKNOWN due again at %v, want the manual-resolution queue", j.NextAttemptOn)
			}
			// Nothing moves afterwards: never sent.
			if r := e.sweep(t, 24*time.Hour); r.Claimed != 0 || p.deliveries() != 0 {
				t.Fatalf("a day later: %+v, %d sent", r, p.deliveries())
			}
		})
	}
}
