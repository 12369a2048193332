package budgetapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/budgetapi"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/budget/billingsim"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
	"github.com/automation-platform/automation/sql/sqlstore"
)

type env struct {
	client *billing.Client
	st     *sqlstore.Store
	sim    *billingsim.Server
	svc    *budget.Service
	r      *funchost.Router
	doc    *openapitest.Doc
}

const opHdr = "X-Automation-Operator: jane"

func newEnv(t *testing.T) *env {
	t.Helper()
	st := sqlitetest.Open(t)
	clock := automation.NewManualClock(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC))
	sim := billingsim.New(clock)
	srv := httptest.NewServer(sim)
	t.Cleanup(srv.Close)
	sim.SetBalance("bu-1", "USD", 1_000_000)
	client := &billing.Client{BaseURL: srv.URL, Timeout: 5 * time.Second}
	svc := &budget.Service{Store: st, Billing: client, Clock: clock}
	r := funchost.NewRouter(nil)
	budgetapi.Register(r, httpapi.New(httpapi.Options{Clock: clock}), svc)
	return &env{client: client, st: st, sim: sim, svc: svc, r: r, doc: openapitest.Load(t, budgetapi.OpenAPI())}
}

func (e *env) call(t *testing.T, method, path, body string, headers ...string) openapitest.Recorded {
	t.Helper()
	return e.doc.Call(t, e.r, method, path, body, headers...)
}

func want(t *testing.T, r openapitest.Recorded, code int, what string) {
	t.Helper()
	if r.Code != code {
		t.Fatalf("%s: %d %s, want %d", what, r.Code, r.Body, code)
	}
}

func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	e := newEnv(t)
	e.doc.CheckRegistered(t, e.r.HTTPPatterns(), budgetapi.PathWaiting, "get", "put")
}

func TestBudgetRoutesAndBadInputChangesNothing(t *testing.T) {
	e := newEnv(t)
	path := "/api/budgets/campaigns/c1?businessUnitId=bu-1"
	want(t, e.call(t, "GET", path, ""), 404, "no budget yet")
	want(t, e.call(t, "PUT", path, `{"currency":"USD","maxCost":"100"}`), 400, "no operator")
	for _, bad := range []string{`{"currency":"USD","maxCost":"-1"}`, `{"currency":"USD","maxCost":"1.5"}`, `{"currency":"USD","maxCost":1.5}`,
		`{"currency":"USD","maxCost":-1}`, `{"currency":"usd","maxCost":"1"}`, `{"currency":"USD"}`, `{"currency":"USD","maxCost":"1e3"}`} {
		r := e.call(t, "PUT", path, bad, opHdr)
		want(t, r, 422, bad)
	}
	want(t, e.call(t, "GET", path, ""), 404, "refused creates wrote a budget")
	r := e.call(t, "PUT", path, `{"currency":"USD","maxCost":"30","reason":"launch"}`, opHdr)
	want(t, r, 201, "create")
	if r.Header.Get("ETag") != `"1"` || !strings.Contains(string(r.Body), `"maxCost":"30"`) {
		t.Fatalf("create: %s %s", r.Header, r.Body)
	}
	want(t, e.call(t, "PUT", path, `{"currency":"USD","maxCost":"30"}`, opHdr), 409, "create twice")
	// Spend 20 of it.
	if _, err := e.svc.PutPolicy(context.Background(), "bu-1", "ADD_SMS", budget.PolicyInput{Formula: "FIXED", Rate: "10", Unit: "SMS", TransferType: "SMS_FEE", Currency: "USD"}, 0, "seed"); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"cmd-1", "cmd-2"} {
		if d, err := e.svc.Prepare(context.Background(), budget.Command{CommandID: id, BusinessUnitID: "bu-1", CampaignID: "c1", ActionType: "ADD_SMS"}); err != nil || d.Kind != budget.Proceed {
			t.Fatalf("%s: %+v %v", id, d, err)
		}
	}
	before := e.call(t, "GET", path, "")
	for _, c := range []struct {
		body, ifMatch string
		code          int
	}{
		{`{"maxCost":"19"}`, `"1"`, 422},                  // below cost + reserved
		{`{"maxCost":"40","currency":"EUR"}`, `"1"`, 422}, // not the budget's currency
		{`{"maxCost":"-40"}`, `"1"`, 422},
		{`{"maxCost":"40"}`, `"9"`, 412},
		{`{"maxCost":"40"}`, `"0"`, 412}, // versions start at 1: "0" is never "no check"
		{`{"maxCost":"40","extra":1}`, `"1"`, 400},
	} {
		want(t, e.call(t, "PUT", path, c.body, opHdr, "If-Match: "+c.ifMatch), c.code, c.body)
	}
	if after := e.call(t, "GET", path, ""); string(after.Body) != string(before.Body) {
		t.Fatalf("refused changes changed the budget:\n%s\n%s", before.Body, after.Body)
	}
	// A stale version's 412 names the version in force (issue 33, item 10).
	if r := e.call(t, "PUT", path, `{"maxCost":"40"}`, opHdr, `If-Match: "9"`); !strings.Contains(string(r.Body), `the budget is at version \"1\", not \"9\"`) {
		t.Fatalf("412 without the current version: %s", r.Body)
	}
	r = e.call(t, "PUT", path, `{"maxCost":40,"reason":"more"}`, opHdr, `If-Match: "1"`)
	want(t, r, 200, "raise")
	var v budget.View
	_ = json.Unmarshal(r.Body, &v)
	if v.MaxCost != 40 || v.Cost != 20 || v.Available != 20 || v.Version != 2 || r.Header.Get("ETag") != `"2"` {
		t.Fatalf("raised %+v", v)
	}
	want(t, e.call(t, "POST", "/api/budgets/campaigns/c1/resume?businessUnitId=bu-1", "", opHdr, `If-Match: "2"`), 409, "resume an active budget")
	want(t, e.call(t, "POST", "/api/budgets/campaigns/c1/resume?businessUnitId=bu-1", "", opHdr), 428, "resume without If-Match")
	want(t, e.call(t, "POST", "/api/budgets/campaigns/c1/resume?businessUnitId=bu-1", "", opHdr, `If-Match: "0"`), 412, "resume with If-Match 0")
	audit, _ := e.st.BudgetAuditList(context.Background(), "bu-1", "c1", 10)
	if len(audit) != 2 || audit[0].Action != "SET_MAX_COST" || audit[0].Operator != "jane" || audit[0].Reason != "more" {
		t.Fatalf("audit %+v", audit)
	}
	// Another caller's scope: 404 like an unknown campaign.
	want(t, e.call(t, "GET", path, "", "X-Automation-Business-Units: bu-2"), 404, "out of scope")
	want(t, e.call(t, "PUT", path, `{"maxCost":"99"}`, opHdr, `If-Match: "2"`, "X-Automation-Business-Units: bu-2"), 404, "write out of scope")
}

func TestPolicyRoutes(t *testing.T) {
	e := newEnv(t)
	p := "/api/budgets/price-policies/ADD_SMS?businessUnitId=bu-1"
	body := `{"formula":"PER_UNIT","rate":"12.5","unit":"SMS","transferType":"SMS_FEE","currency":"USD","minFee":"5"}`
	want(t, e.call(t, "PUT", "/api/budgets/price-policies/SEND_PIGEON?businessUnitId=bu-1", body, opHdr), 422, "unknown action type")
	want(t, e.call(t, "PUT", p, strings.Replace(body, `"5"`, `-5`, 1), opHdr), 422, "negative minFee")
	want(t, e.call(t, "PUT", p, strings.Replace(body, `"12.5"`, `"12,5"`, 1), opHdr), 422, "bad rate")
	want(t, e.call(t, "GET", p, ""), 404, "refused policies were stored")
	r := e.call(t, "PUT", p, body, opHdr)
	want(t, r, 201, "create")
	want(t, e.call(t, "PUT", p, body, opHdr), 409, "create twice")
	want(t, e.call(t, "PUT", p, body, opHdr, `If-Match: "7"`), 412, "stale")
	want(t, e.call(t, "PUT", p, body, opHdr, `If-Match: "0"`), 412, "If-Match 0")
	want(t, e.call(t, "PUT", p, strings.Replace(body, `"12.5"`, `"13"`, 1), opHdr, `If-Match: "1"`), 200, "replace")
	r = e.call(t, "GET", p, "")
	if r.Code != 200 || r.Header.Get("ETag") != `"2"` || !strings.Contains(string(r.Body), `"rate":"13"`) || !strings.Contains(string(r.Body), `"minFee":"5"`) {
		t.Fatalf("get %d %s %s", r.Code, r.Header, r.Body)
	}
	l := e.call(t, "GET", "/api/budgets/price-policies?businessUnitId=bu-1", "")
	if l.Code != 200 || strings.Count(string(l.Body), `"actionType"`) != 1 {
		t.Fatalf("list %d %s", l.Code, l.Body)
	}
}

func TestSupportQueuesResolveAndCosts(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t)
	if _, err := e.svc.CreateBudget(ctx, "bu-1", "c1", budget.BudgetInput{Currency: "USD", MaxCost: 20}, "seed"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.PutPolicy(ctx, "bu-1", "ADD_SMS", budget.PolicyInput{Formula: "FIXED", Rate: "10", Unit: "SMS", TransferType: "SMS_FEE", Currency: "USD"}, 0, "seed"); err != nil {
		t.Fatal(err)
	}
	cmd := func(id string) budget.Command {
		return budget.Command{CommandID: id, BusinessUnitID: "bu-1", CampaignID: "c1", ActionType: "ADD_SMS", LocalDate: "2026-10-01"}
	}
	e.sim.Inject(billingsim.Fault{Kind: billingsim.TimeoutAfterCommit, Op: billingsim.OpCreate, Delay: time.Second})
	e.client.Timeout = 300 * time.Millisecond // the client gives up while the provider holds its answer
	d, _ := e.svc.Prepare(ctx, cmd("cmd-1"))
	e.client.Timeout = 5 * time.Second
	if d.Kind != budget.FeeUnknown {
		t.Fatalf("%+v", d)
	}
	_, _ = e.svc.Prepare(ctx, cmd("cmd-2"))
	if d3, _ := e.svc.Prepare(ctx, cmd("cmd-3")); d3.Kind != budget.WaitingBudget {
		t.Fatalf("%+v", d3)
	}
	r := e.call(t, "GET", "/api/budgets/fees/unknown?businessUnitId=bu-1&limit=1", "")
	if r.Code != 200 || !strings.Contains(string(r.Body), d.OrderID) || strings.Contains(string(r.Body), "nextCursor") {
		t.Fatalf("unknown %d %s", r.Code, r.Body)
	}
	w := e.call(t, "GET", "/api/budgets/waiting?businessUnitId=bu-1", "")
	if w.Code != 200 || !strings.Contains(string(w.Body), `"cmd-3"`) || !strings.Contains(string(w.Body), `"reason":"BUDGET"`) {
		t.Fatalf("waiting %d %s", w.Code, w.Body)
	}
	res := "/api/budgets/fees/unknown/" + d.OrderID + "/resolve"
	want(t, e.call(t, "POST", res, `{"businessUnitId":"bu-1","status":"SUCCEEDED","reason":"checked"}`, opHdr), 428, "no If-Match")
	want(t, e.call(t, "POST", res, `{"businessUnitId":"bu-1","status":"MAYBE","reason":"checked"}`, opHdr, `If-Match: "2"`), 422, "bad status")
	want(t, e.call(t, "POST", res, `{"businessUnitId":"bu-2","status":"SUCCEEDED","reason":"checked"}`, opHdr, `If-Match: "2"`), 404, "other unit")
	want(t, e.call(t, "POST", res, `{"businessUnitId":"bu-1","status":"SUCCEEDED","reason":"checked"}`, opHdr, `If-Match: "5"`), 412, "stale")
	want(t, e.call(t, "POST", res, `{"businessUnitId":"bu-1","status":"SUCCEEDED","reason":"checked"}`, opHdr, `If-Match: "0"`), 412, "If-Match 0")
	want(t, e.call(t, "POST", res, `{"businessUnitId":"bu-1","status":"SUCCEEDED","reason":"checked\u0000"}`, opHdr, `If-Match: "2"`), 422, "NUL in the reason")
	want(t, e.call(t, "POST", res, `{"businessUnitId":"bu-1","status":"SUCCEEDED","reason":"the \u202eprovider"}`, opHdr, `If-Match: "2"`), 422, "U+202E in the reason")
	r = e.call(t, "POST", res, `{"businessUnitId":"bu-1","status":"SUCCEEDED","reason":"checked in the provider portal"}`, opHdr, `If-Match: "2"`)
	if r.Code != 200 || !strings.Contains(string(r.Body), `"status":"SUCCEEDED"`) || !strings.Contains(string(r.Body), `"resolvedBy":"jane"`) {
		t.Fatalf("resolve %d %s", r.Code, r.Body)
	}
	want(t, e.call(t, "POST", res, `{"businessUnitId":"bu-1","status":"FAILED","reason":"x"}`, opHdr, `If-Match: "3"`), 409, "resolve twice")
	// Costs: the projection has not seen the facts yet, so the reconciliation shows it.
	costs := "/api/budgets/campaigns/c1/costs?businessUnitId=bu-1&from=2026-10-01&to=2026-10-31"
	want(t, e.call(t, "GET", "/api/budgets/campaigns/c1/costs?businessUnitId=bu-1&from=2026-10-31&to=2026-10-01", ""), 422, "reversed range")
	want(t, e.call(t, "GET", "/api/budgets/campaigns/c1/costs?businessUnitId=bu-1&from=2026-13-01&to=2026-10-01", ""), 422, "bad date")
	r = e.call(t, "GET", costs, "")
	var c struct {
		Total          string
		Reconciliation struct{ Differences []string }
	}
	_ = json.Unmarshal(r.Body, &c)
	if r.Code != 200 || c.Total != "0" || len(c.Reconciliation.Differences) != 1 {
		t.Fatalf("costs before projection %d %s", r.Code, r.Body)
	}
	msgs, _ := e.st.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
	var facts []store.CampaignFeeFact
	for _, m := range msgs {
		f, err := budget.DecodeFeeFact(m.Body)
		if err != nil {
			t.Fatal(err)
		}
		facts = append(facts, f)
	}
	if _, err := e.st.FeeFactApply(ctx, facts, time.Now()); err != nil {
		t.Fatal(err)
	}
	r = e.call(t, "GET", costs, "")
	c.Reconciliation.Differences = nil
	_ = json.Unmarshal(r.Body, &c)
	if r.Code != 200 || c.Total != "20" || len(c.Reconciliation.Differences) != 0 {
		t.Fatalf("costs after projection %d %s", r.Code, r.Body)
	}
	if !slices.Contains(e.r.HTTPPatterns(), "GET "+budgetapi.PathCosts) {
		t.Fatal("costs route not registered")
	}
	_ = http.StatusOK
}

// The costs answer says how fresh it is: freshTo is the read instant from the service's
// clock, in UTC (its rows are read live), and the document requires and describes it.
func TestCostsSayHowFreshTheirDataIs(t *testing.T) {
	e := newEnv(t)
	clock := e.svc.Clock.(*automation.ManualClock)
	want(t, e.call(t, "PUT", "/api/budgets/campaigns/c1?businessUnitId=bu-1", `{"currency":"USD","maxCost":"100"}`, opHdr), 201, "create the budget")
	costs := "/api/budgets/campaigns/c1/costs?businessUnitId=bu-1&from=2026-10-01&to=2026-10-31"
	for _, at := range []time.Time{
		time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC),
		time.Date(2026, 10, 2, 1, 30, 15, 250_000_000, time.FixedZone("ICT", 7*3600)), // 2026-10-01T18:30:15.25Z
	} {
		clock.Set(at)
		r := e.call(t, "GET", costs, "")
		var c struct {
			FreshTo *string `json:"freshTo"`
		}
		if err := json.Unmarshal(r.Body, &c); err != nil || r.Code != 200 || c.FreshTo == nil {
			t.Fatalf("costs at %v: %d %s", at, r.Code, r.Body)
		}
		if want := at.UTC().Format(time.RFC3339Nano); *c.FreshTo != want {
			t.Fatalf("freshTo = %s, want %s (the read instant, UTC)", *c.FreshTo, want)
		}
	}
	if !strings.Contains(string(budgetapi.OpenAPI()), "reconciliation, freshTo]") {
		t.Fatal("the document does not require freshTo on the costs answer")
	}
}
