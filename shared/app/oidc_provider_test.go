package app_test

import (
	"context"
	"net/http/httptest"
	"os"
	"testing"
	"time"

	"golang.org/x/oauth2/clientcredentials"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
)

// API calls with client-credentials tokens of a real OpenID provider (oidc-provider from
// npm, started on 127.0.0.1 by scripts/oidc.sh; `make test` starts it): the admin client's
// token creates units, the reader's reads its unit only, cannot write (403) and cannot see
// another unit (404); a token with a broken signature is 401.
func TestOIDCProviderClientCredentials(t *testing.T) {
	issuer := os.Getenv("OIDC_PROVIDER_ISSUER")
	if issuer == "" {
		t.Skip("needs OIDC_PROVIDER_ISSUER: export \"$(scripts/oidc.sh start)\", or run make test")
	}
	// The tokens carry real times: the runtime reads the system clock.
	rt := apptest.Open(t, map[string]string{"AUTOMATION_API_TOKEN": "boot",
		"AUTOMATION_OIDC_ISSUER": issuer, "AUTOMATION_OIDC_AUDIENCE": "api://automation"}, time.Time{}, app.Options{Clock: automation.SystemClock{}})
	h := rt.ListenerHandler(false)
	token := func(id, secret string) string {
		t.Helper()
		c := clientcredentials.Config{ClientID: id, ClientSecret: secret, TokenURL: issuer + "/token", Scopes: []string{"api"},
			EndpointParams: map[string][]string{"resource": {"api://automation"}}}
		tok, err := c.Token(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return tok.AccessToken
	}
	call := func(method, path, tok, body string, hdr ...string) *httptest.ResponseRecorder {
		return serveJSON(h, method, path, body, append([]string{"Authorization", "Bearer " + tok, "Content-Type", "application/json"}, hdr...)...)
	}
	admin, reader := token("automation-admin", "admin-secret"), token("automation-reader", "reader-secret")
	seedUnits(t, h, admin, "bu-a", "bu-b") // the admin creates them
	if rec := call("GET", "/api/business-units/bu-a", reader, ""); rec.Code != 200 {
		t.Fatalf("reader reads bu-a: %d %s", rec.Code, rec.Body)
	}
	if rec := call("GET", "/api/business-units/bu-b", reader, ""); rec.Code != 404 {
		t.Fatalf("reader reads bu-b: %d %s", rec.Code, rec.Body)
	}
	if rec := call("PUT", "/api/business-units/bu-a", reader, `{"name":"X","timeZone":"UTC"}`, "If-Match", `"1"`); rec.Code != 403 {
		t.Fatalf("reader writes: %d %s", rec.Code, rec.Body)
	}
	broken := reader[:len(reader)-4] + "AAAA"
	if broken == reader {
		broken = reader[:len(reader)-4] + "BBBB"
	}
	if rec := call("GET", "/api/business-units/bu-a", broken, ""); rec.Code != 401 {
		t.Fatalf("a broken signature: %d %s", rec.Code, rec.Body)
	}
}
