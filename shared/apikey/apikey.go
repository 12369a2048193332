package apikey

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// DefaultOverlap is how long a rotated key keeps working beside its successor.
const DefaultOverlap = 24 * time.Hour

// MaxOverlap bounds a rotation's overlap (a key meant to end must end).
const MaxOverlap = 30 * 24 * time.Hour

// MaxNameBytes bounds a key's name.
const MaxNameBytes = 200

// keyPrefix starts every key, so a leaked key is recognisable (secret scanners) and a
// bearer that is not one is told apart without a lookup.
const keyPrefix = "ak_"

// Service issues, lists, revokes and rotates keys, and authenticates requests with them
// (httpapi.Authenticator). Safe for concurrent use.
type Service struct {
	Store store.KeyStore
	Clock automation.Clock
	// Throttle slows wrong secrets per key prefix (nil: none): after a few, a wrong secret
	// for that prefix answers 429 with Retry-After until the delay passes. The right secret
	// is never throttled, so nobody who only knows a prefix can lock its holder out.
	Throttle *httpapi.Throttle
}

var _ httpapi.Authenticator = (*Service)(nil)

// Key is a stored key as shown to an admin: never the secret or its hash.
type Key struct {
	Prefix        string         `json:"prefix"`
	Name          string         `json:"name"`
	Roles         []httpapi.Role `json:"roles"`
	BusinessUnits string         `json:"businessUnits"` // "*" or comma-separated ids
	CreatedOn     time.Time      `json:"createdOn"`     // UTC
	CreatedBy     string         `json:"createdBy"`
	ExpiresOn     *time.Time     `json:"expiresOn,omitempty"` // UTC: the end of a rotation's overlap
	RevokedOn     *time.Time     `json:"revokedOn,omitempty"` // UTC
	RevokedBy     string         `json:"revokedBy,omitempty"`
	ReplacedBy    string         `json:"replacedBy,omitempty"`
}

// Created is a new key: Secret is the whole key, shown this once.
type Created struct {
	Key
	Secret string `json:"key"`
}

// CreateParams names a new key.
type CreateParams struct {
	Name     string         // who holds it, 1..MaxNameBytes
	Roles    []httpapi.Role // at least one
	Units    string         // "*" or comma-separated business-unit ids (not both)
	Operator string         // who creates it (audit)
}

// Create issues a key. Errors: automation.Invalid naming name, roles or businessUnits.
func (s *Service) Create(ctx context.Context, p CreateParams) (Created, error) {
	var errs []error
	p.Name = strings.TrimSpace(p.Name)
	if p.Name == "" || len(p.Name) > MaxNameBytes || strings.ContainsFunc(p.Name, func(r rune) bool { return r < 0x20 || r == 0x7f }) {
		errs = append(errs, automation.Invalid("name", "is required: 1 to %d bytes, no control characters", MaxNameBytes))
	}
	roles, err := normalizeRoles(p.Roles)
	if err != nil {
		errs = append(errs, err)
	}
	units, err := normalizeUnits(p.Units)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return Created{}, automation.InvalidFields(errs...)
	}
	return s.insert(ctx, p.Name, roles, units, p.Operator)
}

func (s *Service) insert(ctx context.Context, name string, roles []httpapi.Role, units, operator string) (Created, error) {
	prefix, secret := make([]byte, 6), make([]byte, 32)
	_, _ = rand.Read(prefix) // crypto/rand.Read never fails (Go 1.24+)
	_, _ = rand.Read(secret)
	k := store.APIKey{Prefix: hex.EncodeToString(prefix), Name: name, Roles: joinRoles(roles), BusinessUnits: units,
		CreatedOn: s.Clock.Now().UTC().Truncate(time.Millisecond), CreatedBy: operator}
	whole := keyPrefix + k.Prefix + "_" + base64.RawURLEncoding.EncodeToString(secret)
	k.SecretHash = hashOf(whole)
	if err := s.Store.APIKeyInsert(ctx, k); err != nil {
		return Created{}, err
	}
	return Created{Key: view(k), Secret: whole}, nil
}

// Authenticate implements httpapi.Authenticator: the principal of a key that exists, is
// neither revoked nor past its rotation's end, and whose hash matches. Errors:
// httpapi.ErrUnknownCredential for anything else; store failures as they are.
func (s *Service) Authenticate(ctx context.Context, credential string) (httpapi.Principal, error) {
	k, err := s.check(ctx, credential)
	if err != nil {
		return httpapi.Principal{}, err
	}
	return principalOf(k), nil
}

func principalOf(k store.APIKey) httpapi.Principal {
	roles, _ := normalizeRoles(splitRoles(k.Roles))
	return httpapi.Principal{Name: "key:" + k.Name, Roles: roles, Scope: automation.ParseScope(k.BusinessUnits), KeyPrefix: k.Prefix}
}

// Current is the principal of the key with prefix as it stands now, for a console session
// that signed in with that key and is re-checked on every request: its roles and units
// today. Errors: httpapi.ErrUnknownCredential when the key is gone, revoked, or past its
// rotation's end; store failures as they are.
func (s *Service) Current(ctx context.Context, prefix string) (httpapi.Principal, error) {
	k, err := s.stored(ctx, prefix)
	if err != nil {
		return httpapi.Principal{}, err
	}
	if ended(k, s.Clock.Now()) {
		return httpapi.Principal{}, httpapi.ErrUnknownCredential
	}
	return principalOf(k), nil
}

func (s *Service) check(ctx context.Context, credential string) (store.APIKey, error) {
	prefix, ok := PrefixOf(credential)
	if !ok {
		return store.APIKey{}, httpapi.ErrUnknownCredential
	}
	k, err := s.stored(ctx, prefix)
	if err != nil {
		return store.APIKey{}, err
	}
	got, want := hashOf(credential), k.SecretHash
	if subtle.ConstantTimeCompare([]byte(got), []byte(want)) != 1 {
		if wait, blocked := s.Throttle.Blocked(prefix); blocked {
			return store.APIKey{}, httpapi.Throttled(wait, "attempts with API key "+prefix)
		}
		s.Throttle.Failed(prefix)
		return store.APIKey{}, httpapi.ErrUnknownCredential
	}
	if ended(k, s.Clock.Now()) {
		return store.APIKey{}, httpapi.ErrUnknownCredential
	}
	return k, nil
}

// stored is the key with prefix as stored. Errors: httpapi.ErrUnknownCredential when there
// is none; store failures as they are.
func (s *Service) stored(ctx context.Context, prefix string) (store.APIKey, error) {
	k, err := s.Store.APIKeyGet(ctx, prefix)
	if errors.Is(err, store.ErrNotFound) {
		return store.APIKey{}, httpapi.ErrUnknownCredential
	}
	return k, err
}

// ended reports a key revoked or past its rotation's end at now.
func ended(k store.APIKey, now time.Time) bool {
	return (k.RevokedOn != nil && !now.Before(*k.RevokedOn)) || (k.ExpiresOn != nil && !now.Before(*k.ExpiresOn))
}

// PrefixOf returns the public prefix of a string shaped like a key ("ak_<12 hex>_<43
// base64url>"), and whether it is one. Logs and rate limits name a key by it.
func PrefixOf(credential string) (string, bool) {
	rest, ok := strings.CutPrefix(credential, keyPrefix)
	if !ok {
		return "", false
	}
	prefix, secret, ok := strings.Cut(rest, "_")
	if !ok || len(prefix) != 12 || len(secret) != 43 {
		return "", false
	}
	if _, err := hex.DecodeString(prefix); err != nil || strings.ToLower(prefix) != prefix {
		return "", false
	}
	return prefix, true
}

// List returns up to limit keys after the prefix after, in prefix order.
func (s *Service) List(ctx context.Context, after string, limit int) ([]Key, error) {
	ks, err := s.Store.APIKeyList(ctx, store.APIKeyListParams{After: after, Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]Key, len(ks))
	for i, k := range ks {
		out[i] = view(k)
	}
	return out, nil
}

// Get returns the key with prefix. Errors: store.ErrNotFound.
func (s *Service) Get(ctx context.Context, prefix string) (Key, error) {
	k, err := s.Store.APIKeyGet(ctx, prefix)
	return view(k), err
}

// Revoke ends the key with prefix at once (a revoked key stays revoked). Errors:
// store.ErrNotFound.
func (s *Service) Revoke(ctx context.Context, prefix, operator string) (Key, error) {
	if err := s.Store.APIKeyRevoke(ctx, prefix, s.Clock.Now().UTC(), operator); err != nil {
		return Key{}, err
	}
	return s.Get(ctx, prefix)
}

// Rotate issues a successor of the key with prefix (same name, roles and units) and ends
// the old key after overlap (DefaultOverlap when 0; 0 < overlap <= MaxOverlap; a negative
// overlap ends it now), so both keys work while the holder switches. Errors:
// store.ErrNotFound; CodeConflict for a revoked or ended key (rotate a live key only), for a
// key rotated already (rotate its successor), and for the loser of concurrent rotations;
// automation.Invalid("overlap").
func (s *Service) Rotate(ctx context.Context, prefix string, overlap time.Duration, operator string) (Created, error) {
	switch {
	case overlap == 0:
		overlap = DefaultOverlap
	case overlap < 0:
		overlap = 0
	case overlap > MaxOverlap:
		return Created{}, automation.Invalid("overlap", "is at most %s", MaxOverlap)
	}
	old, err := s.Store.APIKeyGet(ctx, prefix)
	if err != nil {
		return Created{}, err
	}
	now := s.Clock.Now().UTC()
	switch {
	case old.RevokedOn != nil || (old.ExpiresOn != nil && !now.Before(*old.ExpiresOn)):
		return Created{}, automation.Errorf(automation.CodeConflict, "key %s is revoked or ended: create a new key instead", prefix)
	case old.ReplacedBy != "":
		return Created{}, automation.Errorf(automation.CodeConflict, "key %s was rotated already (its successor is %s): rotate the successor", prefix, old.ReplacedBy)
	}
	roles, _ := normalizeRoles(splitRoles(old.Roles))
	c, err := s.insert(ctx, old.Name, roles, old.BusinessUnits, operator)
	if err != nil {
		return Created{}, err
	}
	if err := s.Store.APIKeyExpire(ctx, prefix, now.Add(overlap), c.Prefix); err != nil {
		return Created{}, err
	}
	// Another rotation, or a revocation, may have come between the read above and the
	// expiry (which leaves a revoked key, and a later end than one already set, alone): the
	// old key names its one successor. A successor it does not name is revoked before anyone
	// sees it.
	after, err := s.Store.APIKeyGet(ctx, prefix)
	if err != nil {
		return Created{}, err
	}
	if after.ReplacedBy != c.Prefix || after.RevokedOn != nil {
		if err := s.Store.APIKeyRevoke(ctx, c.Prefix, now, operator); err != nil {
			return Created{}, err
		}
		return Created{}, automation.Errorf(automation.CodeConflict, "key %s was rotated or revoked at the same time: nothing was created", prefix)
	}
	return c, nil
}

func hashOf(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

func view(k store.APIKey) Key {
	roles, _ := normalizeRoles(splitRoles(k.Roles))
	return Key{Prefix: k.Prefix, Name: k.Name, Roles: roles, BusinessUnits: k.BusinessUnits, CreatedOn: k.CreatedOn,
		CreatedBy: k.CreatedBy, ExpiresOn: k.ExpiresOn, RevokedOn: k.RevokedOn, RevokedBy: k.RevokedBy, ReplacedBy: k.ReplacedBy}
}

// ParseRoles parses a comma-separated role list ("ingest,read").
func ParseRoles(s string) ([]httpapi.Role, error) { return normalizeRoles(splitRoles(s)) }

func splitRoles(s string) []httpapi.Role {
	var out []httpapi.Role
	for _, r := range strings.Split(s, ",") {
		if r = strings.TrimSpace(r); r != "" {
			out = append(out, httpapi.Role(r))
		}
	}
	return out
}

// normalizeRoles checks each role and returns them in httpapi.Roles order, once each.
func normalizeRoles(rs []httpapi.Role) ([]httpapi.Role, error) {
	seen := map[httpapi.Role]bool{}
	for _, r := range rs {
		if _, err := httpapi.ParseRole("roles", string(r)); err != nil {
			return nil, err
		}
		seen[r] = true
	}
	if len(seen) == 0 {
		return nil, automation.Invalid("roles", "at least one of ingest, read, operate, admin is required")
	}
	var out []httpapi.Role
	for _, r := range httpapi.Roles {
		if seen[r] {
			out = append(out, r)
		}
	}
	return out, nil
}

func joinRoles(rs []httpapi.Role) string {
	s := make([]string, len(rs))
	for i, r := range rs {
		s[i] = string(r)
	}
	return strings.Join(s, ",")
}

// normalizeUnits checks a key's scope: "*" alone, or ids (trimmed, sorted, once each).
func normalizeUnits(s string) (string, error) {
	var ids []string
	star := false
	for _, id := range strings.Split(s, ",") {
		id = strings.TrimSpace(id)
		switch {
		case id == "*":
			star = true
		case id != "":
			if len(id) > 100 || strings.ContainsFunc(id, func(r rune) bool { return r <= 0x20 || r == 0x7f }) {
				return "", automation.Invalid("businessUnits", "%q is not a business-unit id", id)
			}
			ids = append(ids, id)
		}
	}
	switch {
	case star && len(ids) > 0:
		return "", automation.Invalid("businessUnits", "mixes * with ids: give * alone, or the ids alone")
	case star:
		return "*", nil
	case len(ids) == 0:
		return "", automation.Invalid("businessUnits", "is required: business-unit ids, or * for every unit")
	}
	return automation.BusinessUnits(ids...).String(), nil
}
