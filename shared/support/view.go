package support

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/localtime"
	"github.com/automation-platform/automation/shared/store"
)

// LocalLayout writes a local instant as RFC 3339 with its numeric offset (never "Z"), so
// it is never mistaken for UTC.
const LocalLayout = "2006-01-02T15:04:05-07:00"

// Row is a scheduler row as the support API shows it. Instants are UTC; ScheduledLocal is
// ScheduledOn in the row's TimeZoneID.
type Row struct {
	ID                 int64     `json:"id"`
	Guid               string    `json:"guid"`
	SchedulerKey       string    `json:"schedulerKey"`
	AutomationType     string    `json:"automationType"`
	TriggerType        string    `json:"triggerType"`
	SettingGuid        string    `json:"settingGuid,omitempty"`
	SourceType         string    `json:"sourceType"`
	SourceGuid         string    `json:"sourceGuid"`
	BusinessUnitID     string    `json:"businessUnitId"`
	ScheduledOn        time.Time `json:"scheduledOn"`
	ScheduledLocal     string    `json:"scheduledLocal"`
	ScheduledLocalDate string    `json:"scheduledLocalDate"`
	ScheduledLocalTime string    `json:"scheduledLocalTime"`
	TimeZoneID         string    `json:"timeZoneId"`
	RowState
	ProcessingLeaseExpiresOn *time.Time      `json:"processingLeaseExpiresOn,omitempty"`
	InputHash                string          `json:"inputHash"`
	ConflictInputHash        string          `json:"conflictInputHash,omitempty"`
	DispatchResult           json.RawMessage `json:"dispatchResult,omitempty"`
	TraceBlobName            string          `json:"traceBlobName,omitempty"`
	Version                  int64           `json:"version"`
	CreatedOn                time.Time       `json:"createdOn"`
	UpdatedOn                time.Time       `json:"updatedOn"`
	CompletedOn              *time.Time      `json:"completedOn,omitempty"`
	// History summarises how the row got where it is (from the row and the support audit;
	// the attempts themselves are in the row's detail).
	History History `json:"history"`
}

// RowState is where a scheduler row stands, as the support API shows it in a Row and in an
// explanation's RowBrief: its Status, the ReasonCode it ended or was skipped with, the
// FailureReasonCode of its last failure, whether it is on support hold, the failed attempts
// counted (RetryCount) and when it is retried next (UTC; nil: not waiting on a retry).
type RowState struct {
	Status            string     `json:"status"`
	ReasonCode        string     `json:"reasonCode,omitempty"`
	FailureReasonCode string     `json:"failureReasonCode,omitempty"`
	OnHold            bool       `json:"onHold"`
	RetryCount        int        `json:"retryCount"`
	NextRetryOn       *time.Time `json:"nextRetryOn,omitempty"`
}

func rowState(r automation.SchedulerRow) RowState {
	return RowState{Status: string(r.Status), ReasonCode: string(r.ReasonCode), FailureReasonCode: string(r.FailureReasonCode),
		OnHold: r.IsOnSupportHold, RetryCount: r.RetryCount, NextRetryOn: r.NextRetryOn}
}

// History is a row's status history summary.
type History struct {
	Summary        string `json:"summary"`
	FailedAttempts int    `json:"failedAttempts"`
	SupportActions int    `json:"supportActions"`
	LastAction     *Audit `json:"lastSupportAction,omitempty"`
}

// Audit is one support action as shown.
type Audit struct {
	ID                int64      `json:"id"`
	Action            string     `json:"action"`
	Operator          string     `json:"operator"`
	Reason            string     `json:"reason"`
	StatusBefore      string     `json:"statusBefore"`
	StatusAfter       string     `json:"statusAfter"`
	VersionBefore     int64      `json:"versionBefore"`
	VersionAfter      int64      `json:"versionAfter"`
	RetrySchedulerKey string     `json:"retrySchedulerKey,omitempty"`
	DueOn             *time.Time `json:"dueOn,omitempty"`
	BatchID           string     `json:"batchId,omitempty"`
	On                time.Time  `json:"on"`
}

func auditView(a store.SupportAuditRecord) Audit {
	return Audit{ID: a.ID, Action: string(a.Action), Operator: a.Operator, Reason: a.Reason,
		StatusBefore: string(a.StatusBefore), StatusAfter: string(a.StatusAfter), VersionBefore: a.VersionBefore,
		VersionAfter: a.VersionAfter, RetrySchedulerKey: a.RetrySchedulerKey, DueOn: a.DueOn, BatchID: a.BatchID, On: a.CreatedOn}
}

// localString writes t in zone id (RFC 3339 with offset); "" when the zone is unknown.
func localString(t time.Time, zone string) string {
	loc, err := localtime.LoadZone(zone)
	if err != nil {
		return ""
	}
	return t.In(loc).Format(LocalLayout)
}

func rowView(r automation.SchedulerRow, audit []store.SupportAuditRecord) Row {
	v := Row{ID: r.ID, Guid: r.Guid, SchedulerKey: r.SchedulerKey, AutomationType: string(r.AutomationType),
		TriggerType: string(r.TriggerType), SettingGuid: r.SettingGuid, SourceType: r.SourceEntityType,
		SourceGuid: r.SourceEntityGuid, BusinessUnitID: r.BusinessUnitID, ScheduledOn: r.ScheduledOn,
		ScheduledLocal: localString(r.ScheduledOn, r.TimeZoneID), ScheduledLocalDate: r.ScheduledLocalDate,
		ScheduledLocalTime: r.ScheduledLocalTime, TimeZoneID: r.TimeZoneID, RowState: rowState(r),
		ProcessingLeaseExpiresOn: r.ProcessingLeaseExpiresOn,
		InputHash:                r.InputHash, ConflictInputHash: r.ConflictInputHash, TraceBlobName: r.TraceBlobName,
		Version: r.Version, CreatedOn: r.CreatedOn, UpdatedOn: r.UpdatedOn, CompletedOn: r.CompletedOn}
	if r.DispatchResultJSON != "" && json.Valid([]byte(r.DispatchResultJSON)) {
		v.DispatchResult = json.RawMessage(r.DispatchResultJSON)
	}
	v.History = history(r, audit)
	return v
}

func stamp(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// history summarises a row: created, where it is now and why, failed attempts, support
// actions.
func history(r automation.SchedulerRow, audit []store.SupportAuditRecord) History {
	h := History{FailedAttempts: r.RetryCount, SupportActions: len(audit)}
	parts := []string{"created " + stamp(r.CreatedOn)}
	if r.RetryCount > 0 {
		s := fmt.Sprintf("%d failed attempt", r.RetryCount)
		if r.RetryCount > 1 {
			s += "s"
		}
		if r.FailureReasonCode != "" {
			s += " (last: " + string(r.FailureReasonCode) + ")"
		}
		parts = append(parts, s)
	}
	switch r.Status {
	case automation.StatusPending:
		due := r.ScheduledOn
		if r.NextRetryOn != nil && r.NextRetryOn.After(due) {
			due = *r.NextRetryOn
		}
		parts = append(parts, "pending, due "+stamp(due))
	case automation.StatusProcessing:
		lease := ""
		if r.ProcessingLeaseExpiresOn != nil {
			lease = ", lease until " + stamp(*r.ProcessingLeaseExpiresOn)
		}
		parts = append(parts, "processing"+lease)
	case automation.StatusCompleted:
		if r.CompletedOn != nil {
			parts = append(parts, "completed (delivery queued) "+stamp(*r.CompletedOn))
		} else {
			parts = append(parts, "completed")
		}
	case automation.StatusFailed:
		parts = append(parts, "failed "+stamp(r.UpdatedOn))
	case automation.StatusDeactivated, automation.StatusCancelled:
		parts = append(parts, strings.ToLower(string(r.Status))+" "+stamp(r.UpdatedOn)+" ("+string(r.ReasonCode)+")")
	}
	if r.IsOnSupportHold {
		parts = append(parts, "on support hold ("+string(r.FailureReasonCode)+")")
	}
	if n := len(audit); n > 0 {
		last := audit[n-1]
		a := auditView(last)
		h.LastAction = &a
		parts = append(parts, fmt.Sprintf("%d support action(s), last %s by %s %s", n, last.Action, last.Operator, stamp(last.CreatedOn)))
	}
	h.Summary = strings.Join(parts, "; ")
	return h
}
