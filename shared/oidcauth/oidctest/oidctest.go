package oidctest

import (
	"encoding/json"
	"testing"

	jose "github.com/go-jose/go-jose/v4"
)

// Sign returns claims as a compact JWS signed with key under alg, its header carrying kid
// and typ ("JWT" as Entra ID sends, "at+jwt" as RFC 9068 access tokens). key is what
// jose.SigningKey takes (an *rsa.PrivateKey for RS256 and PS256, bytes for HS256). A
// signing failure fails the test.
func Sign(t testing.TB, alg jose.SignatureAlgorithm, key any, kid, typ string, claims map[string]any) string {
	t.Helper()
	s, err := jose.NewSigner(jose.SigningKey{Algorithm: alg, Key: key}, (&jose.SignerOptions{}).WithHeader("kid", kid).WithType(jose.ContentType(typ)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(claims)
	if err != nil {
		t.Fatal(err)
	}
	jws, err := s.Sign(b)
	if err != nil {
		t.Fatal(err)
	}
	out, err := jws.CompactSerialize()
	if err != nil {
		t.Fatal(err)
	}
	return out
}
