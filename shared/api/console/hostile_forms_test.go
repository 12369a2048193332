package console_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// names reports whether a refusal page lists member among its fields (a form's own alert, or
// the console's error page).
func names(body, member string) bool {
	return strings.Contains(body, "<li>"+member+":") || strings.Contains(body, "<li><strong>"+member+"</strong>:")
}

// TestCampaignSaveFormHostile: the campaign form reads its actions JSON by the rules of the
// campaigns API's PUT (strictjson, as httpapi.DecodeJSONBytes): an object naming a member
// twice, bytes that are not UTF-8 and a lone surrogate escape are 422 naming actions, never
// read as "the last one wins" or U+FFFD; a name, status, triggers or campaignId that is not
// UTF-8 is 422 naming it. None stores anything. What was typed comes back escaped.
func TestCampaignSaveFormHostile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	registerSignedUp(t, e)
	bearer := []string{"Authorization", "Bearer " + token}
	post := e.bearerPoster(t, "/api/console/campaign-status")
	actions := `[{"key":"welcome","type":"NOTIFICATION_LOG","provider":"log","params":{"subject":"Hi","text":"Welcome"}}]`
	create := func(id, acts string) url.Values {
		return url.Values{"action": {"SAVE"}, "businessUnitId": {"bu-syd"}, "campaignId": {id}, "name": {"Welcome"}, "status": {"ACTIVE"},
			"triggers": {"SignedUp"}, "actions": {acts}, "operator": {"ops.jane"}}
	}
	n := 0
	for name, acts := range map[string]string{
		"duplicate member":             `[{"key":"welcome","type":"NOTIFICATION_LOG","provider":"nope","provider":"log","params":{"subject":"Hi","text":"Welcome"}}]`,
		"duplicate member, other case": `[{"key":"welcome","type":"NOTIFICATION_LOG","Provider":"nope","provider":"log","params":{"subject":"Hi","text":"Welcome"}}]`,
		"duplicate param":              `[{"key":"welcome","type":"NOTIFICATION_LOG","provider":"log","params":{"subject":"Hi","subject":"Ho","text":"Welcome"}}]`,
		"invalid UTF-8":                `[{"key":"welcome","type":"NOTIFICATION_LOG","provider":"log","params":{"subject":"Hi` + "\xff" + `","text":"Welcome"}}]`,
		"lone surrogate":               `[{"key":"welcome","type":"NOTIFICATION_LOG","provider":"log","params":{"subject":"Hi\ud800","text":"Welcome"}}]`,
		"deeply nested":                strings.Repeat("[", 5000) + strings.Repeat("]", 5000),
		"null":                         `null`,
		"an object":                    `{}`,
		"a string":                     `"x"`,
		"empty array":                  `[]`,
		"two arrays":                   actions + actions,
		"a number key":                 `[{"key":1,"type":"NOTIFICATION_LOG","provider":"log","params":{}}]`,
	} {
		n++
		if code, body := post(create("w-"+strconv.Itoa(n), acts)); code != 422 || !names(body, "actions") {
			t.Errorf("%s: %d %.4000s", name, code, body)
		}
	}
	for _, member := range []string{"name", "triggers", "status", "campaignId"} {
		v := create("welcome", actions)
		v.Set(member, v.Get(member)+"\xff")
		if code, body := post(v); code != 422 || !names(body, member) {
			t.Errorf("%s not UTF-8: %d %.4000s", member, code, body)
		}
	}
	// What was typed is echoed escaped in a refusal.
	xss := create("welcome", `[{"key":"<script>alert(1)</script>","type":"NOTIFICATION_LOG","provider":"nope","params":{}}]`)
	xss.Set("name", `"><script>alert(2)</script>`)
	xss.Set("triggers", `</textarea><script>alert(3)</script>`)
	code, body := post(xss)
	if code != 422 || strings.Contains(body, "<script>alert") || !strings.Contains(body, "&lt;script&gt;alert(1)") || !strings.Contains(body, "&lt;script&gt;alert(2)") {
		t.Errorf("echo: %d %.8000s", code, body)
	}
	// A huge or odd version of an edit: refused, nothing stored.
	for _, ver := range []string{"99999999999999999999", "-1", "0", "1e3", "0x10"} {
		v := create("welcome", actions)
		v.Set("version", ver)
		if code, _ := post(v); code != 428 {
			t.Errorf("version %q: %d", ver, code)
		}
	}
	// businessUnitId in the query does not count: the body's is the one checked and used.
	v := create("welcome", actions)
	v.Set("businessUnitId", "bu-nyc")
	req := url.Values{}
	req.Set("businessUnitId", "bu-syd")
	if code, _ := e.form(t, http.DefaultClient, "/api/console/campaign-status?"+req.Encode(), v, append(bearer, "X-Automation-Business-Units", "bu-syd")...); code != 404 {
		t.Errorf("another unit in the body, mine in the query: %d", code)
	}
	if cs, _ := e.rt.Store.CampaignList(ctx, "bu-syd", "", 10); len(cs) != 0 {
		t.Fatalf("refused saves stored campaigns: %+v", cs)
	}
	if cs, _ := e.rt.Store.CampaignList(ctx, "bu-nyc", "", 10); len(cs) != 0 {
		t.Fatalf("refused saves stored campaigns: %+v", cs)
	}
	// Two creates at once (a double submit): one 200, one 409; then two edits of version 1 at
	// once: one 200, one 412. A version newer than the stored one, or the largest int64: 412.
	at := func(vs ...url.Values) []int {
		codes := make([]int, len(vs))
		var wg sync.WaitGroup
		for i, v := range vs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes[i], _ = post(v)
			}()
		}
		wg.Wait()
		slices.Sort(codes)
		return codes
	}
	if codes := at(create("welcome", actions), create("welcome", actions)); !slices.Equal(codes, []int{200, 409}) {
		t.Fatalf("two creates at once: %v", codes)
	}
	edit := func(ver, name string) url.Values {
		v := create("welcome", actions)
		v.Set("version", ver)
		v.Set("name", name)
		return v
	}
	if codes := at(edit("1", "A"), edit("1", "B")); !slices.Equal(codes, []int{200, 412}) {
		t.Fatalf("two edits of version 1 at once: %v", codes)
	}
	for _, ver := range []string{"3", "9223372036854775807"} {
		if code, body := post(edit(ver, "C")); code != 412 || !strings.Contains(body, "ACTIVE at version 2") {
			t.Errorf("version %s: %d %.3000s", ver, code, body)
		}
	}
	if c, err := e.rt.Store.CampaignGet(ctx, "bu-syd", "welcome"); err != nil || c.Version != 2 || (c.Name != "A" && c.Name != "B") {
		t.Fatalf("after the edits: %+v %v", c, err)
	}
}

// TestBudgetCreateFormHostile: maxCost negative, decimal, over int64 and a currency lower
// case or unknown are 422 naming the member; a reason that is not UTF-8 422; two creates of
// the same budget at once: exactly one 200 and one 409, one budget and one audit row.
func TestBudgetCreateFormHostile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	ensureCampaign(t, e, "bu-syd", "welcome")
	values := func(max, cur string) url.Values {
		return url.Values{"action": {"create"}, "businessUnitId": {"bu-syd"}, "campaignId": {"welcome"}, "maxCost": {max}, "currency": {cur},
			"operator": {"ops.jane"}, "reason": {"launch"}}
	}
	post := e.bearerPoster(t, "/api/console/budgets")
	for _, c := range []struct{ max, cur, member string }{
		{"-1", "AUD", "maxCost"}, {"1.5", "AUD", "maxCost"}, {"99999999999999999999", "AUD", "maxCost"}, {"9223372036854775808", "AUD", "maxCost"},
		{"1e3", "AUD", "maxCost"}, {" ", "AUD", "maxCost"}, {"1000", "aud", "currency"}, {"1000", "ZZZ", "currency"}, {"1000", "XXX", "currency"},
	} {
		if code, body := post(values(c.max, c.cur)); code != 422 || !names(body, c.member) {
			t.Errorf("%q %q: %d %.3000s", c.max, c.cur, code, body)
		}
	}
	bad := values("1000", "AUD")
	bad.Set("reason", "launch\xff")
	if code, body := post(bad); code != 422 || !names(body, "reason") {
		t.Errorf("reason not UTF-8: %d %.3000s", code, body)
	}
	xss := values("1000", "AUD")
	xss.Set("reason", `</textarea><script>alert(1)</script>`)
	xss.Set("maxCost", `"><script>alert(2)</script>`)
	if code, body := post(xss); code != 422 || strings.Contains(body, "<script>alert") || !strings.Contains(body, "&lt;script&gt;alert(1)") {
		t.Errorf("echo: %d %.5000s", code, body)
	}
	if _, err := e.rt.Store.BudgetGet(ctx, "bu-syd", "welcome"); err == nil {
		t.Fatal("a refused create made a budget")
	}
	var wg sync.WaitGroup
	codes := make([]int, 2)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			codes[i], _ = post(values("1000", "AUD"))
		}()
	}
	wg.Wait()
	if !(codes[0] == 200 && codes[1] == 409) && !(codes[0] == 409 && codes[1] == 200) {
		t.Fatalf("two creates at once: %v", codes)
	}
	if audit, _ := e.rt.Store.BudgetAuditList(ctx, "bu-syd", "welcome", 5); len(audit) != 1 {
		t.Fatalf("audit of two creates at once: %+v", audit)
	}
	if got, _ := e.rt.Store.BudgetGet(ctx, "bu-syd", "welcome"); got.MaxCost != 1000 || got.Version != 1 || got.ReservedCost != 0 || got.Cost != 0 {
		t.Fatalf("budget: %+v", got)
	}
}
