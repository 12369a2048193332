// Package attributeapi reads the attribute engine's values over HTTP (the AttributesApi
// function, docs/attributes.md#read-api): thin adapters over attribute.Read and the ranking
// index, on shared/httpapi (problem details, strict query, business-unit scope: a business
// unit the caller may not see answers 404, like an unknown one).
//
//	GET /api/attributes/{entityType}/{entityId}?businessUnitId=bu-1[&asOf=RFC 3339]
//	    → 200 {"businessUnitId","entityType","entityId","asOf","attributes":[View…]}
//	      the period rule applied at asOf (default now): last week's weekly count reads 0
//	GET /api/attributes/{entityType}?businessUnitId=bu-1&attribute=total_redeem_count[&top=10]
//	    → 200 {"businessUnitId","entityType","attribute","items":[{"rank","entityId","value"}]}
//	      the top entities by a number attribute, read from the ranking index
package attributeapi

import (
	"context"
	_ "embed" // openapi.yaml
	"encoding/json"
	"net/http"
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
type Registrar interface {
	RegisterHTTP(pattern string, h http.Handler)
}

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
	h := handlers{d: d}
	reg.RegisterHTTP("GET "+PathEntity, api.Handler(h.entity))
	reg.RegisterHTTP("GET "+PathRanking, api.Handler(h.ranking))
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
func (h handlers) scoped(r *http.Request, q httpapi.Query) (string, error) {
	bu := q.String("businessUnitId")
	if strings.TrimSpace(bu) == "" {
		return "", automation.Invalid("businessUnitId", "is required")
	}
	if _, err := businessunit.InScope(r.Context(), h.d.Store, httpapi.CallerFrom(r.Context()).Scope, bu); err != nil {
		if automation.CodeOf(err) == automation.CodeNotFound {
			return "", automation.Errorf(automation.CodeNotFound, "business unit %q not found", bu)
		}
		return "", err
	}
	return bu, nil
}

func (h handlers) entityType(r *http.Request) (string, error) {
	t := r.PathValue("entityType")
	if !entityTypeRE.MatchString(t) {
		return "", automation.Invalid("entityType", "must be an upper-case entity type such as CUSTOMER or ITEM")
	}
	if h.d.EntityTypes != nil {
		known, err := h.d.EntityTypes(r.Context())
		if err != nil {
			return "", err
		}
		if !slices.Contains(known, t) {
			return "", automation.Errorf(automation.CodeNotFound, "entity type %q not found: no counter instruction of the registry writes it%s", t, automation.DidYouMean(t, known))
		}
	}
	return t, nil
}

func (h handlers) entity(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId", "asOf"); err != nil {
		return err
	}
	typ, err := h.entityType(r)
	if err != nil {
		return err
	}
	id := r.PathValue("entityId")
	if id == "" || len(id) > 200 {
		return automation.Invalid("entityId", "must be 1..200 characters")
	}
	bu, err := h.scoped(r, q)
	if err != nil {
		return err
	}
	asOf := h.d.Clock.Now()
	if t, err := q.Time("asOf"); err != nil {
		return err
	} else if t != nil {
		asOf = *t
	}
	views, err := attribute.Read(r.Context(), h.d.Store, store.AttributeEntity{BusinessUnitID: bu, EntityType: typ, EntityID: id}, asOf)
	if err != nil {
		return err
	}
	if views == nil {
		views = []attribute.View{}
	}
	httpapi.WriteJSON(w, http.StatusOK, Entity{BusinessUnitID: bu, EntityType: typ, EntityID: id, AsOf: asOf.UTC(), Attributes: views})
	return nil
}

// MaxTop bounds a ranking.
const MaxTop = 100

func (h handlers) ranking(w http.ResponseWriter, r *http.Request) error {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check("businessUnitId", "attribute", "top"); err != nil {
		return err
	}
	typ, err := h.entityType(r)
	if err != nil {
		return err
	}
	code := q.String("attribute")
	if !codeRE.MatchString(code) {
		return automation.Invalid("attribute", "is required: an attribute code of at most 200 characters")
	}
	top, err := q.Int("top", 10, 1, MaxTop)
	if err != nil {
		return err
	}
	bu, err := h.scoped(r, q)
	if err != nil {
		return err
	}
	rows, err := h.d.Store.AttributeTop(r.Context(), store.AttributeTopParams{BusinessUnitID: bu, EntityType: typ, AttributeCode: code, Limit: top})
	if err != nil {
		return err
	}
	out := Ranking{BusinessUnitID: bu, EntityType: typ, Attribute: code, Items: make([]Ranked, 0, len(rows))}
	for i, row := range rows {
		out.Items = append(out.Items, Ranked{Rank: i + 1, EntityID: row.EntityID, Value: json.Number(row.ValueText)})
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}
