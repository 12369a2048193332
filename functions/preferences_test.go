package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/api/preferenceapi"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/preference"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

// `automation preferences` sets a recipient's opt-out and reads it back, sets, reads and
// removes the unit's quiet hours over the API; a window with equal ends exits 1 with the
// API's problem naming the member; bad usage exits 2.
func TestPreferencesCommand(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	r := funchost.NewRouter(nil)
	api := httpapi.New(httpapi.Options{Token: "tok", Idempotency: st, Clock: automation.SystemClock{}})
	preferenceapi.Register(r, api, preferenceapi.Deps{Service: &preference.Service{Store: st, Clock: automation.SystemClock{}}})
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	file := filepath.Join(t.TempDir(), "p.json")
	_ = os.WriteFile(file, []byte(`{"preferences":[{"channel":"sms","category":"marketing","optedIn":false}]}`), 0o600)
	cli := cliOf(noEnv, "preferences", "-url", srv.URL, "-token", "tok")
	if code, out, e := cli("put", "+61412345678", "-bu", "bu-1", "-file", file, "-operator", "jane"); code != 0 || !strings.Contains(out, `"optedIn":false`) {
		t.Fatalf("put: %d %s %s", code, out, e)
	}
	if code, out, e := cli("get", "+61412345678", "-bu", "bu-1"); code != 0 || !strings.Contains(out, `"source":"api"`) {
		t.Fatalf("get: %d %s %s", code, out, e)
	}
	if code, _, e := cli("quiet-hours", "-bu", "bu-1", "-start", "21:00", "-end", "21:00", "-operator", "jane"); code != 1 || !strings.Contains(e, `"field":"end"`) {
		t.Fatalf("equal ends: %d %s", code, e)
	}
	if code, out, e := cli("quiet-hours", "-bu", "bu-1", "-start", "21:00", "-end", "08:00", "-zone", "Australia/Sydney", "-operator", "jane"); code != 0 || !strings.Contains(out, `"end":"08:00"`) {
		t.Fatalf("set the window: %d %s %s", code, out, e)
	}
	if code, out, _ := cli("quiet-hours", "-bu", "bu-1"); code != 0 || !strings.Contains(out, "Australia/Sydney") {
		t.Fatalf("get the window: %d %s", code, out)
	}
	if code, _, e := cli("quiet-hours", "-bu", "bu-1", "-delete", "-operator", "jane"); code != 0 {
		t.Fatalf("delete: %d %s", code, e)
	}
	if code, _, e := cli("quiet-hours", "-bu", "bu-1"); code != 1 || !strings.Contains(e, "404") {
		t.Fatalf("after delete: %d %s", code, e)
	}
	for _, bad := range [][]string{{"get"}, {"get", "-bu", "bu-1"}, {"put", "x", "-bu", "bu-1"}, {"quiet-hours", "-bu", "bu-1", "-delete"}, {"drop", "x"}} {
		var out, errb bytes.Buffer
		if code := run(t.Context(), append([]string{"preferences"}, bad...), func(string) string { return "" }, &out, &errb); code != 2 {
			t.Errorf("%v: exit %d, want 2", bad, code)
		}
	}
}
