package report

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/trace"
)

// MaxManualPeriod bounds the period of a run-now.
const MaxManualPeriod = 366 * 24 * time.Hour

// RunNowInput is the optional body of a run-now: the period to report on, either named
// (Period) or given as UTC instants [PeriodStartUTC, PeriodEndUTC) - not both. See
// NamedPeriod for the named ones; the default is PeriodCurrent.
type RunNowInput struct {
	Period         Period     `json:"period,omitempty"`
	PeriodStartUTC *time.Time `json:"periodStartUtc,omitempty"`
	PeriodEndUTC   *time.Time `json:"periodEndUtc,omitempty"`
	Reason         string     `json:"reason,omitempty"`
}

// Period names the period a run-now reports on, by the subscription's own schedule.
type Period string

const (
	// PeriodCurrent is the current period so far: from the latest scheduled occurrence
	// before now to now (the run the schedule will make next, early).
	PeriodCurrent Period = "current"
	// PeriodPrevious is the last full period: from the occurrence before the latest one to
	// the latest one (the run the schedule made last, again).
	PeriodPrevious Period = "previous"
)

// NamedPeriod returns the UTC instants [start, end) of a named period of sched at now.
// A period before the rule's first occurrence (a subscription whose dtStart is still ahead,
// or its first period) is as long as the rule's first interval (the first two occurrences
// after now, or after the latest one; one day for a rule with a single occurrence) and ends
// at the next boundary back: so a run right after a subscription is created reports on a
// whole period of what already happened, never an empty instant. A period is at most
// MaxManualPeriod long (the start moves later). Errors: automation.Invalid("period") for an
// unknown name.
func NamedPeriod(sched *Schedule, p Period, now time.Time) (start, end time.Time, err error) {
	interval := func(after time.Time) time.Duration {
		if a, ok := sched.Next(after); ok {
			if b, ok := sched.Next(a.At); ok {
				return b.At.Sub(a.At)
			}
		}
		return 24 * time.Hour
	}
	latest, hasLatest := sched.Prev(now)
	switch p {
	case "", PeriodCurrent:
		end = now
		if hasLatest {
			start = latest.At
		} else {
			start = now.Add(-interval(now))
		}
	case PeriodPrevious:
		if !hasLatest {
			l := interval(now)
			start, end = now.Add(-2*l), now.Add(-l)
			break
		}
		end = latest.At
		if before, ok := sched.Prev(latest.At); ok {
			start = before.At
		} else {
			start = end.Add(-interval(end.Add(-time.Nanosecond)))
		}
	default:
		return time.Time{}, time.Time{}, automation.Invalid("period", "must be %q or %q, got %q", PeriodCurrent, PeriodPrevious, p)
	}
	if end.Sub(start) > MaxManualPeriod {
		start = end.Add(-MaxManualPeriod)
	}
	if !start.Before(end) {
		start = end.Add(-24 * time.Hour)
	}
	return start.UTC(), end.UTC(), nil
}

// RunView is one run as the support API shows it. Instants UTC.
type RunView struct {
	SubscriptionGuid  string              `json:"subscriptionGuid"`
	RunKeyHash        string              `json:"runKeyHash"`
	SchedulerKey      string              `json:"schedulerKey"`
	Kind              store.ReportRunKind `json:"kind"`
	ManualRunGuid     string              `json:"manualRunGuid,omitempty"`
	Status            automation.Status   `json:"status,omitempty"` // "" when the row does not exist (yet)
	ScheduledOn       *time.Time          `json:"scheduledOn,omitempty"`
	LocalTime         string              `json:"localTime,omitempty"`
	PeriodStartUTC    time.Time           `json:"periodStartUtc"`
	PeriodEndUTC      time.Time           `json:"periodEndUtc"`
	RetryCount        int                 `json:"retryCount"`
	IsOnSupportHold   bool                `json:"isOnSupportHold"`
	ReasonCode        string              `json:"reasonCode,omitempty"`
	FailureReasonCode string              `json:"failureReasonCode,omitempty"`
	CompletedOn       *time.Time          `json:"completedOn,omitempty"`
	RequestedBy       string              `json:"requestedBy,omitempty"`
	Reason            string              `json:"reason,omitempty"`
	// OwnershipKey is the key whose ownership guards the run (for a support retry, the
	// retried run's key).
	OwnershipKey string `json:"ownershipKey"`
}

// RunDetail is a run with its ownership, delivery coordinates, rollout mode and trace.
type RunDetail struct {
	RunView
	Ownership          *store.ReportOwnership `json:"ownership,omitempty"`
	Coordinates        *Coordinates           `json:"coordinates,omitempty"`
	DispatchResultJSON string                 `json:"dispatchResultJson,omitempty"`
	TraceBlobName      string                 `json:"traceBlobName,omitempty"`
	Rollout            EffectiveMode          `json:"rollout"`
	Trace              []trace.JobRecord      `json:"trace"`
}

func (s *Service) runView(ctx context.Context, run store.ReportRunRecord) (RunView, *automation.SchedulerRow, error) {
	v := RunView{SubscriptionGuid: run.SubscriptionGuid, RunKeyHash: run.RunKeyHash, SchedulerKey: run.SchedulerKey, Kind: run.RunKind,
		PeriodStartUTC: run.PeriodStart, PeriodEndUTC: run.PeriodEnd, RequestedBy: run.RequestedBy, Reason: run.Reason, OwnershipKey: run.OwnershipKey}
	if run.RunKind == store.ReportRunManual {
		v.ManualRunGuid = run.SchedulerKey[strings.LastIndexByte(run.SchedulerKey, ':')+1:]
	}
	row, err := s.c.Store.SchedulerGetByKey(ctx, run.SchedulerKey)
	if errors.Is(err, store.ErrNotFound) {
		return v, nil, nil
	}
	if err != nil {
		return v, nil, err
	}
	fillFromRow(&v, row)
	return v, &row, nil
}

func fillFromRow(v *RunView, row automation.SchedulerRow) {
	v.Status, v.RetryCount, v.IsOnSupportHold = row.Status, row.RetryCount, row.IsOnSupportHold
	v.ReasonCode, v.FailureReasonCode, v.CompletedOn = string(row.ReasonCode), string(row.FailureReasonCode), row.CompletedOn
	at := row.ScheduledOn
	v.ScheduledOn = &at
	if loc, err := localtime.LoadZone(row.TimeZoneID); err == nil {
		v.LocalTime = at.In(loc).Format(LocalTimeLayout)
	}
}

// RunNow creates a manual run of the subscription with manualRunGuid (a DeterministicID of
// the request's Idempotency-Key, so a retry with the same key finds the same run) and
// returns it; the run is due at once. Refused, with nothing stored, for a paused
// subscription, one whose rollout mode leaves manual runs to the old scheduler, an unknown
// report type, or a bad period.
func (s *Service) RunNow(ctx context.Context, scope automation.Scope, guid, manualRunGuid string, in RunNowInput, operator string) (RunView, error) {
	sub, err := s.load(ctx, scope, guid, false)
	if err != nil {
		return RunView{}, err
	}
	if !sub.Active() {
		return RunView{}, conflict("report subscription %s is paused; resume it before running it now", sub.Guid)
	}
	if _, ok := s.c.Renderers.Lookup(sub.ReportType); !ok {
		return RunView{}, automation.Invalid("reportType", "report type %q is not available in this deployment", sub.ReportType)
	}
	mode, err := s.Mode(ctx, sub)
	if err != nil {
		return RunView{}, err
	}
	if !mode.Mode.AutomationRuns(store.ReportRunManual) {
		return RunView{}, conflict("run-now is not enabled for report subscription %s: its rollout mode is %s (%s), so the old scheduler owns its runs; "+
			"to let this platform run it, PUT /api/report-runs/rollout/subscriptions/%s with {\"mode\":\"RunNowAllowlist\"} (or a later mode)", sub.Guid, mode.Mode, mode.Source, sub.Guid)
	}
	if len(in.Reason) > 500 {
		return RunView{}, automation.Invalid("reason", "is longer than 500 characters")
	}
	bu, err := s.c.Store.BusinessUnitGet(ctx, sub.BusinessUnitID)
	if err != nil {
		return RunView{}, err
	}
	sched, err := Compile(sub.Recurrence, bu.TimeZoneID)
	if err != nil {
		return RunView{}, err
	}
	now := s.c.Clock.Now()
	explicit := in.PeriodStartUTC != nil || in.PeriodEndUTC != nil
	if explicit && in.Period != "" {
		return RunView{}, automation.Invalid("period", "give a named period or periodStartUtc/periodEndUtc, not both")
	}
	start, end, err := NamedPeriod(sched, in.Period, now)
	if err != nil {
		return RunView{}, err
	}
	if explicit {
		// An instant left out is the current period's.
		if in.PeriodEndUTC != nil {
			end = in.PeriodEndUTC.UTC()
		}
		if in.PeriodStartUTC != nil {
			start = in.PeriodStartUTC.UTC()
		}
	}
	switch {
	case end.After(now):
		return RunView{}, automation.Invalid("periodEndUtc", "is in the future")
	case !start.Before(end):
		return RunView{}, automation.Invalid("periodStartUtc", "must be before periodEndUtc")
	case end.Sub(start) > MaxManualPeriod:
		return RunView{}, automation.Invalid("periodStartUtc", "the period is longer than 366 days")
	}
	key, err := automation.ReportManualKey(sub.Guid, manualRunGuid)
	if err != nil {
		return RunView{}, automation.Invalid("manualRunGuid", "%v", err)
	}
	run, _, err := s.c.Store.ReportRunRegister(ctx, store.ReportRunRecord{RunKeyHash: StorageRunKeyHash(key), SchedulerKey: key,
		SubscriptionGuid: sub.Guid, BusinessUnitID: sub.BusinessUnitID, RunKind: store.ReportRunManual, OwnershipKey: key,
		PeriodStart: start, PeriodEnd: end, RequestedBy: operator, Reason: in.Reason, CreatedOn: now})
	if err != nil {
		return RunView{}, err
	}
	c := nowCandidate(sub, key, automation.TriggerManualRun, bu.TimeZoneID, sched.Location(), now,
		map[string]any{"key": key, "periodStart": run.PeriodStart, "periodEnd": run.PeriodEnd})
	if _, err := s.c.Store.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: now, Candidates: []automation.Candidate{c}}); err != nil {
		return RunView{}, err
	}
	v, _, err := s.runView(ctx, run)
	return v, err
}

// SupportRetry runs a failed run again under a support-retry key (docs/architecture.md#ensure), audited with the
// operator and reason: a new row due now that reports on the same period and is guarded by
// the same ownership key, while the failed row is deactivated (SupportRetried) and stays as
// history. Only a Failed run, or one on support hold, can be retried; a completed run
// already delivered (use run-now for a new report), a run the old scheduler owns is its to
// deliver, and a run whose kind the rollout mode leaves to the old scheduler is refused (409,
// nothing changed). retryGuid is a DeterministicID of the request's Idempotency-Key.
func (s *Service) SupportRetry(ctx context.Context, scope automation.Scope, guid, runKeyHash, retryGuid, reason, operator string) (RunView, error) {
	sub, err := s.load(ctx, scope, guid, false)
	if err != nil {
		return RunView{}, err
	}
	run, err := s.runOf(ctx, sub, runKeyHash)
	if err != nil {
		return RunView{}, err
	}
	if strings.TrimSpace(reason) == "" || len(reason) > 500 {
		return RunView{}, automation.Invalid("reason", "is required (at most 500 characters): it is kept with the retry")
	}
	row, err := s.c.Store.SchedulerGetByKey(ctx, run.SchedulerKey)
	if errors.Is(err, store.ErrNotFound) {
		return RunView{}, conflict("run %s has no scheduler row to retry", runKeyHash)
	}
	if err != nil {
		return RunView{}, err
	}
	held := row.Status == automation.StatusFailed || (row.IsOnSupportHold && row.Status == automation.StatusPending)
	if !held {
		return RunView{}, conflict("run %s is %s; only a failed run or one on support hold can be retried (a completed run already delivered: use run-now for a new report)", runKeyHash, row.Status)
	}
	if !sub.Active() {
		return RunView{}, conflict("report subscription %s is paused; resume it first", sub.Guid)
	}
	// The retry is executed only if the rollout mode lets us run the retried run's kind;
	// otherwise it would be dropped as ShadowOnly after taking the failed run off the queue.
	ownKind := run.RunKind
	if run.OwnershipKey != run.SchedulerKey {
		orig, err := s.c.Store.ReportRunGetByKey(ctx, run.OwnershipKey)
		if err != nil {
			return RunView{}, err
		}
		ownKind = orig.RunKind
	}
	mode, err := s.Mode(ctx, sub)
	if err != nil {
		return RunView{}, err
	}
	if !mode.Mode.AutomationRuns(ownKind) {
		return RunView{}, conflict("run %s cannot be retried here: the rollout mode of report subscription %s is %s (%s), so the old scheduler owns its %s runs",
			runKeyHash, sub.Guid, mode.Mode, mode.Source, ownKind)
	}
	own, err := s.c.Store.ReportOwnershipGet(ctx, run.OwnershipKey)
	switch {
	case err == nil && own.OwnerType == store.OwnerOldScheduler && own.Status != store.OwnershipCancelled:
		return RunView{}, conflict("the old scheduler owns run %s (%s); it delivers it, or releases it before a retry", runKeyHash, own.Status)
	case err != nil && !errors.Is(err, store.ErrNotFound):
		return RunView{}, err
	}
	bu, err := s.c.Store.BusinessUnitGet(ctx, sub.BusinessUnitID)
	if err != nil {
		return RunView{}, err
	}
	loc, err := localtime.LoadZone(bu.TimeZoneID)
	if err != nil {
		return RunView{}, err
	}
	key, err := SupportRetryKey(sub.Guid, retryGuid)
	if err != nil {
		return RunView{}, automation.Invalid("retryGuid", "%v", err)
	}
	now := s.c.Clock.Now()
	retry, _, err := s.c.Store.ReportRunRegister(ctx, store.ReportRunRecord{RunKeyHash: StorageRunKeyHash(key), SchedulerKey: key,
		SubscriptionGuid: sub.Guid, BusinessUnitID: sub.BusinessUnitID, RunKind: store.ReportRunSupportRetry, OwnershipKey: run.OwnershipKey,
		PeriodStart: run.PeriodStart, PeriodEnd: run.PeriodEnd, RequestedBy: operator, Reason: "support retry of " + run.RunKeyHash + ": " + reason, CreatedOn: now})
	if err != nil {
		return RunView{}, err
	}
	c := nowCandidate(sub, key, automation.TriggerManualRun, bu.TimeZoneID, loc, now, map[string]any{"key": key, "retries": run.SchedulerKey})
	if _, err := s.c.Store.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: now, Candidates: []automation.Candidate{c}}); err != nil {
		return RunView{}, err
	}
	err = s.c.Store.SchedulerDeactivate(ctx, store.SchedulerDeactivateParams{ID: row.ID, Token: row.Version, Now: now, Reason: ReasonSupportRetried})
	if err != nil && !errors.Is(err, store.ErrLeaseLost) {
		return RunView{}, err
	}
	s.c.Log.Info("report run support retry", "schedulerKey", run.SchedulerKey, "retryKey", key, "operator", operator, "businessUnitId", sub.BusinessUnitID)
	v, _, err := s.runView(ctx, retry)
	return v, err
}

// runOf returns the run with runKeyHash of subscription sub (404 otherwise).
func (s *Service) runOf(ctx context.Context, sub Subscription, runKeyHash string) (store.ReportRunRecord, error) {
	if !ValidRunKeyHash(runKeyHash) {
		return store.ReportRunRecord{}, notFound("report run")
	}
	run, err := s.c.Store.ReportRunGetByHash(ctx, runKeyHash)
	if errors.Is(err, store.ErrNotFound) || (err == nil && run.SubscriptionGuid != sub.Guid) {
		return store.ReportRunRecord{}, notFound("report run " + runKeyHash)
	}
	return run, err
}

// Runs returns a subscription's recent runs, newest first (deleted subscriptions included:
// their history stays). next is the cursor for the following page (0 when none).
func (s *Service) Runs(ctx context.Context, scope automation.Scope, guid string, beforeID int64, limit int) ([]RunView, int64, error) {
	sub, err := s.load(ctx, scope, guid, true)
	if err != nil {
		return nil, 0, err
	}
	runs, err := s.c.Store.ReportRunList(ctx, store.ReportRunListParams{SubscriptionGuid: sub.Guid, BeforeID: beforeID, Limit: limit})
	if err != nil {
		return nil, 0, err
	}
	out := make([]RunView, 0, len(runs))
	for _, r := range runs {
		v, _, err := s.runView(ctx, r)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, v)
	}
	var next int64
	if len(runs) == limit {
		next = runs[len(runs)-1].ID
	}
	return out, next, nil
}

// RunDetail returns one run with its ownership, delivery coordinates, effective rollout
// mode and trace rows.
func (s *Service) RunDetail(ctx context.Context, scope automation.Scope, guid, runKeyHash string) (RunDetail, error) {
	sub, err := s.load(ctx, scope, guid, true)
	if err != nil {
		return RunDetail{}, err
	}
	run, err := s.runOf(ctx, sub, runKeyHash)
	if err != nil {
		return RunDetail{}, err
	}
	v, row, err := s.runView(ctx, run)
	if err != nil {
		return RunDetail{}, err
	}
	d := RunDetail{RunView: v, Trace: []trace.JobRecord{}}
	if row != nil {
		d.DispatchResultJSON, d.TraceBlobName = row.DispatchResultJSON, row.TraceBlobName
	}
	own, err := s.c.Store.ReportOwnershipGet(ctx, run.OwnershipKey)
	switch {
	case err == nil:
		d.Ownership = &own
		if own.CoordinatesJSON != "" && own.OwnerType == store.OwnerAutomationScheduler {
			if c, err := decodeCoordinates(own.CoordinatesJSON); err == nil {
				d.Coordinates = &c
			}
		}
	case !errors.Is(err, store.ErrNotFound):
		return RunDetail{}, err
	}
	if d.Rollout, err = s.Mode(ctx, sub); err != nil {
		return RunDetail{}, err
	}
	if s.c.Trace != nil {
		recs, err := s.c.Trace.JobsByKey(ctx, run.SchedulerKey)
		if err != nil {
			s.c.Log.Warn("trace rows not read", "schedulerKey", run.SchedulerKey, "error", err)
		} else if recs != nil {
			d.Trace = recs
		}
	}
	return d, nil
}

// FailedRuns pages through report runs that need support (Failed, or on hold), by row Id,
// in the caller's business units (businessUnitID narrows). next is the cursor (0 when none).
func (s *Service) FailedRuns(ctx context.Context, scope automation.Scope, businessUnitID string, afterID int64, limit int) ([]RunView, int64, error) {
	if businessUnitID != "" && !scope.Allows(businessUnitID) {
		return []RunView{}, 0, nil
	}
	out := []RunView{}
	ranOut, err := scanPages(limit, func() ([]automation.SchedulerRow, error) {
		return s.c.Store.ReportSchedulerListFailed(ctx, store.ReportFailedListParams{BusinessUnitID: businessUnitID, AfterID: afterID, Limit: limit})
	}, func(row automation.SchedulerRow) (bool, error) {
		afterID = row.ID
		if !scope.Allows(row.BusinessUnitID) {
			return false, nil
		}
		v := RunView{SubscriptionGuid: row.SourceEntityGuid, RunKeyHash: StorageRunKeyHash(row.SchedulerKey), SchedulerKey: row.SchedulerKey, OwnershipKey: row.SchedulerKey}
		if run, err := s.c.Store.ReportRunGetByKey(ctx, row.SchedulerKey); err == nil {
			v.Kind, v.PeriodStartUTC, v.PeriodEndUTC, v.OwnershipKey = run.RunKind, run.PeriodStart, run.PeriodEnd, run.OwnershipKey
			v.RequestedBy, v.Reason = run.RequestedBy, run.Reason
		}
		fillFromRow(&v, row)
		out = append(out, v)
		return len(out) == limit, nil
	})
	switch {
	case err != nil:
		return nil, 0, err
	case ranOut:
		return out, 0, nil
	}
	return out, afterID, nil
}

// File returns the stored report file of a run we delivered (404 when the run is unknown,
// outside scope, or has no file).
func (s *Service) File(ctx context.Context, scope automation.Scope, runKeyHash string) (Attachment, []byte, error) {
	if !ValidRunKeyHash(runKeyHash) {
		return Attachment{}, nil, notFound("report run")
	}
	run, err := s.c.Store.ReportRunGetByHash(ctx, runKeyHash)
	if errors.Is(err, store.ErrNotFound) || (err == nil && !scope.Allows(run.BusinessUnitID)) {
		return Attachment{}, nil, notFound("report run " + runKeyHash)
	}
	if err != nil {
		return Attachment{}, nil, err
	}
	own, err := s.c.Store.ReportOwnershipGet(ctx, run.OwnershipKey)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (own.OwnerType != store.OwnerAutomationScheduler || own.CoordinatesJSON == "")) {
		return Attachment{}, nil, notFound("file of report run " + runKeyHash)
	}
	if err != nil {
		return Attachment{}, nil, err
	}
	c, err := decodeCoordinates(own.CoordinatesJSON)
	if err != nil {
		return Attachment{}, nil, err
	}
	data, err := s.c.Blobs.GetBlob(ctx, c.File.BlobName)
	if errors.Is(err, trace.ErrBlobNotFound) {
		return Attachment{}, nil, notFound("file of report run " + runKeyHash)
	}
	return c.File, data, err
}

// ShadowKey is one expected key of the shadow comparison.
type ShadowKey struct {
	SchedulerKey string     `json:"schedulerKey"`
	RunKeyHash   string     `json:"runKeyHash"`
	ScheduledOn  *time.Time `json:"scheduledOn,omitempty"`
	Status       string     `json:"status,omitempty"` // our row's status
	// OldScheduler is the old scheduler's ownership status for the key ("" when it reported
	// no run for it).
	OldScheduler store.ReportOwnershipStatus `json:"oldScheduler,omitempty"`
	Owner        store.ReportOwnerType       `json:"owner,omitempty"`
}

// ShadowComparison compares the scheduled keys we expect for a subscription (its most recent
// scheduled runs) with the runs the old scheduler reported through the ownership API.
type ShadowComparison struct {
	Expected   []ShadowKey `json:"expected"`
	Matched    int         `json:"matched"`
	Missing    int         `json:"missing"`    // expected keys the old scheduler has not reported
	Unexpected []string    `json:"unexpected"` // keys the old scheduler reported that we never expected
	// FreshTo is how fresh the comparison is (UTC): the instant of the read, from the
	// service's clock, taken before any row is read (runs, ownership and scheduler rows are
	// read live; no projection is involved).
	FreshTo time.Time `json:"freshTo"`
}

// Shadow compares the subscription's last `limit` scheduled runs with the old scheduler's
// reported runs (shadow mode, docs/architecture.md#rollout). Keys of due rows count as missing only once due.
func (s *Service) Shadow(ctx context.Context, scope automation.Scope, guid string, limit int) (ShadowComparison, error) {
	read := s.c.Clock.Now().UTC()
	sub, err := s.load(ctx, scope, guid, true)
	if err != nil {
		return ShadowComparison{}, err
	}
	runs, err := s.c.Store.ReportRunList(ctx, store.ReportRunListParams{SubscriptionGuid: sub.Guid, Limit: limit})
	if err != nil {
		return ShadowComparison{}, err
	}
	owns := map[string]store.ReportOwnership{}
	after := ""
	if _, err := scanPages(store.MaxBatch, func() ([]store.ReportOwnership, error) {
		return s.c.Store.ReportOwnershipList(ctx, store.ReportOwnershipListParams{SubscriptionGuid: sub.Guid, AfterKey: after, Limit: store.MaxBatch})
	}, func(o store.ReportOwnership) (bool, error) {
		owns[o.SchedulerKey], after = o, o.SchedulerKey
		return false, nil
	}); err != nil {
		return ShadowComparison{}, err
	}
	now := s.c.Clock.Now()
	out := ShadowComparison{Expected: []ShadowKey{}, Unexpected: []string{}, FreshTo: read}
	expected := map[string]bool{}
	var oldest time.Time
	for _, r := range runs {
		if r.RunKind != store.ReportRunScheduled {
			continue
		}
		expected[r.SchedulerKey] = true
		k := ShadowKey{SchedulerKey: r.SchedulerKey, RunKeyHash: r.RunKeyHash}
		if row, err := s.c.Store.SchedulerGetByKey(ctx, r.SchedulerKey); err == nil {
			at := row.ScheduledOn
			k.ScheduledOn, k.Status = &at, string(row.Status)
			if oldest.IsZero() || at.Before(oldest) {
				oldest = at
			}
		}
		if o, ok := owns[r.SchedulerKey]; ok {
			k.Owner = o.OwnerType
			if o.OwnerType == store.OwnerOldScheduler {
				k.OldScheduler = o.Status
			}
		}
		switch {
		case k.OldScheduler != "":
			out.Matched++
		case k.ScheduledOn != nil && !k.ScheduledOn.After(now):
			out.Missing++
		}
		out.Expected = append(out.Expected, k)
	}
	for key, o := range owns {
		if o.OwnerType != store.OwnerOldScheduler || o.RunKind != store.ReportRunScheduled || expected[key] {
			continue
		}
		if p, err := ParseKey(key); err == nil && !oldest.IsZero() && p.ScheduledOn.Before(oldest) {
			continue // older than the compared window
		}
		out.Unexpected = append(out.Unexpected, key)
	}
	sortStrings(out.Unexpected)
	return out, nil
}
