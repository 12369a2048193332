package main

import (
	"bytes"
	"context"
	"database/sql"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite"
)

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
}

// startServe runs the real `serve` command (SQLite under dir, the scenario's settings) on a
// free 127.0.0.1 port until the test ends, and returns its base URL.
func startServe(t *testing.T, dir string, flags ...string) string {
	t.Helper()
	base, stop, code, stderr := serveUntilStopped(t, dir, append([]string{"-seed", "../testdata/scenarios/realistic.json"}, flags...)...)
	if base == "" {
		t.Fatalf("serve exited %d before it was ready:\n%s", code, stderr)
	}
	t.Cleanup(func() {
		if code, logs := stop(); code != 0 {
			t.Errorf("serve exited %d:\n%s", code, logs)
		}
	})
	return base
}

// cli runs `automation support ...` and returns its exit code, stdout and stderr.
func cli(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := run(context.Background(), append([]string{"support"}, args...), func(string) string { return "" }, &out, &errOut)
	return code, out.String(), errOut.String()
}

const cliGuid = "11111111-2222-4333-8444-555555555555"

// TestSupportCommandAgainstServe drives the support subcommand against the real serve
// command (127.0.0.1, a bearer token, a business-unit scope): tables for every command, the
// API's refusals as readable errors with exit code 1, usage errors with 2.
func TestSupportCommandAgainstServe(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := startServe(t, dir, "-token", "s3cret", "-business-units", "bu-syd,bu-nyc")
	ev := filepath.Join(dir, "ev.json")
	if err := os.WriteFile(ev, []byte(`{"specversion":"1.0","id":"live-1","source":"/hr","type":"PoliceVetting.Upserted","businessunitid":"bu-syd",
	  "entitytype":"PoliceVetting","entityguid":"`+cliGuid+`","revision":1,
	  "data":{"expiresOn":"2030-11-30","staffEmail":"zoe.walker@example.test","isActive":true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var pubOut, pubErr bytes.Buffer
	if code := run(context.Background(), []string{"publish", "-local", base, "-token", "s3cret", ev}, func(string) string { return "" }, &pubOut, &pubErr); code != 0 {
		t.Fatalf("publish: %d %s %s", code, pubOut.String(), pubErr.String())
	}
	auth := []string{"-url", base, "-token", "s3cret"}
	with := func(args ...string) []string { return append(append([]string{}, args...), auth...) }

	code, out, errOut := cli(t, with("find", "-bu", "bu-syd")...)
	if code != 0 || !strings.Contains(out, "ID  STATUS") || strings.Count(out, "Pending") != 3 || !strings.Contains(out, "3 row(s), newest first") ||
		!strings.Contains(out, "2030-10-31T09:00:00+11:00") {
		t.Fatalf("find: %d\n%s%s", code, out, errOut)
	}

	// Put the 30-day reminder on support hold, as the poller does after its last attempt
	// (directly in the serve's database; the serve's own poller sees 2030 as the future).
	st, err := sqlite.Open(context.Background(), filepath.Join(dir, "automation.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	due := time.Date(2030, 10, 30, 22, 0, 0, 0, time.UTC)
	rows, err := st.SchedulerClaimDue(context.Background(), store.SchedulerClaimDueParams{Now: due, Lease: time.Minute, Limit: 10})
	if err != nil || len(rows) != 1 {
		t.Fatalf("claim: %v %v", rows, err)
	}
	if err := st.SchedulerFail(context.Background(), store.SchedulerFailParams{ID: rows[0].ID, Token: rows[0].Version, Now: due,
		FailureReasonCode: automation.ReasonHandlerError, Hold: true}); err != nil {
		t.Fatal(err)
	}
	id := strconv.FormatInt(rows[0].ID, 10)

	cases := []struct {
		name   string
		args   []string
		code   int
		inOut  string
		inErr  string
		noAuth bool
	}{
		{"on hold", with("find", "-on-hold"), 0, "HOLD", "", false},
		{"show", with("show", id), 0, "on hold        true", "", false},
		{"metrics", with("metrics"), 0, "on support hold     1 (HandlerError 1)", "", false},
		{"explain", with("explain", "PoliceVetting", cliGuid), 0, "On support hold after 1 failed attempt(s)", "", false},
		{"no token", []string{"find", "-url", base}, 1, "", "401 Unauthorized", true},
		{"other business unit", with("find", "-bu", "bu-hcm"), 1, "", "404 Not found", false},
		{"narrowed scope", with("show", id, "-business-units", "bu-nyc"), 1, "", "404 Not found", false},
		{"unknown source", with("explain", "PoliceVetting", "00000000-0000-4000-8000-000000000000"), 1, "", "404 Not found", false},
		{"release without operator", with("release", id, "-reason", "x"), 2, "", "-operator is required", false},
		{"stale version", with("release", id, "-reason", "fixed", "-operator", "ops.jane", "-version", "1"), 1, "", "412 Precondition failed", false},
		{"paced release without a filter", with("release", "-reason", "x", "-operator", "ops.jane"), 1, "", "filter: a release needs at least one filter", false},
		{"rate above the maximum", with("release", "-bu", "bu-syd", "-rate", "601", "-reason", "x", "-operator", "ops.jane"), 1, "", "ratePerMinute: must be 1 to 600", false},
		{"retry a row waiting for its time", with("retry", "1", "-reason", "x", "-operator", "ops.jane"), 1, "", "409 Conflict", false},
		{"run now", with("run-now", "1", "-reason", "asked today", "-operator", "ops.jane"), 0, "RunNow: row 1 is Pending", "", false},
		{"run now of a row already due", with("run-now", "1", "-reason", "again", "-operator", "ops.jane"), 1, "", "409 Conflict", false},
		{"run now without operator", with("run-now", "1", "-reason", "x"), 2, "", "-operator is required", false},
		{"bad -source", with("find", "-source", "PoliceVetting"), 2, "", "-source must be TYPE/GUID", false},
		{"unknown command", with("frobnicate"), 2, "", "unknown command", false},
		{"release", with("release", id, "-reason", "SMTP fixed", "-operator", "ops.jane"), 0, "Release: row " + id + " is Pending", "", false},
		{"cancel", with("cancel", id, "-reason", "left the company", "-operator", "ops.jane"), 0, "Cancel: row " + id + " is Cancelled", "", false},
		{"retry a cancelled row", with("retry", id, "-reason", "came back", "-operator", "ops.jane"), 0, "support-retry row", "", false},
		{"audit in show", with("show", id), 0, "Cancel        ops.jane", "", false},
		{"json", with("metrics", "-json"), 0, `"pendingDueNow"`, "", false},
		{"paced release of nothing", with("release", "-bu", "bu-syd", "-rate", "60", "-reason", "x", "-operator", "ops.jane"), 0, "0 row(s) in 0 batch(es)", "", false},
	}
	for _, c := range cases {
		code, out, errOut := cli(t, c.args...)
		if code != c.code || !strings.Contains(out, c.inOut) || !strings.Contains(errOut, c.inErr) {
			t.Errorf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", c.name, code, out, errOut)
		}
	}
	code, out, _ = cli(t, with("find", "-source", "PoliceVetting/"+cliGuid)...)
	if code != 0 || !strings.Contains(out, ":support-retry:v") || !strings.Contains(out, "Cancelled") {
		t.Fatalf("rows after the actions: %d\n%s", code, out)
	}
}

// TestServeScopeFlags: -business-units narrows what the APIs show (an out-of-scope id
// answers 404), -token is required when given, and an empty value is a usage error.
func TestServeScopeFlags(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := startServe(t, dir, "-business-units", "bu-nyc")
	req, _ := http.NewRequest(http.MethodGet, base+"/api/support/metrics?businessUnitId=bu-syd", nil)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("out-of-scope business unit: %d", resp.StatusCode)
	}
	resp, err = http.Get(base + "/api/support/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("no token configured: %d", resp.StatusCode)
	}
	for _, args := range [][]string{{"serve", "-token", ""}, {"serve", "-business-units", " "}} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), args, func(k string) string {
			if k == "AUTOMATION_DATA_DIR" {
				return t.TempDir()
			}
			return ""
		}, &out, &errOut); code != 2 {
			t.Errorf("%v: exit %d %s", args, code, errOut.String())
		}
	}
}

// TestSupportCommandReachesTheFunctionApp: in Azure the Functions host checks a function key
// (x-functions-key; authLevel "function") before the request reaches SupportApi. The
// command sends the key given with -function-key; without it the host's 401 is the answer.
func TestSupportCommandReachesTheFunctionApp(t *testing.T) {
	t.Parallel()
	base := startServe(t, t.TempDir())
	target, _ := url.Parse(base)
	proxy := httputil.NewSingleHostReverseProxy(target)
	host := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("x-functions-key") != "fk-123" && r.URL.Query().Get("code") != "fk-123" {
			w.WriteHeader(http.StatusUnauthorized) // the host answers 401 with an empty body
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer host.Close()
	if code, out, errOut := cli(t, "metrics", "-url", host.URL+"/", "-function-key", "fk-123"); code != 0 || !strings.Contains(out, "pending due now") ||
		!strings.Contains(out, "held reservations") || !strings.Contains(out, "fees by status") {
		t.Fatalf("with the function key: exit %d\n%s%s", code, out, errOut)
	}
	if code, _, errOut := cli(t, "metrics", "-url", host.URL); code != 1 || !strings.Contains(errOut, "401") {
		t.Fatalf("without the function key: exit %d %s", code, errOut)
	}
}

// TestSupportCommandEscapesControlCharacters: what the tables show comes from domain events
// and operators (event ids, data, reasons). Terminal control sequences in it are shown
// escaped, never sent to the terminal, and tabs or new lines cannot break a table's columns.
// An id with control characters is refused at the door now (events.Parse), so the test
// stores one as a row written under the old rule would hold it.
func TestSupportCommandEscapesControlCharacters(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := startServe(t, dir)
	ev := filepath.Join(dir, "ev.json")
	event := func(id string) []byte {
		return []byte(`{"specversion":"1.0","id":"` + id + `","source":"/hr","type":"PoliceVetting.Upserted",
	  "businessunitid":"bu-syd","entitytype":"PoliceVetting","entityguid":"` + cliGuid + `","revision":1,
	  "data":{"expiresOn":"2030-11-30","staffEmail":"zoe.walker@example.test","isActive":true}}`)
	}
	const hostile = `evt-\u001b]0;pwned\u0007\u001b[2J`
	if err := os.WriteFile(ev, event(hostile), 0o644); err != nil {
		t.Fatal(err)
	}
	var errOut0 bytes.Buffer
	if code := run(context.Background(), []string{"publish", "-local", base, ev}, func(string) string { return "" }, &bytes.Buffer{}, &errOut0); code != 1 {
		t.Fatalf("publish of an id with control characters: exit %d, want 1 (refused)\n%s", code, errOut0.String())
	}
	if err := os.WriteFile(ev, event("evt-plain"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run(context.Background(), []string{"publish", "-local", base, ev}, func(string) string { return "" }, &bytes.Buffer{}, &bytes.Buffer{}); code != 0 {
		t.Fatalf("publish: %d", code)
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "automation.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if res, err := db.Exec(`UPDATE SourceSnapshot SET LastEventId = ? WHERE EntityGuid = ?`, "evt-\x1b]0;pwned\a\x1b[2J", cliGuid); err != nil {
		t.Fatal(err)
	} else if n, _ := res.RowsAffected(); n != 1 {
		t.Fatalf("%d snapshots updated", n)
	}
	code, out, errOut := cli(t, "explain", "-url", base, "PoliceVetting", cliGuid)
	if code != 0 || strings.ContainsAny(out, "\x1b\x07") || !strings.Contains(out, `evt-\x1b]0;pwned\a\x1b[2J`) {
		t.Fatalf("explain: exit %d\n%q%s", code, out, errOut)
	}
	code, out, _ = cli(t, "find", "-url", base, "-source", "PoliceVetting/"+cliGuid, "-limit", "1")
	id := strings.Fields(strings.Split(out, "\n")[1])[0]
	if code != 0 {
		t.Fatalf("find: %d %s", code, out)
	}
	if code, out, errOut := cli(t, "cancel", id, "-url", base, "-operator", "ops.jane", "-reason", "left\tthe company\nfor good"); code != 0 {
		t.Fatalf("cancel: %d %s %s", code, out, errOut)
	}
	code, out, _ = cli(t, "show", id, "-url", base)
	var auditLine string
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, "ops.jane") {
			auditLine = l
		}
	}
	if code != 0 || strings.Contains(out, "\t") || !strings.Contains(auditLine, `left\tthe company\nfor good`) {
		t.Fatalf("show: exit %d, audit line %q\n%s", code, auditLine, out)
	}
}

// TestServeTokenGuardsLocalEvents: with -token, serve requires the bearer token on every /api
// request — the local domain-events route included, which creates scheduled work in any
// business unit. publish -local sends the token it is given (-token, default
// AUTOMATION_API_TOKEN).
func TestServeTokenGuardsLocalEvents(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	base := startServe(t, dir, "-token", "s3cret")
	ev := filepath.Join(dir, "ev.json")
	if err := os.WriteFile(ev, []byte(`{"specversion":"1.0","id":"live-9","source":"/hr","type":"PoliceVetting.Upserted","businessunitid":"bu-syd",
	  "entitytype":"PoliceVetting","entityguid":"`+cliGuid+`","revision":1,
	  "data":{"expiresOn":"2030-11-30","staffEmail":"zoe.walker@example.test","isActive":true}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	publish := func(getenv func(string) string, args ...string) (int, string) {
		var out, errOut bytes.Buffer
		code := run(context.Background(), append(append([]string{"publish"}, args...), ev), getenv, &out, &errOut)
		return code, out.String() + errOut.String()
	}
	none := func(string) string { return "" }
	if code, out := publish(none, "-local", base); code != 1 || !strings.Contains(out, "401") {
		t.Fatalf("publish without the token: exit %d %s", code, out)
	}
	if code, out := publish(none, "-local", base, "-token", "wrong"); code != 1 || !strings.Contains(out, "401") {
		t.Fatalf("publish with a wrong token: exit %d %s", code, out)
	}
	code, out, _ := cli(t, "find", "-url", base, "-token", "s3cret", "-source", "PoliceVetting/"+cliGuid)
	if code != 0 || !strings.Contains(out, "0 row(s)") {
		t.Fatalf("a refused event created rows: %d\n%s", code, out)
	}
	if code, out := publish(func(k string) string {
		if k == "AUTOMATION_API_TOKEN" {
			return "s3cret"
		}
		return ""
	}, "-local", base); code != 0 {
		t.Fatalf("publish with AUTOMATION_API_TOKEN: exit %d %s", code, out)
	}
	if code, out, _ := cli(t, "find", "-url", base, "-token", "s3cret", "-source", "PoliceVetting/"+cliGuid); code != 0 || !strings.Contains(out, "3 row(s)") {
		t.Fatalf("rows of the published event: %d\n%s", code, out)
	}
}

// TestServeBindsBeforeWriting: with its port already taken, serve fails before it creates,
// migrates or seeds the data directory (it used to seed and log "serving" first).
func TestServeBindsBeforeWriting(t *testing.T) {
	t.Parallel()
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	port := strconv.Itoa(taken.Addr().(*net.TCPAddr).Port)
	data := filepath.Join(t.TempDir(), "data")
	var out, errOut bytes.Buffer
	code := run(context.Background(), []string{"serve", "-port", port, "-seed", "../testdata/scenarios/realistic.json"}, func(k string) string {
		if k == "AUTOMATION_DATA_DIR" {
			return data
		}
		return ""
	}, &out, &errOut)
	if code != 1 || !strings.Contains(errOut.String(), "address already in use") {
		t.Fatalf("exit %d, stderr %q: want 1 and the bind error", code, errOut.String())
	}
	if _, err := os.Stat(data); !os.IsNotExist(err) {
		t.Fatalf("the data directory was created before the bind failed (%v)", err)
	}
	if strings.Contains(out.String()+errOut.String(), "seeded") {
		t.Fatalf("seeded before the bind failed: %s%s", out.String(), errOut.String())
	}
}
