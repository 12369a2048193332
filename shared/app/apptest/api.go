package apptest

import (
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
)

// API is one API package's document test rig: the whole runtime (RT) and a client that
// sends each request to the runtime's Functions router and checks the request and its
// answer against the package's OpenAPI document (openapitest.Client).
type API struct {
	RT *app.Runtime
	openapitest.Client
}

// OpenAPI opens the runtime as Open does (settings env, a manual clock at start, o) and binds
// doc, the package's raw OpenAPI document, to its Functions router. An invalid document or
// a runtime that does not open fails t at once.
func OpenAPI(t testing.TB, doc []byte, env map[string]string, start time.Time, o app.Options) *API {
	t.Helper()
	rt := Open(t, env, start, o)
	return &API{RT: rt, Client: openapitest.Client{Doc: openapitest.Load(t, doc), Handler: rt.Functions}}
}

// CheckRouter is each API package's router test: the document documents exactly the routes
// register adds to a new router (both ways), those are exactly the runtime's routes under
// prefix, and renaming the operation at renamePath from method from to method to is caught
// (openapitest.Doc.CheckRouter). register gets an httpapi.API with default options.
func (a *API) CheckRouter(t testing.TB, register func(*funchost.Router, *httpapi.API), prefix, renamePath, from, to string) {
	t.Helper()
	a.Doc.CheckRouter(t, Patterns(register), a.RT.Functions.HTTPPatterns(), prefix, renamePath, from, to)
}

// CheckRegistered is the router test of an API package tested without the runtime: doc is
// valid OpenAPI 3.1, it documents exactly the routes register adds to a new router (both
// ways), and renaming the operation at renamePath from method from to method to is caught
// (openapitest.Doc.CheckRegistered).
func CheckRegistered(t testing.TB, doc *openapitest.Doc, register func(*funchost.Router, *httpapi.API), renamePath, from, to string) {
	t.Helper()
	doc.CheckRegistered(t, Patterns(register), renamePath, from, to)
}

// Patterns are the HTTP route patterns register adds to a new router, given an httpapi.API
// with default options.
func Patterns(register func(*funchost.Router, *httpapi.API)) []string {
	r := funchost.NewRouter(nil)
	register(r, httpapi.New(httpapi.Options{}))
	return r.HTTPPatterns()
}

// Units stores the business units a test's calls name (store.BusinessUnitUpsert); an error
// fails t at once.
func Units(t testing.TB, rt *app.Runtime, units ...store.BusinessUnit) {
	t.Helper()
	storetest.Units(t, rt.Store, units...)
}
