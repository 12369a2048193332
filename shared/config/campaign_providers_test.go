package config_test

import (
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/config"
)

// AUTOMATION_CAMPAIGN_PROVIDERS is parsed strictly: every good form yields the providers
// with their limits, and every bad one is refused naming the setting, the entry and the
// member, so a typo never starts a worker with a silently missing provider or limit.
func TestCampaignProviders(t *testing.T) {
	t.Parallel()
	c, err := config.Load(env(map[string]string{
		"AUTOMATION_CAMPAIGN_PROVIDERS": `[{"name":"telco","baseUrl":"https://telco.example.test/v1","actionTypes":["TOP_UP","ADD_DATA"],
			"dedupe":true,"lookup":true,"concurrency":8,"ratePerSecond":2.5,"timeoutSeconds":20},
			{"name":"points","baseUrl":"http://127.0.0.1:9000","actionTypes":["ADD_POINTS"]}]`,
		"AUTOMATION_CAMPAIGN_PROVIDER_TOKENS": `{"telco":"tok-0123456789abcdef"}`,
	}))
	if err != nil {
		t.Fatal(err)
	}
	want := []config.CampaignProviderConfig{
		{Name: "telco", BaseURL: "https://telco.example.test/v1", ActionTypes: []string{"TOP_UP", "ADD_DATA"}, Dedupe: true, Lookup: true,
			Concurrency: 8, RatePerSecond: 2.5, Timeout: 20 * time.Second, Token: "tok-0123456789abcdef"},
		{Name: "points", BaseURL: "http://127.0.0.1:9000", ActionTypes: []string{"ADD_POINTS"}},
	}
	if len(c.CampaignProviders) != 2 {
		t.Fatalf("%+v", c.CampaignProviders)
	}
	for i, w := range want {
		g := c.CampaignProviders[i]
		if g.Name != w.Name || g.BaseURL != w.BaseURL || strings.Join(g.ActionTypes, ",") != strings.Join(w.ActionTypes, ",") || g.Dedupe != w.Dedupe ||
			g.Lookup != w.Lookup || g.Concurrency != w.Concurrency || g.RatePerSecond != w.RatePerSecond || g.Timeout != w.Timeout || g.Token != w.Token {
			t.Errorf("[%d] = %+v, want %+v", i, g, w)
		}
	}
	for _, ok := range []string{"", "  ", "[]", `[{"name":"p","baseUrl":"http://localhost:1/x","actionTypes":["TOP_UP"]}]`,
		`[{"name":"p","baseUrl":"http://[::1]:8080","actionTypes":["TOP_UP"]}]`} {
		if _, err := config.Load(env(map[string]string{"AUTOMATION_CAMPAIGN_PROVIDERS": ok})); err != nil {
			t.Errorf("%q refused: %v", ok, err)
		}
	}

	const good = `"baseUrl":"https://p.example.test","actionTypes":["TOP_UP"]`
	bad := []struct{ providers, tokens, want string }{
		{`{}`, "", "want a JSON array"},
		{`[{"name":"p",` + good + `,`, "", "invalid JSON"},
		{`[null]`, "", "[0]: want an object"},
		{`[{"name":"p",` + good + `,"timeout":5}]`, "", `[0]: unknown member "timeout"`},
		{`[{"Name":"p",` + good + `}]`, "", `unknown member "Name"`},
		{`[{"name":"p",` + good + `,"concurrency":"4"}]`, "", "[0].concurrency: want int"},
		{`[{"name":"",` + good + `}]`, "", "[0].name: want 1-64"},
		{`[{"name":"a b",` + good + `}]`, "", "[0].name: want 1-64"},
		{`[{"name":"webhook",` + good + `}]`, "", "is a delivery channel's name"},
		{`[{"name":"log",` + good + `}]`, "", "is a delivery channel's name"},
		{`[{"name":"p",` + good + `},{"name":"p",` + good + `}]`, "", "[1] (p).name: given twice"},
		{`[{"name":"p","actionTypes":["TOP_UP"]}]`, "", "baseUrl: is required"},
		{`[{"name":"p","baseUrl":"p.example.test","actionTypes":["TOP_UP"]}]`, "", "not an absolute http(s) URL"},
		{`[{"name":"p","baseUrl":"ftp://p.example.test","actionTypes":["TOP_UP"]}]`, "", "not an absolute http(s) URL"},
		{`[{"name":"p","baseUrl":"http://p.example.test","actionTypes":["TOP_UP"]}]`, "", "must be https"},
		{`[{"name":"p","baseUrl":"http://10.0.0.5","actionTypes":["TOP_UP"]}]`, "", "must be https"},
		{`[{"name":"p","baseUrl":"https://p.example.test/?code=x","actionTypes":["TOP_UP"]}]`, "", "no user info, query"},
		{`[{"name":"p","baseUrl":"https://p.example.test"}]`, "", "actionTypes: want at least one"},
		{`[{"name":"p","baseUrl":"https://p.example.test","actionTypes":["top-up"]}]`, "", "actionTypes[0]: want an action type"},
		{`[{"name":"p","baseUrl":"https://p.example.test","actionTypes":["TOP_UP","TOP_UP"]}]`, "", "actionTypes[1]: TOP_UP given twice"},
		{`[{"name":"p",` + good + `,"concurrency":0}]`, "", "concurrency: want 1..256"},
		{`[{"name":"p",` + good + `,"concurrency":-1}]`, "", "concurrency: want 1..256"},
		{`[{"name":"p",` + good + `,"ratePerSecond":0}]`, "", "ratePerSecond: want more than 0"},
		{`[{"name":"p",` + good + `,"ratePerSecond":-2}]`, "", "ratePerSecond: want more than 0"},
		{`[{"name":"p",` + good + `,"timeoutSeconds":0}]`, "", "timeoutSeconds: want 1..300"},
		{`[{"name":"p",` + good + `,"timeoutSeconds":301}]`, "", "timeoutSeconds: want 1..300"},
		{`[{"name":"p",` + good + `}]`, `{"other":"tok-0123456789"}`, `"other" is not a provider`},
		{`[{"name":"p",` + good + `}]`, `{"p":""}`, "p: want a non-empty token"},
		{`[{"name":"p",` + good + `}]`, `{"p":"has space"}`, "p: want a non-empty token"},
		{`[{"name":"p",` + good + `}]`, `"tok"`, "want a JSON object"},
		{"", `{"p":"tok"}`, `"p" is not a provider`},
	}
	for _, b := range bad {
		_, err := config.Load(env(map[string]string{"AUTOMATION_CAMPAIGN_PROVIDERS": b.providers, "AUTOMATION_CAMPAIGN_PROVIDER_TOKENS": b.tokens}))
		name := "AUTOMATION_CAMPAIGN_PROVIDERS: "
		if b.tokens != "" && strings.Contains(b.want, "not a provider") || strings.Contains(b.want, "token") || b.want == "want a JSON object" {
			name = "AUTOMATION_CAMPAIGN_PROVIDER_TOKENS: "
		}
		if err == nil || !strings.Contains(err.Error(), name) || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s / %s: err = %v, want %q%q", b.providers, b.tokens, err, name, b.want)
		}
		if err != nil && (strings.Contains(err.Error(), "code=x") || strings.Contains(err.Error(), "has space")) {
			t.Errorf("the error shows a secret: %v", err)
		}
	}
}

// The attribute dedupe window defaults to 35 days and is never under a day.
func TestAttributeDedupeWindow(t *testing.T) {
	t.Parallel()
	if c, err := config.Load(env(nil)); err != nil || c.AttributeDedupeWindow != 35*24*time.Hour {
		t.Fatalf("%v %v", c.AttributeDedupeWindow, err)
	}
	if c, err := config.Load(env(map[string]string{"AUTOMATION_ATTRIBUTE_DEDUPE_WINDOW_HOURS": "48"})); err != nil || c.AttributeDedupeWindow != 48*time.Hour {
		t.Fatalf("%v %v", c.AttributeDedupeWindow, err)
	}
	for _, v := range []string{"23", "0", "-1", "8761", "x"} {
		if _, err := config.Load(env(map[string]string{"AUTOMATION_ATTRIBUTE_DEDUPE_WINDOW_HOURS": v})); err == nil || !strings.Contains(err.Error(), "AUTOMATION_ATTRIBUTE_DEDUPE_WINDOW_HOURS") {
			t.Errorf("%q: %v", v, err)
		}
	}
}
