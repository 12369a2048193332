package reminder

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/store"
)

// Admin manages business units and reminder settings (docs/architecture.md#inputs) and applies the settings-change
// rules of docs/architecture.md#settings-changes to the scheduler rows:
//
//	change                                        rows
//	offset / date / threshold (identity)          deactivated (Superseded) and recreated under the new keys
//	send time (sendLocalTime, sendWindow)         updated in place: same key, new ScheduledOn
//	template / channels / recipients / name       untouched: execution reloads the setting (docs/architecture.md#revalidation)
//	setting deactivated                           Pending/Failed rows Deactivated (ReminderSettingInactive); completed kept
//	setting reactivated                           rows ensured again (same keys reactivate)
//
// Rows are brought in line by a bounded sweep over the setting's sources ("setting:{guid}",
// the same sync as the event path): InlineBatches run inside the request, the rest in the
// Reconciliation function (docs/architecture.md#reconciliation). Every call takes the caller's business-unit scope; a unit
// or setting outside it is ErrNotFound, never a different answer.
type Admin struct {
	Store   Store
	Clock   automation.Clock
	Service *Service
	// Channels lists the channel names settings may use (nil: any).
	Channels map[string]bool
	// InlineBatches bounds the propagation batches run inside one request (default 5).
	InlineBatches int
	// BatchSize is the sources (or rows) per propagation batch (default 200, at most
	// store.MaxBatch).
	BatchSize int
	Log       *slog.Logger
	// TemplateWarning, when set, says whether a setting's template can be rendered for its
	// channels: "" when it can, else the warning a write answers with. A setting may name a
	// template saved later (templates and settings are separate calls, in either order), so
	// a missing template is a warning, not a refusal. nil: not checked.
	TemplateWarning func(ctx context.Context, businessUnitID, template string, channels []string) (string, error)
}

func notFound(what, id string) error {
	return &automation.Error{Code: automation.CodeNotFound, Message: fmt.Sprintf("%s %q not found", what, id)}
}

func (a *Admin) batch() int {
	if a.BatchSize <= 0 || a.BatchSize > store.MaxBatch {
		return 200
	}
	return a.BatchSize
}

func (a *Admin) inline() int {
	if a.InlineBatches <= 0 {
		return 5
	}
	return a.InlineBatches
}

func (a *Admin) logger() *slog.Logger {
	if a.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return a.Log
}

// --- business units ------------------------------------------------------------------

// Units is the business-unit admin over the same store and clock (create, read, list).
func (a *Admin) Units() *businessunit.Admin {
	return &businessunit.Admin{Store: a.Store, Clock: a.Clock}
}

// UpdateBusinessUnit replaces a business unit (businessunit.Admin.Update: its Version must
// be ifMatch, CodePreconditionFailed otherwise). A changed time zone re-times the pending rows
// of every setting of the unit in place (same keys, ScheduledOn recomputed from the local
// intent in the new zone).
func (a *Admin) UpdateBusinessUnit(ctx context.Context, sc automation.Scope, id string, in businessunit.Input, ifMatch int64) (store.BusinessUnitRecord, Propagation, error) {
	var prop Propagation
	// Every active setting's propagation is owed before the new zone is stored (see
	// requestFirst); after it, they are requested again and the first ones run inline.
	ch, err := a.Units().Update(ctx, sc, id, in, ifMatch, func(ctx context.Context, now time.Time) error {
		return a.eachActiveSetting(ctx, id, func(guid string) error { return a.requestFirst(ctx, guid, now) })
	})
	if err != nil {
		return ch.Before, prop, err
	}
	out, now := ch.After, ch.At
	prop = Propagation{Change: []string{}, Status: PropagationNone}
	if ch.ZoneChanged() {
		prop.Change = []string{"timeZone"}
		prop.Status = PropagationComplete
		budget := a.inline()
		// Every active setting of the unit: each gets its propagation requested; the inline
		// budget runs the first ones, Reconciliation the rest.
		err := a.eachActiveSetting(ctx, id, func(guid string) error {
			if err := a.Store.ReconcileStateRequest(ctx, settingSweepKey(guid), now); err != nil {
				// Requested before the update already: Reconciliation still owes the pass.
				a.logger().Warn("propagation left to reconciliation", "settingGuid", guid, "businessUnitId", id, "error", err)
				prop.Status = PropagationQueued
				return nil
			}
			if budget <= 0 {
				prop.Status = PropagationQueued
				return nil
			}
			r, err := runSettingSweep(ctx, a.Service, guid, a.batch(), budget, now)
			prop.add(r)
			budget -= r.Batches
			if err != nil {
				a.logger().Warn("propagation left to reconciliation", "settingGuid", guid, "businessUnitId", id, "error", err)
				prop.Status = PropagationQueued
				return nil
			}
			if !r.Done {
				prop.Status = PropagationQueued
			}
			return nil
		})
		if err != nil {
			return out, prop, err
		}
	}
	return out, prop, nil
}

// eachActiveSetting calls fn with the guid of every active setting of business unit id,
// page by page (bounded pages, however many settings).
func (a *Admin) eachActiveSetting(ctx context.Context, id string, fn func(guid string) error) error {
	active := true
	for after := ""; ; {
		sets, err := a.Store.ReminderSettingList(ctx, store.ReminderSettingListParams{Scope: automation.AllBusinessUnits(), BusinessUnitID: id,
			Active: &active, AfterGuid: after, Limit: a.batch()})
		if err != nil {
			return err
		}
		for _, s := range sets {
			after = s.Guid
			if err := fn(s.Guid); err != nil {
				return err
			}
		}
		if len(sets) < a.batch() {
			return nil
		}
	}
}

// --- settings ------------------------------------------------------------------------

// Propagation reports how a change reached the scheduler rows.
type Propagation struct {
	// Change lists what changed: created, identity, sendTime, delivery, deactivated,
	// reactivated, timeZone (business units).
	Change []string `json:"change"`
	// Status: None (nothing to apply to rows), Complete, or Queued (bounded inline work
	// done; the Reconciliation function finishes it).
	Status             PropagationStatus `json:"status"`
	SourcesProcessed   int               `json:"sourcesProcessed"`
	RowsDeactivated    int               `json:"rowsDeactivated"`
	RowsEnsured        int               `json:"rowsEnsured"`
	RowsUpdatedInPlace int               `json:"rowsUpdatedInPlace"`
}

// PropagationStatus says whether a change has reached every row.
type PropagationStatus string

// Propagation statuses.
const (
	PropagationNone     PropagationStatus = "None"
	PropagationComplete PropagationStatus = "Complete"
	PropagationQueued   PropagationStatus = "Queued"
)

func (p *Propagation) add(r sweepRun) {
	p.SourcesProcessed += r.Sources
	p.RowsDeactivated += r.Deactivated
	p.RowsEnsured += r.Ensured[automation.EnsureInserted] + r.Ensured[automation.EnsureReactivated] + r.Ensured[automation.EnsureRecordedMissed]
	p.RowsUpdatedInPlace += r.Ensured[automation.EnsureUpdated]
}

// SettingChange classifies an update of a setting (docs/architecture.md#settings-changes).
type SettingChange struct {
	Identity    bool // trigger key, offsets, annual, overdue option, threshold metric/levels/policy: keys change
	SendTime    bool // sendLocalTime or threshold.sendWindow: same keys, new ScheduledOn
	Delivery    bool // template, channels, recipients, name, maxLatenessHours: read at execution
	Deactivated bool
	Reactivated bool
}

// ClassifyChange compares two versions of one setting.
func ClassifyChange(old, new Setting) SettingChange {
	var c SettingChange
	ot, nt := old.Threshold, new.Threshold
	var oth, nth, ow, nw any
	if ot != nil {
		oth, ow = []any{ot.Metric, ot.levels(), ot.FiringPolicy}, ot.SendWindow
	}
	if nt != nil {
		nth, nw = []any{nt.Metric, nt.levels(), nt.FiringPolicy}, nt.SendWindow
	}
	c.Identity = old.TriggerKey != new.TriggerKey || !slices.Equal(sortedInts(old.OffsetsDays), sortedInts(new.OffsetsDays)) ||
		old.Annual != new.Annual || old.ImmediateIfOverdue != new.ImmediateIfOverdue || !reflect.DeepEqual(oth, nth)
	c.SendTime = !reflect.DeepEqual(old.SendLocalTime, new.SendLocalTime) || !reflect.DeepEqual(ow, nw)
	c.Delivery = old.Name != new.Name || old.Template != new.Template || !slices.Equal(old.Channels, new.Channels) ||
		!reflect.DeepEqual(old.Recipients, new.Recipients) || old.MaxLatenessHoursOrDefault() != new.MaxLatenessHoursOrDefault()
	c.Deactivated = old.Active() && !new.Active()
	c.Reactivated = !old.Active() && new.Active()
	return c
}

func sortedInts(xs []int) []int {
	out := slices.Clone(xs)
	slices.Sort(out)
	return out
}

// NeedsPropagation reports whether rows must change: identity, send time and activity do;
// template/delivery/recipient changes alone never touch pending rows.
func (c SettingChange) NeedsPropagation() bool {
	return c.Identity || c.SendTime || c.Deactivated || c.Reactivated
}

// Names lists the changed aspects.
func (c SettingChange) Names() []string {
	var out []string
	for _, p := range []struct {
		on   bool
		name string
	}{{c.Identity, "identity"}, {c.SendTime, "sendTime"}, {c.Delivery, "delivery"}, {c.Deactivated, "deactivated"}, {c.Reactivated, "reactivated"}} {
		if p.on {
			out = append(out, p.name)
		}
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// takenErr is the answer to creating a setting whose guid cur already holds: conflict when
// cur is in the caller's scope, else the 404 of an unknown setting, so that the id cannot be
// probed across business units (docs/api-conventions.md#business-unit-scope).
func takenErr(sc automation.Scope, cur store.ReminderSettingRecord, conflict error) error {
	if !sc.Allows(cur.BusinessUnitID) {
		return notFound("reminder setting", cur.Guid)
	}
	return conflict
}

// SettingResult is a stored setting with its Version and what a change did to the rows.
type SettingResult struct {
	Setting     Setting
	Version     int64
	UpdatedOn   time.Time
	Propagation *Propagation
	// Warnings: after a write, what was accepted but cannot work yet (TemplateWarning).
	Warnings []string
}

// warnings is what a written setting is answered with besides its result.
func (a *Admin) warnings(ctx context.Context, set Setting) ([]string, error) {
	if a.TemplateWarning == nil {
		return nil, nil
	}
	w, err := a.TemplateWarning(ctx, set.BusinessUnitID, set.Template, set.Channels)
	if err != nil || w == "" {
		return nil, err
	}
	return []string{w}, nil
}

func (a *Admin) load(ctx context.Context, sc automation.Scope, guid string) (Setting, store.ReminderSettingRecord, error) {
	g := strings.ToLower(guid)
	rec, err := a.Store.ReminderSettingGet(ctx, g)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !sc.Allows(rec.BusinessUnitID)) {
		return Setting{}, rec, notFound("reminder setting", guid)
	}
	if err != nil {
		return Setting{}, rec, err
	}
	set, err := ParseSetting([]byte(rec.Body))
	if err != nil {
		return Setting{}, rec, fmt.Errorf("stored setting %s is invalid: %w", rec.Guid, err)
	}
	return set, rec, nil
}

// GetSetting returns a setting in the caller's scope, or ErrNotFound.
func (a *Admin) GetSetting(ctx context.Context, sc automation.Scope, guid string) (SettingResult, error) {
	set, rec, err := a.load(ctx, sc, guid)
	return SettingResult{Setting: set, Version: rec.Version, UpdatedOn: rec.UpdatedOn}, err
}

// SettingFilter filters a settings list.
type SettingFilter struct {
	BusinessUnitID string
	SourceType     string
	Active         *bool
}

// ListSettings pages settings in the caller's scope by guid.
func (a *Admin) ListSettings(ctx context.Context, sc automation.Scope, f SettingFilter, afterGuid string, limit int) ([]SettingResult, error) {
	recs, err := a.Store.ReminderSettingList(ctx, store.ReminderSettingListParams{Scope: sc, BusinessUnitID: f.BusinessUnitID,
		SourceType: f.SourceType, Active: f.Active, AfterGuid: strings.ToLower(afterGuid), Limit: limit})
	if err != nil {
		return nil, err
	}
	out := make([]SettingResult, 0, len(recs))
	for _, r := range recs {
		set, err := ParseSetting([]byte(r.Body))
		if err != nil {
			return nil, fmt.Errorf("stored setting %s is invalid: %w", r.Guid, err)
		}
		out = append(out, SettingResult{Setting: set, Version: r.Version, UpdatedOn: r.UpdatedOn})
	}
	return out, nil
}

// CreateSetting validates raw (DecodeSetting) and stores it as a new setting (Version 1).
// Errors: Malformed/Invalid with field errors (nothing stored); ErrNotFound when its business
// unit is unknown or outside the caller's scope, or when the guid exists outside it (the
// answer of an unknown setting); Conflict when the guid exists in the scope; a store
// error when its propagation cannot be requested (nothing stored). A new active setting is
// applied at once to the sources the pipeline already knows (a bounded sweep, finished by
// Reconciliation when large); later events schedule the rest.
func (a *Admin) CreateSetting(ctx context.Context, sc automation.Scope, raw []byte) (SettingResult, error) {
	return a.CreateSettingBy(ctx, sc, raw, "")
}

// CreateSettingBy is CreateSetting by an operator (its principal first, docs/security.md#audit),
// stored with the setting's version (store.ReminderSettingRecord.UpdatedBy) by the insert
// itself; "" names nobody. A refused setting stores nothing.
func (a *Admin) CreateSettingBy(ctx context.Context, sc automation.Scope, raw []byte, by string) (SettingResult, error) {
	set, err := DecodeSetting(raw, a.Channels)
	if err != nil {
		return SettingResult{}, err
	}
	if !sc.Allows(set.BusinessUnitID) {
		return SettingResult{}, notFound("business unit", set.BusinessUnitID)
	}
	if _, err := a.Store.BusinessUnitGet(ctx, set.BusinessUnitID); errors.Is(err, store.ErrNotFound) {
		return SettingResult{}, notFound("business unit", set.BusinessUnitID)
	} else if err != nil {
		return SettingResult{}, err
	}
	now := a.Clock.Now()
	rec, err := SettingRecord(set, 1, now)
	if err != nil {
		return SettingResult{}, err
	}
	conflict := &automation.Error{Code: automation.CodeConflict, Field: "guid", Message: fmt.Sprintf("reminder setting %s already exists", set.Guid)}
	if cur, err := a.Store.ReminderSettingGet(ctx, set.Guid); err == nil {
		return SettingResult{}, takenErr(sc, cur, conflict) // before requesting anything for the existing one
	} else if !errors.Is(err, store.ErrNotFound) {
		return SettingResult{}, err
	}
	if set.Active() {
		if err := a.requestFirst(ctx, set.Guid, now); err != nil {
			return SettingResult{}, err
		}
	}
	rec.UpdatedBy = automation.OperatorName(by)
	if err := a.Store.ReminderSettingInsert(ctx, rec); err != nil {
		if errors.Is(err, store.ErrConflict) {
			if cur, gerr := a.Store.ReminderSettingGet(ctx, set.Guid); gerr == nil {
				return SettingResult{}, takenErr(sc, cur, conflict)
			}
			return SettingResult{}, conflict
		}
		return SettingResult{}, err
	}
	res := SettingResult{Setting: set, Version: 1, UpdatedOn: ms(now), Propagation: &Propagation{Change: []string{"created"}, Status: PropagationNone}}
	if res.Warnings, err = a.warnings(ctx, set); err != nil {
		return res, err
	}
	if set.Active() {
		// Sources the pipeline already knows get their rows now, not at their next event.
		a.propagate(ctx, set.Guid, now, res.Propagation)
	}
	return res, nil
}

// propagate requests the setting's sweep and runs it for at most InlineBatches batches,
// recording what it did in p (Status Queued when Reconciliation must finish it).
func (a *Admin) propagate(ctx context.Context, guid string, now time.Time, p *Propagation) {
	if err := a.Store.ReconcileStateRequest(ctx, settingSweepKey(guid), now); err != nil {
		// The pass requested before the write is still owed: Reconciliation applies it.
		a.logger().Error("propagation not run inline", "settingGuid", guid, "error", err)
		p.Status = PropagationQueued
		return
	}
	r, err := runSettingSweep(ctx, a.Service, guid, a.batch(), a.inline(), now)
	p.add(r)
	p.Status = PropagationComplete
	if err != nil || !r.Done {
		if err != nil {
			a.logger().Warn("propagation left to reconciliation", "settingGuid", guid, "error", err)
		}
		p.Status = PropagationQueued
	}
}

func ms(t time.Time) time.Time { return t.UTC().Truncate(time.Millisecond) }

// UpdateSetting replaces the setting guid with raw when its Version is ifMatch, then applies
// the settings-change rules (docs/architecture.md#settings-changes) to its rows. businessUnitId, sourceType and triggerType
// cannot change (create a new setting and deactivate this one). Errors: as CreateSetting, plus
// CodePreconditionFailed for a stale ifMatch (nothing changed).
func (a *Admin) UpdateSetting(ctx context.Context, sc automation.Scope, guid string, raw []byte, ifMatch int64) (SettingResult, error) {
	return a.UpdateSettingBy(ctx, sc, guid, raw, ifMatch, "")
}

// UpdateSettingBy is UpdateSetting by an operator, stored with the new version (as
// CreateSettingBy).
func (a *Admin) UpdateSettingBy(ctx context.Context, sc automation.Scope, guid string, raw []byte, ifMatch int64, by string) (SettingResult, error) {
	old, rec, err := a.load(ctx, sc, guid)
	if err != nil {
		return SettingResult{}, err
	}
	raw, err = withGuid(raw, rec.Guid)
	if err != nil {
		return SettingResult{}, err
	}
	set, err := DecodeSetting(raw, a.Channels)
	if err != nil {
		return SettingResult{}, err
	}
	var errs []error
	if set.Guid != rec.Guid {
		errs = append(errs, automation.Invalid("guid", "cannot change (%s in the body, %s in the path)", set.Guid, rec.Guid))
	}
	if set.BusinessUnitID != old.BusinessUnitID {
		errs = append(errs, automation.Invalid("businessUnitId", "cannot change; create a setting in the other business unit and deactivate this one"))
	}
	if set.SourceType != old.SourceType {
		errs = append(errs, automation.Invalid("sourceType", "cannot change; create a new setting and deactivate this one"))
	}
	if set.TriggerType != old.TriggerType {
		errs = append(errs, automation.Invalid("triggerType", "cannot change; create a new setting and deactivate this one"))
	}
	if err := automation.InvalidFields(errs...); err != nil {
		return SettingResult{}, err
	}
	if rec.Version != ifMatch {
		return SettingResult{}, businessunit.VersionMismatch(rec.Version, ifMatch)
	}
	return a.write(ctx, old, set, rec, ifMatch, by)
}

// DeactivateSetting sets isActive to false when the Version is ifMatch and deactivates the
// setting's Pending/Failed rows (ReminderSettingInactive); completed rows stay for history.
// An inactive setting is returned unchanged (idempotent).
func (a *Admin) DeactivateSetting(ctx context.Context, sc automation.Scope, guid string, ifMatch int64) (SettingResult, error) {
	return a.DeactivateSettingBy(ctx, sc, guid, ifMatch, "")
}

// DeactivateSettingBy is DeactivateSetting by an operator, stored with the new version (as
// CreateSettingBy); an inactive setting is returned unchanged and records nothing.
func (a *Admin) DeactivateSettingBy(ctx context.Context, sc automation.Scope, guid string, ifMatch int64, by string) (SettingResult, error) {
	old, rec, err := a.load(ctx, sc, guid)
	if err != nil {
		return SettingResult{}, err
	}
	if rec.Version != ifMatch {
		return SettingResult{}, businessunit.VersionMismatch(rec.Version, ifMatch)
	}
	if !old.Active() {
		return SettingResult{Setting: old, Version: rec.Version, UpdatedOn: rec.UpdatedOn, Propagation: &Propagation{Change: []string{}, Status: PropagationNone}}, nil
	}
	set := old
	f := false
	set.IsActive = &f
	return a.write(ctx, old, set, rec, ifMatch, by)
}

// write stores set as the next version, written by by, and propagates the change.
func (a *Admin) write(ctx context.Context, old, set Setting, rec store.ReminderSettingRecord, ifMatch int64, by string) (SettingResult, error) {
	now := a.Clock.Now()
	next, err := SettingRecord(set, ifMatch+1, now)
	next.UpdatedBy = automation.OperatorName(by)
	if err != nil {
		return SettingResult{}, err
	}
	if ClassifyChange(old, set).NeedsPropagation() {
		if err := a.requestFirst(ctx, set.Guid, now); err != nil {
			return SettingResult{}, err
		}
	}
	if err := a.Store.ReminderSettingUpdate(ctx, next, ifMatch); err != nil {
		return SettingResult{}, err
	}
	change := ClassifyChange(old, set)
	res := SettingResult{Setting: set, Version: next.Version, UpdatedOn: ms(now),
		Propagation: &Propagation{Change: change.Names(), Status: PropagationNone}}
	if change.NeedsPropagation() {
		a.propagate(ctx, set.Guid, now, res.Propagation)
	}
	if res.Warnings, err = a.warnings(ctx, set); err != nil {
		return res, err
	}
	return res, nil
}

// requestFirst records that a pass of the setting's propagation is owed before the change
// is stored: a change is never stored without it (a failure here stores nothing), so a
// crash between the write and the inline propagation leaves the pass to Reconciliation. A
// pass run before the write is harmless (idempotent) and propagate requests another after.
func (a *Admin) requestFirst(ctx context.Context, guid string, now time.Time) error {
	if err := a.Store.ReconcileStateRequest(ctx, settingSweepKey(guid), now); err != nil {
		return fmt.Errorf("requesting the propagation of setting %s: %w", guid, err)
	}
	return nil
}

// withGuid adds "guid" to a JSON object that has none (a PUT may omit it).
func withGuid(raw []byte, guid string) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, &automation.Error{Code: automation.CodeMalformed, Message: "the body must be one JSON object (a reminder setting)"}
	}
	if _, ok := m["guid"]; ok {
		return raw, nil
	}
	g, _ := json.Marshal(guid)
	m["guid"] = g
	return json.Marshal(m)
}

// WithGuid is withGuid for the API's create: a POST without "guid" gets the one given.
func WithGuid(raw []byte, guid string) ([]byte, error) { return withGuid(raw, guid) }
