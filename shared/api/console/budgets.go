package console

import (
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/store"
)

// BudgetPages are the budget pages (docs/budgets.md#support-and-the-http-api), added through
// Options.Pages: "budgets" shows, for the business unit and campaign in the query
// (?businessUnitId=&campaignId=), the campaign's budget — max, cost, reserved, status and
// pause reason, held reservations and the oldest one's age, its audit trail (the newest 20)
// — and the unit's queues of UNKNOWN fees and WAITING_BUDGET commands (at most 50 each). A
// business unit outside the caller's scope answers 404, as one that does not exist.
//
// POST operates the budget through budget.Service, the budgets API's service (the same
// rules: the audit, the version guard, a maxCost below cost + reserved refused):
//
//	action=raise   maxCost (minor units of the budget's currency), reason, operator, version
//	               → budget.Service.SetMaxCost (raising it resumes a budget paused for BUDGET)
//	action=resume  reason, operator, version → budget.Service.Resume
//	action=create  campaignId, maxCost (minor units), currency (ISO 4217), reason, operator
//	               → budget.Service.CreateBudget (PUT /api/budgets/campaigns/{id} without
//	               If-Match): a campaign the unit does not have 422 naming campaignId, a
//	               budget that exists 409 with it shown
//
// The version is the budget's as the page showed it (the API's If-Match): a budget changed
// since answers 412 with the budget as it is now and says nothing was done; a budget that is
// not paused (resume) 409; a bad maxCost or reason 422; a missing version 428; a missing
// operator 422.
func BudgetPages(svc *budget.Service) []Page {
	render := func(r *http.Request, pc PageCall, bu, campaignID string, d budgetPage) (template.HTML, error) {
		d.BusinessUnitID, d.CampaignID, d.CSRFField, d.Operator = bu, campaignID, pc.CSRFField, pc.Caller.Operator
		var perr error
		if d.Picker, perr = pc.UnitSelect(r.Context(), "bg-bu", bu, true); perr != nil {
			return "", perr
		}
		switch {
		case bu == "":
		case !pc.Caller.Scope.Allows(bu):
			return "", store.ErrNotFound // as for a unit that does not exist
		default:
			ctx := r.Context()
			var err error
			if campaignID != "" {
				v, verr := svc.GetView(ctx, bu, campaignID)
				switch {
				case verr == nil:
					d.View = &v
					if d.Audit, err = svc.Store.BudgetAuditList(ctx, bu, campaignID, 20); err != nil {
						return "", err
					}
				case errors.Is(verr, store.ErrNotFound):
					d.Message = "No budget for that campaign."
				default:
					return "", verr
				}
			}
			if d.Unknown, err = svc.UnknownFees(ctx, bu, 0, listLimit); err != nil {
				return "", err
			}
			if d.Waiting, err = svc.Waiting(ctx, bu, listLimit); err != nil {
				return "", err
			}
			d.Loaded = true
		}
		return execute(budgetTemplates, "budgets", d)
	}
	return []Page{{Path: "budgets", Title: "Budgets",
		Render: func(r *http.Request, pc PageCall) (template.HTML, error) {
			q := r.URL.Query()
			return render(r, pc, strings.TrimSpace(q.Get("businessUnitId")), strings.TrimSpace(q.Get("campaignId")), budgetPage{})
		},
		Post: func(r *http.Request, pc PageCall) (template.HTML, error) {
			f := r.PostForm
			id := strings.TrimSpace(f.Get("campaignId"))
			bu, err := postedUnit(pc, f)
			if err != nil {
				return "", err
			}
			if id == "" {
				return "", automation.Invalid("campaignId", "is required")
			}
			action := f.Get("action")
			var ver int64
			if action != "create" {
				if ver, err = formVersion(f.Get("version"), "budget"); err != nil {
					return "", err
				}
			}
			op, reason := pageOperator(r, pc), f.Get("reason")
			var v budget.View
			switch action {
			case "create":
				var max money.Minor
				if max, err = money.ParseMinor("maxCost", strings.TrimSpace(f.Get("maxCost"))); err == nil {
					err = needOperator(op)
				}
				if err == nil {
					v, err = svc.CreateBudget(r.Context(), bu, id, budget.BudgetInput{Currency: strings.TrimSpace(f.Get("currency")), MaxCost: max, Reason: reason}, op)
				}
			case "raise":
				var max money.Minor
				if max, err = money.ParseMinor("maxCost", strings.TrimSpace(f.Get("maxCost"))); err == nil {
					err = needOperator(op)
				}
				if err == nil {
					v, err = svc.SetMaxCost(r.Context(), bu, id, budget.BudgetInput{MaxCost: max, Reason: reason}, ver, op)
				}
			case "resume":
				if err = needOperator(op); err == nil {
					v, err = svc.Resume(r.Context(), bu, id, ver, op, reason)
				}
			default:
				return "", automation.Invalid("action", "must be create, raise or resume, not %q", action)
			}
			if err == nil {
				return render(r, pc, bu, id, budgetPage{Notice: fmt.Sprintf("Budget of %s: %s by %s; it is %s, max cost %s %s (version %d).",
					v.CampaignID, action, op, v.Status, v.MaxCost, v.Currency, v.Version)})
			}
			if automation.CodeOf(err) == automation.CodeNotFound || errors.Is(err, store.ErrNotFound) {
				return "", err
			}
			d := budgetPage{Problem: problemOf(err)}
			if action == "create" {
				d.Draft = &budgetDraft{MaxCost: f.Get("maxCost"), Currency: f.Get("currency"), Reason: reason}
			}
			switch {
			case action == "create" && errors.Is(err, store.ErrConflict):
				d.Problem = &problem{Status: http.StatusConflict, Title: "That campaign has a budget",
					Detail: "A campaign has one budget. Nothing was created; the budget below is as it is now: change its max cost there (its version goes with the form)."}
			case isStale(err):
				now := "changed"
				if cur, gerr := svc.Store.BudgetGet(r.Context(), bu, id); gerr == nil {
					now = fmt.Sprintf("at version %d", cur.Version)
				}
				d.Problem = &problem{Status: http.StatusPreconditionFailed, Title: "The budget changed since you loaded it",
					Detail: fmt.Sprintf("You acted on version %d; the budget is %s now (a reservation, a fee or another operator changed it). Nothing was done; the budget below is as it is now.", ver, now)}
			case errors.Is(err, store.ErrConflict):
				d.Problem = &problem{Status: http.StatusConflict, Title: "The budget is not paused",
					Detail: "Only a paused budget resumes. Nothing was done; the budget below is as it is now."}
			}
			body, rerr := render(r, pc, bu, id, d)
			if rerr != nil {
				return "", rerr
			}
			return "", &Refused{Status: d.Problem.Status, Body: body}
		}}}
}

// formVersion reads the version a form carries (what the page showed: the API's If-Match).
// Missing or not a positive integer: CodePreconditionRequired naming "version".
func formVersion(v, what string) (int64, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n < 1 {
		return 0, &automation.Error{Code: automation.CodePreconditionRequired, Field: "version",
			Message: "the form did not say which version of the " + what + " you read; reload the page and act from it"}
	}
	return n, nil
}

// needOperator refuses a change nobody named themselves for (the audit needs a name).
func needOperator(op string) error {
	if op == "" {
		return automation.Invalid("operator", "is required (the audit names who acted)")
	}
	return nil
}

// problemOf is err as a page's alert shows it.
func problemOf(err error) *problem {
	return pageProblem(httpapi.ProblemOf(err))
}

type budgetPage struct {
	BusinessUnitID, CampaignID, Message string
	Picker                              template.HTML
	Operator                            string
	CSRFField                           template.HTML
	Loaded                              bool
	View                                *budget.View
	Audit                               []store.BudgetAuditRecord
	Unknown                             []store.FeeTransfer
	Waiting                             []store.BudgetWait
	Notice                              string
	Problem                             *problem
	Draft                               *budgetDraft // the create form as typed, when a create was refused
}

// budgetDraft is the create form's input kept after a refusal.
type budgetDraft struct{ MaxCost, Currency, Reason string }

var budgetTemplates = template.Must(template.New("budgets").Funcs(funcs).Parse(`{{define "budgets"}}<form method="get" action="/api/console/budgets" class="filters" aria-label="Budget">
<div>{{.Picker}}</div>
<div><label for="bg-c">Campaign</label><input id="bg-c" name="campaignId" value="{{.CampaignID}}"></div>
<div><button type="submit">Show</button></div></form>
{{with .Problem}}<div class="alert error" role="alert" id="budget-problem"><h2>{{.Title}} ({{.Status}})</h2>{{with .Detail}}<p>{{.}}</p>{{end}}{{if .Fields}}<ul>{{range .Fields}}<li>{{.Field}}: {{.Message}}</li>{{end}}</ul>{{end}}</div>{{end}}
{{with .Notice}}<div class="alert notice" role="status" id="budget-notice">{{.}}</div>{{end}}
{{with .Message}}<p class="note" id="message">{{.}}</p>{{end}}
{{with .View}}<h2 id="budget-heading">Campaign {{.CampaignID}}</h2>
<table id="budget"><caption>Budget of {{.CampaignID}} (minor units of {{.Currency}})</caption>
<tr><th scope="row">Status</th><td id="budget-status">{{.Status}}{{with .PausedReason}} ({{.}}){{end}}</td></tr>
<tr><th scope="row">Max cost</th><td>{{.MaxCost}} {{.Currency}}</td></tr>
<tr><th scope="row">Cost</th><td>{{.Cost}}</td></tr>
<tr><th scope="row">Reserved</th><td>{{.ReservedCost}}</td></tr>
<tr><th scope="row">Available</th><td>{{.Available}}</td></tr>
<tr><th scope="row">Held reservations</th><td>{{.HeldCount}}{{if .HeldCount}}, oldest {{.OldestHeldAge}} s{{end}}</td></tr>
<tr><th scope="row">Version</th><td>{{.Version}}</td></tr></table>
<form method="post" action="/api/console/budgets" class="card" id="raise-form"><h3>Change max cost</h3>
<p class="help">In minor units of {{.Currency}}. Raising it above cost + reserved resumes a budget paused for BUDGET; a value below cost + reserved is refused.</p>
{{$.CSRFField}}<input type="hidden" name="action" value="raise"><input type="hidden" name="businessUnitId" value="{{.BusinessUnitID}}"><input type="hidden" name="campaignId" value="{{.CampaignID}}"><input type="hidden" name="version" value="{{.Version}}">
<label for="bg-max">Max cost</label><input id="bg-max" name="maxCost" value="{{.MaxCost}}" required inputmode="numeric" pattern="[0-9]+">
<label for="bg-op">Operator</label><input id="bg-op" name="operator" value="{{$.Operator}}"{{if $.Operator}} readonly{{end}} required>
<label for="bg-reason">Reason</label><textarea id="bg-reason" name="reason" rows="2" maxlength="1000"></textarea>
<button type="submit">Save max cost</button></form>
{{if eq .Status "PAUSED"}}<form method="post" action="/api/console/budgets" class="card" id="resume-form"><h3>Resume</h3>
<p class="help">Sets the budget ACTIVE; the campaign resumes and its waiting commands are checked again.</p>
{{$.CSRFField}}<input type="hidden" name="action" value="resume"><input type="hidden" name="businessUnitId" value="{{.BusinessUnitID}}"><input type="hidden" name="campaignId" value="{{.CampaignID}}"><input type="hidden" name="version" value="{{.Version}}">
<label for="bg-rop">Operator</label><input id="bg-rop" name="operator" value="{{$.Operator}}"{{if $.Operator}} readonly{{end}} required>
<label for="bg-rreason">Reason</label><textarea id="bg-rreason" name="reason" rows="2" maxlength="1000"></textarea>
<button type="submit">Resume budget</button></form>{{end}}
<div class="scroll"><table id="budget-audit"><caption>Audit of this budget (the newest 20)</caption>
<thead><tr><th scope="col">When (UTC)</th><th scope="col">Action</th><th scope="col">Operator</th><th scope="col">Reason</th></tr></thead>
<tbody>{{range $.Audit}}<tr><td>{{when .CreatedOn}}</td><td>{{.Action}}</td><td>{{.Operator}}</td><td>{{.Reason}}</td></tr>
{{else}}<tr><td colspan="4">None.</td></tr>{{end}}</tbody></table></div>{{end}}
{{if and .Loaded (not .View)}}<form method="post" action="/api/console/budgets" class="card" id="create-budget-form"><h3>New budget</h3>
<p class="help">Saved through the budgets API's service (PUT /api/budgets/campaigns/{id}): the campaign must be one of {{.BusinessUnitID}}'s, maxCost is in minor units of the currency (1000000 VND; 1000 AUD cents is 10.00 AUD). A priced action reserves against it before it runs; one that does not fit waits and pauses the campaign.</p>
{{$.CSRFField}}<input type="hidden" name="action" value="create"><input type="hidden" name="businessUnitId" value="{{.BusinessUnitID}}">
<label for="bgc-c">Campaign</label><input id="bgc-c" name="campaignId" value="{{.CampaignID}}" required maxlength="200">
<label for="bgc-max">Max cost</label><input id="bgc-max" name="maxCost" value="{{with .Draft}}{{.MaxCost}}{{end}}" required inputmode="numeric" pattern="[0-9]+">
<label for="bgc-cur">Currency</label><input id="bgc-cur" name="currency" value="{{with .Draft}}{{.Currency}}{{end}}" required maxlength="3" pattern="[A-Z]{3}" autocomplete="off">
<label for="bgc-op">Operator</label><input id="bgc-op" name="operator" value="{{$.Operator}}"{{if $.Operator}} readonly{{end}} required>
<label for="bgc-reason">Reason</label><textarea id="bgc-reason" name="reason" rows="2" maxlength="1000">{{with .Draft}}{{.Reason}}{{end}}</textarea>
<button type="submit">Create budget</button></form>{{end}}
{{if .Loaded}}<h2>UNKNOWN fees</h2>
{{if .Unknown}}<table id="unknown-fees"><caption>Fees in doubt in {{.BusinessUnitID}}</caption><tr><th scope="col">Order</th><th scope="col">Campaign</th><th scope="col">Command</th><th scope="col">Amount</th><th scope="col">Since</th><th scope="col">Last error</th></tr>
{{range .Unknown}}<tr><td>{{.OrderID}}</td><td>{{.CampaignID}}</td><td>{{.CommandID}}</td><td>{{.Amount}} {{.Currency}}</td><td>{{when .UpdatedOn}}</td><td>{{.LastError}}</td></tr>
{{end}}</table>{{else}}<p id="unknown-fees">None.</p>{{end}}
<h2>Waiting for budget</h2>
{{if .Waiting}}<table id="waiting"><caption>Commands waiting for budget in {{.BusinessUnitID}}</caption><tr><th scope="col">Command</th><th scope="col">Campaign</th><th scope="col">Short of</th><th scope="col">Amount</th><th scope="col">Since</th></tr>
{{range .Waiting}}<tr><td>{{.CommandID}}</td><td>{{.CampaignID}}</td><td>{{.Reason}}</td><td>{{.Amount}} {{.Currency}}</td><td>{{when .Since}}</td></tr>
{{end}}</table>{{else}}<p id="waiting">None.</p>{{end}}{{end}}{{end}}`))
