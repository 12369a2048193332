package oidcauth_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"golang.org/x/oauth2"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/oidcauth"
)

// tokenEndpoint serves /token on is: one code, "code-1", usable once, whose PKCE verifier
// must match the S256 challenge of the authorization request; it answers with the ID token
// idToken returns.
type tokenEndpoint struct {
	mu        sync.Mutex
	used      bool
	challenge string
	idToken   func() string
	gotSecret string
}

func (is *issuer) withToken(t *testing.T, te *tokenEndpoint) {
	t.Helper()
	mux := is.srv.Config.Handler.(*http.ServeMux)
	mux.HandleFunc("/token", func(w http.ResponseWriter, r *http.Request) {
		te.mu.Lock()
		defer te.mu.Unlock()
		_ = r.ParseForm()
		_, te.gotSecret, _ = r.BasicAuth()
		if r.PostForm.Get("code") != "code-1" || te.used || oauth2.S256ChallengeFromVerifier(r.PostForm.Get("code_verifier")) != te.challenge {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"invalid_grant"}`))
			return
		}
		te.used = true
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"access_token": "at", "token_type": "Bearer", "expires_in": 60, "id_token": te.idToken()})
	})
}

// The code flow: the authorization address carries state, nonce and an S256 challenge (never
// the verifier); the exchange sends the verifier and the client secret, verifies the ID
// token and maps its claims to a principal. A replayed code, an ID token for another client
// or with another nonce, a wrong verifier and a response without an ID token are refused.
func TestLoginCodeFlowWithPKCE(t *testing.T) {
	is := newIssuer(t)
	te := &tokenEndpoint{}
	is.withToken(t, te)
	l, err := oidcauth.NewLogin(context.Background(), oidcauth.LoginConfig{Issuer: is.srv.URL, ClientID: "console",
		ClientSecret: "s3cret", RedirectURL: "http://127.0.0.1/api/console/oidc/callback", Clock: automation.NewManualClock(now)})
	if err != nil {
		t.Fatal(err)
	}
	verifier := oauth2.GenerateVerifier()
	u, err := url.Parse(l.AuthCodeURL("st-1", "n-1", verifier))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	if q.Get("state") != "st-1" || q.Get("nonce") != "n-1" || q.Get("code_challenge_method") != "S256" ||
		q.Get("code_challenge") != oauth2.S256ChallengeFromVerifier(verifier) || strings.Contains(u.String(), verifier) ||
		q.Get("client_id") != "console" || !strings.Contains(q.Get("scope"), "openid") {
		t.Fatalf("authorization address %s", u)
	}
	te.challenge = q.Get("code_challenge")
	idToken := func(over map[string]any) func() string {
		return func() string {
			c := is.claims(map[string]any{"aud": "console", "nonce": "n-1", "preferred_username": "jane@example.com",
				"roles": []string{"Automation.Read"}, "automation_units": []string{"bu-a"}})
			for k, v := range over {
				c[k] = v
			}
			return is.sign(t, jose.RS256, is.key, c)
		}
	}
	ctx := context.Background()

	for name, over := range map[string]map[string]any{
		"another audience": {"aud": "someone-else"},
		"another nonce":    {"nonce": "n-2"},
		"no nonce":         {"nonce": nil},
		"expired":          {"exp": now.Add(-time.Minute).Unix()},
	} {
		te.used, te.idToken = false, idToken(over)
		if over["nonce"] == nil {
			te.idToken = func() string {
				c := is.claims(map[string]any{"aud": "console"})
				return is.sign(t, jose.RS256, is.key, c)
			}
		}
		if p, err := l.Exchange(ctx, "code-1", verifier, "n-1"); !errors.Is(err, oidcauth.ErrLoginRefused) {
			t.Errorf("%s: %+v %v, want ErrLoginRefused", name, p, err)
		}
	}

	te.used, te.idToken = false, idToken(nil)
	if p, err := l.Exchange(ctx, "code-1", oauth2.GenerateVerifier(), "n-1"); !errors.Is(err, oidcauth.ErrLoginRefused) {
		t.Errorf("another verifier: %+v %v", p, err)
	}
	p, err := l.Exchange(ctx, "code-1", verifier, "n-1")
	if err != nil || p.Name != "oidc:jane@example.com" || len(p.Roles) != 1 || p.Roles[0] != httpapi.RoleRead || p.Scope.String() != "bu-a" {
		t.Fatalf("good exchange: %+v %v", p, err)
	}
	if te.gotSecret != "s3cret" {
		t.Errorf("the exchange sent client secret %q", te.gotSecret)
	}
	if p, err := l.Exchange(ctx, "code-1", verifier, "n-1"); !errors.Is(err, oidcauth.ErrLoginRefused) {
		t.Errorf("replayed code: %+v %v", p, err)
	}
}
