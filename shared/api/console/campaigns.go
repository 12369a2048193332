package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// DeliveryLookup finds the delivery a campaign command caused (its delivery key is the
// command's effect key; store.ErrNotFound when it caused none).
type DeliveryLookup interface {
	NotificationGetByKey(ctx context.Context, deliveryKey string) (store.NotificationJob, error)
}

// CampaignPages are the campaign pages (docs/console.md#campaigns):
//
// "campaigns": a business unit's campaigns (the first 50 by id); for ?campaignId= the
// campaign — its status and, when it is not ACTIVE, why (its budget paused for BUDGET, the
// billing provider's balance short (BALANCE), a person's pause or stop from the audit, or a
// save through the campaigns API that names nobody), the action chain with each action's
// provider and price (its price policy), the pause / resume / stop forms, the audit, its
// UNKNOWN commands waiting for a resolution (each with a resolve form), and its executions
// newest first, 25 a page (?cursor=), filtered by ?status= and ?recipientId=; a RUNNING
// execution whose current command waits (WAITING_BUDGET, UNKNOWN, the campaign paused) says
// so instead of RUNNING. ?executionId= adds the execution's history in the style of
// Temporal: each command's schedule, claims and retries, frozen price, reservation, fee,
// outcome and provider reference, with links to the delivery or inbox message it caused
// (the recipient's activity) and to the fee queue.
//
// POST "campaigns" resolves an UNKNOWN command through campaign.Admin.ResolveIn (see the
// form); POST "campaign-status" (a hidden page with the admin role of the campaigns API's
// PUT) creates or edits a campaign with action=SAVE (campaignPages.save, campaignform.go:
// campaign.Admin.Save, as the PUT), and pauses, resumes or stops the campaign through
// campaign.Admin.SetStatus with the version shown (If-Match), the operator and a reason
// (audited in the save's transaction).
// A campaign changed since answers 412 with the campaign as it is now; a status it has
// already 409; a missing operator or reason 422; a missing version 428; another unit's
// campaign 404.
func CampaignPages(admin *campaign.Admin, budgets *budget.Service, deliveries DeliveryLookup) []Page {
	cp := campaignPages{admin: admin, budgets: budgets, deliveries: deliveries}
	return []Page{
		{Path: "campaigns", Title: "Campaigns", Render: cp.get, Post: cp.resolve},
		{Path: "campaign-status", Title: "Campaign status", Hidden: true, Render: cp.get, Post: cp.statusOrSave},
	}
}

type campaignPages struct {
	admin      *campaign.Admin
	budgets    *budget.Service
	deliveries DeliveryLookup
}

func (cp campaignPages) get(r *http.Request, pc PageCall) (template.HTML, error) {
	q := r.URL.Query()
	return cp.render(r, pc, campaignsPage{BusinessUnitID: strings.TrimSpace(q.Get("businessUnitId")), CampaignID: strings.TrimSpace(q.Get("campaignId")),
		ExecutionID: strings.TrimSpace(q.Get("executionId")), Status: strings.TrimSpace(q.Get("status")), RecipientID: strings.TrimSpace(q.Get("recipientId"))},
		strings.TrimSpace(q.Get("cursor")))
}

// refused renders the campaign as it is now under the problem err maps to.
func (cp campaignPages) refused(r *http.Request, pc PageCall, d campaignsPage, p *problem) (template.HTML, error) {
	d.Problem = p
	body, err := cp.render(r, pc, d, "")
	if err != nil {
		return "", err
	}
	return "", &Refused{Status: p.Status, Body: body}
}

// postedCampaign is what a campaign page's form posts about the campaign it acts on: the
// unit (postedUnit), the campaign id (campaign.CheckID) and the version of what it read
// (formVersion: "campaign", "command"), checked in that order.
func postedCampaign(pc PageCall, f url.Values, what string) (bu, id string, ver int64, err error) {
	if bu, err = postedUnit(pc, f); err != nil {
		return "", "", 0, err
	}
	id = strings.TrimSpace(f.Get("campaignId"))
	if err = campaign.CheckID(id); err != nil {
		return "", "", 0, err
	}
	if ver, err = formVersion(f.Get("version"), what); err != nil {
		return "", "", 0, err
	}
	return bu, id, ver, nil
}

func (cp campaignPages) resolve(r *http.Request, pc PageCall) (template.HTML, error) {
	f := r.PostForm
	cmd := strings.TrimSpace(f.Get("commandId"))
	bu, id, ver, err := postedCampaign(pc, f, "command")
	if err != nil {
		return "", err
	}
	c, err := cp.admin.ResolveIn(r.Context(), bu, id, store.CampaignResolveParams{CommandID: cmd, ExpectedVersion: ver,
		Status: store.CommandStatus(f.Get("status")), Operator: pageOperator(r, pc), Reason: f.Get("reason"), ProviderRef: strings.TrimSpace(f.Get("providerRef"))})
	d := campaignsPage{BusinessUnitID: bu, CampaignID: id}
	if err == nil {
		d.Notice = fmt.Sprintf("Command %s resolved as %s by %s (version %d); its chain moves on.", c.CommandID, c.Status, c.ResolvedBy, c.Version)
		return cp.render(r, pc, d, "")
	}
	if automation.CodeOf(err) == automation.CodeNotFound {
		return "", err
	}
	p := problemOf(err)
	if isStale(err) {
		p = &problem{Status: http.StatusPreconditionFailed, Title: "The command changed since you loaded it",
			Detail: fmt.Sprintf("You acted on version %d of %s; a retry, a lookup or another operator changed it since. Nothing was done; the campaign below is as it is now.", ver, cmd)}
	} else if errors.Is(err, store.ErrConflict) {
		state := "settled"
		if cur, gerr := cp.admin.Store.CampaignCommandGet(r.Context(), cmd); gerr == nil {
			state = string(cur.Status)
		}
		p = &problem{Status: http.StatusConflict, Title: "The command no longer waits for a resolution",
			Detail: fmt.Sprintf("%s is %s now (resolved by an operator, or settled by a retry or a lookup). Nothing was done; the campaign below is as it is now.", cmd, state)}
	}
	return cp.refused(r, pc, d, p)
}

// statusOrSave is POST "campaign-status": action=SAVE creates or edits the campaign (save,
// campaignform.go), PAUSE, RESUME and STOP change its status (setStatus). Both need the
// admin role of PUT /api/campaigns/{id}.
func (cp campaignPages) statusOrSave(r *http.Request, pc PageCall) (template.HTML, error) {
	if r.PostForm.Get("action") == "SAVE" {
		return cp.save(r, pc)
	}
	return cp.setStatus(r, pc)
}

func (cp campaignPages) setStatus(r *http.Request, pc PageCall) (template.HTML, error) {
	f := r.PostForm
	bu, id, ver, err := postedCampaign(pc, f, "campaign")
	if err != nil {
		return "", err
	}
	c, err := cp.admin.SetStatus(r.Context(), campaign.SetStatusParams{BusinessUnitID: bu, CampaignID: id, Action: f.Get("action"),
		ExpectedVersion: ver, Operator: pageOperator(r, pc), Reason: f.Get("reason")})
	d := campaignsPage{BusinessUnitID: bu, CampaignID: id}
	if err == nil {
		d.Notice = fmt.Sprintf("Campaign %s is %s now (version %d): %s by %s.", c.CampaignID, c.Status, c.Version, strings.ToLower(f.Get("action")), pageOperator(r, pc))
		return cp.render(r, pc, d, "")
	}
	if automation.CodeOf(err) == automation.CodeNotFound || errors.Is(err, store.ErrNotFound) {
		return "", err
	}
	p := problemOf(err)
	if isStale(err) {
		now := "changed"
		if cur, gerr := cp.admin.Store.CampaignGet(r.Context(), bu, id); gerr == nil {
			now = fmt.Sprintf("%s at version %d", cur.Status, cur.Version)
		}
		p = &problem{Status: http.StatusPreconditionFailed, Title: "The campaign changed since you loaded it",
			Detail: fmt.Sprintf("You acted on version %d; the campaign is %s now (its budget, a save or another operator changed it). Nothing was done; the campaign below is as it is now.", ver, now)}
	}
	return cp.refused(r, pc, d, p)
}

// executionsPerPage is how many executions the campaign page shows at once.
const executionsPerPage = 25

// render fills d for its unit, campaign and execution and executes the page.
func (cp campaignPages) render(r *http.Request, pc PageCall, d campaignsPage, cursor string) (template.HTML, error) {
	d.CSRFField, d.Operator = pc.CSRFField, pc.Caller.Operator
	picker, chosen, err := pc.chosenUnit(r.Context(), "cp-bu", d.BusinessUnitID)
	d.Picker = picker
	if err != nil || !chosen {
		return orError(campaignTemplates, "campaigns", d, err)
	}
	ctx := r.Context()
	if d.Campaigns, err = cp.admin.Store.CampaignList(ctx, d.BusinessUnitID, "", listLimit); err != nil {
		return "", err
	}
	if d.CampaignID != "" {
		if err := cp.campaign(r, &d, cursor); err != nil {
			return "", err
		}
	}
	if d.ExecutionID != "" {
		if err := cp.execution(ctx, &d); err != nil {
			return "", err
		}
	}
	if d.CreateDraft == nil {
		d.CreateDraft = &campaignDraft{Status: string(store.CampaignActive)}
	}
	d.Loaded = true
	return execute(campaignTemplates, "campaigns", d)
}

// campaign reads the campaign, why it is not ACTIVE, its chain, audit, UNKNOWN commands and
// a page of its executions.
func (cp campaignPages) campaign(r *http.Request, d *campaignsPage, cursor string) error {
	ctx, bu, id := r.Context(), d.BusinessUnitID, d.CampaignID
	if err := campaign.CheckID(id); err != nil {
		return err
	}
	c, err := cp.admin.Store.CampaignGet(ctx, bu, id)
	if err != nil {
		return err
	}
	d.Campaign = &c
	if d.EditDraft == nil {
		ed, err := campaignDraftOf(c)
		if err != nil {
			return err
		}
		d.EditDraft = &ed
	}
	if d.Audit, err = cp.admin.Store.CampaignAuditList(ctx, bu, id, 10); err != nil {
		return err
	}
	if cp.budgets != nil {
		if v, err := cp.budgets.GetView(ctx, bu, id); err == nil {
			d.Budget = &v
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	if d.Unknown, err = cp.admin.Store.CampaignListUnknown(ctx, bu, id, 0, listLimit); err != nil {
		return err
	}
	if d.Chain, err = cp.chain(ctx, c); err != nil {
		return err
	}
	d.Why = whyNotActive(c, d.Budget, d.Audit, len(d.Unknown))
	return cp.executionsPage(r, d, cursor)
}

// chainStep is one action of the campaign's chain as the page shows it.
type chainStep struct {
	Index                           int
	Key, Type, Provider, When, Next string
	Price                           string // the action type's price policy, "free" without one
}

func (cp campaignPages) chain(ctx context.Context, c store.Campaign) ([]chainStep, error) {
	var def campaign.Definition
	if err := json.Unmarshal([]byte(c.DefinitionJSON), &def); err != nil {
		return nil, fmt.Errorf("campaign %s: stored definition: %w", c.CampaignID, err)
	}
	var out []chainStep
	for i, a := range def.Actions {
		s := chainStep{Index: i, Key: a.Key, Type: a.Type, Provider: a.Provider, When: a.When, Next: a.Next, Price: "free (no price policy)"}
		if s.When == "" {
			s.When = campaign.WhenAlways
		}
		if s.Next == "" {
			// The chain moves on in order; after the last action it ends (not "the next").
			s.Next = fmt.Sprintf("action %d", i+1)
			if i == len(def.Actions)-1 {
				s.Next = "the end (the execution completes)"
			}
		}
		if cp.budgets != nil {
			p, err := cp.budgets.Store.PricePolicyGet(ctx, c.BusinessUnitID, a.Type)
			switch {
			case err == nil:
				s.Price = priceText(p)
			case !errors.Is(err, store.ErrNotFound):
				return nil, err
			}
		}
		out = append(out, s)
	}
	return out, nil
}

// priceText writes a price policy in one line: "FIXED 150 AUD (minor units), transfer FEE".
func priceText(p store.PricePolicy) string {
	s := fmt.Sprintf("%s %s %s", p.Formula, p.Rate, p.Currency)
	if p.Unit != "" {
		s += " per " + p.Unit
	}
	if p.MinFee > 0 {
		s += fmt.Sprintf(", at least %d", p.MinFee)
	}
	if p.MaxFee > 0 {
		s += fmt.Sprintf(", at most %d", p.MaxFee)
	}
	return s + fmt.Sprintf(" (minor units; policy v%d)", p.Version)
}

// whyNotActive says why a campaign is PAUSED or STOPPED, from what the store knows: its
// budget's pause (BUDGET: the budget is spent; BALANCE: the billing provider's balance is
// short), the person whose audited change set the status in force, commands in doubt with a
// provider. A status nobody is recorded for was saved through the campaigns API.
func whyNotActive(c store.Campaign, b *budget.View, audit []store.CampaignAudit, unknown int) []string {
	var out []string
	if c.Status == store.CampaignActive {
		if unknown > 0 {
			out = append(out, fmt.Sprintf("Provider: %d command(s) are in doubt (UNKNOWN) and hold their executions until a lookup or a person settles them (below).", unknown))
		}
		return out
	}
	if b != nil && b.Status == store.BudgetPaused {
		switch b.PausedReason {
		case store.ShortBalance:
			out = append(out, fmt.Sprintf("Billing provider: the account's balance is short for the next fee (BALANCE). Top up the balance, then resume the budget."))
		default:
			out = append(out, fmt.Sprintf("Budget: paused for %s — cost %s and reserved %s of max %s %s: what is left does not cover the next action's price. Raise maxCost (or resume) on the budget page.",
				b.PausedReason, b.Cost, b.ReservedCost, b.MaxCost, b.Currency))
		}
	}
	for _, a := range audit {
		if a.VersionAfter == c.Version && a.StatusAfter == c.Status {
			out = append(out, fmt.Sprintf("A person: %s chose %s on %s: %s", a.Operator, a.Action, a.CreatedOn.UTC().Format("2006-01-02 15:04:05Z"), a.Reason))
		}
	}
	if unknown > 0 {
		out = append(out, fmt.Sprintf("Provider: %d command(s) are in doubt (UNKNOWN) and wait for a lookup or a person (below).", unknown))
	}
	if len(out) == 0 {
		if c.Status == store.CampaignPaused && b != nil {
			out = append(out, "Budget: the budget is ACTIVE again; the campaign resumes when its next waiting command is claimed.")
		} else {
			out = append(out, fmt.Sprintf("Saved as %s through the campaigns API (PUT /api/campaigns/%s), which names no one; the console's pause, resume and stop are audited.", c.Status, c.CampaignID))
		}
	}
	return out
}

// executionRow is an execution with what its current command waits for ("" when nothing).
type executionRow struct {
	store.CampaignExecution
	Blocked string
}

// executionsPage reads one page of the campaign's executions, newest first, below cursor (a
// cursor of this unit, campaign and filter only, else 400), and the link to the next page.
func (cp campaignPages) executionsPage(r *http.Request, d *campaignsPage, cursor string) error {
	cq := "console-campaign-executions:" + d.BusinessUnitID + ":" + d.CampaignID + ":" + d.Status + ":" + d.RecipientID
	var before int64
	if cursor != "" {
		if err := httpapi.DecodeCursor(cursor, cq, &before); err != nil {
			return err
		}
	}
	es, err := cp.admin.FindExecutions(r.Context(), store.CampaignExecutionFindParams{BusinessUnitID: d.BusinessUnitID, CampaignID: d.CampaignID,
		Status: store.ExecutionStatus(d.Status), RecipientID: d.RecipientID, BeforeID: before, Limit: executionsPerPage + 1})
	if err != nil {
		return err
	}
	page, err := httpapi.PageAfter(es, executionsPerPage, cq, func(e store.CampaignExecution) int64 { return e.ID },
		func(e store.CampaignExecution) (store.CampaignExecution, error) { return e, nil })
	if err != nil {
		return err
	}
	for _, e := range page.Items {
		row := executionRow{CampaignExecution: e}
		if e.Status == store.ExecutionRunning {
			cmds, err := cp.admin.Store.CampaignCommandsOf(r.Context(), e.ExecutionID)
			if err != nil {
				return err
			}
			row.Blocked = blockedBy(cmds, e.CurrentIndex, d.Campaign.Status)
		}
		d.Executions = append(d.Executions, row)
	}
	d.Paged = cursor != ""
	if page.NextCursor != "" {
		d.NextExecutions = Base + "/campaigns?" + url.Values{"businessUnitId": {d.BusinessUnitID}, "campaignId": {d.CampaignID}, "status": {d.Status},
			"recipientId": {d.RecipientID}, "cursor": {page.NextCursor}}.Encode() + "#executions"
	}
	return nil
}

// blockedBy says what a RUNNING execution's current command waits for: its budget
// (WAITING_BUDGET), a resolution (UNKNOWN), the campaign's pause; "" when it is on its way.
func blockedBy(cmds []store.CampaignCommand, current int, status store.CampaignStatus) string {
	for _, c := range cmds {
		if c.ActionIndex != current {
			continue
		}
		switch {
		case c.Status == store.CommandWaitingBudget:
			return "WAITING_BUDGET: " + c.ActionKey + " waits for budget"
		case c.Status == store.CommandUnknown:
			return "UNKNOWN: " + c.ActionKey + " waits for a lookup or a person"
		case c.Status == store.CommandQueued && status == store.CampaignPaused:
			return "PAUSED: " + c.ActionKey + " waits for the campaign to resume"
		case c.Status == store.CommandQueued && status == store.CampaignStopped:
			return "STOPPED: " + c.ActionKey + " is cancelled when next claimed"
		}
	}
	return ""
}

// historyEvent is one entry of an execution's history, oldest first.
type historyEvent struct {
	On      time.Time
	Command string
	Title   string
	Detail  string
	Links   []link
}

type link struct{ Href, Text string }

// execution reads the execution and builds its history from its commands and what each
// caused: the frozen price, the reservation and fee, the delivery.
func (cp campaignPages) execution(ctx context.Context, d *campaignsPage) error {
	ex, err := cp.admin.Store.CampaignExecutionGet(ctx, d.ExecutionID)
	if err == nil && ex.BusinessUnitID != d.BusinessUnitID {
		err = store.ErrNotFound // another unit's execution is not found, as an unknown one
	}
	if err != nil {
		return err
	}
	d.Execution = &ex
	if d.Commands, err = cp.admin.Store.CampaignCommandsOf(ctx, d.ExecutionID); err != nil {
		return err
	}
	activity := Base + "/activity?" + url.Values{"businessUnitId": {ex.BusinessUnitID}, "recipientId": {ex.RecipientID}}.Encode()
	h := []historyEvent{{On: ex.CreatedOn, Title: "ExecutionStarted", Detail: fmt.Sprintf("run %s, source event %s, recipient %s, local day %s", ex.RunID, ex.SourceEventID, ex.RecipientID, ex.LocalDate),
		Links: []link{{activity, "the recipient's activity"}}}}
	for _, c := range d.Commands {
		h = append(h, historyEvent{On: c.CreatedOn, Command: c.CommandID, Title: "CommandScheduled",
			Detail: fmt.Sprintf("action %d · %s · %s via %s; effect key %s", c.ActionIndex, c.ActionKey, c.ActionType, c.Provider, c.EffectKey)})
		if cp.budgets != nil {
			if p, err := cp.budgets.Store.CommandPriceGet(ctx, c.CommandID); err == nil {
				h = append(h, historyEvent{On: p.FrozenOn, Command: c.CommandID, Title: "PriceFrozen", Detail: fmt.Sprintf("%d %s (minor units)", p.Amount, p.Currency)})
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
			if res, err := cp.budgets.Store.ReservationGet(ctx, c.CommandID); err == nil {
				h = append(h, historyEvent{On: res.CreatedOn, Command: c.CommandID, Title: "BudgetReserved",
					Detail: fmt.Sprintf("%d %s, attempt %d, now %s", res.Amount, res.Currency, res.Attempt, res.Status)})
				if res.OrderID != "" {
					if t, err := cp.budgets.Store.FeeTransferGet(ctx, res.OrderID); err == nil {
						ev := historyEvent{On: t.UpdatedOn, Command: c.CommandID, Title: "Fee " + t.Status,
							Detail: fmt.Sprintf("order %s: %d %s (%s)%s%s", t.OrderID, t.Amount, t.Currency, t.TransferType, refText(t.ProviderReference), errText(t.LastError))}
						if t.Status == store.FeeUnknown || t.Status == store.FeePending {
							ev.Links = append(ev.Links, link{Base + "/fees?" + url.Values{"businessUnitId": {t.BusinessUnitID}}.Encode(), "the fee queue"})
						}
						h = append(h, ev)
					} else if !errors.Is(err, store.ErrNotFound) {
						return err
					}
				}
			} else if !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		if c.AttemptCount > 0 {
			h = append(h, historyEvent{On: c.UpdatedOn, Command: c.CommandID, Title: "CommandAttempts",
				Detail: fmt.Sprintf("%d claim(s), %d retried%s", c.AttemptCount, c.RetryCount, errText(c.LastError))})
		}
		out := historyEvent{On: c.UpdatedOn, Command: c.CommandID, Title: "Command" + string(c.Status), Detail: strings.TrimSpace(c.ResultJSON + refText(c.ProviderRef))}
		if c.ResolvedBy != "" {
			out.Detail += fmt.Sprintf(" resolved by %s: %s", c.ResolvedBy, c.ResolutionReason)
		}
		if c.NextAttemptOn != nil && !c.Status.Terminal() {
			out.Detail += " · due again " + c.NextAttemptOn.UTC().Format("2006-01-02 15:04:05Z")
		}
		if strings.HasPrefix(c.ProviderRef, "inbox:") {
			// The inbox channel's reference (inbox.Channel: "inbox:{seq}"); the message's
			// delivery key is the command's effect key.
			out.Links = append(out.Links, link{activity + "#inbox-" + c.EffectKey, "inbox message " + strings.TrimPrefix(c.ProviderRef, "inbox:")})
		}
		if cp.deliveries != nil && c.EffectKey != "" {
			if j, err := cp.deliveries.NotificationGetByKey(ctx, c.EffectKey); err == nil && j.BusinessUnitID == ex.BusinessUnitID {
				out.Detail += fmt.Sprintf(" · delivery %s (%s, %s)", j.DeliveryKey, j.Channel, j.Status)
				if j.Status == store.NotificationUnknown {
					out.Links = append(out.Links, link{Base + "/unknown?" + url.Values{"businessUnitId": {j.BusinessUnitID}}.Encode(), "the UNKNOWN deliveries"})
				}
			} else if err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
		// A command without a result reads "provider reference …", not "— · provider reference …".
		out.Detail = strings.TrimPrefix(strings.TrimSpace(out.Detail), "· ")
		h = append(h, out)
	}
	slices.SortStableFunc(h, func(a, b historyEvent) int { return a.On.Compare(b.On) })
	d.History = h
	return nil
}

func refText(ref string) string {
	if ref == "" {
		return ""
	}
	return " · provider reference " + ref
}

func errText(e string) string {
	if e == "" {
		return ""
	}
	return " · last error: " + e
}

type campaignsPage struct {
	BusinessUnitID, CampaignID, ExecutionID string
	Picker                                  template.HTML
	Status, RecipientID                     string // the executions' filter
	Operator                                string
	CSRFField                               template.HTML
	Loaded                                  bool
	Campaigns                               []store.Campaign
	Campaign                                *store.Campaign
	Why                                     []string
	Budget                                  *budget.View
	Chain                                   []chainStep
	Audit                                   []store.CampaignAudit
	Unknown                                 []store.CampaignCommand
	Executions                              []executionRow
	Paged                                   bool   // a page after the first
	NextExecutions                          string // the next page's address, "" on the last
	Execution                               *store.CampaignExecution
	Commands                                []store.CampaignCommand
	History                                 []historyEvent
	Notice                                  string
	Problem                                 *problem
	// CreateDraft fills the new-campaign form (nil: empty, status ACTIVE); EditDraft the
	// campaign's edit form (nil: the campaign as stored); StaleDraft is a draft a 412 refused,
	// shown beside the campaign as it is now.
	CreateDraft, EditDraft, StaleDraft *campaignDraft
}

// campaignTemplates render the campaign pages; they share moreTemplates' blocks (unitForm).
var campaignTemplates = template.Must(template.Must(moreTemplates.Clone()).Parse(`
{{define "commands"}}<div class="scroll"><table id="{{.ID}}"><caption>{{.Caption}}</caption>
<thead><tr><th scope="col">Command</th><th scope="col">Action</th><th scope="col">Provider</th><th scope="col">Status</th><th scope="col">Attempts</th><th scope="col">Execution</th><th scope="col">Updated (UTC)</th><th scope="col">Last error</th></tr></thead>
<tbody>{{range .Rows}}<tr><th scope="row" class="key">{{.CommandID}}</th><td>{{.ActionIndex}} · {{.ActionType}}</td><td>{{.Provider}}</td><td><span class="status {{lower (printf "%s" .Status)}}">{{.Status}}</span></td><td>{{.AttemptCount}}</td>
<td><a href="/api/console/campaigns?businessUnitId={{.BusinessUnitID}}&amp;campaignId={{.CampaignID}}&amp;executionId={{.ExecutionID}}#execution">{{.ExecutionID}}</a></td><td>{{when .UpdatedOn}}</td><td>{{.LastError}}</td></tr>
{{else}}<tr><td colspan="8">None.</td></tr>{{end}}</tbody></table></div>{{end}}

{{define "statusForm"}}<form method="post" action="/api/console/campaign-status" class="card" id="{{lower .Action}}-form"><h3>{{.Label}}</h3><p class="help">{{.Help}}</p>
{{.P.CSRFField}}<input type="hidden" name="action" value="{{.Action}}"><input type="hidden" name="businessUnitId" value="{{.C.BusinessUnitID}}"><input type="hidden" name="campaignId" value="{{.C.CampaignID}}"><input type="hidden" name="version" value="{{.C.Version}}">
<label for="{{.Action}}-op">Operator</label><input id="{{.Action}}-op" name="operator" value="{{.P.Operator}}"{{if .P.Operator}} readonly{{end}} required>
<label for="{{.Action}}-reason">Reason</label><textarea id="{{.Action}}-reason" name="reason" required rows="2" maxlength="1000"></textarea>
<button type="submit">{{.Label}}</button></form>{{end}}

{{define "campaignForm"}}<form method="post" action="/api/console/campaign-status" class="card" id="{{.ID}}-form"><h3>{{.Title}}</h3>
<p class="help">Saved through the campaigns API's service (PUT /api/campaigns/{id}), with its checks: each action's type and provider must exist and its params fit the type's schema, each trigger must be an event type or a trigger event of the registry. Nothing is stored when one fails.{{if .D.Version}} Version {{.D.Version}} goes with the form: a campaign changed since is not overwritten.{{end}}</p>
{{.P.CSRFField}}<input type="hidden" name="action" value="SAVE"><input type="hidden" name="businessUnitId" value="{{.P.BusinessUnitID}}">{{if .D.Version}}<input type="hidden" name="version" value="{{.D.Version}}"><input type="hidden" name="campaignId" value="{{.D.CampaignID}}">{{else}}
<label for="{{.ID}}-id">Campaign id</label><input id="{{.ID}}-id" name="campaignId" value="{{.D.CampaignID}}" required maxlength="100" pattern="[A-Za-z0-9][A-Za-z0-9_\-]*" aria-describedby="{{.ID}}-id-help"><p class="help" id="{{.ID}}-id-help">Letters, digits, - and _ (it names the campaign in the API and the budget).</p>{{end}}
<label for="{{.ID}}-name">Name</label><input id="{{.ID}}-name" name="name" value="{{.D.Name}}" required maxlength="200">
<label for="{{.ID}}-status">Status</label><select id="{{.ID}}-status" name="status">{{range (list "ACTIVE" "PAUSED" "STOPPED")}}<option{{if eq . $.D.Status}} selected{{end}}>{{.}}</option>{{end}}</select>
<label for="{{.ID}}-triggers">Triggers</label><textarea id="{{.ID}}-triggers" name="triggers" rows="2" aria-describedby="{{.ID}}-triggers-help">{{.D.Triggers}}</textarea><p class="help" id="{{.ID}}-triggers-help">Event types that start an execution, one a line (e.g. First_Login_Reward).</p>
<label for="{{.ID}}-actions">Actions (JSON)</label><textarea id="{{.ID}}-actions" name="actions" rows="10" class="code" spellcheck="false" aria-describedby="{{.ID}}-actions-help">{{.D.Actions}}</textarea><p class="help" id="{{.ID}}-actions-help">A JSON array, in chain order: [{"key": "welcome", "type": "NOTIFICATION_INBOX", "provider": "inbox", "params": {"subject": "…", "text": "…"}}]; optional "when" (ALWAYS, SUCCEEDED, FAILED) and "next" (an action's key or END).</p>
<button type="submit">{{.Button}}</button></form>{{end}}

{{define "campaigns"}}
{{template "unitForm" .Picker}}
{{if .Loaded}}<div class="scroll"><table id="campaigns"><caption>Campaigns of {{.BusinessUnitID}} (the first 50 by id)</caption>
<thead><tr><th scope="col">Campaign</th><th scope="col">Name</th><th scope="col">Status</th><th scope="col">Version</th><th scope="col">Triggers</th><th scope="col">Updated (UTC)</th></tr></thead>
<tbody>{{range .Campaigns}}<tr><th scope="row"><a href="/api/console/campaigns?businessUnitId={{.BusinessUnitID}}&amp;campaignId={{.CampaignID}}">{{.CampaignID}}</a></th><td>{{.Name}}</td><td>{{.Status}}</td><td>{{.Version}}</td><td>{{range $i, $t := .Triggers}}{{if $i}}, {{end}}{{$t}}{{end}}</td><td>{{when .UpdatedOn}}</td></tr>
{{else}}<tr><td colspan="6">No campaigns.</td></tr>{{end}}</tbody></table></div>
{{with .Problem}}<div class="alert error" role="alert" id="campaign-problem"><h2>{{.Title}} ({{.Status}})</h2>{{with .Detail}}<p>{{.}}</p>{{end}}{{if .Fields}}<ul>{{range .Fields}}<li>{{.Field}}: {{.Message}}</li>{{end}}</ul>{{end}}</div>{{end}}
{{with .Notice}}<div class="alert notice" role="status" id="campaign-notice">{{.}}</div>{{end}}
{{if and .Loaded (not .Campaign)}}{{template "campaignForm" (dict "ID" "cc" "Title" "New campaign" "Button" "Create campaign" "D" .CreateDraft "P" .)}}{{end}}
{{with .Campaign}}<h2 id="campaign">Campaign {{.CampaignID}}</h2>
<dl class="kv"><dt>Status</dt><dd id="campaign-status">{{.Status}}</dd><dt>Version</dt><dd>{{.Version}}</dd><dt>Run</dt><dd>{{.RunID}}</dd><dt>Created</dt><dd>{{when .CreatedOn}}</dd>
{{with $.Budget}}<dt>Budget</dt><dd><a href="/api/console/budgets?businessUnitId={{.BusinessUnitID}}&amp;campaignId={{.CampaignID}}" id="budget-link">{{.Status}}{{with .PausedReason}} ({{.}}){{end}}: cost {{.Cost}} + reserved {{.ReservedCost}} of {{.MaxCost}} {{.Currency}}</a></dd>{{else}}<dt>Budget</dt><dd><a href="/api/console/budgets?businessUnitId={{.BusinessUnitID}}&amp;campaignId={{.CampaignID}}" id="budget-create-link">none: create one</a></dd>{{end}}</dl>
{{if $.Why}}<div class="note" id="campaign-why"><h3>{{if eq .Status "ACTIVE"}}What holds executions{{else}}Why it is {{.Status}}{{end}}</h3><ul>{{range $.Why}}<li>{{.}}</li>{{end}}</ul></div>{{end}}
<div class="scroll"><table id="chain"><caption>The action chain</caption>
<thead><tr><th scope="col">#</th><th scope="col">Action</th><th scope="col">Type</th><th scope="col">Provider</th><th scope="col">Runs when</th><th scope="col">Then</th><th scope="col">Price</th></tr></thead>
<tbody>{{range $.Chain}}<tr><td>{{.Index}}</td><th scope="row">{{.Key}}</th><td>{{.Type}}</td><td>{{.Provider}}</td><td>{{.When}}</td><td>{{.Next}}</td><td>{{.Price}}</td></tr>
{{else}}<tr><td colspan="7">No actions.</td></tr>{{end}}</tbody></table></div>
{{with $.StaleDraft}}<details class="card" id="stale-draft" open><summary>Your draft (not saved)</summary><p>Triggers: {{.Triggers}}</p><pre class="body">{{.Actions}}</pre></details>{{end}}
<details class="card" id="edit-campaign"{{if or $.Problem $.StaleDraft}} open{{end}}><summary>Edit campaign {{.CampaignID}}</summary>{{template "campaignForm" (dict "ID" "ce" "Title" "Edit" "Button" "Save campaign" "D" $.EditDraft "P" $)}}</details>
{{if eq .Status "ACTIVE"}}{{template "statusForm" (dict "Action" "PAUSE" "Label" "Pause" "Help" "New executions still start; their commands wait until the campaign resumes." "C" . "P" $)}}{{end}}
{{if ne .Status "ACTIVE"}}{{template "statusForm" (dict "Action" "RESUME" "Label" "Resume" "Help" "Commands run again; a paused budget still holds them until it is raised or resumed." "C" . "P" $)}}{{end}}
{{if ne .Status "STOPPED"}}{{template "statusForm" (dict "Action" "STOP" "Label" "Stop" "Help" "Starts nothing more and cancels commands that have not reached a provider; UNKNOWN ones still need resolving." "C" . "P" $)}}{{end}}
<div class="scroll"><table id="campaign-audit"><caption>Status changes by people (the newest 10)</caption>
<thead><tr><th scope="col">When (UTC)</th><th scope="col">Action</th><th scope="col">Status</th><th scope="col">Operator</th><th scope="col">Reason</th></tr></thead>
<tbody>{{range $.Audit}}<tr><td>{{when .CreatedOn}}</td><td>{{.Action}}</td><td>{{.StatusBefore}} → {{.StatusAfter}} (v{{.VersionBefore}} → v{{.VersionAfter}})</td><td>{{.Operator}}</td><td>{{.Reason}}</td></tr>
{{else}}<tr><td colspan="5">None.</td></tr>{{end}}</tbody></table></div>
{{template "commands" (dict "ID" "unknown-commands" "Caption" "UNKNOWN commands waiting for a resolution (the oldest 50)" "Rows" $.Unknown)}}
{{if $.Unknown}}<p>No resend or lookup can settle these: check with the provider, then record what happened. The command's version as shown here goes with the form, so an outcome recorded meanwhile is never overwritten; the resolution moves the chain on.</p>{{end}}
{{range $.Unknown}}<form method="post" action="/api/console/campaigns" class="card" id="resolve-{{.ID}}">
<h3 class="key">{{.CommandID}}</h3>
<p>{{.ActionIndex}} · {{.ActionType}} · {{.Provider}} · recipient {{.RecipientID}} · version {{.Version}} · updated {{when .UpdatedOn}}{{with .LastError}} · {{.}}{{end}}</p>
{{$.CSRFField}}<input type="hidden" name="businessUnitId" value="{{.BusinessUnitID}}"><input type="hidden" name="campaignId" value="{{.CampaignID}}"><input type="hidden" name="commandId" value="{{.CommandID}}"><input type="hidden" name="version" value="{{.Version}}">
<fieldset><legend>What happened</legend>
<input type="radio" id="cs-{{.ID}}" name="status" value="SUCCEEDED" required><label for="cs-{{.ID}}">It was applied (SUCCEEDED)</label>
<input type="radio" id="cf-{{.ID}}" name="status" value="FAILED"><label for="cf-{{.ID}}">It was not applied (FAILED)</label></fieldset>
<label for="co-{{.ID}}">Operator</label><input id="co-{{.ID}}" name="operator" value="{{$.Operator}}"{{if $.Operator}} readonly{{end}} required>
<label for="cr-{{.ID}}">Reason</label><textarea id="cr-{{.ID}}" name="reason" required rows="2" maxlength="1000"></textarea>
<label for="cp-{{.ID}}">Provider reference (optional)</label><input id="cp-{{.ID}}" name="providerRef" maxlength="400">
<button type="submit">Resolve</button></form>{{end}}
<form method="get" action="/api/console/campaigns" class="filters" aria-label="Filter executions" id="executions-filter">
<input type="hidden" name="businessUnitId" value="{{.BusinessUnitID}}"><input type="hidden" name="campaignId" value="{{.CampaignID}}">
<div><label for="ex-status">Execution status</label><select id="ex-status" name="status"><option value="">any</option>{{range (list "RUNNING" "COMPLETED" "CANCELLED")}}<option{{if eq . $.Status}} selected{{end}}>{{.}}</option>{{end}}</select></div>
<div><label for="ex-recipient">Recipient</label><input id="ex-recipient" name="recipientId" value="{{$.RecipientID}}" maxlength="200"></div>
<div><button type="submit">Filter</button></div></form>
<div class="scroll"><table id="executions"><caption>Executions of {{.CampaignID}}, newest first ({{if $.Paged}}an older page{{else}}the newest 25{{end}}{{with $.Status}}, {{.}}{{end}}{{with $.RecipientID}}, recipient {{.}}{{end}})</caption>
<thead><tr><th scope="col">Execution</th><th scope="col">Recipient</th><th scope="col">Status</th><th scope="col">Next action</th><th scope="col">Local day</th><th scope="col">Run</th><th scope="col">Started (UTC)</th><th scope="col">Updated (UTC)</th></tr></thead>
<tbody>{{range $.Executions}}<tr><th scope="row" class="key"><a href="/api/console/campaigns?businessUnitId={{.BusinessUnitID}}&amp;campaignId={{.CampaignID}}&amp;executionId={{.ExecutionID}}#execution">{{.ExecutionID}}</a></th><td>{{.RecipientID}}</td><td>{{if .Blocked}}<span class="status blocked">BLOCKED · {{.Blocked}}</span>{{else}}{{.Status}}{{end}}</td><td>{{nextAction .Status .CurrentIndex}}</td><td>{{.LocalDate}}</td><td>{{.RunID}}</td><td>{{when .CreatedOn}}</td><td>{{when .UpdatedOn}}</td></tr>
{{else}}<tr><td colspan="8">No executions{{if $.Paged}} older than those shown before{{end}}.</td></tr>{{end}}</tbody></table></div>
{{with $.NextExecutions}}<p><a href="{{.}}" rel="next" id="executions-next">Older executions</a></p>{{end}}{{end}}
{{with .Execution}}<h2 id="execution">Execution {{.ExecutionID}}</h2>
<dl class="kv"><dt>Campaign</dt><dd>{{.CampaignID}}</dd><dt>Recipient</dt><dd><a href="/api/console/activity?businessUnitId={{.BusinessUnitID}}&amp;recipientId={{.RecipientID}}">{{.RecipientID}}</a></dd><dt>Status</dt><dd>{{.Status}}</dd><dt>Next action</dt><dd>{{nextAction .Status .CurrentIndex}}</dd><dt>Local day</dt><dd>{{.LocalDate}}</dd><dt>Source event</dt><dd>{{.SourceEventID}}</dd></dl>
<ol class="timeline" id="execution-history" aria-label="History of {{.ExecutionID}}">{{range $.History}}<li><time>{{when .On}}</time> <strong>{{.Title}}</strong>{{with .Command}} <span class="key">{{.}}</span>{{end}}{{with .Detail}} — {{.}}{{end}}{{range .Links}} · <a href="{{.Href}}">{{.Text}}</a>{{end}}</li>{{end}}</ol>
{{template "commands" (dict "ID" "execution-commands" "Caption" "Its commands, in action order" "Rows" $.Commands)}}{{end}}{{end}}{{end}}
`))
