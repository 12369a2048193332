package console

import (
	"bytes"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// The pages of the services that landed after the console (docs/console.md#pages), added
// through Options.Pages like the budget page. Each reads one service and renders its answer;
// every rule (scope, versions, what a resolution accepts) stays in the service. A business
// unit outside the caller's scope answers 404, exactly like one that does not exist.

// listLimit bounds every list these pages show (the newest or oldest 50, as the API's first
// page).
const listLimit = 50

// inScope refuses a business unit outside the caller's scope like an unknown one.
func inScope(pc PageCall, bu string) error {
	if !pc.Caller.Scope.Allows(bu) {
		return automation.Errorf(automation.CodeNotFound, "business unit %q not found", bu)
	}
	return nil
}

// postedUnit is the posted form's businessUnitId (trimmed): required (422 naming it) and in
// the caller's scope (404 like an unknown one otherwise).
func postedUnit(pc PageCall, f url.Values) (string, error) {
	bu := strings.TrimSpace(f.Get("businessUnitId"))
	if bu == "" {
		return "", automation.Invalid("businessUnitId", "is required")
	}
	return bu, inScope(pc, bu)
}

// orError is err when there is one, else the page executed (execute).
func orError(t *template.Template, name string, d any, err error) (template.HTML, error) {
	if err != nil {
		return "", err
	}
	return execute(t, name, d)
}

func execute(t *template.Template, name string, d any) (template.HTML, error) {
	var b bytes.Buffer
	if err := t.ExecuteTemplate(&b, name, d); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}

// pageOperator is who acts: the identity the front end names, else the form's field.
func pageOperator(r *http.Request, pc PageCall) string {
	if pc.Caller.Operator != "" {
		return pc.Caller.Operator
	}
	return strings.TrimSpace(r.PostForm.Get("operator"))
}

// GatewayPages are the event gateway's pages (docs/gateway.md): "events" shows the ingest
// counters per event type of the caller's units (or of one, ?businessUnitId=) with each
// type's definition version in force, the registry's save sequence, and — for a caller that
// sees every unit — each gateway topic's outbox backlog; then the registry's pages
// (RegistryPages, registry.go).
func GatewayPages(admin *gateway.Admin, svc *gateway.Service) []Page {
	return append([]Page{
		{Path: "events", Title: "Event metrics", Render: func(r *http.Request, pc PageCall) (template.HTML, error) {
			d := eventsPage{BusinessUnitID: strings.TrimSpace(r.URL.Query().Get("businessUnitId"))}
			scope := pc.Caller.Scope
			if d.BusinessUnitID != "" {
				if err := inScope(pc, d.BusinessUnitID); err != nil {
					return "", err
				}
				scope = automation.BusinessUnits(d.BusinessUnitID)
			}
			m, err := svc.ReadMetrics(r.Context(), scope)
			if err != nil {
				return "", err
			}
			if d.Picker, err = pc.UnitSelect(r.Context(), "ev-bu", d.BusinessUnitID, false); err != nil {
				return "", err
			}
			d.Metrics, d.Platform = m, scope.All()
			return execute(moreTemplates, "events", d)
		}},
	}, RegistryPages(admin)...)
}

type eventsPage struct {
	BusinessUnitID string
	Picker         template.HTML
	Platform       bool
	Metrics        gateway.MetricsView
}

// AttributeStore is what the attribute page reads: the attribute read API's store.
type AttributeStore interface {
	store.AttributeStore
	businessunit.Reader
}

var (
	attrEntityTypeRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,49}$`)
)

// AttributePages is the attribute lookup (docs/attributes.md#read-api): for a business unit,
// an entity type (CUSTOMER, ITEM, …) and an entity id, the entity's attributes as the read
// API gives them now (attribute.Read: the period rule applied, pending counter deltas
// added). Read-only.
func AttributePages(st AttributeStore, clock automation.Clock) []Page {
	return []Page{{Path: "attributes", Title: "Attributes", Render: func(r *http.Request, pc PageCall) (template.HTML, error) {
		q := r.URL.Query()
		d := attributesPage{BusinessUnitID: strings.TrimSpace(q.Get("businessUnitId")), EntityType: strings.TrimSpace(q.Get("entityType")),
			EntityID: strings.TrimSpace(q.Get("entityId"))}
		if d.EntityType == "" {
			d.EntityType = "CUSTOMER"
		}
		var err error
		if d.Picker, err = pc.UnitSelect(r.Context(), "at-bu", d.BusinessUnitID, true); err != nil {
			return "", err
		}
		if d.BusinessUnitID == "" || d.EntityID == "" {
			return execute(moreTemplates, "attributes", d)
		}
		if !attrEntityTypeRE.MatchString(d.EntityType) {
			return "", automation.Invalid("entityType", "must be an upper-case entity type such as CUSTOMER or ITEM")
		}
		if len(d.EntityID) > 200 {
			return "", automation.Invalid("entityId", "must be 1..200 characters")
		}
		if _, err := businessunit.InScope(r.Context(), st, pc.Caller.Scope, d.BusinessUnitID); err != nil {
			if automation.CodeOf(err) == automation.CodeNotFound {
				return "", automation.Errorf(automation.CodeNotFound, "business unit %q not found", d.BusinessUnitID)
			}
			return "", err
		}
		d.AsOf = clock.Now().UTC()
		views, err := attribute.Read(r.Context(), st, store.AttributeEntity{BusinessUnitID: d.BusinessUnitID, EntityType: d.EntityType, EntityID: d.EntityID}, d.AsOf)
		if err != nil {
			return "", err
		}
		for _, v := range views {
			d.Attributes = append(d.Attributes, attributeRow{View: v, Value: valueText(v.Value)})
		}
		d.Loaded = true
		return execute(moreTemplates, "attributes", d)
	}}}
}

type attributesPage struct {
	BusinessUnitID, EntityType, EntityID string
	Picker                               template.HTML
	Loaded                               bool
	AsOf                                 time.Time
	Attributes                           []attributeRow
}

type attributeRow struct {
	attribute.View
	Value string
}

func valueText(v any) string {
	switch x := v.(type) {
	case []string:
		return strings.Join(x, ", ")
	case nil:
		return ""
	}
	return fmt.Sprint(v)
}

// FeePages is the UNKNOWN fee queue (docs/budgets.md#support-and-the-http-api): a business
// unit's in-doubt fees (UNKNOWN and PENDING, the oldest 50), each with a resolve form —
// SUCCEEDED or FAILED, the operator, a reason, and the fee's revision as the page showed it
// (the API's If-Match). POST resolves through budget.Service.ResolveFee: a fee that moved on
// answers 412 with the queue as it is now and says nothing was done; one no longer in doubt
// 409; a missing operator, reason or status 422; another unit's fee 404.
func FeePages(svc *budget.Service) []Page {
	render := func(r *http.Request, pc PageCall, bu string, d feesPage) (template.HTML, error) {
		d.BusinessUnitID, d.CSRFField, d.Operator = bu, pc.CSRFField, pc.Caller.Operator
		picker, chosen, err := pc.chosenUnit(r.Context(), "fe-bu", bu)
		d.Picker = picker
		if err != nil {
			return "", err
		}
		if chosen {
			fees, err := svc.UnknownFees(r.Context(), bu, 0, listLimit)
			if err != nil {
				return "", err
			}
			d.Fees, d.Loaded = fees, true
		}
		return execute(moreTemplates, "fees", d)
	}
	return []Page{{Path: "fees", Title: "UNKNOWN fees",
		Render: func(r *http.Request, pc PageCall) (template.HTML, error) {
			return render(r, pc, strings.TrimSpace(r.URL.Query().Get("businessUnitId")), feesPage{})
		},
		Post: func(r *http.Request, pc PageCall) (template.HTML, error) {
			f := r.PostForm
			bu, err := postedUnit(pc, f)
			if err != nil {
				return "", err
			}
			var rev int64
			if _, err := fmt.Sscan(strings.TrimSpace(f.Get("revision")), &rev); err != nil || rev < 1 {
				return "", &automation.Error{Code: automation.CodePreconditionRequired, Field: "revision",
					Message: "the form did not say which revision of the fee you read; reload the page and act from it"}
			}
			order := strings.TrimSpace(f.Get("orderId"))
			t, err := svc.ResolveFee(r.Context(), budget.ResolveRequest{BusinessUnitID: bu, OrderID: order, Status: f.Get("status"),
				ExpectedRevision: rev, Operator: pageOperator(r, pc), Reason: f.Get("reason")})
			if err == nil {
				return render(r, pc, bu, feesPage{Notice: fmt.Sprintf("Fee %s resolved as %s by %s (revision %d).", t.OrderID, t.Status, t.ResolvedBy, t.Revision)})
			}
			if automation.CodeOf(err) == automation.CodeNotFound {
				return "", err
			}
			p := httpapi.ProblemOf(err)
			d := feesPage{Problem: &problem{Status: p.Status, Title: p.Title, Detail: p.Detail, Fields: p.Errors}}
			if errors.Is(err, store.ErrLeaseLost) || automation.CodeOf(err) == automation.CodePreconditionFailed {
				d.Problem = &problem{Status: http.StatusPreconditionFailed, Title: "The fee changed since you loaded it",
					Detail: fmt.Sprintf("You acted on revision %d of %s; someone or something recorded an outcome since. Nothing was done; the queue below is as it is now.", rev, order)}
			}
			body, rerr := render(r, pc, bu, d)
			if rerr != nil {
				return "", rerr
			}
			return "", &Refused{Status: d.Problem.Status, Body: body}
		}}}
}

type feesPage struct {
	BusinessUnitID string
	Picker         template.HTML
	Operator       string
	CSRFField      template.HTML
	Loaded         bool
	Fees           []store.FeeTransfer
	Notice         string
	Problem        *problem
}

// moreTemplates render the pages above (inside the layout's main, which has the page's h1
// in the navigation title). Every control has a label, every table a caption and header
// cells, and wide tables scroll inside their box at phone width.
var moreTemplates = template.Must(template.New("more").Funcs(funcs).Parse(`
{{define "unitForm"}}<form method="get" class="filters" aria-label="Business unit">
<div>{{.}}</div>
<div><button type="submit">Show</button></div></form>{{end}}

{{define "events"}}
<p class="help">Ingest counts per event type since this process started (the <a href="/api/console/">overview</a>'s ingest chart reads the persisted counts, which survive restarts); <code>registryVersion</code> is the version of each type's definition in force (the one an accepted event met), and the registry's save sequence is {{.Metrics.RegistrySeq}} ({{.Metrics.EventTypes}} types).</p>
{{template "unitForm" .Picker}}
<div class="scroll"><table id="event-counts"><caption>Events by type{{with .BusinessUnitID}} in {{.}}{{end}}</caption>
<thead><tr><th scope="col">Event type</th><th scope="col">Definition version</th><th scope="col">Accepted</th><th scope="col">Duplicate</th><th scope="col">Rejected</th></tr></thead>
<tbody>{{range .Metrics.Counts}}<tr><th scope="row">{{if .EventType}}{{.EventType}}{{else}}(unregistered or unreadable){{end}}</th><td>{{if .RegistryVersion}}{{.RegistryVersion}}{{else}}—{{end}}</td><td>{{.Accepted}}</td><td>{{.Duplicate}}</td><td>{{.Rejected}}</td></tr>
{{else}}<tr><td colspan="5">No events since the process started.</td></tr>{{end}}</tbody></table></div>
{{if .Platform}}<div class="scroll"><table id="outbox-lag"><caption>Gateway topics: unpublished outbox rows</caption>
<thead><tr><th scope="col">Topic</th><th scope="col">Unpublished</th><th scope="col">Oldest age</th></tr></thead>
<tbody>{{range .Metrics.Lags}}<tr><th scope="row">{{.Topic}}</th><td>{{.Unpublished}}</td><td>{{printf "%.0f" .OldestAgeSeconds}} s</td></tr>{{end}}</tbody></table></div>
{{else}}<p class="help">The outbox backlog is platform-wide: shown to callers who see every business unit.</p>{{end}}{{end}}

{{define "attributes"}}
<form method="get" class="filters" aria-label="Entity">
<div>{{.Picker}}</div>
<div><label for="at-type">Entity type</label><input id="at-type" name="entityType" value="{{.EntityType}}" required pattern="[A-Z][A-Z0-9_]{0,49}" aria-describedby="at-type-help"><small id="at-type-help" class="help">CUSTOMER, ITEM, …</small></div>
<div><label for="at-id">Entity id</label><input id="at-id" name="entityId" value="{{.EntityID}}" required maxlength="200"></div>
<div><button type="submit">Look up</button></div></form>
{{if .Loaded}}<div class="scroll"><table id="attributes"><caption>{{.EntityType}} {{.EntityID}} in {{.BusinessUnitID}}, as of {{when .AsOf}}</caption>
<thead><tr><th scope="col">Attribute</th><th scope="col">Type</th><th scope="col">Value</th><th scope="col">Period</th><th scope="col">Last event (UTC)</th><th scope="col">Updated (UTC)</th></tr></thead>
<tbody>{{range .Attributes}}<tr><th scope="row">{{.Code}}</th><td>{{.Type}}</td><td>{{.Value}}</td><td>{{.Period}}</td><td>{{when .LastEventOn}}</td><td>{{when .UpdatedOn}}</td></tr>
{{else}}<tr><td colspan="6">No attributes for this entity.</td></tr>{{end}}</tbody></table></div>{{end}}{{end}}

{{define "fees"}}
<p>Fees whose billing outcome is in doubt (UNKNOWN, or PENDING past its call): the provider may or may not have charged. Check with the provider, then record what happened; the fee's revision as shown here goes with the form, so an outcome recorded meanwhile is never overwritten.</p>
{{template "unitForm" .Picker}}
{{with .Problem}}<div class="alert error" role="alert" id="fee-problem"><h2>{{.Title}} ({{.Status}})</h2>{{with .Detail}}<p>{{.}}</p>{{end}}{{if .Fields}}<ul>{{range .Fields}}<li>{{.Field}}: {{.Message}}</li>{{end}}</ul>{{end}}</div>{{end}}
{{with .Notice}}<div class="alert notice" role="status" id="fee-notice">{{.}}</div>{{end}}
{{if .Loaded}}{{range .Fees}}
<form method="post" action="/api/console/fees" class="card">
<h2 class="key">{{.OrderID}}</h2>
<p>{{.Status}} · {{.Amount}} {{.Currency}} ({{.TransferType}}) · campaign {{.CampaignID}} · command {{.CommandID}} · revision {{.Revision}} · updated {{when .UpdatedOn}}{{with .LastError}} · {{.}}{{end}}</p>
{{$.CSRFField}}<input type="hidden" name="businessUnitId" value="{{.BusinessUnitID}}"><input type="hidden" name="orderId" value="{{.OrderID}}"><input type="hidden" name="revision" value="{{.Revision}}">
<fieldset><legend>What happened</legend>
<input type="radio" id="fs-{{.ID}}" name="status" value="SUCCEEDED" required><label for="fs-{{.ID}}">It was charged</label>
<input type="radio" id="ff-{{.ID}}" name="status" value="FAILED"><label for="ff-{{.ID}}">It was not charged</label></fieldset>
<label for="fo-{{.ID}}">Operator</label><input id="fo-{{.ID}}" name="operator" value="{{$.Operator}}"{{if $.Operator}} readonly{{end}} required>
<label for="fr-{{.ID}}">Reason</label><textarea id="fr-{{.ID}}" name="reason" required rows="2"></textarea>
<button type="submit">Resolve</button></form>
{{else}}<p id="no-fees">No fees in doubt in {{.BusinessUnitID}}.</p>{{end}}{{end}}{{end}}
`))
