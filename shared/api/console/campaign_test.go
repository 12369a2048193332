package console_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/store"
	"golang.org/x/net/html"
)

// registerSignedUp registers the event type SignedUp, a campaign's trigger
// (campaign.Admin.KnownTriggers), unless it is registered.
func registerSignedUp(t *testing.T, e *env) {
	t.Helper()
	ctx := context.Background()
	if reg, err := e.rt.Registry.Cache.Current(ctx); err == nil {
		if _, ok := reg.Lookup("SignedUp"); ok {
			return
		}
	}
	if _, err := e.rt.Registry.Save(ctx, gateway.SaveParams{EventType: "SignedUp", Operator: "test",
		Definition: []byte(`{"eventType":"SignedUp","class":"DIRECT","schema":{"type":"object"}}`)}); err != nil {
		t.Fatal(err)
	}
}

// ensureCampaign stores campaign id in bu unless it exists (a budget needs its campaign:
// budget.Service.Campaigns).
func ensureCampaign(t *testing.T, e *env, bu, id string) {
	t.Helper()
	if _, err := e.rt.Store.CampaignGet(context.Background(), bu, id); err == nil {
		return
	}
	saveCampaign(t, e, bu, id)
}

// saveCampaign stores a one-action campaign id in bu.
func saveCampaign(t *testing.T, e *env, bu, id string) {
	t.Helper()
	registerSignedUp(t, e)
	def := campaign.Definition{Name: "Welcome", Status: store.CampaignActive, Triggers: []string{"SignedUp"},
		Actions: []campaign.Action{{Key: "greet", Type: "NOTIFICATION_LOG", Provider: "log", Params: json.RawMessage(`{"subject":"Hi","text":"Welcome"}`)}}}
	if _, err := e.rt.Campaigns.Save(context.Background(), bu, id, def, nil); err != nil {
		t.Fatal(err)
	}
}

// startExecution records execution exe of campaign id in bu (recipient "cust-"+exe) with its
// first command, as the dispatcher does, and returns that command.
func startExecution(t *testing.T, e *env, bu, id, exe string, at time.Time) store.CampaignCommand {
	t.Helper()
	cmd := store.CampaignCommand{CommandID: exe + ":0:greet", EffectKey: "ce-" + exe, ExecutionID: exe, BusinessUnitID: bu, CampaignID: id,
		RecipientID: "cust-" + exe, ActionIndex: 0, ActionKey: "greet", ActionType: "NOTIFICATION_LOG", Provider: "log", LocalDate: "2026-10-05"}
	if _, err := e.rt.Store.CampaignStart(context.Background(), store.CampaignStartParams{
		Execution: store.CampaignExecution{ExecutionID: exe, BusinessUnitID: bu, CampaignID: id, RunID: "run-1", RecipientID: "cust-" + exe,
			SourceEventID: "evt-" + exe, LocalDate: "2026-10-05", DefinitionJSON: `{}`},
		Command: cmd, Now: at}); err != nil {
		t.Fatal(err)
	}
	return cmd
}

// finishCommand claims cmd at f.Now (a one-minute lease) and finishes it as f says (its
// CommandID and Token filled in); it returns the command as finished.
func finishCommand(t *testing.T, e *env, cmd store.CampaignCommand, f store.CampaignFinishParams) store.CampaignCommand {
	t.Helper()
	ctx := context.Background()
	r, err := e.rt.Store.CampaignClaim(ctx, store.CampaignClaimParams{CommandID: cmd.CommandID, Now: f.Now, Lease: time.Minute, FreezeParams: `{}`})
	if err != nil || !r.Claimed {
		t.Fatalf("claim: %+v %v", r, err)
	}
	f.CommandID, f.Token = cmd.CommandID, r.Command.Version
	done, err := e.rt.Store.CampaignFinish(ctx, f)
	if err != nil {
		t.Fatal(err)
	}
	return done
}

// find returns the first element with attribute k=v, or nil.
func find(n *html.Node, k, v string) *html.Node {
	if n.Type == html.ElementNode && attr(n, k) == v {
		return n
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		if f := find(c, k, v); f != nil {
			return f
		}
	}
	return nil
}

// TestCampaignExecutionsPage: the campaign page lists the campaign's executions newest first,
// 25 a page; "Older executions" leads to the rest and the last page has no further link;
// another unit's execution of a campaign with the same id is never listed; a cursor of
// another campaign is 400; bu-syd's campaign through bu-nyc's scope is 404.
func TestCampaignExecutionsPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	saveCampaign(t, e, "bu-syd", "welcome")
	saveCampaign(t, e, "bu-syd", "other")
	saveCampaign(t, e, "bu-nyc", "welcome")
	for i := 1; i <= 27; i++ {
		startExecution(t, e, "bu-syd", "welcome", fmt.Sprintf("exe-%02d", i), now.Add(time.Duration(i)*time.Minute))
	}
	startExecution(t, e, "bu-nyc", "welcome", "exe-nyc", now)
	body, doc := e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&campaignId=welcome", "", 200)
	labelled(t, doc)
	if n := strings.Count(body, "executionId=exe-"); n != 25 {
		t.Fatalf("first page links %d executions, want 25: %.4000s", n, body)
	}
	if i27, i03 := strings.Index(body, ">exe-27</a>"), strings.Index(body, ">exe-03</a>"); i27 < 0 || i03 < 0 || i27 > i03 || strings.Contains(body, ">exe-02<") {
		t.Fatalf("first page is not exe-27..exe-03, newest first: %.6000s", body)
	}
	if strings.Contains(body, "exe-nyc") {
		t.Fatal("bu-nyc's execution is listed under bu-syd")
	}
	next := find(doc, "id", "executions-next")
	if next == nil {
		t.Fatalf("no link to the older executions: %.6000s", body)
	}
	u, err := url.Parse(attr(next, "href"))
	if err != nil {
		t.Fatal(err)
	}
	body, doc = e.page(t, u.RequestURI(), "", 200)
	labelled(t, doc)
	if !strings.Contains(body, ">exe-02</a>") || !strings.Contains(body, ">exe-01</a>") || strings.Contains(body, ">exe-03</a>") || find(doc, "id", "executions-next") != nil {
		t.Fatalf("second page: %.6000s", body)
	}
	if !strings.Contains(body, `<td>cust-exe-01</td><td>RUNNING</td><td>action 0</td><td>2026-10-05</td><td>run-1</td>`) {
		t.Fatalf("an execution's row: %.6000s", body)
	}
	cursor := u.Query().Get("cursor")
	e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&campaignId=other&cursor="+url.QueryEscape(cursor), "", 400)
	e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&campaignId=welcome", "bu-nyc", 404)
	body, _ = e.page(t, "/api/console/campaigns?businessUnitId=bu-nyc&campaignId=welcome", "bu-nyc", 200)
	if !strings.Contains(body, ">exe-nyc</a>") || strings.Contains(body, "exe-01") {
		t.Fatalf("bu-nyc's page: %.4000s", body)
	}
	body, _ = e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&campaignId=other", "", 200)
	if !strings.Contains(body, "No executions.") {
		t.Fatalf("a campaign without executions: %.4000s", body)
	}
}

// TestCampaignResolvePage: an UNKNOWN command awaiting a person is listed with a resolve form
// carrying its version; a resolution from a stale version is 412 with a clear message and
// changes nothing; one without a reason is 422, without a version 428; another unit's scope,
// or the command named under another campaign, is 404; a cookie session's post without the
// CSRF field is 403; the right version resolves it through the campaigns service (the notice,
// the command SUCCEEDED with the operator, reason and provider reference), and the same form
// posted again (a reload) is 409, saying the command no longer waits and nothing was done.
func TestCampaignResolvePage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	saveCampaign(t, e, "bu-syd", "welcome")
	saveCampaign(t, e, "bu-syd", "other")
	cmd := startExecution(t, e, "bu-syd", "welcome", "exe-1", now)
	unknown := finishCommand(t, e, cmd, store.CampaignFinishParams{Now: now, Status: store.CommandUnknown, Error: "timeout <after apply>"})
	body, doc := e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&campaignId=welcome", "", 200)
	labelled(t, doc)
	if !strings.Contains(body, `name="commandId" value="exe-1:0:greet"`) || !strings.Contains(body, `name="version" value="`+itoa(unknown.Version)+`"`) ||
		!strings.Contains(body, "timeout &lt;after apply&gt;") {
		t.Fatalf("queue: %.6000s", body)
	}
	values := func(id string, ver int64, reason string) url.Values {
		return url.Values{"businessUnitId": {"bu-syd"}, "campaignId": {id}, "commandId": {cmd.CommandID}, "version": {itoa(ver)}, "status": {"SUCCEEDED"},
			"operator": {"ops.jane"}, "reason": {reason}, "providerRef": {"tx-42"}}
	}
	form := e.bearerPoster(t, "/api/console/campaigns")
	if code, body := form(values("welcome", unknown.Version+5, "checked the provider's report")); code != 412 ||
		!strings.Contains(body, "The command changed since you loaded it") || !strings.Contains(body, "Nothing was done") || !strings.Contains(body, `name="version" value="`+itoa(unknown.Version)+`"`) {
		t.Fatalf("stale: %d %.4000s", code, body)
	}
	if code, body := form(values("welcome", unknown.Version, " ")); code != 422 || !strings.Contains(body, "reason") || !strings.Contains(body, `id="campaign-problem"`) {
		t.Fatalf("no reason: %d %.4000s", code, body)
	}
	noVersion := values("welcome", unknown.Version, "checked")
	noVersion.Del("version")
	if code, _ := form(noVersion); code != 428 {
		t.Fatalf("no version: %d", code)
	}
	if code, _ := form(values("welcome", unknown.Version, "checked"), "X-Automation-Business-Units", "bu-nyc"); code != 404 {
		t.Fatalf("out of scope: %d", code)
	}
	if code, _ := form(values("other", unknown.Version, "checked")); code != 404 {
		t.Fatalf("under another campaign: %d", code)
	}
	c := client(t)
	if code, _ := e.form(t, c, "/api/console/login", url.Values{"token": {token}}); code != 303 {
		t.Fatalf("sign in: %d", code)
	}
	if code, _ := e.form(t, c, "/api/console/campaigns", values("welcome", unknown.Version, "checked")); code != 403 {
		t.Fatalf("cookie session without CSRF: %d", code)
	}
	if got, _ := e.rt.Store.CampaignCommandGet(ctx, cmd.CommandID); got.Status != store.CommandUnknown || got.Version != unknown.Version {
		t.Fatalf("refused forms changed the command: %+v", got)
	}
	code, body := form(values("welcome", unknown.Version, "the provider's report shows it applied"))
	if code != 200 || !strings.Contains(body, "Command exe-1:0:greet resolved as SUCCEEDED by ops.jane") || strings.Contains(body, `name="commandId"`) {
		t.Fatalf("resolve: %d %.4000s", code, body)
	}
	got, _ := e.rt.Store.CampaignCommandGet(ctx, cmd.CommandID)
	if got.Status != store.CommandSucceeded || got.ResolvedBy != "ops.jane" || got.ResolutionReason != "the provider's report shows it applied" || got.ProviderRef != "tx-42" {
		t.Fatalf("after resolve: %+v", got)
	}
	if code, body := form(values("welcome", unknown.Version, "again")); code != 409 || !strings.Contains(body, "exe-1:0:greet is SUCCEEDED now") || !strings.Contains(body, "Nothing was done") {
		t.Fatalf("the same form again: %d, want 409: %.4000s", code, body)
	}
	if got, _ := e.rt.Store.CampaignCommandGet(ctx, cmd.CommandID); got.ResolutionReason != "the provider's report shows it applied" {
		t.Fatalf("the re-post changed the resolution: %+v", got)
	}
}
