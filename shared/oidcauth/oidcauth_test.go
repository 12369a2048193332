package oidcauth_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/oidcauth"
	"github.com/automation-platform/automation/shared/oidcauth/oidctest"
)

// issuer is an OpenID provider on 127.0.0.1 for the tests: discovery and a JWKS with one
// RSA key, and a signer of tokens with that key.
type issuer struct {
	srv *httptest.Server
	key *rsa.PrivateKey
}

func newIssuer(t *testing.T) *issuer {
	t.Helper()
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	is := &issuer{key: key}
	mux := http.NewServeMux()
	mux.HandleFunc("/.well-known/openid-configuration", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(map[string]any{"issuer": is.srv.URL, "jwks_uri": is.srv.URL + "/jwks",
			"authorization_endpoint": is.srv.URL + "/auth", "token_endpoint": is.srv.URL + "/token",
			"id_token_signing_alg_values_supported": []string{"RS256"}})
	})
	mux.HandleFunc("/jwks", func(w http.ResponseWriter, r *http.Request) {
		json.NewEncoder(w).Encode(jose.JSONWebKeySet{Keys: []jose.JSONWebKey{{Key: &key.PublicKey, KeyID: "k1", Algorithm: "RS256", Use: "sig"}}})
	})
	is.srv = httptest.NewServer(mux)
	t.Cleanup(is.srv.Close)
	return is
}

func (is *issuer) sign(t *testing.T, alg jose.SignatureAlgorithm, key any, claims map[string]any) string {
	t.Helper()
	return oidctest.Sign(t, alg, key, "k1", "at+jwt", claims)
}

var now = time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)

func (is *issuer) claims(over map[string]any) map[string]any {
	c := map[string]any{"iss": is.srv.URL, "aud": "api://automation", "sub": "u-1", "azp": "pos-app",
		"iat": now.Add(-time.Minute).Unix(), "exp": now.Add(time.Hour).Unix(), "nbf": now.Add(-time.Minute).Unix(),
		"roles": []string{"Automation.Operate", "unknown"}, "automation_units": []string{"bu-a", "bu-b"}}
	for k, v := range over {
		c[k] = v
	}
	return c
}

// A valid token is a principal with the mapped roles and units; every bad token listed in
// issue 37 is an unknown credential (401): expired, not yet valid, wrong audience, wrong
// issuer, alg none, HS256 signed with the issuer's public key, a foreign key, a tampered
// payload, and what is not a JWT.
func TestTokensAreValidatedAgainstTheIssuer(t *testing.T) {
	is := newIssuer(t)
	v, err := oidcauth.New(context.Background(), oidcauth.Config{Issuer: is.srv.URL, Audience: "api://automation",
		Clock: automation.NewManualClock(now)})
	if err != nil {
		t.Fatal(err)
	}
	good := is.sign(t, jose.RS256, is.key, is.claims(nil))
	p, err := v.Authenticate(context.Background(), good)
	if err != nil || p.Name != "oidc:pos-app" || len(p.Roles) != 1 || p.Roles[0] != httpapi.RoleOperate || p.Scope.String() != "bu-a,bu-b" {
		t.Fatalf("valid token: %+v %v", p, err)
	}
	pub, _ := x509.MarshalPKIXPublicKey(&is.key.PublicKey)
	pubPEM := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub})
	foreign, _ := rsa.GenerateKey(rand.Reader, 2048)
	b64 := base64.RawURLEncoding.EncodeToString
	payload, _ := json.Marshal(is.claims(nil))
	parts := func(tok string) [3]string {
		var p [3]string
		j := 0
		for i := range tok {
			if tok[i] == '.' {
				j++
				continue
			}
			p[j] += string(tok[i])
		}
		return p
	}
	g := parts(good)
	tampered, _ := json.Marshal(is.claims(map[string]any{"automation_units": "*"}))
	for name, tok := range map[string]string{
		"expired":           is.sign(t, jose.RS256, is.key, is.claims(map[string]any{"exp": now.Add(-time.Second).Unix()})),
		"not yet valid":     is.sign(t, jose.RS256, is.key, is.claims(map[string]any{"nbf": now.Add(time.Hour).Unix()})),
		"wrong audience":    is.sign(t, jose.RS256, is.key, is.claims(map[string]any{"aud": "api://other"})),
		"wrong issuer":      is.sign(t, jose.RS256, is.key, is.claims(map[string]any{"iss": "https://evil.example"})),
		"alg none":          b64([]byte(`{"alg":"none","typ":"JWT"}`)) + "." + b64(payload) + ".",
		"HS256, public key": is.sign(t, jose.HS256, pubPEM, is.claims(nil)),
		"HS256, JWK bytes":  is.sign(t, jose.HS256, is.key.PublicKey.N.Bytes(), is.claims(nil)),
		"foreign key":       is.sign(t, jose.RS256, foreign, is.claims(nil)),
		"tampered payload":  g[0] + "." + b64(tampered) + "." + g[2],
		"not a JWT":         "s3cret",
	} {
		if p, err := v.Authenticate(context.Background(), tok); !errors.Is(err, httpapi.ErrUnknownCredential) {
			t.Errorf("%s: %+v %v, want ErrUnknownCredential", name, p, err)
		}
	}
}

// Through an API: a valid token reaches the route with its roles and units, a bad one is
// 401, a token without the route's role 403.
func TestTokensThroughTheAPI(t *testing.T) {
	is := newIssuer(t)
	v, err := oidcauth.New(context.Background(), oidcauth.Config{Issuer: is.srv.URL, Audience: "api://automation", Clock: automation.NewManualClock(now)})
	if err != nil {
		t.Fatal(err)
	}
	api := httpapi.New(httpapi.Options{Token: "boot", Authenticator: v, RouteRoles: httpapi.RouteRoles{"GET /api/x": httpapi.RoleRead, "PUT /api/x": httpapi.RoleAdmin}})
	mux := http.NewServeMux()
	h := api.Handler(func(w http.ResponseWriter, r *http.Request) error {
		httpapi.WriteJSON(w, 200, map[string]string{"scope": httpapi.CallerFrom(r.Context()).Scope.String()})
		return nil
	})
	mux.Handle("GET /api/x", h)
	mux.Handle("PUT /api/x", h)
	for _, c := range []struct {
		method, tok string
		want        int
	}{
		{"GET", is.sign(t, jose.RS256, is.key, is.claims(nil)), 200},
		{"PUT", is.sign(t, jose.RS256, is.key, is.claims(nil)), 403},
		{"GET", is.sign(t, jose.RS256, is.key, is.claims(map[string]any{"exp": now.Add(-time.Hour).Unix()})), 401},
	} {
		r := httptest.NewRequest(c.method, "/api/x", nil)
		r.Header.Set("Authorization", "Bearer "+c.tok)
		rr := httptest.NewRecorder()
		mux.ServeHTTP(rr, r)
		if rr.Code != c.want {
			t.Errorf("%s: %d %s, want %d", c.method, rr.Code, rr.Body, c.want)
		}
	}
}
