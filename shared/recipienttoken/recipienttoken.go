package recipienttoken

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
)

// Issuer is the "iss" of every recipient token.
const Issuer = "automation-recipient"

// MaxLifetime bounds exp - iat: a token that could live longer is refused.
const MaxLifetime = time.Hour

// MinSecretBytes is the shortest secret accepted.
const MinSecretBytes = 32

type claims struct {
	jwt.Claims
	BusinessUnit string `json:"bu"`
}

// Mint signs a token for recipient in unit, valid from now for ttl (at most MaxLifetime),
// with the secret named kid.
func Mint(kid string, secret []byte, unit, recipient string, now time.Time, ttl time.Duration) (string, error) {
	if ttl <= 0 || ttl > MaxLifetime || len(secret) < MinSecretBytes || kid == "" || unit == "" || recipient == "" {
		return "", errors.New("recipienttoken: a kid, a secret of 32 bytes or more, a unit, a recipient and a lifetime up to an hour are required")
	}
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: secret}, (&jose.SignerOptions{}).WithType("JWT").WithHeader("kid", kid))
	if err != nil {
		return "", err
	}
	c := claims{Claims: jwt.Claims{Issuer: Issuer, Subject: recipient, IssuedAt: jwt.NewNumericDate(now), Expiry: jwt.NewNumericDate(now.Add(ttl))},
		BusinessUnit: unit}
	return jwt.Signed(s).Claims(c).Serialize()
}

// Verifier checks recipient tokens; an httpapi.Authenticator. Safe for concurrent use.
type Verifier struct {
	Keys  map[string][]byte // kid → secret
	Clock automation.Clock
}

var _ httpapi.Authenticator = (*Verifier)(nil)

// Is reports whether credential is shaped like a recipient token (a JWT signed HS256 with
// a kid this verifier holds), so a chain of authenticators can send it here.
func (v *Verifier) Is(credential string) bool {
	if strings.Count(credential, ".") != 2 {
		return false
	}
	t, err := jwt.ParseSigned(credential, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil || len(t.Headers) != 1 {
		return false
	}
	_, ok := v.Keys[t.Headers[0].KeyID]
	return ok
}

// Authenticate implements httpapi.Authenticator. Errors: httpapi.ErrUnknownCredential for
// a token that is not signed by a current secret, is expired, not yet issued, lives longer
// than MaxLifetime, or lacks its recipient or unit.
func (v *Verifier) Authenticate(_ context.Context, credential string) (httpapi.Principal, error) {
	t, err := jwt.ParseSigned(credential, []jose.SignatureAlgorithm{jose.HS256})
	if err != nil || len(t.Headers) != 1 {
		return httpapi.Principal{}, httpapi.ErrUnknownCredential
	}
	secret, ok := v.Keys[t.Headers[0].KeyID]
	if !ok {
		return httpapi.Principal{}, httpapi.ErrUnknownCredential
	}
	var c claims
	if err := t.Claims(secret, &c); err != nil {
		return httpapi.Principal{}, httpapi.ErrUnknownCredential
	}
	now := v.Clock.Now()
	if c.Expiry == nil || c.IssuedAt == nil || c.Subject == "" || c.BusinessUnit == "" ||
		c.Expiry.Time().Sub(c.IssuedAt.Time()) > MaxLifetime ||
		c.ValidateWithLeeway(jwt.Expected{Issuer: Issuer, Time: now}, 0) != nil || c.IssuedAt.Time().After(now.Add(time.Minute)) {
		return httpapi.Principal{}, httpapi.ErrUnknownCredential
	}
	return httpapi.Principal{Name: fmt.Sprintf("recipient:%s/%s", c.BusinessUnit, c.Subject), Roles: []httpapi.Role{httpapi.RoleRead},
		Scope: automation.BusinessUnits(c.BusinessUnit), Recipient: c.Subject}, nil
}

// ParseKeys parses "kid=secret,kid2=secret2" (AUTOMATION_RECIPIENT_TOKEN_KEYS). Errors name
// the kid of a short secret, never the secret.
func ParseKeys(s string) (map[string][]byte, error) {
	out := map[string][]byte{}
	for _, pair := range strings.Split(s, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		kid, secret, ok := strings.Cut(pair, "=")
		if !ok || kid == "" {
			return nil, errors.New("recipienttoken: keys are kid=secret pairs separated by commas")
		}
		if len(secret) < MinSecretBytes {
			return nil, fmt.Errorf("recipienttoken: the secret of kid %q is shorter than %d bytes", kid, MinSecretBytes)
		}
		out[kid] = []byte(secret)
	}
	return out, nil
}
