package quota_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/quota"
)

// ChargeIngest counts events per API key, all or none: a batch that fits passes, the next
// that does not is refused whole with 429 and a Retry-After of the time until it fits; a
// batch larger than the burst is refused (422); another key and the bootstrap token are not
// affected; the one-event routes (IngestPatterns) charge one each.
func TestChargeIngestCountsEventsPerKey(t *testing.T) {
	clock := automation.NewManualClock(time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC))
	q := &quota.Quotas{Clock: clock, IngestPerSecond: 100, IngestBurst: 500, IngestPatterns: []string{"/api/local/domain-events"}}
	as := func(prefix string) context.Context {
		c := httpapi.Caller{Principal: httpapi.Principal{Name: "key:" + prefix, KeyPrefix: prefix}}
		r := httptest.NewRequest("POST", "/", nil)
		r = r.WithContext(httpapi.WithCaller(r.Context(), c))
		return r.Context()
	}
	a, b := as("aaaaaaaaaaaa"), as("bbbbbbbbbbbb")
	if err := q.ChargeIngest(a, 500); err != nil {
		t.Fatalf("a full batch on an idle key: %v", err)
	}
	err := q.ChargeIngest(a, 200)
	if automation.CodeOf(err) != automation.CodeTooManyRequests {
		t.Fatalf("200 more at once: %v, want 429", err)
	}
	if wait, ok := automation.RetryAfterOf(err); !ok || wait != 2*time.Second {
		t.Fatalf("Retry-After %v %v, want 2s (200 events at 100 a second)", wait, ok)
	}
	if err := q.ChargeIngest(b, 500); err != nil {
		t.Fatalf("another key: %v", err)
	}
	if err := q.ChargeIngest(context.Background(), 100000); err != nil {
		t.Fatalf("no key (the bootstrap token): %v", err)
	}
	if err := q.ChargeIngest(a, 501); automation.CodeOf(err) != automation.CodeInvalidInput {
		t.Fatalf("a batch over the burst: %v, want 422", err)
	}
	clock.Advance(2 * time.Second)
	if err := q.ChargeIngest(a, 200); err != nil {
		t.Fatalf("after the refill: %v", err)
	}
	r := httptest.NewRequest("POST", "/api/local/domain-events", nil)
	r.Pattern = "/api/local/domain-events"
	if _, err := q.Admit(r, httpapi.CallerFrom(a)); automation.CodeOf(err) != automation.CodeTooManyRequests {
		t.Fatalf("a one-event route on a spent key: %v, want 429", err)
	}
}

// The ingest quota is per tenant credential, not only per API key: an application signed in
// with OpenID Connect (client credentials, a managed identity with the ingest app role) is a
// tenant too, and was not counted at all (its principal has no KeyPrefix), so a domain app
// could dodge its quota by posting with a token instead of a key. Each OIDC principal counts
// on its own; the bootstrap token (the operator's) stays unlimited.
func TestChargeIngestCountsOIDCPrincipals(t *testing.T) {
	clock := automation.NewManualClock(time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC))
	q := &quota.Quotas{Clock: clock, IngestPerSecond: 100, IngestBurst: 500}
	as := func(p httpapi.Principal) context.Context {
		return httpapi.WithCaller(context.Background(), httpapi.Caller{Principal: p})
	}
	app := as(httpapi.Principal{Name: "oidc:pos-sydney-app", Roles: []httpapi.Role{httpapi.RoleIngest}})
	other := as(httpapi.Principal{Name: "oidc:pos-hcm-app", Roles: []httpapi.Role{httpapi.RoleIngest}})
	boot := as(httpapi.Principal{Name: httpapi.BootstrapName, Roles: []httpapi.Role{httpapi.RoleAdmin}})
	if err := q.ChargeIngest(app, 500); err != nil {
		t.Fatalf("a full batch of an idle OIDC app: %v", err)
	}
	err := q.ChargeIngest(app, 100)
	if automation.CodeOf(err) != automation.CodeTooManyRequests {
		t.Fatalf("100 more at once from the OIDC app: %v, want 429", err)
	}
	if wait, ok := automation.RetryAfterOf(err); !ok || wait != time.Second {
		t.Fatalf("Retry-After %v %v, want 1s (100 events at 100 a second)", wait, ok)
	}
	if err := q.ChargeIngest(other, 500); err != nil {
		t.Fatalf("another OIDC app: %v", err)
	}
	if err := q.ChargeIngest(boot, 100000); err != nil {
		t.Fatalf("the bootstrap token: %v", err)
	}
}
