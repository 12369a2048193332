// Package budgetapi holds the budget, price-policy and fee support routes (docs/budgets.md):
// thin adapters over budget.Service on shared/httpapi (problem details, strict JSON and
// query, ETag/If-Match, cursors, business-unit scope: a unit the caller may not see answers
// 404 and nothing is written). Amounts are strings of minor units ("150000"; an integer is
// accepted on input); a negative or fractional amount, a currency that is not the budget's,
// a maxCost below cost + reservedCost and a policy for an unknown action type are 422 and
// change nothing. Writes need the operator (X-Automation-Operator or the signed-in name) and
// are audited.
//
//	GET  /api/budgets/campaigns/{campaignId}?businessUnitId=…          → 200 view, ETag
//	PUT  /api/budgets/campaigns/{campaignId}?businessUnitId=…          {"currency","maxCost","reason"}
//	     without If-Match: create (201; 409 exists) — with If-Match: change maxCost (200; 412 stale)
//	POST /api/budgets/campaigns/{campaignId}/resume?businessUnitId=…   If-Match, {"reason"} → 200; 409 not paused
//	GET  /api/budgets/campaigns/{campaignId}/costs?businessUnitId=…&from=YYYY-MM-DD&to=YYYY-MM-DD
//	     → 200 {days:[{day,cost,fees,currency}], total, reconciliation:{…, differences:[…]}}
//	GET  /api/budgets/price-policies?businessUnitId=…                  → 200 {items:[policy]}
//	GET  /api/budgets/price-policies/{actionType}?businessUnitId=…     → 200 policy, ETag
//	PUT  /api/budgets/price-policies/{actionType}?businessUnitId=…     policy input; If-Match as above
//	GET  /api/budgets/fees/unknown?businessUnitId=…[&limit&cursor]      → 200 {items:[fee], nextCursor}
//	POST /api/budgets/fees/unknown/{orderId}/resolve                  If-Match "<revision>",
//	     {"businessUnitId","status":"SUCCEEDED"|"FAILED","reason"} → 200 fee; 409 not in doubt
//	GET  /api/budgets/waiting?businessUnitId=…[&limit]          → 200 {items:[waiting command]}
package budgetapi

import (
	_ "embed"
	"encoding/json"
	"net/http"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/store"
)

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI returns the routes' OpenAPI 3.1 document.
func OpenAPI() []byte { return openAPI }

// Registrar is where routes go: funchost.Router.RegisterHTTP (or an http.ServeMux's Handle).
type Registrar interface {
	RegisterHTTP(pattern string, h http.Handler)
}

// Route patterns.
const (
	PathBudget   = "/api/budgets/campaigns/{campaignId}"
	PathResume   = "/api/budgets/campaigns/{campaignId}/resume"
	PathCosts    = "/api/budgets/campaigns/{campaignId}/costs"
	PathPolicies = "/api/budgets/price-policies"
	PathPolicy   = "/api/budgets/price-policies/{actionType}"
	PathUnknown  = "/api/budgets/fees/unknown"
	PathResolve  = "/api/budgets/fees/unknown/{orderId}/resolve"
	PathWaiting  = "/api/budgets/waiting"
)

// Page bounds of the support lists.
const (
	DefaultPage = 50
	MaxPage     = 500
	// MaxCostDays bounds the day range of the costs read.
	MaxCostDays = 366
)

// Register adds the routes to reg.
func Register(reg Registrar, api *httpapi.API, s *budget.Service) {
	h := handlers{s: s}
	reg.RegisterHTTP("GET "+PathBudget, api.Handler(h.getBudget))
	reg.RegisterHTTP("PUT "+PathBudget, api.Handler(h.putBudget))
	reg.RegisterHTTP("POST "+PathResume, api.Handler(h.resume))
	reg.RegisterHTTP("GET "+PathCosts, api.Handler(h.costs))
	reg.RegisterHTTP("GET "+PathPolicies, api.Handler(h.listPolicies))
	reg.RegisterHTTP("GET "+PathPolicy, api.Handler(h.getPolicy))
	reg.RegisterHTTP("PUT "+PathPolicy, api.Handler(h.putPolicy))
	reg.RegisterHTTP("GET "+PathUnknown, api.Handler(h.listUnknown))
	reg.RegisterHTTP("POST "+PathResolve, api.Handler(h.resolve))
	reg.RegisterHTTP("GET "+PathWaiting, api.Handler(h.waiting))
}

type handlers struct{ s *budget.Service }

// unit reads the query (only businessUnitId plus extra names) and checks the scope.
func unit(r *http.Request, extra ...string) (httpapi.Query, string, error) {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check(append([]string{"businessUnitId"}, extra...)...); err != nil {
		return q, "", err
	}
	bu := q.String("businessUnitId")
	return q, bu, httpapi.RequireUnit(r, bu)
}

func operator(r *http.Request) (string, error) { return httpapi.RequireOperator(r, "change") }

func (h handlers) getBudget(w http.ResponseWriter, r *http.Request) error {
	_, bu, err := unit(r)
	if err != nil {
		return err
	}
	v, err := h.s.GetView(r.Context(), bu, r.PathValue("campaignId"))
	if err != nil {
		return err
	}
	httpapi.SetETag(w, v.Version)
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}

type budgetBody struct {
	Currency string          `json:"currency"`
	MaxCost  json.RawMessage `json:"maxCost"`
	Reason   string          `json:"reason"`
}

func (h handlers) putBudget(w http.ResponseWriter, r *http.Request) error {
	_, bu, err := unit(r)
	if err != nil {
		return err
	}
	version, given, err := httpapi.IfMatch(r, false)
	if err != nil {
		return err
	}
	op, err := operator(r)
	if err != nil {
		return err
	}
	var b budgetBody
	if err := httpapi.DecodeJSON(r, &b); err != nil {
		return err
	}
	maxCost, err := money.ParseMinorJSON("maxCost", b.MaxCost, false)
	if err != nil {
		return err
	}
	in := budget.BudgetInput{Currency: b.Currency, MaxCost: maxCost, Reason: b.Reason}
	campaign := r.PathValue("campaignId")
	var v budget.View
	code := http.StatusOK
	if given {
		v, err = h.s.SetMaxCost(r.Context(), bu, campaign, in, version, op)
	} else {
		v, err = h.s.CreateBudget(r.Context(), bu, campaign, in, op)
		code = http.StatusCreated
	}
	if err != nil {
		return err
	}
	httpapi.SetETag(w, v.Version)
	httpapi.WriteJSON(w, code, v)
	return nil
}

type reasonBody struct {
	Reason string `json:"reason"`
}

func (h handlers) resume(w http.ResponseWriter, r *http.Request) error {
	_, bu, err := unit(r)
	if err != nil {
		return err
	}
	version, _, err := httpapi.IfMatch(r, true)
	if err != nil {
		return err
	}
	op, err := operator(r)
	if err != nil {
		return err
	}
	var b reasonBody
	if err := httpapi.DecodeOptionalJSON(r, &b); err != nil {
		return err
	}
	v, err := h.s.Resume(r.Context(), bu, r.PathValue("campaignId"), version, op, b.Reason)
	if err != nil {
		return err
	}
	httpapi.SetETag(w, v.Version)
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}

type costsAnswer struct {
	BusinessUnitID string                `json:"businessUnitId"`
	CampaignID     string                `json:"campaignId"`
	From           string                `json:"from"`
	To             string                `json:"to"`
	Days           []store.FeeDayCost    `json:"days"`
	Total          money.Minor           `json:"total"`
	Reconciliation budget.Reconciliation `json:"reconciliation"`
}

func day(q httpapi.Query, name string) (time.Time, error) {
	v := q.String(name)
	d, err := time.Parse("2006-01-02", v)
	if err != nil {
		return time.Time{}, automation.Invalid(name, "%q is not a date YYYY-MM-DD", v)
	}
	return d, nil
}

func (h handlers) costs(w http.ResponseWriter, r *http.Request) error {
	q, bu, err := unit(r, "from", "to")
	if err != nil {
		return err
	}
	from, ferr := day(q, "from")
	to, terr := day(q, "to")
	if err := automation.InvalidFields(ferr, terr); err != nil {
		return err
	}
	if to.Before(from) || to.Sub(from) > MaxCostDays*24*time.Hour {
		return automation.Invalid("to", "must be on or after from and at most %d days later", MaxCostDays)
	}
	campaign := r.PathValue("campaignId")
	rec, err := h.s.Reconcile3(r.Context(), bu, campaign)
	if err != nil {
		return err
	}
	days, err := h.s.Store.FeeCostByDay(r.Context(), bu, campaign, from.Format("2006-01-02"), to.Format("2006-01-02"))
	if err != nil {
		return err
	}
	out := costsAnswer{BusinessUnitID: bu, CampaignID: campaign, From: from.Format("2006-01-02"), To: to.Format("2006-01-02"),
		Days: append([]store.FeeDayCost{}, days...), Reconciliation: rec}
	for _, d := range days {
		out.Total += money.Minor(d.Cost)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// policyOut is a price policy as the API shows it.
type policyOut struct {
	BusinessUnitID string      `json:"businessUnitId"`
	ActionType     string      `json:"actionType"`
	Formula        string      `json:"formula"`
	Rate           string      `json:"rate"`
	Unit           string      `json:"unit"`
	TransferType   string      `json:"transferType"`
	Currency       string      `json:"currency"`
	MinFee         money.Minor `json:"minFee"`
	MaxFee         money.Minor `json:"maxFee"`
	ConvertTo      string      `json:"convertTo,omitempty"`
	ConversionRate string      `json:"conversionRate,omitempty"`
	Version        int64       `json:"version"`
	UpdatedOn      time.Time   `json:"updatedOn"`
	UpdatedBy      string      `json:"updatedBy,omitempty"`
}

func toPolicy(p store.PricePolicy) policyOut {
	return policyOut{BusinessUnitID: p.BusinessUnitID, ActionType: p.ActionType, Formula: p.Formula, Rate: p.Rate, Unit: p.Unit,
		TransferType: p.TransferType, Currency: p.Currency, MinFee: money.Minor(p.MinFee), MaxFee: money.Minor(p.MaxFee),
		ConvertTo: p.ConvertTo, ConversionRate: p.ConversionRate, Version: p.Version, UpdatedOn: p.UpdatedOn, UpdatedBy: p.UpdatedBy}
}

func (h handlers) listPolicies(w http.ResponseWriter, r *http.Request) error {
	_, bu, err := unit(r)
	if err != nil {
		return err
	}
	ps, err := h.s.Store.PricePolicyList(r.Context(), bu)
	if err != nil {
		return err
	}
	items := make([]policyOut, 0, len(ps))
	for _, p := range ps {
		items = append(items, toPolicy(p))
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.PageOf(items))
	return nil
}

func (h handlers) getPolicy(w http.ResponseWriter, r *http.Request) error {
	_, bu, err := unit(r)
	if err != nil {
		return err
	}
	p, err := h.s.Store.PricePolicyGet(r.Context(), bu, r.PathValue("actionType"))
	if err != nil {
		return err
	}
	httpapi.SetETag(w, p.Version)
	httpapi.WriteJSON(w, http.StatusOK, toPolicy(p))
	return nil
}

type policyBody struct {
	Formula        string          `json:"formula"`
	Rate           string          `json:"rate"`
	Unit           string          `json:"unit"`
	TransferType   string          `json:"transferType"`
	Currency       string          `json:"currency"`
	MinFee         json.RawMessage `json:"minFee"`
	MaxFee         json.RawMessage `json:"maxFee"`
	ConvertTo      string          `json:"convertTo"`
	ConversionRate string          `json:"conversionRate"`
}

func (h handlers) putPolicy(w http.ResponseWriter, r *http.Request) error {
	_, bu, err := unit(r)
	if err != nil {
		return err
	}
	version, given, err := httpapi.IfMatch(r, false)
	if err != nil {
		return err
	}
	op, err := operator(r)
	if err != nil {
		return err
	}
	var b policyBody
	if err := httpapi.DecodeJSON(r, &b); err != nil {
		return err
	}
	minFee, merr := money.ParseMinorJSON("minFee", b.MinFee, true)
	maxFee, xerr := money.ParseMinorJSON("maxFee", b.MaxFee, true)
	if err := automation.InvalidFields(merr, xerr); err != nil {
		return err
	}
	in := budget.PolicyInput{Formula: b.Formula, Rate: b.Rate, Unit: b.Unit, TransferType: b.TransferType, Currency: b.Currency,
		MinFee: minFee, MaxFee: maxFee, ConvertTo: b.ConvertTo, ConversionRate: b.ConversionRate}
	if given && version == 0 {
		return &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match", Message: "version 0 does not exist"}
	}
	p, err := h.s.PutPolicy(r.Context(), bu, r.PathValue("actionType"), in, version, op)
	if err != nil {
		return err
	}
	code := http.StatusOK
	if !given {
		code = http.StatusCreated
	}
	httpapi.SetETag(w, p.Version)
	httpapi.WriteJSON(w, code, toPolicy(p))
	return nil
}

// feeOut is a fee transfer record as the API shows it.
type feeOut struct {
	OrderID           string      `json:"orderId"`
	CommandID         string      `json:"commandId"`
	BusinessUnitID    string      `json:"businessUnitId"`
	CampaignID        string      `json:"campaignId"`
	Amount            money.Minor `json:"amount"`
	Currency          string      `json:"currency"`
	TransferType      string      `json:"transferType"`
	Day               string      `json:"day"`
	Status            string      `json:"status"`
	CostAdded         bool        `json:"costAdded"`
	ProviderReference string      `json:"providerReference,omitempty"`
	LastError         string      `json:"lastError,omitempty"`
	Checks            int64       `json:"checks"`
	Revision          int64       `json:"revision"`
	ResolvedBy        string      `json:"resolvedBy,omitempty"`
	ResolutionReason  string      `json:"resolutionReason,omitempty"`
	CreatedOn         time.Time   `json:"createdOn"`
	UpdatedOn         time.Time   `json:"updatedOn"`
}

func toFee(t store.FeeTransfer) feeOut {
	return feeOut{OrderID: t.OrderID, CommandID: t.CommandID, BusinessUnitID: t.BusinessUnitID, CampaignID: t.CampaignID,
		Amount: money.Minor(t.Amount), Currency: t.Currency, TransferType: t.TransferType, Day: t.Day, Status: t.Status, CostAdded: t.CostAdded,
		ProviderReference: t.ProviderReference, LastError: t.LastError, Checks: t.Checks, Revision: t.Revision, ResolvedBy: t.ResolvedBy,
		ResolutionReason: t.ResolutionReason, CreatedOn: t.CreatedOn, UpdatedOn: t.UpdatedOn}
}

func (h handlers) listUnknown(w http.ResponseWriter, r *http.Request) error {
	q, bu, err := unit(r, "limit", "cursor")
	if err != nil {
		return err
	}
	limit, err := q.Int("limit", DefaultPage, 1, MaxPage)
	if err != nil {
		return err
	}
	cursorQuery := "fees-unknown:" + bu
	var after int64
	if c := q.String("cursor"); c != "" {
		if err := httpapi.DecodeCursor(c, cursorQuery, &after); err != nil {
			return err
		}
	}
	list, err := h.s.UnknownFees(r.Context(), bu, after, limit+1)
	if err != nil {
		return err
	}
	page, err := httpapi.PageAfter(list, limit, cursorQuery, func(t store.FeeTransfer) int64 { return t.ID },
		func(t store.FeeTransfer) (feeOut, error) { return toFee(t), nil })
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
	return nil
}

type resolveBody struct {
	BusinessUnitID string `json:"businessUnitId"`
	Status         string `json:"status"`
	Reason         string `json:"reason"`
}

func (h handlers) resolve(w http.ResponseWriter, r *http.Request) error {
	if err := httpapi.NewQuery(r.URL.Query()).Check(); err != nil {
		return err
	}
	revision, _, err := httpapi.IfMatch(r, true)
	if err != nil {
		return err
	}
	var b resolveBody
	if err := httpapi.DecodeJSON(r, &b); err != nil {
		return err
	}
	if err := httpapi.RequireUnit(r, b.BusinessUnitID); err != nil {
		return err
	}
	op, err := operator(r)
	if err != nil {
		return err
	}
	t, err := h.s.ResolveFee(r.Context(), budget.ResolveRequest{BusinessUnitID: b.BusinessUnitID, OrderID: r.PathValue("orderId"),
		Status: b.Status, ExpectedRevision: revision, Operator: op, Reason: b.Reason})
	if err != nil {
		return err
	}
	httpapi.SetETag(w, t.Revision)
	httpapi.WriteJSON(w, http.StatusOK, toFee(t))
	return nil
}

type waitingOut struct {
	CommandID      string      `json:"commandId"`
	BusinessUnitID string      `json:"businessUnitId"`
	CampaignID     string      `json:"campaignId"`
	Reason         string      `json:"reason"`
	Amount         money.Minor `json:"amount"`
	Currency       string      `json:"currency"`
	Since          time.Time   `json:"since"`
}

func (h handlers) waiting(w http.ResponseWriter, r *http.Request) error {
	q, bu, err := unit(r, "limit")
	if err != nil {
		return err
	}
	limit, err := q.Int("limit", DefaultPage, 1, MaxPage)
	if err != nil {
		return err
	}
	list, err := h.s.Waiting(r.Context(), bu, limit)
	if err != nil {
		return err
	}
	items := make([]waitingOut, 0, len(list))
	for _, x := range list {
		items = append(items, waitingOut{CommandID: x.CommandID, BusinessUnitID: x.BusinessUnitID, CampaignID: x.CampaignID, Reason: x.Reason,
			Amount: money.Minor(x.Amount), Currency: x.Currency, Since: x.Since})
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.PageOf(items))
	return nil
}
