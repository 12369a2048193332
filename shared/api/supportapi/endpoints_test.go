package supportapi_test

import (
	"testing"

	"github.com/automation-platform/automation/shared/api/deadletterapi"
	"github.com/automation-platform/automation/shared/api/deliveryapi"
	"github.com/automation-platform/automation/shared/api/supportapi"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
)

// Every declared endpoint of the support routes (supportapi, deliveryapi, deadletterapi:
// one document) agrees with its operation in openapi.yaml (method, path, request body,
// success statuses).
func TestEndpointsMatchOpenAPI(t *testing.T) {
	routes := append(supportapi.Routes(nil), deliveryapi.Routes(nil)...)
	routes = append(routes, deadletterapi.Routes(nil)...)
	openapitest.CheckEndpoints(t, openapitest.LoadFile(t, "openapi.yaml"), httpapi.Metas(routes))
}
