package keysapi

import (
	"net/http"
	"time"

	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// FunctionName is the Azure Function whose route forwards /api/keys/...
const FunctionName = "ApiKeysApi"

// Route patterns.
const (
	PathKeys   = "/api/keys"
	PathKey    = "/api/keys/{prefix}"
	PathRevoke = "/api/keys/{prefix}/revoke"
	PathRotate = "/api/keys/{prefix}/rotate"
)

// DefaultPage is a list page's default size; store.MaxBatch its bound.
const DefaultPage = 100

// Registrar is where routes go: funchost.Router.RegisterHTTP (or an http.ServeMux's Handle).
type Registrar interface {
	RegisterHTTP(pattern string, h http.Handler)
}

// Register adds the key routes to reg.
func Register(reg Registrar, api *httpapi.API, s *apikey.Service) {
	h := handlers{s: s}
	reg.RegisterHTTP("GET "+PathKeys, api.Handler(h.list))
	reg.RegisterHTTP("POST "+PathKeys, api.Handler(h.create))
	reg.RegisterHTTP("GET "+PathKey, api.Handler(h.get))
	reg.RegisterHTTP("POST "+PathRevoke, api.Handler(h.revoke))
	reg.RegisterHTTP("POST "+PathRotate, api.Handler(h.rotate))
}

type handlers struct{ s *apikey.Service }

// platform refuses a caller that does not see every business unit (404, as if the routes
// did not exist), and returns the operator the change is audited under.
func platform(r *http.Request) (string, error) {
	c := httpapi.CallerFrom(r.Context())
	if !c.Scope.All() {
		return "", automation.Errorf(automation.CodeNotFound, "API keys are platform-wide: only a caller that sees every business unit manages them")
	}
	if c.Principal.Name != "" {
		return c.Principal.Name, nil
	}
	return c.Operator, nil
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	if _, err := platform(r); err != nil {
		return err
	}
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("limit", "cursor"); err != nil {
		return err
	}
	limit, err := q.Int("limit", DefaultPage, 1, store.MaxBatch)
	if err != nil {
		return err
	}
	var after string
	if c := q.String("cursor"); c != "" {
		if err := httpapi.DecodeCursor(c, "keys", &after); err != nil {
			return err
		}
	}
	keys, err := h.s.List(r.Context(), after, limit)
	if err != nil {
		return err
	}
	next := ""
	if len(keys) == limit {
		next = keys[len(keys)-1].Prefix
	}
	page, err := httpapi.NewPage(keys, "keys", next)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, page)
	return nil
}

type createBody struct {
	Name          string         `json:"name"`
	Roles         []httpapi.Role `json:"roles"`
	BusinessUnits string         `json:"businessUnits"`
}

func (h handlers) create(w http.ResponseWriter, r *http.Request) error {
	op, err := platform(r)
	if err != nil {
		return err
	}
	var b createBody
	if err := httpapi.DecodeJSON(r, &b); err != nil {
		return err
	}
	c, err := h.s.Create(r.Context(), apikey.CreateParams{Name: b.Name, Roles: b.Roles, Units: b.BusinessUnits, Operator: op})
	if err != nil {
		return err
	}
	w.Header().Set("Location", PathKeys+"/"+c.Prefix)
	httpapi.WriteJSON(w, http.StatusCreated, c)
	return nil
}

func (h handlers) get(w http.ResponseWriter, r *http.Request) error {
	if _, err := platform(r); err != nil {
		return err
	}
	k, err := h.s.Get(r.Context(), r.PathValue("prefix"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, k)
	return nil
}

func (h handlers) revoke(w http.ResponseWriter, r *http.Request) error {
	op, err := platform(r)
	if err != nil {
		return err
	}
	k, err := h.s.Revoke(r.Context(), r.PathValue("prefix"), op)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, k)
	return nil
}

type rotateBody struct {
	// OverlapSeconds is how long the old key keeps working (apikey.DefaultOverlap when 0).
	OverlapSeconds int64 `json:"overlapSeconds"`
}

func (h handlers) rotate(w http.ResponseWriter, r *http.Request) error {
	op, err := platform(r)
	if err != nil {
		return err
	}
	var b rotateBody
	if r.ContentLength != 0 {
		if err := httpapi.DecodeJSON(r, &b); err != nil {
			return err
		}
	}
	if b.OverlapSeconds < 0 || b.OverlapSeconds > int64(apikey.MaxOverlap/time.Second) {
		return automation.Invalid("overlapSeconds", "is 0 (the default, %s) to %d", apikey.DefaultOverlap, int64(apikey.MaxOverlap/time.Second))
	}
	c, err := h.s.Rotate(r.Context(), r.PathValue("prefix"), time.Duration(b.OverlapSeconds)*time.Second, op)
	if err != nil {
		return err
	}
	w.Header().Set("Location", PathKeys+"/"+c.Prefix)
	httpapi.WriteJSON(w, http.StatusCreated, c)
	return nil
}
