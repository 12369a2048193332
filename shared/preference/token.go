package preference

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// Unsubscribe is what a one-click unsubscribe token names: the recipient of one unit, on
// one channel, for one category ("" = every marketing category).
type Unsubscribe struct {
	BusinessUnitID string `json:"u"`
	RecipientID    string `json:"r"`
	Channel        string `json:"c"`
	Category       string `json:"k,omitempty"`
}

// ErrBadToken: the token is malformed or its signature does not match.
var ErrBadToken = errors.New("preference: unsubscribe token is malformed or not signed with this server's secret")

// UnsubscribeToken signs u with secret: base64url(JSON of u) "." base64url(HMAC-SHA256 of
// the first part, keyed with secret). The token is the link's only credential (RFC 8058's
// one-click POST carries no other), so it names exactly what it opts out; it does not
// expire (an unsubscribe link in an old message must still work).
func UnsubscribeToken(secret []byte, u Unsubscribe) string {
	u.RecipientID = NormalizeRecipient(u.RecipientID)
	body, _ := json.Marshal(u)
	p := base64.RawURLEncoding.EncodeToString(body)
	return p + "." + base64.RawURLEncoding.EncodeToString(sign(secret, p))
}

// ParseUnsubscribeToken verifies tok with secret (in constant time) and returns what it
// names. Errors: ErrBadToken.
func ParseUnsubscribeToken(secret []byte, tok string) (Unsubscribe, error) {
	p, sig, ok := strings.Cut(tok, ".")
	if !ok || len(secret) == 0 {
		return Unsubscribe{}, ErrBadToken
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, sign(secret, p)) {
		return Unsubscribe{}, ErrBadToken
	}
	body, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		return Unsubscribe{}, ErrBadToken
	}
	var u Unsubscribe
	if json.Unmarshal(body, &u) != nil || u.BusinessUnitID == "" || u.RecipientID == "" || u.Channel == "" {
		return Unsubscribe{}, ErrBadToken
	}
	return u, nil
}

func sign(secret []byte, p string) []byte {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte("automation-unsubscribe-v1\x00" + p))
	return m.Sum(nil)
}
