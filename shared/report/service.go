package report

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/trace"
)

// Store is what the report service and handler need.
type Store interface {
	store.SchedulerStore
	store.ReportStore
	BusinessUnitGet(ctx context.Context, id string) (store.BusinessUnit, error)
}

// Blobs stores report files: trace.Store in production (Blob Storage in Azure, a local
// folder in embedded mode).
type Blobs interface {
	PutBlob(ctx context.Context, name string, data []byte) error
	GetBlob(ctx context.Context, name string) ([]byte, error)
}

// DefaultMinInterval is the shortest allowed gap between two scheduled runs.
const DefaultMinInterval = time.Hour

// Config wires a Service. Store, Blobs, Renderers and Clock are required.
type Config struct {
	Store     Store
	Blobs     Blobs
	Renderers *Registry
	// Channels lists the channel names subscriptions may use (nil: any).
	Channels map[string]bool
	// RecipientCheck, when set, refuses a recipient a channel can never send to (e.g. an
	// e-mail address on the webhook channel) when a subscription is saved: wire it to the
	// channels' delivery.Channel.ValidateRecipient.
	RecipientCheck func(channel, recipient string) error
	// CanAttach, when set, says whether a channel sends attachments; delivery "attachment"
	// is refused on a channel that cannot (it would fail on every run).
	CanAttach func(channel string) bool
	// MinInterval is the shortest gap between scheduled runs (default DefaultMinInterval).
	MinInterval time.Duration
	Clock       automation.Clock
	// Trace, when set, adds the run's trace rows to run detail.
	Trace trace.Reader
	Log   *slog.Logger
}

// Service manages report subscriptions, their runs, the one-owner guard seen from the old
// scheduler, and rollout modes (docs/architecture.md#rollout). Every method validates before it writes:
// bad input returns an error and changes nothing.
type Service struct{ c Config }

// New validates c and returns a Service.
func New(c Config) (*Service, error) {
	if c.Store == nil || c.Blobs == nil || c.Renderers == nil || c.Clock == nil {
		return nil, errors.New("report: Store, Blobs, Renderers and Clock are required")
	}
	if c.MinInterval == 0 {
		c.MinInterval = DefaultMinInterval
	}
	if c.MinInterval < time.Minute {
		return nil, fmt.Errorf("report: MinInterval %s is shorter than a minute", c.MinInterval)
	}
	if c.Log == nil {
		c.Log = slog.New(slog.DiscardHandler)
	}
	return &Service{c: c}, nil
}

// Now is the service clock's instant (UTC).
func (s *Service) Now() time.Time { return s.c.Clock.Now() }

// Renderers returns the registry of report types.
func (s *Service) Renderers() *Registry { return s.c.Renderers }

func notFound(what string) error {
	return automation.Errorf(automation.CodeNotFound, "%s not found", what)
}

func conflict(f string, a ...any) error { return automation.Errorf(automation.CodeConflict, f, a...) }

// --- subscriptions ------------------------------------------------------------------

// View is a subscription as the API shows it: the stored subscription, its next scheduled
// run and its effective rollout mode.
type View struct {
	Subscription
	NextRun *NextRun      `json:"nextRun,omitempty"`
	Rollout EffectiveMode `json:"rollout"`
}

// NextRun is the next scheduled run of an active subscription.
type NextRun struct {
	SchedulerKey string    `json:"schedulerKey"`
	RunKeyHash   string    `json:"runKeyHash"`
	ScheduledOn  time.Time `json:"scheduledOn"` // UTC
	LocalTime    string    `json:"localTime"`   // RFC 3339 with the business unit's offset
}

// LocalTimeLayout is RFC 3339 with a numeric offset always, so a local time is never
// mistaken for a UTC instant.
const LocalTimeLayout = "2006-01-02T15:04:05-07:00"

// load returns a subscription visible to scope (deleted ones only when withDeleted).
func (s *Service) load(ctx context.Context, scope automation.Scope, guid string, withDeleted bool) (Subscription, error) {
	if !guidRE.MatchString(guid) {
		return Subscription{}, notFound("report subscription")
	}
	rec, err := s.c.Store.ReportSubscriptionGet(ctx, strings.ToLower(guid))
	if errors.Is(err, store.ErrNotFound) || (err == nil && (!scope.Allows(rec.BusinessUnitID) ||
		(!withDeleted && rec.Status == store.ReportSubscriptionDeleted))) {
		return Subscription{}, notFound("report subscription " + guid)
	}
	if err != nil {
		return Subscription{}, err
	}
	return fromRecord(rec)
}

func (s *Service) zone(ctx context.Context, scope automation.Scope, buID string) (store.BusinessUnit, error) {
	bu, err := businessunit.InScope(ctx, s.c.Store, scope, buID)
	if errors.Is(err, store.ErrNotFound) {
		return bu, automation.Invalid("businessUnitId", "unknown business unit %q", buID)
	}
	return bu, err
}

func (s *Service) rules(tz string) Rules {
	return Rules{Renderers: s.c.Renderers, Channels: s.c.Channels, RecipientCheck: s.c.RecipientCheck, CanAttach: s.c.CanAttach, MinInterval: s.c.MinInterval,
		Now: s.c.Clock.Now(), TimeZoneID: tz}
}

// Get returns a subscription (404 when unknown, deleted or outside scope).
func (s *Service) Get(ctx context.Context, scope automation.Scope, guid string) (View, error) {
	sub, err := s.load(ctx, scope, guid, false)
	if err != nil {
		return View{}, err
	}
	return s.view(ctx, sub)
}

func (s *Service) view(ctx context.Context, sub Subscription) (View, error) {
	v := View{Subscription: sub}
	mode, err := s.Mode(ctx, sub)
	if err != nil {
		return v, err
	}
	v.Rollout = mode
	if !sub.Active() {
		return v, nil
	}
	bu, err := s.c.Store.BusinessUnitGet(ctx, sub.BusinessUnitID)
	if err != nil {
		return v, err
	}
	sched, err := Compile(sub.Recurrence, bu.TimeZoneID)
	if err != nil {
		return v, nil // shown without a next run; the handler reports the problem at run time
	}
	if occ, ok := sched.Next(s.c.Clock.Now()); ok {
		key, _ := automation.ReportScheduledKey(sub.Guid, occ.At)
		v.NextRun = &NextRun{SchedulerKey: key, RunKeyHash: StorageRunKeyHash(key), ScheduledOn: occ.At,
			LocalTime: occ.At.In(sched.Location()).Format(LocalTimeLayout)}
	}
	return v, nil
}

// Create stores a new subscription with guid (chosen by the caller: a DeterministicID of
// the request's Idempotency-Key, or a fresh one) and ensures its next scheduled run. A
// repeat with the same guid and the same definition returns the stored subscription; with
// another definition it is a conflict. A guid taken outside the caller's scope answers
// NotFound, like an unknown subscription.
func (s *Service) Create(ctx context.Context, scope automation.Scope, guid string, in Input) (View, error) {
	if !guidRE.MatchString(guid) {
		return View{}, automation.Invalid("guid", "must be a GUID")
	}
	guid = strings.ToLower(guid)
	bu, err := s.zone(ctx, scope, in.BusinessUnitID)
	if err != nil {
		return View{}, err
	}
	sched, err := in.Validate(s.rules(bu.TimeZoneID))
	if err != nil {
		return View{}, err
	}
	now := s.c.Clock.Now()
	sub := Subscription{Guid: guid, Input: in, Version: 1, CreatedOn: now, UpdatedOn: now}
	rec, err := record(sub)
	if err != nil {
		return View{}, err
	}
	rec.UpdatedBy = automation.OperatorName(in.UpdatedBy)
	stored, err := s.c.Store.ReportSubscriptionInsert(ctx, rec)
	if errors.Is(err, store.ErrConflict) {
		cur, gerr := s.c.Store.ReportSubscriptionGet(ctx, guid)
		if gerr != nil {
			return View{}, gerr
		}
		if !scope.Allows(cur.BusinessUnitID) {
			// Taken outside the caller's scope: the answer of an unknown subscription, so
			// the id cannot be probed (docs/api-conventions.md#business-unit-scope).
			return View{}, notFound("report subscription " + guid)
		}
		if cur.Body != rec.Body || cur.BusinessUnitID != rec.BusinessUnitID || cur.Status != rec.Status {
			return View{}, conflict("report subscription %s already exists with another definition", guid)
		}
		stored, err = cur, nil // a retry of the same create
	}
	if err != nil {
		return View{}, err
	}
	if sub, err = fromRecord(stored); err != nil {
		return View{}, err
	}
	if err := s.sync(ctx, sub, sched, now); err != nil {
		return View{}, err
	}
	return s.view(ctx, sub)
}

// Put creates the subscription guid when it does not exist (ifMatch must then be absent),
// or replaces it: ifMatch (its Version, from If-Match) is required and must be current, and
// the business unit cannot change. Pausing deactivates pending runs; resuming or changing
// the schedule ensures the next run and deactivates pending runs of other keys. Template,
// channels and recipients apply to every run that has not executed yet.
func (s *Service) Put(ctx context.Context, scope automation.Scope, guid string, in Input, ifMatch *int64) (View, bool, error) {
	cur, err := s.load(ctx, scope, guid, true)
	if automation.CodeOf(err) == automation.CodeNotFound {
		// Not visible: create it - unless it exists outside the caller's scope, which answers
		// the 404 of an unknown subscription and writes nothing: a "taken" conflict would tell
		// that the id exists in another business unit (docs/api-conventions.md#business-unit-scope).
		if _, gerr := s.c.Store.ReportSubscriptionGet(ctx, strings.ToLower(guid)); gerr == nil {
			return View{}, false, err
		} else if !errors.Is(gerr, store.ErrNotFound) {
			return View{}, false, gerr
		}
		if ifMatch != nil {
			return View{}, false, &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match", Message: "the subscription does not exist"}
		}
		v, err := s.Create(ctx, scope, guid, in)
		return v, err == nil, err
	}
	if err != nil {
		return View{}, false, err
	}
	if cur.Status == store.ReportSubscriptionDeleted {
		return View{}, false, conflict("report subscription %s was deleted; create a new one", cur.Guid)
	}
	if ifMatch == nil {
		return View{}, false, &automation.Error{Code: automation.CodePreconditionRequired, Field: "If-Match", Message: "send If-Match with the ETag of the version you read"}
	}
	if *ifMatch != cur.Version {
		return View{}, false, &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match",
			Message: fmt.Sprintf("the subscription is at version \"%d\", not \"%d\"; read it again", cur.Version, *ifMatch)}
	}
	if in.BusinessUnitID != cur.BusinessUnitID {
		return View{}, false, automation.Invalid("businessUnitId", "cannot change (%q); create a new subscription in the other business unit", cur.BusinessUnitID)
	}
	bu, err := s.zone(ctx, scope, in.BusinessUnitID)
	if err != nil {
		return View{}, false, err
	}
	sched, err := in.Validate(s.rules(bu.TimeZoneID))
	if err != nil {
		return View{}, false, err
	}
	now := s.c.Clock.Now()
	next := Subscription{Guid: cur.Guid, Input: in, Version: cur.Version, CreatedOn: cur.CreatedOn, UpdatedOn: now}
	rec, err := record(next)
	if err != nil {
		return View{}, false, err
	}
	rec.UpdatedBy = automation.OperatorName(in.UpdatedBy)
	stored, err := s.c.Store.ReportSubscriptionUpdate(ctx, store.ReportSubscriptionUpdateParams{Record: rec, ExpectedVersion: cur.Version})
	if errors.Is(err, store.ErrLeaseLost) {
		return View{}, false, &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match", Message: "the subscription changed meanwhile; read it again"}
	}
	if err != nil {
		return View{}, false, err
	}
	if next, err = fromRecord(stored); err != nil {
		return View{}, false, err
	}
	if err := s.sync(ctx, next, sched, now); err != nil {
		return View{}, false, err
	}
	v, err := s.view(ctx, next)
	return v, false, err
}

// Delete tombstones the subscription (its runs keep their history) and deactivates its
// pending runs. ifMatch (If-Match) is required.
func (s *Service) Delete(ctx context.Context, scope automation.Scope, guid string, ifMatch *int64) error {
	return s.DeleteBy(ctx, scope, guid, ifMatch, "")
}

// DeleteBy is Delete by an operator (its principal first), stored with the tombstone
// (store.ReportSubscriptionRecord.UpdatedBy, docs/security.md#audit); "" names nobody.
func (s *Service) DeleteBy(ctx context.Context, scope automation.Scope, guid string, ifMatch *int64, by string) error {
	cur, err := s.load(ctx, scope, guid, false)
	if err != nil {
		return err
	}
	if ifMatch == nil {
		return &automation.Error{Code: automation.CodePreconditionRequired, Field: "If-Match", Message: "send If-Match with the ETag of the version you read"}
	}
	if *ifMatch != cur.Version {
		return &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match",
			Message: fmt.Sprintf("the subscription is at version \"%d\", not \"%d\"; read it again", cur.Version, *ifMatch)}
	}
	now := s.c.Clock.Now()
	cur.Status, cur.UpdatedOn = store.ReportSubscriptionDeleted, now
	rec, err := record(cur)
	if err != nil {
		return err
	}
	rec.UpdatedBy = automation.OperatorName(by)
	stored, err := s.c.Store.ReportSubscriptionUpdate(ctx, store.ReportSubscriptionUpdateParams{Record: rec, ExpectedVersion: cur.Version})
	if errors.Is(err, store.ErrLeaseLost) {
		return &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match", Message: "the subscription changed meanwhile; read it again"}
	}
	if err != nil {
		return err
	}
	sub, err := fromRecord(stored)
	if err != nil {
		return err
	}
	return s.sync(ctx, sub, nil, now)
}

// List pages through the subscriptions visible to scope, by Guid (businessUnitID narrows
// it). next is the last Guid of a full page ("" when there is no more).
func (s *Service) List(ctx context.Context, scope automation.Scope, businessUnitID, after string, limit int) (out []View, next string, err error) {
	if businessUnitID != "" && !scope.Allows(businessUnitID) {
		return nil, "", nil
	}
	if limit < 1 {
		return nil, after, nil
	}
	// Scan forward until the page is full: rows of other business units are skipped.
	ranOut, err := scanPages(limit, func() ([]store.ReportSubscriptionRecord, error) {
		return s.c.Store.ReportSubscriptionList(ctx, store.ReportSubscriptionListParams{BusinessUnitID: businessUnitID, AfterGuid: after, Limit: limit})
	}, func(r store.ReportSubscriptionRecord) (bool, error) {
		after = r.Guid
		if !scope.Allows(r.BusinessUnitID) {
			return false, nil
		}
		sub, err := fromRecord(r)
		if err != nil {
			return false, err
		}
		v, err := s.view(ctx, sub)
		if err != nil {
			return false, err
		}
		out = append(out, v)
		return len(out) == limit, nil
	})
	switch {
	case err != nil:
		return nil, "", err
	case ranOut:
		return out, "", nil
	}
	return out, after, nil
}

// sync brings the subscription's scheduled rows in line with it (docs/architecture.md#report-subscriptions lifecycle): active →
// ensure only the next scheduled run and deactivate other pending scheduled rows
// (Superseded); paused or deleted → deactivate every pending run. Completed runs are never
// touched; rows being processed are revalidated by the handler.
func (s *Service) sync(ctx context.Context, sub Subscription, sched *Schedule, now time.Time) error {
	keep := ""
	if sub.Active() {
		if sched == nil {
			return errors.New("report: sync of an active subscription without a schedule")
		}
		occ, ok := sched.Next(now)
		if err := sched.Err(); err != nil {
			return err
		}
		if !ok {
			return automation.Invalid("recurrence", "never occurs after %s", now.Format(time.RFC3339))
		}
		c, err := s.scheduledCandidate(ctx, sub, sched, occ)
		if err != nil {
			return err
		}
		if _, err := s.c.Store.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: now, Candidates: []automation.Candidate{c}}); err != nil {
			return err
		}
		keep = c.SchedulerKey
	}
	reason := automation.ReasonSuperseded
	switch sub.Status {
	case store.ReportSubscriptionPaused:
		reason = ReasonSubscriptionPaused
	case store.ReportSubscriptionDeleted:
		reason = ReasonSubscriptionDeleted
	}
	rows, err := s.c.Store.ReportSchedulerListOpen(ctx, sub.Guid, store.MaxBatch)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if r.Status != automation.StatusPending || r.SchedulerKey == keep {
			continue
		}
		if sub.Active() && r.TriggerType != automation.TriggerScheduledRun {
			continue // an active subscription keeps its run-now and support-retry runs
		}
		err := s.c.Store.SchedulerDeactivate(ctx, store.SchedulerDeactivateParams{ID: r.ID, Token: r.Version, Now: now, Reason: reason})
		if errors.Is(err, store.ErrLeaseLost) {
			// Claimed meanwhile: the handler revalidates it against the subscription.
			s.c.Log.Info("report run changed while deactivating; the handler revalidates it", "schedulerKey", r.SchedulerKey)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// scheduledCandidate registers the run of occurrence occ and returns its candidate. The
// run reports on [previous occurrence, occ) - or, for the first one, from the
// subscription's creation.
func (s *Service) scheduledCandidate(ctx context.Context, sub Subscription, sched *Schedule, occ Occurrence) (automation.Candidate, error) {
	key, err := automation.ReportScheduledKey(sub.Guid, occ.At)
	if err != nil {
		return automation.Candidate{}, err
	}
	start := sub.CreatedOn
	if prev, ok := sched.Prev(occ.At); ok {
		start = prev.At
	}
	if !start.Before(occ.At) {
		start = occ.At.Add(-24 * time.Hour)
	}
	if _, _, err := s.c.Store.ReportRunRegister(ctx, store.ReportRunRecord{RunKeyHash: StorageRunKeyHash(key), SchedulerKey: key,
		SubscriptionGuid: sub.Guid, BusinessUnitID: sub.BusinessUnitID, RunKind: store.ReportRunScheduled, OwnershipKey: key,
		PeriodStart: start, PeriodEnd: occ.At, CreatedOn: s.c.Clock.Now()}); err != nil {
		return automation.Candidate{}, err
	}
	return automation.Candidate{
		AutomationType: automation.TypeReportSubscription, TriggerType: automation.TriggerScheduledRun,
		SchedulerKey: key, InputHash: automation.InputHash(map[string]string{"key": key, "zone": sched.ZoneID(),
			"localDate": occ.Date.String(), "localTime": occ.Time.String()}),
		SettingGuid: sub.Guid, SourceEntityType: SourceEntityType, SourceEntityGuid: sub.Guid, BusinessUnitID: sub.BusinessUnitID,
		ScheduledOn: occ.At, ScheduledLocalDate: occ.Date.String(), ScheduledLocalTime: occ.Time.String(), TimeZoneID: sched.ZoneID(),
	}, nil
}

// nowCandidate is a run due now (run-now, support retry).
func nowCandidate(sub Subscription, key string, trigger automation.TriggerType, tz string, loc *time.Location, now time.Time, hashInput any) automation.Candidate {
	d := localtime.DateOf(now, loc)
	w := now.In(loc)
	return automation.Candidate{
		AutomationType: automation.TypeReportSubscription, TriggerType: trigger, SchedulerKey: key,
		InputHash: automation.InputHash(hashInput), SettingGuid: sub.Guid, SourceEntityType: SourceEntityType,
		SourceEntityGuid: sub.Guid, BusinessUnitID: sub.BusinessUnitID, ScheduledOn: now, ScheduledLocalDate: d.String(),
		ScheduledLocalTime: localtime.TimeOfDay{Hour: w.Hour(), Minute: w.Minute()}.String(), TimeZoneID: tz,
	}
}

// --- rollout ------------------------------------------------------------------------

// Mode returns a subscription's effective rollout mode: its own, else its business unit's,
// else Shadow.
func (s *Service) Mode(ctx context.Context, sub Subscription) (EffectiveMode, error) {
	for _, sc := range []struct {
		scope store.ReportRolloutScope
		id    string
		src   ModeSource
	}{{store.RolloutSubscription, sub.Guid, SourceSubscription}, {store.RolloutBusinessUnit, sub.BusinessUnitID, SourceBusinessUnit}} {
		r, err := s.c.Store.ReportRolloutGet(ctx, sc.scope, sc.id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return EffectiveMode{}, err
		}
		return EffectiveMode{Mode: Mode(r.Mode), Source: sc.src}, nil
	}
	return EffectiveMode{Mode: ModeShadow, Source: SourceDefault}, nil
}

// Rollout is a stored rollout mode as the API shows it.
type Rollout struct {
	ScopeType store.ReportRolloutScope `json:"scopeType"`
	ScopeID   string                   `json:"scopeId"`
	Mode      Mode                     `json:"mode"`
	Version   int64                    `json:"version"`
	UpdatedOn time.Time                `json:"updatedOn"`
	UpdatedBy string                   `json:"updatedBy,omitempty"`
	// Released counts ownerships of not-yet-delivered runs returned to the old scheduler by
	// this change.
	Released int `json:"released"`
}

// checkRolloutScope returns the subscriptions a scope covers (one for a subscription; the
// business unit's otherwise), 404 when the scope is unknown or outside the caller's.
func (s *Service) checkRolloutScope(ctx context.Context, scope automation.Scope, st store.ReportRolloutScope, id string) ([]Subscription, error) {
	switch st {
	case store.RolloutSubscription:
		sub, err := s.load(ctx, scope, id, false)
		if err != nil {
			return nil, err
		}
		return []Subscription{sub}, nil
	case store.RolloutBusinessUnit:
		if _, err := s.c.Store.BusinessUnitGet(ctx, id); errors.Is(err, store.ErrNotFound) || !scope.Allows(id) {
			return nil, notFound("business unit " + id)
		} else if err != nil {
			return nil, err
		}
		var subs []Subscription
		after := ""
		for {
			recs, err := s.c.Store.ReportSubscriptionList(ctx, store.ReportSubscriptionListParams{BusinessUnitID: id, AfterGuid: after, Limit: store.MaxBatch})
			if err != nil {
				return nil, err
			}
			for _, r := range recs {
				sub, err := fromRecord(r)
				if err != nil {
					return nil, err
				}
				subs = append(subs, sub)
				after = r.Guid
			}
			if len(recs) < store.MaxBatch {
				return subs, nil
			}
		}
	}
	return nil, automation.Invalid("scopeType", "must be %s or %s", store.RolloutBusinessUnit, store.RolloutSubscription)
}

// SetRollout sets the mode of a business unit or subscription. When the change takes runs
// away from our scheduler, ownership of those runs that we hold but have not delivered is
// released (Cancelled), so the old scheduler can acquire them (rollback, docs/architecture.md#rollout).
func (s *Service) SetRollout(ctx context.Context, scope automation.Scope, st store.ReportRolloutScope, id string, mode Mode, operator string) (Rollout, error) {
	if !mode.Valid() {
		return Rollout{}, automation.Invalid("mode", "must be one of Shadow, RunNowAllowlist, ScheduledAllowlist, Cutover, got %q", mode)
	}
	subs, err := s.checkRolloutScope(ctx, scope, st, id)
	if err != nil {
		return Rollout{}, err
	}
	rec, err := s.c.Store.ReportRolloutPut(ctx, store.ReportRolloutRecord{ScopeType: st, ScopeID: id, Mode: string(mode),
		UpdatedOn: s.c.Clock.Now(), UpdatedBy: operator})
	if err != nil {
		return Rollout{}, err
	}
	out := Rollout{ScopeType: rec.ScopeType, ScopeID: rec.ScopeID, Mode: Mode(rec.Mode), Version: rec.Version, UpdatedOn: rec.UpdatedOn, UpdatedBy: rec.UpdatedBy}
	out.Released, err = s.releaseForModes(ctx, subs)
	s.c.Log.Info("report rollout mode set", "scopeType", st, "scopeId", id, "mode", mode, "operator", operator, "released", out.Released)
	return out, err
}

// RemoveRollout deletes the mode of a business unit or subscription (the rollback: the
// subscription falls back to its business unit's mode, else Shadow) and releases the
// ownership the new effective mode no longer allows us. removed=false when none was set.
// The delete records operator (the caller's principal first) in OperatorAudit, in the
// delete's transaction (docs/security.md#audit).
func (s *Service) RemoveRollout(ctx context.Context, scope automation.Scope, st store.ReportRolloutScope, id, operator string) (released int, removed bool, err error) {
	subs, err := s.checkRolloutScope(ctx, scope, st, id)
	if err != nil {
		return 0, false, err
	}
	bu := id
	if st == store.RolloutSubscription {
		bu = subs[0].BusinessUnitID
	}
	audit := &store.OperatorAudit{At: s.c.Clock.Now().UTC(), BusinessUnitID: bu, Action: store.AuditRolloutDelete,
		Target: string(st) + ":" + id, Operator: store.AuditOperator(operator)}
	if removed, err = s.c.Store.ReportRolloutDelete(ctx, st, id, audit); err != nil {
		return 0, false, err
	}
	released, err = s.releaseForModes(ctx, subs)
	s.c.Log.Info("report rollout mode removed", "scopeType", st, "scopeId", id, "operator", operator, "released", released, "removed", removed)
	return released, removed, err
}

// releaseForModes cancels our Owned (never DeliveryCreated) ownerships of run kinds the
// subscriptions' effective modes no longer give us.
func (s *Service) releaseForModes(ctx context.Context, subs []Subscription) (int, error) {
	total := 0
	for _, sub := range subs {
		m, err := s.Mode(ctx, sub)
		if err != nil {
			return total, err
		}
		var kinds []store.ReportRunKind
		for _, k := range []store.ReportRunKind{store.ReportRunScheduled, store.ReportRunManual} {
			if !m.Mode.AutomationRuns(k) {
				kinds = append(kinds, k)
			}
		}
		if len(kinds) == 0 {
			continue
		}
		for {
			n, err := s.c.Store.ReportOwnershipReleaseAll(ctx, store.ReportOwnershipReleaseAllParams{SubscriptionGuid: sub.Guid,
				Owner: store.OwnerAutomationScheduler, Kinds: kinds, Now: s.c.Clock.Now(), Limit: store.MaxBatch})
			total += n
			if err != nil || n < store.MaxBatch {
				if err != nil {
					return total, err
				}
				break
			}
		}
	}
	return total, nil
}

// ListRollouts returns the rollout modes visible to scope (at most limit).
func (s *Service) ListRollouts(ctx context.Context, scope automation.Scope, limit int) ([]Rollout, error) {
	var out []Rollout
	if limit < 1 {
		return out, nil
	}
	var afterType store.ReportRolloutScope
	afterID := ""
	_, err := scanPages(store.MaxBatch, func() ([]store.ReportRolloutRecord, error) {
		return s.c.Store.ReportRolloutList(ctx, store.ReportRolloutListParams{AfterScopeType: afterType, AfterScopeID: afterID, Limit: store.MaxBatch})
	}, func(r store.ReportRolloutRecord) (bool, error) {
		afterType, afterID = r.ScopeType, r.ScopeID
		bu := r.ScopeID
		if r.ScopeType == store.RolloutSubscription {
			sub, err := s.c.Store.ReportSubscriptionGet(ctx, r.ScopeID)
			if err != nil {
				return false, nil
			}
			bu = sub.BusinessUnitID
		}
		if !scope.Allows(bu) {
			return false, nil
		}
		out = append(out, Rollout{ScopeType: r.ScopeType, ScopeID: r.ScopeID, Mode: Mode(r.Mode), Version: r.Version, UpdatedOn: r.UpdatedOn, UpdatedBy: r.UpdatedBy})
		return len(out) == limit, nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// decodeCoordinates reads CoordinatesJson written by the handler.
func decodeCoordinates(raw string) (Coordinates, error) {
	var c Coordinates
	err := json.Unmarshal([]byte(raw), &c)
	return c, err
}
