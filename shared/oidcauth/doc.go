// Package oidcauth validates OpenID Connect bearer tokens (JWT access tokens of Entra ID or
// any OIDC provider) for the HTTP APIs (docs/security.md#openid-connect), with
// github.com/coreos/go-oidc/v3: the issuer's discovery document names its JWKS, and every
// token's signature, issuer, audience, expiry and not-before are checked against it. Only
// asymmetric algorithms are accepted (RS256, PS256, ES256), so "alg": "none" and an HS256
// token signed with the issuer's public key as the HMAC secret are refused.
//
// Roles and units come from the token's claims, mapped by configuration: RoleClaim (Entra
// app roles: "roles") holds role names, as "read" or "Automation.Read" (the prefix and case
// are ignored); UnitsClaim holds the business units, as an array of ids or one string
// ("bu-a,bu-b" or "*"). A valid token without roles is a principal that may do nothing
// (403); without units it sees no unit.
package oidcauth
