package reportapi_test

import (
	"slices"
	"testing"

	"github.com/automation-platform/automation/shared/api/reportapi"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
)

// Every declared endpoint agrees with its operation in the OpenAPI document (method, path,
// request body, success statuses), but for one known gap: PUT of an unknown guid creates
// the subscription and answers 201 (with Location), which openapi.json does not list (the
// document is to gain it; until then the gap is pinned here, so any other is still caught).
func TestEndpointsMatchOpenAPI(t *testing.T) {
	got := openapitest.EndpointDiff(t, openapitest.LoadFile(t, "openapi.json"), httpapi.Metas(reportapi.Routes(nil)))
	want := []string{"PUT /api/report-subscriptions/{guid}: answers 201, not a documented response"}
	if !slices.Equal(got, want) {
		t.Fatalf("endpoints and openapi.json disagree:\n%v\nwant only:\n%v", got, want)
	}
}
