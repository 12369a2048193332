package keysapi

import (
	"context"
	_ "embed" // openapi.yaml
	"net/http"
	"time"

	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of these routes (YAML); a test checks it against
// the router in both directions and validates real calls with it.
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

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

// Register adds the key routes to reg.
func Register(reg httpapi.Registrar, api *httpapi.API, s *apikey.Service) {
	httpapi.Mount(reg, api, Routes(s)...)
}

// Routes declares the key routes over s (nil: the declarations only, for checks); each
// answers only a caller that sees every business unit (platformOnly). Only the list reads
// its query string (limit, cursor); the others ignore theirs, as they always did.
func Routes(s *apikey.Service) []httpapi.Route {
	h := handlers{s: s}
	type none = struct{}
	routes := []httpapi.Route{
		httpapi.Endpoint[none, httpapi.Page[apikey.Key]]{Method: "GET", Path: PathKeys, Paging: &httpapi.Paging{Default: DefaultPage, Max: store.MaxBatch}, Call: h.list},
		httpapi.Endpoint[createBody, apikey.Created]{Method: "POST", Path: PathKeys, QueryUnchecked: true, Body: httpapi.BodyRequired,
			Status: http.StatusCreated, Call: h.create},
		httpapi.Endpoint[none, apikey.Key]{Method: "GET", Path: PathKey, QueryUnchecked: true,
			Call: func(ctx context.Context, in *httpapi.In[none]) (apikey.Key, error) {
				return h.s.Get(ctx, in.Path("prefix"))
			}},
		httpapi.Endpoint[none, apikey.Key]{Method: "POST", Path: PathRevoke, QueryUnchecked: true,
			Call: func(ctx context.Context, in *httpapi.In[none]) (apikey.Key, error) {
				return h.s.Revoke(ctx, in.Path("prefix"), operator(ctx))
			}},
		// The body is optional: none (or an empty one) rotates with apikey.DefaultOverlap.
		httpapi.Endpoint[rotateBody, apikey.Created]{Method: "POST", Path: PathRotate, QueryUnchecked: true, Body: httpapi.BodyOptional,
			Status: http.StatusCreated, Call: h.rotate},
	}
	for i, rt := range routes {
		routes[i] = platformOnly{rt}
	}
	return routes
}

type handlers struct{ s *apikey.Service }

// platformOnly refuses a caller that does not see every business unit (404, as if the
// routes did not exist), before the route reads anything.
type platformOnly struct{ httpapi.Route }

func (p platformOnly) Serve(w http.ResponseWriter, r *http.Request) error {
	if !httpapi.CallerFrom(r.Context()).Scope.All() {
		return automation.Errorf(automation.CodeNotFound, "API keys are platform-wide: only a caller that sees every business unit manages them")
	}
	return p.Route.Serve(w, r)
}

// operator is the name a change is audited under: the principal's, else the operator
// header's (possibly empty: keys changes do not require one).
func operator(ctx context.Context) string {
	c := httpapi.CallerFrom(ctx)
	if c.Principal.Name != "" {
		return c.Principal.Name
	}
	return c.Operator
}

// list answers a page of keys by prefix; the cursor is the last prefix of the page.
func (h handlers) list(ctx context.Context, in *httpapi.In[struct{}]) (httpapi.Page[apikey.Key], error) {
	var after string
	if err := in.After("keys", &after); err != nil {
		return httpapi.Page[apikey.Key]{}, err
	}
	keys, err := h.s.List(ctx, after, in.Limit)
	if err != nil {
		return httpapi.Page[apikey.Key]{}, err
	}
	next := ""
	if len(keys) == in.Limit {
		next = keys[len(keys)-1].Prefix
	}
	return httpapi.NewPage(keys, "keys", next)
}

type createBody struct {
	Name          string         `json:"name"`
	Roles         []httpapi.Role `json:"roles"`
	BusinessUnits string         `json:"businessUnits"`
}

// create makes a key (201, Location; the secret is in this answer only).
func (h handlers) create(ctx context.Context, in *httpapi.In[createBody]) (apikey.Created, error) {
	b := in.Body
	c, err := h.s.Create(ctx, apikey.CreateParams{Name: b.Name, Roles: b.Roles, Units: b.BusinessUnits, Operator: operator(ctx)})
	if err != nil {
		return apikey.Created{}, err
	}
	in.Header.Set("Location", PathKeys+"/"+c.Prefix)
	return c, nil
}

type rotateBody struct {
	// OverlapSeconds is how long the old key keeps working (apikey.DefaultOverlap when 0).
	OverlapSeconds int64 `json:"overlapSeconds"`
}

// rotate makes the key's successor (201, Location); the old one works OverlapSeconds more.
func (h handlers) rotate(ctx context.Context, in *httpapi.In[rotateBody]) (apikey.Created, error) {
	b := in.Body
	if b.OverlapSeconds < 0 || b.OverlapSeconds > int64(apikey.MaxOverlap/time.Second) {
		return apikey.Created{}, automation.Invalid("overlapSeconds", "is 0 (the default, %s) to %d", apikey.DefaultOverlap, int64(apikey.MaxOverlap/time.Second))
	}
	c, err := h.s.Rotate(ctx, in.Path("prefix"), time.Duration(b.OverlapSeconds)*time.Second, operator(ctx))
	if err != nil {
		return apikey.Created{}, err
	}
	in.Header.Set("Location", PathKeys+"/"+c.Prefix)
	return c, nil
}
