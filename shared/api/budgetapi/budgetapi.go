package budgetapi

import (
	"context"
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
type Registrar = httpapi.Registrar

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
	httpapi.Mount(reg, api, Routes(s)...)
}

// Routes declares the routes over s (nil s: the declarations only, for checks).
func Routes(s *budget.Service) []httpapi.Route {
	h := handlers{s: s}
	pageOf := &httpapi.Paging{Default: DefaultPage, Max: MaxPage}
	viewTag := func(v budget.View) int64 { return v.Version }
	policyTag := func(p policyOut) int64 { return p.Version }
	return []httpapi.Route{
		httpapi.Endpoint[struct{}, budget.View]{Method: "GET", Path: PathBudget, Unit: httpapi.UnitQuery, ETag: viewTag,
			Call: func(ctx context.Context, in *httpapi.In[struct{}]) (budget.View, error) {
				return h.s.GetView(ctx, in.Unit, in.Path("campaignId"))
			}},
		httpapi.Endpoint[budgetBody, budget.View]{Method: "PUT", Path: PathBudget, Unit: httpapi.UnitQuery, IfMatch: httpapi.IfMatchOptional,
			Operator: "change", Body: httpapi.BodyRequired, Also: []int{http.StatusCreated}, ETag: viewTag, Call: h.putBudget},
		httpapi.Endpoint[reasonBody, budget.View]{Method: "POST", Path: PathResume, Unit: httpapi.UnitQuery, IfMatch: httpapi.IfMatchRequired,
			Operator: "change", Body: httpapi.BodyOptional, ETag: viewTag,
			Call: func(ctx context.Context, in *httpapi.In[reasonBody]) (budget.View, error) {
				return h.s.Resume(ctx, in.Unit, in.Path("campaignId"), in.Version, in.Operator, in.Body.Reason)
			}},
		httpapi.Endpoint[struct{}, costsAnswer]{Method: "GET", Path: PathCosts, Unit: httpapi.UnitQuery, Query: []string{"from", "to"}, Call: h.costs},
		httpapi.Endpoint[struct{}, httpapi.Page[policyOut]]{Method: "GET", Path: PathPolicies, Unit: httpapi.UnitQuery, Call: h.listPolicies},
		httpapi.Endpoint[struct{}, policyOut]{Method: "GET", Path: PathPolicy, Unit: httpapi.UnitQuery, ETag: policyTag,
			Call: func(ctx context.Context, in *httpapi.In[struct{}]) (policyOut, error) {
				p, err := h.s.Store.PricePolicyGet(ctx, in.Unit, in.Path("actionType"))
				return toPolicy(p), err
			}},
		httpapi.Endpoint[policyBody, policyOut]{Method: "PUT", Path: PathPolicy, Unit: httpapi.UnitQuery, IfMatch: httpapi.IfMatchOptional,
			Operator: "change", Body: httpapi.BodyRequired, Also: []int{http.StatusCreated}, ETag: policyTag, Call: h.putPolicy},
		httpapi.Endpoint[struct{}, httpapi.Page[feeOut]]{Method: "GET", Path: PathUnknown, Unit: httpapi.UnitQuery, Paging: pageOf, Call: h.listUnknown},
		httpapi.Endpoint[resolveBody, feeOut]{Method: "POST", Path: PathResolve, Unit: httpapi.UnitBody,
			BodyUnit: func(b *resolveBody) string { return b.BusinessUnitID }, IfMatch: httpapi.IfMatchRequired, Operator: "change",
			Body: httpapi.BodyRequired, ETag: func(f feeOut) int64 { return f.Revision },
			Call: func(ctx context.Context, in *httpapi.In[resolveBody]) (feeOut, error) {
				t, err := h.s.ResolveFee(ctx, budget.ResolveRequest{BusinessUnitID: in.Unit, OrderID: in.Path("orderId"),
					Status: in.Body.Status, ExpectedRevision: in.Version, Operator: in.Operator, Reason: in.Body.Reason})
				return toFee(t), err
			}},
		httpapi.Endpoint[struct{}, httpapi.Page[waitingOut]]{Method: "GET", Path: PathWaiting, Unit: httpapi.UnitQuery,
			Paging: &httpapi.Paging{Default: DefaultPage, Max: MaxPage, LimitOnly: true}, Call: h.waiting},
	}
}

type handlers struct{ s *budget.Service }

type budgetBody struct {
	Currency string          `json:"currency"`
	MaxCost  json.RawMessage `json:"maxCost"`
	Reason   string          `json:"reason"`
}

func (h handlers) putBudget(ctx context.Context, in *httpapi.In[budgetBody]) (budget.View, error) {
	maxCost, err := money.ParseMinorJSON("maxCost", in.Body.MaxCost, false)
	if err != nil {
		return budget.View{}, err
	}
	b := budget.BudgetInput{Currency: in.Body.Currency, MaxCost: maxCost, Reason: in.Body.Reason}
	if in.VersionGiven {
		return h.s.SetMaxCost(ctx, in.Unit, in.Path("campaignId"), b, in.Version, in.Operator)
	}
	in.Status = http.StatusCreated
	return h.s.CreateBudget(ctx, in.Unit, in.Path("campaignId"), b, in.Operator)
}

type reasonBody struct {
	Reason string `json:"reason"`
}

type costsAnswer struct {
	BusinessUnitID string                `json:"businessUnitId"`
	CampaignID     string                `json:"campaignId"`
	From           string                `json:"from"`
	To             string                `json:"to"`
	Days           []store.FeeDayCost    `json:"days"`
	Total          money.Minor           `json:"total"`
	Reconciliation budget.Reconciliation `json:"reconciliation"`
	// FreshTo is how fresh the answer is (UTC): the instant of the read, from the service's
	// clock, taken before any row is read. days, total and reconciliation read live rows
	// (the fee projection keeps no instant of its own), so every fact applied by then is in
	// them; one applied during the read may be too.
	FreshTo time.Time `json:"freshTo"`
}

func day(q httpapi.Query, name string) (time.Time, error) {
	v := q.String(name)
	d, err := time.Parse("2006-01-02", v)
	if err != nil {
		return time.Time{}, automation.Invalid(name, "%q is not a date YYYY-MM-DD", v)
	}
	return d, nil
}

func (h handlers) costs(ctx context.Context, in *httpapi.In[struct{}]) (costsAnswer, error) {
	from, ferr := day(in.Query, "from")
	to, terr := day(in.Query, "to")
	if err := automation.InvalidFields(ferr, terr); err != nil {
		return costsAnswer{}, err
	}
	if to.Before(from) || to.Sub(from) > MaxCostDays*24*time.Hour {
		return costsAnswer{}, automation.Invalid("to", "must be on or after from and at most %d days later", MaxCostDays)
	}
	bu, campaign := in.Unit, in.Path("campaignId")
	read := h.s.Clock.Now().UTC()
	rec, err := h.s.Reconcile3(ctx, bu, campaign)
	if err != nil {
		return costsAnswer{}, err
	}
	days, err := h.s.Store.FeeCostByDay(ctx, bu, campaign, from.Format("2006-01-02"), to.Format("2006-01-02"))
	if err != nil {
		return costsAnswer{}, err
	}
	out := costsAnswer{BusinessUnitID: bu, CampaignID: campaign, From: from.Format("2006-01-02"), To: to.Format("2006-01-02"),
		Days: append([]store.FeeDayCost{}, days...), Reconciliation: rec, FreshTo: read}
	for _, d := range days {
		out.Total += money.Minor(d.Cost)
	}
	return out, nil
}

// policyOut is a price policy as the API shows it: its unit and action type, the policy's
// members as budget.PolicyInput names them (inlined, in that order), and its version.
type policyOut struct {
	BusinessUnitID string `json:"businessUnitId"`
	ActionType     string `json:"actionType"`
	budget.PolicyInput
	Version   int64     `json:"version"`
	UpdatedOn time.Time `json:"updatedOn"`
	UpdatedBy string    `json:"updatedBy,omitempty"`
}

func toPolicy(p store.PricePolicy) policyOut {
	return policyOut{BusinessUnitID: p.BusinessUnitID, ActionType: p.ActionType, PolicyInput: budget.PolicyInput{Formula: p.Formula, Rate: p.Rate,
		Unit: p.Unit, TransferType: p.TransferType, Currency: p.Currency, MinFee: money.Minor(p.MinFee), MaxFee: money.Minor(p.MaxFee),
		ConvertTo: p.ConvertTo, ConversionRate: p.ConversionRate}, Version: p.Version, UpdatedOn: p.UpdatedOn, UpdatedBy: p.UpdatedBy}
}

func (h handlers) listPolicies(ctx context.Context, in *httpapi.In[struct{}]) (httpapi.Page[policyOut], error) {
	ps, err := h.s.Store.PricePolicyList(ctx, in.Unit)
	if err != nil {
		return httpapi.Page[policyOut]{}, err
	}
	items := make([]policyOut, 0, len(ps))
	for _, p := range ps {
		items = append(items, toPolicy(p))
	}
	return httpapi.PageOf(items), nil
}

// policyBody is the PUT body: the domain's budget.PolicyInput, whose two fee members are
// read here as sent (these shallower fields hide the embedded ones), so that a bad fee is a
// 422 naming it among the policy's other errors rather than a decoding error of its own.
type policyBody struct {
	budget.PolicyInput
	MinFee json.RawMessage `json:"minFee"`
	MaxFee json.RawMessage `json:"maxFee"`
}

func (h handlers) putPolicy(ctx context.Context, in *httpapi.In[policyBody]) (policyOut, error) {
	p := in.Body.PolicyInput
	var merr, xerr error
	p.MinFee, merr = money.ParseMinorJSON("minFee", in.Body.MinFee, true)
	p.MaxFee, xerr = money.ParseMinorJSON("maxFee", in.Body.MaxFee, true)
	if err := automation.InvalidFields(merr, xerr); err != nil {
		return policyOut{}, err
	}
	stored, err := h.s.PutPolicy(ctx, in.Unit, in.Path("actionType"), p, in.Version, in.Operator)
	if !in.VersionGiven {
		in.Status = http.StatusCreated
	}
	return toPolicy(stored), err
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

func (h handlers) listUnknown(ctx context.Context, in *httpapi.In[struct{}]) (httpapi.Page[feeOut], error) {
	return httpapi.ReadPage(in, "fees-unknown:"+in.Unit, func(after int64, n int) ([]store.FeeTransfer, error) {
		return h.s.UnknownFees(ctx, in.Unit, after, n)
	}, func(t store.FeeTransfer) int64 { return t.ID }, func(t store.FeeTransfer) (feeOut, error) { return toFee(t), nil })
}

type resolveBody struct {
	BusinessUnitID string `json:"businessUnitId"`
	Status         string `json:"status"`
	Reason         string `json:"reason"`
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

func (h handlers) waiting(ctx context.Context, in *httpapi.In[struct{}]) (httpapi.Page[waitingOut], error) {
	list, err := h.s.Waiting(ctx, in.Unit, in.Limit)
	if err != nil {
		return httpapi.Page[waitingOut]{}, err
	}
	items := make([]waitingOut, 0, len(list))
	for _, x := range list {
		items = append(items, waitingOut{CommandID: x.CommandID, BusinessUnitID: x.BusinessUnitID, CampaignID: x.CampaignID, Reason: x.Reason,
			Amount: money.Minor(x.Amount), Currency: x.Currency, Since: x.Since})
	}
	return httpapi.PageOf(items), nil
}
