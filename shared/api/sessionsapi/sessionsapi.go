package sessionsapi

import (
	"context"
	_ "embed" // openapi.yaml
	"net/http"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/session"
)

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of these routes (YAML).
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

// FunctionName is the Azure Function whose route forwards /api/console-sessions/...
const FunctionName = "ConsoleSessionsApi"

// PathEnd ends a principal's console sessions.
const PathEnd = "/api/console-sessions/end"

// Register adds the routes to reg.
func Register(reg httpapi.Registrar, api *httpapi.API, a *session.Admin) {
	httpapi.Mount(reg, api, Routes(a)...)
}

// Routes declares the routes over a (nil: the declarations only, for checks). Sessions are
// platform-wide, like API keys: only a caller that sees every business unit ends them.
func Routes(a *session.Admin) []httpapi.Route {
	return []httpapi.Route{platformOnly{httpapi.Endpoint[endBody, session.EndResult]{Method: "POST", Path: PathEnd, QueryUnchecked: true,
		Body: httpapi.BodyRequired, Call: func(ctx context.Context, in *httpapi.In[endBody]) (session.EndResult, error) {
			return a.EndPrincipal(ctx, in.Body.Principal)
		}}}}
}

type endBody struct {
	// Principal is whose sessions end: "oidc:jane", "key:support-desk", "bootstrap".
	Principal string `json:"principal"`
}

// platformOnly refuses a caller that does not see every business unit (404, as if the
// route did not exist), before the route reads anything.
type platformOnly struct{ httpapi.Route }

func (p platformOnly) Serve(w http.ResponseWriter, r *http.Request) error {
	if !httpapi.CallerFrom(r.Context()).Scope.All() {
		return automation.Errorf(automation.CodeNotFound, "console sessions are platform-wide: only a caller that sees every business unit ends them")
	}
	return p.Route.Serve(w, r)
}
