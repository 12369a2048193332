// Package supportapi is the support API's HTTP surface (function SupportApi, route
// support/{*path}; docs/operations.md#support-api): thin handlers that decode a request, call one
// shared/support method and encode its answer. Authentication, business-unit scope, the
// operator's name, Idempotency-Key and RFC 9457 problem details come from shared/httpapi.
//
//	GET  /api/support/scheduler-rows                 find: schedulerKey, sourceType+sourceGuid,
//	                                                 businessUnitId, status, onHold,
//	                                                 scheduledFrom, scheduledTo, limit, cursor
//	GET  /api/support/scheduler-rows/{id}            one row (Id or Guid): attempts, audit,
//	                                                 deliveries, diagnostics; ETag = Version
//	POST /api/support/scheduler-rows/{id}/release    release its support hold   ┐ If-Match,
//	POST /api/support/scheduler-rows/{id}/retry      retry now / support retry  │ operator,
//	POST /api/support/scheduler-rows/{id}/cancel     cancel                     │ {"reason"}
//	POST /api/support/scheduler-rows/{id}/run-now    make a Pending row due now ┘
//	POST /api/support/releases                       paced release of a filtered set of holds
//	GET  /api/support/explain?sourceType=&sourceGuid=  why a source's reminders did (not) go out
//	GET  /api/support/metrics[?businessUnitId=]      pipeline health figures
//
// Register adds these routes to a funchost.Router; other packages register more routes
// under /api/support/ on the same router (the function's route covers the whole prefix).
package supportapi

import (
	"context"
	"net/http"
	"strings"

	"github.com/google/uuid"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/logctx"
	"github.com/automation-platform/automation/shared/support"
)

// FunctionName is the HTTP function (folder functions/SupportApi) serving the routes.
const FunctionName = "SupportApi"

// Prefix is the path every support route starts with.
const Prefix = "/api/support/"

// Register adds the support routes to r, wrapped by api (auth, scope, problems).
func Register(r *funchost.Router, api *httpapi.API, svc *support.Service) {
	h := handlers{svc: svc}
	route := func(pattern string, fn httpapi.HandlerFunc) { r.RegisterHTTP(pattern, logged(api.Handler(fn))) }
	route("GET "+Prefix+"scheduler-rows", h.find)
	route("GET "+Prefix+"scheduler-rows/{id}", h.get)
	route("POST "+Prefix+"scheduler-rows/{id}/release", h.act(svc.Release))
	route("POST "+Prefix+"scheduler-rows/{id}/retry", h.act(svc.Retry))
	route("POST "+Prefix+"scheduler-rows/{id}/cancel", h.act(svc.Cancel))
	route("POST "+Prefix+"scheduler-rows/{id}/run-now", h.act(svc.RunNow))
	route("POST "+Prefix+"releases", h.releaseMany)
	route("GET "+Prefix+"explain", h.explain)
	route("GET "+Prefix+"metrics", h.metrics)
}

// logged names the function and the host's invocation id in the request's logging context
// (a request id of our own when no Functions host forwarded the request).
func logged(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id := r.Header.Get(funchost.InvocationIDHeader)
		if id == "" { // serve: no Functions host in front; name the request for its log lines
			id = "req-" + uuid.NewString()
		}
		ctx := logctx.With(r.Context(), logctx.Function, FunctionName, logctx.InvocationID, id)
		h.ServeHTTP(w, r.WithContext(ctx))
	})
}

type handlers struct{ svc *support.Service }

// FindResponse is the body of a find. It is not an httpapi.Page: its published shape names
// the items "rows" and says their Order; its cursor is httpapi's all the same.
type FindResponse struct {
	Rows       []support.Row `json:"rows"`
	Order      string        `json:"order"`
	NextCursor string        `json:"nextCursor,omitempty"`
}

func (h handlers) find(w http.ResponseWriter, r *http.Request) error {
	raw := r.URL.Query()
	q := httpapi.NewQuery(raw)
	if err := q.Check("schedulerKey", "sourceType", "sourceGuid", "businessUnitId", "status", "onHold",
		"scheduledFrom", "scheduledTo", "limit", "cursor"); err != nil {
		return err
	}
	f := support.Filter{SchedulerKey: q.String("schedulerKey"), SourceType: q.String("sourceType"), SourceGuid: q.String("sourceGuid"),
		BusinessUnitID: q.String("businessUnitId"), Status: automation.Status(q.String("status"))}
	var err error
	if f.OnHold, err = q.Bool("onHold"); err != nil {
		return err
	}
	if f.ScheduledFrom, err = q.Time("scheduledFrom"); err != nil {
		return err
	}
	if f.ScheduledTo, err = q.Time("scheduledTo"); err != nil {
		return err
	}
	limit, err := q.Int("limit", 0, 1, h.svc.Config().MaxPageSize)
	if err != nil {
		return err
	}
	if err := f.Validate(); err != nil {
		return err
	}
	var after *support.Position
	if raw.Has("cursor") {
		var pos support.Position
		if err := httpapi.DecodeCursor(q.String("cursor"), f.Canonical(), &pos); err != nil {
			return err
		}
		after = &pos
	}
	page, err := h.svc.Find(r.Context(), httpapi.CallerFrom(r.Context()).Scope, f, after, limit)
	if err != nil {
		return err
	}
	resp := FindResponse{Rows: page.Rows, Order: page.Order}
	if page.Next != nil {
		if resp.NextCursor, err = httpapi.EncodeCursor(f.Canonical(), page.Next); err != nil {
			return err
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, resp)
	return nil
}

func (h handlers) get(w http.ResponseWriter, r *http.Request) error {
	if err := httpapi.NewQuery(r.URL.Query()).Check(); err != nil {
		return err
	}
	d, err := h.svc.Get(r.Context(), httpapi.CallerFrom(r.Context()).Scope, r.PathValue("id"))
	if err != nil {
		return err
	}
	httpapi.SetETag(w, d.Row.Version)
	httpapi.WriteJSON(w, http.StatusOK, d)
	return nil
}

// ActBody is the body of release, retry, cancel and run-now.
type ActBody struct {
	Reason string `json:"reason"`
}

// operator returns the caller's name for the audit: required (400 without it).
func operator(r *http.Request) (string, error) {
	op := httpapi.CallerFrom(r.Context()).Operator
	if strings.TrimSpace(op) == "" {
		return "", &automation.Error{Code: automation.CodeMalformed, Field: httpapi.HeaderOperator,
			Message: "is required: actions are audited with the operator's name (App Service authentication, or this header)"}
	}
	return op, nil
}

// actFunc is support.Service.Release, Retry, Cancel or RunNow.
type actFunc func(ctx context.Context, sc automation.Scope, req support.ActRequest) (support.ActResult, error)

// act decodes an action: the operator (400 without), If-Match (428 without, 412 stale), the
// reason in the body; nothing changes when any of it is wrong.
func (h handlers) act(fn actFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if err := httpapi.NewQuery(r.URL.Query()).Check(); err != nil {
			return err
		}
		op, err := operator(r)
		if err != nil {
			return err
		}
		version, _, err := httpapi.IfMatch(r, true)
		if err != nil {
			return err
		}
		var body ActBody
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		res, err := fn(r.Context(), httpapi.CallerFrom(r.Context()).Scope, support.ActRequest{Ref: r.PathValue("id"), IfMatch: version, Operator: op, Reason: body.Reason})
		if err != nil {
			return err
		}
		httpapi.SetETag(w, res.Row.Version)
		httpapi.WriteJSON(w, http.StatusOK, res)
		return nil
	}
}

// ReleaseBody is the body of POST /api/support/releases. RatePerMinute, BatchSize and
// MaxRows are optional: left out (or null) they take the configured defaults; given, they
// must be in range — 0 is refused (422), never read as "the default".
type ReleaseBody struct {
	Filter        support.ReleaseFilter `json:"filter"`
	Reason        string                `json:"reason"`
	RatePerMinute *int                  `json:"ratePerMinute,omitempty"`
	BatchSize     *int                  `json:"batchSize,omitempty"`
	MaxRows       *int                  `json:"maxRows,omitempty"`
}

// given refuses an explicit zero or negative value of an optional count and returns the
// value for the service (0: the default).
func given(field string, v *int) (int, error) {
	if v == nil {
		return 0, nil
	}
	if *v < 1 {
		return 0, automation.Invalid(field, "must be at least 1, got %d (leave it out for the default)", *v)
	}
	return *v, nil
}

func (h handlers) releaseMany(w http.ResponseWriter, r *http.Request) error {
	if err := httpapi.NewQuery(r.URL.Query()).Check(); err != nil {
		return err
	}
	op, err := operator(r)
	if err != nil {
		return err
	}
	var body ReleaseBody
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	rate, errRate := given("ratePerMinute", body.RatePerMinute)
	batch, errBatch := given("batchSize", body.BatchSize)
	maxRows, errMax := given("maxRows", body.MaxRows)
	if err := automation.InvalidFields(errRate, errBatch, errMax); err != nil {
		return err
	}
	req := support.ReleaseRequest{Filter: body.Filter, RatePerMinute: rate, BatchSize: batch,
		MaxRows: maxRows, Operator: op, Reason: body.Reason}
	if id, ok := httpapi.DeterministicID(r.Context(), "support-release"); ok {
		req.ID = "rel-" + id // a retried request (same Idempotency-Key) names the same release
	}
	res, err := h.svc.ReleaseMany(r.Context(), httpapi.CallerFrom(r.Context()).Scope, req)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, res)
	return nil
}

func (h handlers) explain(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("sourceType", "sourceGuid"); err != nil {
		return err
	}
	x, err := h.svc.Explain(r.Context(), httpapi.CallerFrom(r.Context()).Scope, q.String("sourceType"), q.String("sourceGuid"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, x)
	return nil
}

func (h handlers) metrics(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId"); err != nil {
		return err
	}
	m, err := h.svc.Metrics(r.Context(), httpapi.CallerFrom(r.Context()).Scope, q.String("businessUnitId"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, m)
	return nil
}
