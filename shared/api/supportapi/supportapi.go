package supportapi

import (
	"context"
	"net/http"

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

// Register adds the support routes to r, wrapped by api (auth, scope, problems) and named
// in the logging context (logged).
func Register(r *funchost.Router, api *httpapi.API, svc *support.Service) {
	httpapi.Mount(loggedRegistrar{r}, api, Routes(svc)...)
}

// Routes declares the support routes over svc (nil: the declarations only, for checks).
func Routes(svc *support.Service) []httpapi.Route {
	h := handlers{svc: svc}
	type none = struct{}
	act := func(action string, fn func(*support.Service) actFunc) httpapi.Route {
		return httpapi.Endpoint[ActBody, support.ActResult]{Method: "POST", Path: Prefix + "scheduler-rows/{id}/" + action,
			IfMatch: httpapi.IfMatchRequired, Operator: "action", Body: httpapi.BodyRequired,
			ETag: func(res support.ActResult) int64 { return res.Row.Version },
			Call: func(ctx context.Context, in *httpapi.In[ActBody]) (support.ActResult, error) {
				return fn(h.svc)(ctx, scope(ctx), support.ActRequest{Ref: in.Path("id"), IfMatch: in.Version, Operator: in.Operator, Reason: in.Body.Reason})
			}}
	}
	return []httpapi.Route{
		httpapi.Endpoint[none, FindResponse]{Method: "GET", Path: Prefix + "scheduler-rows", Query: []string{"schedulerKey", "sourceType", "sourceGuid",
			"businessUnitId", "status", "onHold", "scheduledFrom", "scheduledTo", "limit", "cursor"}, Call: h.find},
		httpapi.Endpoint[none, support.Detail]{Method: "GET", Path: Prefix + "scheduler-rows/{id}", ETag: func(d support.Detail) int64 { return d.Row.Version },
			Call: func(ctx context.Context, in *httpapi.In[none]) (support.Detail, error) {
				return h.svc.Get(ctx, scope(ctx), in.Path("id"))
			}},
		act("release", func(s *support.Service) actFunc { return s.Release }),
		act("retry", func(s *support.Service) actFunc { return s.Retry }),
		act("cancel", func(s *support.Service) actFunc { return s.Cancel }),
		act("run-now", func(s *support.Service) actFunc { return s.RunNow }),
		httpapi.Endpoint[ReleaseBody, support.ReleaseResult]{Method: "POST", Path: Prefix + "releases", Operator: "release",
			Body: httpapi.BodyRequired, Call: h.releaseMany},
		httpapi.Endpoint[none, support.Explanation]{Method: "GET", Path: Prefix + "explain", Query: []string{"sourceType", "sourceGuid"},
			Call: func(ctx context.Context, in *httpapi.In[none]) (support.Explanation, error) {
				return h.svc.Explain(ctx, scope(ctx), in.Query.String("sourceType"), in.Query.String("sourceGuid"))
			}},
		httpapi.Endpoint[none, support.Metrics]{Method: "GET", Path: Prefix + "metrics", Query: []string{"businessUnitId"},
			Call: func(ctx context.Context, in *httpapi.In[none]) (support.Metrics, error) {
				return h.svc.Metrics(ctx, scope(ctx), in.Query.String("businessUnitId"))
			}},
	}
}

func scope(ctx context.Context) automation.Scope { return httpapi.CallerFrom(ctx).Scope }

// loggedRegistrar registers every handler wrapped by logged.
type loggedRegistrar struct{ r *funchost.Router }

func (l loggedRegistrar) RegisterHTTP(pattern string, h http.Handler) {
	l.r.RegisterHTTP(pattern, logged(h))
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

func (h handlers) find(ctx context.Context, in *httpapi.In[struct{}]) (FindResponse, error) {
	q := in.Query
	f := support.Filter{SchedulerKey: q.String("schedulerKey"), SourceType: q.String("sourceType"), SourceGuid: q.String("sourceGuid"),
		BusinessUnitID: q.String("businessUnitId"), Status: automation.Status(q.String("status"))}
	var err error
	if f.OnHold, err = q.Bool("onHold"); err != nil {
		return FindResponse{}, err
	}
	if f.ScheduledFrom, err = q.Time("scheduledFrom"); err != nil {
		return FindResponse{}, err
	}
	if f.ScheduledTo, err = q.Time("scheduledTo"); err != nil {
		return FindResponse{}, err
	}
	limit, err := q.Int("limit", 0, 1, h.svc.Config().MaxPageSize)
	if err != nil {
		return FindResponse{}, err
	}
	if err := f.Validate(); err != nil {
		return FindResponse{}, err
	}
	var after *support.Position
	if in.Request.URL.Query().Has("cursor") {
		var pos support.Position
		if err := httpapi.DecodeCursor(q.String("cursor"), f.Canonical(), &pos); err != nil {
			return FindResponse{}, err
		}
		after = &pos
	}
	page, err := h.svc.Find(ctx, scope(ctx), f, after, limit)
	if err != nil {
		return FindResponse{}, err
	}
	resp := FindResponse{Rows: page.Rows, Order: page.Order}
	if page.Next != nil {
		if resp.NextCursor, err = httpapi.EncodeCursor(f.Canonical(), page.Next); err != nil {
			return FindResponse{}, err
		}
	}
	return resp, nil
}

// ActBody is the body of release, retry, cancel and run-now.
type ActBody struct {
	Reason string `json:"reason"`
}

// actFunc is support.Service.Release, Retry, Cancel or RunNow: an action on one row, with
// the operator (400 without), If-Match (428 without, 412 stale) and the reason in the body;
// nothing changes when any of it is wrong.
type actFunc func(ctx context.Context, sc automation.Scope, req support.ActRequest) (support.ActResult, error)

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

func (h handlers) releaseMany(ctx context.Context, in *httpapi.In[ReleaseBody]) (support.ReleaseResult, error) {
	body := in.Body
	rate, errRate := given("ratePerMinute", body.RatePerMinute)
	batch, errBatch := given("batchSize", body.BatchSize)
	maxRows, errMax := given("maxRows", body.MaxRows)
	if err := automation.InvalidFields(errRate, errBatch, errMax); err != nil {
		return support.ReleaseResult{}, err
	}
	req := support.ReleaseRequest{Filter: body.Filter, RatePerMinute: rate, BatchSize: batch,
		MaxRows: maxRows, Operator: in.Operator, Reason: body.Reason}
	if id, ok := httpapi.DeterministicID(ctx, "support-release"); ok {
		req.ID = "rel-" + id // a retried request (same Idempotency-Key) names the same release
	}
	return h.svc.ReleaseMany(ctx, scope(ctx), req)
}
