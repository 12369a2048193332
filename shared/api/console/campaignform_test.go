package console_test

import (
	"context"
	"net/url"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/store"
)

// TestCampaignSaveForm: the campaigns page creates and edits a campaign through
// campaign.Admin.Save (the service of PUT /api/campaigns/{id}), as POST campaign-status with
// action=SAVE. A definition the service refuses is 422 naming the member, keeps the draft and
// stores nothing; an id that exists 409; an edit of a version saved over since 412 with the
// campaign as it is now (the form at its current version) and the draft beside it; no
// businessUnitId 422; another unit 404; a cookie session's post without CSRF 403; a reader
// (role) is refused by the route table (shared/app). The edit carries the version read.
func TestCampaignSaveForm(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	registerSignedUp(t, e)
	body, doc := e.page(t, "/api/console/campaigns?businessUnitId=bu-syd", "", 200)
	labelled(t, doc)
	if !strings.Contains(body, `id="cc-form"`) || !strings.Contains(body, `name="action" value="SAVE"`) {
		t.Fatalf("the create form: %.6000s", body)
	}
	post := e.bearerPoster(t, "/api/console/campaign-status")
	actions := `[{"key":"welcome","type":"NOTIFICATION_LOG","provider":"log","params":{"subject":"Hi","text":"Welcome"}}]`
	create := func(id, acts string) url.Values {
		return url.Values{"action": {"SAVE"}, "businessUnitId": {"bu-syd"}, "campaignId": {id}, "name": {"First login welcome"}, "status": {"ACTIVE"},
			"triggers": {"SignedUp\n"}, "actions": {acts}, "operator": {"ops.jane"}}
	}
	// Refusals: nothing is stored, the draft stays in the form.
	bad := create("welcome", `[{"key":"welcome","type":"NOTIFICATION_LOG","provider":"nope","params":{"subject":"Hi","text":"Welcome"}}]`)
	if code, body := post(bad); code != 422 || !strings.Contains(body, "actions[0].provider") || !strings.Contains(body, `id="campaign-problem"`) ||
		!strings.Contains(body, "&#34;provider&#34;:&#34;nope&#34;") {
		t.Fatalf("unknown provider: %d %.8000s", code, body)
	}
	if code, body := post(create("welcome", `[{"key":"welcome","kind":"x"}]`)); code != 422 || !strings.Contains(body, "<li>actions:") {
		t.Fatalf("an unknown member of an action: %d %.8000s", code, body)
	}
	typo := create("welcome", actions)
	typo.Set("triggers", "SignedUpp")
	if code, body := post(typo); code != 422 || !strings.Contains(body, "triggers[0]") {
		t.Fatalf("a trigger nothing emits: %d %.8000s", code, body)
	}
	if code, body := post(create("bad id!", actions)); code != 422 || !strings.Contains(body, "<li>campaignId:") {
		t.Fatalf("a bad id: %d %.8000s", code, body)
	}
	noUnit := create("welcome", actions)
	noUnit.Del("businessUnitId")
	if code, _ := post(noUnit); code != 422 {
		t.Fatalf("no unit: %d", code)
	}
	e.refusesOutOfScopeAndWithoutCSRF(t, "/api/console/campaign-status", create("welcome", actions))
	if cs, _ := e.rt.Store.CampaignList(ctx, "bu-syd", "", 10); len(cs) != 0 {
		t.Fatalf("refused saves stored campaigns: %+v", cs)
	}
	// Create.
	code, body := post(create("welcome", actions))
	if code != 200 || !strings.Contains(body, "Campaign welcome created by ops.jane: ACTIVE, version 1.") || !strings.Contains(body, `<dd id="campaign-status">ACTIVE</dd>`) ||
		!strings.Contains(body, `id="ce-form"`) || !strings.Contains(body, `name="version" value="1"`) ||
		!strings.Contains(body, `href="/api/console/budgets?businessUnitId=bu-syd&amp;campaignId=welcome" id="budget-create-link"`) {
		t.Fatalf("create: %d %.8000s", code, body)
	}
	c, err := e.rt.Store.CampaignGet(ctx, "bu-syd", "welcome")
	if err != nil || c.Name != "First login welcome" || len(c.Triggers) != 1 || c.Triggers[0] != "SignedUp" || !strings.Contains(c.DefinitionJSON, `"provider":"log"`) {
		t.Fatalf("created: %+v %v", c, err)
	}
	if code, body := post(create("welcome", actions)); code != 409 || !strings.Contains(body, "That campaign exists") {
		t.Fatalf("create again: %d %.3000s", code, body)
	}
	// Edit with the version read.
	edit := func(ver string, name string) url.Values {
		v := create("welcome", actions)
		v.Set("version", ver)
		v.Set("name", name)
		return v
	}
	if code, body := post(edit("1", "Welcome v2")); code != 200 || !strings.Contains(body, "Campaign welcome saved by ops.jane: ACTIVE, version 2.") {
		t.Fatalf("edit: %d %.3000s", code, body)
	}
	// A second edit of version 1 (someone saved since): 412, nothing changed, the draft kept.
	code, body = post(edit("1", "Stale name"))
	if code != 412 || !strings.Contains(body, "The campaign changed since you loaded it") || !strings.Contains(body, "ACTIVE at version 2") ||
		!strings.Contains(body, "Nothing was saved") || !strings.Contains(body, `name="version" value="2"`) || !strings.Contains(body, `value="Welcome v2"`) ||
		!strings.Contains(body, `id="stale-draft"`) {
		t.Fatalf("stale edit: %d %.8000s", code, body)
	}
	// A refused edit keeps the draft and the version read.
	badEdit := edit("2", "")
	if code, body := post(badEdit); code != 422 || !strings.Contains(body, "<li>name:") || !strings.Contains(body, `name="version" value="2"`) {
		t.Fatalf("an edit without a name: %d %.6000s", code, body)
	}
	if code, _ := post(edit("abc", "x")); code != 428 {
		t.Fatalf("a bad version: %d", code)
	}
	c, _ = e.rt.Store.CampaignGet(ctx, "bu-syd", "welcome")
	if c.Version != 2 || c.Name != "Welcome v2" {
		t.Fatalf("after the refused edits: %+v", c)
	}
	// The edit form shows the stored definition.
	body, doc = e.page(t, "/api/console/campaigns?businessUnitId=bu-syd&campaignId=welcome", "", 200)
	labelled(t, doc)
	if !strings.Contains(body, `id="ce-name" name="name" value="Welcome v2"`) || !strings.Contains(body, "&#34;key&#34;: &#34;welcome&#34;") || strings.Contains(body, `id="cc-form"`) {
		t.Fatalf("the edit form: %.8000s", body)
	}
	if got, _ := e.rt.Store.CampaignGet(ctx, "bu-syd", "welcome"); got.Status != store.CampaignActive {
		t.Fatalf("status: %s", got.Status)
	}
}
