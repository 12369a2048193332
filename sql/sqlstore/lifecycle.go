package sqlstore

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

var _ store.LifecycleStore = (*Store)(nil)

// epoch is the "since the beginning" instant passed where a query needs a lower bound.
var epoch = time.Unix(0, 0).UTC()

// scopeArgs returns the SQL parameters of a business-unit scope: @AllUnits (1 when the
// scope sees every business unit) and the JSON array of the units it sees under listName
// ("[]" when all or none; with @AllUnits 0 an empty array matches nothing).
func scopeArgs(sc automation.Scope, listName string) []any {
	units := sc.Units()
	if units == nil {
		units = []string{}
	}
	b, _ := json.Marshal(units)
	return []any{sql.Named("AllUnits", boolInt(sc.All())), sql.Named(listName, string(b))}
}

// insertOne runs the insert named name, which adds one row unless key (as the error names
// it) is already stored: then it is ErrConflict ("sqlite BusinessUnitInsert "bu1": conflict").
func (s *Store) insertOne(ctx context.Context, name, key string, args ...any) error {
	n, err := s.execCount(ctx, nil, name, args...)
	if err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("%s %s %s: %w", s.d.Name, name, key, store.ErrConflict)
	}
	return nil
}

// --- business units ------------------------------------------------------------------

func rolesJSON(roles map[string][]string) any {
	if len(roles) == 0 {
		return nil
	}
	b, _ := json.Marshal(roles) // map keys sorted: deterministic
	return string(b)
}

func (s *Store) scanBusinessUnit(r rowScanner) (store.BusinessUnitRecord, error) {
	var bu store.BusinessUnitRecord
	var roles string
	err := r.Scan(&bu.ID, &bu.Name, &bu.TimeZoneID, ns(&bu.TimeZoneIDGiven), ns(&roles), &bu.Version, s.t(&bu.UpdatedOn))
	if err == nil && roles != "" {
		if jerr := json.Unmarshal([]byte(roles), &bu.Roles); jerr != nil {
			return bu, fmt.Errorf("business unit %s: stored roles are not JSON: %w", bu.ID, jerr)
		}
	}
	return bu, err
}

func (s *Store) businessUnitArgs(bu store.BusinessUnitRecord) []any {
	return []any{sql.Named("Id", bu.ID), sql.Named("Name", bu.Name), sql.Named("TimeZoneId", bu.TimeZoneID),
		sql.Named("TimeZoneIdGiven", nstr(bu.TimeZoneIDGiven)), sql.Named("RolesJson", rolesJSON(bu.Roles)),
		sql.Named("UpdatedOn", s.tm(bu.UpdatedOn)), sql.Named("UpdatedBy", nstr(bu.UpdatedBy))}
}

// BusinessUnitInsert implements store.LifecycleStore.
func (s *Store) BusinessUnitInsert(ctx context.Context, bu store.BusinessUnitRecord) error {
	return s.insertOne(ctx, "BusinessUnitInsert", strconv.Quote(bu.ID), s.businessUnitArgs(bu)...)
}

// BusinessUnitGetRecord implements store.LifecycleStore.
func (s *Store) BusinessUnitGetRecord(ctx context.Context, id string) (store.BusinessUnitRecord, error) {
	bu, err := s.scanBusinessUnit(s.queryRow(ctx, nil, "BusinessUnitGetRecord", sql.Named("Id", id)))
	return bu, s.oneErr("BusinessUnitGetRecord", err)
}

// BusinessUnitUpdate implements store.LifecycleStore.
func (s *Store) BusinessUnitUpdate(ctx context.Context, bu store.BusinessUnitRecord, expectedVersion int64) (store.BusinessUnitRecord, error) {
	var out store.BusinessUnitRecord
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		n, err := s.execCount(ctx, tx, "BusinessUnitUpdate", append(s.businessUnitArgs(bu), sql.Named("ExpectedVersion", expectedVersion))...)
		if err != nil {
			return err
		}
		cur, gerr := s.scanBusinessUnit(s.queryRow(ctx, tx, "BusinessUnitGetRecord", sql.Named("Id", bu.ID)))
		if gerr = s.oneErr("BusinessUnitGetRecord", gerr); gerr != nil {
			return gerr
		}
		if n != 1 {
			return fmt.Errorf("%s BusinessUnitUpdate %q at version %d (stored %d): %w", s.d.Name, bu.ID, expectedVersion, cur.Version, store.ErrLeaseLost)
		}
		out = cur
		return nil
	})
	return out, err
}

// BusinessUnitList implements store.LifecycleStore.
func (s *Store) BusinessUnitList(ctx context.Context, p store.BusinessUnitListParams) ([]store.BusinessUnitRecord, error) {
	args := append(scopeArgs(p.Scope, "UnitsJson"), sql.Named("AfterId", p.AfterID), sql.Named("Limit", p.Limit))
	return queryPage(ctx, s, "BusinessUnitList", p.Limit, s.scanBusinessUnit, args...)
}

// --- settings ------------------------------------------------------------------------

func (s *Store) settingArgs(r store.ReminderSettingRecord) []any {
	return []any{sql.Named("Guid", r.Guid), sql.Named("BusinessUnitId", r.BusinessUnitID),
		sql.Named("SourceType", r.SourceType), sql.Named("TriggerType", r.TriggerType),
		sql.Named("IsActive", boolInt(r.IsActive)), sql.Named("Body", r.Body),
		sql.Named("Version", r.Version), sql.Named("UpdatedOn", s.tm(r.UpdatedOn)), sql.Named("UpdatedBy", nstr(r.UpdatedBy))}
}

// ReminderSettingInsert implements store.LifecycleStore.
func (s *Store) ReminderSettingInsert(ctx context.Context, r store.ReminderSettingRecord) error {
	return s.insertOne(ctx, "ReminderSettingInsert", r.Guid, s.settingArgs(r)...)
}

// ReminderSettingUpdate implements store.LifecycleStore.
func (s *Store) ReminderSettingUpdate(ctx context.Context, r store.ReminderSettingRecord, expectedVersion int64) error {
	n, err := s.execCount(ctx, nil, "ReminderSettingUpdate", append(s.settingArgs(r), sql.Named("ExpectedVersion", expectedVersion))...)
	if err != nil || n == 1 {
		return err
	}
	if _, gerr := s.ReminderSettingGet(ctx, r.Guid); gerr != nil {
		return gerr // ErrNotFound
	}
	return fmt.Errorf("%s ReminderSettingUpdate %s at version %d: %w", s.d.Name, r.Guid, expectedVersion, store.ErrLeaseLost)
}

// ReminderSettingList implements store.LifecycleStore.
func (s *Store) ReminderSettingList(ctx context.Context, p store.ReminderSettingListParams) ([]store.ReminderSettingRecord, error) {
	active := -1
	if p.Active != nil {
		active = boolInt(*p.Active)
	}
	args := append(scopeArgs(p.Scope, "UnitsJson"), sql.Named("BusinessUnitId", p.BusinessUnitID), sql.Named("SourceType", p.SourceType),
		sql.Named("IsActive", active), sql.Named("AfterGuid", p.AfterGuid), sql.Named("Limit", p.Limit))
	return queryPage(ctx, s, "ReminderSettingList", p.Limit, s.scanSetting, args...)
}

// ReminderSettingListPairs implements store.LifecycleStore.
func (s *Store) ReminderSettingListPairs(ctx context.Context, after store.SettingSourcePair, limit int) ([]store.SettingSourcePair, error) {
	return queryPage(ctx, s, "ReminderSettingListPairs", limit, func(r rowScanner) (store.SettingSourcePair, error) {
		var p store.SettingSourcePair
		return p, r.Scan(&p.BusinessUnitID, &p.SourceType)
	}, sql.Named("AfterBusinessUnitId", after.BusinessUnitID), sql.Named("AfterSourceType", after.SourceType), sql.Named("Limit", limit))
}

// --- paging for propagation and sweeps ------------------------------------------------

// SourceSnapshotList implements store.LifecycleStore.
func (s *Store) SourceSnapshotList(ctx context.Context, p store.SourceSnapshotListParams) ([]store.SourceSnapshot, error) {
	since := p.ChangedSince
	if since.IsZero() {
		since = epoch
	}
	after := p.AfterUpdatedOn
	if after.IsZero() {
		after = epoch
	}
	return queryPage(ctx, s, "SourceSnapshotList", p.Limit, s.scanSnapshot,
		sql.Named("BusinessUnitId", p.BusinessUnitID), sql.Named("EntityType", p.EntityType),
		sql.Named("ChangedSince", s.tm(since)), sql.Named("HasAfter", boolInt(p.AfterGuid != "")),
		sql.Named("AfterUpdatedOn", s.tm(after)), sql.Named("AfterGuid", p.AfterGuid),
		sql.Named("IncludeDeleted", boolInt(p.IncludeDeleted)), sql.Named("Limit", p.Limit))
}

// SchedulerListBySetting implements store.LifecycleStore.
func (s *Store) SchedulerListBySetting(ctx context.Context, p store.SchedulerListBySettingParams) ([]automation.SchedulerRow, error) {
	if err := checkLimit("SchedulerListBySetting", p.Limit); err != nil {
		return nil, err
	}
	return s.queryRows(ctx, nil, "SchedulerListBySetting",
		sql.Named("SettingGuid", p.SettingGuid), sql.Named("AfterId", p.AfterID), sql.Named("Limit", p.Limit))
}

// SchedulerListFuturePending implements store.LifecycleStore.
func (s *Store) SchedulerListFuturePending(ctx context.Context, p store.SchedulerListFuturePendingParams) ([]automation.SchedulerRow, error) {
	if err := checkLimit("SchedulerListFuturePending", p.Limit); err != nil {
		return nil, err
	}
	return s.queryRows(ctx, nil, "SchedulerListFuturePending",
		sql.Named("Now", s.tm(p.Now)), sql.Named("AfterId", p.AfterID), sql.Named("Limit", p.Limit))
}

// --- threshold edges -----------------------------------------------------------------

func (s *Store) scanEdge(r rowScanner) (store.ThresholdEdge, error) {
	var e store.ThresholdEdge
	err := r.Scan(&e.SettingGuid, &e.SourceEntityType, &e.SourceEntityGuid, &e.Level, &e.IsMet, &e.EdgeCount, &e.Revision, s.t(&e.UpdatedOn))
	return e, err
}

func edgeKeyArgs(settingGuid, sourceType, sourceGuid, level string) []any {
	return []any{sql.Named("SettingGuid", settingGuid), sql.Named("SourceEntityType", sourceType),
		sql.Named("SourceEntityGuid", sourceGuid), sql.Named("Level", level)}
}

// ThresholdEdgeGet implements store.LifecycleStore.
func (s *Store) ThresholdEdgeGet(ctx context.Context, settingGuid, sourceType, sourceGuid, level string) (store.ThresholdEdge, error) {
	e, err := s.scanEdge(s.queryRow(ctx, nil, "ThresholdEdgeGet", edgeKeyArgs(settingGuid, sourceType, sourceGuid, level)...))
	return e, s.oneErr("ThresholdEdgeGet", err)
}

// ThresholdEdgeApply implements store.LifecycleStore.
func (s *Store) ThresholdEdgeApply(ctx context.Context, p store.ThresholdEdgeApplyParams) (store.ThresholdEdge, error) {
	if p.SettingGuid == "" || p.SourceEntityType == "" || p.SourceEntityGuid == "" || p.Level == "" {
		return store.ThresholdEdge{}, errors.New("ThresholdEdgeApply: setting, source and level are required")
	}
	var out store.ThresholdEdge
	key := edgeKeyArgs(p.SettingGuid, p.SourceEntityType, p.SourceEntityGuid, p.Level)
	err := s.inTx(ctx, func(tx *sql.Tx) error {
		cur, err := s.scanEdge(s.queryRow(ctx, tx, "ThresholdEdgeGetForUpdate", key...))
		next := store.ThresholdEdge{SettingGuid: p.SettingGuid, SourceEntityType: p.SourceEntityType, SourceEntityGuid: p.SourceEntityGuid,
			Level: p.Level, IsMet: p.IsMet, Revision: p.Revision, UpdatedOn: ms(p.Now)}
		write := func(name string) error {
			_, err := s.exec(ctx, tx, name, append(append([]any{}, key...), sql.Named("IsMet", boolInt(next.IsMet)),
				sql.Named("EdgeCount", next.EdgeCount), sql.Named("Revision", next.Revision), sql.Named("UpdatedOn", s.tm(next.UpdatedOn)))...)
			if err != nil {
				return fmt.Errorf("%s %s: %w", s.d.Name, name, err)
			}
			return nil
		}
		switch {
		case errors.Is(err, sql.ErrNoRows):
			if p.IsMet {
				next.EdgeCount = 1
			}
			out = next
			return write("ThresholdEdgeInsert")
		case err != nil:
			return fmt.Errorf("%s ThresholdEdgeGet: %w", s.d.Name, err)
		case p.Revision <= cur.Revision:
			out = cur // redelivery or an older revision: the stored state stands
			return nil
		}
		next.EdgeCount = cur.EdgeCount
		if p.IsMet && !cur.IsMet {
			next.EdgeCount++
		}
		out = next
		return write("ThresholdEdgeUpdate")
	})
	return out, err
}

// --- sweep progress ------------------------------------------------------------------

func (s *Store) scanReconcile(r rowScanner) (store.ReconcileState, error) {
	var st store.ReconcileState
	err := r.Scan(&st.SweepKey, &st.Generation, &st.DoneGeneration, s.nt(&st.WatermarkOn), s.nt(&st.PassHighOn),
		ns(&st.Cursor), ns(&st.Marker), &st.Version, s.t(&st.UpdatedOn))
	return st, err
}

// ReconcileStateGet implements store.LifecycleStore.
func (s *Store) ReconcileStateGet(ctx context.Context, key string) (store.ReconcileState, error) {
	st, err := s.scanReconcile(s.queryRow(ctx, nil, "ReconcileStateGet", sql.Named("SweepKey", key)))
	return st, s.oneErr("ReconcileStateGet", err)
}

// ReconcileStateSave implements store.LifecycleStore.
func (s *Store) ReconcileStateSave(ctx context.Context, st store.ReconcileState) (store.ReconcileState, error) {
	if st.SweepKey == "" {
		return st, errors.New("ReconcileStateSave: SweepKey is required")
	}
	args := []any{sql.Named("SweepKey", st.SweepKey), sql.Named("Generation", st.Generation),
		sql.Named("DoneGeneration", st.DoneGeneration), sql.Named("WatermarkOn", s.ntm(st.WatermarkOn)),
		sql.Named("PassHighOn", s.ntm(st.PassHighOn)), sql.Named("Position", nstr(st.Cursor)),
		sql.Named("Marker", nstr(st.Marker)), sql.Named("UpdatedOn", s.tm(st.UpdatedOn))}
	name, args := versionedSave("ReconcileStateInsert", "ReconcileStateUpdate", st.Version, args)
	n, err := s.execCount(ctx, nil, name, args...)
	if err != nil {
		return st, err
	}
	if n != 1 {
		return st, fmt.Errorf("%s %s %s at version %d: %w", s.d.Name, name, st.SweepKey, st.Version, store.ErrLeaseLost)
	}
	return s.ReconcileStateGet(ctx, st.SweepKey)
}

// ReconcileStateRequest implements store.LifecycleStore.
func (s *Store) ReconcileStateRequest(ctx context.Context, key string, now time.Time) error {
	if key == "" {
		return errors.New("ReconcileStateRequest: SweepKey is required")
	}
	if _, err := s.exec(ctx, nil, "ReconcileStateRequest", sql.Named("SweepKey", key), sql.Named("UpdatedOn", s.tm(now))); err != nil {
		return fmt.Errorf("%s ReconcileStateRequest: %w", s.d.Name, err)
	}
	return nil
}

// ReconcileStateListRequested implements store.LifecycleStore.
func (s *Store) ReconcileStateListRequested(ctx context.Context, prefix string, limit int) ([]store.ReconcileState, error) {
	return queryPage(ctx, s, "ReconcileStateListRequested", limit, s.scanReconcile, sql.Named("Prefix", prefix), sql.Named("Limit", limit))
}
