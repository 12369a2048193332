package app_test

import (
	"slices"
	"testing"

	"github.com/automation-platform/automation/shared/api/attributeapi"
	"github.com/automation-platform/automation/shared/api/budgetapi"
	"github.com/automation-platform/automation/shared/api/campaignapi"
	"github.com/automation-platform/automation/shared/api/deadletterapi"
	"github.com/automation-platform/automation/shared/api/deliveryapi"
	"github.com/automation-platform/automation/shared/api/deviceapi"
	"github.com/automation-platform/automation/shared/api/eventsapi"
	"github.com/automation-platform/automation/shared/api/inboxapi"
	"github.com/automation-platform/automation/shared/api/keysapi"
	"github.com/automation-platform/automation/shared/api/preferenceapi"
	"github.com/automation-platform/automation/shared/api/registryapi"
	"github.com/automation-platform/automation/shared/api/reportapi"
	"github.com/automation-platform/automation/shared/api/settingsapi"
	"github.com/automation-platform/automation/shared/api/supportapi"
	"github.com/automation-platform/automation/shared/api/templateapi"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
)

// Every API package's declared endpoints (httpapi.Endpoint and Raw: method, path, whether
// a request body is read, the success statuses) agree with their operations in the
// package's hand-written OpenAPI document (openapitest.EndpointDiff). The documents'
// other checks — valid 3.1, the same routes as the router both ways, real exchanges
// validated — are each package's own tests.
func TestEndpointsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name   string
		doc    string // the document, relative to this package
		routes []httpapi.Route
		// gaps are the disagreements known and to be fixed in the document (owned by the
		// documentation pass): pinned, so that any other one still fails.
		gaps []string
	}{
		{"attributeapi", "../api/attributeapi/openapi.yaml", attributeapi.Routes(attributeapi.Deps{}), nil},
		{"budgetapi", "../api/budgetapi/openapi.yaml", budgetapi.Routes(nil), nil},
		{"campaignapi", "../api/campaignapi/openapi.yaml", campaignapi.Routes(nil), nil},
		{"deviceapi", "../api/deviceapi/openapi.yaml", deviceapi.Routes(deviceapi.Deps{}), nil},
		{"preferenceapi", "../api/preferenceapi/openapi.yaml", preferenceapi.Routes(preferenceapi.Deps{}), nil},
		{"eventsapi", "../api/eventsapi/openapi.yaml", eventsapi.Routes(eventsapi.Deps{}), nil},
		{"inboxapi", "../api/inboxapi/openapi.yaml", inboxapi.Routes(nil, nil, inboxapi.Options{}), nil},
		{"keysapi", "../api/keysapi/openapi.yaml", keysapi.Routes(nil), nil},
		{"registryapi", "../api/registryapi/openapi.yaml", registryapi.Routes(nil), nil},
		{"reportapi", "../api/reportapi/openapi.json", reportapi.Routes(nil), nil},
		{"settingsapi", "../api/settingsapi/openapi.yaml", settingsapi.Endpoints(nil), nil},
		{"templateapi", "../api/templateapi/openapi.yaml", templateapi.Routes(templateapi.Deps{}), nil},
		// The support document describes supportapi's, deliveryapi's and deadletterapi's routes.
		{"supportapi", "../api/supportapi/openapi.yaml", slices.Concat(supportapi.Routes(nil), deliveryapi.Routes(nil), deadletterapi.Routes(nil)), nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := openapitest.EndpointDiff(t, openapitest.LoadFile(t, c.doc), httpapi.Metas(c.routes))
			if !slices.Equal(got, c.gaps) {
				t.Fatalf("the endpoints and %s disagree:\n%v\nknown gaps:\n%v", c.doc, got, c.gaps)
			}
		})
	}
}
