package apikey_test

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

func newService(t *testing.T) (*apikey.Service, *automation.ManualClock) {
	t.Helper()
	st := sqlitetest.Open(t)
	clock := automation.NewManualClock(time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC))
	return &apikey.Service{Store: st, Clock: clock}, clock
}

func TestCreateStoresOnlyTheHashAndAuthenticates(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newService(t)
	c, err := s.Create(ctx, apikey.CreateParams{Name: "pos-sydney", Roles: []httpapi.Role{"ingest"}, Units: "bu-syd, bu-hcm", Operator: "cli:ana"})
	if err != nil {
		t.Fatal(err)
	}
	if p, ok := apikey.PrefixOf(c.Secret); !ok || p != c.Prefix || !strings.HasPrefix(c.Secret, "ak_"+c.Prefix+"_") {
		t.Fatalf("key %q, prefix %q", c.Secret, c.Prefix)
	}
	// Nothing stored or listed holds the key or any part of its secret.
	secret := c.Secret[len("ak_"+c.Prefix+"_"):]
	ks, err := s.List(ctx, "", 10)
	if err != nil || len(ks) != 1 {
		t.Fatalf("list: %v %v", ks, err)
	}
	var hash, stored string
	if err := s.Store.(interface{ DB() *sql.DB }).DB().QueryRow(`SELECT SecretHash, Prefix || Name || Roles || BusinessUnits || CreatedBy FROM ApiKey`).Scan(&hash, &stored); err != nil {
		t.Fatal(err)
	}
	if len(hash) != 64 || strings.Contains(hash+stored, secret) || strings.Contains(hash+stored, secret[:8]) {
		t.Fatalf("stored %q %q holds the secret", hash, stored)
	}
	p, err := s.Authenticate(ctx, c.Secret)
	if err != nil || p.Name != "key:pos-sydney" || len(p.Roles) != 1 || p.Roles[0] != httpapi.RoleIngest ||
		p.Scope.String() != "bu-hcm,bu-syd" || p.KeyPrefix != c.Prefix {
		t.Fatalf("principal %+v %v", p, err)
	}
	for _, bad := range []string{"", "ak_", c.Secret + "x", c.Secret[:len(c.Secret)-1] + flip(c.Secret[len(c.Secret)-1]),
		"ak_" + c.Prefix + "_" + strings.Repeat("A", 43), strings.ToUpper(c.Secret[:15]) + c.Secret[15:], secret} {
		if _, err := s.Authenticate(ctx, bad); !errors.Is(err, httpapi.ErrUnknownCredential) {
			t.Errorf("credential %q: %v, want ErrUnknownCredential", bad, err)
		}
	}
}

func flip(b byte) string {
	if b == 'A' {
		return "B"
	}
	return "A"
}

func TestCreateRefusesBadInput(t *testing.T) {
	t.Parallel()
	s, _ := newService(t)
	for _, c := range []struct {
		p     apikey.CreateParams
		field string
	}{
		{apikey.CreateParams{Name: "", Roles: []httpapi.Role{"read"}, Units: "bu-a"}, "name"},
		{apikey.CreateParams{Name: "x", Roles: []httpapi.Role{"root"}, Units: "bu-a"}, "roles"},
		{apikey.CreateParams{Name: "x", Units: "bu-a"}, "roles"},
		{apikey.CreateParams{Name: "x", Roles: []httpapi.Role{"read"}, Units: ""}, "businessUnits"},
		{apikey.CreateParams{Name: "x", Roles: []httpapi.Role{"read"}, Units: "bu-a,*"}, "businessUnits"},
	} {
		_, err := s.Create(context.Background(), c.p)
		if automation.CodeOf(err) != automation.CodeInvalidInput || !strings.Contains(err.Error(), c.field) {
			t.Errorf("%+v: %v, want an invalid %s", c.p, err, c.field)
		}
	}
	if ks, _ := s.List(context.Background(), "", 10); len(ks) != 0 {
		t.Fatalf("refused keys were stored: %+v", ks)
	}
}

// A revoked key is refused on its next use; a rotated key works beside its successor until
// the overlap ends, then only the successor does.
func TestRevokeAndRotate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, clock := newService(t)
	a, _ := s.Create(ctx, apikey.CreateParams{Name: "a", Roles: []httpapi.Role{"read"}, Units: "bu-a"})
	if _, err := s.Revoke(ctx, a.Prefix, "key:admin"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Authenticate(ctx, a.Secret); !errors.Is(err, httpapi.ErrUnknownCredential) {
		t.Fatalf("revoked key: %v", err)
	}
	if _, err := s.Rotate(ctx, a.Prefix, 0, "x"); automation.CodeOf(err) != automation.CodeConflict {
		t.Fatalf("rotate a revoked key: %v", err)
	}
	if _, err := s.Revoke(ctx, "ffffffffffff", "x"); err == nil {
		t.Fatal("revoked an unknown key")
	}
	b, _ := s.Create(ctx, apikey.CreateParams{Name: "b", Roles: []httpapi.Role{"operate", "read"}, Units: "*"})
	b2, err := s.Rotate(ctx, b.Prefix, time.Hour, "key:admin")
	if err != nil {
		t.Fatal(err)
	}
	if b2.Name != "b" || b2.BusinessUnits != "*" || len(b2.Roles) != 2 || b2.Secret == b.Secret {
		t.Fatalf("successor %+v", b2)
	}
	for _, k := range []string{b.Secret, b2.Secret} {
		if _, err := s.Authenticate(ctx, k); err != nil {
			t.Fatalf("during the overlap: %v", err)
		}
	}
	clock.Advance(time.Hour)
	if _, err := s.Authenticate(ctx, b.Secret); !errors.Is(err, httpapi.ErrUnknownCredential) {
		t.Fatalf("after the overlap, the old key: %v", err)
	}
	if p, err := s.Authenticate(ctx, b2.Secret); err != nil || !p.Scope.All() {
		t.Fatalf("after the overlap, the new key: %+v %v", p, err)
	}
	if _, err := s.Rotate(ctx, b2.Prefix, apikey.MaxOverlap+time.Second, "x"); automation.CodeOf(err) != automation.CodeInvalidInput {
		t.Fatalf("overlap too long: %v", err)
	}
}

// Wrong secrets for a known prefix are slowed (429 with Retry-After after a few), with a
// growing delay; the right secret keeps working throughout, so knowing a prefix locks
// nobody out.
func TestWrongSecretsPerPrefixAreThrottled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, clock := newService(t)
	s.Throttle = httpapi.NewThrottle(clock)
	c, _ := s.Create(ctx, apikey.CreateParams{Name: "a", Roles: []httpapi.Role{"ingest"}, Units: "bu-a"})
	wrong := "ak_" + c.Prefix + "_" + strings.Repeat("A", 43)
	throttled := 0
	for range 100 {
		_, err := s.Authenticate(ctx, wrong)
		switch {
		case errors.Is(err, httpapi.ErrUnknownCredential):
		case automation.CodeOf(err) == automation.CodeTooManyRequests:
			if d, ok := automation.RetryAfterOf(err); !ok || d <= 0 {
				t.Fatalf("429 without a wait: %v", err)
			}
			throttled++
		default:
			t.Fatalf("wrong secret: %v", err)
		}
		if _, err := s.Authenticate(ctx, c.Secret); err != nil {
			t.Fatalf("the right secret during the storm: %v", err)
		}
		clock.Advance(10 * time.Millisecond)
	}
	if throttled < 90 {
		t.Fatalf("only %d of 100 wrong secrets were throttled", throttled)
	}
}

// A key is rotated once. Rotating it again during its overlap (an admin's double click, a
// retried request, two scripts at once) used to mint another live successor each time, none
// of them named by the old key's replacedBy, so a leak-driven rotation could leave a key
// nobody tracks. The second rotation is a conflict that mints nothing, and of concurrent
// rotations exactly one succeeds, leaving the old key and one successor live.
func TestRotateOnceLeavesOneSuccessor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, _ := newService(t)
	live := func(name string) []string {
		ks, err := s.List(ctx, "", 100)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, k := range ks {
			if k.Name == name && k.RevokedOn == nil {
				out = append(out, k.Prefix)
			}
		}
		return out
	}
	a, _ := s.Create(ctx, apikey.CreateParams{Name: "pos", Roles: []httpapi.Role{"ingest"}, Units: "bu-a"})
	a2, err := s.Rotate(ctx, a.Prefix, time.Hour, "key:admin")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Rotate(ctx, a.Prefix, time.Hour, "key:admin"); automation.CodeOf(err) != automation.CodeConflict {
		t.Fatalf("rotating a key again during its overlap: %v, want a conflict", err)
	}
	if got := live("pos"); len(got) != 2 {
		t.Fatalf("live keys named pos after a second rotation: %v, want the old key and %s", got, a2.Prefix)
	}
	if k, _ := s.Get(ctx, a.Prefix); k.ReplacedBy != a2.Prefix {
		t.Fatalf("the old key's replacedBy %q, want %s", k.ReplacedBy, a2.Prefix)
	}

	b, _ := s.Create(ctx, apikey.CreateParams{Name: "ops", Roles: []httpapi.Role{"operate"}, Units: "bu-a"})
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() { _, err := s.Rotate(ctx, b.Prefix, time.Hour, "key:admin"); errs <- err }()
	}
	ok := 0
	for range n {
		switch err := <-errs; {
		case err == nil:
			ok++
		case automation.CodeOf(err) != automation.CodeConflict:
			t.Errorf("a concurrent rotation: %v", err)
		}
	}
	got := live("ops")
	if ok != 1 || len(got) != 2 {
		t.Fatalf("%d of %d concurrent rotations succeeded, live keys %v: want one successor and the old key", ok, n, got)
	}
	if k, _ := s.Get(ctx, b.Prefix); k.ReplacedBy == "" || !strings.Contains(strings.Join(got, ","), k.ReplacedBy) {
		t.Fatalf("the old key's replacedBy %q is not the live successor (%v)", k.ReplacedBy, got)
	}
}
