package apptest

import (
	"context"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
	"github.com/automation-platform/automation/shared/store"
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
	r := funchost.NewRouter(nil)
	register(r, httpapi.New(httpapi.Options{}))
	a.Doc.CheckRouter(t, r.HTTPPatterns(), a.RT.Functions.HTTPPatterns(), prefix, renamePath, from, to)
}

// Units stores the business units a test's calls name (store.BusinessUnitUpsert); an error
// fails t at once.
func Units(t testing.TB, rt *app.Runtime, units ...store.BusinessUnit) {
	t.Helper()
	for _, bu := range units {
		if err := rt.Store.BusinessUnitUpsert(context.Background(), bu); err != nil {
			t.Fatal(err)
		}
	}
}
