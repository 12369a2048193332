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
	if _, err := s.exec(ctx, nil, "ApiKeyRevoke", sql.Named("Prefix", prefix), sql.Named("Now", s.tm(now)),
		sql.Named("RevokedBy", operator)); err != nil {
		return fmt.Errorf("%s APIKeyRevoke: %w", s.d.Name, err)
	}
	_, err := s.APIKeyGet(ctx, prefix)
	return err
}

// APIKeyExpire implements store.KeyStore.
func (s *Store) APIKeyExpire(ctx context.Context, prefix string, at time.Time, replacedBy string) error {
	if _, err := s.exec(ctx, nil, "ApiKeyExpire", sql.Named("Prefix", prefix), sql.Named("ExpiresOn", s.tm(at)),
		sql.Named("ReplacedBy", replacedBy)); err != nil {
		return fmt.Errorf("%s APIKeyExpire: %w", s.d.Name, err)
	}
	_, err := s.APIKeyGet(ctx, prefix)
	return err
}
