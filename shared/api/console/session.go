package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
)

// CookieName is the console's session cookie: "v1.{expiresUnix}.{nonce}.{mac}" for a
// bootstrap-token sign-in, "v2.{expiresUnix}.{nonce}.{principal}.{mac}" for an OIDC sign-in
// (principal: base64url JSON of the person's name, roles and units, as the ID token mapped
// them), signed with a key derived from the API token (httpapi.API.SessionKey). It holds no
// token. The server-side row (shared/session) decides whether it is still live.
const CookieName = "automation_console"

// csrfField is the hidden form field every console form carries.
const csrfField = "csrf"

// session is a verified session cookie.
type session struct {
	nonce   string
	expires time.Time
	// principal is the person an OIDC sign-in named; nil for the bootstrap token.
	principal *httpapi.Principal
}

// cookiePrincipal is the principal as a v2 cookie carries it.
type cookiePrincipal struct {
	Name  string   `json:"n"`
	Roles []string `json:"r"`
	Units string   `json:"u"` // automation.Scope.String: "*" or "a,b"
}

// sessions signs and verifies session cookies and derives their CSRF tokens.
type sessions struct {
	key      []byte
	lifetime time.Duration
}

func (s sessions) mac(parts ...string) string {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(strings.Join(parts, "|")))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// issue returns a new session valid for the lifetime from now, and its cookie value.
func (s sessions) issue(now time.Time) (session, string) {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go 1.24+)
	ss := session{nonce: hex.EncodeToString(b), expires: now.Add(s.lifetime).UTC().Truncate(time.Second)}
	exp := strconv.FormatInt(ss.expires.Unix(), 10)
	return ss, "v1." + exp + "." + ss.nonce + "." + s.mac("session", exp, ss.nonce)
}

// issueFor returns a new session of p valid for the lifetime from now, and its cookie value.
func (s sessions) issueFor(now time.Time, p httpapi.Principal) (session, string) {
	ss, _ := s.issue(now)
	cp := cookiePrincipal{Name: p.Name, Units: p.Scope.String()}
	for _, r := range p.Roles {
		cp.Roles = append(cp.Roles, string(r))
	}
	b, _ := json.Marshal(cp)
	payload := base64.RawURLEncoding.EncodeToString(b)
	ss.principal = &p
	exp := strconv.FormatInt(ss.expires.Unix(), 10)
	return ss, "v2." + exp + "." + ss.nonce + "." + payload + "." + s.mac("session2", exp, ss.nonce, payload)
}

// verify checks a cookie value's signature and expiry at now.
func (s sessions) verify(v string, now time.Time) (session, bool) {
	parts := strings.Split(v, ".")
	var principal *httpapi.Principal
	switch {
	case len(parts) == 4 && parts[0] == "v1" && len(parts[2]) == 32:
		if subtle.ConstantTimeCompare([]byte(s.mac("session", parts[1], parts[2])), []byte(parts[3])) != 1 {
			return session{}, false
		}
	case len(parts) == 5 && parts[0] == "v2" && len(parts[2]) == 32:
		if subtle.ConstantTimeCompare([]byte(s.mac("session2", parts[1], parts[2], parts[3])), []byte(parts[4])) != 1 {
			return session{}, false
		}
		p, ok := decodePrincipal(parts[3])
		if !ok {
			return session{}, false
		}
		principal = &p
	default:
		return session{}, false
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || !now.Before(time.Unix(exp, 0)) {
		return session{}, false
	}
	return session{nonce: parts[2], expires: time.Unix(exp, 0).UTC(), principal: principal}, true
}

func decodePrincipal(payload string) (httpapi.Principal, bool) {
	b, err := base64.RawURLEncoding.DecodeString(payload)
	var cp cookiePrincipal
	if err != nil || json.Unmarshal(b, &cp) != nil || cp.Name == "" {
		return httpapi.Principal{}, false
	}
	p := httpapi.Principal{Name: cp.Name, Scope: automation.ParseScope(cp.Units)}
	for _, r := range cp.Roles {
		role, err := httpapi.ParseRole("roles", r)
		if err != nil {
			return httpapi.Principal{}, false
		}
		p.Roles = append(p.Roles, role)
	}
	return p, true
}

// SessionPrincipal names who the session of cookie value v belongs to, for its server-side
// row (session.Guard.PrincipalOf): the OIDC person a v2 cookie names, else
// httpapi.BootstrapName. Only the signature is checked, not the expiry.
func (c *Console) SessionPrincipal(v string) string {
	ss, ok := c.sess.verify(v, time.Time{})
	if ok && ss.principal != nil {
		return ss.principal.Name
	}
	return httpapi.BootstrapName
}

// csrf is the session's CSRF token: a MAC of its nonce, so it cannot be made without the key
// and is different for every session.
func (s sessions) csrf(ss session) string { return s.mac("csrf", ss.nonce) }

// checkCSRF compares a form's token with the session's in constant time.
func (s sessions) checkCSRF(ss session, got string) bool {
	return got != "" && subtle.ConstantTimeCompare([]byte(s.csrf(ss)), []byte(got)) == 1
}

// cookie builds the session cookie: HttpOnly (no script reads it), SameSite=Strict (no other
// site's page sends it), Secure when the request came over TLS (directly or, behind the
// Functions front end, as X-Forwarded-Proto: https), scoped to the console's path. It is a
// browser-session cookie: the expiry that counts is the one signed inside it, checked with
// the runtime's clock, never the browser's.
func cookie(r *http.Request, value string) *http.Cookie {
	return &http.Cookie{Name: CookieName, Value: value, Path: Base, HttpOnly: true,
		Secure: secure(r), SameSite: http.SameSiteStrictMode}
}

func secure(r *http.Request) bool {
	return r.TLS != nil || strings.EqualFold(r.Header.Get("X-Forwarded-Proto"), "https")
}

// crossSite reports a request a browser marked as sent by another site's page (Fetch
// metadata), or whose Origin names another host: refused on every POST, before the CSRF token.
func crossSite(r *http.Request) bool {
	if r.Header.Get("Sec-Fetch-Site") == "cross-site" {
		return true
	}
	o := r.Header.Get("Origin")
	if o == "" || o == "null" {
		return o == "null"
	}
	host := o
	if i := strings.Index(o, "://"); i >= 0 {
		host = o[i+3:]
	}
	for _, h := range []string{r.Host, r.Header.Get("X-Forwarded-Host"), r.Header.Get("X-Original-Host")} {
		if h != "" && strings.EqualFold(host, h) {
			return false
		}
	}
	return true
}
