package campaignapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/campaignapi"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/campaign/campaigntest"
	"github.com/automation-platform/automation/shared/campaign/providersim"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
	"github.com/automation-platform/automation/shared/store"
)

type env struct {
	*apptest.API
	sim *providersim.Server
}

func newEnv(t *testing.T) *env {
	t.Helper()
	sim := campaigntest.StartSim(t, providersim.Config{}) // neither dedupes nor answers lookups
	a := apptest.OpenAPI(t, campaignapi.OpenAPI(), nil, time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC), app.Options{
		WithoutBudgets: true, // the campaign API alone; budgets: shared/campaignbudget
		CampaignProviders: map[string]app.CampaignProvider{"telco": {Provider: &campaign.HTTPProvider{BaseURL: sim.URL(),
			Client: &http.Client{Transport: &http.Transport{}}, ActionTypes: []string{"TOP_UP", "ADD_DATA"}}}}})
	// A campaign's trigger must be a registered event type (campaign.Admin.KnownTriggers).
	if _, err := a.RT.Registry.Save(context.Background(), gateway.SaveParams{EventType: "SignedUp", Operator: "test",
		Definition: []byte(`{"eventType":"SignedUp","class":"DIRECT","schema":{"type":"object"}}`)}); err != nil {
		t.Fatal(err)
	}
	return &env{API: a, sim: sim}
}

// resp is one recorded answer.
type resp = openapitest.Recorded

// The document documents exactly the routes Register adds, which are the runtime's routes
// under /api/campaigns; a renamed operation is caught.
func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.CheckRouter(t, func(r *funchost.Router, api *httpapi.API) { campaignapi.Register(r, api, &campaign.Admin{}) }, campaignapi.Prefix, campaignapi.Prefix, "get", "post")
}

const good = `{"businessUnitId":"bu-1","name":"Welcome","status":"ACTIVE","triggers":["SignedUp"],"actions":[
  {"key":"hello","type":"NOTIFICATION_LOG","provider":"log","params":{"subject":"Hi","text":"Welcome"}},
  {"key":"topup","type":"TOP_UP","provider":"telco","params":{"amountMinor":500,"currency":"AUD"}},
  {"key":"data","type":"ADD_DATA","provider":"telco","params":{"packageCode":"WELCOME_1GB","dataMb":1024},"when":"SUCCEEDED"}]}`

// Every route with its answers (201, 200, ETag, 409, 412, 428, 404 out of scope) against the
// document; bad input is 422 naming the member, and nothing is stored.
func TestCampaignAPIMatchesOpenAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	want := func(r resp, code int) resp { t.Helper(); return r.Want(t, code) }
	base := campaignapi.Prefix
	for _, bad := range []struct{ name, body, field string }{
		{"unknown type", strings.Replace(good, `"TOP_UP"`, `"WIRE_MONEY"`, 1), "actions[1].type"},
		{"unknown provider", strings.Replace(good, `"provider":"telco"`, `"provider":"acme"`, 1), "actions[1].provider"},
		{"cycle", strings.Replace(good, `"when":"SUCCEEDED"`, `"when":"SUCCEEDED","next":"hello"`, 1), "next"},
		{"params schema", strings.Replace(good, `"amountMinor":500`, `"amountMinor":"500"`, 1), "actions[1].params.amountMinor"},
		{"params unknown member", strings.Replace(good, `"amountMinor":500`, `"amountMinr":500`, 1), "actions[1].params.amountMinr"},
	} {
		r := want(e.Call(t, "PUT", base+"/welcome", bad.body), 422)
		if !strings.Contains(string(r.Body), bad.field) {
			t.Errorf("%s: the refusal does not name %s: %s", bad.name, bad.field, r.Body)
		}
		want(e.Call(t, "GET", base+"/welcome?businessUnitId=bu-1", ""), 404) // nothing stored
	}
	want(e.Call(t, "PUT", base+"/welcome", `{"businessUnitId":"bu-1","extra":1}`), 400)
	created := want(e.Call(t, "PUT", base+"/welcome", good), 201)
	if created.Header.Get("ETag") != `"1"` || !strings.Contains(string(created.Body), `"runId":"run-1"`) {
		t.Fatalf("created %s %s", created.Header.Get("ETag"), created.Body)
	}
	want(e.Call(t, "PUT", base+"/welcome", good), 409)
	want(e.Call(t, "PUT", base+"/welcome", good, `If-Match: "1"`), 200)
	// A 412 names the version in force, so the caller knows what to read (issue 33, item 10).
	if r := want(e.Call(t, "PUT", base+"/welcome", good, `If-Match: "1"`), 412); !strings.Contains(string(r.Body), `at version \"2\", not \"1\"`) {
		t.Errorf("412 without the current version: %s", r.Body)
	}
	want(e.Call(t, "GET", base+"/welcome?businessUnitId=bu-1", ""), 200)
	want(e.Call(t, "GET", base+"?businessUnitId=bu-1&limit=1", ""), 200)
	want(e.Call(t, "GET", base+"?businessUnitId=bu-1&sort=x", ""), 400)
	want(e.Call(t, "POST", base+"/welcome/rerun?businessUnitId=bu-1", ""), 428)
	rr := want(e.Call(t, "POST", base+"/welcome/rerun?businessUnitId=bu-1", "", `If-Match: "2"`), 200)
	if !strings.Contains(string(rr.Body), `"runId":"run-2"`) {
		t.Fatalf("rerun %s", rr.Body)
	}
	// Out of scope: a caller of bu-2 does not see bu-1's campaign.
	want(e.Call(t, "GET", base+"/welcome?businessUnitId=bu-1", "", "X-Automation-Business-Units: bu-2"), 404)
	want(e.Call(t, "PUT", base+"/welcome", good, "X-Automation-Business-Units: bu-2"), 404)

	// An UNKNOWN (the provider lost its answer and can neither dedupe nor be asked) reaches
	// the queue; support resolves it and the chain moves on.
	ctx := context.Background()
	if err := e.sim.SetFaults(providersim.Faults{Mode: providersim.ModeLoseAnswer}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.RT.Campaign.Dispatcher.HandleEvent(ctx, []byte(`{"id":"e1","source":"/app","type":"SignedUp","businessunitid":"bu-1","customerid":"c1"}`)); err != nil {
		t.Fatal(err)
	}
	drain(t, e)
	list := want(e.Call(t, "GET", base+"/welcome/unknown-commands?businessUnitId=bu-1", ""), 200)
	var page struct{ Items []campaignapi.Command }
	_ = json.Unmarshal(list.Body, &page)
	if len(page.Items) != 1 || page.Items[0].ActionType != "TOP_UP" {
		t.Fatalf("queue %s", list.Body)
	}
	c := page.Items[0]
	path := fmt.Sprintf("%s/welcome/unknown-commands/%s/resolve", base, c.CommandID)
	body := `{"businessUnitId":"bu-1","status":"SUCCEEDED","reason":"the provider's report shows it applied"}`
	want(e.Call(t, "POST", path, body, `If-Match: "`+fmt.Sprint(c.Version)+`"`), 400) // no operator
	want(e.Call(t, "POST", path, body, "X-Automation-Operator: ops"), 428)
	want(e.Call(t, "POST", path, body, "X-Automation-Operator: ops", `If-Match: "99"`), 412)
	want(e.Call(t, "POST", path, strings.Replace(body, "SUCCEEDED", "MAYBE", 1), "X-Automation-Operator: ops", `If-Match: "`+fmt.Sprint(c.Version)+`"`), 422)
	want(e.Call(t, "POST", path, body, "X-Automation-Operator: ops", `If-Match: "`+fmt.Sprint(c.Version)+`"`), 200)
	want(e.Call(t, "POST", path, body, "X-Automation-Operator: ops", `If-Match: "`+fmt.Sprint(c.Version+1)+`"`), 409)
	_ = e.sim.SetFaults(providersim.Faults{})
	drain(t, e)
	cmds, _ := e.RT.Store.CampaignCommandsOf(ctx, c.ExecutionID)
	if len(cmds) != 3 || cmds[2].Status != store.CommandSucceeded {
		t.Fatalf("after the resolution the chain did not finish: %+v", cmds)
	}
	counts := want(e.Call(t, "GET", base+"/welcome/counts?businessUnitId=bu-1&from=2026-10-01&to=2026-10-01", ""), 200)
	if !strings.Contains(string(counts.Body), `"SUCCEEDED":3`) {
		t.Fatalf("counts %s", counts.Body)
	}
	want(e.Call(t, "GET", base+"/welcome/counts?businessUnitId=bu-1&from=2026-10-02&to=2026-10-01", ""), 422)
	want(e.Call(t, "GET", base+"/nope/counts?businessUnitId=bu-1&from=2026-10-01&to=2026-10-01", ""), 404)

	// The executions, newest first, a page of one at a time; the cursor is bound to its
	// unit and campaign.
	if _, err := e.RT.Campaign.Dispatcher.HandleEvent(ctx, []byte(`{"id":"e2","source":"/app","type":"SignedUp","businessunitid":"bu-1","customerid":"c2"}`)); err != nil {
		t.Fatal(err)
	}
	drain(t, e)
	var execs struct {
		Items      []campaignapi.Execution
		NextCursor string
	}
	first := want(e.Call(t, "GET", base+"/welcome/executions?businessUnitId=bu-1&limit=1", ""), 200)
	_ = json.Unmarshal(first.Body, &execs)
	if len(execs.Items) != 1 || execs.Items[0].RecipientID != "c2" || execs.Items[0].SourceEventID != "e2" || execs.NextCursor == "" {
		t.Fatalf("first page %s", first.Body)
	}
	cursor := execs.NextCursor
	execs.NextCursor = ""
	second := want(e.Call(t, "GET", base+"/welcome/executions?businessUnitId=bu-1&limit=1&cursor="+cursor, ""), 200)
	_ = json.Unmarshal(second.Body, &execs)
	if len(execs.Items) != 1 || execs.Items[0].ExecutionID != c.ExecutionID || execs.Items[0].Status != "COMPLETED" || execs.NextCursor != "" {
		t.Fatalf("second page %s", second.Body)
	}
	want(e.Call(t, "GET", base+"/welcome/executions?businessUnitId=bu-2&limit=1&cursor="+cursor, "", "X-Automation-Business-Units: bu-2"), 400) // another unit's cursor
	want(e.Call(t, "GET", base+"/welcome/executions?businessUnitId=bu-1", "", "X-Automation-Business-Units: bu-2"), 404)
	want(e.Call(t, "GET", base+"/nope/executions?businessUnitId=bu-1", ""), 404)
	want(e.Call(t, "GET", base+"/welcome/executions?businessUnitId=bu-1&limit=0", ""), 400)
}

// drain runs the runtime's bus (the in-process Functions host) until it is idle.
func drain(t *testing.T, e *env) {
	t.Helper()
	for range 20 {
		tr, err := e.RT.Tick(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if tr.Published == 0 && tr.Dispatched == 0 {
			return
		}
	}
}

// GET /api/campaigns/_metrics against the document: the command gauges are per business unit
// when one is named and the whole platform's otherwise; the outbox and provider figures
// (shared by every unit) reach only a caller whose scope is every unit; a narrower caller
// asking for every unit, or for a unit it may not see, gets 404.
func TestCampaignMetricsMatchOpenAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	base := campaignapi.Prefix
	read := func(code int, path string, headers ...string) map[string]any {
		t.Helper()
		r := e.Call(t, "GET", path, "", headers...)
		if r.Code != code {
			t.Fatalf("GET %s: status %d, want %d: %s", path, r.Code, code, r.Body)
		}
		var m map[string]any
		_ = json.Unmarshal(r.Body, &m)
		return m
	}
	if r := e.Call(t, "PUT", base+"/welcome", good); r.Code != 201 {
		t.Fatalf("%d %s", r.Code, r.Body)
	}
	if err := e.sim.SetFaults(providersim.Faults{Mode: providersim.ModeLoseAnswer}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.RT.Campaign.Dispatcher.HandleEvent(context.Background(), []byte(`{"id":"e1","source":"/app","type":"SignedUp","businessunitid":"bu-1","customerid":"c1"}`)); err != nil {
		t.Fatal(err)
	}
	drain(t, e)

	all := read(200, base+"/_metrics")
	if all["commandsUnknown"] != 1.0 || all["businessUnitId"] != nil || all["outbox"] == nil {
		t.Fatalf("every unit: %v", all)
	}
	provs, _ := all["providers"].([]any)
	var telco map[string]any
	for _, p := range provs {
		if p.(map[string]any)["name"] == "telco" {
			telco = p.(map[string]any)
		}
	}
	if telco == nil || telco["calls"] != 1.0 || telco["unknown"] != 1.0 {
		t.Fatalf("providers: %v", provs)
	}
	if m := read(200, base+"/_metrics?businessUnitId=bu-1"); m["commandsUnknown"] != 1.0 || m["businessUnitId"] != "bu-1" || m["outbox"] == nil {
		t.Fatalf("bu-1: %v", m)
	}
	if m := read(200, base+"/_metrics?businessUnitId=bu-2"); m["commandsUnknown"] != 0.0 || m["commandsWaiting"] != 0.0 {
		t.Fatalf("bu-2 sees bu-1's commands: %v", m)
	}
	// A caller of bu-1 only: its unit's commands, nothing shared; every unit or bu-2 is 404.
	if m := read(200, base+"/_metrics?businessUnitId=bu-1", "X-Automation-Business-Units: bu-1"); m["commandsUnknown"] != 1.0 || m["outbox"] != nil || m["providers"] != nil {
		t.Fatalf("bu-1 caller: %v", m)
	}
	read(404, base+"/_metrics", "X-Automation-Business-Units: bu-1")
	read(404, base+"/_metrics?businessUnitId=bu-2", "X-Automation-Business-Units: bu-1")
	read(422, base+"/_metrics?businessUnitId=")
	read(400, base+"/_metrics?businessUnitId=bu-1&limit=1")
	// _metrics can never be stored as a campaign (the id rule), so the route shadows none.
	if err := campaign.CheckID("_metrics"); err == nil {
		t.Fatal("a campaign id may start with '_'")
	}
}

// A params schema error names the member and the rule, never the library's "at ”"; an
// unknown member is named with the member it likely meant (issue 33, item 10).
func TestParamsErrorsNameTheMember(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	r := e.Call(t, "PUT", campaignapi.Prefix+"/welcome", strings.Replace(good, `"amountMinor":500`, `"amountMinor":500,"amountMinr":5`, 1))
	if r.Code != 422 || !strings.Contains(string(r.Body), `actions[1].params.amountMinr`) || !strings.Contains(string(r.Body), `did you mean \"amountMinor\"`) ||
		strings.Contains(string(r.Body), "at '") {
		t.Fatalf("%d %s", r.Code, r.Body)
	}
}
