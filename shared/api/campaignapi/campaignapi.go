// Package campaignapi manages campaigns over HTTP (the CampaignsApi function,
// docs/campaigns.md#http-api): thin adapters over campaign.Admin on shared/httpapi (problem
// details, strict JSON and query, ETag/If-Match, cursors, business-unit scope: a campaign of a
// unit the caller may not see answers 404). openapi.yaml documents every route.
//
//	GET  /api/campaigns?businessUnitId=bu-1[&limit&cursor]          → 200 {"items":[campaign…],"nextCursor"}
//	PUT  /api/campaigns/{campaignId}  {"businessUnitId", name, status, triggers, actions}
//	     no If-Match: create (201; 409 when it exists); If-Match "<version>": replace (200; 412)
//	     422 naming the member: unknown action type or provider, a cycle, parameters failing
//	     the action's schema — nothing is stored
//	GET  /api/campaigns/{campaignId}?businessUnitId=bu-1            → 200 campaign, ETag
//	POST /api/campaigns/{campaignId}/rerun?businessUnitId=bu-1      If-Match → 200 (a new runId)
//	GET  /api/campaigns/{campaignId}/counts?businessUnitId&from&to  → 200 {"days":[{localDate,byStatus}],"freshTo"}
//	GET  /api/campaigns/{campaignId}/executions?businessUnitId[&limit&cursor] → 200 {"items":[execution…],"nextCursor"}, newest first
//	GET  /api/campaigns/{campaignId}/unknown-commands?businessUnitId[&limit&cursor]
//	POST /api/campaigns/{campaignId}/unknown-commands/{commandId}/resolve   If-Match, operator
//	     {"businessUnitId","status":"SUCCEEDED"|"FAILED","reason","providerRef"}
//	GET  /api/campaigns/_metrics[?businessUnitId=bu-1]              → 200 Metrics (docs/campaigns.md#metrics)
package campaignapi

import (
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
type Registrar interface {
	RegisterHTTP(pattern string, h http.Handler)
}

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

// Register adds the routes to reg behind api.
func Register(reg Registrar, api *httpapi.API, a *campaign.Admin) {
	h := handlers{a: a}
	reg.RegisterHTTP("GET "+Prefix, api.Handler(h.list))
	reg.RegisterHTTP("GET "+Prefix+"/{campaignId}", api.Handler(h.get))
	reg.RegisterHTTP("PUT "+Prefix+"/{campaignId}", api.Handler(h.put))
	reg.RegisterHTTP("POST "+Prefix+"/{campaignId}/rerun", api.Handler(h.rerun))
	reg.RegisterHTTP("GET "+Prefix+"/{campaignId}/counts", api.Handler(h.counts))
	reg.RegisterHTTP("GET "+Prefix+"/{campaignId}/executions", api.Handler(h.executions))
	reg.RegisterHTTP("GET "+Prefix+"/{campaignId}/unknown-commands", api.Handler(h.unknown))
	reg.RegisterHTTP("POST "+Prefix+"/{campaignId}/unknown-commands/{commandId}/resolve", api.Handler(h.resolve))
	// A campaign id never starts with '_' (campaign.CheckID), so this path names no campaign.
	reg.RegisterHTTP("GET "+Prefix+"/_metrics", api.Handler(h.metrics))
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
func (h handlers) metrics(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId"); err != nil {
		return err
	}
	all := httpapi.CallerFrom(r.Context()).Scope.All()
	bu := q.String("businessUnitId")
	if _, given := r.URL.Query()["businessUnitId"]; given {
		if err := httpapi.RequireUnit(r, bu); err != nil {
			return err
		}
	} else if !all {
		return automation.Errorf(automation.CodeNotFound, "metrics of every business unit not found: name one with businessUnitId")
	}
	var providers *campaign.Providers
	if h.a.Catalog != nil {
		providers = h.a.Catalog.Providers
	}
	m, err := campaign.ReadMetrics(r.Context(), h.a.Store, h.a.Clock, providers, bu)
	if err != nil {
		return err
	}
	out := Metrics{At: m.At, BusinessUnitID: bu, CommandsWaiting: m.CommandsWaiting, CommandsUnknown: m.CommandsUnknown, CommandsPastLease: m.CommandsPastLease}
	if all {
		out.Outbox = &OutboxMetrics{Unsent: m.OutboxUnsent, OldestAgeSeconds: m.OutboxOldestAge.Seconds()}
		out.Providers = m.Providers
		if out.Providers == nil {
			out.Providers = []campaign.ProviderStats{}
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// scopedQuery checks the query's parameters (businessUnitId and allowed) and returns the unit.
func scopedQuery(r *http.Request, allowed ...string) (httpapi.Query, string, error) {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check(append([]string{"businessUnitId"}, allowed...)...); err != nil {
		return q, "", err
	}
	bu := q.String("businessUnitId")
	return q, bu, httpapi.RequireUnit(r, bu)
}

func writeCampaign(w http.ResponseWriter, status int, c store.Campaign) error {
	out, err := campaignOf(c)
	if err != nil {
		return err
	}
	httpapi.SetETag(w, c.Version)
	httpapi.WriteJSON(w, status, out)
	return nil
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	q, bu, err := scopedQuery(r, "limit", "cursor")
	if err != nil {
		return err
	}
	limit, err := q.Int("limit", 50, 1, 200)
	if err != nil {
		return err
	}
	cursorQuery := "campaigns:" + bu
	var after string
	if c := q.String("cursor"); c != "" {
		if err := httpapi.DecodeCursor(c, cursorQuery, &after); err != nil {
			return err
		}
	}
	cs, err := h.a.Store.CampaignList(r.Context(), bu, after, limit+1)
	if err != nil {
		return err
	}
	page, err := httpapi.PageAfter(cs, limit, cursorQuery, func(c store.Campaign) string { return c.CampaignID }, campaignOf)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
	return nil
}

func (h handlers) get(w http.ResponseWriter, r *http.Request) error {
	_, bu, err := scopedQuery(r)
	if err != nil {
		return err
	}
	if err := campaign.CheckID(r.PathValue("campaignId")); err != nil {
		return err
	}
	c, err := h.a.Store.CampaignGet(r.Context(), bu, r.PathValue("campaignId"))
	if err != nil {
		return err
	}
	return writeCampaign(w, http.StatusOK, c)
}

type putBody struct {
	BusinessUnitID string `json:"businessUnitId"`
	campaign.Definition
}

func (h handlers) put(w http.ResponseWriter, r *http.Request) error {
	v, given, err := httpapi.IfMatch(r, false)
	if err != nil {
		return err
	}
	if err := httpapi.NewQuery(r.URL.Query()).Check(); err != nil {
		return err
	}
	var b putBody
	if err := httpapi.DecodeJSON(r, &b); err != nil {
		return err
	}
	if err := httpapi.RequireUnit(r, b.BusinessUnitID); err != nil {
		return err
	}
	var expected *int64
	status := http.StatusCreated
	if given {
		expected, status = &v, http.StatusOK
	}
	c, err := h.a.Save(r.Context(), b.BusinessUnitID, r.PathValue("campaignId"), b.Definition, expected)
	if err != nil {
		return err
	}
	return writeCampaign(w, status, c)
}

func (h handlers) rerun(w http.ResponseWriter, r *http.Request) error {
	v, _, err := httpapi.IfMatch(r, true)
	if err != nil {
		return err
	}
	_, bu, err := scopedQuery(r)
	if err != nil {
		return err
	}
	if err := campaign.CheckID(r.PathValue("campaignId")); err != nil {
		return err
	}
	c, err := h.a.Rerun(r.Context(), bu, r.PathValue("campaignId"), v)
	if err != nil {
		return err
	}
	return writeCampaign(w, http.StatusOK, c)
}

type countsAnswer struct {
	BusinessUnitID string                    `json:"businessUnitId"`
	CampaignID     string                    `json:"campaignId"`
	From           string                    `json:"from"`
	To             string                    `json:"to"`
	Days           []store.CampaignDayCounts `json:"days"`
	FreshTo        *time.Time                `json:"freshTo"`
}

func (h handlers) counts(w http.ResponseWriter, r *http.Request) error {
	q, bu, err := scopedQuery(r, "from", "to")
	if err != nil {
		return err
	}
	id := r.PathValue("campaignId")
	if err := campaign.CheckID(id); err != nil {
		return err
	}
	from, ferr := time.Parse(time.DateOnly, q.String("from"))
	to, terr := time.Parse(time.DateOnly, q.String("to"))
	switch {
	case ferr != nil:
		return automation.Invalid("from", "a date YYYY-MM-DD is required")
	case terr != nil:
		return automation.Invalid("to", "a date YYYY-MM-DD is required")
	case to.Before(from) || to.Sub(from) > 366*24*time.Hour:
		return automation.Invalid("to", "must be from..from+366 days")
	}
	if _, err := h.a.Store.CampaignGet(r.Context(), bu, id); err != nil {
		return err
	}
	c, err := h.a.Store.CampaignCountsByDay(r.Context(), store.CampaignCountsParams{BusinessUnitID: bu, CampaignID: id, From: q.String("from"), To: q.String("to")})
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, countsAnswer{BusinessUnitID: bu, CampaignID: id, From: q.String("from"), To: q.String("to"), Days: c.Days, FreshTo: c.FreshTo})
	return nil
}

// executions answers a page of the campaign's executions, newest first (campaign.Admin.Executions);
// the cursor is the Id below which the next page starts, bound to the unit and the campaign.
func (h handlers) executions(w http.ResponseWriter, r *http.Request) error {
	q, bu, err := scopedQuery(r, "limit", "cursor")
	if err != nil {
		return err
	}
	id := r.PathValue("campaignId")
	limit, err := q.Int("limit", 50, 1, 200)
	if err != nil {
		return err
	}
	cursorQuery := "campaign-executions:" + bu + ":" + id
	var before int64
	if c := q.String("cursor"); c != "" {
		if err := httpapi.DecodeCursor(c, cursorQuery, &before); err != nil {
			return err
		}
	}
	es, err := h.a.Executions(r.Context(), bu, id, before, limit+1)
	if err != nil {
		return err
	}
	page, err := httpapi.PageAfter(es, limit, cursorQuery, func(e store.CampaignExecution) int64 { return e.ID }, executionOf)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
	return nil
}

func (h handlers) unknown(w http.ResponseWriter, r *http.Request) error {
	q, bu, err := scopedQuery(r, "limit", "cursor")
	if err != nil {
		return err
	}
	id := r.PathValue("campaignId")
	if err := campaign.CheckID(id); err != nil {
		return err
	}
	limit, err := q.Int("limit", 50, 1, 200)
	if err != nil {
		return err
	}
	cursorQuery := "campaign-unknown:" + bu + ":" + id
	var after int64
	if c := q.String("cursor"); c != "" {
		if err := httpapi.DecodeCursor(c, cursorQuery, &after); err != nil {
			return err
		}
	}
	if _, err := h.a.Store.CampaignGet(r.Context(), bu, id); err != nil {
		return err
	}
	cs, err := h.a.Store.CampaignListUnknown(r.Context(), bu, id, after, limit+1)
	if err != nil {
		return err
	}
	page, err := httpapi.PageAfter(cs, limit, cursorQuery, func(c store.CampaignCommand) int64 { return c.ID },
		func(c store.CampaignCommand) (Command, error) { return commandOf(c), nil })
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
	ProviderRef    string `json:"providerRef,omitempty"`
}

func (h handlers) resolve(w http.ResponseWriter, r *http.Request) error {
	v, _, err := httpapi.IfMatch(r, true)
	if err != nil {
		return err
	}
	if err := httpapi.NewQuery(r.URL.Query()).Check(); err != nil {
		return err
	}
	var b resolveBody
	if err := httpapi.DecodeJSON(r, &b); err != nil {
		return err
	}
	if err := httpapi.RequireUnit(r, b.BusinessUnitID); err != nil {
		return err
	}
	op, err := httpapi.RequireOperator(r, "resolution")
	if err != nil {
		return err
	}
	if strings.TrimSpace(b.Reason) == "" {
		return automation.Invalid("reason", "is required")
	}
	c, err := h.a.ResolveIn(r.Context(), b.BusinessUnitID, r.PathValue("campaignId"), store.CampaignResolveParams{CommandID: r.PathValue("commandId"),
		ExpectedVersion: v, Status: store.CommandStatus(b.Status), Operator: op, Reason: b.Reason, ProviderRef: b.ProviderRef})
	if err != nil {
		return err
	}
	httpapi.SetETag(w, c.Version)
	httpapi.WriteJSON(w, http.StatusOK, commandOf(c))
	return nil
}
