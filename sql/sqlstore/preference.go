package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/automation-platform/automation/shared/store"
)

var _ store.PreferenceStore = (*Store)(nil)

func (s *Store) scanPreference(r rowScanner) (store.RecipientPreference, error) {
	var p store.RecipientPreference
	err := r.Scan(&p.BusinessUnitID, &p.RecipientID, &p.Channel, &p.Category, &p.OptedIn, &p.Source, &p.ChangedBy, s.t(&p.ChangedOn), &p.Version)
	return p, err
}

func (s *Store) scanQuietHours(r rowScanner) (store.QuietHoursRow, error) {
	var q store.QuietHoursRow
	var start, end, zone sql.NullString
	err := r.Scan(&q.BusinessUnitID, &q.RecipientID, &start, &end, &zone, &q.ChangedBy, s.t(&q.ChangedOn), &q.Version)
	q.Start, q.End, q.TimeZoneID = strings.TrimSpace(start.String), strings.TrimSpace(end.String), zone.String
	return q, err
}

func checkRecipientKey(op, bu, recipient string) error {
	if bu == "" || recipient == "" && op != "QuietHours" {
		return fmt.Errorf("%s: business unit and recipient are required", op)
	}
	if utf8.RuneCountInString(recipient) > store.MaxRecipientIDLength {
		return fmt.Errorf("%s: recipient id over %d characters: %w", op, store.MaxRecipientIDLength, store.ErrValueTooLarge)
	}
	return nil
}

// PreferenceSet implements store.PreferenceStore in one transaction: each item is read
// (locked), then inserted, changed, or left when it already holds the value.
func (s *Store) PreferenceSet(ctx context.Context, p store.PreferenceSetParams) ([]store.RecipientPreference, error) {
	if err := checkRecipientKey("PreferenceSet", p.BusinessUnitID, p.RecipientID); err != nil {
		return nil, err
	}
	if len(p.Items) > store.MaxPreferencesPerRecipient {
		return nil, fmt.Errorf("PreferenceSet: %d items, at most %d: %w", len(p.Items), store.MaxPreferencesPerRecipient, store.ErrConflict)
	}
	for _, it := range p.Items {
		if it.Channel == "" || it.Category == "" || it.Source == "" || it.ChangedBy == "" {
			return nil, errors.New("PreferenceSet: every item needs a channel, category, source and changedBy")
		}
	}
	var out []store.RecipientPreference
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		key := []any{sql.Named("BusinessUnitId", p.BusinessUnitID), sql.Named("RecipientId", p.RecipientID)}
		var inserted int64
		for _, it := range p.Items {
			args := append(append([]any{}, key...), sql.Named("Channel", it.Channel), sql.Named("Category", it.Category))
			cur, err := s.scanPreference(s.queryRow(ctx, tx, "PreferenceGet", args...))
			if err = s.oneErr("PreferenceGet", err); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			exists := err == nil
			if exists && cur.OptedIn == it.OptedIn {
				continue // idempotent: the stored change stands
			}
			name := "PreferenceUpdate"
			if !exists {
				if inserted == 0 {
					var n int64
					if err := s.queryRow(ctx, tx, "PreferenceCount", key...).Scan(&n); err != nil {
						return fmt.Errorf("%s PreferenceCount: %w", s.d.Name, err)
					}
					inserted = n
				}
				if inserted >= store.MaxPreferencesPerRecipient {
					return fmt.Errorf("PreferenceSet: recipient has %d preferences, the most allowed: %w", inserted, store.ErrConflict)
				}
				inserted++
				name = "PreferenceInsert"
			}
			args = append(args, sql.Named("OptedIn", boolInt(it.OptedIn)), sql.Named("Source", it.Source),
				sql.Named("ChangedBy", it.ChangedBy), sql.Named("Now", s.tm(p.Now)))
			if _, err := s.exec(ctx, tx, name, args...); err != nil {
				return fmt.Errorf("%s %s: %w", s.d.Name, name, err)
			}
		}
		var err error
		out, err = queryAll(ctx, s, tx, "PreferenceList", s.scanPreference, append(key, sql.Named("Limit", store.MaxPreferencesPerRecipient))...)
		return err
	})
	return out, err
}

// PreferenceList implements store.PreferenceStore.
func (s *Store) PreferenceList(ctx context.Context, businessUnitID, recipientID string) ([]store.RecipientPreference, error) {
	return queryAll(ctx, s, nil, "PreferenceList", s.scanPreference, sql.Named("BusinessUnitId", businessUnitID),
		sql.Named("RecipientId", recipientID), sql.Named("Limit", store.MaxPreferencesPerRecipient))
}

// QuietHoursPut implements store.PreferenceStore: read (locked), then insert or update.
func (s *Store) QuietHoursPut(ctx context.Context, r store.QuietHoursRow) (store.QuietHoursRow, error) {
	if err := checkRecipientKey("QuietHours", r.BusinessUnitID, r.RecipientID); err != nil {
		return store.QuietHoursRow{}, err
	}
	if (r.Start == "") != (r.End == "") || r.ChangedBy == "" {
		return store.QuietHoursRow{}, errors.New("QuietHoursPut: both ends or neither, and changedBy, are required")
	}
	if r.RecipientID == "" && r.Start == "" {
		return store.QuietHoursRow{}, errors.New("QuietHoursPut: a business unit's row needs a window")
	}
	key := []any{sql.Named("BusinessUnitId", r.BusinessUnitID), sql.Named("RecipientId", r.RecipientID)}
	var out store.QuietHoursRow
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		_, err := s.scanQuietHours(s.queryRow(ctx, tx, "QuietHoursGet", key...))
		if err = s.oneErr("QuietHoursGet", err); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		name := "QuietHoursUpdate"
		if err != nil {
			name = "QuietHoursInsert"
		}
		args := append(append([]any{}, key...), sql.Named("StartLocal", nstr(r.Start)), sql.Named("EndLocal", nstr(r.End)),
			sql.Named("TimeZoneId", nstr(r.TimeZoneID)), sql.Named("ChangedBy", r.ChangedBy), sql.Named("Now", s.tm(r.ChangedOn)))
		if _, err := s.exec(ctx, tx, name, args...); err != nil {
			return fmt.Errorf("%s %s: %w", s.d.Name, name, err)
		}
		out, err = s.scanQuietHours(s.queryRow(ctx, tx, "QuietHoursGet", key...))
		return s.oneErr("QuietHoursGet", err)
	})
	return out, err
}

// QuietHoursGet implements store.PreferenceStore.
func (s *Store) QuietHoursGet(ctx context.Context, businessUnitID, recipientID string) (store.QuietHoursRow, error) {
	q, err := s.scanQuietHours(s.queryRow(ctx, nil, "QuietHoursGet", sql.Named("BusinessUnitId", businessUnitID), sql.Named("RecipientId", recipientID)))
	return q, s.oneErr("QuietHoursGet", err)
}

// QuietHoursDelete implements store.PreferenceStore.
func (s *Store) QuietHoursDelete(ctx context.Context, businessUnitID, recipientID string, audit *store.OperatorAudit) error {
	if err := validAudit(audit); err != nil {
		return err
	}
	return s.inTx(ctx, func(tx *sql.Tx) error {
		res, err := s.exec(ctx, tx, "QuietHoursDelete", sql.Named("BusinessUnitId", businessUnitID), sql.Named("RecipientId", recipientID))
		if err != nil {
			return fmt.Errorf("%s QuietHoursDelete: %w", s.d.Name, err)
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return store.ErrNotFound
		}
		if audit != nil {
			return s.operatorAuditInsert(ctx, tx, *audit)
		}
		return nil
	})
}
