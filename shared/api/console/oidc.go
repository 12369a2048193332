package console

import (
	"context"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"net/http"
	"strings"
	"time"

	"golang.org/x/oauth2"

	"github.com/automation-platform/automation/shared/httpapi"
	srvsession "github.com/automation-platform/automation/shared/session"
)

// OIDCSignIn is the authorization-code flow with PKCE the console signs people in with
// (oidcauth.Login): the issuer's authorization address, and the exchange of its code for the
// principal of a verified ID token.
type OIDCSignIn interface {
	// Issuer names the provider on the sign-in page.
	Issuer() string
	// AuthCodeURL is where to send the browser, with state, nonce and the S256 challenge of
	// verifier.
	AuthCodeURL(state, nonce, verifier string) string
	// Exchange returns the principal of the code's verified ID token carrying nonce. Errors:
	// ErrRefused (Refused reports it) for a code or token it does not accept (401); anything
	// else is a failure to reach the issuer (503).
	Exchange(ctx context.Context, code, verifier, nonce string) (httpapi.Principal, error)
	// Refused reports an Exchange error that refuses the sign-in.
	Refused(err error) bool
}

// flowCookie carries one sign-in's state, nonce, PKCE verifier and next page from the start
// to the callback: signed like the session cookie, HttpOnly, SameSite=Lax (the issuer's
// redirect back is a top-level navigation from another site), limited to the OIDC routes,
// valid flowLifetime, and removed by the callback whatever its outcome.
const flowCookie = "automation_console_oidc"

const flowLifetime = 10 * time.Minute

type flow struct {
	State    string `json:"s"`
	Nonce    string `json:"n"`
	Verifier string `json:"v"`
	Next     string `json:"x"`
	Expires  int64  `json:"e"` // Unix seconds
}

func (c *Console) encodeFlow(f flow) string {
	b, _ := json.Marshal(f)
	p := base64.RawURLEncoding.EncodeToString(b)
	return p + "." + c.sess.mac("oidc-flow", p)
}

func (c *Console) decodeFlow(v string, now time.Time) (flow, bool) {
	p, mac, ok := strings.Cut(v, ".")
	if !ok || subtle.ConstantTimeCompare([]byte(c.sess.mac("oidc-flow", p)), []byte(mac)) != 1 {
		return flow{}, false
	}
	b, err := base64.RawURLEncoding.DecodeString(p)
	var f flow
	if err != nil || json.Unmarshal(b, &f) != nil || !now.Before(time.Unix(f.Expires, 0)) {
		return flow{}, false
	}
	return f, true
}

func (c *Console) setFlowCookie(w http.ResponseWriter, r *http.Request, value string, maxAge int) {
	http.SetCookie(w, &http.Cookie{Name: flowCookie, Value: value, Path: Base + "/oidc/", MaxAge: maxAge,
		HttpOnly: true, Secure: secure(r), SameSite: http.SameSiteLaxMode})
}

// oidcStart sends the browser to the issuer: GET {Base}/oidc/start?next=….
func (c *Console) oidcStart(w http.ResponseWriter, r *http.Request, x *call) error {
	if c.opts.OIDC == nil {
		c.fail(w, r, x, http.StatusNotFound, "No OpenID Connect sign-in", "This console signs in with the API token only.")
		return nil
	}
	now := c.api.Clock().Now()
	f := flow{State: oauth2.GenerateVerifier(), Nonce: oauth2.GenerateVerifier(), Verifier: oauth2.GenerateVerifier(),
		Next: safeNext(r.URL.Query().Get("next")), Expires: now.Add(flowLifetime).Unix()}
	c.setFlowCookie(w, r, c.encodeFlow(f), int(flowLifetime/time.Second))
	http.Redirect(w, r, c.opts.OIDC.AuthCodeURL(f.State, f.Nonce, f.Verifier), http.StatusFound)
	return nil
}

// oidcCallback is where the issuer sends the browser back: GET {Base}/oidc/callback?code&state.
// The state must be the one of this browser's flow cookie (else 401, nothing exchanged); the
// code is exchanged with the flow's PKCE verifier and its ID token must carry the flow's
// nonce (else 401); a person without any role gets 403. Only then a session of that person
// starts. The answer is a page that moves on to the next page itself: the session cookie is
// SameSite=Strict, and a browser would not send it on a redirect that began at the issuer.
func (c *Console) oidcCallback(w http.ResponseWriter, r *http.Request, x *call) error {
	if c.opts.OIDC == nil {
		c.fail(w, r, x, http.StatusNotFound, "No OpenID Connect sign-in", "This console signs in with the API token only.")
		return nil
	}
	now := c.api.Clock().Now()
	var f flow
	ok := false
	if ck, err := r.Cookie(flowCookie); err == nil {
		f, ok = c.decodeFlow(ck.Value, now)
	}
	c.setFlowCookie(w, r, "", -1) // one use, whatever happens
	q := r.URL.Query()
	refuse := func(status int, msg string) error {
		c.signIn(w, r, status, msg)
		return nil
	}
	switch {
	case q.Get("error") != "":
		return refuse(http.StatusUnauthorized, "The identity provider did not sign you in ("+q.Get("error")+"). Nothing was signed in.")
	case !ok:
		return refuse(http.StatusUnauthorized, "This sign-in was not started here, or took too long. Nothing was signed in; start again.")
	case q.Get("code") == "" || subtle.ConstantTimeCompare([]byte(q.Get("state")), []byte(f.State)) != 1:
		return refuse(http.StatusUnauthorized, "The sign-in's state does not match. Nothing was signed in; start again.")
	}
	p, err := c.opts.OIDC.Exchange(r.Context(), q.Get("code"), f.Verifier, f.Nonce)
	switch {
	case err != nil && c.opts.OIDC.Refused(err):
		return refuse(http.StatusUnauthorized, "The identity provider's answer was refused. Nothing was signed in; start again.")
	case err != nil:
		c.opts.Logger.ErrorContext(r.Context(), "console OIDC sign-in failed", "error", err)
		c.fail(w, r, x, http.StatusServiceUnavailable, "Signing in failed", "The identity provider could not be reached. Try again.")
		return nil
	case len(p.Roles) == 0:
		c.fail(w, r, nil, http.StatusForbidden, "No role", "You signed in as "+p.Name+", who has no role for this console. Ask an administrator for one.")
		return nil
	}
	_, v := c.sess.issueFor(now, p)
	// The session keeps the claims the roles came from, to map them again on every request.
	srvsession.Begin(r.Context(), srvsession.Subject{Principal: p.Name, Claims: p.Claims})
	http.SetCookie(w, cookie(r, v))
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	next := template.HTMLEscapeString(f.Next)
	_, _ = w.Write([]byte(`<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url=` + next +
		`"><title>Signed in</title><p>Signed in as ` + template.HTMLEscapeString(p.Name) + `. <a href="` + next + `">Continue</a></p>` + "\n"))
	return nil
}

// allowed reports whether a person's session may use the route with pattern
// (Options.RoleOf); a route without a declared role is refused, as httpapi.API.Handler
// refuses one.
func (c *Console) allowed(pattern string, p httpapi.Principal) (httpapi.Role, bool) {
	if c.opts.RoleOf == nil {
		return "", false
	}
	need, ok := c.opts.RoleOf(pattern)
	return need, ok && p.Has(need)
}
