package deliveryapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/deliveryapi"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/store/storetest"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

type env struct {
	st     store.Store
	router *funchost.Router
	proj   *delivery.Projector
	clock  *automation.ManualClock
}

// newEnv stores three UNKNOWN deliveries in bu-1 and one in bu-2, and serves the routes for
// a caller allowed to see bu-1 only.
func newEnv(t *testing.T) *env {
	t.Helper()
	ctx := context.Background()
	st := sqlitetest.Open(t)
	clock := automation.NewManualClock(storetest.T0)
	for i, bu := range []string{"bu-1", "bu-1", "bu-1", "bu-2"} {
		c := storetest.Candidate(i, storetest.T0)
		if _, err := st.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: storetest.T0, Candidates: []automation.Candidate{c}}); err != nil {
			t.Fatal(err)
		}
		rows, _ := st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: storetest.T0, Lease: time.Minute, Limit: 1})
		jobs, _, _ := delivery.Build([]delivery.Request{{SchedulerKey: c.SchedulerKey, BusinessUnitID: bu, Channel: "log",
			Recipient: fmt.Sprintf("u%d@example.test", i), Template: "t", LocalDate: "2026-10-01"}})
		if err := st.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: rows[0].ID, Token: rows[0].Version, Now: storetest.T0, Deliveries: jobs}); err != nil {
			t.Fatal(err)
		}
		cl, _ := st.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: jobs[0].DeliveryKey, Now: storetest.T0, Lease: time.Minute})
		if err := st.NotificationFinish(ctx, store.NotificationFinishParams{ID: cl.Job.ID, Token: cl.Job.Version, Now: storetest.T0, Status: store.NotificationUnknown, Error: "timeout"}); err != nil {
			t.Fatal(err)
		}
	}
	scope := automation.BusinessUnits("bu-1")
	api := httpapi.New(httpapi.Options{BusinessUnits: &scope, Clock: clock})
	r := funchost.NewRouter(nil)
	deliveryapi.Register(r, api, &delivery.Support{Store: st, Clock: clock})
	return &env{st: st, router: r, clock: clock, proj: &delivery.Projector{Store: st, Clock: clock}}
}

func (e *env) do(t *testing.T, method, path, body string, hdr map[string]string) (int, http.Header, map[string]any) {
	t.Helper()
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	rec := httptest.NewRecorder()
	e.router.ServeHTTP(rec, req)
	var m map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &m)
	return rec.Code, rec.Header(), m
}

func TestUnknownQueueListAndResolve(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	code, _, page := e.do(t, "GET", "/api/support/deliveries/unknown?businessUnitId=bu-1&limit=2", "", nil)
	items, _ := page["items"].([]any)
	if code != 200 || len(items) != 2 || page["nextCursor"] == nil {
		t.Fatalf("page 1: %d %v", code, page)
	}
	code, _, page2 := e.do(t, "GET", "/api/support/deliveries/unknown?businessUnitId=bu-1&limit=2&cursor="+page["nextCursor"].(string), "", nil)
	if items2, _ := page2["items"].([]any); code != 200 || len(items2) != 1 || page2["nextCursor"] != nil {
		t.Fatalf("page 2: %d %v", code, page2)
	}
	// A cursor made for another business unit's list is refused.
	if code, _, _ := e.do(t, "GET", "/api/support/deliveries/unknown?businessUnitId=bu-3&cursor="+page["nextCursor"].(string), "", nil); code != 404 {
		t.Fatalf("out of scope: %d", code)
	}
	if code, _, _ := e.do(t, "GET", "/api/support/deliveries/unknown?businessUnitId=bu-2", "", nil); code != 404 {
		t.Fatalf("bu-2 is out of the caller's scope: %d", code)
	}
	if code, _, _ := e.do(t, "GET", "/api/support/deliveries/unknown?businessUnitId=bu-1&sort=x", "", nil); code != 400 {
		t.Fatalf("unknown parameter: %d", code)
	}
	first := items[0].(map[string]any)
	key, version := first["deliveryKey"].(string), int64(first["version"].(float64))
	path := "/api/support/deliveries/unknown/" + key + "/resolve"
	body := `{"businessUnitId":"bu-1","status":"Sent","reason":"provider portal shows it delivered"}`
	op := map[string]string{"X-Automation-Operator": "ops@example.test", "If-Match": fmt.Sprintf(`"%d"`, version)}
	cases := []struct {
		name string
		body string
		hdr  map[string]string
		code int
	}{
		{"no If-Match", body, map[string]string{"X-Automation-Operator": "ops"}, 428},
		{"no operator", body, map[string]string{"If-Match": op["If-Match"]}, 400},
		{"stale version", body, map[string]string{"X-Automation-Operator": "ops", "If-Match": fmt.Sprintf(`"%d"`, version-1)}, 412},
		{"bad status", `{"businessUnitId":"bu-1","status":"Queued","reason":"x"}`, op, 422},
		{"unknown field", `{"businessUnitId":"bu-1","status":"Sent","reason":"x","force":true}`, op, 400},
		{"other business unit", `{"businessUnitId":"bu-2","status":"Sent","reason":"x"}`, op, 404},
	}
	for _, tc := range cases {
		if code, _, p := e.do(t, "POST", path, tc.body, tc.hdr); code != tc.code {
			t.Errorf("%s: %d %v, want %d", tc.name, code, p, tc.code)
		}
	}
	code, hdr, res := e.do(t, "POST", path, body, op)
	if code != 200 || res["status"] != "Sent" || res["resolvedBy"] != "ops@example.test" || hdr.Get("ETag") != fmt.Sprintf(`"%d"`, version+1) {
		t.Fatalf("resolve: %d %v %v", code, res, hdr)
	}
	if code, _, _ := e.do(t, "POST", path, body, map[string]string{"X-Automation-Operator": "ops", "If-Match": hdr.Get("ETag")}); code != 409 {
		t.Fatalf("resolved twice: %d", code)
	}
}

func TestCountsPerDayWithFreshness(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	// Project every fact in the outbox (as the DeliveryFactProjection function does).
	msgs, _ := e.st.OutboxListUnpublished(context.Background(), store.OutboxListParams{Limit: 100})
	for _, row := range msgs {
		items, err := row.Items() // an envelope's facts, or the row's one message
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range items {
			if m.Destination == topology.DeliveryFactsTopic {
				if err := e.proj.Handle(context.Background(), busMsg(m)); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	code, _, c := e.do(t, "GET", "/api/support/deliveries/counts?businessUnitId=bu-1&from=2026-10-01&to=2026-10-07", "", nil)
	days, _ := c["days"].([]any)
	if code != 200 || len(days) != 1 || days[0].(map[string]any)["unknown"].(float64) != 3 || c["freshTo"] != "2026-10-01T00:00:00Z" {
		t.Fatalf("counts: %d %v", code, c)
	}
	for q, want := range map[string]int{
		"businessUnitId=bu-2&from=2026-10-01&to=2026-10-07": 404,
		"businessUnitId=bu-1&from=2026-10-08&to=2026-10-07": 422,
		"businessUnitId=bu-1&from=yesterday&to=2026-10-07":  422,
		"from=2026-10-01&to=2026-10-07":                     422,
	} {
		if code, _, p := e.do(t, "GET", "/api/support/deliveries/counts?"+q, "", nil); code != want {
			t.Errorf("%s: %d %v, want %d", q, code, p, want)
		}
	}
}

func busMsg(m store.OutboxMessage) bus.Message {
	return bus.Message{ID: m.MessageID, Destination: m.Destination, Body: m.Body}
}
