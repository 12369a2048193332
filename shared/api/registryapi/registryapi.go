// Package registryapi manages the event registry over HTTP (the EventRegistryApi function,
// docs/gateway.md#registry-api): every version kept, ETag/If-Match on changes, the operator
// named on every change, import and export as one JSON file. The registry is platform-wide,
// so only a caller that sees every business unit reaches it; any other caller gets 404, as
// for an unknown resource (docs/api-conventions.md#business-unit-scope). Thin handlers.
package registryapi

import (
	_ "embed" // openapi.yaml
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/automation-platform/automation/shared/automation"
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

// Prefix of every route.
const Prefix = "/api/event-registry"

// Entry is one stored version of a definition.
type Entry struct {
	EventType  string          `json:"eventType"`
	Version    int64           `json:"version"`
	Operator   string          `json:"operator"`
	CreatedOn  time.Time       `json:"createdOn"`
	Definition json.RawMessage `json:"definition"`
}

func entryOf(e store.EventRegistryEntry) Entry {
	return Entry{EventType: e.EventType, Version: e.Version, Operator: e.Operator, CreatedOn: e.CreatedOn.UTC(), Definition: json.RawMessage(e.DefinitionJSON)}
}

type handlers struct {
	admin *gateway.Admin
	store store.GatewayStore
}

// Register adds the routes to r behind api.
func Register(r *funchost.Router, api *httpapi.API, admin *gateway.Admin) {
	h := handlers{admin: admin, store: admin.Store}
	route := func(pattern string, fn httpapi.HandlerFunc) { r.RegisterHTTP(pattern, api.Handler(platform(fn))) }
	route("GET "+Prefix+"/types", h.list)
	route("POST "+Prefix+"/types", h.create)
	route("GET "+Prefix+"/types/{eventType}", h.get)
	route("PUT "+Prefix+"/types/{eventType}", h.update)
	route("GET "+Prefix+"/types/{eventType}/versions", h.versions)
	route("GET "+Prefix+"/types/{eventType}/versions/{version}", h.version)
	route("GET "+Prefix+"/export", h.export)
	route("POST "+Prefix+"/import", h.importFile)
}

// platform refuses callers that do not see every business unit, as 404.
func platform(fn httpapi.HandlerFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		if !httpapi.CallerFrom(r.Context()).Scope.All() {
			return automation.Errorf(automation.CodeNotFound, "the event registry is not found")
		}
		return fn(w, r)
	}
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	if err := httpapi.NewQuery(r.URL.Query()).Check(); err != nil {
		return err
	}
	es, err := h.store.EventRegistryListLatest(r.Context())
	if err != nil {
		return err
	}
	out := make([]Entry, 0, len(es))
	for _, e := range es {
		out = append(out, entryOf(e))
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"types": out})
	return nil
}

func body(r *http.Request) (json.RawMessage, error) {
	var raw json.RawMessage
	if err := httpapi.DecodeJSON(r, &raw); err != nil {
		return nil, err
	}
	return raw, nil
}

// create: POST a new event type's first version (201); 409 when it exists.
func (h handlers) create(w http.ResponseWriter, r *http.Request) error {
	raw, err := body(r)
	if err != nil {
		return err
	}
	var head struct {
		EventType string `json:"eventType"`
	}
	_ = json.Unmarshal(raw, &head)
	e, err := h.admin.Save(r.Context(), gateway.SaveParams{EventType: head.EventType, Definition: raw, Operator: httpapi.CallerFrom(r.Context()).Operator})
	if err != nil {
		return err
	}
	httpapi.SetETag(w, e.Version)
	httpapi.WriteJSON(w, http.StatusCreated, entryOf(e))
	return nil
}

func (h handlers) get(w http.ResponseWriter, r *http.Request) error {
	e, err := h.store.EventRegistryGet(r.Context(), store.EventRegistryGetParams{EventType: r.PathValue("eventType")})
	if err != nil {
		return err
	}
	httpapi.SetETag(w, e.Version)
	httpapi.WriteJSON(w, http.StatusOK, entryOf(e))
	return nil
}

// update: PUT a new version; If-Match with the version read is required (428 without, 412
// when another version was saved since).
func (h handlers) update(w http.ResponseWriter, r *http.Request) error {
	v, _, err := httpapi.IfMatch(r, true)
	if err != nil {
		return err
	}
	if v == 0 { // version 0 is never stored: create with POST
		return httpapi.CheckVersion(0, true, -1)
	}
	raw, err := body(r)
	if err != nil {
		return err
	}
	e, err := h.admin.Save(r.Context(), gateway.SaveParams{EventType: r.PathValue("eventType"), ExpectedVersion: v, Definition: raw,
		Operator: httpapi.CallerFrom(r.Context()).Operator})
	if err != nil {
		return err
	}
	httpapi.SetETag(w, e.Version)
	httpapi.WriteJSON(w, http.StatusOK, entryOf(e))
	return nil
}

func (h handlers) versions(w http.ResponseWriter, r *http.Request) error {
	es, err := h.store.EventRegistryListVersions(r.Context(), r.PathValue("eventType"))
	if err != nil {
		return err
	}
	if len(es) == 0 {
		return store.ErrNotFound
	}
	out := make([]Entry, 0, len(es))
	for _, e := range es {
		out = append(out, entryOf(e))
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"versions": out})
	return nil
}

func (h handlers) version(w http.ResponseWriter, r *http.Request) error {
	n, err := strconv.ParseInt(r.PathValue("version"), 10, 64)
	if err != nil || n <= 0 {
		return automation.Errorf(automation.CodeNotFound, "no such version")
	}
	e, err := h.store.EventRegistryGet(r.Context(), store.EventRegistryGetParams{EventType: r.PathValue("eventType"), Version: n})
	if err != nil {
		return err
	}
	httpapi.SetETag(w, e.Version)
	httpapi.WriteJSON(w, http.StatusOK, entryOf(e))
	return nil
}

func (h handlers) export(w http.ResponseWriter, r *http.Request) error {
	doc, err := h.admin.Export(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, doc)
	return nil
}

func (h handlers) importFile(w http.ResponseWriter, r *http.Request) error {
	raw, err := httpapi.ReadBody(r)
	if err != nil {
		return err
	}
	doc, err := gateway.ParseDocument(raw)
	if err != nil {
		return err
	}
	res, err := h.admin.Import(r.Context(), doc, httpapi.CallerFrom(r.Context()).Operator)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"types": res})
	return nil
}
