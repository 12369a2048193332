package support

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/logmask"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/trace"
)

// Trace outcomes of support actions (AutomationJob rows written after each action).
const (
	OutcomeSupportReleased  trace.Outcome = "SupportReleased"
	OutcomeSupportRetried   trace.Outcome = "SupportRetried"
	OutcomeSupportCancelled trace.Outcome = "SupportCancelled"
	OutcomeSupportRunNow    trace.Outcome = "SupportRunNow"
)

// ActRequest names the row (Ref: its Id or Guid), the Version the operator read (IfMatch,
// from the ETag), who acts and why.
type ActRequest struct {
	Ref      string
	IfMatch  int64
	Operator string
	Reason   string
}

// ActResult is the row after the action, the audit record's id and, for a support retry,
// the new row.
type ActResult struct {
	Action   string `json:"action"`
	Row      Row    `json:"row"`
	AuditID  int64  `json:"auditId"`
	RetryRow *Row   `json:"retryRow,omitempty"`
	Note     string `json:"note,omitempty"`
}

// conflict is the answer when the row's state forbids the action (409).
func conflict(format string, args ...any) error {
	return automation.Errorf(automation.CodeConflict, format, args...)
}

// precondition checks the If-Match version against the row's (412 when stale).
func precondition(row automation.SchedulerRow, ifMatch int64) error {
	if row.Version != ifMatch {
		return &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match",
			Message: fmt.Sprintf("the row is at version \"%d\", not \"%d\"; read it again", row.Version, ifMatch)}
	}
	return nil
}

// Release clears the support hold of one row: a Failed row becomes Pending and is due at
// once, a Pending one (a conflict hold) runs at its ScheduledOn. Errors: CodeInvalidInput
// (operator or reason missing), CodeNotFound, CodePreconditionFailed (the Version moved on),
// CodeConflict (the row is not on hold).
func (s *Service) Release(ctx context.Context, sc automation.Scope, req ActRequest) (ActResult, error) {
	return s.act(ctx, sc, req, func(row automation.SchedulerRow) (store.SupportActParams, error) {
		if !row.IsOnSupportHold {
			return store.SupportActParams{}, conflict("the row is %s and not on support hold; nothing to release", row.Status)
		}
		return store.SupportActParams{Action: store.SupportRelease}, nil
	})
}

// Retry makes a row run again now. A Failed row, or a Pending row waiting on backoff or a
// hold, is made due at once (the same row and key). A row that ended — Completed,
// Deactivated or Cancelled — is never reopened: a new support-retry row
// (automation.SupportRetryKey: the original key + ":support-retry:v{version}") is ensured,
// due now, with the same input and local intent, so its deliveries get new delivery keys and
// the original delivery key is never reused; revalidation still applies when it runs.
// Errors as Release, with CodeConflict for Processing rows, for Pending rows that are simply
// waiting for their time, and for ended rows other than reminders (a report run is retried
// by the report API, which registers it; the answer names its route).
func (s *Service) Retry(ctx context.Context, sc automation.Scope, req ActRequest) (ActResult, error) {
	return s.act(ctx, sc, req, func(row automation.SchedulerRow) (store.SupportActParams, error) {
		switch row.Status {
		case automation.StatusFailed:
			return store.SupportActParams{Action: store.SupportRetryNow}, nil
		case automation.StatusPending:
			if row.IsOnSupportHold || row.NextRetryOn != nil {
				return store.SupportActParams{Action: store.SupportRetryNow}, nil
			}
			return store.SupportActParams{}, conflict("the row is Pending and simply waiting for %s; nothing to retry", stamp(row.ScheduledOn))
		case automation.StatusProcessing:
			return store.SupportActParams{}, conflict("the row is being processed (lease until %s); wait for its outcome", leaseText(row))
		case automation.StatusCompleted, automation.StatusDeactivated, automation.StatusCancelled:
			if row.AutomationType != automation.TypeReminder {
				return store.SupportActParams{}, endedRunElsewhere(row)
			}
			c := retryCandidate(row, utc(s.clock.Now()))
			return store.SupportActParams{Action: store.SupportRetry, RetryCandidate: &c}, nil
		}
		return store.SupportActParams{}, conflict("a %s row cannot be retried", row.Status)
	})
}

// Cancel sets a Pending, Failed or Deactivated row to Cancelled (ReasonCode
// SupportCancelled): it is never sent, and a later event that ensures the same occurrence
// with the same input leaves it Cancelled (automation.DecideEnsure). Errors as Release, with
// CodeConflict for Processing, Completed and already Cancelled rows, and for the pending next
// scheduled run of a report subscription (it carries the schedule: pause the subscription).
func (s *Service) Cancel(ctx context.Context, sc automation.Scope, req ActRequest) (ActResult, error) {
	return s.act(ctx, sc, req, func(row automation.SchedulerRow) (store.SupportActParams, error) {
		switch row.Status {
		case automation.StatusPending, automation.StatusFailed, automation.StatusDeactivated:
			if row.Status == automation.StatusPending && row.AutomationType == automation.TypeReportSubscription &&
				row.TriggerType == automation.TriggerScheduledRun {
				// A subscription keeps only its next scheduled run, which schedules the one
				// after when it executes (docs/architecture.md#report-subscriptions): cancelling it would end the schedule silently.
				return store.SupportActParams{}, conflict("this is the next scheduled run of report subscription %s, which carries its schedule: "+
					"cancelling it would stop every later run. To stop the reports, set the subscription's status to Paused "+
					"(PUT /api/report-subscriptions/%s)", row.SettingGuid, row.SettingGuid)
			}
			return store.SupportActParams{Action: store.SupportCancel}, nil
		case automation.StatusProcessing:
			return store.SupportActParams{}, conflict("the row is being processed (lease until %s); cancel it after its outcome", leaseText(row))
		case automation.StatusCompleted:
			return store.SupportActParams{}, conflict("the row completed %s: its delivery was queued and cannot be cancelled here", completedText(row))
		}
		return store.SupportActParams{}, conflict("the row is already %s", row.Status)
	})
}

// RunNow makes a Pending row that is waiting for its time due at once: the operator's
// "trigger" (Hangfire's Trigger, Temporal's trigger-now). The row keeps its key and its local
// intent, so the occurrence is the same one and revalidation (setting, source, recipients,
// lateness) still applies when the poller claims it; its ScheduledOn becomes now (never
// later than it was) and a backoff wait is cleared. Errors as Release, with CodeConflict for
// a row on support hold (release it), a row already due, a Processing or ended row, and the
// next scheduled run of a report subscription (it carries the schedule: the report API's
// POST /api/report-subscriptions/{guid}/runs sends a report now instead).
func (s *Service) RunNow(ctx context.Context, sc automation.Scope, req ActRequest) (ActResult, error) {
	now := utc(s.clock.Now())
	return s.act(ctx, sc, req, func(row automation.SchedulerRow) (store.SupportActParams, error) {
		switch {
		case row.Status == automation.StatusProcessing:
			return store.SupportActParams{}, conflict("the row is being processed (lease until %s); it is running already", leaseText(row))
		case row.Status != automation.StatusPending:
			return store.SupportActParams{}, conflict("the row is %s; run now is for Pending rows (an ended or failed row is retried: retry)", row.Status)
		case row.IsOnSupportHold:
			return store.SupportActParams{}, conflict("the row is on support hold; release it (release) or retry it now (retry) instead")
		case row.AutomationType == automation.TypeReportSubscription && row.TriggerType == automation.TriggerScheduledRun:
			return store.SupportActParams{}, conflict("this is the next scheduled run of report subscription %s, which carries its schedule; "+
				"to send a report now, POST /api/report-subscriptions/%s/runs", row.SettingGuid, row.SettingGuid)
		case !row.ScheduledOn.After(now) && (row.NextRetryOn == nil || !row.NextRetryOn.After(now)):
			return store.SupportActParams{}, conflict("the row is already due (since %s); the next poll runs it", stamp(row.ScheduledOn))
		}
		return store.SupportActParams{Action: store.SupportRunNow}, nil
	})
}

// endedRunElsewhere is the answer to a support retry of an ended row that is not a
// reminder: only reminder revalidation knows support-retry rows ("{key}:support-retry:v{n}").
// A report run is registered by the report service (its run record and one-owner guard, docs/architecture.md#one-owner-guard),
// which has its own audited retry; a generic support-retry row would only fail, unregistered.
func endedRunElsewhere(row automation.SchedulerRow) error {
	if row.AutomationType != automation.TypeReportSubscription {
		return conflict("a %s row that ended cannot be retried here; only reminders get a support-retry row", row.AutomationType)
	}
	hash := "{runKeyHash}"
	var dr struct {
		RunKeyHash string `json:"runKeyHash"`
	}
	if json.Unmarshal([]byte(row.DispatchResultJSON), &dr) == nil && dr.RunKeyHash != "" {
		hash = dr.RunKeyHash
	}
	return conflict("a report run is sent again by the report API, which registers the run and its one-owner guard: "+
		"POST /api/report-subscriptions/%s/automation-runs/%s/retry (GET /api/report-subscriptions/%s/automation-runs lists the runs)",
		row.SettingGuid, hash, row.SettingGuid)
}

func leaseText(r automation.SchedulerRow) string {
	if r.ProcessingLeaseExpiresOn == nil {
		return "unknown"
	}
	return stamp(*r.ProcessingLeaseExpiresOn)
}

func completedText(r automation.SchedulerRow) string {
	if r.CompletedOn == nil {
		return ""
	}
	return stamp(*r.CompletedOn)
}

// retryCandidate is the support-retry row of an ended row: the same identity, input and
// local intent (revalidation recognises its occurrence by them), due now.
func retryCandidate(row automation.SchedulerRow, now time.Time) automation.Candidate {
	return automation.Candidate{
		AutomationType: row.AutomationType, TriggerType: row.TriggerType,
		SchedulerKey: automation.SupportRetryKey(row.SchedulerKey, row.Version), InputHash: row.InputHash,
		SettingGuid: row.SettingGuid, SourceEntityType: row.SourceEntityType, SourceEntityGuid: row.SourceEntityGuid,
		BusinessUnitID: row.BusinessUnitID, ScheduledOn: now, ScheduledLocalDate: row.ScheduledLocalDate,
		ScheduledLocalTime: row.ScheduledLocalTime, TimeZoneID: row.TimeZoneID,
	}
}

// act runs one action: validate who and why, find the row in scope, check If-Match, let
// decide say what the row's state allows, write (guarded by the Version read), trace.
func (s *Service) act(ctx context.Context, sc automation.Scope, req ActRequest, decide func(automation.SchedulerRow) (store.SupportActParams, error)) (ActResult, error) {
	reason, err := checkAudit(req.Operator, req.Reason)
	if err != nil {
		return ActResult{}, err
	}
	row, err := s.lookup(ctx, sc, req.Ref)
	if err != nil {
		return ActResult{}, err
	}
	if err := precondition(row, req.IfMatch); err != nil {
		return ActResult{}, err
	}
	p, err := decide(row)
	if err != nil {
		return ActResult{}, err
	}
	now := utc(s.clock.Now())
	p.ID, p.Version, p.Operator, p.Reason, p.Now = row.ID, row.Version, req.Operator, reason, now
	res, err := s.store.SupportSchedulerAct(ctx, p)
	if errors.Is(err, store.ErrLeaseLost) {
		// The row changed between our read and the write (a poller claimed it, an event
		// rescheduled it): the operator must look again.
		return ActResult{}, &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match",
			Message: "the row changed while the action was applied; read it again", Err: err}
	}
	if err != nil {
		return ActResult{}, err
	}
	audit, err := s.store.SupportAuditList(ctx, []int64{res.Row.ID}, maxAuditShown)
	if err != nil {
		audit = nil // the action is done; its summary just lacks the audit count
	}
	out := ActResult{Action: string(p.Action), Row: rowView(res.Row, audit), AuditID: res.AuditID}
	recs := []trace.JobRecord{s.traceRecord(res.Row, p.Action, res.AuditID, reason, now, "")}
	if res.RetryRow != nil {
		rv := rowView(res.RetryRow.Row, nil)
		out.RetryRow = &rv
		recs[0].Message = supportMessage(p.Action, res.AuditID, reason, res.RetryRow.Row.SchedulerKey)
		out.Note = "a new support-retry row was created, due now; it is revalidated when it runs (setting, source, recipients)"
		if res.RetryRow.Action != automation.EnsureInserted {
			out.Note = fmt.Sprintf("the support-retry row already existed (%s): nothing new was scheduled", res.RetryRow.Action)
		}
	}
	if p.Action == store.SupportRelease || p.Action == store.SupportRetryNow {
		out.Note = s.lateNote(ctx, res.Row, now)
	}
	s.writeTrace(ctx, recs)
	s.log.InfoContext(ctx, "support action", "schedulerKey", row.SchedulerKey, "businessUnitId", row.BusinessUnitID,
		"step", "support-"+strings.ToLower(string(p.Action)), "auditId", res.AuditID, "versionBefore", row.Version, "versionAfter", res.Row.Version)
	return out, nil
}

// lateNote warns that a reminder released or retried now is past its setting's lateness
// window: revalidation records it TooLate instead of sending it (the late rule, docs/architecture.md#late-rule). ""
// when it is within the window, not a reminder, or its setting cannot be read.
func (s *Service) lateNote(ctx context.Context, row automation.SchedulerRow, now time.Time) string {
	if row.AutomationType != automation.TypeReminder || row.SettingGuid == "" {
		return ""
	}
	rec, err := s.store.ReminderSettingGet(ctx, row.SettingGuid)
	if err != nil {
		return ""
	}
	set, err := reminder.ParseSetting([]byte(rec.Body))
	if err != nil {
		return ""
	}
	max := time.Duration(set.MaxLatenessHoursOrDefault()) * time.Hour
	if late := now.Sub(row.ScheduledOn); late > max {
		return fmt.Sprintf("this occurrence was due %s, %d h ago; its setting sends at most %d h late (maxLatenessHours), so when it runs "+
			"it is recorded TooLate, not sent. To send it anyway, retry the row once it has ended: a support-retry row is due now",
			stamp(row.ScheduledOn), int(late/time.Hour), int(max/time.Hour))
	}
	return ""
}

// outcomeOf maps a support action to its trace outcome.
func outcomeOf(a store.SupportAction) trace.Outcome {
	switch a {
	case store.SupportRelease:
		return OutcomeSupportReleased
	case store.SupportCancel:
		return OutcomeSupportCancelled
	case store.SupportRunNow:
		return OutcomeSupportRunNow
	}
	return OutcomeSupportRetried
}

// supportMessage is the trace row's message: the action, the audit record and the reason
// (masked; the operator's name is in the audit, not in the trace).
func supportMessage(a store.SupportAction, auditID int64, reason, retryKey string) string {
	m := fmt.Sprintf("support %s (audit %d): %s", a, auditID, logmask.String(reason))
	if retryKey != "" {
		m = fmt.Sprintf("support %s as %s (audit %d): %s", a, retryKey, auditID, logmask.String(reason))
	}
	if len(m) > 256 {
		m = m[:256]
	}
	return m
}

// traceRecord is the AutomationJob row of one support action on row (row is after the
// action: its Version is new, so the record never overwrites an attempt's).
func (s *Service) traceRecord(row automation.SchedulerRow, a store.SupportAction, auditID int64, reason string, now time.Time, retryKey string) trace.JobRecord {
	return trace.JobRecord{SchedulerKey: row.SchedulerKey, RowGuid: row.Guid, RowID: row.ID, BusinessUnitID: row.BusinessUnitID,
		AutomationType: string(row.AutomationType), Attempt: row.RetryCount + 1, Version: row.Version,
		Outcome: outcomeOf(a), ReasonCode: string(a), Message: supportMessage(a, auditID, reason, retryKey),
		StartedOn: now, FinishedOn: now}
}

// writeTrace stores trace rows; a failure is logged (the audit in SQL is the record).
func (s *Service) writeTrace(ctx context.Context, recs []trace.JobRecord) {
	if s.trace == nil || len(recs) == 0 {
		return
	}
	if err := trace.WriteJobs(ctx, s.trace, recs); err != nil {
		s.log.WarnContext(ctx, "support: trace rows not written", "rows", len(recs), "step", "support-trace",
			"errorCode", string(automation.CodeInternal), "error", err)
	}
}
