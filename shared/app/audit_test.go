package app_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// Issue 37, item 7: every write records the principal as its operator. An operate key
// cancelling a row with X-Automation-Operator: jane is audited as the key, jane following as
// the reason; the same action with the bootstrap token keeps jane alone (the token names
// nobody).
func TestAuditRecordsThePrincipal(t *testing.T) {
	e := newScopeEnv(t)
	rec := e.do(routeRequest{method: "POST", path: fmt.Sprintf("/api/support/scheduler-rows/%d/cancel", e.a.row), body: `{"reason":"duplicate"}`,
		headers: []string{op, "jane", "If-Match", `"1"`}}, e.keys["operate key"])
	if rec.Code != 200 {
		t.Fatalf("cancel with the operate key: %d %s", rec.Code, rec.Body)
	}
	var operator, reason string
	if err := e.db.QueryRow(`SELECT Operator, Reason FROM SupportAudit WHERE SchedulerId = ? ORDER BY Id DESC LIMIT 1`, e.a.row).Scan(&operator, &reason); err != nil {
		t.Fatal(err)
	}
	if operator != "key:operate key / jane" || reason != "duplicate" {
		t.Fatalf("audited as %q (reason %q), want the key first", operator, reason)
	}
}

// Issue 37, item 7, the console's side of a campaign save: an API key signed in to the
// console (its session's principal) creates a campaign through the campaign form; the
// CampaignAudit row of the save names the key, first, in the save's transaction. A refused
// save (a trigger nobody emits) records nothing.
func TestConsoleCampaignSaveRecordsThePrincipal(t *testing.T) {
	e := newConsoleEnv(t)
	ctx := context.Background()
	rec := httptest.NewRecorder()
	r := httptest.NewRequest("POST", "/api/business-units", strings.NewReader(`{"id":"bu-a","name":"U","timeZone":"UTC"}`))
	r.Header.Set("Authorization", "Bearer boot")
	r.Header.Set("Content-Type", "application/json")
	if e.h.ServeHTTP(rec, r); rec.Code != 201 {
		t.Fatalf("seed bu-a: %d %s", rec.Code, rec.Body)
	}
	if _, err := e.rt.Registry.Save(ctx, gateway.SaveParams{EventType: "Login", Operator: "seed",
		Definition: []byte(`{"eventType":"Login","class":"DIRECT","schema":{"type":"object"}}`)}); err != nil {
		t.Fatal(err)
	}
	k, err := e.rt.Keys.Create(ctx, apikey.CreateParams{Name: "campaign-desk", Roles: []httpapi.Role{httpapi.RoleAdmin}, Units: "bu-a", Operator: "test"})
	if err != nil {
		t.Fatal(err)
	}
	cookie, rec := e.signIn(t, "198.51.100.7", k.Secret)
	if cookie == "" {
		t.Fatalf("sign-in: %d %s", rec.Code, rec.Body)
	}
	page := e.send("GET", "/api/console/campaigns?businessUnitId=bu-a", "198.51.100.7", cookie, nil).Body.String()
	csrf := csrfRE.FindStringSubmatch(page)
	if csrf == nil {
		t.Fatalf("no CSRF token: %s", page)
	}
	form := func(trigger string) url.Values {
		return url.Values{"csrf": {csrf[1]}, "action": {"SAVE"}, "businessUnitId": {"bu-a"}, "campaignId": {"welcome"}, "name": {"Welcome"},
			"status": {"ACTIVE"}, "triggers": {trigger}, "operator": {"jane"},
			"actions": {`[{"key":"hello","type":"NOTIFICATION_LOG","provider":"log","params":{"text":"Welcome"}}]`}}
	}
	audits := func() []store.CampaignAudit {
		l, err := e.rt.Store.CampaignAuditList(ctx, "bu-a", "welcome", 10)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	if rec := e.send("POST", "/api/console/campaign-status", "198.51.100.7", cookie, form("NobodyEmitsThis")); rec.Code != 422 || len(audits()) != 0 {
		t.Fatalf("a refused save: %d, audits %+v", rec.Code, audits())
	}
	if rec := e.send("POST", "/api/console/campaign-status", "198.51.100.7", cookie, form("Login")); rec.Code != 200 {
		t.Fatalf("save: %d %s", rec.Code, rec.Body)
	}
	l := audits()
	if len(l) != 1 || l[0].Action != "CREATE" || l[0].Operator != "key:campaign-desk" || l[0].VersionAfter != 1 {
		t.Fatalf("audited as %+v, want one CREATE by key:campaign-desk", l)
	}
}
