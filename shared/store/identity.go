package store

import (
	"context"
	"time"
)

// APIKey is a stored API key (docs/security.md#api-keys): never the key itself, only the
// SHA-256 of it and its public prefix.
type APIKey struct {
	Prefix        string // public id, unique; the key reads "ak_<Prefix>_<secret>"
	SecretHash    string // lower-case hex SHA-256 of the whole key
	Name          string // who holds it; several keys may share a name (a rotation's overlap)
	Roles         string // comma-separated roles
	BusinessUnits string // the key's scope: "*" or comma-separated ids
	CreatedOn     time.Time
	CreatedBy     string
	ExpiresOn     *time.Time // UTC; set when a rotation ends the key's overlap
	RevokedOn     *time.Time // UTC
	RevokedBy     string
	ReplacedBy    string // the prefix of the key a rotation made, "" when none
}

// APIKeyListParams pages the keys in Prefix order.
type APIKeyListParams struct {
	After string // the last prefix of the previous page, "" for the first
	Limit int    // 1..MaxBatch
}

// KeyStore keeps API keys.
type KeyStore interface {
	// APIKeyInsert stores a new key (CreatedOn is its Now, UTC).
	APIKeyInsert(ctx context.Context, k APIKey) error
	// APIKeyGet returns the key with prefix; ErrNotFound when none.
	APIKeyGet(ctx context.Context, prefix string) (APIKey, error)
	// APIKeyList returns up to p.Limit keys after p.After, in Prefix order.
	APIKeyList(ctx context.Context, p APIKeyListParams) ([]APIKey, error)
	// APIKeyRevoke marks the key revoked at now (UTC) by operator; a key revoked before
	// keeps its first revocation. ErrNotFound when no key has prefix.
	APIKeyRevoke(ctx context.Context, prefix string, now time.Time, operator string) error
	// APIKeyExpire ends a key at `at` (UTC; never later than an end already set) and names
	// the key that replaces it. ErrNotFound when no key has prefix; a revoked key is left alone.
	APIKeyExpire(ctx context.Context, prefix string, at time.Time, replacedBy string) error
}

// ConsoleSession is a server-side console session (docs/security.md#sessions): the
// SHA-256 of its cookie, never the cookie.
type ConsoleSession struct {
	SessionHash string // lower-case hex SHA-256 of the cookie value
	Principal   string
	CreatedOn   time.Time  // UTC
	LastSeenOn  time.Time  // UTC: the idle timeout counts from here
	ExpiresOn   time.Time  // UTC: the absolute lifetime's end
	EndedOn     *time.Time // UTC
	EndReason   string     // "logout", "revoked", "admin", "roles"; "" while live
	// KeyPrefix is the API key the session signed in with ("" otherwise): every request
	// re-checks that key, so revoking it or the end of its rotation overlap ends the session.
	KeyPrefix string
	// Claims is the person's identity-provider claims the session signed in with (JSON; ""
	// for other sessions), mapped to roles and units again on every request.
	Claims string
}

// SessionStore keeps console sessions.
type SessionStore interface {
	// ConsoleSessionInsert stores a new live session (CreatedOn and LastSeenOn are now).
	ConsoleSessionInsert(ctx context.Context, s ConsoleSession) error
	// ConsoleSessionGet returns the session with hash; ErrNotFound when none.
	ConsoleSessionGet(ctx context.Context, hash string) (ConsoleSession, error)
	// ConsoleSessionTouch moves a live session's LastSeenOn to now (never backwards).
	ConsoleSessionTouch(ctx context.Context, hash string, now time.Time) error
	// ConsoleSessionEnd ends a session at now for reason (the first end is kept).
	ConsoleSessionEnd(ctx context.Context, hash string, now time.Time, reason string) error
	// ConsoleSessionEndPrincipal ends every live session of principal and returns how many
	// it ended.
	ConsoleSessionEndPrincipal(ctx context.Context, principal string, now time.Time, reason string) (int, error)
	// ConsoleSessionPurge deletes up to limit (1..MaxBatch) sessions whose absolute
	// lifetime ended before `before`, and returns how many.
	ConsoleSessionPurge(ctx context.Context, before time.Time, limit int) (int, error)
}
