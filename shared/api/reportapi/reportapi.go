// Package reportapi is the HTTP face of report subscriptions (docs/architecture.md#report-subscriptions): thin
// handlers that decode a request, call one report.Service method and answer with
// shared/httpapi (problem details, strict JSON and query strings, ETag/If-Match on Version,
// Idempotency-Key, cursors, the caller's business-unit scope - another business unit's
// resource is 404). Routes are served by two Azure Functions whose function.json routes
// cover them - ReportSubscriptionsApi (report-subscriptions/{*path}) and ReportRunsApi
// (report-runs/{*path}) - and by `serve` through the same funchost router. openapi.json
// documents them; a test keeps it and Routes in step.
package reportapi

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/report"
	"github.com/automation-platform/automation/shared/store"
)

// Function folder names (functions/<Name>/function.json).
const (
	SubscriptionsFunction = "ReportSubscriptionsApi"
	RunsFunction          = "ReportRunsApi"
)

// Route is one HTTP route: an http.ServeMux pattern and its handler.
type Route struct {
	Pattern string
	Handler httpapi.HandlerFunc
}

// Page sizes.
const (
	defaultLimit = 50
	maxLimit     = 200
)

// Routes returns every route of the report API.
func Routes(svc *report.Service) []Route {
	h := &handlers{svc: svc}
	return []Route{
		{"POST /api/report-subscriptions", h.create},
		{"GET /api/report-subscriptions", h.list},
		{"GET /api/report-subscriptions/{guid}", h.get},
		{"PUT /api/report-subscriptions/{guid}", h.put},
		{"DELETE /api/report-subscriptions/{guid}", h.delete},
		{"POST /api/report-subscriptions/{guid}/runs", h.runNow},
		{"GET /api/report-subscriptions/{guid}/automation-runs", h.runs},
		{"GET /api/report-subscriptions/{guid}/automation-runs/{runKeyHash}", h.runDetail},
		{"POST /api/report-subscriptions/{guid}/automation-runs/{runKeyHash}/retry", h.retry},
		{"GET /api/report-subscriptions/{guid}/shadow-comparison", h.shadow},
		{"GET /api/report-runs/failed", h.failed},
		{"GET /api/report-runs/{runKeyHash}/file", h.file},
		{"GET /api/report-runs/ownership", h.ownershipGet},
		{"POST /api/report-runs/ownership/acquire", h.ownershipAcquire},
		{"POST /api/report-runs/ownership/delivery-created", h.ownershipDelivered},
		{"POST /api/report-runs/ownership/release", h.ownershipRelease},
		{"GET /api/report-runs/rollout", h.rollouts},
		{"PUT /api/report-runs/rollout/business-units/{businessUnitId}", h.rolloutPut(store.RolloutBusinessUnit, "businessUnitId")},
		{"DELETE /api/report-runs/rollout/business-units/{businessUnitId}", h.rolloutDelete(store.RolloutBusinessUnit, "businessUnitId")},
		{"PUT /api/report-runs/rollout/subscriptions/{guid}", h.rolloutPut(store.RolloutSubscription, "guid")},
		{"DELETE /api/report-runs/rollout/subscriptions/{guid}", h.rolloutDelete(store.RolloutSubscription, "guid")},
	}
}

// Register serves Routes on r, each wrapped by api.
func Register(r *funchost.Router, api *httpapi.API, svc *report.Service) {
	for _, rt := range Routes(svc) {
		r.RegisterHTTP(rt.Pattern, api.Handler(rt.Handler))
	}
}

type handlers struct{ svc *report.Service }

func caller(r *http.Request) httpapi.Caller { return httpapi.CallerFrom(r.Context()) }

// newID is the id of a resource a POST creates: derived from the Idempotency-Key when the
// request has one (a retry finds the same resource), fresh otherwise.
func newID(r *http.Request, purpose string) string {
	if id, ok := httpapi.DeterministicID(r.Context(), purpose); ok {
		return id
	}
	return uuid.NewString()
}

func limitOf(q httpapi.Query) (int, error) { return q.Int("limit", defaultLimit, 1, maxLimit) }

// --- subscriptions ------------------------------------------------------------------

func (h *handlers) create(w http.ResponseWriter, r *http.Request) error {
	var in report.Input
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	v, err := h.svc.Create(r.Context(), caller(r).Scope, newID(r, "report-subscription"), in)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/api/report-subscriptions/"+v.Guid)
	httpapi.SetETag(w, v.Version)
	httpapi.WriteJSON(w, http.StatusCreated, v)
	return nil
}

// servePage answers one page of a list: the query may hold filters (besides cursor and
// limit), the cursor is bound to query (its filters), and fetch returns the items after pos
// with the next position (the zero value at the end).
func servePage[T any, P comparable](w http.ResponseWriter, r *http.Request, query string, filters []string,
	fetch func(ctx context.Context, pos P, limit int) ([]T, P, error)) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check(append([]string{"cursor", "limit"}, filters...)...); err != nil {
		return err
	}
	limit, err := limitOf(q)
	if err != nil {
		return err
	}
	var pos P
	if c := q.String("cursor"); c != "" {
		if err := httpapi.DecodeCursor(c, query, &pos); err != nil {
			return err
		}
	}
	items, next, err := fetch(r.Context(), pos, limit)
	if err != nil {
		return err
	}
	page, err := httpapi.NewPage(items, query, next)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
	return nil
}

func (h *handlers) list(w http.ResponseWriter, r *http.Request) error {
	bu := r.URL.Query().Get("businessUnitId")
	return servePage(w, r, "subscriptions:"+bu, []string{"businessUnitId"}, func(ctx context.Context, after string, limit int) ([]report.View, string, error) {
		return h.svc.List(ctx, caller(r).Scope, bu, after, limit)
	})
}

func (h *handlers) get(w http.ResponseWriter, r *http.Request) error {
	v, err := h.svc.Get(r.Context(), caller(r).Scope, r.PathValue("guid"))
	if err != nil {
		return err
	}
	httpapi.SetETag(w, v.Version)
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}

func ifMatch(r *http.Request, required bool) (*int64, error) {
	v, ok, err := httpapi.IfMatch(r, required)
	if err != nil || !ok {
		return nil, err
	}
	return &v, nil
}

func (h *handlers) put(w http.ResponseWriter, r *http.Request) error {
	m, err := ifMatch(r, false)
	if err != nil {
		return err
	}
	var in report.Input
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	v, created, err := h.svc.Put(r.Context(), caller(r).Scope, r.PathValue("guid"), in, m)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
		w.Header().Set("Location", "/api/report-subscriptions/"+v.Guid)
	}
	httpapi.SetETag(w, v.Version)
	httpapi.WriteJSON(w, status, v)
	return nil
}

func (h *handlers) delete(w http.ResponseWriter, r *http.Request) error {
	m, err := ifMatch(r, true)
	if err != nil {
		return err
	}
	if err := h.svc.Delete(r.Context(), caller(r).Scope, r.PathValue("guid"), m); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// --- runs ---------------------------------------------------------------------------

// optionalJSON decodes an optional JSON body: empty means the zero value.
func optionalJSON(r *http.Request, v any) error { return httpapi.DecodeOptionalJSON(r, v) }

func runLocation(v report.RunView) string {
	return "/api/report-subscriptions/" + v.SubscriptionGuid + "/automation-runs/" + v.RunKeyHash
}

func (h *handlers) runNow(w http.ResponseWriter, r *http.Request) error {
	var in report.RunNowInput
	if err := optionalJSON(r, &in); err != nil {
		return err
	}
	v, err := h.svc.RunNow(r.Context(), caller(r).Scope, r.PathValue("guid"), newID(r, "report-run"), in, caller(r).Operator)
	if err != nil {
		return err
	}
	w.Header().Set("Location", runLocation(v))
	httpapi.WriteJSON(w, http.StatusAccepted, v)
	return nil
}

func (h *handlers) runs(w http.ResponseWriter, r *http.Request) error {
	guid := r.PathValue("guid")
	return servePage(w, r, "runs:"+guid, nil, func(ctx context.Context, before int64, limit int) ([]report.RunView, int64, error) {
		return h.svc.Runs(ctx, caller(r).Scope, guid, before, limit)
	})
}

func (h *handlers) runDetail(w http.ResponseWriter, r *http.Request) error {
	d, err := h.svc.RunDetail(r.Context(), caller(r).Scope, r.PathValue("guid"), r.PathValue("runKeyHash"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, d)
	return nil
}

type retryInput struct {
	Reason string `json:"reason"`
}

func (h *handlers) retry(w http.ResponseWriter, r *http.Request) error {
	var in retryInput
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	v, err := h.svc.SupportRetry(r.Context(), caller(r).Scope, r.PathValue("guid"), r.PathValue("runKeyHash"),
		newID(r, "report-support-retry"), in.Reason, caller(r).Operator)
	if err != nil {
		return err
	}
	w.Header().Set("Location", runLocation(v))
	httpapi.WriteJSON(w, http.StatusAccepted, v)
	return nil
}

func (h *handlers) shadow(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("limit"); err != nil {
		return err
	}
	limit, err := limitOf(q)
	if err != nil {
		return err
	}
	c, err := h.svc.Shadow(r.Context(), caller(r).Scope, r.PathValue("guid"), limit)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, c)
	return nil
}

func (h *handlers) failed(w http.ResponseWriter, r *http.Request) error {
	bu := r.URL.Query().Get("businessUnitId")
	return servePage(w, r, "failed:"+bu, []string{"businessUnitId"}, func(ctx context.Context, after int64, limit int) ([]report.RunView, int64, error) {
		return h.svc.FailedRuns(ctx, caller(r).Scope, bu, after, limit)
	})
}

func (h *handlers) file(w http.ResponseWriter, r *http.Request) error {
	att, data, err := h.svc.File(r.Context(), caller(r).Scope, r.PathValue("runKeyHash"))
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", att.ContentType)
	w.Header().Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", att.FileName))
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("ETag", `"`+att.SHA256+`"`)
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
	return nil
}

// --- ownership (the old scheduler's side of the one-owner guard) ---------------------

type keyInput struct {
	SchedulerKey string `json:"schedulerKey"`
}

func (h *handlers) ownershipGet(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("schedulerKey"); err != nil {
		return err
	}
	if q.String("schedulerKey") == "" {
		return &automation.Error{Code: automation.CodeMalformed, Field: "schedulerKey", Message: "is required"}
	}
	a, err := h.svc.OldSchedulerCheck(r.Context(), caller(r).Scope, q.String("schedulerKey"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, a)
	return nil
}

func (h *handlers) ownershipAcquire(w http.ResponseWriter, r *http.Request) error {
	var in keyInput
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	a, err := h.svc.OldSchedulerAcquire(r.Context(), caller(r).Scope, in.SchedulerKey)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, a)
	return nil
}

func (h *handlers) ownershipDelivered(w http.ResponseWriter, r *http.Request) error {
	var in report.OldSchedulerFence
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	o, err := h.svc.OldSchedulerDeliveryCreated(r.Context(), caller(r).Scope, in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, o)
	return nil
}

func (h *handlers) ownershipRelease(w http.ResponseWriter, r *http.Request) error {
	var in report.OldSchedulerFence
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	if len(in.Coordinates) > 0 {
		return &automation.Error{Code: automation.CodeMalformed, Field: "coordinates", Message: "is not accepted by release"}
	}
	o, err := h.svc.OldSchedulerRelease(r.Context(), caller(r).Scope, in)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, o)
	return nil
}

// --- rollout ------------------------------------------------------------------------

type modeInput struct {
	Mode report.Mode `json:"mode"`
}

func (h *handlers) rollouts(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("limit"); err != nil {
		return err
	}
	limit, err := limitOf(q)
	if err != nil {
		return err
	}
	items, err := h.svc.ListRollouts(r.Context(), caller(r).Scope, limit)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, httpapi.PageOf(items))
	return nil
}

func (h *handlers) rolloutPut(scope store.ReportRolloutScope, param string) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var in modeInput
		if err := httpapi.DecodeJSON(r, &in); err != nil {
			return err
		}
		id := r.PathValue(param)
		if scope == store.RolloutSubscription {
			id = strings.ToLower(id)
		}
		out, err := h.svc.SetRollout(r.Context(), caller(r).Scope, scope, id, in.Mode, caller(r).Operator)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, out)
		return nil
	}
}

type rolloutRemoved struct {
	ScopeType store.ReportRolloutScope `json:"scopeType"`
	ScopeID   string                   `json:"scopeId"`
	Removed   bool                     `json:"removed"`
	Released  int                      `json:"released"`
	At        time.Time                `json:"at"`
}

func (h *handlers) rolloutDelete(scope store.ReportRolloutScope, param string) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id := r.PathValue(param)
		if scope == store.RolloutSubscription {
			id = strings.ToLower(id)
		}
		released, removed, err := h.svc.RemoveRollout(r.Context(), caller(r).Scope, scope, id, caller(r).Operator)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, rolloutRemoved{ScopeType: scope, ScopeID: id, Removed: removed, Released: released, At: h.svc.Now()})
		return nil
	}
}
