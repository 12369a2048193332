package httpapi

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// Role is what a principal may do. The set is small and fixed (issue 37); each route
// declares the one role it needs in a RouteRoles table (the composition root's).
type Role string

// The roles, from the narrowest. admin includes every other role, and operate includes
// read; ingest is on its own (a domain app that posts events reads nothing back).
const (
	// RoleIngest posts domain events (POST /api/events, the local events route).
	RoleIngest Role = "ingest"
	// RoleRead reads: support lists and explains, metrics, attributes, campaigns, budgets,
	// the inbox (marking a message read included), the console's pages.
	RoleRead Role = "read"
	// RoleOperate acts on what exists: support actions (release, retry, cancel, run now),
	// paced releases, dead-letter requeues, resolving UNKNOWN deliveries, fees and commands.
	RoleOperate Role = "operate"
	// RoleAdmin changes configuration: business units, reminder settings, the event
	// registry, campaigns, budgets and price policies, report subscriptions and roll-out,
	// API keys.
	RoleAdmin Role = "admin"
)

// Roles lists every role, narrowest first.
var Roles = []Role{RoleIngest, RoleRead, RoleOperate, RoleAdmin}

// ParseRole returns the role named s. Errors: automation.Invalid(field) naming the roles.
func ParseRole(field, s string) (Role, error) {
	r := Role(strings.TrimSpace(s))
	if !slices.Contains(Roles, r) {
		return "", automation.Invalid(field, "unknown role %q: one of ingest, read, operate, admin", s)
	}
	return r, nil
}

// Includes reports whether holding r lets a caller use a route that needs need.
func (r Role) Includes(need Role) bool {
	switch r {
	case RoleAdmin:
		return true
	case RoleOperate:
		return need == RoleOperate || need == RoleRead
	default:
		return r == need
	}
}

// Principal is who a request's credential says the caller is.
type Principal struct {
	// Name identifies the caller in audits: an API key's name ("key:pos-sydney"), a person's
	// or an application's (OIDC subject), or "bootstrap" for AUTOMATION_API_TOKEN.
	Name string
	// Roles are what the credential may do (Role.Includes).
	Roles []Role
	// Scope is the business units the credential may see at most. The deployment's
	// Options.BusinessUnits caps it, and X-Automation-Business-Units may narrow it further;
	// nothing widens it.
	Scope automation.Scope
	// KeyPrefix is the API key's public prefix, "" for other credentials (rate limits and
	// quotas are counted per key).
	KeyPrefix string
	// Recipient, when set, confines the principal to that recipient's own routes
	// (Options.RecipientRoutes, whose {recipientId} must be it): a recipient token.
	Recipient string
	// Claims are the identity provider's claims a console sign-in mapped (JSON of the role,
	// units and groups claims; oidcauth.Mapping.Kept), kept in the session so that every
	// request maps them again; "" for other credentials.
	Claims string
}

// Has reports whether one of p's roles includes need.
func (p Principal) Has(need Role) bool {
	for _, r := range p.Roles {
		if r.Includes(need) {
			return true
		}
	}
	return false
}

// BootstrapName is the principal name of AUTOMATION_API_TOKEN (Options.Token).
const BootstrapName = "bootstrap"

// ErrUnknownCredential is what an Authenticator returns for a bearer credential it does not
// know (or knows as revoked or expired): the request is answered 401.
var ErrUnknownCredential = errors.New("httpapi: unknown credential")

// Authenticator resolves a bearer credential (the text after "Bearer ") to a principal:
// API keys (sql-stored hashes), OIDC access tokens. Errors: ErrUnknownCredential (401);
// anything else is a failure to check (answered 503, retry).
type Authenticator interface {
	Authenticate(ctx context.Context, credential string) (Principal, error)
}

// AuthenticatorFunc adapts a function to Authenticator.
type AuthenticatorFunc func(ctx context.Context, credential string) (Principal, error)

// Authenticate calls f.
func (f AuthenticatorFunc) Authenticate(ctx context.Context, credential string) (Principal, error) {
	return f(ctx, credential)
}

// RouteRoles maps a route's http.ServeMux pattern, exactly as registered ("POST /api/events",
// "GET /api/support/scheduler-rows/{id}"), to the role it needs. API.Handler reads
// r.Pattern, which the ServeMux sets in local serve and in handler mode alike (forwarded
// Functions requests reach the same mux), so one table covers both.
type RouteRoles map[string]Role

// MissingRoleHint is the message of a route without a declared role: the line to add.
func MissingRoleHint(pattern string) string {
	return fmt.Sprintf("route %q declares no role: add `%q: httpapi.RoleRead,` (or RoleIngest, RoleOperate, RoleAdmin) to routeRoles in shared/app/roles.go", pattern, pattern)
}

// principal authenticates r: nil, nil when no credential is configured (the API serves
// everyone as an admin of its configured units: tests and `serve` without -token).
func (a *API) principal(r *http.Request) (*Principal, error) {
	if a.o.Token == "" && a.o.Authenticator == nil {
		return nil, nil
	}
	unauthorized := automation.Errorf(automation.CodeUnauthorized, "send Authorization: Bearer <token or API key>")
	auth := r.Header.Get("Authorization")
	if a.o.QueryCredentialRoutes[r.Pattern] {
		// EventSource cannot send a header: the credential may ride in access_token, which is
		// taken out of the request here so no handler, log or cursor sees it.
		// A malformed query is left alone: Handler refuses it (400) whatever it carries.
		q, err := url.ParseQuery(r.URL.RawQuery)
		if t := q.Get("access_token"); err == nil && t != "" && auth == "" {
			auth = "Bearer " + t
		}
		if err == nil && q.Has("access_token") {
			q.Del("access_token")
			r.URL.RawQuery = q.Encode()
		}
	}
	scheme, cred, ok := strings.Cut(auth, " ")
	cred = strings.TrimSpace(cred)
	if !ok || !strings.EqualFold(scheme, "Bearer") || cred == "" {
		return nil, unauthorized
	}
	if a.o.Token != "" {
		// Digests of equal length are compared, so the time taken reveals neither the
		// token's bytes nor its length.
		got, want := sha256.Sum256([]byte(cred)), sha256.Sum256([]byte(a.o.Token))
		if subtle.ConstantTimeCompare(got[:], want[:]) == 1 {
			return &Principal{Name: BootstrapName, Roles: []Role{RoleAdmin}, Scope: automation.AllBusinessUnits()}, nil
		}
	}
	if a.o.Authenticator == nil {
		return nil, unauthorized
	}
	p, err := a.o.Authenticator.Authenticate(r.Context(), cred)
	switch {
	case errors.Is(err, ErrUnknownCredential):
		return nil, unauthorized
	case automation.CodeOf(err) == automation.CodeTooManyRequests:
		return nil, err // a throttled credential (Throttle): 429 with Retry-After
	case err != nil:
		return nil, automation.RetryAfter(time.Second, fmt.Errorf("httpapi: checking a credential: %w", err))
	}
	return &p, nil
}

// authorize checks p's roles against the role r's route declares (Options.RouteRoles; no
// table means no role check). A route missing from the table is refused (fail closed).
func (a *API) authorize(r *http.Request, p *Principal) error {
	if a.o.RouteRoles == nil {
		return nil
	}
	need, ok := a.o.RouteRoles[r.Pattern]
	if !ok {
		a.o.Logger.Error("route without a declared role refused", "pattern", r.Pattern, "hint", MissingRoleHint(r.Pattern))
		return automation.Errorf(automation.CodeForbidden, "this route declares no role, so no credential may use it")
	}
	if p != nil && p.Recipient != "" && (!a.o.RecipientRoutes[r.Pattern] || r.PathValue("recipientId") != p.Recipient) {
		return automation.Errorf(automation.CodeForbidden, "a recipient token opens only its recipient's inbox routes")
	}
	if p != nil && !p.Has(need) {
		return automation.Errorf(automation.CodeForbidden, "the credential %q has roles %v; this route needs %s", p.Name, p.Roles, need)
	}
	return nil
}
