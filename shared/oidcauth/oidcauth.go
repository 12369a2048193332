package oidcauth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/coreos/go-oidc/v3/oidc"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
)

// Defaults of Config.
const (
	DefaultRoleClaim  = "roles"
	DefaultUnitsClaim = "automation_units"
)

// Config configures a Verifier.
type Config struct {
	// Issuer is the provider's issuer URL, exactly as its tokens' "iss" (Entra ID:
	// https://login.microsoftonline.com/<tenant>/v2.0).
	Issuer string
	// Audience is what the tokens' "aud" must contain (the app registration's client id or
	// application ID URI).
	Audience   string
	RoleClaim  string // DefaultRoleClaim when ""
	UnitsClaim string // DefaultUnitsClaim when ""
	// GroupsClaim and Groups grant roles and units per group (Mapping).
	GroupsClaim string
	Groups      map[string]GroupGrant
	// Clock gives "now" for exp and nbf (automation.SystemClock when nil).
	Clock automation.Clock
	// HTTPClient fetches discovery and keys (http.DefaultClient when nil).
	HTTPClient *http.Client
	// Log receives why a token was refused, never the token (slog.Default when nil).
	Log *slog.Logger
}

// Verifier is an httpapi.Authenticator for OIDC bearer tokens. Safe for concurrent use.
type Verifier struct {
	cfg Config
	v   *oidc.IDTokenVerifier
	ctx context.Context // carries the HTTP client for key refreshes
}

var _ httpapi.Authenticator = (*Verifier)(nil)

// New fetches the issuer's discovery document (ctx bounds it) and returns a Verifier.
// Errors: a missing issuer or audience, an unreachable or inconsistent provider.
func New(ctx context.Context, cfg Config) (*Verifier, error) {
	if cfg.Issuer == "" || cfg.Audience == "" {
		return nil, errors.New("oidcauth: an issuer and an audience are required")
	}
	client := settle(&cfg.RoleClaim, &cfg.UnitsClaim, &cfg.Clock, &cfg.Log, cfg.HTTPClient)
	keyCtx := oidc.ClientContext(context.Background(), client)
	p, err := discover(ctx, client, cfg.Issuer)
	if err != nil {
		return nil, err
	}
	v := p.VerifierContext(keyCtx, &oidc.Config{ClientID: cfg.Audience, Now: cfg.Clock.Now,
		SupportedSigningAlgs: []string{oidc.RS256, oidc.PS256, oidc.ES256}})
	return &Verifier{cfg: cfg, v: v, ctx: keyCtx}, nil
}

// settle fills the defaults Config and LoginConfig share: roleClaim DefaultRoleClaim,
// unitsClaim DefaultUnitsClaim, clock automation.SystemClock and log slog.Default when
// unset. It returns the HTTP client for discovery and keys (http.DefaultClient when nil).
func settle(roleClaim, unitsClaim *string, clock *automation.Clock, log **slog.Logger, client *http.Client) *http.Client {
	if *roleClaim == "" {
		*roleClaim = DefaultRoleClaim
	}
	if *unitsClaim == "" {
		*unitsClaim = DefaultUnitsClaim
	}
	if *clock == nil {
		*clock = automation.SystemClock{}
	}
	if *log == nil {
		*log = slog.Default()
	}
	if client == nil {
		client = http.DefaultClient
	}
	return client
}

// discover fetches issuer's discovery document through client (ctx bounds it). Errors:
// "oidcauth: discovery of <issuer>: …" for an unreachable or inconsistent provider.
func discover(ctx context.Context, client *http.Client, issuer string) (*oidc.Provider, error) {
	p, err := oidc.NewProvider(oidc.ClientContext(ctx, client), issuer)
	if err != nil {
		return nil, fmt.Errorf("oidcauth: discovery of %s: %w", issuer, err)
	}
	return p, nil
}

// Authenticate implements httpapi.Authenticator. Errors: httpapi.ErrUnknownCredential for
// anything that is not a valid token of the issuer for the audience.
func (v *Verifier) Authenticate(ctx context.Context, credential string) (httpapi.Principal, error) {
	if strings.Count(credential, ".") != 2 {
		return httpapi.Principal{}, httpapi.ErrUnknownCredential
	}
	tok, err := v.v.Verify(ctx, credential)
	if err != nil {
		v.cfg.Log.Info("bearer token refused", "reason", err.Error())
		return httpapi.Principal{}, httpapi.ErrUnknownCredential
	}
	var claims map[string]json.RawMessage
	if err := tok.Claims(&claims); err != nil {
		return httpapi.Principal{}, httpapi.ErrUnknownCredential
	}
	name := tok.Subject
	for _, c := range []string{"preferred_username", "azp", "appid", "client_id"} {
		var s string
		if json.Unmarshal(claims[c], &s) == nil && s != "" {
			name = s
			break
		}
	}
	m := Mapping{RoleClaim: v.cfg.RoleClaim, UnitsClaim: v.cfg.UnitsClaim, GroupsClaim: v.cfg.GroupsClaim, Groups: v.cfg.Groups}
	return m.Principal("oidc:"+name, claims), nil
}

// roles maps a claim of role names (an array, or one space- or comma-separated string) to
// the roles it names; unknown names are ignored.
func roles(raw json.RawMessage) []httpapi.Role {
	var out []httpapi.Role
	for _, s := range stringsOf(raw) {
		s = strings.ToLower(s)
		s = strings.TrimPrefix(s, "automation.")
		if r, err := httpapi.ParseRole("roles", s); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// units maps a claim of business units (an array of ids, or "a,b" or "*") to a scope; "*"
// is honoured only alone.
func units(raw json.RawMessage) automation.Scope {
	ids := stringsOf(raw)
	for _, id := range ids {
		if id == "*" && len(ids) > 1 {
			return automation.Scope{}
		}
	}
	return automation.BusinessUnits(ids...)
}

func stringsOf(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return strings.FieldsFunc(one, func(r rune) bool { return r == ',' || r == ' ' })
	}
	return nil
}
