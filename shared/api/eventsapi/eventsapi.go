package eventsapi

import (
	"context"
	_ "embed" // openapi.yaml
	"net/http"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/deadletter"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of these routes (YAML); a test checks it against
// the router in both directions and validates real calls with it.
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

// Path is the ingest route; MetricsPath the gateway's metrics.
const (
	Path        = "/api/events"
	MetricsPath = "/api/events/metrics"
)

// MaxBodyBytes bounds a request: 500 events of at most gateway.DefaultMaxDataBytes of data.
const MaxBodyBytes = 17 << 20

// Response is the answer of POST /api/events: one result per event, in request order.
type Response struct {
	Results []gateway.Result `json:"results"`
}

// Deps are what the routes call.
type Deps struct {
	Service *gateway.Service
	Store   store.GatewayStore
	// Backlog, when set, is the backpressure gate (docs/gateway.md#backpressure): ingest
	// asks it before decoding, and answers 503 with Retry-After when it refuses; nothing of
	// the request is written.
	Backlog *delivery.Backlog
	// DeadLetters, when set, adds the dead-letter counts per route to the metrics.
	DeadLetters *deadletter.Service
	// Charge, when set, counts a decoded request's events against the caller's ingest quota
	// (quota.Quotas.ChargeIngest: a batch of 500 counts 500) before anything is written; its
	// error (429 with Retry-After) refuses the whole request.
	Charge func(ctx context.Context, events int) error
}

// Register adds the routes to r behind api (its MaxBodyBytes should be MaxBodyBytes).
func Register(r *funchost.Router, api *httpapi.API, d Deps) {
	httpapi.Mount(r, api, Routes(d)...)
}

// Routes declares the routes over d (the zero Deps: the declarations only, for checks).
// Ingest reads its body itself (CloudEvents binary, structured or batch mode): a Raw route.
func Routes(d Deps) []httpapi.Route {
	return []httpapi.Route{
		httpapi.Raw{Method: "POST", Path: Path, Body: true, Handler: d.ingest},
		httpapi.Endpoint[struct{}, MetricsResponse]{Method: "GET", Path: MetricsPath, Query: []string{"businessUnitId"}, Call: d.metrics},
	}
}

// ingest: 200 with the results of a batch (each accepted, duplicate or rejected); for a
// single event (binary or structured mode) 200 when accepted or a duplicate, 422 naming
// the member when rejected, 404 when its business unit is outside the caller's scope (like
// an unknown one). 413 for a batch over 500 events, 400 for a batch that is not a JSON array,
// 415 for a media type other than the CloudEvents and JSON types (strictjson.MediaType).
//
// 429 with Retry-After (nothing written) when the caller's API key has used up its ingest
// quota (Deps.Charge), counted in events.
//
// 503 with Retry-After (problem details, nothing written) while the backpressure gate
// refuses: the send is to be repeated later, with the same event ids.
func (d Deps) ingest(w http.ResponseWriter, r *http.Request) error {
	if err := d.Backlog.Admit(r.Context()); err != nil {
		return err
	}
	body, err := httpapi.ReadBody(r)
	if err != nil {
		return err
	}
	mode, raws, err := events.DecodeHTTP(r.Context(), r.Header, body)
	if err != nil {
		return err
	}
	if d.Charge != nil {
		if err := d.Charge(r.Context(), len(raws)); err != nil {
			return err
		}
	}
	results, err := d.Service.Ingest(r.Context(), httpapi.CallerFrom(r.Context()).Scope, raws)
	if err != nil {
		return err
	}
	if mode != events.ModeBatch && len(results) == 1 && results[0].Status == gateway.StatusRejected {
		res := results[0]
		if res.Pointer == "/businessunitid" && strings.Contains(res.Reason, "not found") {
			return automation.Errorf(automation.CodeNotFound, "%s", res.Reason)
		}
		field := res.Pointer
		if field == "" {
			field = "/"
		}
		return automation.Invalid(field, "%s", res.Reason)
	}
	httpapi.WriteJSON(w, http.StatusOK, Response{Results: results})
	return nil
}

// MetricsResponse is the answer of GET /api/events/metrics.
type MetricsResponse struct {
	// AsOf is when the snapshot was read (UTC, the injected clock, taken before any count
	// is read; docs/api-conventions.md#freshness-of-report-answers).
	AsOf time.Time `json:"asOf"`
	// RegistrySeq is the registry's save sequence in force in this process (the highest
	// save it loaded; it moves when any type is saved); EventTypes how many types it holds.
	// Each count's registryVersion is the version of that type's definition in force — the
	// one meaning registryVersion has everywhere (an ingest result's is the version that
	// routed the event).
	RegistrySeq int64               `json:"registrySeq"`
	EventTypes  int                 `json:"eventTypes"`
	Counts      []gateway.TypeCount `json:"counts"`
	// OutboxLag is platform-wide: only shown to callers that see every business unit.
	OutboxLag []Lag `json:"outboxLag,omitempty"`
	// Backpressure is the ingest gate's state and counters (platform-wide, like OutboxLag:
	// only for callers that see every business unit; omitted when the gate is off).
	Backpressure *delivery.BacklogStats `json:"backpressure,omitempty"`
	// DeadLetters counts, per route, the messages given up on after they were accepted
	// (those of the units the caller sees; GET /api/support/dead-letters lists them).
	// Omitted when the bus does not list its dead letters here.
	DeadLetters []deadletter.Count `json:"deadLetters,omitempty"`
}

// Lag is one gateway topic's unpublished backlog.
type Lag struct {
	Topic            string  `json:"topic"`
	Unpublished      int     `json:"unpublished"`
	OldestAgeSeconds float64 `json:"oldestAgeSeconds"`
}

func (d Deps) metrics(ctx context.Context, in *httpapi.In[struct{}]) (MetricsResponse, error) {
	scope := httpapi.CallerFrom(ctx).Scope
	if bu := in.Query.String("businessUnitId"); bu != "" {
		if !scope.Allows(bu) {
			return MetricsResponse{}, automation.Errorf(automation.CodeNotFound, "business unit %q not found", bu)
		}
		// A unit that does not exist answers 404 too, not an empty 200 (issue 33, item 2).
		if err := httpapi.UnitStored(ctx, d.Store, bu); err != nil {
			return MetricsResponse{}, err
		}
		scope = automation.BusinessUnits(bu)
	}
	asOf := d.Service.Clock.Now().UTC()
	m, err := d.Service.ReadMetrics(ctx, scope)
	if err != nil {
		return MetricsResponse{}, err
	}
	out := MetricsResponse{AsOf: asOf, RegistrySeq: m.RegistrySeq, EventTypes: m.EventTypes, Counts: m.Counts}
	for _, l := range m.Lags {
		out.OutboxLag = append(out.OutboxLag, Lag{Topic: l.Topic, Unpublished: l.Unpublished, OldestAgeSeconds: l.OldestAgeSeconds})
	}
	if d.Backlog != nil && d.Backlog.Max > 0 && scope.All() {
		st := d.Backlog.Stats()
		out.Backpressure = &st
	}
	if d.DeadLetters != nil && d.DeadLetters.Box != nil {
		counts, err := d.DeadLetters.Counts(ctx, scope)
		if err != nil {
			return MetricsResponse{}, err
		}
		out.DeadLetters = counts
	}
	return out, nil
}
