package attributeapi_test

import (
	"testing"

	"github.com/automation-platform/automation/shared/api/attributeapi"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
)

// Every declared endpoint agrees with its operation in the OpenAPI document (method, path,
// request body, success statuses).
func TestEndpointsMatchOpenAPI(t *testing.T) {
	openapitest.CheckEndpoints(t, openapitest.Load(t, attributeapi.OpenAPI()), httpapi.Metas(attributeapi.Routes(attributeapi.Deps{})))
}
