package console_test

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// TestTemplatePages: the list shows the default and the unit's override; the key's page has
// the version in force and both version lists. The preview renders the draft server-side with
// the sample payload and writes nothing (a missing field is 422 naming it). A save creates
// the unit's override through delivery.Templates (CreatedBy the operator); a stale version
// is 412 with the template as it is now; a draft that does not parse 422; another unit 404;
// a cookie session without the CSRF field 403. The test-send form queues one delivery
// marked as a test through the templates API's service (422 naming the field the payload
// lacks, nothing queued); a deleted override leaves the list and is marked in its versions.
func TestTemplatePages(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	zero := int64(0)
	if _, err := e.rt.Templates.Save(ctx, store.NotificationTemplate{Key: "points", Subject: "You have {{.points}} points", Text: "Hi {{.name}}", CreatedBy: "ops"}, &zero); err != nil {
		t.Fatal(err)
	}
	body, doc := e.page(t, "/api/console/templates?businessUnitId=bu-syd&key=points", "", 200)
	labelled(t, doc)
	if !strings.Contains(body, "platform default") || !strings.Contains(body, "In force: the platform default, version 1.") || !strings.Contains(body, `name="version" value="0"`) {
		t.Fatalf("page: %.6000s", body)
	}
	form := func(path string, v url.Values, extra ...string) (int, string) {
		return e.bearerPoster(t, path)(v, extra...)
	}
	draft := func(ver, subject string) url.Values {
		return url.Values{"businessUnitId": {"bu-syd"}, "key": {"points"}, "version": {ver}, "subject": {subject}, "text": {"Hello {{.name}}"},
			"payload": {`{"points":120,"name":"Ann"}`}, "operator": {"ops.jane"}}
	}
	code, body := form("/api/console/template-preview", draft("0", "Sydney: {{.points}} points"))
	if code != 200 || !strings.Contains(body, `<dd id="preview-subject">Sydney: 120 points</dd>`) || !strings.Contains(body, "Hello Ann") {
		t.Fatalf("preview: %d %.6000s", code, body)
	}
	if vs, _ := e.rt.Store.NotificationTemplateVersions(ctx, "points", "bu-syd", 5); len(vs) != 0 {
		t.Fatalf("the preview saved: %+v", vs)
	}
	missing := draft("0", "{{.tier}}")
	if code, body := form("/api/console/template-preview", missing); code != 422 || !strings.Contains(body, "payload.tier") {
		t.Fatalf("preview, a missing field: %d %.4000s", code, body)
	}
	if code, body := form("/api/console/templates", draft("0", "{{.points")); code != 422 || !strings.Contains(body, `id="template-problem"`) || !strings.Contains(body, "{{.points") ||
		strings.Count(body, "does not parse") != 1 || !strings.Contains(body, "<li>subject: does not parse") {
		t.Fatalf("a draft that does not parse (named once, by its member): %d %.4000s", code, body)
	}
	e.refusesOutOfScopeAndWithoutCSRF(t, "/api/console/templates", draft("0", "x"))
	if code, body := form("/api/console/templates", draft("0", "Sydney: {{.points}} points")); code != 200 || !strings.Contains(body, "points for bu-syd: version 1 saved by ops.jane") ||
		!strings.Contains(body, "In force: the unit's override, version 1.") {
		t.Fatalf("save: %d %s", code, body[strings.Index(body, "<main"):])
	}
	if code, body := form("/api/console/templates", draft("0", "again")); code != 412 || !strings.Contains(body, "The template changed since you loaded it") ||
		!strings.Contains(body, "is at version 1 (by ops.jane)") || !strings.Contains(body, `name="version" value="1"`) {
		t.Fatalf("stale: %d %.6000s", code, body)
	}
	vs, _ := e.rt.Store.NotificationTemplateVersions(ctx, "points", "bu-syd", 5)
	if len(vs) != 1 || vs[0].CreatedBy != "ops.jane" || vs[0].Subject != "Sydney: {{.points}} points" {
		t.Fatalf("versions: %+v", vs)
	}
	// Test send (the templates API's delivery.TestSender, wired by the composition root): the
	// page offers the form, a payload the template cannot render is 422 naming the field with
	// nothing queued, and a good one queues one delivery marked as a test.
	if !strings.Contains(body, `id="template-test-send"`) {
		t.Fatalf("no test-send form: %s", body[strings.Index(body, "<main"):])
	}
	send := func(payload string) (int, string) {
		return form("/api/console/templates", url.Values{"action": {"test-send"}, "businessUnitId": {"bu-syd"}, "key": {"points"}, "channel": {"log"},
			"recipient": {"ann@example.test"}, "payload": {payload}, "operator": {"ops.jane"}})
	}
	if code, body := send(`{"name":"Ann"}`); code != 422 || !strings.Contains(body, "payload.points") || strings.Contains(body, "queued delivery") {
		t.Fatalf("test send without points: %d %.4000s", code, body[strings.Index(body, "<main"):])
	}
	code, body = send(`{"points":7,"name":"Ann"}`)
	m := regexp.MustCompile(`queued delivery (dlv_[0-9a-f]+)`).FindStringSubmatch(body)
	if code != 200 || m == nil || !strings.Contains(body, "Test send of points to ann@example.test on log by ops.jane") {
		t.Fatalf("test send: %d %.4000s", code, body[strings.Index(body, "<main"):])
	}
	if job, err := e.rt.Store.NotificationGetByKey(ctx, m[1]); err != nil || !delivery.IsTestSend(job.SchedulerKey) || job.Recipient != "ann@example.test" || job.Channel != "log" {
		t.Fatalf("the queued test delivery: %+v, %v", job, err)
	}
	// A deleted override (a tombstone, the templates API's DELETE): the list shows the default
	// the unit sends again, and the override's versions mark the tombstone.
	one := int64(1)
	if _, err := e.rt.Templates.Delete(ctx, "points", "bu-syd", "ops.jane", &one); err != nil {
		t.Fatal(err)
	}
	body, _ = e.page(t, "/api/console/templates?businessUnitId=bu-syd&key=points", "", 200)
	list := body[strings.Index(body, `id="template-list"`):strings.Index(body, `id="template"`)]
	if strings.Contains(list, "override of bu-syd") || !strings.Contains(list, "platform default") ||
		!strings.Contains(body, "In force: the platform default, version 1.") || !strings.Contains(body, "<strong>deleted</strong> (the unit sends the default)") {
		t.Fatalf("after the delete: %.8000s", body[strings.Index(body, "<main"):])
	}
}

// TestTemplateEditorKinds: the editor saves and previews every kind, not only message
// (issue 35): a push template with data templates, an sms with text only, a whatsapp
// template with its provider name, language and parameters; each is stored with its kind
// and Extra as the templates API stores it, and its page shows the kind's members again.
// Bad input is 422 naming the member (a data member on an sms, data that is not a JSON
// object, a subject on a whatsapp template, a bad language) and saves nothing.
func TestTemplateEditorKinds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	bearer := []string{"Authorization", "Bearer " + token}
	form := func(path string, v url.Values) (int, string) {
		return e.form(t, http.DefaultClient, path, v, bearer...)
	}
	base := func(key, kind string, kv ...string) url.Values {
		v := url.Values{"businessUnitId": {"bu-syd"}, "key": {key}, "version": {"0"}, "kind": {kind}, "operator": {"ops.jane"},
			"payload": {`{"points":120,"name":"Ann","screen":"wallet"}`}}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	push := base("pts-push", "push", "subject", "{{.points}} points", "text", "Hi {{.name}}", "data", `{"screen":"{{.screen}}"}`)
	if code, body := form("/api/console/template-preview", push); code != 200 || !strings.Contains(body, "Preview (push)") ||
		!strings.Contains(body, `<dt>data.screen</dt><dd class="preview-data">wallet</dd>`) || !strings.Contains(body, `<dd id="preview-subject">120 points</dd>`) {
		t.Fatalf("push preview: %d %.6000s", code, body[strings.Index(body, "<main"):])
	}
	if code, body := form("/api/console/templates", push); code != 200 || !strings.Contains(body, "pts-push for bu-syd: version 1 saved by ops.jane") {
		t.Fatalf("push save: %d %.6000s", code, body[strings.Index(body, "<main"):])
	}
	got, err := e.rt.Store.NotificationTemplateGet(ctx, "pts-push", "bu-syd")
	if err != nil || got.Kind != "push" || got.Extra != `{"data":{"screen":"{{.screen}}"}}` || got.Subject != "{{.points}} points" {
		t.Fatalf("the stored push template: %+v, %v", got, err)
	}
	body, doc := e.page(t, "/api/console/templates?businessUnitId=bu-syd&key=pts-push", "", 200)
	labelled(t, doc)
	if !strings.Contains(body, `<option selected>push</option>`) || !strings.Contains(body, `&#34;screen&#34;: &#34;{{.screen}}&#34;`) {
		t.Fatalf("the push page does not show its kind and data: %.8000s", body[strings.Index(body, "<main"):])
	}
	sms := base("pts-sms", "sms", "text", "{{.points}} points")
	// The preview of an sms draft measures it as the templates API's preview does
	// (channel.SMSSegments): GSM-7 septets, or UCS-2 units for Vietnamese text.
	if code, body := form("/api/console/template-preview", sms); code != 200 || !strings.Contains(body, "Preview (sms)") ||
		!strings.Contains(body, `<dd id="preview-sms">1 segment(s), 10 septets of GSM-7 (each segment is billed)</dd>`) {
		t.Fatalf("sms preview: %d %.6000s", code, body[strings.Index(body, "<main"):])
	}
	if code, body := form("/api/console/template-preview", base("pts-sms", "sms", "text", "{{.points}} điểm")); code != 200 ||
		!strings.Contains(body, `<dd id="preview-sms">1 segment(s), 8 units of UCS-2 (each segment is billed)</dd>`) {
		t.Fatalf("sms preview (UCS-2): %d %.6000s", code, body[strings.Index(body, "<main"):])
	}
	if _, body := form("/api/console/template-preview", push); strings.Contains(body, `id="preview-sms"`) {
		t.Fatal("a push preview shows an SMS length")
	}
	if code, body := form("/api/console/templates", sms); code != 200 || !strings.Contains(body, "version 1 saved") {
		t.Fatalf("sms save: %d %.6000s", code, body[strings.Index(body, "<main"):])
	}
	if got, err := e.rt.Store.NotificationTemplateGet(ctx, "pts-sms", "bu-syd"); err != nil || got.Kind != "sms" || got.Extra != "" {
		t.Fatalf("the stored sms template: %+v, %v", got, err)
	}
	wa := base("pts-wa", "whatsapp", "whatsAppName", "points_earned", "whatsAppLanguage", "vi", "whatsAppParameters", "{{.name}}\r\n{{.points}}\r\n")
	if code, body := form("/api/console/template-preview", wa); code != 200 || !strings.Contains(body, `<dd id="preview-whatsapp">points_earned (vi)</dd>`) ||
		!strings.Contains(body, `<ol id="preview-parameters"><li>Ann</li><li>120</li></ol>`) {
		t.Fatalf("whatsapp preview: %d %.6000s", code, body[strings.Index(body, "<main"):])
	}
	if code, body := form("/api/console/templates", wa); code != 200 || !strings.Contains(body, "version 1 saved") || !strings.Contains(body, `value="points_earned"`) {
		t.Fatalf("whatsapp save: %d %.6000s", code, body[strings.Index(body, "<main"):])
	}
	if got, err := e.rt.Store.NotificationTemplateGet(ctx, "pts-wa", "bu-syd"); err != nil || got.Kind != "whatsapp" ||
		got.Extra != `{"name":"points_earned","language":"vi","parameters":["{{.name}}","{{.points}}"]}` {
		t.Fatalf("the stored whatsapp template: %+v, %v", got, err)
	}
	for _, c := range []struct {
		name   string
		v      url.Values
		member string
	}{
		{"data on an sms", base("bad-1", "sms", "text", "x", "data", `{"a":"b"}`), "<li>data: only a push template"},
		{"data not an object", base("bad-2", "push", "text", "x", "data", `["a"]`), "<li>data: must be one JSON object"},
		{"a reserved data member", base("bad-3", "push", "text", "x", "data", `{"gcm.x":"b"}`), "<li>data.gcm.x: is reserved"},
		{"a subject on whatsapp", base("bad-4", "whatsapp", "subject", "hi", "whatsAppName", "points_earned", "whatsAppLanguage", "vi"), "<li>subject: a whatsapp template has no subject"},
		{"a bad language", base("bad-5", "whatsapp", "whatsAppName", "points_earned", "whatsAppLanguage", "Vietnamese"), "<li>whatsApp.language: must be a language code"},
		{"an unknown kind", base("bad-6", "fax", "text", "x"), "<li>kind: must be one of message, push, sms, whatsapp"},
	} {
		for _, path := range []string{"/api/console/templates", "/api/console/template-preview"} {
			if code, body := form(path, c.v); code != 422 || !strings.Contains(body, c.member) {
				t.Fatalf("%s (%s): %d, want 422 with %q: %.4000s", c.name, path, code, c.member, body[strings.Index(body, "<main"):])
			}
		}
		if vs, _ := e.rt.Store.NotificationTemplateVersions(ctx, c.v.Get("key"), "bu-syd", 5); len(vs) != 0 {
			t.Fatalf("%s: saved %+v", c.name, vs)
		}
	}
}
