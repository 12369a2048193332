package main

import (
	"bytes"
	"io"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/api/templateapi"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

// `automation templates` saves a version, reads it back and previews it over the API; a
// stale -version and a payload without a field the template needs exit 1 with the API's
// problem; bad usage exits 2.
func TestTemplatesCommand(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	r := funchost.NewRouter(nil)
	api := httpapi.New(httpapi.Options{Token: "tok", Idempotency: st, Clock: automation.SystemClock{}})
	templates := &delivery.Templates{Store: st, Clock: automation.SystemClock{}}
	templateapi.Register(r, api, templateapi.Deps{Templates: templates, Store: st, TestSender: &delivery.TestSender{Store: st, Templates: templates,
		Channels: map[string]delivery.Channel{"log": &delivery.LogChannel{W: io.Discard}}, Clock: automation.SystemClock{}}})
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	tpl := filepath.Join(dir, "t.json")
	payload := filepath.Join(dir, "p.json")
	_ = os.WriteFile(tpl, []byte(`{"subject":"Hi {{.source.memberName}}","text":"You earned {{.points}} points."}`), 0o600)
	_ = os.WriteFile(payload, []byte(`{"points":120,"source":{"memberName":"Linh"}}`), 0o600)
	cli := cliOf(noEnv, "templates", "-url", srv.URL, "-token", "tok")
	if code, out, e := cli("put", "points-earned", "-bu", "bu-1", "-file", tpl, "-operator", "jane"); code != 0 || !strings.Contains(out, `"version":1`) {
		t.Fatalf("put: %d %s %s", code, out, e)
	}
	if code, _, e := cli("put", "points-earned", "-bu", "bu-1", "-file", tpl, "-operator", "jane", "-version", "7"); code != 1 || !strings.Contains(e, "412") {
		t.Fatalf("stale put: %d %s", code, e)
	}
	if code, out, _ := cli("get", "points-earned", "-bu", "bu-1"); code != 0 || !strings.Contains(out, `"override":true`) {
		t.Fatalf("get: %d %s", code, out)
	}
	if code, out, e := cli("preview", "points-earned", "-bu", "bu-1", "-payload", payload, "-sms"); code != 0 || !strings.Contains(out, "You earned 120 points.") || !strings.Contains(out, `"segments":1`) {
		t.Fatalf("preview: %d %s %s", code, out, e)
	}
	// test-send: one delivery queued, marked as a test; the missing flags are usage errors.
	if code, out, e := cli("test-send", "points-earned", "-bu", "bu-1", "-channel", "log", "-recipient", "linh", "-operator", "jane", "-payload", payload); code != 0 ||
		!strings.Contains(out, `"test":true`) || !strings.Contains(out, `"schedulerKey":"test-send:`) {
		t.Fatalf("test-send: %d %s %s", code, out, e)
	}
	if code, _, e := cli("test-send", "points-earned", "-bu", "bu-1", "-channel", "fax", "-recipient", "linh", "-operator", "jane", "-payload", payload); code != 1 || !strings.Contains(e, "422") {
		t.Fatalf("test-send on an unknown channel: %d %s", code, e)
	}
	_ = os.WriteFile(payload, []byte(`{"points":120}`), 0o600)
	if code, _, e := cli("preview", "points-earned", "-bu", "bu-1", "-payload", payload); code != 1 || !strings.Contains(e, "payload.source") {
		t.Fatalf("preview without the field: %d %s", code, e)
	}
	// delete: If-Match from -version; a stale one exits 1; then nothing of the unit's is left.
	if code, _, e := cli("delete", "points-earned", "-bu", "bu-1", "-operator", "jane", "-version", "7"); code != 1 || !strings.Contains(e, "412") {
		t.Fatalf("stale delete: %d %s", code, e)
	}
	if code, out, e := cli("delete", "points-earned", "-bu", "bu-1", "-operator", "jane", "-version", "1"); code != 0 || out != "" {
		t.Fatalf("delete: %d %q %s", code, out, e)
	}
	if code, _, e := cli("get", "points-earned", "-bu", "bu-1"); code != 1 || !strings.Contains(e, "404") {
		t.Fatalf("get after the delete: %d %s", code, e)
	}
	for _, bad := range [][]string{{"get"}, {"get", "k"}, {"put", "k", "-bu", "bu-1"}, {"drop", "k", "-bu", "bu-1"},
		{"delete", "k", "-bu", "bu-1", "-operator", "jane"}, {"delete", "k", "-bu", "bu-1", "-version", "1"},
		{"test-send", "k", "-bu", "bu-1", "-channel", "log", "-operator", "jane"}} {
		var out, errb bytes.Buffer
		if code := run(t.Context(), append([]string{"templates"}, bad...), func(string) string { return "" }, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}
