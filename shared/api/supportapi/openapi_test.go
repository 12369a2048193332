package supportapi_test

import (
	"context"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/deadletterapi"
	"github.com/automation-platform/automation/shared/api/deliveryapi"
	"github.com/automation-platform/automation/shared/api/supportapi"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/deadletter"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/support"
)

// registeredSupportRoutes lists the patterns supportapi.Register and deliveryapi.Register add.
func registeredSupportRoutes() []string {
	r := funchost.NewRouter(nil)
	api := httpapi.New(httpapi.Options{})
	supportapi.Register(r, api, &support.Service{})
	deliveryapi.Register(r, api, &delivery.Support{})
	deadletterapi.Register(r, api, &deadletter.Service{})
	out := r.HTTPPatterns()
	sort.Strings(out)
	return out
}

// TestOpenAPIDocumentMatchesRouter: openapi.yaml is valid OpenAPI 3.1 and documents exactly
// the routes of supportapi.Register and deliveryapi.Register (both directions), which are
// exactly the runtime's routes under /api/support/; a document missing a route, or naming
// one the router lacks, is caught.
func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	t.Parallel()
	doc := openapitest.LoadFile(t, "openapi.yaml")
	// The runtime (app.Open) serves the same routes under the support prefix, no more;
	// deliberate mismatches are caught in both directions.
	e := newEnv(t, nil)
	doc.CheckRouter(t, registeredSupportRoutes(), e.rt.Functions.HTTPPatterns(), supportapi.Prefix, "/api/support/metrics", "get", "put")

	// Every operation names its problem answers; bodies may be too large; actions need If-Match.
	model, err := doc.Document().BuildV3Model()
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range model.Model.Paths.PathItems.FromOldest() {
		for method, op := range item.GetOperations().FromOldest() {
			codes := map[string]bool{}
			for code := range op.Responses.Codes.FromOldest() {
				codes[code] = true
			}
			want := []string{"400", "401", "500"}
			if op.RequestBody != nil {
				want = append(want, "413", "422")
			}
			if strings.Contains(path, "{") {
				want = append(want, "404")
			}
			headers := map[string]bool{}
			for _, p := range append(item.Parameters, op.Parameters...) {
				if p.In == "header" {
					headers[p.Name] = true
				}
			}
			if method == "post" && strings.Contains(path, "{") { // release/retry/cancel/resolve
				want = append(want, "409", "412", "428")
				if !headers["If-Match"] {
					t.Errorf("%s %s: no If-Match", method, path)
				}
			}
			if method == "post" && !headers["X-Automation-Operator"] {
				t.Errorf("%s %s: no X-Automation-Operator", method, path)
			}
			if !headers["X-Automation-Business-Units"] {
				t.Errorf("%s %s: no X-Automation-Business-Units", method, path)
			}
			for _, c := range want {
				if !codes[c] {
					t.Errorf("%s %s: no %s response", method, path, c)
				}
			}
		}
	}
}

// vcall sends a request through the runtime's Functions router and checks request and
// answer against the document: a 2xx must match its operation (parameters, body, headers,
// response schema); an error answer must be a documented problem of that status.
func (e *env) vcall(t *testing.T, v *openapitest.Doc, method, path, body string, headers ...string) resp {
	t.Helper()
	r := e.call(t, method, path, body, headers...)
	if msg := validate(v, method, path, body, r, headers...); msg != "" {
		t.Errorf("%s %s → %d does not match openapi.yaml:\n%s\nbody: %.2000s", method, path, r.Code, msg, r.Body)
	}
	return r
}

// validate returns why the exchange does not match the document ("" when it does).
func validate(v *openapitest.Doc, method, path, body string, r resp, headers ...string) string {
	req := openapitest.Request(method, path, body, headers...)
	return v.Mismatch(req, openapitest.Answer(req, r.Code, r.Header, r.Body))
}

// TestSupportAPIMatchesOpenAPI replays testdata/scenarios/realistic.json and makes a
// realistic set of support calls (finds with every filter and the cursor, row details,
// explain, release/retry/cancel with If-Match and the operator, a paced release, metrics,
// the UNKNOWN deliveries queue, a resolution, delivery counts) and their error answers
// (400, 404, 409, 412, 413, 422, 428), checking each request and answer against openapi.yaml.
func TestSupportAPIMatchesOpenAPI(t *testing.T) {
	t.Parallel()
	e, _ := scenarioEnv(t, "realistic.json")
	v := openapitest.LoadFile(t, "openapi.yaml")
	ctx := context.Background()
	// Two police checks expiring after the scenario's end: six pending bu-syd reminders to act on.
	e.event(t, "evt-openapi-1", "bu-syd", "7d1e4a2b-6c3f-4b8a-9e5d-1f2a3b4c5d6e", 1, "2027-09-01")
	e.event(t, "evt-openapi-2", "bu-syd", "8e2f5b3c-7d4a-4c9b-8f6e-2a3b4c5d6e7f", 1, "2027-10-01")
	ok := func(r resp, want int) resp {
		t.Helper()
		if r.Code != want {
			t.Fatalf("status %d, want %d: %s", r.Code, want, r.Body)
		}
		return r
	}

	// Find: every filter, then a walk of the pages with the cursor.
	var page supportapi.FindResponse
	ok(e.vcall(t, v, "GET", "/api/support/scheduler-rows?businessUnitId=bu-syd&limit=5", ""), 200).JSON(t, &page)
	if len(page.Rows) == 0 || page.NextCursor == "" {
		t.Fatalf("bu-syd has too few rows for a second page: %+v", page)
	}
	pages := 1
	for page.NextCursor != "" && pages < 20 {
		next := supportapi.FindResponse{}
		ok(e.vcall(t, v, "GET", "/api/support/scheduler-rows?businessUnitId=bu-syd&limit=5&cursor="+url.QueryEscape(page.NextCursor), ""), 200).JSON(t, &next)
		page = next
		pages++
	}
	all, err := e.rt.Store.SupportSchedulerFind(ctx, store.SupportFindParams{Scope: automation.AllBusinessUnits(), Limit: 500})
	if err != nil || len(all) == 0 {
		t.Fatalf("no rows: %v", err)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].ScheduledOn.Before(all[j].ScheduledOn) })
	first := all[0]
	from := first.ScheduledOn.Add(-1).UTC().Format("2006-01-02T15:04:05.000Z")
	to := first.ScheduledOn.Add(1).UTC().Format("2006-01-02T15:04:05.000Z")
	for _, q := range []string{
		"schedulerKey=" + url.QueryEscape(first.SchedulerKey),
		"sourceType=" + url.QueryEscape(first.SourceEntityType) + "&sourceGuid=" + url.QueryEscape(first.SourceEntityGuid),
		"status=Completed&businessUnitId=" + first.BusinessUnitID,
		"onHold=false&status=Pending",
		"scheduledFrom=" + from + "&scheduledTo=" + to,
		"status=Deactivated&limit=2",
	} {
		ok(e.vcall(t, v, "GET", "/api/support/scheduler-rows?"+q, ""), 200)
	}
	for _, q := range []string{"nope=1", "limit=0", "onHold=perhaps", "scheduledFrom=yesterday", "cursor=garbage&businessUnitId=bu-syd"} {
		if r := e.vcall(t, v, "GET", "/api/support/scheduler-rows?"+q, ""); r.Code != 400 && r.Code != 422 {
			t.Errorf("find %s: %d", q, r.Code)
		}
	}

	// Details of every kind of row (by Id and by Guid), explain of their sources.
	kinds := map[string]bool{}
	explained := map[string]bool{}
	for _, r := range all {
		k := fmt.Sprint(r.Status, r.AutomationType, r.TriggerType, r.ReasonCode, r.IsOnSupportHold)
		if kinds[k] {
			continue
		}
		kinds[k] = true
		ok(e.vcall(t, v, "GET", fmt.Sprintf("/api/support/scheduler-rows/%d", r.ID), ""), 200)
		ok(e.vcall(t, v, "GET", "/api/support/scheduler-rows/"+r.Guid, ""), 200)
		src := r.SourceEntityType + "/" + r.SourceEntityGuid
		if !explained[src] {
			explained[src] = true
			ok(e.vcall(t, v, "GET", "/api/support/explain?sourceType="+url.QueryEscape(r.SourceEntityType)+"&sourceGuid="+url.QueryEscape(r.SourceEntityGuid), ""), 200)
		}
	}
	ok(e.vcall(t, v, "GET", "/api/support/scheduler-rows/999999999", ""), 404)
	ok(e.vcall(t, v, "GET", "/api/support/scheduler-rows/not-a-ref", ""), 400)
	ok(e.vcall(t, v, "GET", "/api/support/explain?sourceType=PoliceVetting", ""), 400)
	ok(e.vcall(t, v, "GET", "/api/support/explain?sourceType=PoliceVetting&sourceGuid=00000000-0000-4000-8000-000000000000", ""), 404)
	ok(e.vcall(t, v, "GET", fmt.Sprintf("/api/support/scheduler-rows/%d", first.ID), "", "X-Automation-Business-Units: bu-none"), 404)

	// Actions on a pending row: retry (due now), then cancel; their errors first.
	var pending automation.SchedulerRow
	for _, r := range all {
		if r.Status == automation.StatusPending && r.AutomationType == automation.TypeReminder && r.BusinessUnitID == "bu-syd" {
			pending = r
			break
		}
	}
	if pending.ID == 0 {
		t.Fatal("the scenario ends without a pending reminder row")
	}
	act := func(id int64, what string) string { return fmt.Sprintf("/api/support/scheduler-rows/%d/%s", id, what) }
	ok(e.vcall(t, v, "POST", act(pending.ID, "retry"), `{"reason":"customer asked"}`, ifMatch(pending.Version)), 400)             // no operator
	ok(e.vcall(t, v, "POST", act(pending.ID, "retry"), `{"reason":"customer asked"}`, operator), 428)                             // no If-Match
	ok(e.vcall(t, v, "POST", act(pending.ID, "retry"), `{"reason":"customer asked"}`, operator, ifMatch(pending.Version+7)), 412) // stale
	ok(e.vcall(t, v, "POST", act(pending.ID, "retry"), `{"reason":"x","extra":1}`, operator, ifMatch(pending.Version)), 400)      // unknown field
	ok(e.vcall(t, v, "POST", act(pending.ID, "retry"), `{"reason":"`+strings.Repeat("x", 2<<20)+`"}`, operator, ifMatch(pending.Version)), 413)
	ok(e.vcall(t, v, "POST", act(pending.ID, "release"), `{"reason":"not on hold"}`, operator, ifMatch(pending.Version)), 409)
	ok(e.vcall(t, v, "POST", act(pending.ID, "retry"), `{"reason":"customer asked"}`, operator, ifMatch(pending.Version)), 409) // waiting for its time
	// Run now: stale 412, then due now (200, new ETag), then already due (409).
	ok(e.vcall(t, v, "POST", act(pending.ID, "run-now"), `{"reason":"asked today"}`, operator, ifMatch(pending.Version+7)), 412)
	ok(e.vcall(t, v, "POST", act(pending.ID, "run-now"), `{"reason":"asked today"}`, operator), 428)
	ok(e.vcall(t, v, "POST", act(pending.ID, "run-now"), `{"reason":"asked today"}`, operator, ifMatch(pending.Version)), 200)
	pending.Version++
	ok(e.vcall(t, v, "POST", act(pending.ID, "run-now"), `{"reason":"asked today"}`, operator, ifMatch(pending.Version)), 409)
	ok(e.vcall(t, v, "POST", act(pending.ID, "cancel"), `{"reason":"  "}`, operator, ifMatch(pending.Version)), 422) // no reason
	ok(e.vcall(t, v, "POST", act(pending.ID, "cancel"), `{"reason":"no longer needed"}`, operator, ifMatch(pending.Version)), 200)
	// A completed reminder is sent again under a support-retry row (retryRow in the answer).
	var done automation.SchedulerRow
	for _, r := range all {
		if r.Status == automation.StatusCompleted && r.AutomationType == automation.TypeReminder {
			done = r
			break
		}
	}
	if done.ID == 0 {
		t.Fatal("the scenario ends without a completed reminder row")
	}
	var res support.ActResult
	ok(e.vcall(t, v, "POST", act(done.ID, "retry"), `{"reason":"she never got it"}`, operator, ifMatch(done.Version), "Idempotency-Key: retry-1"), 200).JSON(t, &res)
	if res.RetryRow == nil {
		t.Fatalf("retry of a completed row without a retry row: %+v", res)
	}
	ok(e.vcall(t, v, "GET", "/api/support/scheduler-rows/"+res.RetryRow.Guid, ""), 200)

	// A row on hold: released alone, then a paced release of more held rows.
	var more []automation.SchedulerRow
	for _, r := range all {
		if r.Status == automation.StatusPending && r.ID != pending.ID && r.AutomationType == automation.TypeReminder && r.BusinessUnitID == "bu-syd" && len(more) < 3 {
			more = append(more, r)
		}
	}
	if len(more) < 3 {
		t.Fatalf("only %d more pending rows", len(more))
	}
	held := e.hold(t, more[0])
	ok(e.vcall(t, v, "POST", act(held.ID, "release"), `{"reason":"smtp fixed"}`, operator, ifMatch(held.Version)), 200)
	for _, r := range more[1:] {
		e.hold(t, r)
	}
	ok(e.vcall(t, v, "POST", "/api/support/releases", `{"filter":{},"reason":"all"}`, operator), 422)
	ok(e.vcall(t, v, "POST", "/api/support/releases", `{"filter":{"businessUnitId":"bu-syd"},"reason":"x"}`), 400) // no operator
	ok(e.vcall(t, v, "POST", "/api/support/releases", `{"filter":{"failureReasonCode":"HandlerError"},"reason":"smtp fixed","ratePerMinute":60,"batchSize":1,"maxRows":1}`,
		operator, "Idempotency-Key: rel-1"), 200)
	ok(e.vcall(t, v, "POST", "/api/support/releases", `{"filter":{"failureReasonCode":"HandlerError","scheduledFrom":"2026-01-01T00:00:00Z"},"reason":"the rest"}`, operator), 200)

	// Metrics: every business unit, one, and one out of scope.
	ok(e.vcall(t, v, "GET", "/api/support/metrics", ""), 200)
	ok(e.vcall(t, v, "GET", "/api/support/metrics?businessUnitId=bu-nyc", ""), 200)
	ok(e.vcall(t, v, "GET", "/api/support/metrics", "", "X-Automation-Business-Units: bu-syd,bu-hcm"), 200)
	ok(e.vcall(t, v, "GET", "/api/support/metrics?businessUnitId=bu-syd", "", "X-Automation-Business-Units: bu-nyc"), 404)
	ok(e.vcall(t, v, "GET", "/api/support/metrics?bu=1", ""), 400)

	// Deliveries: counts, the UNKNOWN queue, a resolution.
	ok(e.vcall(t, v, "GET", "/api/support/deliveries/counts?businessUnitId=bu-syd&from=2026-09-01&to=2026-12-31", ""), 200)
	ok(e.vcall(t, v, "GET", "/api/support/deliveries/counts?businessUnitId=bu-syd&from=2026-12-31&to=2026-09-01", ""), 422)
	ok(e.vcall(t, v, "GET", "/api/support/deliveries/counts?businessUnitId=bu-syd&from=2026-09-01&to=2026-09-30", "", "X-Automation-Business-Units: bu-nyc"), 404)
	unknownKey, unknownBU := e.unknownDelivery(t, all)
	var q struct {
		Items []delivery.UnknownDelivery `json:"items"`
	}
	ok(e.vcall(t, v, "GET", "/api/support/deliveries/unknown?businessUnitId="+unknownBU+"&limit=1", ""), 200).JSON(t, &q)
	ok(e.vcall(t, v, "GET", "/api/support/deliveries/unknown?businessUnitId="+unknownBU+"&limit=9999", ""), 400)
	ok(e.vcall(t, v, "GET", "/api/support/deliveries/unknown?businessUnitId="+unknownBU, "", "X-Automation-Business-Units: bu-none"), 404)
	ok(e.vcall(t, v, "GET", "/api/support/deliveries/unknown", ""), 422)
	var item delivery.UnknownDelivery
	for _, it := range q.Items {
		if it.DeliveryKey == unknownKey {
			item = it
		}
	}
	if item.DeliveryKey == "" {
		t.Fatalf("the UNKNOWN delivery %s is not listed: %+v", unknownKey, q.Items)
	}
	resolve := "/api/support/deliveries/unknown/" + url.PathEscape(item.DeliveryKey) + "/resolve"
	body := `{"businessUnitId":"` + unknownBU + `","status":"Sent","reason":"provider portal shows it delivered","providerReference":"msg-42"}`
	ok(e.vcall(t, v, "POST", resolve, body, operator), 428)
	ok(e.vcall(t, v, "POST", resolve, body, operator, ifMatch(item.Version+3)), 412)
	ok(e.vcall(t, v, "POST", resolve, `{"businessUnitId":"`+unknownBU+`","status":"Maybe","reason":"?"}`, operator, ifMatch(item.Version)), 422)
	ok(e.vcall(t, v, "POST", resolve, body, operator, ifMatch(item.Version)), 200)
	ok(e.vcall(t, v, "POST", resolve, body, operator, ifMatch(item.Version+1)), 409)
}

// unknownDelivery makes an UNKNOWN delivery as a provider timeout would: it claims the first
// due row at a pending bu-syd reminder's time, completes it with one log delivery and
// finishes that delivery Unknown (store calls of the dispatcher). It returns the delivery's
// DeliveryKey and business unit.
func (e *env) unknownDelivery(t *testing.T, rows []automation.SchedulerRow) (key, bu string) {
	t.Helper()
	ctx := context.Background()
	for _, r := range rows {
		if r.BusinessUnitID != "bu-syd" || r.Status != automation.StatusPending || r.AutomationType != automation.TypeReminder {
			continue
		}
		cur := e.Row(t, r.ID)
		if cur.Status != automation.StatusPending || cur.IsOnSupportHold {
			continue
		}
		claimed, err := e.rt.Store.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: cur.ScheduledOn.Add(1), Lease: time.Minute, Limit: 1})
		if err != nil || len(claimed) == 0 {
			continue
		}
		c := claimed[0]
		jobs, _, err := delivery.Build([]delivery.Request{{SchedulerKey: c.SchedulerKey, BusinessUnitID: c.BusinessUnitID, Channel: "log",
			Recipient: "amelia.nguyen@example.test", Template: "police-vetting-expiry", LocalDate: "2026-10-01"}})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.rt.Store.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: c.ID, Token: c.Version, Now: cur.ScheduledOn, Deliveries: jobs}); err != nil {
			t.Fatal(err)
		}
		cl, err := e.rt.Store.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: jobs[0].DeliveryKey, Now: cur.ScheduledOn, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := e.rt.Store.NotificationFinish(ctx, store.NotificationFinishParams{ID: cl.Job.ID, Token: cl.Job.Version, Now: cur.ScheduledOn,
			Status: store.NotificationUnknown, Error: "provider timeout"}); err != nil {
			t.Fatal(err)
		}
		return jobs[0].DeliveryKey, c.BusinessUnitID
	}
	t.Fatal("no pending bu-syd reminder row to deliver")
	return "", ""
}

// TestOpenAPIValidationCatchesAMismatch: the checks above can fail. The same real answers,
// validated against a document whose schemas were changed, are refused: a required member
// the answer lacks, an undocumented status, and a problem code outside the enumeration.
func TestOpenAPIValidationCatchesAMismatch(t *testing.T) {
	t.Parallel()
	e, _ := scenarioEnv(t, "realistic.json")
	edits := map[string]func(string) string{
		"find page requires an undocumented member": func(s string) string {
			return strings.Replace(s, "      required: [rows, order]\n", "      required: [rows, order, total]\n", 1)
		},
		"metrics without the onHold property": func(s string) string {
			return strings.Replace(s, "        onHold: {type: integer, minimum: 0}\n        onHoldByReason", "        onHoldByReason", 1)
		},
		"404 of a row not documented": func(s string) string {
			return strings.Replace(s, "              schema: {$ref: '#/components/schemas/RowDetail'}\n        '400': {$ref: '#/components/responses/Problem'}\n        '401': {$ref: '#/components/responses/Problem'}\n        '404': {$ref: '#/components/responses/Problem'}\n",
				"              schema: {$ref: '#/components/schemas/RowDetail'}\n        '400': {$ref: '#/components/responses/Problem'}\n        '401': {$ref: '#/components/responses/Problem'}\n", 1)
		},
		"problem codes without NotFound": func(s string) string {
			return strings.Replace(s, "enum: [Malformed, Unauthorized, NotFound, ", "enum: [Malformed, Unauthorized, ", 1)
		},
	}
	calls := []struct{ method, path string }{
		{"GET", "/api/support/scheduler-rows?businessUnitId=bu-syd&limit=3"},
		{"GET", "/api/support/metrics"},
		{"GET", "/api/support/scheduler-rows/999999999"},
	}
	var answers []resp
	for _, c := range calls {
		answers = append(answers, e.call(t, c.method, c.path, ""))
	}
	good := openapitest.LoadFile(t, "openapi.yaml")
	for i, c := range calls {
		if msg := validate(good, c.method, c.path, "", answers[i]); msg != "" {
			t.Fatalf("%s %s → %d: the real document refuses it: %s", c.method, c.path, answers[i].Code, msg)
		}
	}
	for name, edit := range edits {
		bad := good.Edit(t, edit)
		refused := false
		for i, c := range calls {
			if validate(bad, c.method, c.path, "", answers[i]) != "" {
				refused = true
			}
		}
		if !refused {
			t.Errorf("%s: no answer was refused", name)
		}
	}
}

// TestBearerAnswersMatchOpenAPI: with AUTOMATION_API_TOKEN set, every support route answers
// a documented 401 problem without the bearer token, and the documented answers with it.
func TestBearerAnswersMatchOpenAPI(t *testing.T) {
	t.Parallel()
	e := seeded(t, map[string]string{"AUTOMATION_API_TOKEN": "s3cret"})
	v := openapitest.LoadFile(t, "openapi.yaml")
	row := e.RowsOf(t, guidA)[0]
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/api/support/scheduler-rows?businessUnitId=bu-syd", ""},
		{"GET", fmt.Sprintf("/api/support/scheduler-rows/%d", row.ID), ""},
		{"POST", fmt.Sprintf("/api/support/scheduler-rows/%d/release", row.ID), `{"reason":"x"}`},
		{"POST", fmt.Sprintf("/api/support/scheduler-rows/%d/retry", row.ID), `{"reason":"x"}`},
		{"POST", fmt.Sprintf("/api/support/scheduler-rows/%d/cancel", row.ID), `{"reason":"x"}`},
		{"POST", "/api/support/releases", `{"filter":{"businessUnitId":"bu-syd"},"reason":"x"}`},
		{"GET", "/api/support/explain?sourceType=PoliceVetting&sourceGuid=" + guidA, ""},
		{"GET", "/api/support/metrics", ""},
		{"GET", "/api/support/deliveries/unknown?businessUnitId=bu-syd", ""},
		{"POST", "/api/support/deliveries/unknown/k/resolve", `{"businessUnitId":"bu-syd","status":"Sent","reason":"x"}`},
		{"GET", "/api/support/deliveries/counts?businessUnitId=bu-syd&from=2026-09-01&to=2026-09-30", ""},
	} {
		if r := e.vcall(t, v, c.method, c.path, c.body, operator, ifMatch(row.Version), "Authorization: Bearer wrong"); r.Code != 401 {
			t.Errorf("%s %s with a wrong token: %d", c.method, c.path, r.Code)
		}
	}
	for _, path := range []string{"/api/support/metrics", "/api/support/explain?sourceType=PoliceVetting&sourceGuid=" + guidA,
		fmt.Sprintf("/api/support/scheduler-rows/%d", row.ID)} {
		if r := e.vcall(t, v, "GET", path, "", "Authorization: Bearer s3cret"); r.Code != 200 {
			t.Errorf("GET %s with the token: %d %s", path, r.Code, r.Body)
		}
	}
}
