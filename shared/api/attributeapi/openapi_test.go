package attributeapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/attributeapi"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

type env struct{ *apptest.API }

func newEnv(t *testing.T) *env {
	t.Helper()
	a := apptest.OpenAPI(t, attributeapi.OpenAPI(), map[string]string{"AUTOMATION_API_BUSINESS_UNITS": "bu-syd"}, time.Date(2026, 7, 14, 0, 0, 0, 0, time.UTC), app.Options{})
	apptest.Units(t, a.RT, store.BusinessUnit{ID: "bu-syd", Name: "Sydney", TimeZoneID: "Australia/Sydney"}, store.BusinessUnit{ID: "bu-other", Name: "Other", TimeZoneID: "UTC"})
	// The entity types the API knows are the registry's (attributeapi.Deps.EntityTypes).
	if _, err := a.RT.Registry.Save(context.Background(), gateway.SaveParams{EventType: "Redeem_Item", Operator: "test",
		Definition: []byte(`{"eventType":"Redeem_Item","class":"COUNTER","schema":{"type":"object"},"counterInstructions":[
		  {"attribute_code":"redeems","entity_type":"CUSTOMER","operation":"INCREMENT"},
		  {"attribute_code":"total_redeem_count","entity_type":"ITEM","entity_id_pointer":"/itemId","operation":"INCREMENT","hot":true}]}`)}); err != nil {
		t.Fatal(err)
	}
	return &env{a}
}

// TestOpenAPIDocumentMatchesRouter: openapi.yaml is valid OpenAPI 3.1 and documents exactly
// the routes Register adds, which are the runtime's routes under /api/attributes/.
func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	e := newEnv(t)
	e.CheckRouter(t, func(r *funchost.Router, api *httpapi.API) { attributeapi.Register(r, api, attributeapi.Deps{}) }, attributeapi.Prefix, "/api/attributes/{entityType}", "get", "post")
}

func (e *env) track(t *testing.T, id, at string, ins string) {
	t.Helper()
	body := `{"event_id":"` + id + `","customer_id":"C1","business_unit_id":"bu-syd","timestamp":"` + at + `","instructions":[` + ins + `]}`
	if _, err := e.RT.Attributes.Handle(context.Background(), []byte(body)); err != nil {
		t.Fatal(err)
	}
}

// Reads answer as documented: the period rule at asOf (the weekly count of the week of 6
// July reads 4 then, 0 in the week of 13 July in Sydney), hot counters with their unfolded
// increments, the ranking from the index, and the refusals.
func TestReadsMatchTheDocument(t *testing.T) {
	e := newEnv(t)
	weekly := `{"target_entity_id":"C1","entity_type":"CUSTOMER","attribute_code":"weekly_view_count","operation":"INCREMENT","period_type":"WEEKLY"}`
	for i := 0; i < 4; i++ {
		e.track(t, fmt.Sprint("v", i), "2026-07-12T13:00:00Z", weekly+`,{"target_entity_id":"C1","entity_type":"CUSTOMER","attribute_code":"recent","operation":"APPEND_UNIQUE","value":"SKU-`+fmt.Sprint(i)+`","max_items":2}`)
	}
	for i, n := range []int{3, 5, 1} {
		for j := 0; j < n; j++ {
			e.track(t, fmt.Sprintf("r%d-%d", i, j), "2026-07-12T13:00:00Z", `{"target_entity_id":"SKU-`+fmt.Sprint(i)+`","entity_type":"ITEM","attribute_code":"total_redeem_count","operation":"INCREMENT","hot":true}`)
		}
	}
	get := func(path string, want int) map[string]any {
		t.Helper()
		r := e.Doc.Call(t, e.RT.Functions, "GET", path, "")
		if r.Code != want {
			t.Fatalf("GET %s: %d %s, want %d", path, r.Code, r.Body, want)
		}
		var m map[string]any
		_ = json.Unmarshal(r.Body, &m)
		return m
	}
	value := func(m map[string]any, code string) any {
		for _, a := range m["attributes"].([]any) {
			if a := a.(map[string]any); a["attribute"] == code {
				return a["value"]
			}
		}
		return nil
	}
	then := get("/api/attributes/CUSTOMER/C1?businessUnitId=bu-syd&asOf=2026-07-12T13:59:00Z", 200) // Sunday 23:59 Sydney
	now := get("/api/attributes/CUSTOMER/C1?businessUnitId=bu-syd", 200)                            // 14 July: the next week
	if fmt.Sprint(value(then, "weekly_view_count")) != "4" || fmt.Sprint(value(now, "weekly_view_count")) != "0" {
		t.Fatalf("weekly count then %v, now %v", value(then, "weekly_view_count"), value(now, "weekly_view_count"))
	}
	if fmt.Sprint(value(now, "recent")) != "[SKU-3 SKU-2]" {
		t.Fatalf("recent %v", value(now, "recent"))
	}
	item := get("/api/attributes/ITEM/SKU-1?businessUnitId=bu-syd", 200)
	if fmt.Sprint(value(item, "total_redeem_count")) != "5" {
		t.Fatalf("hot counter before the flush: %v", item)
	}
	if rk := get("/api/attributes/ITEM?businessUnitId=bu-syd&attribute=total_redeem_count", 200); len(rk["items"].([]any)) != 0 {
		t.Fatalf("ranking before the flush: %v", rk)
	}
	if _, err := e.RT.AttributeFlusher.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	rk := get("/api/attributes/ITEM?businessUnitId=bu-syd&attribute=total_redeem_count&top=2", 200)
	if b, _ := json.Marshal(rk["items"]); string(b) != `[{"entityId":"SKU-1","rank":1,"value":5},{"entityId":"SKU-0","rank":2,"value":3}]` {
		t.Fatalf("ranking %s", b)
	}
	if got := get("/api/attributes/CUSTOMER/nobody?businessUnitId=bu-syd", 200); len(got["attributes"].([]any)) != 0 {
		t.Fatalf("unknown entity: %v", got)
	}
	get("/api/attributes/CUSTOMER/C1?businessUnitId=bu-other", 404)   // out of scope
	get("/api/attributes/CUSTOMER/C1?businessUnitId=bu-nowhere", 404) // unknown (in scope "bu-syd" only, so also out of scope)
	// An entity type no counter instruction writes is 404, not an empty 200 (a typo).
	if got := get("/api/attributes/CUSTOMERS/C1?businessUnitId=bu-syd", 404); !strings.Contains(fmt.Sprint(got["detail"]), `did you mean "CUSTOMER"?`) {
		t.Fatalf("CUSTOMERS: %v", got)
	}
	get("/api/attributes/ITEMS?businessUnitId=bu-syd&attribute=total_redeem_count", 404)
	get("/api/attributes/CUSTOMER/C1", 422)
	get("/api/attributes/customer/C1?businessUnitId=bu-syd", 422)
	get("/api/attributes/CUSTOMER/C1?businessUnitId=bu-syd&asOf=yesterday", 400)
	get("/api/attributes/CUSTOMER/C1?businessUnitId=bu-syd&when=now", 400)
	get("/api/attributes/ITEM?businessUnitId=bu-syd", 422)
	get("/api/attributes/ITEM?businessUnitId=bu-syd&attribute=x&top=1000", 400)
}
