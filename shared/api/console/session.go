package console

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// CookieName is the console's session cookie: "v1.{expiresUnix}.{nonce}.{mac}", signed with
// a key derived from the API token (httpapi.API.SessionKey). It holds no token and no scope:
// the business units are read from the configuration and the request on every call.
const CookieName = "automation_console"

// csrfField is the hidden form field every console form carries.
const csrfField = "csrf"

// session is a verified session cookie.
type session struct {
	nonce   string
	expires time.Time
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

// verify checks a cookie value's signature and expiry at now.
func (s sessions) verify(v string, now time.Time) (session, bool) {
	parts := strings.Split(v, ".")
	if len(parts) != 4 || parts[0] != "v1" || len(parts[2]) != 32 {
		return session{}, false
	}
	want := s.mac("session", parts[1], parts[2])
	if subtle.ConstantTimeCompare([]byte(want), []byte(parts[3])) != 1 {
		return session{}, false
	}
	exp, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil || !now.Before(time.Unix(exp, 0)) {
		return session{}, false
	}
	return session{nonce: parts[2], expires: time.Unix(exp, 0).UTC()}, true
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
