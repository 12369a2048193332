package campaignapi

import (
	"context"
	_ "embed" // openapi.yaml
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of these routes (YAML).
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

// Prefix of every route.
const Prefix = "/api/campaigns"

// Registrar is where routes go: funchost.Router.RegisterHTTP.
type Registrar = httpapi.Registrar

// Campaign is a campaign as the API shows it.
type Campaign struct {
	BusinessUnitID string `json:"businessUnitId"`
	CampaignID     string `json:"campaignId"`
	RunID          string `json:"runId"`
	campaign.Definition
	Version   int64     `json:"version"`
	CreatedOn time.Time `json:"createdOn"`
	UpdatedOn time.Time `json:"updatedOn"`
}

func campaignOf(c store.Campaign) (Campaign, error) {
	out := Campaign{BusinessUnitID: c.BusinessUnitID, CampaignID: c.CampaignID, RunID: c.RunID, Version: c.Version, CreatedOn: c.CreatedOn, UpdatedOn: c.UpdatedOn}
	err := json.Unmarshal([]byte(c.DefinitionJSON), &out.Definition)
	return out, err
}

// Command is a command on the manual-resolution queue.
type Command struct {
	CommandID   string    `json:"commandId"`
	EffectKey   string    `json:"effectKey"`
	ExecutionID string    `json:"executionId"`
	CampaignID  string    `json:"campaignId"`
	RecipientID string    `json:"recipientId"`
	ActionIndex int       `json:"actionIndex"`
	ActionType  string    `json:"actionType"`
	Provider    string    `json:"provider"`
	Status      string    `json:"status"`
	ProviderRef string    `json:"providerRef,omitempty"`
	LastError   string    `json:"lastError,omitempty"`
	ResolvedBy  string    `json:"resolvedBy,omitempty"`
	Version     int64     `json:"version"`
	UpdatedOn   time.Time `json:"updatedOn"`
}

func commandOf(c store.CampaignCommand) Command {
	return Command{CommandID: c.CommandID, EffectKey: c.EffectKey, ExecutionID: c.ExecutionID, CampaignID: c.CampaignID, RecipientID: c.RecipientID,
		ActionIndex: c.ActionIndex, ActionType: c.ActionType, Provider: c.Provider, Status: string(c.Status), ProviderRef: c.ProviderRef,
		LastError: c.LastError, ResolvedBy: c.ResolvedBy, Version: c.Version, UpdatedOn: c.UpdatedOn}
}

// Execution is one recipient's run of a campaign as the API shows it (its definition
// snapshot left out: GET /api/campaigns/{campaignId} gives the campaign's).
type Execution struct {
	BusinessUnitID string    `json:"businessUnitId"`
	ExecutionID    string    `json:"executionId"`
	CampaignID     string    `json:"campaignId"`
	RunID          string    `json:"runId"`
	RecipientID    string    `json:"recipientId"`
	SourceEventID  string    `json:"sourceEventId"`
	LocalDate      string    `json:"localDate"` // the unit's local day the execution started, YYYY-MM-DD
	Status         string    `json:"status"`
	CurrentIndex   int       `json:"currentIndex"` // the action index whose command the chain waits for
	Version        int64     `json:"version"`
	CreatedOn      time.Time `json:"createdOn"`
	UpdatedOn      time.Time `json:"updatedOn"`
}

func executionOf(e store.CampaignExecution) (Execution, error) {
	return Execution{BusinessUnitID: e.BusinessUnitID, ExecutionID: e.ExecutionID, CampaignID: e.CampaignID, RunID: e.RunID, RecipientID: e.RecipientID,
		SourceEventID: e.SourceEventID, LocalDate: e.LocalDate, Status: string(e.Status), CurrentIndex: e.CurrentIndex, Version: e.Version,
		CreatedOn: e.CreatedOn, UpdatedOn: e.UpdatedOn}, nil
}

type handlers struct{ a *campaign.Admin }

// Register adds the routes to reg.
func Register(reg Registrar, api *httpapi.API, a *campaign.Admin) {
	httpapi.Mount(reg, api, Routes(a)...)
}

// Routes declares the routes over a (nil a: the declarations only, for checks).
func Routes(a *campaign.Admin) []httpapi.Route {
	h := handlers{a: a}
	page := &httpapi.Paging{Default: 50, Max: 200}
	tag := func(c Campaign) int64 { return c.Version }
	return []httpapi.Route{
		httpapi.Endpoint[struct{}, httpapi.Page[Campaign]]{Method: "GET", Path: Prefix, Unit: httpapi.UnitQuery, Paging: page, Call: h.list},
		httpapi.Endpoint[struct{}, Campaign]{Method: "GET", Path: Prefix + "/{campaignId}", Unit: httpapi.UnitQuery, ETag: tag, Call: h.get},
		httpapi.Endpoint[putBody, Campaign]{Method: "PUT", Path: Prefix + "/{campaignId}", Unit: httpapi.UnitBody,
			BodyUnit: func(b *putBody) string { return b.BusinessUnitID }, IfMatch: httpapi.IfMatchOptional, Body: httpapi.BodyRequired,
			Status: http.StatusCreated, Also: []int{http.StatusOK}, ETag: tag, Call: h.put},
		httpapi.Endpoint[struct{}, Campaign]{Method: "POST", Path: Prefix + "/{campaignId}/rerun", Unit: httpapi.UnitQuery,
			IfMatch: httpapi.IfMatchRequired, ETag: tag, Call: h.rerun},
		httpapi.Endpoint[struct{}, countsAnswer]{Method: "GET", Path: Prefix + "/{campaignId}/counts", Unit: httpapi.UnitQuery,
			Query: []string{"from", "to"}, Call: h.counts},
		httpapi.Endpoint[struct{}, httpapi.Page[Execution]]{Method: "GET", Path: Prefix + "/{campaignId}/executions", Unit: httpapi.UnitQuery,
			Paging: page, Call: h.executions},
		httpapi.Endpoint[struct{}, httpapi.Page[Command]]{Method: "GET", Path: Prefix + "/{campaignId}/unknown-commands", Unit: httpapi.UnitQuery,
			Paging: page, Call: h.unknown},
		httpapi.Endpoint[resolveBody, Command]{Method: "POST", Path: Prefix + "/{campaignId}/unknown-commands/{commandId}/resolve",
			Unit: httpapi.UnitBody, BodyUnit: func(b *resolveBody) string { return b.BusinessUnitID }, IfMatch: httpapi.IfMatchRequired,
			Operator: "resolution", Body: httpapi.BodyRequired, ETag: func(c Command) int64 { return c.Version }, Call: h.resolve},
		// A campaign id never starts with '_' (campaign.CheckID), so this path names no campaign.
		httpapi.Endpoint[struct{}, Metrics]{Method: "GET", Path: Prefix + "/_metrics", Query: []string{"businessUnitId"}, Call: h.metrics},
	}
}

// Metrics is GET /api/campaigns/_metrics: the command gauges of the unit asked for (or of
// every unit), and — for a caller whose scope is every business unit only, since they are
// shared by all units — the outbox and the per-provider counters since the process started.
type Metrics struct {
	At             time.Time `json:"at"`
	BusinessUnitID string    `json:"businessUnitId,omitempty"` // "" = every unit
	// CommandsWaiting are QUEUED commands, CommandsUnknown UNKNOWN ones, CommandsPastLease
	// RUNNING ones whose lease expired (a worker died).
	CommandsWaiting   int                      `json:"commandsWaiting"`
	CommandsUnknown   int                      `json:"commandsUnknown"`
	CommandsPastLease int                      `json:"commandsPastLease"`
	Outbox            *OutboxMetrics           `json:"outbox,omitempty"`
	Providers         []campaign.ProviderStats `json:"providers,omitempty"`
}

// OutboxMetrics are the platform's unpublished outbox rows and the oldest one's age.
type OutboxMetrics struct {
	Unsent           int     `json:"unsent"`
	OldestAgeSeconds float64 `json:"oldestAgeSeconds"`
}

// metrics answers the gauges. Without businessUnitId the caller must see every unit (else
// 404, like any unit it may not see); with one, the unit must be in scope.
func (h handlers) metrics(ctx context.Context, in *httpapi.In[struct{}]) (Metrics, error) {
	all := httpapi.CallerFrom(ctx).Scope.All()
	bu := in.Query.String("businessUnitId")
	if _, given := in.Request.URL.Query()["businessUnitId"]; given {
		if err := httpapi.RequireUnit(in.Request, bu); err != nil {
			return Metrics{}, err
		}
	} else if !all {
		return Metrics{}, automation.Errorf(automation.CodeNotFound, "metrics of every business unit not found: name one with businessUnitId")
	}
	var providers *campaign.Providers
	if h.a.Catalog != nil {
		providers = h.a.Catalog.Providers
	}
	m, err := campaign.ReadMetrics(ctx, h.a.Store, h.a.Clock, providers, bu)
	if err != nil {
		return Metrics{}, err
	}
	out := Metrics{At: m.At, BusinessUnitID: bu, CommandsWaiting: m.CommandsWaiting, CommandsUnknown: m.CommandsUnknown, CommandsPastLease: m.CommandsPastLease}
	if all {
		out.Outbox = &OutboxMetrics{Unsent: m.OutboxUnsent, OldestAgeSeconds: m.OutboxOldestAge.Seconds()}
		out.Providers = m.Providers
		if out.Providers == nil {
			out.Providers = []campaign.ProviderStats{}
		}
	}
	return out, nil
}

func (h handlers) list(ctx context.Context, in *httpapi.In[struct{}]) (httpapi.Page[Campaign], error) {
	return httpapi.ReadPage(in, "campaigns:"+in.Unit, func(after string, n int) ([]store.Campaign, error) {
		return h.a.Store.CampaignList(ctx, in.Unit, after, n)
	}, func(c store.Campaign) string { return c.CampaignID }, campaignOf)
}

func (h handlers) get(ctx context.Context, in *httpapi.In[struct{}]) (Campaign, error) {
	if err := campaign.CheckID(in.Path("campaignId")); err != nil {
		return Campaign{}, err
	}
	c, err := h.a.Store.CampaignGet(ctx, in.Unit, in.Path("campaignId"))
	if err != nil {
		return Campaign{}, err
	}
	return campaignOf(c)
}

type putBody struct {
	BusinessUnitID string `json:"businessUnitId"`
	campaign.Definition
}

func (h handlers) put(ctx context.Context, in *httpapi.In[putBody]) (Campaign, error) {
	var expected *int64
	if in.VersionGiven {
		expected, in.Status = &in.Version, http.StatusOK
	}
	c, err := h.a.SaveBy(ctx, in.Unit, in.Path("campaignId"), in.Body.Definition, expected, httpapi.CallerFrom(ctx).Operator)
	if err != nil {
		return Campaign{}, err
	}
	return campaignOf(c)
}

func (h handlers) rerun(ctx context.Context, in *httpapi.In[struct{}]) (Campaign, error) {
	if err := campaign.CheckID(in.Path("campaignId")); err != nil {
		return Campaign{}, err
	}
	c, err := h.a.Rerun(ctx, in.Unit, in.Path("campaignId"), in.Version, httpapi.CallerFrom(ctx).Operator)
	if err != nil {
		return Campaign{}, err
	}
	return campaignOf(c)
}

type countsAnswer struct {
	BusinessUnitID string                    `json:"businessUnitId"`
	CampaignID     string                    `json:"campaignId"`
	From           string                    `json:"from"`
	To             string                    `json:"to"`
	Days           []store.CampaignDayCounts `json:"days"`
	FreshTo        *time.Time                `json:"freshTo"`
}

func (h handlers) counts(ctx context.Context, in *httpapi.In[struct{}]) (countsAnswer, error) {
	bu, id, q := in.Unit, in.Path("campaignId"), in.Query
	if err := campaign.CheckID(id); err != nil {
		return countsAnswer{}, err
	}
	from, ferr := time.Parse(time.DateOnly, q.String("from"))
	to, terr := time.Parse(time.DateOnly, q.String("to"))
	switch {
	case ferr != nil:
		return countsAnswer{}, automation.Invalid("from", "a date YYYY-MM-DD is required")
	case terr != nil:
		return countsAnswer{}, automation.Invalid("to", "a date YYYY-MM-DD is required")
	case to.Before(from) || to.Sub(from) > 366*24*time.Hour:
		return countsAnswer{}, automation.Invalid("to", "must be from..from+366 days")
	}
	if _, err := h.a.Store.CampaignGet(ctx, bu, id); err != nil {
		return countsAnswer{}, err
	}
	c, err := h.a.Store.CampaignCountsByDay(ctx, store.CampaignCountsParams{BusinessUnitID: bu, CampaignID: id, From: q.String("from"), To: q.String("to")})
	if err != nil {
		return countsAnswer{}, err
	}
	return countsAnswer{BusinessUnitID: bu, CampaignID: id, From: q.String("from"), To: q.String("to"), Days: c.Days, FreshTo: c.FreshTo}, nil
}

// executions answers a page of the campaign's executions, newest first (campaign.Admin.Executions);
// the cursor is the Id below which the next page starts, bound to the unit and the campaign.
func (h handlers) executions(ctx context.Context, in *httpapi.In[struct{}]) (httpapi.Page[Execution], error) {
	id := in.Path("campaignId")
	return httpapi.ReadPage(in, "campaign-executions:"+in.Unit+":"+id, func(before int64, n int) ([]store.CampaignExecution, error) {
		return h.a.Executions(ctx, in.Unit, id, before, n)
	}, func(e store.CampaignExecution) int64 { return e.ID }, executionOf)
}

func (h handlers) unknown(ctx context.Context, in *httpapi.In[struct{}]) (httpapi.Page[Command], error) {
	bu, id := in.Unit, in.Path("campaignId")
	if err := campaign.CheckID(id); err != nil {
		return httpapi.Page[Command]{}, err
	}
	// The campaign is read after the cursor: a bad cursor is 400 before an unknown campaign's 404.
	return httpapi.ReadPage(in, "campaign-unknown:"+bu+":"+id, func(after int64, n int) ([]store.CampaignCommand, error) {
		if _, err := h.a.Store.CampaignGet(ctx, bu, id); err != nil {
			return nil, err
		}
		return h.a.Store.CampaignListUnknown(ctx, bu, id, after, n)
	}, func(c store.CampaignCommand) int64 { return c.ID }, func(c store.CampaignCommand) (Command, error) { return commandOf(c), nil })
}

type resolveBody struct {
	BusinessUnitID string `json:"businessUnitId"`
	Status         string `json:"status"`
	Reason         string `json:"reason"`
	ProviderRef    string `json:"providerRef,omitempty"`
}

func (h handlers) resolve(ctx context.Context, in *httpapi.In[resolveBody]) (Command, error) {
	b := in.Body
	if strings.TrimSpace(b.Reason) == "" {
		return Command{}, automation.Invalid("reason", "is required")
	}
	c, err := h.a.ResolveIn(ctx, in.Unit, in.Path("campaignId"), store.CampaignResolveParams{CommandID: in.Path("commandId"),
		ExpectedVersion: in.Version, Status: store.CommandStatus(b.Status), Operator: in.Operator, Reason: b.Reason, ProviderRef: b.ProviderRef})
	if err != nil {
		return Command{}, err
	}
	return commandOf(c), nil
}
