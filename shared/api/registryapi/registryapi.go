package registryapi

import (
	"context"
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
	httpapi.Mount(r, api, Routes(admin)...)
}

// Routes declares the routes over admin (nil: the declarations only, for checks); each
// answers only a caller that sees every business unit (platformOnly).
func Routes(admin *gateway.Admin) []httpapi.Route {
	h := handlers{admin: admin}
	if admin != nil {
		h.store = admin.Store
	}
	type none = struct{}
	tag := func(e Entry) int64 { return e.Version }
	routes := []httpapi.Route{
		httpapi.Endpoint[none, map[string]any]{Method: "GET", Path: Prefix + "/types", Call: func(ctx context.Context, _ *httpapi.In[none]) (map[string]any, error) {
			es, err := h.store.EventRegistryListLatest(ctx)
			return map[string]any{"types": entries(es)}, err
		}},
		httpapi.Endpoint[json.RawMessage, Entry]{Method: "POST", Path: Prefix + "/types", QueryUnchecked: true, Body: httpapi.BodyRequired,
			Status: http.StatusCreated, ETag: tag, Call: h.create},
		httpapi.Endpoint[none, Entry]{Method: "GET", Path: Prefix + "/types/{eventType}", QueryUnchecked: true, ETag: tag,
			Call: func(ctx context.Context, in *httpapi.In[none]) (Entry, error) {
				e, err := h.store.EventRegistryGet(ctx, store.EventRegistryGetParams{EventType: in.Path("eventType")})
				return entryOf(e), err
			}},
		// PUT a new version; If-Match with the version read is required (428 without, 412
		// when another version was saved since).
		httpapi.Endpoint[json.RawMessage, Entry]{Method: "PUT", Path: Prefix + "/types/{eventType}", QueryUnchecked: true,
			IfMatch: httpapi.IfMatchRequired, Body: httpapi.BodyRequired, ETag: tag,
			Call: func(ctx context.Context, in *httpapi.In[json.RawMessage]) (Entry, error) {
				e, err := h.admin.Save(ctx, gateway.SaveParams{EventType: in.Path("eventType"), ExpectedVersion: in.Version, Definition: in.Body,
					Operator: httpapi.CallerFrom(ctx).Operator})
				return entryOf(e), err
			}},
		httpapi.Endpoint[none, map[string]any]{Method: "GET", Path: Prefix + "/types/{eventType}/versions", QueryUnchecked: true, Call: h.versions},
		httpapi.Endpoint[none, Entry]{Method: "GET", Path: Prefix + "/types/{eventType}/versions/{version}", QueryUnchecked: true, ETag: tag, Call: h.version},
		httpapi.Endpoint[none, any]{Method: "GET", Path: Prefix + "/export", QueryUnchecked: true,
			Call: func(ctx context.Context, _ *httpapi.In[none]) (any, error) { return h.admin.Export(ctx) }},
		httpapi.Raw{Method: "POST", Path: Prefix + "/import", Body: true, Handler: h.importFile},
	}
	for i, rt := range routes {
		routes[i] = platformOnly{rt}
	}
	return routes
}

// platformOnly refuses callers that do not see every business unit, as 404, before the
// route reads anything.
type platformOnly struct{ httpapi.Route }

func (p platformOnly) Serve(w http.ResponseWriter, r *http.Request) error {
	if !httpapi.CallerFrom(r.Context()).Scope.All() {
		return automation.Errorf(automation.CodeNotFound, "the event registry is not found")
	}
	return p.Route.Serve(w, r)
}

func entries(es []store.EventRegistryEntry) []Entry {
	out := make([]Entry, 0, len(es))
	for _, e := range es {
		out = append(out, entryOf(e))
	}
	return out
}

// create: POST a new event type's first version (201); 409 when it exists.
func (h handlers) create(ctx context.Context, in *httpapi.In[json.RawMessage]) (Entry, error) {
	var head struct {
		EventType string `json:"eventType"`
	}
	_ = json.Unmarshal(in.Body, &head)
	e, err := h.admin.Save(ctx, gateway.SaveParams{EventType: head.EventType, Definition: in.Body, Operator: httpapi.CallerFrom(ctx).Operator})
	return entryOf(e), err
}

func (h handlers) versions(ctx context.Context, in *httpapi.In[struct{}]) (map[string]any, error) {
	es, err := h.store.EventRegistryListVersions(ctx, in.Path("eventType"))
	if err != nil {
		return nil, err
	}
	if len(es) == 0 {
		return nil, store.ErrNotFound
	}
	return map[string]any{"versions": entries(es)}, nil
}

func (h handlers) version(ctx context.Context, in *httpapi.In[struct{}]) (Entry, error) {
	n, err := strconv.ParseInt(in.Path("version"), 10, 64)
	if err != nil || n <= 0 {
		return Entry{}, automation.Errorf(automation.CodeNotFound, "no such version")
	}
	e, err := h.store.EventRegistryGet(ctx, store.EventRegistryGetParams{EventType: in.Path("eventType"), Version: n})
	return entryOf(e), err
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
