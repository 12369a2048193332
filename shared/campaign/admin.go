package campaign

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Admin manages campaigns and the manual-resolution queue (the campaign HTTP API, replay).
type Admin struct {
	Store   store.CampaignStore
	Catalog *Catalog
	Clock   automation.Clock
	// KnownTriggers, when set, lists the event names a campaign may be triggered by (the
	// registry's event types and the attribute engine's trigger events,
	// gateway.Registry.EventNames): Save refuses a trigger outside it, so a typo cannot
	// create a campaign that never fires. nil: not checked (no registry in this process).
	KnownTriggers func(ctx context.Context) ([]string, error)
}

var campaignIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,99}$`)

// CheckID refuses a campaign id outside [A-Za-z0-9][A-Za-z0-9_-]{0,99} (as NotFound: a path
// segment that cannot name a campaign names none).
func CheckID(id string) error {
	if !campaignIDRE.MatchString(id) {
		return automation.Errorf(automation.CodeNotFound, "no campaign %q", id)
	}
	return nil
}

// Save checks def (Catalog.Check: nothing is stored when it fails) and stores it as campaign
// id of businessUnitID. expected nil creates (ErrConflict-coded when it exists); otherwise
// it replaces the version expected (CodePreconditionFailed when another was saved since). A
// new campaign's run is "run-1".
func (a *Admin) Save(ctx context.Context, businessUnitID, id string, def Definition, expected *int64) (store.Campaign, error) {
	return a.save(ctx, businessUnitID, id, def, expected, "")
}

// Unnamed is the operator recorded for an audited campaign write whose caller named nobody
// (the shared bootstrap token without X-Automation-Operator, or an API without credentials).
const Unnamed = "unnamed"

// SaveBy is Save by an operator (docs/security.md#audit): the save and its audit row
// (store.CampaignAudit: Action CREATE or SAVE, the operator, the status and version before and
// after; Unnamed when operator is blank) are written in one transaction; a refused save
// records nothing. operator is the principal first ("key:pos / jane", httpapi's Caller).
func (a *Admin) SaveBy(ctx context.Context, businessUnitID, id string, def Definition, expected *int64, operator string) (store.Campaign, error) {
	return a.save(ctx, businessUnitID, id, def, expected, auditName(operator))
}

// auditName is operator bounded as every audited operator (automation.OperatorName), or
// Unnamed when blank.
func auditName(operator string) string {
	if op := automation.OperatorName(operator); op != "" {
		return op
	}
	return Unnamed
}

// save is Save, audited under operator when it is not "".
func (a *Admin) save(ctx context.Context, businessUnitID, id string, def Definition, expected *int64, operator string) (store.Campaign, error) {
	if err := CheckID(id); err != nil {
		return store.Campaign{}, err
	}
	def = a.Catalog.Canonical(def)
	if err := a.Catalog.Check(def); err != nil {
		return store.Campaign{}, err
	}
	run := "run-1"
	want := int64(0)
	var stored []string
	if expected != nil {
		cur, err := a.Store.CampaignGet(ctx, businessUnitID, id)
		if err != nil {
			return store.Campaign{}, err
		}
		run, want, stored = cur.RunID, *expected, cur.Triggers
	}
	if err := a.checkTriggers(ctx, def.Triggers, stored); err != nil {
		return store.Campaign{}, err
	}
	raw, err := json.Marshal(def)
	if err != nil {
		return store.Campaign{}, err
	}
	p := store.CampaignSaveParams{Campaign: store.Campaign{BusinessUnitID: businessUnitID, CampaignID: id,
		Name: def.Name, Status: def.Status, RunID: run, Triggers: def.Triggers, DefinitionJSON: string(raw)}, ExpectedVersion: &want, Now: a.Clock.Now().UTC()}
	if operator != "" {
		action := "SAVE"
		if expected == nil {
			action = "CREATE"
		}
		p.Audit = &store.CampaignAudit{Action: action, Operator: operator}
	}
	c, err := a.Store.CampaignSave(ctx, p)
	if errors.Is(err, store.ErrConflict) {
		if expected == nil {
			return c, automation.Errorf(automation.CodeConflict, "campaign %q exists; replace it with If-Match", id)
		}
		return c, a.versionMoved(ctx, businessUnitID, id, want)
	}
	return c, err
}

// versionMoved is the 412 of a save whose expected version is not the stored one: it names
// the version in force, so the caller knows what to read.
func (a *Admin) versionMoved(ctx context.Context, businessUnitID, id string, expected int64) error {
	msg := "the campaign was changed since; read it again"
	if cur, err := a.Store.CampaignGet(ctx, businessUnitID, id); err == nil {
		msg = fmt.Sprintf("the campaign is at version \"%d\", not \"%d\"; read it again", cur.Version, expected)
	}
	return &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match", Message: msg}
}

// checkTriggers refuses a trigger no registered event type or counter instruction names
// (automation.Invalid naming triggers[i], with a "did you mean" when one is close). A trigger
// the stored campaign already has is not checked again: a registry edit may stop emitting it,
// or the campaign may predate the rule, and the campaign must still be saved (stopped, paused).
func (a *Admin) checkTriggers(ctx context.Context, triggers, stored []string) error {
	if a.KnownTriggers == nil {
		return nil
	}
	known, err := a.KnownTriggers(ctx)
	if err != nil {
		return err
	}
	for i, t := range triggers {
		if !slices.Contains(known, t) && !slices.Contains(stored, t) {
			return invalid(fmt.Sprintf("triggers[%d]", i), "event type %q is not registered, and no counter instruction emits it: the campaign could never start%s",
				t, automation.DidYouMean(t, known))
		}
	}
	return nil
}

// Rerun starts a new run of the campaign (a deliberate re-run is a new run identity, docs/campaigns.md#identities):
// RunID "run-{n+1}", guarded by expected; events from now on start new executions even for
// event ids already seen. The re-run is audited under operator (store.CampaignAudit, Action
// RERUN; Unnamed when blank) in the save's transaction.
func (a *Admin) Rerun(ctx context.Context, businessUnitID, id string, expected int64, operator string) (store.Campaign, error) {
	cur, err := a.Store.CampaignGet(ctx, businessUnitID, id)
	if err != nil {
		return cur, err
	}
	n, _ := strconv.Atoi(strings.TrimPrefix(cur.RunID, "run-"))
	cur.RunID = fmt.Sprintf("run-%d", max(n, 0)+1)
	c, err := a.Store.CampaignSave(ctx, store.CampaignSaveParams{Campaign: cur, ExpectedVersion: &expected, Now: a.Clock.Now().UTC(),
		Audit: &store.CampaignAudit{Action: "RERUN", Operator: auditName(operator)}})
	if errors.Is(err, store.ErrConflict) {
		return c, a.versionMoved(ctx, businessUnitID, id, expected)
	}
	return c, err
}

// Resolve settles an UNKNOWN command awaiting a person as SUCCEEDED or FAILED (with the result
// message that moves its chain on, in the same transaction).
func (a *Admin) Resolve(ctx context.Context, p store.CampaignResolveParams) (store.CampaignCommand, error) {
	if p.Status != store.CommandSucceeded && p.Status != store.CommandFailed {
		return store.CampaignCommand{}, &automation.Error{Code: automation.CodeInvalidInput, Field: "status", Message: "status must be SUCCEEDED or FAILED"}
	}
	// The columns' bounds on SQL Server (ResolutionReason 1000, ProviderRef 400); a byte count
	// never undercounts UTF-16 units.
	if len(p.Reason) > 1000 {
		return store.CampaignCommand{}, &automation.Error{Code: automation.CodeInvalidInput, Field: "reason", Message: "is at most 1000 characters"}
	}
	if len(p.ProviderRef) > 400 {
		return store.CampaignCommand{}, &automation.Error{Code: automation.CodeInvalidInput, Field: "providerRef", Message: "is at most 400 characters"}
	}
	cur, err := a.Store.CampaignCommandGet(ctx, p.CommandID)
	if err != nil {
		return cur, err
	}
	p.Now = a.Clock.Now().UTC()
	p.Outbox = []store.OutboxMessage{resultOutbox(p.CommandID, cur.Revision+1, p.Status)}
	c, err := a.Store.CampaignResolve(ctx, p)
	if errors.Is(err, store.ErrLeaseLost) {
		return c, &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match", Message: "the command was changed since; read it again"}
	}
	return c, err
}

// ResolveIn is Resolve of a command named under a business unit and a campaign (the campaigns
// API's path, the console's form): a command of another unit or another campaign is
// ErrNotFound, exactly like one that does not exist; an operator or reason refused by
// automation.CheckAudit (blank, too long, control or bidirectional-text characters) is
// CodeInvalidInput naming "operator" or "reason" (every resolution is audited with both,
// docs/campaigns.md#unknown). Otherwise Resolve's answers: CodePreconditionFailed when
// the command changed since p.ExpectedVersion was read, ErrConflict when it no longer waits
// for a person.
func (a *Admin) ResolveIn(ctx context.Context, businessUnitID, campaignID string, p store.CampaignResolveParams) (store.CampaignCommand, error) {
	op, reason, err := automation.CheckAudit(p.Operator, p.Reason)
	if err != nil {
		return store.CampaignCommand{}, err
	}
	p.Operator, p.Reason = op, reason
	cur, err := a.Store.CampaignCommandGet(ctx, p.CommandID)
	if err != nil {
		return cur, err
	}
	if cur.BusinessUnitID != businessUnitID || cur.CampaignID != campaignID {
		return store.CampaignCommand{}, store.ErrNotFound
	}
	p.BusinessUnitID = businessUnitID
	return a.Resolve(ctx, p)
}

// Executions returns up to limit executions of a campaign of a business unit, newest first,
// those with an Id below beforeID (0: from the newest) — store.CampaignExecutionList, after
// checking the campaign exists in that unit (ErrNotFound otherwise, also for a malformed id).
func (a *Admin) Executions(ctx context.Context, businessUnitID, campaignID string, beforeID int64, limit int) ([]store.CampaignExecution, error) {
	if err := CheckID(campaignID); err != nil {
		return nil, err
	}
	if _, err := a.Store.CampaignGet(ctx, businessUnitID, campaignID); err != nil {
		return nil, err
	}
	return a.Store.CampaignExecutionList(ctx, businessUnitID, campaignID, beforeID, limit)
}
