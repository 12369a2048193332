package attributeapi

import (
	"context"
	_ "embed" // openapi.yaml
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of these routes (YAML).
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

// Prefix of every route (the AttributesApi function's route attributes/{*path}).
const Prefix = "/api/attributes/"

// Route patterns.
const (
	PathEntity  = "/api/attributes/{entityType}/{entityId}"
	PathRanking = "/api/attributes/{entityType}"
)

// Registrar is where routes go: funchost.Router.RegisterHTTP.
type Registrar = httpapi.Registrar

// Store is what the routes read.
type Store interface {
	store.AttributeStore
	businessunit.Reader
}

// Deps are the routes' dependencies.
type Deps struct {
	Store Store
	Clock automation.Clock
	// EntityTypes, when set, lists the entity types attributes exist for (the registry's
	// counter instructions, gateway.Registry.EntityTypes): another type answers 404 with a
	// "did you mean" (CUSTOMERS for CUSTOMER) instead of an empty 200. nil: not checked.
	EntityTypes func(ctx context.Context) ([]string, error)
}

// Register adds the attribute routes to reg.
func Register(reg Registrar, api *httpapi.API, d Deps) {
	httpapi.Mount(reg, api, Routes(d)...)
}

// Routes declares the routes over d (the zero Deps: the declarations only, for checks). The
// path is checked before the unit (a bad entity type is 422 whatever the unit), so the unit
// check, which also asks the store, is the handlers' own.
func Routes(d Deps) []httpapi.Route {
	h := handlers{d: d}
	return []httpapi.Route{
		httpapi.Endpoint[struct{}, Entity]{Method: "GET", Path: PathEntity, Query: []string{"businessUnitId", "asOf"}, Call: h.entity},
		httpapi.Endpoint[struct{}, Ranking]{Method: "GET", Path: PathRanking, Query: []string{"businessUnitId", "attribute", "top"}, Call: h.ranking},
	}
}

type handlers struct{ d Deps }

// Entity is the entity answer.
type Entity struct {
	BusinessUnitID string           `json:"businessUnitId"`
	EntityType     string           `json:"entityType"`
	EntityID       string           `json:"entityId"`
	AsOf           time.Time        `json:"asOf"`
	Attributes     []attribute.View `json:"attributes"`
}

// Ranked is one entity of a ranking.
type Ranked struct {
	Rank     int         `json:"rank"`
	EntityID string      `json:"entityId"`
	Value    json.Number `json:"value"`
}

// Ranking is the ranking answer.
type Ranking struct {
	BusinessUnitID string   `json:"businessUnitId"`
	EntityType     string   `json:"entityType"`
	Attribute      string   `json:"attribute"`
	Items          []Ranked `json:"items"`
}

var (
	entityTypeRE = regexp.MustCompile(`^[A-Z][A-Z0-9_]{0,49}$`)
	codeRE       = regexp.MustCompile(`^[A-Za-z0-9._~@+/:{}-]{1,200}$`)
)

// scoped checks businessUnitId: required, in the caller's scope and known (404 otherwise).
func (h handlers) scoped(ctx context.Context, q httpapi.Query) (string, error) {
	bu := q.String("businessUnitId")
	if strings.TrimSpace(bu) == "" {
		return "", automation.Invalid("businessUnitId", "is required")
	}
	if _, err := businessunit.InScope(ctx, h.d.Store, httpapi.CallerFrom(ctx).Scope, bu); err != nil {
		if automation.CodeOf(err) == automation.CodeNotFound {
			return "", automation.Errorf(automation.CodeNotFound, "business unit %q not found", bu)
		}
		return "", err
	}
	return bu, nil
}

func (h handlers) entityType(ctx context.Context, t string) (string, error) {
	if !entityTypeRE.MatchString(t) {
		return "", automation.Invalid("entityType", "must be an upper-case entity type such as CUSTOMER or ITEM")
	}
	if h.d.EntityTypes != nil {
		known, err := h.d.EntityTypes(ctx)
		if err != nil {
			return "", err
		}
		if !slices.Contains(known, t) {
			return "", automation.Errorf(automation.CodeNotFound, "entity type %q not found: no counter instruction of the registry writes it%s", t, automation.DidYouMean(t, known))
		}
	}
	return t, nil
}

func (h handlers) entity(ctx context.Context, in *httpapi.In[struct{}]) (Entity, error) {
	typ, err := h.entityType(ctx, in.Path("entityType"))
	if err != nil {
		return Entity{}, err
	}
	id := in.Path("entityId")
	if id == "" || len(id) > 200 {
		return Entity{}, automation.Invalid("entityId", "must be 1..200 characters")
	}
	bu, err := h.scoped(ctx, in.Query)
	if err != nil {
		return Entity{}, err
	}
	asOf := h.d.Clock.Now()
	if t, err := in.Query.Time("asOf"); err != nil {
		return Entity{}, err
	} else if t != nil {
		asOf = *t
	}
	views, err := attribute.Read(ctx, h.d.Store, store.AttributeEntity{BusinessUnitID: bu, EntityType: typ, EntityID: id}, asOf)
	if err != nil {
		return Entity{}, err
	}
	if views == nil {
		views = []attribute.View{}
	}
	return Entity{BusinessUnitID: bu, EntityType: typ, EntityID: id, AsOf: asOf.UTC(), Attributes: views}, nil
}

// MaxTop bounds a ranking.
const MaxTop = 100

func (h handlers) ranking(ctx context.Context, in *httpapi.In[struct{}]) (Ranking, error) {
	q := in.Query
	typ, err := h.entityType(ctx, in.Path("entityType"))
	if err != nil {
		return Ranking{}, err
	}
	code := q.String("attribute")
	if !codeRE.MatchString(code) {
		return Ranking{}, automation.Invalid("attribute", "is required: an attribute code of at most 200 characters")
	}
	top, err := q.Int("top", 10, 1, MaxTop)
	if err != nil {
		return Ranking{}, err
	}
	bu, err := h.scoped(ctx, q)
	if err != nil {
		return Ranking{}, err
	}
	rows, err := h.d.Store.AttributeTop(ctx, store.AttributeTopParams{BusinessUnitID: bu, EntityType: typ, AttributeCode: code, Limit: top})
	if err != nil {
		return Ranking{}, err
	}
	out := Ranking{BusinessUnitID: bu, EntityType: typ, Attribute: code, Items: make([]Ranked, 0, len(rows))}
	for i, row := range rows {
		out.Items = append(out.Items, Ranked{Rank: i + 1, EntityID: row.EntityID, Value: json.Number(row.ValueText)})
	}
	return out, nil
}
