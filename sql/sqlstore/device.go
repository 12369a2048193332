package sqlstore

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/automation-platform/automation/shared/store"
)

var _ store.PushDeviceStore = (*Store)(nil)

// tokenHash is the PushDevice key of a token: the lower-case hex of its SHA-256.
func tokenHash(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

func (s *Store) scanDevice(r rowScanner) (store.PushDevice, error) {
	var d store.PushDevice
	var platform string
	err := r.Scan(&d.BusinessUnitID, &d.CustomerID, &d.Token, &platform, &d.App, s.t(&d.RegisteredOn), s.t(&d.UpdatedOn),
		s.nt(&d.RetiredOn), &d.RetiredReason, &d.Version)
	d.Platform = store.PushPlatform(platform)
	return d, err
}

func (s *Store) deviceGet(ctx context.Context, tx *sql.Tx, bu, customer, token string) (store.PushDevice, error) {
	d, err := s.scanDevice(s.queryRow(ctx, tx, "PushDeviceGetForUpdate", sql.Named("BusinessUnitId", bu),
		sql.Named("CustomerId", customer), sql.Named("TokenHash", tokenHash(token))))
	return d, s.oneErr("PushDeviceGetForUpdate", err)
}

// PushDeviceRegister implements store.PushDeviceStore in one transaction: read the row
// (locked), retire the token under other customers, then insert, re-activate or leave it.
func (s *Store) PushDeviceRegister(ctx context.Context, p store.PushDeviceRegisterParams) (store.PushDeviceRegisterResult, error) {
	switch {
	case p.BusinessUnitID == "" || p.CustomerID == "" || p.Token == "":
		return store.PushDeviceRegisterResult{}, fmt.Errorf("%s PushDeviceRegister: business unit, customer and token are required", s.d.Name)
	case len(p.Token) > store.MaxPushTokenBytes:
		return store.PushDeviceRegisterResult{}, fmt.Errorf("%s PushDeviceRegister: token over %d bytes: %w", s.d.Name, store.MaxPushTokenBytes, store.ErrValueTooLarge)
	case !p.Platform.Valid():
		return store.PushDeviceRegisterResult{}, fmt.Errorf("%s PushDeviceRegister: unknown platform %q", s.d.Name, p.Platform)
	}
	key := []any{sql.Named("BusinessUnitId", p.BusinessUnitID), sql.Named("CustomerId", p.CustomerID), sql.Named("TokenHash", tokenHash(p.Token))}
	var out store.PushDeviceRegisterResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = store.PushDeviceRegisterResult{}
		cur, err := s.deviceGet(ctx, tx, p.BusinessUnitID, p.CustomerID, p.Token)
		exists := err == nil
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		if exists && cur.RetiredOn == nil && cur.Platform == p.Platform && cur.App == p.App {
			out = store.PushDeviceRegisterResult{Device: cur}
			return nil
		}
		if !exists || cur.RetiredOn != nil {
			var n int64
			if err := s.queryRow(ctx, tx, "PushDeviceCountActive", key[0], key[1]).Scan(&n); err != nil {
				return fmt.Errorf("%s PushDeviceCountActive: %w", s.d.Name, err)
			}
			if n >= store.MaxPushDevicesPerCustomer {
				return fmt.Errorf("%s PushDeviceRegister: customer %q has %d active devices, the most allowed: %w", s.d.Name, p.CustomerID, n, store.ErrConflict)
			}
		}
		if _, err := s.exec(ctx, tx, "PushDeviceRetireMoved", append(key, sql.Named("Now", s.tm(p.Now)))...); err != nil {
			return fmt.Errorf("%s PushDeviceRetireMoved: %w", s.d.Name, err)
		}
		name := "PushDeviceInsert"
		args := append(key, sql.Named("Platform", string(p.Platform)), sql.Named("App", p.App), sql.Named("Now", s.tm(p.Now)))
		if exists {
			name = "PushDeviceReactivate"
		} else {
			args = append(args, sql.Named("Token", p.Token))
		}
		if _, err := s.exec(ctx, tx, name, args...); err != nil {
			return fmt.Errorf("%s %s: %w", s.d.Name, name, err)
		}
		d, err := s.deviceGet(ctx, tx, p.BusinessUnitID, p.CustomerID, p.Token)
		if err != nil {
			return err
		}
		out = store.PushDeviceRegisterResult{Device: d, Created: !exists || cur.RetiredOn != nil}
		return nil
	})
	return out, err
}

// PushDeviceRetire implements store.PushDeviceStore.
func (s *Store) PushDeviceRetire(ctx context.Context, p store.PushDeviceRetireParams) (store.PushDevice, error) {
	if p.Reason == "" {
		return store.PushDevice{}, fmt.Errorf("%s PushDeviceRetire: a reason is required", s.d.Name)
	}
	var out store.PushDevice
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		n, err := s.execCount(ctx, tx, "PushDeviceRetire", sql.Named("BusinessUnitId", p.BusinessUnitID), sql.Named("CustomerId", p.CustomerID),
			sql.Named("TokenHash", tokenHash(p.Token)), sql.Named("Reason", p.Reason), sql.Named("Now", s.tm(p.Now)))
		if err != nil {
			return err
		}
		if n != 1 {
			return fmt.Errorf("%s PushDeviceRetire: no active device: %w", s.d.Name, store.ErrNotFound)
		}
		out, err = s.deviceGet(ctx, tx, p.BusinessUnitID, p.CustomerID, p.Token)
		return err
	})
	return out, err
}

// PushDeviceList implements store.PushDeviceStore.
func (s *Store) PushDeviceList(ctx context.Context, businessUnitID, customerID string) ([]store.PushDevice, error) {
	return queryAll(ctx, s, nil, "PushDeviceList", s.scanDevice, sql.Named("BusinessUnitId", businessUnitID),
		sql.Named("CustomerId", customerID), sql.Named("Limit", store.MaxPushDevicesPerCustomer))
}
