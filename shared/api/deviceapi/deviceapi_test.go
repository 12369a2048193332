package deviceapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/deviceapi"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

var t0 = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

// newEnv serves the device routes to a caller who sees bu-1 only.
func newEnv(t *testing.T) (*funchost.Router, store.Store) {
	t.Helper()
	st := sqlitetest.Open(t)
	scope := automation.ParseScope("bu-1")
	api := httpapi.New(httpapi.Options{BusinessUnits: &scope, Idempotency: st, Clock: automation.NewManualClock(t0)})
	r := funchost.NewRouter(nil)
	deviceapi.Register(r, api, deviceapi.Deps{Store: st, Clock: automation.NewManualClock(t0)})
	return r, st
}

func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	t.Parallel()
	doc := openapitest.LoadFile(t, "openapi.yaml")
	apptest.CheckRegistered(t, doc, func(r *funchost.Router, api *httpapi.API) { deviceapi.Register(r, api, deviceapi.Deps{}) }, "/api/devices/{customerId}", "get", "post")
}

// TestDeviceAPIMatchesOpenAPI makes real calls — register, again, on another platform,
// list, delete, delete again, bad input naming each member, the bound, out of scope — checks
// each status and validates request and answer against openapi.yaml.
func TestDeviceAPIMatchesOpenAPI(t *testing.T) {
	t.Parallel()
	r, st := newEnv(t)
	doc := openapitest.LoadFile(t, "openapi.yaml")
	call := openapitest.Client{Doc: doc, Handler: r}.Expecting(t)
	const dev = "/api/devices/cust-1/fGx1:APA91bH-abc_def?businessUnitId=bu-1"
	android := `{"platform":"android","app":"com.example.loyalty"}`
	var d deviceapi.Device
	if err := json.Unmarshal(call(201, "PUT", dev, android).Body, &d); err != nil || d.Token != "fGx1:APA91bH-abc_def" || d.Version != 1 {
		t.Fatalf("registered %+v %v", d, err)
	}
	call(200, "PUT", dev, android) // idempotent
	call(200, "PUT", dev, `{"platform":"ios","app":"com.example.loyalty"}`)
	var page deviceapi.Page
	if err := json.Unmarshal(call(200, "GET", "/api/devices/cust-1?businessUnitId=bu-1", "").Body, &page); err != nil || len(page.Items) != 1 || page.Items[0].Platform != "ios" {
		t.Fatalf("list %+v %v", page, err)
	}
	call(204, "DELETE", dev, "")
	call(404, "DELETE", dev, "")
	call(201, "PUT", dev, android) // registered again after deletion
	// Bad input: each member named, nothing stored.
	rec := call(422, "PUT", "/api/devices/cust-1/has%20space?businessUnitId=bu-1", `{"platform":"blackberry","app":""}`)
	for _, member := range []string{`"token"`, `"platform"`, `"app"`} {
		if !strings.Contains(string(rec.Body), `"field":`+member) {
			t.Errorf("422 does not name %s: %s", member, rec.Body)
		}
	}
	long := strings.Repeat("a", store.MaxPushTokenBytes+1)
	if rec := call(422, "PUT", "/api/devices/cust-1/"+long+"?businessUnitId=bu-1", android); !strings.Contains(string(rec.Body), "4000") ||
		!strings.Contains(string(rec.Body), `"field":"token"`) {
		t.Errorf("an over-long token: %s", rec.Body)
	}
	call(400, "PUT", dev+"&extra=1", android)
	// The bound.
	for i := 1; i < store.MaxPushDevicesPerCustomer; i++ {
		call(201, "PUT", fmt.Sprintf("/api/devices/cust-1/tok-%d?businessUnitId=bu-1", i), android)
	}
	call(409, "PUT", "/api/devices/cust-1/tok-one-more?businessUnitId=bu-1", android)
	// Out of scope: 404, nothing written.
	call(404, "PUT", "/api/devices/cust-1/tok-x?businessUnitId=bu-2", android)
	call(404, "GET", "/api/devices/cust-1?businessUnitId=bu-2", "")
	call(404, "DELETE", "/api/devices/cust-1/tok-1?businessUnitId=bu-2", "")
	if ds, err := st.PushDeviceList(context.Background(), "bu-2", "cust-1"); err != nil || len(ds) != 0 {
		t.Fatalf("bu-2 has %v %v", ds, err)
	}
}
