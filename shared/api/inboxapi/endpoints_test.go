package inboxapi_test

import (
	"slices"
	"testing"

	"github.com/automation-platform/automation/shared/api/inboxapi"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
)

// Every declared endpoint agrees with its operation in the OpenAPI document (method, path,
// request body, success statuses), but for one known gap: mark-read tolerates an empty
// JSON object as its body, which openapi.yaml does not describe (the document is to gain an
// optional requestBody; until then the gap is pinned here, so any other is still caught).
func TestEndpointsMatchOpenAPI(t *testing.T) {
	doc := openapitest.LoadFile(t, "openapi.yaml")
	got := openapitest.EndpointDiff(t, doc, httpapi.Metas(inboxapi.Routes(nil, nil, inboxapi.Options{})))
	want := []string{"POST /api/inbox/{recipientId}/messages/{id}/read: the endpoint reads a body: true, the document has a requestBody: false"}
	if !slices.Equal(got, want) {
		t.Fatalf("endpoints and openapi.yaml disagree:\n%v\nwant only:\n%v", got, want)
	}
}
