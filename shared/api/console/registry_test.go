package console_test

import (
	"context"
	"net/url"
	"strings"
	"testing"
)

// TestRegistryEditPage: an event type is created, edited, compared and rolled back from the
// page through gateway.Admin.Save: a definition the checker refuses is 422 naming the member
// with the posted text kept; a stale version 412 with the registry as it is now; an existing
// type 409; no version 428; a caller of some units 404; a cookie session without the CSRF
// field 403. Each saved version names its operator; the diff shows the changed lines; a
// rollback saves the old definition as the next version.
func TestRegistryEditPage(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	post := e.bearerPoster(t, "/api/console/registry")
	v1 := `{"eventType":"Purchase","class":"DIRECT","schema":{"type":"object"}}`
	create := url.Values{"action": {"create"}, "eventType": {"Purchase"}, "definition": {v1}, "operator": {"ops.jane"}}
	if code, _ := post(create, "X-Automation-Business-Units", "bu-syd"); code != 404 {
		t.Fatalf("a caller of some units: %d", code)
	}
	if code, body := post(create); code != 200 || !strings.Contains(body, "Purchase version 1 saved by ops.jane (create)") || !strings.Contains(body, `id="registry-edit"`) {
		t.Fatalf("create: %d %.4000s", code, body)
	}
	if code, body := post(create); code != 409 || !strings.Contains(body, "The event type exists") {
		t.Fatalf("create again: %d %.3000s", code, body)
	}
	bad := `{"eventType":"Purchase","class":"DIRECT","schema":{"type":"objekt"}}`
	// Check: the checker alone, on the page; nothing saved either way.
	check := func(def string) url.Values {
		return url.Values{"action": {"check"}, "eventType": {"Purchase"}, "version": {"1"}, "definition": {def}}
	}
	if code, body := post(check(bad)); code != 422 || !strings.Contains(body, "objekt") || !strings.Contains(body, `id="registry-problem"`) {
		t.Fatalf("check a bad schema: %d %.4000s", code, body)
	}
	if code, body := post(check(v1)); code != 200 || !strings.Contains(body, "The definition of Purchase is valid (class DIRECT). Nothing was saved.") {
		t.Fatalf("check: %d %.4000s", code, body)
	}
	if vs, _ := e.rt.Registry.Store.EventRegistryListVersions(ctx, "Purchase"); len(vs) != 1 {
		t.Fatalf("a check saved: %+v", vs)
	}
	save := func(ver, def string) url.Values {
		return url.Values{"action": {"save"}, "eventType": {"Purchase"}, "version": {ver}, "definition": {def}, "operator": {"ops.jane"}}
	}
	code, body := post(save("1", bad))
	if code != 422 || !strings.Contains(body, `id="registry-problem"`) || !strings.Contains(body, "objekt") {
		t.Fatalf("a bad schema: %d %.5000s", code, body)
	}
	v2 := `{"eventType":"Purchase","class":"DIRECT","schema":{"type":"object","required":["amount"]}}`
	if code, _ := post(save("", v2)); code != 428 {
		t.Fatalf("no version: %d", code)
	}
	if code, body := post(save("1", v2)); code != 200 || !strings.Contains(body, "Purchase version 2 saved by ops.jane (save)") {
		t.Fatalf("save: %d %.3000s", code, body)
	}
	if code, body := post(save("1", v1)); code != 412 || !strings.Contains(body, "The event type changed since you loaded it") ||
		!strings.Contains(body, "Nothing was saved") || !strings.Contains(body, `name="version" value="2"`) {
		t.Fatalf("stale: %d %.5000s", code, body)
	}
	c := client(t)
	e.signIn(t, c)
	if code, _ := e.form(t, c, "/api/console/registry", save("2", v1)); code != 403 {
		t.Fatalf("cookie session without CSRF: %d", code)
	}
	body, doc := e.page(t, "/api/console/registry?eventType=Purchase&from=1&to=2", "", 200)
	labelled(t, doc)
	if !strings.Contains(body, `<span class="added">&#43;     &#34;required&#34;: [`) || !strings.Contains(body, `id="rollback-1"`) {
		t.Fatalf("diff: %s", body[strings.Index(body, "<main"):])
	}
	rollback := url.Values{"action": {"rollback"}, "eventType": {"Purchase"}, "version": {"2"}, "toVersion": {"1"}, "operator": {"ops.kim"}}
	if code, body := post(rollback); code != 200 || !strings.Contains(body, "Purchase version 3 saved by ops.kim (rollback)") {
		t.Fatalf("rollback: %d %.3000s", code, body)
	}
	vs, _ := e.rt.Registry.Store.EventRegistryListVersions(ctx, "Purchase")
	if len(vs) != 3 || vs[2].Operator != "ops.kim" || strings.Contains(vs[2].DefinitionJSON, "required") || vs[0].Operator != "ops.jane" {
		t.Fatalf("versions: %+v", vs)
	}
	if reg, err := e.rt.Registry.Cache.Current(ctx); err != nil {
		t.Fatal(err)
	} else if _, ok := reg.Lookup("Purchase"); !ok {
		t.Fatal("the cache does not route the saved type")
	}
}
