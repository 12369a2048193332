package console_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/budget/billing"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/money"
	"github.com/automation-platform/automation/shared/store"
	"golang.org/x/net/html"
)

// page fetches path with the bearer token (and the scope header when units is set), checks
// the status, and parses the answer as HTML: every page must be well-formed enough for a
// parser and carry its labels.
func (e *env) page(t *testing.T, path, units string, status int) (string, *html.Node) {
	t.Helper()
	h := []string{"Authorization", "Bearer " + token}
	if units != "" {
		h = append(h, "X-Automation-Business-Units", units)
	}
	code, body := e.get(t, http.DefaultClient, path, h...)
	if code != status {
		t.Fatalf("GET %s (%s): %d, want %d: %.3000s", path, units, code, status, body)
	}
	doc, err := html.Parse(strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	return body, doc
}

// labelled checks that every input, select and textarea of the page has a label (a <label
// for=id>, an aria-label or a hidden type): the pages are usable with a screen reader.
func labelled(t *testing.T, doc *html.Node) {
	t.Helper()
	fors := map[string]bool{}
	var controls []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode {
			switch n.Data {
			case "label":
				fors[attr(n, "for")] = true
			case "input", "select", "textarea":
				controls = append(controls, n)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, c := range controls {
		if attr(c, "type") == "hidden" || attr(c, "aria-label") != "" {
			continue
		}
		if id := attr(c, "id"); id == "" || !fors[id] {
			t.Errorf("a %s without a label: name=%q id=%q", c.Data, attr(c, "name"), attr(c, "id"))
		}
	}
}

func attr(n *html.Node, k string) string {
	for _, a := range n.Attr {
		if a.Key == k {
			return a.Val
		}
	}
	return ""
}

// TestGatewayPages: the event metrics page counts an ingested event with its type's
// definition version and, for a caller that sees every unit, the outbox backlog; a caller of
// bu-nyc sees neither bu-syd's counts nor the backlog, and bu-syd named through its scope is
// 404. The registry page lists the types and a type's versions for a platform caller, and
// tells a unit-scoped caller it is platform-wide without listing anything.
func TestGatewayPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	def := `{"eventType":"ViewItem","class":"COUNTER","schema":{"type":"object"},"counterInstructions":[{"attribute_code":"views","entity_type":"CUSTOMER","operation":"INCREMENT"}]}`
	v1, err := e.rt.Registry.Save(ctx, gateway.SaveParams{EventType: "ViewItem", Definition: []byte(def), Operator: "ops.jane"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.rt.Registry.Save(ctx, gateway.SaveParams{EventType: "ViewItem", Definition: []byte(def), Operator: "ops.<b>", ExpectedVersion: v1.Version}); err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest("POST", e.url("/api/events"), strings.NewReader(`{"specversion":"1.0","id":"v-1","source":"/app","type":"ViewItem","businessunitid":"bu-syd","customerid":"C-1","data":{}}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/cloudevents+json")
	if code, body := do(t, http.DefaultClient, req); code != 200 || !strings.Contains(body, `"registryVersion":2`) {
		t.Fatalf("ingest: %d %s", code, body)
	}
	body, doc := e.page(t, "/api/console/events", "", 200)
	labelled(t, doc)
	row := regexp.MustCompile(`<th scope="row">ViewItem</th><td>2</td><td>1</td><td>0</td><td>0</td>`)
	if !row.MatchString(body) || !strings.Contains(body, `id="outbox-lag"`) || !strings.Contains(body, "save sequence is 2") {
		t.Fatalf("events, every unit: %.4000s", body)
	}
	body, _ = e.page(t, "/api/console/events", "bu-nyc", 200)
	if strings.Contains(body, ">ViewItem<") || strings.Contains(body, `id="outbox-lag"`) {
		t.Fatalf("events, bu-nyc: %.4000s", body)
	}
	e.page(t, "/api/console/events?businessUnitId=bu-syd", "bu-nyc", 404)
	body, doc = e.page(t, "/api/console/registry?eventType=ViewItem", "", 200)
	labelled(t, doc)
	if !strings.Contains(body, `>ViewItem</a>`) || !strings.Contains(body, "Version 2 · ops.&lt;b&gt;") || !strings.Contains(body, "Version 1 · ops.jane") || !strings.Contains(body, "&#34;COUNTER&#34;") {
		t.Fatalf("registry: %.4000s", body)
	}
	e.page(t, "/api/console/registry?eventType=Nope", "", 404)
	body, _ = e.page(t, "/api/console/registry?eventType=ViewItem", "bu-syd", 200)
	if !strings.Contains(body, `id="registry-scope"`) || strings.Contains(body, "ViewItem</a>") || strings.Contains(body, "ops.jane") {
		t.Fatalf("registry, bu-syd: %.4000s", body)
	}
}

// TestAttributePage: the lookup shows an entity's attributes as the read API reads them
// (a counter applied through the attribute engine), an entity without attributes says so, a
// malformed entity type is 422, and another unit's entity is 404 for a bu-nyc caller.
func TestAttributePage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	ent := store.AttributeEntity{BusinessUnitID: "bu-syd", EntityType: "CUSTOMER", EntityID: "C-<7>"}
	if _, err := e.rt.Store.AttributeApply(ctx, store.AttributeApplyParams{Now: now, EventID: "e-1", Entities: []store.AttributeEntity{ent},
		Decide: func(map[store.AttributeEntity]map[string]store.AttributeRow) (store.AttributeDecision, error) {
			return store.AttributeDecision{Rows: []store.AttributeRow{{AttributeEntity: ent, AttributeCode: "total_redeem_count", ValueType: string(attribute.TypeNumber),
				ValueText: "3", LastEventOn: now, UpdatedOn: now}}}, nil
		}}); err != nil {
		t.Fatal(err)
	}
	body, doc := e.page(t, "/api/console/attributes?businessUnitId=bu-syd&entityType=CUSTOMER&entityId="+url.QueryEscape("C-<7>"), "", 200)
	labelled(t, doc)
	if !strings.Contains(body, `<th scope="row">total_redeem_count</th><td>number</td><td>3</td>`) || !strings.Contains(body, "CUSTOMER C-&lt;7&gt; in bu-syd") {
		t.Fatalf("attributes: %.4000s", body)
	}
	body, _ = e.page(t, "/api/console/attributes?businessUnitId=bu-syd&entityType=CUSTOMER&entityId=C-8", "", 200)
	if !strings.Contains(body, "No attributes for this entity.") {
		t.Fatalf("no attributes: %.3000s", body)
	}
	e.page(t, "/api/console/attributes?businessUnitId=bu-syd&entityType=customer&entityId=C-8", "", 422)
	e.page(t, "/api/console/attributes?businessUnitId=bu-syd&entityType=CUSTOMER&entityId=C-<7>", "bu-nyc", 404)
	e.page(t, "/api/console/attributes?businessUnitId=bu-nowhere&entityType=CUSTOMER&entityId=C-1", "", 404)
}

// TestCampaignPage: a unit's campaigns, one campaign with its (empty) UNKNOWN queue, and the
// scope: bu-syd's campaigns through bu-nyc's scope are 404, and an execution id of another
// unit (or none) is 404 too.
func TestCampaignPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	registerSignedUp(t, e)
	def := campaign.Definition{Name: "Welcome <pack>", Status: store.CampaignActive, Triggers: []string{"SignedUp"},
		Actions: []campaign.Action{{Key: "greet", Type: "NOTIFICATION_LOG", Provider: "log", Params: json.RawMessage(`{"subject":"Hi","text":"Welcome"}`)}}}
	if _, err := e.rt.Campaigns.Save(ctx, "bu-syd", "welcome", def, nil); err != nil {
		t.Fatal(err)
	}
	body, doc := e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&campaignId=welcome", "", 200)
	labelled(t, doc)
	if !strings.Contains(body, `campaignId=welcome">welcome</a>`) || !strings.Contains(body, "Welcome &lt;pack&gt;") || !strings.Contains(body, `id="unknown-commands"`) ||
		!strings.Contains(body, "SignedUp") {
		t.Fatalf("campaigns: %.4000s", body)
	}
	e.page(t, "/api/console/campaigns?businessUnitId=bu-syd", "bu-nyc", 404)
	e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&campaignId=nope", "", 404)
	e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&executionId=exe-none", "", 404)
	body, _ = e.page(t, "/api/console/campaigns", "", 200)
	if strings.Contains(body, `id="campaigns"`) {
		t.Fatalf("no unit asked, a list shown: %.3000s", body)
	}
}

// unknownBilling answers every charge with "outcome unknown" (a timeout after the request
// was written): the fee becomes UNKNOWN.
type unknownBilling struct{}

func (unknownBilling) CreateTransfer(context.Context, billing.TransferRequest) (billing.Transfer, error) {
	return billing.Transfer{}, billing.ErrOutcomeUnknown
}
func (unknownBilling) GetTransfer(context.Context, string) (billing.Transfer, error) {
	return billing.Transfer{}, billing.ErrOutcomeUnknown
}
func (unknownBilling) GetBalance(_ context.Context, bu, cur string) (billing.Balance, error) {
	return billing.Balance{BusinessUnitID: bu, Currency: cur, Available: money.Minor(1_000_000)}, nil
}

// TestFeeQueuePage: an UNKNOWN fee is listed with a resolve form carrying its revision; a
// resolution from a stale revision is 412 with a clear message and changes nothing; one
// without a reason is 422; another unit's scope is 404; without the CSRF field a cookie
// session's post is 403; the right revision resolves it (the notice, and the queue is empty).
func TestFeeQueuePage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	e.rt.Budget.Billing = unknownBilling{}
	ensureCampaign(t, e, "bu-syd", "promo")
	if _, err := e.rt.Budget.CreateBudget(ctx, "bu-syd", "promo", budget.BudgetInput{Currency: "AUD", MaxCost: 100}, "seed"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.rt.Budget.PutPolicy(ctx, "bu-syd", "ADD_SMS", budget.PolicyInput{Formula: "FIXED", Rate: "10", Unit: "SMS", TransferType: "SMS_FEE", Currency: "AUD"}, 0, "seed"); err != nil {
		t.Fatal(err)
	}
	d, err := e.rt.Budget.Prepare(ctx, budget.Command{CommandID: "cmd-1", BusinessUnitID: "bu-syd", CampaignID: "promo", ActionType: "ADD_SMS", LocalDate: "2026-10-05"})
	if err != nil || d.Kind != budget.FeeUnknown {
		t.Fatalf("prepare: %+v %v", d, err)
	}
	fee, err := e.rt.Store.FeeTransferGet(ctx, d.OrderID)
	if err != nil {
		t.Fatal(err)
	}
	body, doc := e.page(t, "/api/console/fees?businessUnitId=bu-syd", "", 200)
	labelled(t, doc)
	if !strings.Contains(body, d.OrderID) || !strings.Contains(body, `name="revision" value="`+itoa(fee.Revision)+`"`) {
		t.Fatalf("queue: %.4000s", body)
	}
	e.page(t, "/api/console/fees?businessUnitId=bu-syd", "bu-nyc", 404)
	bearer := []string{"Authorization", "Bearer " + token}
	form := func(rev int64, reason string, extra ...string) (int, string) {
		v := url.Values{"businessUnitId": {"bu-syd"}, "orderId": {d.OrderID}, "revision": {itoa(rev)}, "status": {"SUCCEEDED"}, "operator": {"ops.jane"}, "reason": {reason}}
		return e.form(t, http.DefaultClient, "/api/console/fees", v, append(bearer, extra...)...)
	}
	if code, body := form(fee.Revision+5, "checked the portal"); code != 412 || !strings.Contains(body, "The fee changed since you loaded it") || !strings.Contains(body, "Nothing was done") {
		t.Fatalf("stale: %d %.3000s", code, body)
	}
	if code, body := form(fee.Revision, " "); code != 422 || !strings.Contains(body, "reason") {
		t.Fatalf("no reason: %d %.3000s", code, body)
	}
	if code, _ := form(fee.Revision, "checked", "X-Automation-Business-Units", "bu-nyc"); code != 404 {
		t.Fatalf("out of scope: %d", code)
	}
	if got, _ := e.rt.Store.FeeTransferGet(ctx, d.OrderID); got.Status != store.FeeUnknown || got.Revision != fee.Revision {
		t.Fatalf("refused forms changed the fee: %+v", got)
	}
	c := client(t)
	if code, _ := e.form(t, c, "/api/console/login", url.Values{"token": {token}}); code != 303 {
		t.Fatalf("sign in: %d", code)
	}
	v := url.Values{"businessUnitId": {"bu-syd"}, "orderId": {d.OrderID}, "revision": {itoa(fee.Revision)}, "status": {"SUCCEEDED"}, "operator": {"ops.jane"}, "reason": {"x"}}
	if code, _ := e.form(t, c, "/api/console/fees", v); code != 403 {
		t.Fatalf("cookie session without CSRF: %d", code)
	}
	code, body := form(fee.Revision, "checked in the provider portal")
	if code != 200 || !strings.Contains(body, "resolved as SUCCEEDED by ops.jane") || !strings.Contains(body, `id="no-fees"`) {
		t.Fatalf("resolve: %d %.3000s", code, body)
	}
	if got, _ := e.rt.Store.FeeTransferGet(ctx, d.OrderID); got.Status != store.FeeSucceeded || got.ResolvedBy != "ops.jane" {
		t.Fatalf("after resolve: %+v", got)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
