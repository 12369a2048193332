package reminder

import (
	"context"
	"errors"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/store"
)

// TZDataResyncer is the maintenance service that moves Pending reminder rows to the instant
// their local intent resolves to under the embedded tzdata (sweep key "tzdata"): a new tzdata
// release can change a zone's offsets, and a row's ScheduledOn was computed with the old one.
// The pass runs once per tzdata version (localtime.TZDataVersion is the done marker).
type TZDataResyncer struct {
	Store interface {
		store.SchedulerStore
		store.LifecycleStore
	}
	Config TZDataResyncConfig
	Clock  automation.Clock

	testSignals testSignals
}

// TZDataResyncConfig tunes a TZDataResyncer (PassConfig): a batch is BatchSize Pending
// rows; MaxBatches bounds the batches of one pass.
type TZDataResyncConfig PassConfig

// Validate refuses a negative or too large field (zero means the default).
func (c TZDataResyncConfig) Validate() error { return PassConfig(c).check("TZDataResyncConfig") }

// TZDataResyncResult counts one pass.
type TZDataResyncResult struct {
	Batches     int  `json:"batches"`
	Rescheduled int  `json:"rescheduled"` // rows whose ScheduledOn moved
	Complete    bool `json:"complete"`    // the rows are resynced with this tzdata version
}

// runOnce recomputes ScheduledOn of Pending rows due in the future from their stored
// local intent (ScheduledLocalDate, ScheduledLocalTime, TimeZoneId) with the embedded tzdata
// (docs/architecture.md#date-based-reminders), once per tzdata version; rows already right are left alone.
// It pages by row Id within Config.MaxBatches batches; the cursor is saved after each
// successful batch (a failed batch leaves the last saved one) and the marker when the pass ends.
func (t *TZDataResyncer) runOnce(ctx context.Context) (TZDataResyncResult, error) {
	var res TZDataResyncResult
	if err := preflight(t.Config, t.Store != nil && t.Clock != nil, "TZDataResyncer: Store and Clock are required"); err != nil {
		return res, err
	}
	cfg := PassConfig(t.Config).withDefaults()
	now := t.Clock.Now().UTC()
	st := t.Store
	state, err := st.ReconcileStateGet(ctx, sweepTZData)
	if errors.Is(err, store.ErrNotFound) {
		state = store.ReconcileState{SweepKey: sweepTZData}
	} else if err != nil {
		return res, err
	}
	if state.Marker == localtime.TZDataVersion {
		res.Complete = true
		return res, nil
	}
	cur, _ := parseCursor(state.Cursor)
	if cur.TZ != localtime.TZDataVersion {
		cur = snapshotCursor{}
	}
	for res.Batches < cfg.MaxBatches {
		rows, err := st.SchedulerListFuturePending(ctx, store.SchedulerListFuturePendingParams{Now: now, AfterID: cur.ID, Limit: cfg.BatchSize})
		if err != nil {
			return res, err
		}
		var fix []automation.Candidate
		for _, row := range rows {
			cur = snapshotCursor{ID: row.ID, TZ: localtime.TZDataVersion}
			if row.AutomationType != automation.TypeReminder {
				// Only reminder keys are free of instants. A report run's key holds its period
				// start in UTC (docs/architecture.md#scheduler-keys), so moving its ScheduledOn would make the row disagree with
				// its own key; report schedules are recomputed from the RRULE when the next run
				// is ensured.
				continue
			}
			at, ok := resolveIntent(row)
			if !ok || at.Equal(row.ScheduledOn) {
				continue
			}
			fix = append(fix, automation.Candidate{AutomationType: row.AutomationType, TriggerType: row.TriggerType,
				SchedulerKey: row.SchedulerKey, InputHash: row.InputHash, SettingGuid: row.SettingGuid,
				SourceEntityType: row.SourceEntityType, SourceEntityGuid: row.SourceEntityGuid, BusinessUnitID: row.BusinessUnitID,
				ScheduledOn: at, ScheduledLocalDate: row.ScheduledLocalDate, ScheduledLocalTime: row.ScheduledLocalTime, TimeZoneID: row.TimeZoneID})
		}
		if len(fix) > 0 {
			results, err := st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: now, Candidates: fix})
			if err != nil {
				return res, err
			}
			for _, x := range results {
				if x.Action == automation.EnsureUpdated {
					res.Rescheduled++
				}
			}
		}
		res.Batches++
		state.Cursor, state.UpdatedOn = cur.String(), now
		if len(rows) < cfg.BatchSize {
			state.Marker, state.Cursor = localtime.TZDataVersion, ""
		}
		if state, err = st.ReconcileStateSave(ctx, state); err != nil {
			return res, ignoreLost(err)
		}
		t.testSignals.saved(sweepTZData)
		if state.Marker == localtime.TZDataVersion {
			res.Complete = true
			return res, nil
		}
	}
	return res, nil
}

// resolveIntent recomputes a row's instant from its local intent; ok is false when the row
// has none in the "HH:MM" form.
func resolveIntent(row automation.SchedulerRow) (time.Time, bool) {
	d, err := localtime.ParseDate(row.ScheduledLocalDate)
	if err != nil {
		return time.Time{}, false
	}
	t, err := localtime.ParseTimeOfDay(row.ScheduledLocalTime)
	if err != nil {
		return time.Time{}, false
	}
	loc, err := localtime.LoadZone(row.TimeZoneID)
	if err != nil {
		return time.Time{}, false
	}
	return localtime.Resolve(loc, d, t), true
}
