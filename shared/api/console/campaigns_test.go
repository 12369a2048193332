package console_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// TestCampaignPausedByItsBudgetSaysWhy: a campaign its budget paused shows PAUSED with the
// reason (the budget, with its figures and a link to the budget page), the action chain with
// each action's provider and price, and the execution whose command waits for budget as
// BLOCKED · WAITING_BUDGET, not RUNNING; the execution's history names the command's
// schedule and its wait.
func TestCampaignPausedByItsBudgetSaysWhy(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	pauseBudget(t, e, "bu-syd", "promo", 100)
	cmd := startExecution(t, e, "bu-syd", "promo", "exe-1", now)
	startExecution(t, e, "bu-syd", "promo", "exe-2", now.Add(time.Minute))
	due := now.Add(time.Minute)
	finishCommand(t, e, cmd, store.CampaignFinishParams{Now: now, Status: store.CommandWaitingBudget, NextAttemptOn: &due, Error: "budget short"})
	c, _ := e.rt.Store.CampaignGet(ctx, "bu-syd", "promo")
	c.Status = store.CampaignPaused // as the budget guard pauses it (campaignbudget.Guard)
	if _, err := e.rt.Store.CampaignSave(ctx, store.CampaignSaveParams{Campaign: c, ExpectedVersion: &c.Version, Now: now}); err != nil {
		t.Fatal(err)
	}
	body, doc := e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&campaignId=promo", "", 200)
	labelled(t, doc)
	for _, want := range []string{`<dd id="campaign-status">PAUSED</dd>`, "Why it is PAUSED", "Budget: paused for BUDGET — cost 0 and reserved 0 of max 100 AUD",
		`id="budget-link"`, "<th scope=\"row\">greet</th><td>NOTIFICATION_LOG</td><td>log</td><td>ALWAYS</td>", "free (no price policy)",
		"BLOCKED · WAITING_BUDGET: greet waits for budget", `id="resume-form"`, `id="stop-form"`} {
		if !strings.Contains(body, want) {
			t.Fatalf("the page lacks %q: %s", want, body[strings.Index(body, `id="campaign"`):])
		}
	}
	if strings.Contains(body, `id="pause-form"`) {
		t.Fatal("a paused campaign is offered a pause")
	}
	// exe-2's command is QUEUED under a paused campaign: it waits for the resume.
	if !strings.Contains(body, "BLOCKED · PAUSED: greet waits for the campaign to resume") {
		t.Fatalf("exe-2: %.8000s", body)
	}
	body, _ = e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&campaignId=promo&executionId=exe-1", "", 200)
	for _, want := range []string{`id="execution-history"`, "<strong>ExecutionStarted</strong>", "<strong>CommandScheduled</strong>", "<strong>CommandWAITING_BUDGET</strong>",
		"1 claim(s), 0 retried · last error: budget short", "recipientId=cust-exe-1"} {
		if !strings.Contains(body, want) {
			t.Fatalf("the history lacks %q: %.8000s", want, body)
		}
	}
	// The filters: status and recipient, and a cursor of another filter is refused.
	body, _ = e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&campaignId=promo&recipientId=cust-exe-2", "", 200)
	if !strings.Contains(body, ">exe-2</a>") || strings.Contains(body, ">exe-1</a>") {
		t.Fatalf("recipient filter: %.8000s", body)
	}
	body, _ = e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&campaignId=promo&status=COMPLETED", "", 200)
	if strings.Contains(body, ">exe-1</a>") || strings.Contains(body, ">exe-2</a>") {
		t.Fatalf("status filter: %.8000s", body)
	}
	e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&campaignId=promo&status=SLEEPING", "", 422)
}

// TestCampaignStatusForms: pause, resume and stop go through campaign.Admin.SetStatus with
// the version shown: a stale version is 412 with the campaign as it is now and changes
// nothing; no version 428; no reason 422; the same status again 409; another unit 404; a
// cookie session's post without the CSRF field 403. A pause is audited with who and why, and
// the page then says a person paused it, naming them and their reason.
func TestCampaignStatusForms(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	saveCampaign(t, e, "bu-syd", "welcome")
	c, _ := e.rt.Store.CampaignGet(ctx, "bu-syd", "welcome")
	body, doc := e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&campaignId=welcome", "", 200)
	labelled(t, doc)
	if !strings.Contains(body, `id="pause-form"`) || !strings.Contains(body, `action="/api/console/campaign-status"`) || strings.Contains(body, `id="resume-form"`) {
		t.Fatalf("forms: %.6000s", body)
	}
	values := func(action string, ver int64, reason string) url.Values {
		v := url.Values{"action": {action}, "businessUnitId": {"bu-syd"}, "campaignId": {"welcome"}, "operator": {"ops.jane"}, "reason": {reason}}
		if ver > 0 {
			v.Set("version", itoa(ver))
		}
		return v
	}
	post := e.bearerPoster(t, "/api/console/campaign-status")
	if code, body := post(values("PAUSE", c.Version+2, "provider outage")); code != 412 || !strings.Contains(body, "The campaign changed since you loaded it") ||
		!strings.Contains(body, "ACTIVE at version "+itoa(c.Version)) || !strings.Contains(body, "Nothing was done") || !strings.Contains(body, `name="version" value="`+itoa(c.Version)+`"`) {
		t.Fatalf("stale: %d %.6000s", code, body)
	}
	if code, _ := post(values("PAUSE", 0, "provider outage")); code != 428 {
		t.Fatalf("no version: %d", code)
	}
	if code, body := post(values("PAUSE", c.Version, " ")); code != 422 || !strings.Contains(body, "reason") {
		t.Fatalf("no reason: %d %.3000s", code, body)
	}
	if code, body := post(values("RESUME", c.Version, "again")); code != 409 || !strings.Contains(body, "ACTIVE already") {
		t.Fatalf("resume an active campaign: %d %.3000s", code, body)
	}
	e.refusesOutOfScopeAndWithoutCSRF(t, "/api/console/campaign-status", values("PAUSE", c.Version, "provider outage"))
	if got, _ := e.rt.Store.CampaignGet(ctx, "bu-syd", "welcome"); got.Version != c.Version || got.Status != store.CampaignActive {
		t.Fatalf("refused forms changed the campaign: %+v", got)
	}
	if a, _ := e.rt.Store.CampaignAuditList(ctx, "bu-syd", "welcome", 10); len(a) != 0 {
		t.Fatalf("refused forms were audited: %+v", a)
	}
	code, body := post(values("PAUSE", c.Version, "the SMS provider is down"))
	if code != 200 || !strings.Contains(body, "Campaign welcome is PAUSED now") || !strings.Contains(body, "A person: ops.jane chose PAUSE on") ||
		!strings.Contains(body, "the SMS provider is down") || !strings.Contains(body, `id="resume-form"`) {
		t.Fatalf("pause: %d %.6000s", code, body)
	}
	got, _ := e.rt.Store.CampaignGet(ctx, "bu-syd", "welcome")
	a, _ := e.rt.Store.CampaignAuditList(ctx, "bu-syd", "welcome", 10)
	if got.Status != store.CampaignPaused || !strings.Contains(got.DefinitionJSON, `"status":"PAUSED"`) || len(a) != 1 || a[0].Operator != "ops.jane" || a[0].VersionAfter != got.Version {
		t.Fatalf("after pause: %+v %+v", got, a)
	}
	if code, body := post(values("STOP", got.Version, "season over")); code != 200 || !strings.Contains(body, "Campaign welcome is STOPPED now") {
		t.Fatalf("stop: %d %.3000s", code, body)
	}
}
