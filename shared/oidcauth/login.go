package oidcauth

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/coreos/go-oidc/v3/oidc"
	"golang.org/x/oauth2"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
)

// LoginConfig configures a Login: the console's own client at the issuer.
type LoginConfig struct {
	Issuer string
	// ClientID is the console's client (Entra ID: its app registration's application id);
	// the ID tokens' "aud" must contain it.
	ClientID string
	// ClientSecret authenticates the code exchange (client_secret_basic); "" for a public
	// client, which PKCE alone protects.
	ClientSecret string
	// RedirectURL is the callback registered with the issuer
	// (https://<host>/api/console/oidc/callback).
	RedirectURL string
	RoleClaim   string // DefaultRoleClaim when ""
	UnitsClaim  string // DefaultUnitsClaim when ""
	// GroupsClaim and Groups grant roles and units per group (Mapping).
	GroupsClaim string
	Groups      map[string]GroupGrant
	// Clock gives "now" for exp and nbf (automation.SystemClock when nil).
	Clock      automation.Clock
	HTTPClient *http.Client // http.DefaultClient when nil
	Log        *slog.Logger // slog.Default when nil
}

// ErrLoginRefused is what Exchange returns for a code, token or nonce it does not accept
// (the sign-in is answered 401 and no session starts); the reason is logged, never the
// code or the token.
var ErrLoginRefused = errors.New("oidcauth: sign-in refused")

// Login is the authorization-code flow with PKCE (RFC 7636, S256) for the console: the
// address to send a person to, and the exchange of the code the issuer sends back for a
// verified ID token whose claims become a principal. Safe for concurrent use.
type Login struct {
	cfg   LoginConfig
	oauth oauth2.Config
	v     *oidc.IDTokenVerifier
	ctx   context.Context // carries the HTTP client
}

// NewLogin fetches the issuer's discovery document (ctx bounds it). Errors: a missing
// issuer, client id or redirect URL; an unreachable or inconsistent provider.
func NewLogin(ctx context.Context, cfg LoginConfig) (*Login, error) {
	if cfg.Issuer == "" || cfg.ClientID == "" || cfg.RedirectURL == "" {
		return nil, errors.New("oidcauth: a console sign-in needs an issuer, a client id and a redirect URL")
	}
	client := settle(&cfg.RoleClaim, &cfg.UnitsClaim, &cfg.Clock, &cfg.Log, cfg.HTTPClient)
	bg := oidc.ClientContext(context.WithValue(context.Background(), oauth2.HTTPClient, client), client)
	p, err := discover(ctx, client, cfg.Issuer)
	if err != nil {
		return nil, err
	}
	l := &Login{cfg: cfg, ctx: bg,
		oauth: oauth2.Config{ClientID: cfg.ClientID, ClientSecret: cfg.ClientSecret, RedirectURL: cfg.RedirectURL,
			Endpoint: p.Endpoint(), Scopes: []string{oidc.ScopeOpenID, "profile"}},
		v: p.VerifierContext(bg, &oidc.Config{ClientID: cfg.ClientID, Now: cfg.Clock.Now,
			SupportedSigningAlgs: []string{oidc.RS256, oidc.PS256, oidc.ES256}}),
	}
	if cfg.ClientSecret != "" {
		l.oauth.Endpoint.AuthStyle = oauth2.AuthStyleInHeader
	}
	return l, nil
}

// Issuer is the issuer's URL (the sign-in button names it).
func (l *Login) Issuer() string { return l.cfg.Issuer }

// Refused reports an Exchange error that refuses the sign-in (ErrLoginRefused), as against a
// failure to reach the issuer.
func (l *Login) Refused(err error) bool { return errors.Is(err, ErrLoginRefused) }

// AuthCodeURL is the issuer's authorization address for a sign-in with state, nonce and the
// PKCE verifier (oauth2.GenerateVerifier; only its S256 challenge leaves).
func (l *Login) AuthCodeURL(state, nonce, verifier string) string {
	return l.oauth.AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier))
}

// Exchange trades code for tokens at the issuer's token endpoint, with the PKCE verifier,
// and returns the principal of the verified ID token: signed by the issuer's keys, for this
// client, unexpired, carrying nonce. Roles and units come from the configured claims as for
// bearer tokens (Mapping); the name is "oidc:" and the preferred_username (else email, else
// sub); Principal.Claims keeps the claims the mapping reads (Mapping.Kept).
// Errors: ErrLoginRefused (the code is unknown, used or not this client's; the ID token is
// missing or invalid; the nonce differs); anything else is a failure to reach the issuer.
func (l *Login) Exchange(ctx context.Context, code, verifier, nonce string) (httpapi.Principal, error) {
	ctx = context.WithValue(ctx, oauth2.HTTPClient, l.ctx.Value(oauth2.HTTPClient))
	tok, err := l.oauth.Exchange(ctx, code, oauth2.VerifierOption(verifier))
	if err != nil {
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			l.cfg.Log.Info("console sign-in refused: the code exchange failed", "status", re.Response.StatusCode, "error", re.ErrorCode)
			return httpapi.Principal{}, ErrLoginRefused
		}
		return httpapi.Principal{}, fmt.Errorf("oidcauth: code exchange: %w", err)
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		l.cfg.Log.Info("console sign-in refused: the token response has no id_token")
		return httpapi.Principal{}, ErrLoginRefused
	}
	id, err := l.v.Verify(ctx, raw)
	if err != nil {
		l.cfg.Log.Info("console sign-in refused: the ID token is invalid", "reason", err.Error())
		return httpapi.Principal{}, ErrLoginRefused
	}
	if nonce == "" || subtle.ConstantTimeCompare([]byte(id.Nonce), []byte(nonce)) != 1 {
		l.cfg.Log.Info("console sign-in refused: the ID token's nonce is not this sign-in's")
		return httpapi.Principal{}, ErrLoginRefused
	}
	var claims map[string]json.RawMessage
	if err := id.Claims(&claims); err != nil {
		return httpapi.Principal{}, ErrLoginRefused
	}
	name := id.Subject
	for _, c := range []string{"preferred_username", "email"} {
		var s string
		if json.Unmarshal(claims[c], &s) == nil && s != "" {
			name = s
			break
		}
	}
	m := l.Mapping()
	p := m.Principal("oidc:"+name, claims)
	p.Claims = m.Kept(claims)
	return p, nil
}

// Mapping is how this sign-in maps claims to roles and units; the console maps a session's
// kept claims (Principal.Claims) again with it on every request.
func (l *Login) Mapping() Mapping {
	return Mapping{RoleClaim: l.cfg.RoleClaim, UnitsClaim: l.cfg.UnitsClaim, GroupsClaim: l.cfg.GroupsClaim, Groups: l.cfg.Groups}
}
