package apidoc

import (
	"bytes"
	_ "embed" // openapi.yaml
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/pb33f/go-yaml"

	"github.com/automation-platform/automation/shared/api/attributeapi"
	"github.com/automation-platform/automation/shared/api/budgetapi"
	"github.com/automation-platform/automation/shared/api/campaignapi"
	"github.com/automation-platform/automation/shared/api/deviceapi"
	"github.com/automation-platform/automation/shared/api/eventsapi"
	"github.com/automation-platform/automation/shared/api/inboxapi"
	"github.com/automation-platform/automation/shared/api/keysapi"
	"github.com/automation-platform/automation/shared/api/preferenceapi"
	"github.com/automation-platform/automation/shared/api/registryapi"
	"github.com/automation-platform/automation/shared/api/reportapi"
	"github.com/automation-platform/automation/shared/api/sessionsapi"
	"github.com/automation-platform/automation/shared/api/settingsapi"
	"github.com/automation-platform/automation/shared/api/supportapi"
	"github.com/automation-platform/automation/shared/api/templateapi"
	"github.com/automation-platform/automation/shared/httpapi"
)

//go:embed openapi.yaml
var ownDocument []byte

// Path is the route of the bundled document.
const Path = "/api/openapi.json"

// Source is one API's OpenAPI document: Tag names the API in the bundle (its operations'
// tag, and the prefix of a component renamed because another API has one of the same name
// with other content); Raw is the document, YAML or JSON.
type Source struct {
	Tag string
	Raw []byte
}

// Sources are the product's API documents in bundle order (a component name goes to the
// first document that defines it). The support document also covers the delivery support
// routes (deliveryapi) and the dead letters (deadletterapi).
func Sources() []Source {
	return []Source{
		{"Settings", settingsapi.OpenAPI()},
		{"Events", eventsapi.OpenAPI()},
		{"EventRegistry", registryapi.OpenAPI()},
		{"Attributes", attributeapi.OpenAPI()},
		{"Campaigns", campaignapi.OpenAPI()},
		{"Budgets", budgetapi.OpenAPI()},
		{"Inbox", inboxapi.OpenAPI()},
		{"Reports", reportapi.OpenAPI()},
		{"Support", supportapi.OpenAPI()},
		{"Templates", templateapi.OpenAPI()},
		{"Devices", deviceapi.OpenAPI()},
		{"Preferences", preferenceapi.OpenAPI()},
		{"ApiKeys", keysapi.OpenAPI()},
		{"ConsoleSessions", sessionsapi.OpenAPI()},
		{"APIDescription", ownDocument},
	}
}

// info is the bundle's info object.
var info = map[string]any{
	"title":   "Automation platform API",
	"version": "1.0.0",
	"description": "Every HTTP API of the automation platform in one OpenAPI 3.1 document, bundled from each API's own " +
		"document (shared/api/apidoc). One tag per API, with its document's description. Conventions for every route " +
		"(docs/api-conventions.md): RFC 9457 problem details with a stable `code`, strict JSON and query strings, " +
		"ETag / If-Match on `version`, Idempotency-Key on POST, and business-unit scope (a resource outside the " +
		"caller's business units answers 404).",
}

// componentKinds are the component maps a $ref can point into.
var componentKinds = []string{"schemas", "parameters", "responses", "headers", "requestBodies", "examples", "links", "callbacks", "pathItems"}

var methods = []string{"get", "put", "post", "delete", "patch", "head", "options", "trace"}

// Bundle merges sources into one OpenAPI 3.1 document (see the package doc for the rules)
// and returns it as indented JSON with sorted keys, ending in a newline. It fails on a
// document that does not parse, a path or an operationId defined twice, or a $ref that
// points outside its document's components.
func Bundle(sources []Source) ([]byte, error) {
	paths := map[string]any{}
	components := map[string]map[string]any{}
	schemes := map[string]any{}
	var tags []any
	var servers any
	opIDs := map[string]string{}
	for _, src := range sources {
		var doc map[string]any
		if err := yaml.Unmarshal(src.Raw, &doc); err != nil { // YAML is a superset of JSON
			return nil, fmt.Errorf("apidoc: %s: %w", src.Tag, err)
		}
		doc = normalize(doc).(map[string]any)
		if servers == nil {
			servers = doc["servers"]
		}
		comps, _ := doc["components"].(map[string]any)
		// Security schemes: one per kind, named by the first document that has it.
		schemeNames := map[string]string{}
		own, _ := comps["securitySchemes"].(map[string]any)
		for _, name := range slices.Sorted(maps.Keys(own)) {
			s := own[name]
			found := ""
			for _, have := range slices.Sorted(maps.Keys(schemes)) {
				if sameScheme(schemes[have], s) {
					found = have
					break
				}
			}
			if found == "" {
				found = name
				for i := 2; schemes[found] != nil; i++ {
					found = fmt.Sprintf("%s%d", name, i)
				}
				schemes[found] = s
			}
			schemeNames[name] = found
		}
		// Components: the same name with other content is renamed <Tag><Name>; "other content"
		// counts the $refs as renamed, so a component that points at a renamed one is renamed
		// too (repeated until nothing more is).
		renames := map[string]string{} // "#/components/kind/Name" → the ref in the bundle
		for _, kind := range componentKinds {
			own, _ := comps[kind].(map[string]any)
			for name := range own {
				renames["#/components/"+kind+"/"+name] = "#/components/" + kind + "/" + name
			}
		}
		for changed := true; changed; {
			changed = false
			for _, kind := range componentKinds {
				own, _ := comps[kind].(map[string]any)
				for _, name := range slices.Sorted(maps.Keys(own)) {
					key := "#/components/" + kind + "/" + name
					have, taken := components[kind][name]
					if renames[key] != key || !taken {
						continue
					}
					var ignored error
					if !reflect.DeepEqual(have, rewriteRefs(deepCopy(own[name]), renames, &ignored)) {
						target := src.Tag + name
						if _, taken := components[kind][target]; taken {
							return nil, fmt.Errorf("apidoc: %s: component %s/%s renamed to %s, which is taken", src.Tag, kind, name, target)
						}
						renames[key], changed = "#/components/"+kind+"/"+target, true
					}
				}
			}
		}
		var refErr error
		doc = rewriteRefs(doc, renames, &refErr).(map[string]any)
		if refErr != nil {
			return nil, fmt.Errorf("apidoc: %s: %w", src.Tag, refErr)
		}
		comps, _ = doc["components"].(map[string]any)
		for _, kind := range componentKinds {
			own, _ := comps[kind].(map[string]any)
			for _, name := range slices.Sorted(maps.Keys(own)) {
				target := strings.TrimPrefix(renames["#/components/"+kind+"/"+name], "#/components/"+kind+"/")
				if components[kind] == nil {
					components[kind] = map[string]any{}
				}
				if have, taken := components[kind][target]; taken && !reflect.DeepEqual(have, own[name]) {
					// Never after the renames above; a bundle must not drop a component.
					return nil, fmt.Errorf("apidoc: %s: component %s/%s would replace another document's", src.Tag, kind, target)
				}
				components[kind][target] = own[name]
			}
		}
		security := renameSecurity(doc["security"], schemeNames)
		docPaths, _ := doc["paths"].(map[string]any)
		for _, p := range slices.Sorted(maps.Keys(docPaths)) {
			if _, dup := paths[p]; dup {
				return nil, fmt.Errorf("apidoc: %s: path %s is in another document too", src.Tag, p)
			}
			item, _ := docPaths[p].(map[string]any)
			for _, m := range methods {
				op, ok := item[m].(map[string]any)
				if !ok {
					continue
				}
				id, _ := op["operationId"].(string)
				if id == "" {
					return nil, fmt.Errorf("apidoc: %s: %s %s has no operationId", src.Tag, strings.ToUpper(m), p)
				}
				if other, dup := opIDs[id]; dup {
					return nil, fmt.Errorf("apidoc: %s: operationId %s of %s %s is %s's too", src.Tag, id, strings.ToUpper(m), p, other)
				}
				opIDs[id] = strings.ToUpper(m) + " " + p
				if s, has := op["security"]; has {
					op["security"] = renameSecurity(s, schemeNames)
				} else if security != nil {
					op["security"] = security
				}
				opTags, _ := op["tags"].([]any)
				if !slices.Contains(opTags, any(src.Tag)) {
					op["tags"] = append([]any{src.Tag}, opTags...)
				}
			}
			paths[p] = item
		}
		docInfo, _ := doc["info"].(map[string]any)
		title, _ := docInfo["title"].(string)
		desc, _ := docInfo["description"].(string)
		tags = append(tags, map[string]any{"name": src.Tag, "description": strings.TrimSpace(title + "\n\n" + desc)})
	}
	allComps := map[string]any{"securitySchemes": schemes}
	for kind, m := range components {
		allComps[kind] = m
	}
	out := map[string]any{
		"openapi":    "3.1.0",
		"info":       info,
		"servers":    servers,
		"tags":       tags,
		"paths":      paths,
		"components": allComps,
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // descriptions keep their <, > and &
	enc.SetIndent("", "  ")
	if err := enc.Encode(out); err != nil {
		return nil, fmt.Errorf("apidoc: %w", err)
	}
	return b.Bytes(), nil
}

// normalize turns what the YAML decoder returns into JSON's shapes: map[string]any with
// string keys (a YAML key like 200 or true becomes its text), []any, and numbers as
// float64 or int as decoded.
func normalize(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			t[k] = normalize(x)
		}
		return t
	case map[any]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[fmt.Sprint(k)] = normalize(x)
		}
		return m
	case []any:
		for i, x := range t {
			t[i] = normalize(x)
		}
		return t
	}
	return v
}

// deepCopy copies a decoded JSON value.
func deepCopy(v any) any {
	switch t := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(t))
		for k, x := range t {
			m[k] = deepCopy(x)
		}
		return m
	case []any:
		l := make([]any, len(t))
		for i, x := range t {
			l[i] = deepCopy(x)
		}
		return l
	}
	return v
}

// rewriteRefs returns v with every local $ref renamed by renames; a $ref that is not a
// local component reference, or names a component its document lacks, sets *err.
func rewriteRefs(v any, renames map[string]string, err *error) any {
	switch t := v.(type) {
	case map[string]any:
		for k, x := range t {
			if k == "$ref" {
				ref, _ := x.(string)
				to, ok := renames[ref]
				if !ok && *err == nil {
					*err = fmt.Errorf("$ref %q does not name a component of its document", ref)
				}
				if ok {
					t[k] = to
				}
				continue
			}
			t[k] = rewriteRefs(x, renames, err)
		}
	case []any:
		for i, x := range t {
			t[i] = rewriteRefs(x, renames, err)
		}
	}
	return v
}

// renameSecurity returns a security requirement list with its scheme names renamed.
func renameSecurity(v any, names map[string]string) any {
	list, ok := v.([]any)
	if !ok {
		return v
	}
	out := make([]any, 0, len(list))
	for _, req := range list {
		r, _ := req.(map[string]any)
		n := make(map[string]any, len(r))
		for k, scopes := range r {
			if to, ok := names[k]; ok {
				k = to
			}
			n[k] = scopes
		}
		out = append(out, n)
	}
	return out
}

// sameScheme reports whether two security schemes are the same apart from their
// descriptions.
func sameScheme(a, b any) bool {
	strip := func(v any) map[string]any {
		m, _ := v.(map[string]any)
		c := make(map[string]any, len(m))
		for k, x := range m {
			if k != "description" {
				c[k] = x
			}
		}
		return c
	}
	return reflect.DeepEqual(strip(a), strip(b))
}

// Registrar is where the route goes (funchost.Router.RegisterHTTP).
type Registrar interface {
	RegisterHTTP(pattern string, h http.Handler)
}

// Register serves GET /api/openapi.json: the bundle of Sources, built once here (a document
// that does not bundle is an error at start-up, not on the first call). The route is
// authenticated like every other (api's token or function key); it takes no query
// parameters.
func Register(r Registrar, api *httpapi.API) error {
	doc, err := Bundle(Sources())
	if err != nil {
		return err
	}
	r.RegisterHTTP("GET "+Path, api.Handler(func(w http.ResponseWriter, req *http.Request) error {
		if err := httpapi.NewQuery(req.URL.Query()).Check(); err != nil {
			return err
		}
		w.Header().Set("Content-Type", "application/json")
		_, err := w.Write(doc)
		return err
	}))
	return nil
}
