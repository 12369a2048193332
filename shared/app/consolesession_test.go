package app

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/oidcauth"
	"github.com/automation-platform/automation/shared/session"
	"github.com/automation-platform/automation/shared/store"
)

// The console session re-check, row by row: a person's kept claims under the mapping in
// force (their roles today; none left, or the OIDC sign-in switched off, ends the session
// with reason "roles"); a key's session follows its key (gone: "revoked"; an ingest-only key
// cannot hold one: "roles"); the bootstrap token's has nothing to re-check.
func TestConsoleSessionResolver(t *testing.T) {
	ctx := context.Background()
	clock := automation.NewManualClock(time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC))
	st, err := OpenStore(ctx, config.Config{DataDir: t.TempDir()}, false)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	keys := &apikey.Service{Store: st, Clock: clock}
	reader, _ := keys.Create(ctx, apikey.CreateParams{Name: "desk", Roles: []httpapi.Role{httpapi.RoleRead}, Units: "bu-a"})
	ingest, _ := keys.Create(ctx, apikey.CreateParams{Name: "pos", Roles: []httpapi.Role{httpapi.RoleIngest}, Units: "bu-a"})
	mapping := oidcauth.Mapping{Groups: map[string]oidcauth.GroupGrant{"g": {Roles: []httpapi.Role{httpapi.RoleOperate}, Units: "bu-a"}}}
	person := store.ConsoleSession{Principal: "oidc:jane", Claims: `{"groups":["g"]}`}
	ended := func(err error) string {
		var e *session.Ended
		if errors.As(err, &e) {
			return e.Reason
		}
		return ""
	}
	if p, err := consoleSessionResolver(keys, mapping, true)(ctx, person); err != nil || p == nil || !p.Has(httpapi.RoleOperate) || p.Name != "oidc:jane" {
		t.Fatalf("a person under the grant: %+v %v", p, err)
	}
	if _, err := consoleSessionResolver(keys, oidcauth.Mapping{}, true)(ctx, person); ended(err) != session.ReasonRoles {
		t.Fatalf("a person with no grant left: %v", err)
	}
	if _, err := consoleSessionResolver(keys, mapping, false)(ctx, person); ended(err) != session.ReasonRoles {
		t.Fatalf("a person once the OIDC sign-in is off: %v", err)
	}
	res := consoleSessionResolver(keys, mapping, true)
	if p, err := res(ctx, store.ConsoleSession{Principal: "key:desk", KeyPrefix: reader.Prefix}); err != nil || p == nil || p.Scope.String() != "bu-a" {
		t.Fatalf("a live key: %+v %v", p, err)
	}
	if _, err := res(ctx, store.ConsoleSession{Principal: "key:pos", KeyPrefix: ingest.Prefix}); ended(err) != session.ReasonRoles {
		t.Fatalf("an ingest key: %v", err)
	}
	if _, err := keys.Revoke(ctx, reader.Prefix, "t"); err != nil {
		t.Fatal(err)
	}
	if _, err := res(ctx, store.ConsoleSession{Principal: "key:desk", KeyPrefix: reader.Prefix}); ended(err) != session.ReasonRevoked {
		t.Fatalf("a revoked key: %v", err)
	}
	if p, err := res(ctx, store.ConsoleSession{Principal: "bootstrap"}); p != nil || err != nil {
		t.Fatalf("the bootstrap token's session: %+v %v", p, err)
	}
}
