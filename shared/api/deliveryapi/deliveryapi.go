package deliveryapi

import (
	"context"
	"time"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// Registrar is where routes go: funchost.Router.RegisterHTTP (or an http.ServeMux's Handle).
type Registrar = httpapi.Registrar

// Route patterns.
const (
	PathUnknown = "/api/support/deliveries/unknown"
	PathResolve = "/api/support/deliveries/unknown/{deliveryKey}/resolve"
	PathCounts  = "/api/support/deliveries/counts"
	PathHeld    = "/api/support/deliveries/held"
	PathRelease = "/api/support/deliveries/{deliveryKey}/release"
)

// Register adds the delivery support routes to reg.
func Register(reg Registrar, api *httpapi.API, s *delivery.Support) {
	httpapi.Mount(reg, api, Routes(s)...)
}

// Routes declares the routes over s (nil s: the declarations only, for checks).
func Routes(s *delivery.Support) []httpapi.Route {
	h := handlers{s: s}
	return []httpapi.Route{
		listPage(PathUnknown, "unknown:", func() lister { return h.s.ListUnknown }),
		httpapi.Endpoint[resolveBody, resolved]{Method: "POST", Path: PathResolve, Unit: httpapi.UnitBody, QueryUnchecked: true,
			BodyUnit: func(b *resolveBody) string { return b.BusinessUnitID }, IfMatch: httpapi.IfMatchRequired, Operator: "resolution",
			Body: httpapi.BodyRequired, ETag: func(r resolved) int64 { return r.Version }, Call: h.resolve},
		httpapi.Endpoint[struct{}, countsAnswer]{Method: "GET", Path: PathCounts, Unit: httpapi.UnitQuery, Query: []string{"from", "to"}, Call: h.counts},
		listPage(PathHeld, "held:", func() lister { return h.s.ListHeld }),
		httpapi.Endpoint[releaseBody, released]{Method: "POST", Path: PathRelease, Unit: httpapi.UnitBody, QueryUnchecked: true,
			BodyUnit: func(b *releaseBody) string { return b.BusinessUnitID }, IfMatch: httpapi.IfMatchRequired, Operator: "release",
			Body: httpapi.BodyRequired, ETag: func(r released) int64 { return r.Version }, Call: h.release},
	}
}

type releaseBody struct {
	BusinessUnitID string `json:"businessUnitId"`
	Reason         string `json:"reason"`
}

type released struct {
	DeliveryKey    string `json:"deliveryKey"`
	BusinessUnitID string `json:"businessUnitId"`
	Status         string `json:"status"`
	Version        int64  `json:"version"`
}

func (h handlers) release(ctx context.Context, in *httpapi.In[releaseBody]) (released, error) {
	j, err := h.s.Release(ctx, delivery.ReleaseRequest{BusinessUnitID: in.Unit, DeliveryKey: in.Path("deliveryKey"),
		ExpectedVersion: in.Version, Operator: in.Operator, Reason: in.Body.Reason})
	if err != nil {
		return released{}, err
	}
	return released{DeliveryKey: j.DeliveryKey, BusinessUnitID: j.BusinessUnitID, Status: string(j.Status), Version: j.Version}, nil
}

type handlers struct{ s *delivery.Support }

// lister reads one page of a delivery list of one business unit.
type lister func(ctx context.Context, businessUnitID string, afterID int64, limit int) (delivery.UnknownPage, error)

// listPage is the route of one delivery list of one business unit (?businessUnitId, ?limit,
// ?cursor): list() reads it (a func, so that the declarations need no service); the cursor
// is bound to the list (kind, "unknown:" or "held:") and the unit, so one list's cursor is
// refused by the other.
func listPage(path, kind string, list func() lister) httpapi.Route {
	return httpapi.Endpoint[struct{}, httpapi.Page[delivery.UnknownDelivery]]{Method: "GET", Path: path, Unit: httpapi.UnitQuery,
		Paging: &httpapi.Paging{Default: delivery.DefaultUnknownPage, Max: delivery.MaxUnknownPage},
		Call: func(ctx context.Context, in *httpapi.In[struct{}]) (httpapi.Page[delivery.UnknownDelivery], error) {
			cursorQuery := kind + in.Unit
			var after int64
			if err := in.After(cursorQuery, &after); err != nil {
				return httpapi.Page[delivery.UnknownDelivery]{}, err
			}
			page, err := list()(ctx, in.Unit, after, in.Limit)
			if err != nil {
				return httpapi.Page[delivery.UnknownDelivery]{}, err
			}
			return httpapi.NewPage(page.Items, cursorQuery, page.NextAfter) // NextAfter 0: the last page
		}}
}

type resolveBody struct {
	BusinessUnitID    string `json:"businessUnitId"`
	Status            string `json:"status"`
	Reason            string `json:"reason"`
	ProviderReference string `json:"providerReference,omitempty"`
}

// resolved is the answer of a resolution.
type resolved struct {
	DeliveryKey       string     `json:"deliveryKey"`
	BusinessUnitID    string     `json:"businessUnitId"`
	Status            string     `json:"status"`
	ResolvedBy        string     `json:"resolvedBy"`
	ResolutionReason  string     `json:"resolutionReason"`
	ResolvedOn        *time.Time `json:"resolvedOn"`
	ProviderReference string     `json:"providerReference,omitempty"`
	Version           int64      `json:"version"`
}

func (h handlers) resolve(ctx context.Context, in *httpapi.In[resolveBody]) (resolved, error) {
	b := in.Body
	j, err := h.s.Resolve(ctx, delivery.ResolveRequest{BusinessUnitID: in.Unit, DeliveryKey: in.Path("deliveryKey"),
		ExpectedVersion: in.Version, Status: store.NotificationStatus(b.Status), Operator: in.Operator, Reason: b.Reason, ProviderReference: b.ProviderReference})
	if err != nil {
		return resolved{}, err
	}
	return resolved{DeliveryKey: j.DeliveryKey, BusinessUnitID: j.BusinessUnitID, Status: string(j.Status),
		ResolvedBy: j.ResolvedBy, ResolutionReason: j.ResolutionReason, ResolvedOn: j.ResolvedOn, ProviderReference: j.ProviderReference, Version: j.Version}, nil
}

type countsAnswer struct {
	BusinessUnitID string                    `json:"businessUnitId"`
	From           string                    `json:"from"`
	To             string                    `json:"to"`
	Days           []store.DeliveryDayCounts `json:"days"`
	FreshTo        *time.Time                `json:"freshTo"`
}

func (h handlers) counts(ctx context.Context, in *httpapi.In[struct{}]) (countsAnswer, error) {
	from, to := in.Query.String("from"), in.Query.String("to")
	c, err := h.s.Counts(ctx, in.Unit, from, to)
	if err != nil {
		return countsAnswer{}, err
	}
	return countsAnswer{BusinessUnitID: in.Unit, From: from, To: to, Days: c.Days, FreshTo: c.FreshTo}, nil
}
