// Package oidctest signs JSON Web Tokens for tests of OIDC bearer tokens and sign-ins: the
// tokens an issuer fixture on 127.0.0.1 (a test's own discovery document and JWKS) hands
// out, or a forged one (another key, another algorithm). Imported by tests only.
package oidctest
