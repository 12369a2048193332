package console

import (
	"bytes"
	"errors"
	"html/template"
	"net/http"

	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/store"
)

// BudgetPages are the budget pages (docs/budgets.md#support-and-the-http-api), added through
// Options.Pages: "budgets" shows, for the business unit and campaign in the query
// (?businessUnitId=&campaignId=), the campaign's budget — max, cost, reserved, status and
// pause reason, held reservations and the oldest one's age — and the unit's queues of
// UNKNOWN fees and WAITING_BUDGET commands (at most 50 each). Read-only; a business unit
// outside the caller's scope answers 404, as one that does not exist.
func BudgetPages(svc *budget.Service) []Page {
	return []Page{{Path: "budgets", Title: "Budgets", Render: func(r *http.Request, pc PageCall) (template.HTML, error) {
		q := r.URL.Query()
		d := budgetPage{BusinessUnitID: q.Get("businessUnitId"), CampaignID: q.Get("campaignId")}
		switch {
		case d.BusinessUnitID == "":
		case !pc.Caller.Scope.Allows(d.BusinessUnitID):
			return "", store.ErrNotFound // as for a unit that does not exist
		default:
			var err error
			if d.CampaignID != "" {
				v, verr := svc.GetView(r.Context(), d.BusinessUnitID, d.CampaignID)
				switch {
				case verr == nil:
					d.View = &v
				case errors.Is(verr, store.ErrNotFound):
					d.Message = "No budget for that campaign."
				default:
					return "", verr
				}
			}
			if d.Unknown, err = svc.UnknownFees(r.Context(), d.BusinessUnitID, 0, 50); err != nil {
				return "", err
			}
			if d.Waiting, err = svc.Waiting(r.Context(), d.BusinessUnitID, 50); err != nil {
				return "", err
			}
			d.Loaded = true
		}
		var b bytes.Buffer
		if err := budgetTemplate.Execute(&b, d); err != nil {
			return "", err
		}
		return template.HTML(b.String()), nil
	}}}
}

type budgetPage struct {
	BusinessUnitID, CampaignID, Message string
	Loaded                              bool
	View                                *budget.View
	Unknown                             []store.FeeTransfer
	Waiting                             []store.BudgetWait
}

var budgetTemplate = template.Must(template.New("budgets").Parse(`<form method="get" action="/api/console/budgets">
<label>Business unit <input name="businessUnitId" value="{{.BusinessUnitID}}" required></label>
<label>Campaign <input name="campaignId" value="{{.CampaignID}}"></label>
<button>Show</button></form>
{{with .Message}}<p class="note" id="message">{{.}}</p>{{end}}
{{with .View}}<h2>Campaign {{.CampaignID}}</h2>
<table id="budget"><tr><th>Status</th><td>{{.Status}}{{with .PausedReason}} ({{.}}){{end}}</td></tr>
<tr><th>Max cost</th><td>{{.MaxCost}} {{.Currency}}</td></tr>
<tr><th>Cost</th><td>{{.Cost}}</td></tr>
<tr><th>Reserved</th><td>{{.ReservedCost}}</td></tr>
<tr><th>Available</th><td>{{.Available}}</td></tr>
<tr><th>Held reservations</th><td>{{.HeldCount}}{{if .HeldCount}}, oldest {{.OldestHeldAge}} s{{end}}</td></tr></table>{{end}}
{{if .Loaded}}<h2>UNKNOWN fees</h2>
{{if .Unknown}}<table id="unknown-fees"><tr><th>Order</th><th>Campaign</th><th>Command</th><th>Amount</th><th>Since</th><th>Last error</th></tr>
{{range .Unknown}}<tr><td>{{.OrderID}}</td><td>{{.CampaignID}}</td><td>{{.CommandID}}</td><td>{{.Amount}} {{.Currency}}</td><td>{{.UpdatedOn.UTC.Format "2006-01-02 15:04:05"}}</td><td>{{.LastError}}</td></tr>
{{end}}</table>{{else}}<p id="unknown-fees">None.</p>{{end}}
<h2>Waiting for budget</h2>
{{if .Waiting}}<table id="waiting"><tr><th>Command</th><th>Campaign</th><th>Short of</th><th>Amount</th><th>Since</th></tr>
{{range .Waiting}}<tr><td>{{.CommandID}}</td><td>{{.CampaignID}}</td><td>{{.Reason}}</td><td>{{.Amount}} {{.Currency}}</td><td>{{.Since.UTC.Format "2006-01-02 15:04:05"}}</td></tr>
{{end}}</table>{{else}}<p id="waiting">None.</p>{{end}}{{end}}`))
