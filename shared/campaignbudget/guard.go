package campaignbudget

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/store"
)

// Guard is the budget's side of the campaign worker: set Worker.Guard = g and
// Worker.AfterResult = g.AfterResult. Safe for concurrent use.
type Guard struct {
	Budget    *budget.Service
	Campaigns store.CampaignStore
	Clock     automation.Clock
	// FeeRecheck is when a command whose fee is UNKNOWN is claimed again (default 1 min).
	FeeRecheck time.Duration
	Log        *slog.Logger
}

var (
	_ campaign.PreCallGuard  = (*Guard)(nil)
	_ campaign.PausedResumer = (*Guard)(nil)
	_ campaign.ClaimGuard    = (*Guard)(nil)
)

func (g *Guard) log() *slog.Logger {
	if g.Log != nil {
		return g.Log
	}
	return slog.New(slog.DiscardHandler)
}

// quantityParam names, per canonical action type, the parameter that is the command's
// quantity in its price policy's unit; other types count 1.
var quantityParam = map[string]string{"ADD_DATA": "dataMb", "TOP_UP": "amountMinor", "ADD_MONEY": "amountMinor", "ADD_SMS": "smsCount",
	"ADD_CALL_MINUTES": "minutes", "ADD_UPOINT": "points"}

// Command is the charging service's view of a campaign command: the canonical action type,
// the quantity from the frozen parameters (ADD_DATA dataMb, TOP_UP and ADD_MONEY amountMinor,
// ADD_SMS smsCount, ADD_CALL_MINUTES minutes, ADD_UPOINT points; else 1) and the command's
// local date.
func Command(c store.CampaignCommand) budget.Command {
	t := campaign.CanonicalActionType(c.ActionType)
	cmd := budget.Command{CommandID: c.CommandID, BusinessUnitID: c.BusinessUnitID, CampaignID: c.CampaignID, ActionType: t, LocalDate: c.LocalDate}
	if name, ok := quantityParam[t]; ok && c.ParamsJSON != "" {
		var params map[string]json.RawMessage
		if json.Unmarshal([]byte(c.ParamsJSON), &params) == nil {
			if n, err := strconv.ParseInt(string(params[name]), 10, 64); err == nil && n >= 0 {
				cmd.Quantity = strconv.FormatInt(n, 10)
			}
		}
	}
	return cmd
}

// InClaim implements campaign.ClaimGuard: the command's price is frozen in the transaction
// that claims it (budget.Service.FreezeInClaim, which reads the policy in that transaction),
// so Prepare later reads it back instead of writing it in a transaction of its own.
func (g *Guard) InClaim(ctx context.Context, c store.CampaignCommand) func(context.Context, *sql.Tx, store.CampaignCommand) error {
	freeze := g.Budget.FreezeInClaim(c.BusinessUnitID, campaign.CanonicalActionType(c.ActionType))
	return func(ctx context.Context, tx *sql.Tx, claimed store.CampaignCommand) error {
		return freeze(ctx, tx, Command(claimed))
	}
}

// BeforeCall implements campaign.PreCallGuard (see the package doc). Errors: billing or
// store failures before anything was held; the worker retries them on its ladder.
func (g *Guard) BeforeCall(ctx context.Context, s campaign.Step) (campaign.GuardDecision, error) {
	cmd := Command(s.Command)
	d, err := g.Budget.Prepare(ctx, cmd)
	switch {
	case errors.Is(err, budget.ErrBillingNotConfigured):
		return campaign.GuardDecision{Deny: "no billing provider is configured for priced actions"}, nil
	case errors.Is(err, budget.ErrNoPricePolicy):
		return campaign.GuardDecision{Deny: "no price policy for " + cmd.ActionType}, nil
	case errors.Is(err, store.ErrNotFound):
		return campaign.GuardDecision{Deny: "the campaign has no budget for a priced action"}, nil
	case automation.IsInvalid(err):
		return campaign.GuardDecision{Deny: err.Error()}, nil
	case err != nil:
		return campaign.GuardDecision{}, err
	}
	switch d.Kind {
	case budget.Proceed:
		return campaign.GuardDecision{}, nil
	case budget.WaitingBudget:
		if err := g.setStatus(ctx, s.Command.BusinessUnitID, s.Command.CampaignID, store.CampaignActive, store.CampaignPaused); err != nil {
			return campaign.GuardDecision{}, err
		}
		g.log().InfoContext(ctx, "campaign paused: waiting for budget", "commandId", cmd.CommandID, "campaignId", cmd.CampaignID,
			"businessUnitId", cmd.BusinessUnitID, "short", d.Short)
		return campaign.GuardDecision{WaitBudget: d.Short}, nil
	case budget.FeeUnknown:
		wait := g.FeeRecheck
		if wait <= 0 {
			wait = time.Minute
		}
		return campaign.GuardDecision{WaitUntil: g.Clock.Now().UTC().Add(wait)}, nil
	default: // FeeRejected
		return campaign.GuardDecision{Deny: "fee rejected: " + d.Reason}, nil
	}
}

// ResumePaused implements campaign.PausedResumer: the campaign is resumed when its budget is
// ACTIVE again (a raised maxCost or a support resume ended the budget's pause).
func (g *Guard) ResumePaused(ctx context.Context, s campaign.Step) (bool, error) {
	if s.Before != store.CommandWaitingBudget {
		// Claimed in doubt: only a command recorded waiting for budget (its wait not yet
		// ended by a reservation) may resume the pause; any other leaves a pause alone (a
		// person's pause is never undone by a crash's in-doubt claim).
		if _, err := g.Budget.Store.BudgetWaitGet(ctx, s.Command.CommandID); errors.Is(err, store.ErrNotFound) {
			return false, nil
		} else if err != nil {
			return false, err
		}
	}
	b, err := g.Budget.Store.BudgetGet(ctx, s.Command.BusinessUnitID, s.Command.CampaignID)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil || b.Status != store.BudgetActive {
		return false, err
	}
	if err := g.setStatus(ctx, s.Command.BusinessUnitID, s.Command.CampaignID, store.CampaignPaused, store.CampaignActive); err != nil {
		return false, err
	}
	g.log().InfoContext(ctx, "campaign resumed: budget active again", "commandId", s.Command.CommandID, "campaignId", s.Command.CampaignID,
		"businessUnitId", s.Command.BusinessUnitID)
	return true, nil
}

// setStatus moves the campaign from one status to another (row and definition), guarded by
// its Version and retried on a concurrent save; a campaign not in from is left alone.
func (g *Guard) setStatus(ctx context.Context, bu, id string, from, to store.CampaignStatus) error {
	for range 5 {
		c, err := g.Campaigns.CampaignGet(ctx, bu, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if c.Status != from {
			return nil
		}
		var def campaign.Definition
		if err := json.Unmarshal([]byte(c.DefinitionJSON), &def); err != nil {
			return fmt.Errorf("campaignbudget: campaign %s: definition: %w", id, err)
		}
		def.Status = to
		raw, err := json.Marshal(def)
		if err != nil {
			return err
		}
		c.Status, c.DefinitionJSON = to, string(raw)
		expected := c.Version
		_, err = g.Campaigns.CampaignSave(ctx, store.CampaignSaveParams{Campaign: c, ExpectedVersion: &expected, Now: g.Clock.Now().UTC()})
		if !errors.Is(err, store.ErrConflict) {
			return err
		}
	}
	return fmt.Errorf("campaignbudget: campaign %s: status %s → %s: %w", id, from, to, store.ErrConflict)
}

// AfterResult is the campaign.PostResultHook: inside the transaction that records the
// command's outcome, it settles the command's reservation (budget.Service.SettleInTx).
// QUEUED, WAITING_BUDGET and RUNNING leave it as it is: the command comes back.
func (g *Guard) AfterResult(ctx context.Context, tx *sql.Tx, s campaign.Step, rec store.CampaignCommand) error {
	var out budget.ActionOutcome
	switch rec.Status {
	case store.CommandSucceeded:
		out = budget.ActionSucceeded
	case store.CommandFailed:
		out = budget.ActionFailed
	case store.CommandUnknown:
		out = budget.ActionUnknown
	case store.CommandCancelled, store.CommandSkipped:
		out = budget.ActionAbandoned
	default:
		return nil
	}
	_, err := g.Budget.SettleInTx(ctx, tx, Command(rec), out)
	return err
}
