package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Status actions a person takes on a campaign (the console's pause, resume and stop;
// docs/campaigns.md#status), each with the status it sets.
var statusActions = map[string]store.CampaignStatus{
	"PAUSE":  store.CampaignPaused,
	"RESUME": store.CampaignActive,
	"STOP":   store.CampaignStopped,
}

// SetStatusParams is a person's status change: Action PAUSE, RESUME or STOP, guarded by the
// version they read (If-Match), with who and why (both audited).
type SetStatusParams struct {
	BusinessUnitID, CampaignID string
	Action                     string
	ExpectedVersion            int64
	Operator, Reason           string
}

// SetStatus pauses, resumes or stops a campaign and writes the audit (store.CampaignAudit:
// who, why, the status and version before and after) in the save's transaction. Only the
// status changes: the definition is otherwise the stored one (its triggers are not checked
// again). Errors: CodeInvalidInput naming "action", "operator" or "reason"
// (automation.CheckAudit); ErrNotFound for a campaign the unit does not have;
// CodePreconditionFailed naming the version in force when ExpectedVersion is not it;
// CodeConflict when the campaign already has that status, or a stopped campaign is paused
// (a stopped campaign resumes only).
func (a *Admin) SetStatus(ctx context.Context, p SetStatusParams) (store.Campaign, error) {
	to, ok := statusActions[p.Action]
	if !ok {
		return store.Campaign{}, automation.Invalid("action", "must be PAUSE, RESUME or STOP, not %q", p.Action)
	}
	op, reason, err := automation.CheckAudit(p.Operator, p.Reason)
	if err != nil {
		return store.Campaign{}, err
	}
	if err := CheckID(p.CampaignID); err != nil {
		return store.Campaign{}, err
	}
	cur, err := a.Store.CampaignGet(ctx, p.BusinessUnitID, p.CampaignID)
	if err != nil {
		return cur, err
	}
	if cur.Version != p.ExpectedVersion {
		return cur, a.versionMoved(ctx, p.BusinessUnitID, p.CampaignID, p.ExpectedVersion)
	}
	if cur.Status == to {
		return cur, automation.Errorf(automation.CodeConflict, "campaign %q is %s already", p.CampaignID, to)
	}
	if cur.Status == store.CampaignStopped && to == store.CampaignPaused {
		return cur, automation.Errorf(automation.CodeConflict, "campaign %q is STOPPED: resume it, or leave it stopped", p.CampaignID)
	}
	var def Definition
	if err := json.Unmarshal([]byte(cur.DefinitionJSON), &def); err != nil {
		return cur, fmt.Errorf("campaign %s: stored definition: %w", p.CampaignID, err)
	}
	def.Status = to
	raw, err := json.Marshal(def)
	if err != nil {
		return cur, err
	}
	next := cur
	next.Status, next.DefinitionJSON = to, string(raw)
	want := p.ExpectedVersion
	c, err := a.Store.CampaignSave(ctx, store.CampaignSaveParams{Campaign: next, ExpectedVersion: &want, Now: a.Clock.Now().UTC(),
		Audit: &store.CampaignAudit{Action: p.Action, Operator: op, Reason: reason}})
	if errors.Is(err, store.ErrConflict) || errors.Is(err, store.ErrLeaseLost) {
		return c, a.versionMoved(ctx, p.BusinessUnitID, p.CampaignID, want)
	}
	return c, err
}

// FindExecutions is Executions with the console's filters: the execution status ("" = any,
// else RUNNING, COMPLETED or CANCELLED: CodeInvalidInput naming "status") and the recipient
// ("" = any). ErrNotFound for a campaign the unit does not have.
func (a *Admin) FindExecutions(ctx context.Context, p store.CampaignExecutionFindParams) ([]store.CampaignExecution, error) {
	switch p.Status {
	case "", store.ExecutionRunning, store.ExecutionCompleted, store.ExecutionCancelled:
	default:
		return nil, automation.Invalid("status", "must be RUNNING, COMPLETED or CANCELLED, not %q", p.Status)
	}
	if len(p.RecipientID) > 200 {
		return nil, automation.Invalid("recipientId", "is at most 200 characters")
	}
	if err := CheckID(p.CampaignID); err != nil {
		return nil, err
	}
	if _, err := a.Store.CampaignGet(ctx, p.BusinessUnitID, p.CampaignID); err != nil {
		return nil, err
	}
	return a.Store.CampaignExecutionFind(ctx, p)
}
