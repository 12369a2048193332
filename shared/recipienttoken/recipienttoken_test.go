package recipienttoken_test

import (
	"context"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	jose "github.com/go-jose/go-jose/v4"
	"github.com/go-jose/go-jose/v4/jwt"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/recipienttoken"
)

const secret = "a-recipient-token-secret-of-32-bytes-or-more"

var now = time.Date(2026, 12, 4, 8, 0, 0, 0, time.UTC)

func sign(t *testing.T, kid, key string, c map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: jose.HS256, Key: []byte(key)}, (&jose.SignerOptions{}).WithHeader("kid", kid))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := jwt.Signed(s).Claims(c).Serialize()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// A minted token is its recipient in its unit with the role read; tokens signed otherwise,
// tampered, living too long, lacking a claim, or of another issuer are unknown credentials.
func TestVerify(t *testing.T) {
	v := &recipienttoken.Verifier{Keys: map[string][]byte{"k1": []byte(secret), "k0": []byte(secret + "-old")}, Clock: automation.NewManualClock(now)}
	good, err := recipienttoken.Mint("k1", []byte(secret), "bu-a", "r1", now, 10*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	p, err := v.Authenticate(context.Background(), good)
	if err != nil || p.Recipient != "r1" || p.Scope.String() != "bu-a" || len(p.Roles) != 1 || p.Roles[0] != httpapi.RoleRead || !v.Is(good) {
		t.Fatalf("%+v %v", p, err)
	}
	// Rotation: a token of the previous secret still works while its kid is held.
	old, _ := recipienttoken.Mint("k0", []byte(secret+"-old"), "bu-a", "r1", now, time.Minute)
	if _, err := v.Authenticate(context.Background(), old); err != nil {
		t.Fatalf("the previous kid: %v", err)
	}
	base := map[string]any{"iss": recipienttoken.Issuer, "sub": "r1", "bu": "bu-a", "iat": now.Unix(), "exp": now.Add(time.Minute).Unix()}
	with := func(k string, val any) map[string]any {
		c := map[string]any{}
		for k, v := range base {
			c[k] = v
		}
		if val == nil {
			delete(c, k)
		} else {
			c[k] = val
		}
		return c
	}
	parts := strings.Split(good, ".")
	b64 := base64.RawURLEncoding.EncodeToString
	for name, tok := range map[string]string{
		"another secret, same kid": sign(t, "k1", secret+"-x", base),
		"unknown kid":              sign(t, "k9", secret, base),
		"expired":                  sign(t, "k1", secret, with("exp", now.Add(-time.Second).Unix())),
		"lives two hours":          sign(t, "k1", secret, with("exp", now.Add(2*time.Hour).Unix())),
		"no exp":                   sign(t, "k1", secret, with("exp", nil)),
		"no unit":                  sign(t, "k1", secret, with("bu", nil)),
		"no recipient":             sign(t, "k1", secret, with("sub", nil)),
		"another issuer":           sign(t, "k1", secret, with("iss", "someone")),
		"issued later":             sign(t, "k1", secret, with("iat", now.Add(time.Hour).Unix())),
		"alg none":                 b64([]byte(`{"alg":"none","kid":"k1"}`)) + "." + parts[1] + ".",
		"tampered":                 parts[0] + "." + b64([]byte(`{"iss":"automation-recipient","sub":"r2","bu":"bu-a"}`)) + "." + parts[2],
		"not a JWT":                "ak_x",
	} {
		if _, err := v.Authenticate(context.Background(), tok); !errors.Is(err, httpapi.ErrUnknownCredential) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if _, err := recipienttoken.ParseKeys("k1=short"); err == nil || strings.Contains(err.Error(), "=short") {
		t.Errorf("a short secret: %v", err)
	}
}
