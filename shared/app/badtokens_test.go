package app_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/oidcauth/oidctest"
)

// Issue 37's "Bad input" through the HTTP API: each bad bearer token (expired, not yet
// valid, wrong audience, wrong issuer, alg none, HS256 signed with the issuer's public key)
// on a writing route answers 401 and writes nothing, while the same token made right is
// accepted (201). The issuer is an Entra ID-shaped fixture on 127.0.0.1 (v2.0 issuer path,
// discovery and keys where Entra puts them), and its token's role comes from a group mapped
// by AUTOMATION_OIDC_GROUPS, as docs/security.md configures Entra ID.
func TestBadBearerTokensAre401AndWriteNothing(t *testing.T) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	const tenant = "72f988bf-86f1-41af-91ab-2d7cd011db47"
	const clientID = "6e2f5c4a-8d7b-4b1e-9c3a-0f1d2e3c4b5a"
	const group = "0b5a9f3e-1c2d-4e5f-8a9b-c0d1e2f3a4b5"
	var srv *httptest.Server
	mux := http.NewServeMux()
	mux.HandleFunc("/"+tenant+"/v2.0/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": srv.URL + "/" + tenant + "/v2.0", "jwks_uri": srv.URL + "/" + tenant + "/discovery/v2.0/keys",
			"authorization_endpoint": srv.URL + "/auth", "token_endpoint": srv.URL + "/token", "id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("/"+tenant+"/discovery/v2.0/keys", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Use: "sig"}}})
	})
	srv = httptest.NewServer(mux)
	defer srv.Close()
	issuer := srv.URL + "/" + tenant + "/v2.0"
	now := time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)
	env := map[string]string{"AUTOMATION_DATA_DIR": t.TempDir(), "AUTOMATION_API_TOKEN": "boot",
		"AUTOMATION_OIDC_ISSUER": issuer, "AUTOMATION_OIDC_AUDIENCE": clientID,
		"AUTOMATION_OIDC_GROUPS": `{"` + group + `": {"roles": ["admin"], "units": "*"}}`}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	rt, err := app.Open(context.Background(), cfg, app.Options{Clock: automation.NewManualClock(now), LogOutput: io.Discard, Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	h := rt.ListenerHandler(false)

	claims := func(over map[string]any) map[string]any {
		c := map[string]any{"aud": clientID, "iss": issuer, "iat": now.Add(-time.Minute).Unix(), "nbf": now.Add(-time.Minute).Unix(),
			"exp": now.Add(time.Hour).Unix(), "oid": "1d2c3b4a-5e6f-4a7b-8c9d-0e1f2a3b4c5d", "preferred_username": "jane@contoso.com",
			"groups": []string{group}, "sub": "AAAA", "tid": tenant, "ver": "2.0"}
		for k, v := range over {
			c[k] = v
		}
		return c
	}
	sign := func(alg jose.SignatureAlgorithm, k any, c map[string]any) string {
		return oidctest.Sign(t, alg, k, "k1", "JWT", c)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	payload, _ := json.Marshal(claims(nil))
	pub, _ := x509.MarshalPKIXPublicKey(&key.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	n := 0
	post := func(token string) *httptest.ResponseRecorder {
		n++
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("POST", "/api/business-units", strings.NewReader(`{"id":"bu-`+string(rune('a'+n))+`","name":"U","timeZone":"UTC"}`))
		r.Header.Set("Authorization", "Bearer "+token)
		r.Header.Set("Content-Type", "application/json")
		h.ServeHTTP(rec, r)
		return rec
	}
	units := func() int {
		rec := httptest.NewRecorder()
		r := httptest.NewRequest("GET", "/api/business-units", nil)
		r.Header.Set("Authorization", "Bearer boot")
		h.ServeHTTP(rec, r)
		return strings.Count(rec.Body.String(), `"id":`)
	}
	for name, tok := range map[string]string{
		"expired":                   sign(jose.RS256, key, claims(map[string]any{"exp": now.Add(-time.Second).Unix()})),
		"not yet valid":             sign(jose.RS256, key, claims(map[string]any{"nbf": now.Add(time.Hour).Unix()})),
		"wrong audience":            sign(jose.RS256, key, claims(map[string]any{"aud": "api://someone-else"})),
		"wrong issuer":              sign(jose.RS256, key, claims(map[string]any{"iss": srv.URL + "/00000000-0000-0000-0000-000000000000/v2.0"})),
		"alg none":                  b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + b64(payload) + ".",
		"HS256 with the public key": sign(jose.HS256, pubPEM, claims(nil)),
		"a group mapped to nothing": sign(jose.RS256, key, claims(map[string]any{"groups": []string{"9f8e7d6c-0000-4000-8000-000000000001"}})),
	} {
		before := units()
		rec := post(tok)
		want := http.StatusUnauthorized
		if name == "a group mapped to nothing" {
			want = http.StatusForbidden // a valid token whose groups grant no role
		}
		if rec.Code != want || units() != before {
			t.Errorf("%s: %d %s (want %d), units %d → %d", name, rec.Code, rec.Body, want, before, units())
		}
	}
	if rec := post(sign(jose.RS256, key, claims(nil))); rec.Code != 201 {
		t.Fatalf("the right token: %d %s", rec.Code, rec.Body)
	}
}
