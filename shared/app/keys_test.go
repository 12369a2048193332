package app_test

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
)

// The admin API of keys (/api/keys), driven by the bootstrap token of a platform-wide
// deployment: a created key is answered once and then authenticates with its role and
// units (a scope header narrows it, never widens it); the list shows no secret; a rotation
// leaves both keys working for the overlap; a revocation ends the key on its next request;
// an Idempotency-Key (which would store the key in a replayable response) is refused; a key
// that is not an admin's cannot manage keys.
func TestKeysAdminAPI(t *testing.T) {
	clock := automation.NewManualClock(time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC))
	rt := apptest.Open(t, map[string]string{"AUTOMATION_API_TOKEN": "boot"}, time.Time{}, app.Options{Clock: clock})
	h := rt.ListenerHandler(false)
	call := func(method, path, auth, body string, hdr ...string) *httptest.ResponseRecorder {
		return serveJSON(h, method, path, body, append([]string{"Authorization", "Bearer " + auth}, hdr...)...)
	}
	seedUnits(t, h, "boot", "bu-a", "bu-b")
	rec := call("POST", "/api/keys", "boot", `{"name":"support-bu-a","roles":["read"],"businessUnits":"bu-a"}`, httpapi.HeaderIdempotencyKey, "k1")
	if rec.Code != 400 {
		t.Fatalf("with an Idempotency-Key: %d %s", rec.Code, rec.Body)
	}
	rec = call("POST", "/api/keys", "boot", `{"name":"support-bu-a","roles":["read"],"businessUnits":"bu-a"}`)
	var created struct {
		Key, Prefix, CreatedBy string
	}
	if rec.Code != 201 || json.Unmarshal(rec.Body.Bytes(), &created) != nil || created.Key == "" || created.CreatedBy != httpapi.BootstrapName {
		t.Fatalf("create: %d %s", rec.Code, rec.Body)
	}
	if rec = call("GET", "/api/business-units", created.Key, ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), "bu-a") || strings.Contains(rec.Body.String(), "bu-b") {
		t.Fatalf("the key's read: %d %s", rec.Code, rec.Body)
	}
	if rec = call("GET", "/api/business-units/bu-b", created.Key, "", httpapi.HeaderBusinessUnits, "*"); rec.Code != 404 {
		t.Fatalf("a scope header widened the key: %d %s", rec.Code, rec.Body)
	}
	if rec = call("PUT", "/api/business-units/bu-a", created.Key, `{"name":"X","timeZone":"UTC"}`, "If-Match", `"1"`); rec.Code != 403 {
		t.Fatalf("a read key wrote: %d %s", rec.Code, rec.Body)
	}
	if rec = call("GET", "/api/keys", created.Key, ""); rec.Code != 403 {
		t.Fatalf("a read key listed keys: %d %s", rec.Code, rec.Body)
	}
	rec = call("GET", "/api/keys", "boot", "")
	if rec.Code != 200 || !strings.Contains(rec.Body.String(), created.Prefix) || strings.Contains(rec.Body.String(), created.Key[16:]) {
		t.Fatalf("list: %d %s", rec.Code, rec.Body)
	}
	rec = call("POST", "/api/keys/"+created.Prefix+"/rotate", "boot", `{"overlapSeconds":60}`)
	var next struct{ Key, Prefix string }
	if rec.Code != 201 || json.Unmarshal(rec.Body.Bytes(), &next) != nil || next.Key == "" {
		t.Fatalf("rotate: %d %s", rec.Code, rec.Body)
	}
	for _, k := range []string{created.Key, next.Key} {
		if rec = call("GET", "/api/business-units/bu-a", k, ""); rec.Code != 200 {
			t.Fatalf("during the overlap: %d %s", rec.Code, rec.Body)
		}
	}
	clock.Advance(time.Minute)
	if rec = call("GET", "/api/business-units/bu-a", created.Key, ""); rec.Code != 401 {
		t.Fatalf("after the overlap, the old key: %d %s", rec.Code, rec.Body)
	}
	if rec = call("POST", "/api/keys/"+next.Prefix+"/revoke", "boot", ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), `"revokedBy":"bootstrap"`) {
		t.Fatalf("revoke: %d %s", rec.Code, rec.Body)
	}
	if rec = call("GET", "/api/business-units/bu-a", next.Key, ""); rec.Code != 401 {
		t.Fatalf("a revoked key: %d %s", rec.Code, rec.Body)
	}
	if rec = call("POST", "/api/keys", "boot", `{"name":"x","roles":["root"],"businessUnits":"bu-a,*"}`); rec.Code != 422 ||
		!strings.Contains(rec.Body.String(), "roles") || !strings.Contains(rec.Body.String(), "businessUnits") {
		t.Fatalf("bad key: %d %s", rec.Code, rec.Body)
	}
}
