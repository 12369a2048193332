// Package apikey issues and checks the API keys of domain apps and scripts
// (docs/security.md#api-keys).
//
// A key reads "ak_<prefix>_<secret>": the prefix (12 hex digits, 48 random bits) is its
// public id, shown by list and used to revoke or rotate it; the secret is 256 random bits
// (43 base64url characters). Only the SHA-256 of the whole key is stored, with the prefix
// for lookup, so the key is printed once, at creation, and a database copy opens nothing.
// A key carries its roles (httpapi.Role) and its business-unit scope; a request's scope
// header may narrow that scope, never widen it.
//
// Life of a key:
//
//	created ──revoke──▶ revoked (refused at once, for good)
//	   │
//	   └──rotate──▶ expiring at now+overlap (both keys work until then) ──▶ expired
//
// Every check reads the key's row, so a revocation takes effect on the next request of
// every instance; no cache holds a revoked key.
package apikey
