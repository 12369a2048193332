package console_test

import (
	"net/http"
	"regexp"
	"strings"
	"testing"
)

// Wherever a page asks for a business unit it offers a picker of the units the caller's scope
// sees, the one asked for selected (issue 35, item 8): a caller of every unit gets both, one
// limited to bu-nyc only bu-nyc, on the built-in pages, the dead-letter page, and the event,
// attribute, fee, campaign, budget, template and activity pages.
func TestBusinessUnitPickersFollowTheScope(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	options := regexp.MustCompile(`<option value="(bu-[a-z]+)"( selected)?>`)
	picker := func(path, id string, headers ...string) map[string]bool {
		t.Helper()
		code, body := e.get(t, http.DefaultClient, path, append([]string{"Authorization", "Bearer " + token}, headers...)...)
		i := strings.Index(body, `<select id="`+id+`" name="businessUnitId"`)
		if code != 200 || i < 0 {
			t.Fatalf("%s: %d, no picker #%s in %.1500s", path, code, id, body)
		}
		sel := body[i : i+strings.Index(body[i:], "</select>")]
		out := map[string]bool{}
		for _, m := range options.FindAllStringSubmatch(sel, -1) {
			out[m[1]] = m[2] != ""
		}
		return out
	}
	for _, p := range []struct{ path, id string }{{"/api/console/?businessUnitId=bu-syd", "bu"}, {"/api/console/rows?businessUnitId=bu-syd", "bu"},
		{"/api/console/releases", "r-bu"}, {"/api/console/dead-letters?businessUnitId=bu-syd", "dl-bu"},
		// The added pages (issue 35: "The business unit is a free-text box everywhere").
		{"/api/console/events?businessUnitId=bu-syd", "ev-bu"}, {"/api/console/attributes?businessUnitId=bu-syd", "at-bu"},
		{"/api/console/fees?businessUnitId=bu-syd", "fe-bu"}, {"/api/console/campaigns?businessUnitId=bu-syd", "cp-bu"},
		{"/api/console/budgets?businessUnitId=bu-syd", "bg-bu"}, {"/api/console/templates?businessUnitId=bu-syd", "tp-bu"},
		{"/api/console/activity?businessUnitId=bu-syd", "ac-bu"}, {"/api/console/campaigns", "cp-bu"}} {
		all := picker(p.path, p.id)
		if len(all) != 2 || !all["bu-syd"] == strings.Contains(p.path, "bu-syd") || all["bu-nyc"] {
			t.Errorf("%s, every unit: %v (want bu-nyc and bu-syd, bu-syd selected when asked for)", p.path, all)
		}
		path := strings.ReplaceAll(p.path, "bu-syd", "bu-nyc")
		if nyc := picker(path, p.id, "X-Automation-Business-Units", "bu-nyc"); len(nyc) != 1 || !nyc["bu-nyc"] == strings.Contains(path, "bu-nyc") {
			t.Errorf("%s, bu-nyc only: %v", path, nyc)
		}
	}
}
