// Package recipienttoken mints and checks recipient tokens: short-lived credentials a
// member app (a customer's browser or phone) uses for its own inbox, without an API key
// (docs/security.md#recipient-tokens; issue 37, item 4).
//
// A recipient token is a JWT (HS256, github.com/go-jose/go-jose/v4) with claims
//
//	{"iss": "automation-recipient", "sub": "<recipient id>", "bu": "<business unit>",
//	 "iat": <unix s>, "exp": <unix s>}
//
// and a "kid" header naming the shared secret that signed it. The domain app's backend mints
// it offline with the secret (any JWT library will do, in the style of Novu's subscriber
// hash), or with Mint. Secrets rotate: the verifier holds every current kid, so a new secret is
// added, the apps switch to it, then the old one is removed. A token lives at most
// MaxLifetime. The token opens only that recipient's inbox routes in that unit, with the role
// read (httpapi.Principal.Recipient).
package recipienttoken
