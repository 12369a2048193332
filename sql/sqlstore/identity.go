package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

var _ store.KeyStore = (*Store)(nil)

func (s *Store) scanAPIKey(r rowScanner) (store.APIKey, error) {
	var k store.APIKey
	err := r.Scan(&k.Prefix, &k.SecretHash, &k.Name, &k.Roles, &k.BusinessUnits, s.t(&k.CreatedOn), &k.CreatedBy,
		s.nt(&k.ExpiresOn), s.nt(&k.RevokedOn), ns(&k.RevokedBy), ns(&k.ReplacedBy))
	return k, err
}

// APIKeyInsert implements store.KeyStore.
func (s *Store) APIKeyInsert(ctx context.Context, k store.APIKey) error {
	if k.Prefix == "" || k.SecretHash == "" || k.Name == "" || k.Roles == "" || k.CreatedOn.IsZero() {
		return fmt.Errorf("%s APIKeyInsert: prefix, hash, name, roles and the creation time are required", s.d.Name)
	}
	if _, err := s.exec(ctx, nil, "ApiKeyInsert", sql.Named("Prefix", k.Prefix), sql.Named("SecretHash", k.SecretHash),
		sql.Named("Name", k.Name), sql.Named("Roles", k.Roles), sql.Named("BusinessUnits", k.BusinessUnits),
		sql.Named("Now", s.tm(k.CreatedOn)), sql.Named("CreatedBy", k.CreatedBy)); err != nil {
		return fmt.Errorf("%s APIKeyInsert: %w", s.d.Name, err)
	}
	return nil
}

// APIKeyGet implements store.KeyStore.
func (s *Store) APIKeyGet(ctx context.Context, prefix string) (store.APIKey, error) {
	k, err := s.scanAPIKey(s.queryRow(ctx, nil, "ApiKeyGet", sql.Named("Prefix", prefix)))
	return k, s.oneErr("ApiKeyGet", err)
}

// APIKeyList implements store.KeyStore.
func (s *Store) APIKeyList(ctx context.Context, p store.APIKeyListParams) ([]store.APIKey, error) {
	if err := checkLimit("APIKeyList", p.Limit); err != nil {
		return nil, err
	}
	rows, err := s.query(ctx, nil, "ApiKeyList", sql.Named("After", p.After), sql.Named("Limit", p.Limit))
	if err != nil {
		return nil, fmt.Errorf("%s APIKeyList: %w", s.d.Name, err)
	}
	defer rows.Close()
	var out []store.APIKey
	for rows.Next() {
		k, err := s.scanAPIKey(rows)
		if err != nil {
			return nil, fmt.Errorf("%s APIKeyList: %w", s.d.Name, err)
		}
		out = append(out, k)
	}
	return out, rows.Err()
}

// APIKeyRevoke implements store.KeyStore.
func (s *Store) APIKeyRevoke(ctx context.Context, prefix string, now time.Time, operator string) error {
	return s.apiKeyChange(ctx, "APIKeyRevoke", "ApiKeyRevoke", prefix, sql.Named("Now", s.tm(now)), sql.Named("RevokedBy", operator))
}

// APIKeyExpire implements store.KeyStore.
func (s *Store) APIKeyExpire(ctx context.Context, prefix string, at time.Time, replacedBy string) error {
	return s.apiKeyChange(ctx, "APIKeyExpire", "ApiKeyExpire", prefix, sql.Named("ExpiresOn", s.tm(at)), sql.Named("ReplacedBy", replacedBy))
}

// apiKeyChange runs query, a change of the key with prefix (@Prefix, then args), for the
// store method what (which names a failure), and then reads the key back: ErrNotFound when
// there is no such key, so a change of a missing key is not taken for done.
func (s *Store) apiKeyChange(ctx context.Context, what, query, prefix string, args ...any) error {
	if _, err := s.exec(ctx, nil, query, append([]any{sql.Named("Prefix", prefix)}, args...)...); err != nil {
		return fmt.Errorf("%s %s: %w", s.d.Name, what, err)
	}
	_, err := s.APIKeyGet(ctx, prefix)
	return err
}

var _ store.SessionStore = (*Store)(nil)

// ConsoleSessionInsert implements store.SessionStore.
func (s *Store) ConsoleSessionInsert(ctx context.Context, cs store.ConsoleSession) error {
	if cs.SessionHash == "" || cs.Principal == "" || cs.CreatedOn.IsZero() || !cs.ExpiresOn.After(cs.CreatedOn) {
		return fmt.Errorf("%s ConsoleSessionInsert: hash, principal and a lifetime are required", s.d.Name)
	}
	if _, err := s.exec(ctx, nil, "ConsoleSessionInsert", sql.Named("SessionHash", cs.SessionHash), sql.Named("Principal", cs.Principal),
		sql.Named("Now", s.tm(cs.CreatedOn)), sql.Named("ExpiresOn", s.tm(cs.ExpiresOn)),
		sql.Named("KeyPrefix", nstr(cs.KeyPrefix)), sql.Named("Claims", nstr(cs.Claims))); err != nil {
		return fmt.Errorf("%s ConsoleSessionInsert: %w", s.d.Name, err)
	}
	return nil
}

// ConsoleSessionGet implements store.SessionStore.
func (s *Store) ConsoleSessionGet(ctx context.Context, hash string) (store.ConsoleSession, error) {
	var cs store.ConsoleSession
	err := s.queryRow(ctx, nil, "ConsoleSessionGet", sql.Named("SessionHash", hash)).Scan(&cs.SessionHash, &cs.Principal,
		s.t(&cs.CreatedOn), s.t(&cs.LastSeenOn), s.t(&cs.ExpiresOn), s.nt(&cs.EndedOn), ns(&cs.EndReason), ns(&cs.KeyPrefix), ns(&cs.Claims))
	return cs, s.oneErr("ConsoleSessionGet", err)
}

// ConsoleSessionTouch implements store.SessionStore.
func (s *Store) ConsoleSessionTouch(ctx context.Context, hash string, now time.Time) error {
	if _, err := s.exec(ctx, nil, "ConsoleSessionTouch", sql.Named("SessionHash", hash), sql.Named("Now", s.tm(now))); err != nil {
		return fmt.Errorf("%s ConsoleSessionTouch: %w", s.d.Name, err)
	}
	return nil
}

// ConsoleSessionEnd implements store.SessionStore.
func (s *Store) ConsoleSessionEnd(ctx context.Context, hash string, now time.Time, reason string) error {
	if _, err := s.exec(ctx, nil, "ConsoleSessionEnd", sql.Named("SessionHash", hash), sql.Named("Now", s.tm(now)),
		sql.Named("EndReason", reason)); err != nil {
		return fmt.Errorf("%s ConsoleSessionEnd: %w", s.d.Name, err)
	}
	return nil
}

// ConsoleSessionEndPrincipal implements store.SessionStore.
func (s *Store) ConsoleSessionEndPrincipal(ctx context.Context, principal string, now time.Time, reason string) (int, error) {
	res, err := s.exec(ctx, nil, "ConsoleSessionEndPrincipal", sql.Named("Principal", principal), sql.Named("Now", s.tm(now)),
		sql.Named("EndReason", reason))
	if err != nil {
		return 0, fmt.Errorf("%s ConsoleSessionEndPrincipal: %w", s.d.Name, err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}

// ConsoleSessionPurge implements store.SessionStore.
func (s *Store) ConsoleSessionPurge(ctx context.Context, before time.Time, limit int) (int, error) {
	return s.purgeBefore(ctx, "ConsoleSessionPurge", before, limit)
}
