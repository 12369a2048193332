package deadletterapi

import (
	"net/http"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/deadletter"
	"github.com/automation-platform/automation/shared/httpapi"
)

// Registrar is where routes go: funchost.Router.RegisterHTTP (or an http.ServeMux's Handle).
type Registrar interface {
	RegisterHTTP(pattern string, h http.Handler)
}

// Route patterns.
const (
	PathList    = "/api/support/dead-letters"
	PathRequeue = "/api/support/dead-letters/requeue"
)

// DefaultPage is a page's default size; bus.MaxDeadLetterPage its bound.
const DefaultPage = 50

// Register adds the dead-letter routes to reg.
func Register(reg Registrar, api *httpapi.API, s *deadletter.Service) {
	h := handlers{s: s}
	reg.RegisterHTTP("GET "+PathList, api.Handler(h.list))
	reg.RegisterHTTP("POST "+PathRequeue, api.Handler(h.requeue))
}

type handlers struct{ s *deadletter.Service }

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId", "destination", "limit", "cursor"); err != nil {
		return err
	}
	bu, dest := q.String("businessUnitId"), q.String("destination")
	if bu != "" {
		if err := httpapi.RequireUnit(r, bu); err != nil {
			return err
		}
	}
	limit, err := q.Int("limit", DefaultPage, 1, bus.MaxDeadLetterPage)
	if err != nil {
		return err
	}
	cursorQuery := "dead-letters:" + bu + ":" + dest
	var after string
	if c := q.String("cursor"); c != "" {
		if err := httpapi.DecodeCursor(c, cursorQuery, &after); err != nil {
			return err
		}
	}
	items, next, err := h.s.List(r.Context(), httpapi.CallerFrom(r.Context()).Scope, deadletter.ListParams{
		BusinessUnitID: bu, Destination: dest, After: after, Limit: limit})
	if err != nil {
		return err
	}
	page, err := httpapi.NewPage(items, cursorQuery, next)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
	return nil
}

type requeueBody struct {
	ID     string `json:"id"`
	Reason string `json:"reason"`
}

func (h handlers) requeue(w http.ResponseWriter, r *http.Request) error {
	var b requeueBody
	if err := httpapi.DecodeJSON(r, &b); err != nil {
		return err
	}
	if b.ID == "" {
		return automation.Invalid("id", "is required: the id of a dead letter (GET %s)", PathList)
	}
	op, err := httpapi.RequireOperator(r, "requeue")
	if err != nil {
		return err
	}
	it, err := h.s.Requeue(r.Context(), httpapi.CallerFrom(r.Context()).Scope, b.ID, op, b.Reason)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, it)
	return nil
}
