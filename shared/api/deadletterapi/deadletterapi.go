package deadletterapi

import (
	"context"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/deadletter"
	"github.com/automation-platform/automation/shared/httpapi"
)

// Registrar is where routes go: funchost.Router.RegisterHTTP (or an http.ServeMux's Handle).
type Registrar = httpapi.Registrar

// Route patterns.
const (
	PathList        = "/api/support/dead-letters"
	PathRequeue     = "/api/support/dead-letters/requeue"
	PathRequeueMany = "/api/support/dead-letters/requeue-many"
	PathDiscard     = "/api/support/dead-letters/discard"
)

// DefaultPage is a page's default size; bus.MaxDeadLetterPage its bound.
const DefaultPage = 50

// Register adds the dead-letter routes to reg.
func Register(reg Registrar, api *httpapi.API, s *deadletter.Service) {
	httpapi.Mount(reg, api, Routes(s)...)
}

// Routes declares the routes over s (nil s: the declarations only, for checks).
func Routes(s *deadletter.Service) []httpapi.Route {
	h := handlers{s: s}
	return []httpapi.Route{
		httpapi.Endpoint[struct{}, httpapi.Page[deadletter.Item]]{Method: "GET", Path: PathList, Query: []string{"businessUnitId", "destination"},
			Paging: &httpapi.Paging{Default: DefaultPage, Max: bus.MaxDeadLetterPage}, Call: h.list},
		// The operator is checked after the body (a missing id is named first), so in Call.
		httpapi.Endpoint[requeueBody, deadletter.Item]{Method: "POST", Path: PathRequeue, QueryUnchecked: true, Body: httpapi.BodyRequired, Call: h.requeue},
		httpapi.Endpoint[requeueManyBody, deadletter.BulkResult]{Method: "POST", Path: PathRequeueMany, QueryUnchecked: true, Body: httpapi.BodyRequired, Call: h.requeueMany},
		httpapi.Endpoint[requeueBody, deadletter.ActResult]{Method: "POST", Path: PathDiscard, QueryUnchecked: true, Body: httpapi.BodyRequired, Call: h.discard},
	}
}

type handlers struct{ s *deadletter.Service }

// list answers a page of dead letters the caller may see; businessUnitId, when given, must
// be in scope and narrows the list.
func (h handlers) list(ctx context.Context, in *httpapi.In[struct{}]) (httpapi.Page[deadletter.Item], error) {
	bu, dest := in.Query.String("businessUnitId"), in.Query.String("destination")
	if bu != "" {
		if err := httpapi.RequireUnit(in.Request, bu); err != nil {
			return httpapi.Page[deadletter.Item]{}, err
		}
	}
	cursorQuery := "dead-letters:" + bu + ":" + dest
	var after string
	if err := in.After(cursorQuery, &after); err != nil {
		return httpapi.Page[deadletter.Item]{}, err
	}
	items, next, err := h.s.List(ctx, httpapi.CallerFrom(ctx).Scope, deadletter.ListParams{
		BusinessUnitID: bu, Destination: dest, After: after, Limit: in.Limit})
	if err != nil {
		return httpapi.Page[deadletter.Item]{}, err
	}
	return httpapi.NewPage(items, cursorQuery, next)
}

type requeueBody struct {
	ID     string `json:"id"`
	ETag   string `json:"etag"`
	Reason string `json:"reason"`
}

// requeue answers the requeued dead letter; a repeat with the same etag answers the first
// requeue's dead letter again (nothing is sent twice).
func (h handlers) requeue(ctx context.Context, in *httpapi.In[requeueBody]) (deadletter.Item, error) {
	req, err := actRequest(in, "requeue")
	if err != nil {
		return deadletter.Item{}, err
	}
	res, err := h.s.Requeue(ctx, httpapi.CallerFrom(ctx).Scope, req)
	return res.DeadLetter, err
}

func (h handlers) discard(ctx context.Context, in *httpapi.In[requeueBody]) (deadletter.ActResult, error) {
	req, err := actRequest(in, "discard")
	if err != nil {
		return deadletter.ActResult{}, err
	}
	return h.s.Discard(ctx, httpapi.CallerFrom(ctx).Scope, req)
}

// actRequest is the request of one dead letter's action (requeue, discard) from the body
// and the X-Automation-Operator header: 422 naming id when the body has none (checked
// first), then 400 naming X-Automation-Operator when no operator is known
// (httpapi.RequireOperator).
func actRequest(in *httpapi.In[requeueBody], action string) (deadletter.ActRequest, error) {
	if in.Body.ID == "" {
		return deadletter.ActRequest{}, automation.Invalid("id", "is required: the id of a dead letter (GET %s)", PathList)
	}
	op, err := httpapi.RequireOperator(in.Request, action)
	if err != nil {
		return deadletter.ActRequest{}, err
	}
	return deadletter.ActRequest{ID: in.Body.ID, ETag: in.Body.ETag, Operator: op, Reason: in.Body.Reason}, nil
}

type requeueManyBody struct {
	Items  []deadletter.Ref `json:"items"`
	Reason string           `json:"reason"`
}

func (h handlers) requeueMany(ctx context.Context, in *httpapi.In[requeueManyBody]) (deadletter.BulkResult, error) {
	op, err := httpapi.RequireOperator(in.Request, "requeue")
	if err != nil {
		return deadletter.BulkResult{}, err
	}
	return h.s.RequeueMany(ctx, httpapi.CallerFrom(ctx).Scope, deadletter.BulkRequest{Refs: in.Body.Items, Operator: op, Reason: in.Body.Reason})
}
