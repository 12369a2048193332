// Package deliveryapi holds the delivery support routes of the SupportApi function
// (docs/architecture.md#unknown-outcomes, docs/architecture.md#facts, docs/operations.md#support-api): the manual-resolution queue of UNKNOWN deliveries and the
// delivery counts per business unit and local day. Thin adapters over delivery.Support on
// shared/httpapi (problem details, strict JSON and query, If-Match, cursors, business-unit
// scope: a delivery of a unit the caller may not see answers 404).
//
//	GET  /api/support/deliveries/unknown?businessUnitId=bu-1[&limit=50][&cursor=…]
//	     → 200 {"items":[{deliveryKey, schedulerKey, businessUnitId, channel, recipient,
//	        template, localDate, attemptCount, lastError, version, updatedOn}], "nextCursor":"…"}
//	POST /api/support/deliveries/unknown/{deliveryKey}/resolve   If-Match: "<version>"
//	     {"businessUnitId":"bu-1","status":"Sent"|"Failed","reason":"…","providerReference":"…"}
//	     → 200 the resolved delivery, ETag its new version; the operator is the caller's name
//	       (X-MS-CLIENT-PRINCIPAL-NAME or X-Automation-Operator), required.
//	     412 the version moved on; 409 no longer Unknown; 404 unknown or out of scope.
//	GET  /api/support/deliveries/held?businessUnitId=bu-1[&limit=50][&cursor=…]
//	     → 200 the deliveries waiting Failed on support hold (a template missing, retries run
//	       out), the same item shape as unknown.
//	POST /api/support/deliveries/{deliveryKey}/release   If-Match: "<version>"
//	     {"businessUnitId":"bu-1","reason":"…"}
//	     → 200 the delivery, Queued and due now (the dispatcher's sweep sends it once), ETag its
//	       new version; the operator as for resolve (logged with the reason).
//	     412 the version moved on; 409 not held (released already); 404 unknown or out of scope.
//	GET  /api/support/deliveries/counts?businessUnitId=bu-1&from=2026-10-01&to=2026-10-31
//	     → 200 {"businessUnitId","from","to","days":[{localDate,sent,failed,unknown}],"freshTo"}
package deliveryapi

import (
	"context"
	"net/http"
	"time"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// Registrar is where routes go: funchost.Router.RegisterHTTP (or an http.ServeMux's Handle).
type Registrar interface {
	RegisterHTTP(pattern string, h http.Handler)
}

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
	h := handlers{s: s}
	reg.RegisterHTTP("GET "+PathUnknown, api.Handler(h.listUnknown))
	reg.RegisterHTTP("POST "+PathResolve, api.Handler(h.resolve))
	reg.RegisterHTTP("GET "+PathCounts, api.Handler(h.counts))
	reg.RegisterHTTP("GET "+PathHeld, api.Handler(h.listHeld))
	reg.RegisterHTTP("POST "+PathRelease, api.Handler(h.release))
}

func (h handlers) listHeld(w http.ResponseWriter, r *http.Request) error {
	return listPage(w, r, "held:", h.s.ListHeld)
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

func (h handlers) release(w http.ResponseWriter, r *http.Request) error {
	version, _, err := httpapi.IfMatch(r, true)
	if err != nil {
		return err
	}
	var b releaseBody
	if err := httpapi.DecodeJSON(r, &b); err != nil {
		return err
	}
	if err := httpapi.RequireUnit(r, b.BusinessUnitID); err != nil {
		return err
	}
	op, err := httpapi.RequireOperator(r, "release")
	if err != nil {
		return err
	}
	j, err := h.s.Release(r.Context(), delivery.ReleaseRequest{BusinessUnitID: b.BusinessUnitID, DeliveryKey: r.PathValue("deliveryKey"),
		ExpectedVersion: version, Operator: op, Reason: b.Reason})
	if err != nil {
		return err
	}
	httpapi.SetETag(w, j.Version)
	httpapi.WriteJSON(w, http.StatusOK, released{DeliveryKey: j.DeliveryKey, BusinessUnitID: j.BusinessUnitID, Status: string(j.Status), Version: j.Version})
	return nil
}

type handlers struct{ s *delivery.Support }

func (h handlers) listUnknown(w http.ResponseWriter, r *http.Request) error {
	return listPage(w, r, "unknown:", h.s.ListUnknown)
}

// listPage answers one page of a delivery list of one business unit (?businessUnitId,
// ?limit, ?cursor): list reads it; the cursor is bound to the list (kind, "unknown:" or
// "held:") and the unit, so one list's cursor is refused by the other.
func listPage(w http.ResponseWriter, r *http.Request, kind string,
	list func(ctx context.Context, businessUnitID string, afterID int64, limit int) (delivery.UnknownPage, error)) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId", "limit", "cursor"); err != nil {
		return err
	}
	bu := q.String("businessUnitId")
	if err := httpapi.RequireUnit(r, bu); err != nil {
		return err
	}
	limit, err := q.Int("limit", delivery.DefaultUnknownPage, 1, delivery.MaxUnknownPage)
	if err != nil {
		return err
	}
	cursorQuery := kind + bu
	var after int64
	if c := q.String("cursor"); c != "" {
		if err := httpapi.DecodeCursor(c, cursorQuery, &after); err != nil {
			return err
		}
	}
	page, err := list(r.Context(), bu, after, limit)
	if err != nil {
		return err
	}
	out, err := httpapi.NewPage(page.Items, cursorQuery, page.NextAfter) // NextAfter 0: the last page
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
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

func (h handlers) resolve(w http.ResponseWriter, r *http.Request) error {
	version, _, err := httpapi.IfMatch(r, true)
	if err != nil {
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
	j, err := h.s.Resolve(r.Context(), delivery.ResolveRequest{BusinessUnitID: b.BusinessUnitID, DeliveryKey: r.PathValue("deliveryKey"),
		ExpectedVersion: version, Status: store.NotificationStatus(b.Status), Operator: op, Reason: b.Reason, ProviderReference: b.ProviderReference})
	if err != nil {
		return err
	}
	httpapi.SetETag(w, j.Version)
	httpapi.WriteJSON(w, http.StatusOK, resolved{DeliveryKey: j.DeliveryKey, BusinessUnitID: j.BusinessUnitID, Status: string(j.Status),
		ResolvedBy: j.ResolvedBy, ResolutionReason: j.ResolutionReason, ResolvedOn: j.ResolvedOn, ProviderReference: j.ProviderReference, Version: j.Version})
	return nil
}

type countsAnswer struct {
	BusinessUnitID string                    `json:"businessUnitId"`
	From           string                    `json:"from"`
	To             string                    `json:"to"`
	Days           []store.DeliveryDayCounts `json:"days"`
	FreshTo        *time.Time                `json:"freshTo"`
}

func (h handlers) counts(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId", "from", "to"); err != nil {
		return err
	}
	bu := q.String("businessUnitId")
	if err := httpapi.RequireUnit(r, bu); err != nil {
		return err
	}
	c, err := h.s.Counts(r.Context(), bu, q.String("from"), q.String("to"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, countsAnswer{BusinessUnitID: bu, From: q.String("from"), To: q.String("to"), Days: c.Days, FreshTo: c.FreshTo})
	return nil
}
