package sqlstore

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

var _ store.IdempotencyStore = (*Store)(nil)

func (s *Store) scanIdempotency(r rowScanner) (store.IdempotencyRecord, error) {
	var (
		rec    store.IdempotencyRecord
		status string
		code   sql.NullInt64
	)
	err := r.Scan(&rec.Scope, &rec.Key, &rec.RequestHash, &status, &code, ns(&rec.ResponseHeadersJSON),
		ns(&rec.ResponseBody), s.nt(&rec.LeaseExpiresOn), s.t(&rec.CreatedOn), s.nt(&rec.CompletedOn))
	rec.Completed = status == "Completed"
	rec.ResponseStatus = int(code.Int64)
	return rec, err
}

// IdempotencyBegin implements store.IdempotencyStore in one transaction: insert an
// in-progress record, else take over a crashed one (same hash, lease expired), else return
// the existing record.
func (s *Store) IdempotencyBegin(ctx context.Context, p store.IdempotencyBeginParams) (store.IdempotencyBeginResult, error) {
	if p.Scope == "" || p.Key == "" || p.RequestHash == "" || p.Lease <= 0 {
		return store.IdempotencyBeginResult{}, fmt.Errorf("%s IdempotencyBegin: scope, key, request hash and a positive lease are required", s.d.Name)
	}
	var out store.IdempotencyBeginResult
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		out = store.IdempotencyBeginResult{}
		args := []any{sql.Named("Scope", p.Scope), sql.Named("IdempotencyKey", p.Key),
			sql.Named("RequestHash", p.RequestHash), sql.Named("LeaseExpiresOn", s.tm(p.Now.Add(p.Lease))),
			sql.Named("Now", s.tm(p.Now))}
		for _, name := range []string{"IdempotencyInsert", "IdempotencyTakeOver"} {
			if n, err := s.execCount(ctx, tx, name, args...); err != nil {
				return err
			} else if n == 1 {
				out.Started = true
				break
			}
		}
		rec, err := s.scanIdempotency(s.queryRow(ctx, tx, "IdempotencyGet",
			sql.Named("Scope", p.Scope), sql.Named("IdempotencyKey", p.Key)))
		if err = s.oneErr("IdempotencyGet", err); err != nil {
			return err
		}
		out.Record = rec
		return nil
	})
	return out, err
}

// IdempotencyComplete implements store.IdempotencyStore.
func (s *Store) IdempotencyComplete(ctx context.Context, p store.IdempotencyCompleteParams) error {
	n, err := s.execCount(ctx, nil, "IdempotencyComplete",
		sql.Named("Scope", p.Scope), sql.Named("IdempotencyKey", p.Key), sql.Named("RequestHash", p.RequestHash),
		sql.Named("ResponseStatus", p.ResponseStatus), sql.Named("ResponseHeadersJson", p.ResponseHeadersJSON),
		sql.Named("ResponseBody", p.ResponseBody), sql.Named("Now", s.tm(p.Now)), sql.Named("LeaseExpiresOn", s.tm(p.LeaseExpiresOn)))
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%s IdempotencyComplete: %w", s.d.Name, store.ErrNotFound)
	}
	return nil
}

// IdempotencyRelease implements store.IdempotencyStore.
func (s *Store) IdempotencyRelease(ctx context.Context, p store.IdempotencyReleaseParams) error {
	if _, err := s.exec(ctx, nil, "IdempotencyRelease", sql.Named("Scope", p.Scope),
		sql.Named("IdempotencyKey", p.Key), sql.Named("RequestHash", p.RequestHash),
		sql.Named("LeaseExpiresOn", s.tm(p.LeaseExpiresOn))); err != nil {
		return fmt.Errorf("%s IdempotencyRelease: %w", s.d.Name, err)
	}
	return nil
}

// IdempotencyPurge implements store.IdempotencyStore.
func (s *Store) IdempotencyPurge(ctx context.Context, before time.Time, limit int) (int, error) {
	return s.purgeBefore(ctx, "IdempotencyPurge", before, limit)
}
