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

// Page sizes.
const (
	defaultLimit = 50
	maxLimit     = 200
)

// Routes returns every route of the report API (nil svc: the declarations only, for checks).
func Routes(svc *report.Service) []httpapi.Route {
	h := &handlers{svc: svc}
	const subs, runs = "/api/report-subscriptions", "/api/report-runs"
	page := &httpapi.Paging{Default: defaultLimit, Max: maxLimit}
	limitOnly := &httpapi.Paging{Default: defaultLimit, Max: maxLimit, LimitOnly: true}
	viewTag := func(v report.View) int64 { return v.Version }
	type none = struct{}
	return []httpapi.Route{
		httpapi.Endpoint[report.Input, report.View]{Method: "POST", Path: subs, QueryUnchecked: true, Body: httpapi.BodyRequired,
			Status: http.StatusCreated, ETag: viewTag, Call: h.create},
		httpapi.Endpoint[none, httpapi.Page[report.View]]{Method: "GET", Path: subs, Query: []string{"businessUnitId"}, Paging: page, Call: h.list},
		httpapi.Endpoint[none, report.View]{Method: "GET", Path: subs + "/{guid}", QueryUnchecked: true, ETag: viewTag,
			Call: func(ctx context.Context, in *httpapi.In[none]) (report.View, error) {
				return h.svc.Get(ctx, scope(ctx), in.Path("guid"))
			}},
		httpapi.Endpoint[report.Input, report.View]{Method: "PUT", Path: subs + "/{guid}", QueryUnchecked: true, IfMatch: httpapi.IfMatchOptional,
			Body: httpapi.BodyRequired, Also: []int{http.StatusCreated}, ETag: viewTag, Call: h.put},
		httpapi.Endpoint[none, none]{Method: "DELETE", Path: subs + "/{guid}", QueryUnchecked: true, IfMatch: httpapi.IfMatchRequired,
			Status: http.StatusNoContent, Call: func(ctx context.Context, in *httpapi.In[none]) (none, error) {
				return none{}, h.svc.DeleteBy(ctx, scope(ctx), in.Path("guid"), &in.Version, operator(ctx))
			}},
		httpapi.Endpoint[report.RunNowInput, report.RunView]{Method: "POST", Path: subs + "/{guid}/runs", QueryUnchecked: true,
			Body: httpapi.BodyOptional, Status: http.StatusAccepted, Call: h.runNow},
		httpapi.Endpoint[none, httpapi.Page[report.RunView]]{Method: "GET", Path: subs + "/{guid}/automation-runs", Paging: page, Call: h.runs},
		httpapi.Endpoint[none, report.RunDetail]{Method: "GET", Path: subs + "/{guid}/automation-runs/{runKeyHash}", QueryUnchecked: true,
			Call: func(ctx context.Context, in *httpapi.In[none]) (report.RunDetail, error) {
				return h.svc.RunDetail(ctx, scope(ctx), in.Path("guid"), in.Path("runKeyHash"))
			}},
		httpapi.Endpoint[retryInput, report.RunView]{Method: "POST", Path: subs + "/{guid}/automation-runs/{runKeyHash}/retry", QueryUnchecked: true,
			Body: httpapi.BodyRequired, Status: http.StatusAccepted, Call: h.retry},
		httpapi.Endpoint[none, report.ShadowComparison]{Method: "GET", Path: subs + "/{guid}/shadow-comparison", Paging: limitOnly,
			Call: func(ctx context.Context, in *httpapi.In[none]) (report.ShadowComparison, error) {
				return h.svc.Shadow(ctx, scope(ctx), in.Path("guid"), in.Limit)
			}},
		httpapi.Endpoint[none, httpapi.Page[report.RunView]]{Method: "GET", Path: runs + "/failed", Query: []string{"businessUnitId"}, Paging: page, Call: h.failed},
		httpapi.Raw{Method: "GET", Path: runs + "/{runKeyHash}/file", Handler: h.file},
		httpapi.Endpoint[none, report.OwnershipAnswer]{Method: "GET", Path: runs + "/ownership", Query: []string{"schedulerKey"}, Call: h.ownershipGet},
		httpapi.Endpoint[keyInput, report.OwnershipAnswer]{Method: "POST", Path: runs + "/ownership/acquire", QueryUnchecked: true, Body: httpapi.BodyRequired,
			Call: func(ctx context.Context, in *httpapi.In[keyInput]) (report.OwnershipAnswer, error) {
				return h.svc.OldSchedulerAcquire(ctx, scope(ctx), in.Body.SchedulerKey, operator(ctx))
			}},
		httpapi.Endpoint[report.OldSchedulerFence, store.ReportOwnership]{Method: "POST", Path: runs + "/ownership/delivery-created", QueryUnchecked: true,
			Body: httpapi.BodyRequired, Call: func(ctx context.Context, in *httpapi.In[report.OldSchedulerFence]) (store.ReportOwnership, error) {
				return h.svc.OldSchedulerDeliveryCreated(ctx, scope(ctx), in.Body)
			}},
		httpapi.Endpoint[report.OldSchedulerFence, store.ReportOwnership]{Method: "POST", Path: runs + "/ownership/release", QueryUnchecked: true,
			Body: httpapi.BodyRequired, Call: h.ownershipRelease},
		httpapi.Endpoint[none, httpapi.Page[report.Rollout]]{Method: "GET", Path: runs + "/rollout", Paging: limitOnly,
			Call: func(ctx context.Context, in *httpapi.In[none]) (httpapi.Page[report.Rollout], error) {
				items, err := h.svc.ListRollouts(ctx, scope(ctx), in.Limit)
				return httpapi.PageOf(items), err
			}},
		rolloutPut(h, runs+"/rollout/business-units/{businessUnitId}", store.RolloutBusinessUnit, "businessUnitId"),
		rolloutDelete(h, runs+"/rollout/business-units/{businessUnitId}", store.RolloutBusinessUnit, "businessUnitId"),
		rolloutPut(h, runs+"/rollout/subscriptions/{guid}", store.RolloutSubscription, "guid"),
		rolloutDelete(h, runs+"/rollout/subscriptions/{guid}", store.RolloutSubscription, "guid"),
	}
}

// Register serves Routes on r, each wrapped by api.
func Register(r *funchost.Router, api *httpapi.API, svc *report.Service) {
	httpapi.Mount(r, api, Routes(svc)...)
}

type handlers struct{ svc *report.Service }

func scope(ctx context.Context) automation.Scope { return httpapi.CallerFrom(ctx).Scope }

func operator(ctx context.Context) string { return httpapi.CallerFrom(ctx).Operator }

// newID is the id of a resource a POST creates: derived from the Idempotency-Key when the
// request has one (a retry finds the same resource), fresh otherwise.
func newID(ctx context.Context, purpose string) string {
	if id, ok := httpapi.DeterministicID(ctx, purpose); ok {
		return id
	}
	return uuid.NewString()
}

// --- subscriptions ------------------------------------------------------------------

func (h *handlers) create(ctx context.Context, in *httpapi.In[report.Input]) (report.View, error) {
	in.Body.UpdatedBy = operator(ctx)
	v, err := h.svc.Create(ctx, scope(ctx), newID(ctx, "report-subscription"), in.Body)
	if err != nil {
		return v, err
	}
	in.Header.Set("Location", "/api/report-subscriptions/"+v.Guid)
	return v, nil
}

// page answers one page of a list: the cursor is bound to query (the list's filters), and
// fetch returns the items after pos with the next position (the zero value at the end).
func page[T any, P comparable](ctx context.Context, in *httpapi.In[struct{}], query string,
	fetch func(ctx context.Context, pos P, limit int) ([]T, P, error)) (httpapi.Page[T], error) {
	var pos P
	if err := in.After(query, &pos); err != nil {
		return httpapi.Page[T]{}, err
	}
	items, next, err := fetch(ctx, pos, in.Limit)
	if err != nil {
		return httpapi.Page[T]{}, err
	}
	return httpapi.NewPage(items, query, next)
}

func (h *handlers) list(ctx context.Context, in *httpapi.In[struct{}]) (httpapi.Page[report.View], error) {
	bu := in.Query.String("businessUnitId")
	return page(ctx, in, "subscriptions:"+bu, func(ctx context.Context, after string, limit int) ([]report.View, string, error) {
		return h.svc.List(ctx, scope(ctx), bu, after, limit)
	})
}

func (h *handlers) put(ctx context.Context, in *httpapi.In[report.Input]) (report.View, error) {
	var m *int64
	if in.VersionGiven {
		m = &in.Version
	}
	in.Body.UpdatedBy = operator(ctx)
	v, created, err := h.svc.Put(ctx, scope(ctx), in.Path("guid"), in.Body, m)
	if err != nil {
		return v, err
	}
	if created {
		in.Status = http.StatusCreated
		in.Header.Set("Location", "/api/report-subscriptions/"+v.Guid)
	}
	return v, nil
}

// --- runs ---------------------------------------------------------------------------

func runLocation(v report.RunView) string {
	return "/api/report-subscriptions/" + v.SubscriptionGuid + "/automation-runs/" + v.RunKeyHash
}

func (h *handlers) runNow(ctx context.Context, in *httpapi.In[report.RunNowInput]) (report.RunView, error) {
	v, err := h.svc.RunNow(ctx, scope(ctx), in.Path("guid"), newID(ctx, "report-run"), in.Body, operator(ctx))
	if err != nil {
		return v, err
	}
	in.Header.Set("Location", runLocation(v))
	return v, nil
}

func (h *handlers) runs(ctx context.Context, in *httpapi.In[struct{}]) (httpapi.Page[report.RunView], error) {
	guid := in.Path("guid")
	return page(ctx, in, "runs:"+guid, func(ctx context.Context, before int64, limit int) ([]report.RunView, int64, error) {
		return h.svc.Runs(ctx, scope(ctx), guid, before, limit)
	})
}

type retryInput struct {
	Reason string `json:"reason"`
}

func (h *handlers) retry(ctx context.Context, in *httpapi.In[retryInput]) (report.RunView, error) {
	v, err := h.svc.SupportRetry(ctx, scope(ctx), in.Path("guid"), in.Path("runKeyHash"),
		newID(ctx, "report-support-retry"), in.Body.Reason, operator(ctx))
	if err != nil {
		return v, err
	}
	in.Header.Set("Location", runLocation(v))
	return v, nil
}

func (h *handlers) failed(ctx context.Context, in *httpapi.In[struct{}]) (httpapi.Page[report.RunView], error) {
	bu := in.Query.String("businessUnitId")
	return page(ctx, in, "failed:"+bu, func(ctx context.Context, after int64, limit int) ([]report.RunView, int64, error) {
		return h.svc.FailedRuns(ctx, scope(ctx), bu, after, limit)
	})
}

func (h *handlers) file(w http.ResponseWriter, r *http.Request) error {
	att, data, err := h.svc.File(r.Context(), scope(r.Context()), r.PathValue("runKeyHash"))
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

func (h *handlers) ownershipGet(ctx context.Context, in *httpapi.In[struct{}]) (report.OwnershipAnswer, error) {
	if in.Query.String("schedulerKey") == "" {
		return report.OwnershipAnswer{}, &automation.Error{Code: automation.CodeMalformed, Field: "schedulerKey", Message: "is required"}
	}
	return h.svc.OldSchedulerCheck(ctx, scope(ctx), in.Query.String("schedulerKey"))
}

func (h *handlers) ownershipRelease(ctx context.Context, in *httpapi.In[report.OldSchedulerFence]) (store.ReportOwnership, error) {
	if len(in.Body.Coordinates) > 0 {
		return store.ReportOwnership{}, &automation.Error{Code: automation.CodeMalformed, Field: "coordinates", Message: "is not accepted by release"}
	}
	return h.svc.OldSchedulerRelease(ctx, scope(ctx), in.Body)
}

// --- rollout ------------------------------------------------------------------------

type modeInput struct {
	Mode report.Mode `json:"mode"`
}

// rolloutID is the scope id a rollout route names (param); a subscription's guid in lower case.
func rolloutID(in interface{ Path(string) string }, scope store.ReportRolloutScope, param string) string {
	id := in.Path(param)
	if scope == store.RolloutSubscription {
		id = strings.ToLower(id)
	}
	return id
}

func rolloutPut(h *handlers, path string, rs store.ReportRolloutScope, param string) httpapi.Route {
	return httpapi.Endpoint[modeInput, report.Rollout]{Method: "PUT", Path: path, QueryUnchecked: true, Body: httpapi.BodyRequired,
		Call: func(ctx context.Context, in *httpapi.In[modeInput]) (report.Rollout, error) {
			return h.svc.SetRollout(ctx, scope(ctx), rs, rolloutID(in, rs, param), in.Body.Mode, operator(ctx))
		}}
}

type rolloutRemoved struct {
	ScopeType store.ReportRolloutScope `json:"scopeType"`
	ScopeID   string                   `json:"scopeId"`
	Removed   bool                     `json:"removed"`
	Released  int                      `json:"released"`
	At        time.Time                `json:"at"`
}

func rolloutDelete(h *handlers, path string, rs store.ReportRolloutScope, param string) httpapi.Route {
	return httpapi.Endpoint[struct{}, rolloutRemoved]{Method: "DELETE", Path: path, QueryUnchecked: true,
		Call: func(ctx context.Context, in *httpapi.In[struct{}]) (rolloutRemoved, error) {
			id := rolloutID(in, rs, param)
			released, removed, err := h.svc.RemoveRollout(ctx, scope(ctx), rs, id, operator(ctx))
			return rolloutRemoved{ScopeType: rs, ScopeID: id, Removed: removed, Released: released, At: h.svc.Now()}, err
		}}
}
