package sqlstore

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// BusinessUnitUpsert implements store.ReminderStore.
func (s *Store) BusinessUnitUpsert(ctx context.Context, bu store.BusinessUnit) error {
	_, err := s.exec(ctx, nil, "BusinessUnitUpsert",
		sql.Named("Id", bu.ID), sql.Named("Name", bu.Name), sql.Named("TimeZoneId", bu.TimeZoneID))
	if err != nil {
		return fmt.Errorf("%s BusinessUnitUpsert: %w", s.d.Name, err)
	}
	return nil
}

// BusinessUnitGet implements store.ReminderStore.
func (s *Store) BusinessUnitGet(ctx context.Context, id string) (store.BusinessUnit, error) {
	var bu store.BusinessUnit
	err := s.queryRow(ctx, nil, "BusinessUnitGet", sql.Named("Id", id)).Scan(&bu.ID, &bu.Name, &bu.TimeZoneID)
	return bu, s.oneErr("BusinessUnitGet", err)
}

func (s *Store) oneErr(name string, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, sql.ErrNoRows):
		return store.ErrNotFound
	default:
		return fmt.Errorf("%s %s: %w", s.d.Name, name, err)
	}
}

// ReminderSettingUpsert implements store.ReminderStore.
func (s *Store) ReminderSettingUpsert(ctx context.Context, r store.ReminderSettingRecord) error {
	_, err := s.exec(ctx, nil, "ReminderSettingUpsert",
		sql.Named("Guid", r.Guid), sql.Named("BusinessUnitId", r.BusinessUnitID),
		sql.Named("SourceType", r.SourceType), sql.Named("TriggerType", r.TriggerType),
		sql.Named("IsActive", boolInt(r.IsActive)), sql.Named("Body", r.Body),
		sql.Named("Version", r.Version), sql.Named("UpdatedOn", s.tm(r.UpdatedOn)))
	if err != nil {
		return fmt.Errorf("%s ReminderSettingUpsert: %w", s.d.Name, err)
	}
	return nil
}

func (s *Store) scanSetting(r rowScanner) (store.ReminderSettingRecord, error) {
	var rec store.ReminderSettingRecord
	err := r.Scan(&rec.Guid, &rec.BusinessUnitID, &rec.SourceType, &rec.TriggerType, &rec.IsActive,
		&rec.Body, &rec.Version, s.t(&rec.UpdatedOn))
	return rec, err
}

// ReminderSettingGet implements store.ReminderStore.
func (s *Store) ReminderSettingGet(ctx context.Context, guid string) (store.ReminderSettingRecord, error) {
	rec, err := s.scanSetting(s.queryRow(ctx, nil, "ReminderSettingGet", sql.Named("Guid", guid)))
	return rec, s.oneErr("ReminderSettingGet", err)
}

// ReminderSettingListBySource implements store.ReminderStore.
func (s *Store) ReminderSettingListBySource(ctx context.Context, businessUnitID, sourceType string) ([]store.ReminderSettingRecord, error) {
	return queryAll(ctx, s, nil, "ReminderSettingListBySource", s.scanSetting,
		sql.Named("BusinessUnitId", businessUnitID), sql.Named("SourceType", sourceType))
}

func (s *Store) scanSnapshot(r rowScanner) (store.SourceSnapshot, error) {
	var sn store.SourceSnapshot
	err := r.Scan(&sn.EntityType, &sn.EntityGuid, &sn.BusinessUnitID, &sn.Revision, &sn.IsDeleted,
		&sn.DataJSON, &sn.LastEventID, s.t(&sn.UpdatedOn))
	return sn, err
}

// SourceSnapshotGet implements store.ReminderStore.
func (s *Store) SourceSnapshotGet(ctx context.Context, entityType, entityGuid string) (store.SourceSnapshot, error) {
	sn, err := s.scanSnapshot(s.queryRow(ctx, nil, "SourceSnapshotGet",
		sql.Named("EntityType", entityType), sql.Named("EntityGuid", entityGuid)))
	return sn, s.oneErr("SourceSnapshotGet", err)
}

// SourceSnapshotApply implements store.ReminderStore.
func (s *Store) SourceSnapshotApply(ctx context.Context, sn store.SourceSnapshot) (store.SnapshotOutcome, error) {
	var out store.SnapshotOutcome
	args := func() []any {
		return []any{sql.Named("EntityType", sn.EntityType), sql.Named("EntityGuid", sn.EntityGuid),
			sql.Named("BusinessUnitId", sn.BusinessUnitID), sql.Named("Revision", sn.Revision),
			sql.Named("IsDeleted", boolInt(sn.IsDeleted)), sql.Named("DataJson", sn.DataJSON),
			sql.Named("LastEventId", sn.LastEventID), sql.Named("UpdatedOn", s.tm(sn.UpdatedOn))}
	}
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := s.scanSnapshot(s.queryRow(ctx, tx, "SourceSnapshotGetForUpdate",
			sql.Named("EntityType", sn.EntityType), sql.Named("EntityGuid", sn.EntityGuid)))
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if _, err := s.exec(ctx, tx, "SourceSnapshotInsert", args()...); err != nil {
				return fmt.Errorf("%s SourceSnapshotInsert: %w", s.d.Name, err)
			}
			out = store.SnapshotApplied
		case err != nil:
			return fmt.Errorf("%s SourceSnapshotGet: %w", s.d.Name, err)
		case sn.Revision > cur.Revision:
			if err := s.execOne(ctx, tx, "SourceSnapshotUpdate", args()...); err != nil {
				return err
			}
			out = store.SnapshotApplied
		case sn.Revision == cur.Revision && sn.LastEventID == cur.LastEventID:
			out = store.SnapshotReapplied
		default:
			out = store.SnapshotStale
			// Kept for the support API's explain: "an older revision was ignored".
			return s.recordStaleEvent(ctx, tx, sn, cur)
		}
		return nil
	})
	return out, err
}

// EventProcessed implements store.ReminderStore.
func (s *Store) EventProcessed(ctx context.Context, source, id string) (bool, error) {
	var n int
	err := s.queryRow(ctx, nil, "EventProcessedGet", sql.Named("EventSource", source), sql.Named("EventId", id)).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("%s EventProcessedGet: %w", s.d.Name, err)
	}
	return n > 0, nil
}

// EventMarkProcessed implements store.ReminderStore.
func (s *Store) EventMarkProcessed(ctx context.Context, source, id string, now time.Time) error {
	_, err := s.exec(ctx, nil, "EventMarkProcessed",
		sql.Named("EventSource", source), sql.Named("EventId", id), sql.Named("Now", s.tm(now)))
	if err != nil {
		return fmt.Errorf("%s EventMarkProcessed: %w", s.d.Name, err)
	}
	return nil
}
