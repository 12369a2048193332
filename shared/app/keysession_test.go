package app_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/session"
)

// Issue 37: "revoking a key ... ends their sessions at once". An API key of a role that
// reads signs in to the console (the token form); its session is bound to the key and
// re-checked on every request: it sees the key's units and roles, and the request after the
// key is revoked, or after its rotation's overlap ends, finds no session (the sign-in form,
// 401; a form post does nothing) and the row is ended with reason "revoked". An ingest key
// starts no session (403).
func TestConsoleSessionOfAnAPIKeyEndsWhenTheKeyIsRevokedOrRotatedOut(t *testing.T) {
	e := newConsoleEnv(t)
	ctx := context.Background()
	e.createUnits(t, "bu-a", "bu-b")
	mk := func(name string, role httpapi.Role) apikey.Created {
		c, err := e.rt.Keys.Create(ctx, apikey.CreateParams{Name: name, Roles: []httpapi.Role{role}, Units: "bu-a", Operator: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	reader, ingest, rotating := mk("support-desk", httpapi.RoleRead), mk("pos", httpapi.RoleIngest), mk("ops-tool", httpapi.RoleOperate)

	// An ingest key does not open the console: 403, no session.
	if cookie, rec := e.signIn(t, "198.51.100.1", ingest.Secret); cookie != "" || rec.Code != 403 {
		t.Fatalf("ingest key sign-in: %d cookie %q %s", rec.Code, cookie, rec.Body)
	}

	cookie, rec := e.signIn(t, "198.51.100.1", reader.Secret)
	if cookie == "" || rec.Code != 303 {
		t.Fatalf("read key sign-in: %d %s", rec.Code, rec.Body)
	}
	row, err := e.rt.Store.ConsoleSessionGet(ctx, session.Hash(cookie))
	if err != nil || row.KeyPrefix != reader.Prefix || row.Principal != "key:support-desk" {
		t.Fatalf("the session's row: %+v %v", row, err)
	}
	// The key's units and roles: bu-a's rows, bu-b as if unknown, no operate action.
	if rec := e.send("GET", "/api/console/rows?businessUnitId=bu-a", "198.51.100.1", cookie, nil); rec.Code != 200 || !strings.Contains(rec.Body.String(), "key:support-desk") {
		t.Fatalf("the key's rows page: %d %s", rec.Code, rec.Body)
	}
	if rec := e.send("GET", "/api/console/rows?businessUnitId=bu-b", "198.51.100.1", cookie, nil); rec.Code != 404 {
		t.Fatalf("bu-b with a bu-a key: %d, want 404", rec.Code)
	}
	page := e.send("GET", "/api/console/releases", "198.51.100.1", cookie, nil).Body.String()
	csrf := csrfRE.FindStringSubmatch(page)
	if csrf == nil {
		t.Fatalf("no CSRF token: %s", page)
	}
	if rec := e.send("POST", "/api/console/releases", "198.51.100.1", cookie, url.Values{"csrf": {csrf[1]}, "businessUnitId": {"bu-a"}}); rec.Code != 403 {
		t.Fatalf("a read key's release: %d, want 403", rec.Code)
	}

	// Revoked: the very next request has no session, and the row says why.
	if _, err := e.rt.Keys.Revoke(ctx, reader.Prefix, "test"); err != nil {
		t.Fatal(err)
	}
	if rec := e.send("GET", "/api/console/rows", "198.51.100.1", cookie, nil); rec.Code != 401 {
		t.Fatalf("after the key's revocation: %d, want 401 (the sign-in form)", rec.Code)
	}
	if row, _ := e.rt.Store.ConsoleSessionGet(ctx, session.Hash(cookie)); row.EndedOn == nil || row.EndReason != session.ReasonRevoked {
		t.Fatalf("the row after the revocation: %+v", row)
	}

	// Rotated: the old key's session lives through the overlap and ends with it.
	cookie, rec = e.signIn(t, "198.51.100.2", rotating.Secret)
	if cookie == "" {
		t.Fatalf("operate key sign-in: %d %s", rec.Code, rec.Body)
	}
	if _, err := e.rt.Keys.Rotate(ctx, rotating.Prefix, time.Hour, "test"); err != nil {
		t.Fatal(err)
	}
	for range 2 { // a request every 29 minutes keeps the session from its idle timeout
		e.clock.Advance(29 * time.Minute)
		if rec := e.send("GET", "/api/console/rows", "198.51.100.2", cookie, nil); rec.Code != 200 {
			t.Fatalf("during the rotation's overlap: %d", rec.Code)
		}
	}
	e.clock.Advance(time.Minute)
	if rec := e.send("GET", "/api/console/rows", "198.51.100.2", cookie, nil); rec.Code != 200 {
		t.Fatalf("a minute before the overlap's end: %d", rec.Code)
	}
	e.clock.Advance(time.Minute)
	if rec := e.send("GET", "/api/console/rows", "198.51.100.2", cookie, nil); rec.Code != 401 {
		t.Fatalf("after the rotation's overlap: %d, want 401", rec.Code)
	}
	if row, _ := e.rt.Store.ConsoleSessionGet(ctx, session.Hash(cookie)); row.EndedOn == nil || row.EndReason != session.ReasonRevoked {
		t.Fatalf("the row after the overlap: %+v", row)
	}
}
