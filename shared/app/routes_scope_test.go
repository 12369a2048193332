package app_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/reportapi"
	"github.com/automation-platform/automation/shared/api/settingsapi"
	"github.com/automation-platform/automation/shared/apikey"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/budget"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/funchost/funchosttest"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

const scopeToken = "s3cret-token-for-the-route-table"

// unitFixture names what one business unit holds in a scopeEnv: the unit, one reminder
// setting with a source and its rows, one report subscription with its next run row, and
// ids that do not exist yet but would be the unit's if created.
type unitFixture struct {
	bu, newBU         string // an existing unit; an id not stored (in scope for bu-a's fixture only)
	setting, source   string
	row               int64 // a Pending reminder row of source
	sub               string
	reportKey         string // the subscription's pending scheduled run
	newSetting, event string // a setting guid and an event id not used yet
	campaign          string // a campaign of the unit
}

type scopeEnv struct {
	rt      *app.Runtime
	h       http.Handler // what `serve` listens with
	dataDir string
	db      *sql.DB
	a, b    unitFixture
	// keys are the API keys of keyPrincipals, by name: "Bearer <key>".
	keys map[string]string
}

// keyPrincipal is an API key of the route × principal table: its role and units.
type keyPrincipal struct {
	name    string
	role    httpapi.Role
	units   string
	revoked bool
}

// keyPrincipals: one key per role over the served units (bu-a, bu-c), an admin key of a unit
// outside the deployment's cap (bu-b: capped to nothing), and a revoked admin key.
var keyPrincipals = []keyPrincipal{
	{name: "ingest key", role: httpapi.RoleIngest, units: "bu-a,bu-c"},
	{name: "read key", role: httpapi.RoleRead, units: "bu-a,bu-c"},
	{name: "operate key", role: httpapi.RoleOperate, units: "bu-a,bu-c"},
	{name: "admin key", role: httpapi.RoleAdmin, units: "bu-a,bu-c"},
	{name: "admin key of bu-b", role: httpapi.RoleAdmin, units: "bu-b"},
	{name: "revoked admin key", role: httpapi.RoleAdmin, units: "*", revoked: true},
}

// newScopeEnv opens the runtime `serve -token T -business-units bu-a,bu-c` runs (bu-c does not
// exist yet: creating it is an in-scope write) and stores bu-a and bu-b with a setting, a
// source (three Pending rows) and a report subscription each — bu-b's through an unscoped
// API, since the served one never shows bu-b.
func newScopeEnv(t *testing.T) *scopeEnv {
	t.Helper()
	dir := t.TempDir()
	env := map[string]string{"AUTOMATION_DATA_DIR": dir, "AUTOMATION_API_TOKEN": scopeToken, "AUTOMATION_API_BUSINESS_UNITS": "bu-a,bu-c"}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	clock := automation.NewManualClock(time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC))
	rt, err := app.Open(context.Background(), cfg, app.Options{Clock: clock, LogOutput: io.Discard, Seed: 7, Log: quietLog})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	if _, err := rt.LocalHost("../../functions", cfg, true, quietLog); err != nil {
		t.Fatal(err)
	}
	e := &scopeEnv{rt: rt, h: rt.ListenerHandler(false), dataDir: dir, db: rt.Store.(interface{ DB() *sql.DB }).DB(), keys: map[string]string{}}
	for _, kp := range keyPrincipals {
		c, err := rt.Keys.Create(context.Background(), apikey.CreateParams{Name: kp.name, Roles: []httpapi.Role{kp.role}, Units: kp.units, Operator: "seed"})
		if err != nil {
			t.Fatal(err)
		}
		if kp.revoked {
			if _, err := rt.Keys.Revoke(context.Background(), c.Prefix, "seed"); err != nil {
				t.Fatal(err)
			}
		}
		e.keys[kp.name] = "Bearer " + c.Secret
	}
	if _, err := rt.Registry.Save(context.Background(), gateway.SaveParams{EventType: "Login", Operator: "seed",
		Definition: []byte(`{"eventType":"Login","class":"DIRECT","schema":{"type":"object"}}`)}); err != nil {
		t.Fatal(err)
	}
	// The attribute routes know the entity types of the registry's counter instructions.
	if _, err := rt.Registry.Save(context.Background(), gateway.SaveParams{EventType: "Redeem_Item", Operator: "seed",
		Definition: []byte(`{"eventType":"Redeem_Item","class":"COUNTER","schema":{"type":"object"},"counterInstructions":[
		  {"attribute_code":"redeems","entity_type":"CUSTOMER","operation":"INCREMENT"},
		  {"attribute_code":"total_redeem_count","entity_type":"ITEM","entity_id_pointer":"/itemId","operation":"INCREMENT","hot":true}]}`)}); err != nil {
		t.Fatal(err)
	}
	// The unscoped side door for seeding: the same routes behind an API without token or scope.
	seed := funchost.NewRouter(&funchost.RouterOptions{Logger: quietLog})
	all := httpapi.New(httpapi.Options{Idempotency: rt.Store, Clock: clock, Logger: quietLog})
	settingsapi.Register(seed, all, rt.Admin)
	reportapi.Register(seed, all, rt.Reports)
	call := func(method, path, body string) {
		t.Helper()
		rec := httptest.NewRecorder()
		seed.ServeHTTP(rec, httptest.NewRequest(method, path, strings.NewReader(body)))
		if rec.Code/100 != 2 {
			t.Fatalf("seed %s %s: %d %s", method, path, rec.Code, rec.Body)
		}
	}
	for i, u := range []*unitFixture{&e.a, &e.b} {
		n := string(rune('a' + i))
		*u = unitFixture{bu: "bu-" + n, newBU: map[int]string{0: "bu-c", 1: "bu-d"}[i],
			setting: fmt.Sprintf("0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5%d", i), source: fmt.Sprintf("3b2d6f0e-1a4c-4d8e-9b7a-2c5e8f1a3d6%d", i),
			sub: fmt.Sprintf("5e0c8a52-3b1f-4d6e-9a7c-2f4b6d8e0a1%d", i), newSetting: fmt.Sprintf("7a7a7a7a-5d7a-4c41-9d0e-6b1c2a3d4e5%d", i),
			event: "evt-new-" + n, campaign: "welcome-" + n}
		call("POST", "/api/business-units", `{"id":"`+u.bu+`","name":"Unit `+n+`","timeZone":"Australia/Sydney"}`)
		call("POST", "/api/reminder-settings", strings.Replace(settingJSON(u.bu), `{`, `{"guid":"`+u.setting+`",`, 1))
		call("PUT", "/api/report-subscriptions/"+u.sub, `{"businessUnitId":"`+u.bu+`","name":"Weekly activity","reportType":"automation-activity",
		  "recurrence":{"rrule":"FREQ=WEEKLY;BYDAY=MO","dtStart":"2027-03-01T08:00"},"format":"csv",
		  "template":"report-ready","channels":["log"],"recipients":["ops@example.test"]}`)
		call("PUT", "/api/report-runs/rollout/subscriptions/"+u.sub, `{"mode":"RunNowAllowlist"}`)
		var def campaign.Definition
		if err := json.Unmarshal([]byte(campaignJSON(u.bu)), &def); err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Campaigns.Save(context.Background(), u.bu, u.campaign, def, nil); err != nil {
			t.Fatal(err)
		}
		ev := eventJSON("evt-seed-"+n, u.bu, u.source, "2027-03-14")
		rec := httptest.NewRecorder()
		req := httptest.NewRequest("POST", app.LocalEventsPath, strings.NewReader(ev))
		req.Header.Set("Authorization", "Bearer "+scopeToken)
		req.Header.Set(httpapi.HeaderBusinessUnits, "*")
		if i == 1 { // bu-b is outside the served scope: its event goes through the domain-event path
			parsed := mustParse(t, ev)
			if err := rt.Events.Dispatch(context.Background(), parsed); err != nil {
				t.Fatal(err)
			}
		} else if e.h.ServeHTTP(rec, req); rec.Code != 200 {
			t.Fatalf("seed event: %d %s", rec.Code, rec.Body)
		}
		if err := e.db.QueryRow(`SELECT Id FROM AutomationScheduler WHERE SourceEntityGuid = ? AND Status = 'Pending' ORDER BY Id LIMIT 1`, u.source).Scan(&u.row); err != nil {
			t.Fatalf("%s: no reminder row: %v", u.bu, err)
		}
		if err := e.db.QueryRow(`SELECT SchedulerKey FROM AutomationScheduler WHERE SettingGuid = ? AND Status = 'Pending' ORDER BY Id LIMIT 1`, u.sub).Scan(&u.reportKey); err != nil {
			t.Fatalf("%s: no report row: %v", u.bu, err)
		}
	}
	for _, u := range []unitFixture{e.a, e.b} { // a budget (of a campaign) and a price policy per unit
		def := campaign.Definition{Name: "Camp", Status: store.CampaignActive, Triggers: []string{"Login"},
			Actions: []campaign.Action{{Key: "greet", Type: "NOTIFICATION_LOG", Provider: "log", Params: json.RawMessage(`{"subject":"Hi","text":"Hi"}`)}}}
		if _, err := rt.Campaigns.Save(context.Background(), u.bu, "camp-"+u.bu, def, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Budget.CreateBudget(context.Background(), u.bu, "camp-"+u.bu, budget.BudgetInput{Currency: "USD", MaxCost: 1000}, "seed"); err != nil {
			t.Fatal(err)
		}
		if _, err := rt.Budget.PutPolicy(context.Background(), u.bu, "ADD_SMS", budget.PolicyInput{Formula: "FIXED", Rate: "10", Unit: "SMS",
			TransferType: "SMS_FEE", Currency: "USD"}, 0, "seed"); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func campaignJSON(bu string) string {
	return `{"businessUnitId":"` + bu + `","name":"Welcome","status":"ACTIVE","triggers":["Login"],
	  "actions":[{"key":"hello","type":"NOTIFICATION_LOG","provider":"log","params":{"text":"Welcome"}}]}`
}

func reportSubJSON(bu string) string {
	return `{"businessUnitId":"` + bu + `","name":"Daily","reportType":"automation-activity",
	  "recurrence":{"rrule":"FREQ=DAILY","dtStart":"2027-03-01T08:00"},"format":"csv","template":"report-ready","channels":["log"],"recipients":["ops@example.test"]}`
}

func settingJSON(bu string) string {
	return `{"businessUnitId":"` + bu + `","name":"Police check expiry","sourceType":"PoliceVetting","triggerType":"DateBased",
	  "triggerKey":"expiresOn","offsetsDays":[30,7,0],"sendLocalTime":"09:00","template":"police-vetting-expiry",
	  "channels":["log"],"recipients":{"field":"staffEmail"}}`
}

func eventJSON(id, bu, source, expires string) string {
	return `{"specversion":"1.0","id":"` + id + `","source":"/hr","type":"PoliceVetting.Upserted","businessunitid":"` + bu +
		`","entitytype":"PoliceVetting","entityguid":"` + source + `","revision":1,"datacontenttype":"application/json",
	  "data":{"expiresOn":"` + expires + `","staffEmail":"amelia@example.test"}}`
}

// fingerprint digests everything a request could write: every row of every table of the
// SQLite database, and every file under the data folder but the database's own (the local
// trace, diagnostics and dead-letter blobs).
func (e *scopeEnv) fingerprint(t *testing.T) string {
	t.Helper()
	return e.fingerprintExcept(t, "")
}

// fingerprintExcept is fingerprint without the rows of table skip ("" skips none).
func (e *scopeEnv) fingerprintExcept(t *testing.T, skip string) string {
	t.Helper()
	h := sha256.New()
	e.eachRow(t, skip, func(tbl string, _ []string, vals []any) { fmt.Fprintf(h, "%s%v\n", tbl, vals) })
	_ = filepath.WalkDir(e.dataDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), "automation.db") || strings.HasSuffix(d.Name(), "-shm") {
			return err
		}
		b, _ := os.ReadFile(p)
		fmt.Fprintf(h, "%s %x\n", strings.TrimPrefix(p, e.dataDir), sha256.Sum256(b))
		return nil
	})
	return hex.EncodeToString(h.Sum(nil))
}

// eachRow calls fn with every row of every table of the SQLite database but skip ("" skips
// none), tables in name order: the table, its column names and the row's values (vals is
// reused from row to row).
func (e *scopeEnv) eachRow(t *testing.T, skip string, fn func(tbl string, cols []string, vals []any)) {
	t.Helper()
	rows, err := e.db.Query(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
	if err != nil {
		t.Fatal(err)
	}
	var tables []string
	for rows.Next() {
		var n string
		_ = rows.Scan(&n)
		tables = append(tables, n)
	}
	rows.Close()
	for _, tbl := range tables {
		if tbl == skip {
			continue
		}
		rs, err := e.db.Query(`SELECT * FROM "` + tbl + `"`)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rs.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rs.Next() {
			if err := rs.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fn(tbl, cols, vals)
		}
		rs.Close()
	}
}

// count is the number of rows of table.
func (e *scopeEnv) count(t *testing.T, table string) int {
	t.Helper()
	var n int
	if err := e.db.QueryRow(`SELECT COUNT(*) FROM "` + table + `"`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// routeRequest is one request of a route for a unit's fixture.
type routeRequest struct {
	method, path, body string
	headers            []string // name, value pairs
	// timeout, when set, is how long the client stays (a stream ends when it goes away).
	timeout time.Duration
}

// routeCase is one route of the table: its request for a unit, and the status in scope
// (bu-a's fixture) and out of scope (bu-b's fixture, the same request naming bu-b's things).
type routeCase struct {
	req     func(u unitFixture) routeRequest
	in, out int
	inNote  string // why an in-scope status is not 2xx
	writes  bool   // the in-scope request changes state
	// public: the route's credential is its own (a signed token in the link), not a
	// principal: every bearer, none and a wrong one included, gets the same answer.
	public bool
	// signIn: the route starts a console session, so a sign-in with the right token stores
	// one ConsoleSession row and writes nothing else (docs/security.md#sessions).
	signIn bool
	// probes are more out-of-scope requests of the route: ids of bu-b's things sent by a
	// caller of bu-a, each answered `out` (the answer of an unknown id) without writing.
	probes []scopeProbe
}

// scopeProbe is one extra out-of-scope request of a route, built from bu-a's and bu-b's fixtures.
type scopeProbe struct {
	note string
	req  func(a, b unitFixture) routeRequest
	out  int
	// sameAs, when set, is a request whose answer the probe's must equal byte for byte (the
	// GET of an unknown id).
	sameAs func(a, b unitFixture) routeRequest
}

const op = "X-Automation-Operator"

// consoleForm is the content type of the console's forms.
const consoleForm = "application/x-www-form-urlencoded"

// registryNote: the served scope (bu-a, bu-c) is not every business unit.
const registryNote = "the event registry is platform-wide: only a caller that sees every business unit manages it"

// keysNote: API keys are platform-wide and the served scope is not every business unit.
const keysNote = "API keys are platform-wide: only a caller that sees every business unit manages them"

// routeTable covers every HTTP route the runtime registers; TestEveryRouteByTokenAndScope
// fails on a registered route missing here (and on an entry no longer registered).
func routeTable() map[string]routeCase {
	get := func(path func(u unitFixture) string) func(u unitFixture) routeRequest {
		return func(u unitFixture) routeRequest { return routeRequest{method: "GET", path: path(u)} }
	}
	return map[string]routeCase{
		// Settings API.
		"GET /api/business-units": {req: get(func(u unitFixture) string { return "/api/business-units" }), in: 200, out: 200},
		"POST /api/business-units": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/business-units", body: `{"id":"` + u.newBU + `","name":"New","timeZone":"Australia/Sydney"}`}
		}, in: 201, out: 404, writes: true, probes: []scopeProbe{{note: "an existing unit outside the scope", out: 404,
			req: func(a, b unitFixture) routeRequest {
				return routeRequest{method: "POST", path: "/api/business-units", body: `{"id":"` + b.bu + `","name":"New","timeZone":"Australia/Sydney"}`}
			}}}},
		"GET /api/business-units/{id}": {req: get(func(u unitFixture) string { return "/api/business-units/" + u.bu }), in: 200, out: 404},
		"PUT /api/business-units/{id}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "PUT", path: "/api/business-units/" + u.bu, body: `{"name":"Renamed","timeZone":"Australia/Sydney"}`, headers: []string{"If-Match", `"1"`}}
		}, in: 200, out: 404, writes: true},
		"GET /api/reminder-settings": {req: get(func(u unitFixture) string { return "/api/reminder-settings?businessUnitId=" + u.bu }), in: 200, out: 200}, // a list: empty
		"POST /api/reminder-settings": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/reminder-settings", body: strings.Replace(settingJSON(u.bu), `"PoliceVetting"`, `"FirstAid"`, 1)}
		}, in: 201, out: 404, writes: true, probes: []scopeProbe{{note: "bu-b's setting guid for a setting of bu-a", out: 404,
			req: func(a, b unitFixture) routeRequest {
				return routeRequest{method: "POST", path: "/api/reminder-settings", body: strings.Replace(settingJSON(a.bu), `{`, `{"guid":"`+b.setting+`",`, 1)}
			}}}},
		"GET /api/reminder-settings/{guid}": {req: get(func(u unitFixture) string { return "/api/reminder-settings/" + u.setting }), in: 200, out: 404},
		"PUT /api/reminder-settings/{guid}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "PUT", path: "/api/reminder-settings/" + u.setting, body: strings.Replace(settingJSON(u.bu), `"09:00"`, `"08:30"`, 1), headers: []string{"If-Match", `"1"`}}
		}, in: 200, out: 404, writes: true},
		"POST /api/reminder-settings/{guid}/deactivate": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/reminder-settings/" + u.setting + "/deactivate", headers: []string{"If-Match", `"1"`}}
		}, in: 200, out: 404, writes: true},
		// Local events (serve only).
		"/api/local/domain-events": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: app.LocalEventsPath, body: eventJSON(u.event, u.bu, u.source, "2027-05-01")}
		}, in: 200, out: 404, writes: true},
		// Event gateway: ingest and metrics (scoped by the event's business unit), the
		// registry (platform-wide: only a caller seeing every business unit reaches it).
		"POST /api/events": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/events", body: `{"specversion":"1.0","id":"` + u.event + `","source":"/app","type":"Login",
			  "businessunitid":"` + u.bu + `","customerid":"CUST-1","data":{}}`}
		}, in: 200, out: 404, writes: true},
		"GET /api/events/metrics":       {req: get(func(u unitFixture) string { return "/api/events/metrics?businessUnitId=" + u.bu }), in: 200, out: 404},
		"GET /api/event-registry/types": {req: get(func(u unitFixture) string { return "/api/event-registry/types" }), in: 404, inNote: registryNote, out: 404},
		"POST /api/event-registry/types": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/event-registry/types", body: `{"eventType":"New","class":"DIRECT","schema":{}}`, headers: []string{op, "jane"}}
		}, in: 404, inNote: registryNote, out: 404},
		"GET /api/event-registry/types/{eventType}": {req: get(func(u unitFixture) string { return "/api/event-registry/types/Login" }), in: 404, inNote: registryNote, out: 404},
		"PUT /api/event-registry/types/{eventType}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "PUT", path: "/api/event-registry/types/Login", body: `{"eventType":"Login","class":"DIRECT","schema":{}}`, headers: []string{op, "jane", "If-Match", `"1"`}}
		}, in: 404, inNote: registryNote, out: 404},
		"GET /api/event-registry/types/{eventType}/versions":           {req: get(func(u unitFixture) string { return "/api/event-registry/types/Login/versions" }), in: 404, inNote: registryNote, out: 404},
		"GET /api/event-registry/types/{eventType}/versions/{version}": {req: get(func(u unitFixture) string { return "/api/event-registry/types/Login/versions/1" }), in: 404, inNote: registryNote, out: 404},
		"GET /api/event-registry/export":                               {req: get(func(u unitFixture) string { return "/api/event-registry/export" }), in: 404, inNote: registryNote, out: 404},
		"POST /api/event-registry/import": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/event-registry/import", body: `{"events":[]}`, headers: []string{op, "jane"}}
		}, in: 404, inNote: registryNote, out: 404},
		// Support API.
		"GET /api/support/scheduler-rows":      {req: get(func(u unitFixture) string { return "/api/support/scheduler-rows?businessUnitId=" + u.bu }), in: 200, out: 404},
		"GET /api/support/scheduler-rows/{id}": {req: get(func(u unitFixture) string { return fmt.Sprintf("/api/support/scheduler-rows/%d", u.row) }), in: 200, out: 404},
		"POST /api/support/scheduler-rows/{id}/release": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: fmt.Sprintf("/api/support/scheduler-rows/%d/release", u.row), body: `{"reason":"r"}`, headers: []string{op, "jane", "If-Match", `"1"`}}
		}, in: 409, inNote: "a Pending row not on hold has no hold to release", out: 404},
		"POST /api/support/scheduler-rows/{id}/retry": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: fmt.Sprintf("/api/support/scheduler-rows/%d/retry", u.row), body: `{"reason":"r"}`, headers: []string{op, "jane", "If-Match", `"1"`}}
		}, in: 409, inNote: "a Pending row waiting for its time has nothing to retry", out: 404},
		"POST /api/support/scheduler-rows/{id}/cancel": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: fmt.Sprintf("/api/support/scheduler-rows/%d/cancel", u.row), body: `{"reason":"r"}`, headers: []string{op, "jane", "If-Match", `"1"`}}
		}, in: 200, out: 404, writes: true},
		"POST /api/support/scheduler-rows/{id}/run-now": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: fmt.Sprintf("/api/support/scheduler-rows/%d/run-now", u.row), body: `{"reason":"r"}`, headers: []string{op, "jane", "If-Match", `"1"`}}
		}, in: 200, out: 404, writes: true},
		"POST /api/support/releases": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/support/releases", body: `{"filter":{"businessUnitId":"` + u.bu + `"},"reason":"r"}`, headers: []string{op, "jane"}}
		}, in: 200, out: 404},
		"GET /api/support/explain": {req: get(func(u unitFixture) string {
			return "/api/support/explain?sourceType=PoliceVetting&sourceGuid=" + u.source
		}), in: 200, out: 404},
		"GET /api/support/metrics":      {req: get(func(u unitFixture) string { return "/api/support/metrics?businessUnitId=" + u.bu }), in: 200, out: 404},
		"GET /api/support/dead-letters": {req: get(func(u unitFixture) string { return "/api/support/dead-letters?businessUnitId=" + u.bu }), in: 200, out: 404},
		"POST /api/support/dead-letters/requeue": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/support/dead-letters/requeue", body: `{"id":"dl-` + u.bu + `","reason":"fixed"}`, headers: []string{op, "jane"}}
		}, in: 404, inNote: "no dead letter has that id", out: 404},
		"POST /api/support/dead-letters/discard": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/support/dead-letters/discard", body: `{"id":"dl-` + u.bu + `","etag":"e","reason":"spam"}`, headers: []string{op, "jane"}}
		}, in: 404, inNote: "no dead letter has that id", out: 404},
		"POST /api/support/dead-letters/requeue-many": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/support/dead-letters/requeue-many", body: `{"items":[{"id":"dl-unknown"}],"reason":"fixed"}`, headers: []string{op, "jane"}}
		}, in: 200, inNote: "each dead letter is answered in the result: this unknown id is refused (NotFound); a bulk names no unit, each dead letter's own is checked", out: 200},
		"GET /api/support/deliveries/unknown": {req: get(func(u unitFixture) string { return "/api/support/deliveries/unknown?businessUnitId=" + u.bu }), in: 200, out: 404},
		"POST /api/support/deliveries/unknown/{deliveryKey}/resolve": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/support/deliveries/unknown/dlv_" + u.bu + "/resolve", body: `{"businessUnitId":"` + u.bu + `","status":"Sent","reason":"r"}`,
				headers: []string{op, "jane", "If-Match", `"1"`}}
		}, in: 404, inNote: "no UNKNOWN delivery is stored: the key is unknown", out: 404},
		"GET /api/support/deliveries/held": {req: get(func(u unitFixture) string { return "/api/support/deliveries/held?businessUnitId=" + u.bu }), in: 200, out: 404},
		"POST /api/support/deliveries/{deliveryKey}/release": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/support/deliveries/dlv_" + u.bu + "/release", body: `{"businessUnitId":"` + u.bu + `","reason":"r"}`,
				headers: []string{op, "jane", "If-Match", `"1"`}}
		}, in: 404, inNote: "no held delivery is stored: the key is unknown", out: 404},
		"GET /api/support/deliveries/counts": {req: get(func(u unitFixture) string {
			return "/api/support/deliveries/counts?businessUnitId=" + u.bu + "&from=2026-09-01&to=2026-09-30"
		}), in: 200, out: 404},
		// Budgets and fees (docs/budgets.md).
		"GET /api/budgets/campaigns/{campaignId}": {req: get(func(u unitFixture) string { return "/api/budgets/campaigns/camp-" + u.bu + "?businessUnitId=" + u.bu }), in: 200, out: 404},
		"PUT /api/budgets/campaigns/{campaignId}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "PUT", path: "/api/budgets/campaigns/camp-" + u.bu + "?businessUnitId=" + u.bu, body: `{"maxCost":"5000","reason":"r"}`, headers: []string{op, "jane", "If-Match", `"1"`}}
		}, in: 200, out: 404, writes: true},
		"POST /api/budgets/campaigns/{campaignId}/resume": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/budgets/campaigns/camp-" + u.bu + "/resume?businessUnitId=" + u.bu, headers: []string{op, "jane", "If-Match", `"1"`}}
		}, in: 409, inNote: "an active budget has nothing to resume", out: 404},
		"GET /api/budgets/campaigns/{campaignId}/costs": {req: get(func(u unitFixture) string {
			return "/api/budgets/campaigns/camp-" + u.bu + "/costs?businessUnitId=" + u.bu + "&from=2026-09-01&to=2026-09-30"
		}), in: 200, out: 404},
		"GET /api/budgets/price-policies":              {req: get(func(u unitFixture) string { return "/api/budgets/price-policies?businessUnitId=" + u.bu }), in: 200, out: 404},
		"GET /api/budgets/price-policies/{actionType}": {req: get(func(u unitFixture) string { return "/api/budgets/price-policies/ADD_SMS?businessUnitId=" + u.bu }), in: 200, out: 404},
		"PUT /api/budgets/price-policies/{actionType}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "PUT", path: "/api/budgets/price-policies/ADD_DATA?businessUnitId=" + u.bu,
				body: `{"formula":"PER_UNIT","rate":"0.5","unit":"MB","transferType":"DATA_FEE","currency":"USD"}`, headers: []string{op, "jane"}}
		}, in: 201, out: 404, writes: true},
		"GET /api/budgets/fees/unknown": {req: get(func(u unitFixture) string { return "/api/budgets/fees/unknown?businessUnitId=" + u.bu }), in: 200, out: 404},
		"POST /api/budgets/fees/unknown/{orderId}/resolve": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/budgets/fees/unknown/fee-" + u.bu + "-1/resolve", body: `{"businessUnitId":"` + u.bu + `","status":"SUCCEEDED","reason":"r"}`,
				headers: []string{op, "jane", "If-Match", `"1"`}}
		}, in: 404, inNote: "no fee is stored: the order is unknown", out: 404},
		"GET /api/budgets/waiting": {req: get(func(u unitFixture) string { return "/api/budgets/waiting?businessUnitId=" + u.bu }), in: 200, out: 404},
		// Report API.
		"POST /api/report-subscriptions": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/report-subscriptions", body: `{"businessUnitId":"` + u.bu + `","name":"Daily","reportType":"automation-activity",
			  "recurrence":{"rrule":"FREQ=DAILY","dtStart":"2027-03-01T08:00"},"format":"csv","template":"report-ready","channels":["log"],"recipients":["ops@example.test"]}`}
		}, in: 201, out: 422, writes: true}, // bu-b is an unknown business unit to this caller (422 names the field)
		"GET /api/report-subscriptions":        {req: get(func(u unitFixture) string { return "/api/report-subscriptions?businessUnitId=" + u.bu }), in: 200, out: 200}, // a list: empty
		"GET /api/report-subscriptions/{guid}": {req: get(func(u unitFixture) string { return "/api/report-subscriptions/" + u.sub }), in: 200, out: 404},
		"PUT /api/report-subscriptions/{guid}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "PUT", path: "/api/report-subscriptions/" + u.sub, body: `{"businessUnitId":"` + u.bu + `","name":"Renamed","reportType":"automation-activity",
			  "recurrence":{"rrule":"FREQ=WEEKLY;BYDAY=MO","dtStart":"2027-03-01T08:00"},"format":"csv","template":"report-ready","channels":["log"],"recipients":["ops@example.test"]}`,
				headers: []string{"If-Match", `"1"`}}
		}, in: 200, out: 404, writes: true, // out of scope: 404 like an unknown subscription (never "the id is taken")
			probes: []scopeProbe{
				{note: "bu-b's guid for a subscription of bu-a (a create)", out: 404,
					req: func(a, b unitFixture) routeRequest {
						return routeRequest{method: "PUT", path: "/api/report-subscriptions/" + b.sub, body: reportSubJSON(a.bu)}
					},
					sameAs: func(a, b unitFixture) routeRequest {
						return routeRequest{method: "GET", path: "/api/report-subscriptions/" + b.sub}
					}},
				{note: "bu-b's guid with If-Match", out: 404,
					req: func(a, b unitFixture) routeRequest {
						return routeRequest{method: "PUT", path: "/api/report-subscriptions/" + b.sub, body: reportSubJSON(a.bu), headers: []string{"If-Match", `"1"`}}
					}},
			}},
		"DELETE /api/report-subscriptions/{guid}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "DELETE", path: "/api/report-subscriptions/" + u.sub, headers: []string{"If-Match", `"1"`}}
		}, in: 204, out: 404, writes: true},
		"POST /api/report-subscriptions/{guid}/runs": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/report-subscriptions/" + u.sub + "/runs"}
		}, in: 202, out: 404, writes: true}, // the seed allows run-now (RunNowAllowlist)
		"GET /api/report-subscriptions/{guid}/automation-runs": {req: get(func(u unitFixture) string { return "/api/report-subscriptions/" + u.sub + "/automation-runs" }), in: 200, out: 404},
		"GET /api/report-subscriptions/{guid}/automation-runs/{runKeyHash}": {req: get(func(u unitFixture) string {
			return "/api/report-subscriptions/" + u.sub + "/automation-runs/" + strings.Repeat("0", 64)
		}), in: 404, inNote: "no run has that hash", out: 404},
		"POST /api/report-subscriptions/{guid}/automation-runs/{runKeyHash}/retry": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/report-subscriptions/" + u.sub + "/automation-runs/" + strings.Repeat("0", 64) + "/retry", body: `{"reason":"r"}`, headers: []string{op, "jane"}}
		}, in: 404, inNote: "no run has that hash", out: 404},
		"GET /api/report-subscriptions/{guid}/shadow-comparison": {req: get(func(u unitFixture) string { return "/api/report-subscriptions/" + u.sub + "/shadow-comparison" }), in: 200, out: 404},
		"GET /api/report-runs/failed":                            {req: get(func(u unitFixture) string { return "/api/report-runs/failed?businessUnitId=" + u.bu }), in: 200, out: 200}, // a list: empty
		"GET /api/report-runs/{runKeyHash}/file": {req: get(func(u unitFixture) string {
			return "/api/report-runs/" + strings.Repeat("0", 64) + "/file?subscriptionGuid=" + u.sub
		}),
			in: 404, inNote: "no run has that hash", out: 404},
		"GET /api/report-runs/ownership": {req: get(func(u unitFixture) string { return "/api/report-runs/ownership?schedulerKey=" + u.reportKey }),
			in: 404, inNote: "the old scheduler has not acquired this run", out: 404},
		"POST /api/report-runs/ownership/acquire": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/report-runs/ownership/acquire", body: `{"schedulerKey":"` + u.reportKey + `"}`}
		}, in: 200, out: 404, writes: true},
		"POST /api/report-runs/ownership/delivery-created": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/report-runs/ownership/delivery-created", body: `{"schedulerKey":"` + u.reportKey + `","ownerVersion":1,"coordinates":{"ticket":"t-1"}}`}
		}, in: 404, inNote: "nothing acquired the run", out: 404},
		"POST /api/report-runs/ownership/release": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/report-runs/ownership/release", body: `{"schedulerKey":"` + u.reportKey + `","ownerVersion":1}`}
		}, in: 404, inNote: "nothing acquired the run", out: 404},
		"GET /api/report-runs/rollout": {req: get(func(u unitFixture) string { return "/api/report-runs/rollout" }), in: 200, out: 200}, // a list: never bu-b's
		"PUT /api/report-runs/rollout/business-units/{businessUnitId}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "PUT", path: "/api/report-runs/rollout/business-units/" + u.bu, body: `{"mode":"ScheduledAllowlist"}`, headers: []string{op, "jane"}}
		}, in: 200, out: 404, writes: true},
		"DELETE /api/report-runs/rollout/business-units/{businessUnitId}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "DELETE", path: "/api/report-runs/rollout/business-units/" + u.bu, headers: []string{op, "jane"}}
		}, in: 200, out: 404},
		"PUT /api/report-runs/rollout/subscriptions/{guid}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "PUT", path: "/api/report-runs/rollout/subscriptions/" + u.sub, body: `{"mode":"ScheduledAllowlist"}`, headers: []string{op, "jane"}}
		}, in: 200, out: 404, writes: true},
		// Attribute reads (none stored for these entities yet: an empty list, an empty ranking).
		"GET /api/attributes/{entityType}/{entityId}": {req: get(func(u unitFixture) string { return "/api/attributes/CUSTOMER/cust-" + u.bu + "?businessUnitId=" + u.bu }), in: 200, out: 404},
		"GET /api/attributes/{entityType}": {req: get(func(u unitFixture) string {
			return "/api/attributes/ITEM?businessUnitId=" + u.bu + "&attribute=total_redeem_count&top=5"
		}), in: 200, out: 404},
		// Templates (none stored under this key yet: reads and previews are 404 in scope too).
		"GET /api/templates/{key}": {req: get(func(u unitFixture) string { return "/api/templates/tpl-scope?businessUnitId=" + u.bu }),
			in: 404, inNote: "no template is stored under that key", out: 404},
		"PUT /api/templates/{key}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "PUT", path: "/api/templates/tpl-scope?businessUnitId=" + u.bu, body: `{"subject":"Hi","text":"Hello"}`, headers: []string{op, "jane"}}
		}, in: 201, out: 404, writes: true},
		"POST /api/templates/{key}/preview": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/templates/tpl-scope/preview?businessUnitId=" + u.bu, body: `{"payload":{}}`}
		}, in: 404, inNote: "no template is stored under that key", out: 404},
		"DELETE /api/templates/{key}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "DELETE", path: "/api/templates/tpl-scope?businessUnitId=" + u.bu, headers: []string{op, "jane", "If-Match", `"1"`}}
		}, in: 404, inNote: "the unit has no template of its own under that key", out: 404},
		"POST /api/templates/{key}/test-send": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/templates/tpl-scope/test-send?businessUnitId=" + u.bu,
				body: `{"channel":"log","recipient":"staff@example.test","payload":{}}`, headers: []string{op, "jane"}}
		}, in: 404, inNote: "no template is stored under that key", out: 404},
		// Device registry (the push channel's devices; none registered for these customers yet).
		"PUT /api/devices/{customerId}/{token}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "PUT", path: "/api/devices/cust-" + u.bu + "/tok-" + u.bu + "?businessUnitId=" + u.bu, body: `{"platform":"android","app":"com.example.loyalty"}`}
		}, in: 201, out: 404, writes: true},
		"DELETE /api/devices/{customerId}/{token}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "DELETE", path: "/api/devices/cust-" + u.bu + "/tok-" + u.bu + "?businessUnitId=" + u.bu}
		}, in: 404, inNote: "no device is registered with that token", out: 404},
		"GET /api/devices/{customerId}": {req: get(func(u unitFixture) string { return "/api/devices/cust-" + u.bu + "?businessUnitId=" + u.bu }), in: 200, out: 404},
		// Recipient preferences and quiet hours (docs/channels.md#recipient-preferences).
		"GET /api/preferences/recipients/{recipientId}": {req: get(func(u unitFixture) string {
			return "/api/preferences/recipients/user-" + u.bu + "?businessUnitId=" + u.bu
		}), in: 200, out: 404},
		"PUT /api/preferences/recipients/{recipientId}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "PUT", path: "/api/preferences/recipients/user-" + u.bu + "?businessUnitId=" + u.bu,
				body: `{"preferences":[{"channel":"email","category":"marketing","optedIn":false}]}`, headers: []string{op, "jane"}}
		}, in: 200, out: 404, writes: true},
		"GET /api/preferences/quiet-hours": {req: get(func(u unitFixture) string { return "/api/preferences/quiet-hours?businessUnitId=" + u.bu }),
			in: 404, inNote: "the unit has no quiet hours", out: 404},
		"PUT /api/preferences/quiet-hours": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "PUT", path: "/api/preferences/quiet-hours?businessUnitId=" + u.bu, body: `{"start":"21:00","end":"08:00"}`, headers: []string{op, "jane"}}
		}, in: 200, out: 404, writes: true},
		"DELETE /api/preferences/quiet-hours": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "DELETE", path: "/api/preferences/quiet-hours?businessUnitId=" + u.bu, headers: []string{op, "jane"}}
		}, in: 404, inNote: "the unit has no quiet hours", out: 404},
		"POST /api/preferences/sms-inbound": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/preferences/sms-inbound?businessUnitId=" + u.bu,
				body: `[{"id":"e1","eventType":"Microsoft.Communication.SMSReceived","data":{"from":"+61412345678","to":"+61480000000","message":"STOP"}}]`}
		}, in: 200, out: 404, writes: true},
		// One-click unsubscribe: the signed token is the credential, whatever bearer comes;
		// this runtime has no unsubscribe secret, so every link is unknown (404, nothing
		// written). TestOneClickUnsubscribe (shared/api/preferenceapi) holds the signed path.
		"GET /api/unsubscribe": {req: get(func(u unitFixture) string { return "/api/unsubscribe?token=t-" + u.bu }), in: 404, inNote: "no such link", out: 404, public: true},
		"POST /api/unsubscribe": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/unsubscribe?token=t-" + u.bu, body: "List-Unsubscribe=One-Click", headers: []string{"Content-Type", consoleForm}}
		}, in: 404, inNote: "no such link", out: 404, public: true},
		// Inbox API (the messages are stored by the inbox channel; none for these recipients yet).
		// Campaigns (scoped by the business unit named in the query or the body).
		"GET /api/campaigns": {req: get(func(u unitFixture) string { return "/api/campaigns?businessUnitId=" + u.bu }), in: 200, out: 404},
		"GET /api/campaigns/{campaignId}": {req: get(func(u unitFixture) string { return "/api/campaigns/" + u.campaign + "?businessUnitId=" + u.bu }), in: 200, out: 404,
			probes: []scopeProbe{{note: "bu-b's campaign id under bu-a", out: 404, req: func(a, b unitFixture) routeRequest {
				return routeRequest{method: "GET", path: "/api/campaigns/" + b.campaign + "?businessUnitId=" + a.bu}
			}}}},
		"PUT /api/campaigns/{campaignId}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "PUT", path: "/api/campaigns/" + u.campaign, body: campaignJSON(u.bu), headers: []string{"If-Match", `"1"`}}
		}, in: 200, out: 404, writes: true},
		"POST /api/campaigns/{campaignId}/rerun": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/campaigns/" + u.campaign + "/rerun?businessUnitId=" + u.bu, headers: []string{"If-Match", `"1"`}}
		}, in: 200, out: 404, writes: true},
		"GET /api/campaigns/{campaignId}/counts": {req: get(func(u unitFixture) string {
			return "/api/campaigns/" + u.campaign + "/counts?businessUnitId=" + u.bu + "&from=2026-09-01&to=2026-09-30"
		}), in: 200, out: 404},
		"GET /api/campaigns/{campaignId}/executions": {req: get(func(u unitFixture) string {
			return "/api/campaigns/" + u.campaign + "/executions?businessUnitId=" + u.bu
		}), in: 200, out: 404, probes: []scopeProbe{{note: "bu-b's campaign id under bu-a", out: 404, req: func(a, b unitFixture) routeRequest {
			return routeRequest{method: "GET", path: "/api/campaigns/" + b.campaign + "/executions?businessUnitId=" + a.bu}
		}}}},
		"GET /api/campaigns/{campaignId}/unknown-commands": {req: get(func(u unitFixture) string {
			return "/api/campaigns/" + u.campaign + "/unknown-commands?businessUnitId=" + u.bu
		}), in: 200, out: 404},
		"POST /api/campaigns/{campaignId}/unknown-commands/{commandId}/resolve": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/campaigns/" + u.campaign + "/unknown-commands/cx-0:0:hello/resolve",
				body: `{"businessUnitId":"` + u.bu + `","status":"SUCCEEDED","reason":"checked"}`, headers: []string{op, "jane", "If-Match", `"1"`}}
		}, in: 404, inNote: "the campaign has no such command", out: 404},
		"GET /api/campaigns/_metrics": {req: get(func(u unitFixture) string { return "/api/campaigns/_metrics?businessUnitId=" + u.bu }), in: 200, out: 404,
			probes: []scopeProbe{{note: "every unit's gauges: the served scope is not every business unit", out: 404, req: func(a, b unitFixture) routeRequest {
				return routeRequest{method: "GET", path: "/api/campaigns/_metrics"}
			}}}},
		"GET /api/inbox/{recipientId}": {req: get(func(u unitFixture) string { return "/api/inbox/user-" + u.bu + "?businessUnitId=" + u.bu }), in: 200, out: 404},
		"POST /api/inbox/{recipientId}/messages/{id}/read": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/inbox/user-" + u.bu + "/messages/1/read?businessUnitId=" + u.bu, headers: []string{"If-Match", `"1"`}}
		}, in: 404, inNote: "the recipient has no message 1", out: 404},
		"GET /api/inbox/{recipientId}/stream": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "GET", path: "/api/inbox/user-" + u.bu + "/stream?businessUnitId=" + u.bu, timeout: 200 * time.Millisecond}
		}, in: 200, out: 404},
		// Console (HTML pages; the bearer header authenticates like the sign-in cookie, and
		// needs no CSRF token). Forms are application/x-www-form-urlencoded.
		"GET /api/console/":              {req: get(func(u unitFixture) string { return "/api/console/?businessUnitId=" + u.bu }), in: 200, out: 404},
		"GET /api/console/static/{file}": {req: get(func(u unitFixture) string { return "/api/console/static/console.css" }), in: 200, out: 200}, // no business unit in it
		"POST /api/console/login": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/console/login", body: "next=/api/console/", headers: []string{"Content-Type", consoleForm}}
		}, in: 303, inNote: "signed in: to the console", out: 303, signIn: true},
		// The OIDC sign-in's routes: this runtime has no console client (404); with one they
		// are TestConsoleSignsInThroughTheOpenIDProvider's.
		"GET /api/console/oidc/start": {req: get(func(u unitFixture) string { return "/api/console/oidc/start?next=/api/console/" }),
			in: 404, inNote: "no OpenID Connect sign-in configured", out: 404},
		"GET /api/console/oidc/callback": {req: get(func(u unitFixture) string { return "/api/console/oidc/callback?code=c&state=s" }),
			in: 404, inNote: "no OpenID Connect sign-in configured", out: 404},
		"POST /api/console/logout": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/console/logout", headers: []string{"Content-Type", consoleForm}}
		}, in: 303, inNote: "signed out: to the console", out: 303},
		"GET /api/console/budgets":   {req: get(func(u unitFixture) string { return "/api/console/budgets?businessUnitId=" + u.bu + "&campaignId=c1" }), in: 200, out: 404},
		"GET /api/console/rows":      {req: get(func(u unitFixture) string { return "/api/console/rows?businessUnitId=" + u.bu }), in: 200, out: 404},
		"GET /api/console/rows/{id}": {req: get(func(u unitFixture) string { return fmt.Sprintf("/api/console/rows/%d", u.row) }), in: 200, out: 404},
		"POST /api/console/rows/{id}/{action}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: fmt.Sprintf("/api/console/rows/%d/run-now", u.row), body: "version=1&operator=jane&reason=r", headers: []string{"Content-Type", consoleForm}}
		}, in: 200, out: 404, writes: true, probes: []scopeProbe{{note: "bu-b's row released", out: 404,
			req: func(a, b unitFixture) routeRequest {
				return routeRequest{method: "POST", path: fmt.Sprintf("/api/console/rows/%d/cancel", b.row), body: "version=1&operator=jane&reason=r", headers: []string{"Content-Type", consoleForm}}
			}}}},
		"GET /api/console/releases": {req: get(func(u unitFixture) string { return "/api/console/releases" }), in: 200, out: 200}, // a form
		"POST /api/console/releases": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/console/releases", body: "businessUnitId=" + u.bu + "&operator=jane&reason=r", headers: []string{"Content-Type", consoleForm}}
		}, in: 200, out: 404},
		"GET /api/console/releases/watch": {req: get(func(u unitFixture) string {
			return fmt.Sprintf("/api/console/releases/watch?release=rel-1&row=%d", u.row)
		}), in: 200, out: 200}, // bu-b's row is not shown
		"GET /api/console/unknown": {req: get(func(u unitFixture) string { return "/api/console/unknown?businessUnitId=" + u.bu }), in: 200, out: 404},
		"POST /api/console/unknown/{deliveryKey}/resolve": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/console/unknown/dlv_" + u.bu + "/resolve", body: "businessUnitId=" + u.bu + "&version=1&status=Sent&operator=jane&reason=r",
				headers: []string{"Content-Type", consoleForm}}
		}, in: 404, inNote: "no UNKNOWN delivery is stored: the key is unknown", out: 404},
		"GET /api/console/reports": {req: get(func(u unitFixture) string { return "/api/console/reports?businessUnitId=" + u.bu }), in: 200, out: 404},
		"GET /api/console/events":  {req: get(func(u unitFixture) string { return "/api/console/events?businessUnitId=" + u.bu }), in: 200, out: 404},
		"GET /api/console/registry": {req: get(func(u unitFixture) string { return "/api/console/registry?eventType=Login" }), in: 200, out: 200,
			inNote: "a caller of some units is told the registry is platform-wide and shown none of it"},
		"GET /api/console/attributes": {req: get(func(u unitFixture) string {
			return "/api/console/attributes?businessUnitId=" + u.bu + "&entityType=CUSTOMER&entityId=CUST-1"
		}), in: 200, out: 404},
		"GET /api/console/campaigns": {req: get(func(u unitFixture) string { return "/api/console/campaigns?businessUnitId=" + u.bu }), in: 200, out: 404},
		"GET /api/console/fees":      {req: get(func(u unitFixture) string { return "/api/console/fees?businessUnitId=" + u.bu }), in: 200, out: 404},
		"POST /api/console/campaigns": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/console/campaigns", body: "businessUnitId=" + u.bu + "&campaignId=" + u.campaign +
				"&commandId=cx-0:0:hello&version=1&status=SUCCEEDED&operator=jane&reason=r", headers: []string{"Content-Type", consoleForm}}
		}, in: 404, inNote: "the campaign has no such command", out: 404},
		"GET /api/console/dead-letters": {req: get(func(u unitFixture) string { return "/api/console/dead-letters?businessUnitId=" + u.bu }), in: 200, out: 404},
		"POST /api/console/dead-letters": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/console/dead-letters", body: "businessUnitId=" + u.bu + "&ref=dl-" + u.bu + "+e&do=requeue&operator=jane&reason=r",
				headers: []string{"Content-Type", consoleForm}}
		}, in: 200, inNote: "the page answers each dead letter: this unknown id is refused (not found)", out: 404},
		"GET /api/console/campaign-status": {req: get(func(u unitFixture) string {
			return "/api/console/campaign-status?businessUnitId=" + u.bu + "&campaignId=" + u.campaign
		}), in: 200, out: 404},
		"POST /api/console/campaign-status": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/console/campaign-status", body: "action=PAUSE&businessUnitId=" + u.bu + "&campaignId=" + u.campaign + "&version=99&operator=jane&reason=r",
				headers: []string{"Content-Type", consoleForm}}
		}, in: 412, inNote: "version 99 is not the campaign's", out: 404},
		"POST /api/console/registry": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/console/registry", body: "action=create&eventType=Unit" + u.bu + "&definition=%7B%7D&operator=jane",
				headers: []string{"Content-Type", consoleForm}}
		}, in: 404, inNote: "the registry is platform-wide: a caller of some units changes none of it", out: 404},
		"GET /api/console/templates": {req: get(func(u unitFixture) string { return "/api/console/templates?businessUnitId=" + u.bu + "&key=points" }), in: 200, out: 404},
		"POST /api/console/templates": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/console/templates", body: "businessUnitId=" + u.bu + "&key=points&version=7&subject=s&text=t&operator=jane",
				headers: []string{"Content-Type", consoleForm}}
		}, in: 412, inNote: "the unit has no version 7 of the template", out: 404},
		"GET /api/console/template-preview": {req: get(func(u unitFixture) string {
			return "/api/console/template-preview?businessUnitId=" + u.bu + "&key=points"
		}), in: 200, out: 404},
		"POST /api/console/template-preview": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/console/template-preview", body: "businessUnitId=" + u.bu + "&key=points&subject=s&text=t&payload=%7B%7D",
				headers: []string{"Content-Type", consoleForm}}
		}, in: 200, out: 404},
		"GET /api/console/activity": {req: get(func(u unitFixture) string {
			return "/api/console/activity?businessUnitId=" + u.bu + "&recipientId=CUST-1"
		}), in: 200, out: 404},
		"POST /api/console/budgets": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/console/budgets", body: "action=resume&businessUnitId=" + u.bu + "&campaignId=" + u.campaign + "&version=1&operator=jane&reason=r",
				headers: []string{"Content-Type", consoleForm}}
		}, in: 404, inNote: "the campaign has no budget", out: 404},
		"POST /api/console/fees": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/console/fees", body: "businessUnitId=" + u.bu + "&orderId=ord-" + u.bu + "&revision=1&status=SUCCEEDED&operator=jane&reason=r",
				headers: []string{"Content-Type", consoleForm}}
		}, in: 404, inNote: "no fee is stored: the order is unknown", out: 404},
		// The product's one OpenAPI document: no business unit in it, the same for every caller.
		"GET /api/openapi.json": {req: get(func(u unitFixture) string { return "/api/openapi.json" }), in: 200, out: 200},
		// API keys: platform-wide, so the served scope (bu-a, bu-c) manages none.
		"GET /api/keys": {req: get(func(u unitFixture) string { return "/api/keys" }), in: 404, inNote: keysNote, out: 404},
		"POST /api/keys": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/keys", body: `{"name":"pos","roles":["ingest"],"businessUnits":"` + u.bu + `"}`}
		}, in: 404, inNote: keysNote, out: 404},
		"GET /api/keys/{prefix}": {req: get(func(u unitFixture) string { return "/api/keys/000000000000" }), in: 404, inNote: keysNote, out: 404},
		"POST /api/keys/{prefix}/revoke": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/keys/000000000000/revoke"}
		}, in: 404, inNote: keysNote, out: 404},
		"POST /api/keys/{prefix}/rotate": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/keys/000000000000/rotate"}
		}, in: 404, inNote: keysNote, out: 404},
		// Console sessions: platform-wide, like keys.
		"POST /api/console-sessions/end": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "POST", path: "/api/console-sessions/end", body: `{"principal":"oidc:jane"}`}
		}, in: 404, inNote: keysNote, out: 404},
		"DELETE /api/report-runs/rollout/subscriptions/{guid}": {req: func(u unitFixture) routeRequest {
			return routeRequest{method: "DELETE", path: "/api/report-runs/rollout/subscriptions/" + u.sub, headers: []string{op, "jane"}}
		}, in: 200, out: 404, writes: true},
	}
}

func (e *scopeEnv) do(r routeRequest, auth string) *httptest.ResponseRecorder {
	return e.doOn(e.h, r, auth)
}

// doOn sends r to h (the serve listener, or the custom handler's: ListenerHandler(true)).
func (e *scopeEnv) doOn(h http.Handler, r routeRequest, auth string) *httptest.ResponseRecorder {
	var body io.Reader = http.NoBody
	if r.body != "" {
		body = strings.NewReader(r.body)
	}
	req := httptest.NewRequest(r.method, r.path, body)
	if r.body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	for i := 0; i+1 < len(r.headers); i += 2 {
		req.Header.Set(r.headers[i], r.headers[i+1])
	}
	if r.timeout > 0 {
		ctx, cancel := context.WithTimeout(req.Context(), r.timeout)
		defer cancel()
		req = req.WithContext(ctx)
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// TestEveryRouteByTokenAndScope: every route `serve -token T -business-units …` answers —
// the HTTP routes as the router lists them, and POST /{Function} for every function folder —
// without a token, with a wrong one and with the right one, in scope (bu-a's things) and out
// of scope (bu-b's). Without the right token every request is refused (401; the invocation
// paths 404 whatever the token) and with it an out-of-scope request answers 404 like an
// unknown id; a refused request changes nothing (database rows, trace, dead letters), and
// an out-of-scope answer that succeeds (a list) never shows bu-b.
func TestEveryRouteByTokenAndScope(t *testing.T) {
	table := routeTable()
	probe := newScopeEnv(t)
	patterns := probe.rt.Functions.HTTPPatterns()
	for _, p := range patterns {
		if _, ok := table[p]; !ok {
			t.Errorf("route %q is served but not in the route table: add it", p)
		}
	}
	for p := range table {
		if !slices.Contains(patterns, p) {
			t.Errorf("route table entry %q is not served", p)
		}
	}
	defs := funchosttest.Folders(t, "../../functions")
	auths := map[string]string{"no token": "", "wrong token": "Bearer not-" + scopeToken, "right token": "Bearer " + scopeToken}
	// Invocation paths: never served on the listener, whatever the token or the unit.
	for _, d := range defs {
		for _, u := range []unitFixture{probe.a, probe.b} {
			payload := fmt.Sprintf(`{"Data":{"message":%q},"Metadata":{"MessageId":"\"m-%s\""}}`, eventJSON("evt-inv-"+u.bu, u.bu, u.source, "2027-06-01"), u.bu)
			for name, auth := range auths {
				before := probe.fingerprint(t)
				rec := probe.do(routeRequest{method: "POST", path: "/" + d.Name, body: payload}, auth)
				if rec.Code != http.StatusNotFound {
					t.Errorf("POST /%s (%s, %s): %d %s, want 404", d.Name, name, u.bu, rec.Code, rec.Body)
				}
				if probe.fingerprint(t) != before {
					t.Errorf("POST /%s (%s, %s) wrote something", d.Name, name, u.bu)
				}
			}
		}
	}
	for _, p := range patterns {
		c, ok := table[p]
		if !ok {
			continue
		}
		t.Run(strings.NewReplacer("/", "_", " ", "_").Replace(p), func(t *testing.T) {
			e := newScopeEnv(t)
			for _, scope := range []string{"out of scope", "in scope"} {
				u, want := e.b, c.out
				if scope == "in scope" {
					u, want = e.a, c.in
				}
				r := c.req(u)
				for _, name := range []string{"no token", "wrong token", "right token"} {
					before, beforeOthers, sessions := e.fingerprint(t), e.fingerprintExcept(t, "ConsoleSession"), e.count(t, "ConsoleSession")
					rec := e.do(r, auths[name])
					refused := name != "right token" || scope == "out of scope" || want/100 != 2
					w := want
					if name != "right token" && !c.public {
						w = http.StatusUnauthorized
					}
					if rec.Code != w {
						t.Errorf("%s %s (%s, %s): %d %s, want %d %s", r.method, r.path, name, scope, rec.Code, rec.Body, w, c.inNote)
					}
					if c.signIn && name == "right token" {
						// The session row is the one write a sign-in makes.
						if e.fingerprintExcept(t, "ConsoleSession") != beforeOthers {
							t.Errorf("%s %s (%s, %s) signed in but wrote more than its session", r.method, r.path, name, scope)
						}
						if n := e.count(t, "ConsoleSession"); n != sessions+1 {
							t.Errorf("%s %s (%s, %s): %d sessions after a sign-in, want %d", r.method, r.path, name, scope, n, sessions+1)
						}
					} else if refused && e.fingerprint(t) != before {
						t.Errorf("%s %s (%s, %s) was refused with %d but wrote something", r.method, r.path, name, scope, rec.Code)
					}
					if scope == "out of scope" && rec.Code/100 == 2 && bytes.Contains(rec.Body.Bytes(), []byte(e.b.bu)) {
						t.Errorf("%s %s (%s): an answer shows bu-b: %s", r.method, r.path, name, rec.Body)
					}
					if !refused && c.writes && e.fingerprint(t) == before {
						t.Errorf("%s %s (%s): answered %d but wrote nothing: the in-scope request does not exercise the write", r.method, r.path, scope, rec.Code)
					}
				}
			}
			for _, pr := range c.probes {
				r := pr.req(e.a, e.b)
				for _, name := range []string{"no token", "wrong token", "right token"} {
					before := e.fingerprint(t)
					rec := e.do(r, auths[name])
					w := pr.out
					if name != "right token" {
						w = http.StatusUnauthorized
					}
					if rec.Code != w {
						t.Errorf("%s %s (%s, %s): %d %s, want %d", r.method, r.path, name, pr.note, rec.Code, rec.Body, w)
					}
					if e.fingerprint(t) != before {
						t.Errorf("%s %s (%s, %s) answered %d but wrote something", r.method, r.path, name, pr.note, rec.Code)
					}
					if name == "right token" && pr.sameAs != nil {
						if same := e.do(pr.sameAs(e.a, e.b), auths[name]); same.Code != rec.Code || same.Body.String() != rec.Body.String() {
							t.Errorf("%s %s (%s): %d %s, unlike an unknown id's %d %s", r.method, r.path, pr.note, rec.Code, rec.Body, same.Code, same.Body)
						}
					}
				}
			}
		})
	}
}

var quietLog = slog.New(slog.DiscardHandler)

func mustParse(t *testing.T, raw string) events.Event {
	t.Helper()
	ev, err := events.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return ev
}

// TestMetricsRouteGuard: GET /metrics (the Prometheus scrape of local serve) has its own
// guard. With AUTOMATION_METRICS_TOKEN only that token reads it (the API token does not);
// without it, the API token's guard applies as on every /api route. With the Prometheus
// exporter off the route answers 404 whatever the token. Not parallel: telemetry installs
// the process's OTel globals.
func TestMetricsRouteGuard(t *testing.T) {
	const metricsToken = "scrape-token-0123456789"
	for _, tc := range []struct {
		name, metricsToken, exporter string
		want                         map[string]int // Authorization → status
	}{
		{"own token", metricsToken, "prometheus", map[string]int{"": 401, "Bearer wrong": 401, "Bearer " + scopeToken: 401, "Bearer " + metricsToken: 200}},
		{"API token", "", "prometheus", map[string]int{"": 401, "Bearer wrong": 401, "Bearer " + scopeToken: 200, "Bearer " + metricsToken: 401}},
		{"exporter off", "", "none", map[string]int{"": 401, "Bearer " + scopeToken: 404}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rt := apptest.Open(t, map[string]string{"AUTOMATION_API_TOKEN": scopeToken,
				"AUTOMATION_METRICS_TOKEN": tc.metricsToken, "OTEL_METRICS_EXPORTER": tc.exporter}, time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC), app.Options{Seed: 7})
			h := rt.ListenerHandler(false)
			for auth, want := range tc.want {
				req := httptest.NewRequest(http.MethodGet, app.MetricsPath, nil)
				if auth != "" {
					req.Header.Set("Authorization", auth)
				}
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, req)
				if rec.Code != want {
					t.Errorf("GET /metrics with %q: %d %s, want %d", auth, rec.Code, rec.Body, want)
				}
				if want == 200 && !strings.Contains(rec.Body.String(), "# TYPE") {
					t.Errorf("GET /metrics answered no Prometheus text: %s", rec.Body)
				}
			}
		})
	}
}

// GET /metrics without a token of its own is guarded by the API, and its series are
// platform-wide: every business unit's ingest counts are labelled with the unit. A read key
// of one unit used to read them all, another tenant's figures included, although every JSON
// metrics route shows a caller its own units only. Like the other platform-wide resources
// (API keys, console sessions), the scrape answers only a caller that sees every unit; another
// one gets 404, as if the route did not exist. Not parallel: telemetry installs the process's
// OTel globals.
func TestMetricsRouteIsForCallersOfEveryUnit(t *testing.T) {
	rt := apptest.Open(t, map[string]string{"AUTOMATION_API_TOKEN": scopeToken, "OTEL_METRICS_EXPORTER": "prometheus"},
		time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC), app.Options{Seed: 7})
	h := rt.ListenerHandler(false)
	ctx := context.Background()
	key := func(name, units string) string {
		c, err := rt.Keys.Create(ctx, apikey.CreateParams{Name: name, Roles: []httpapi.Role{httpapi.RoleRead}, Units: units, Operator: "test"})
		if err != nil {
			t.Fatal(err)
		}
		return c.Secret
	}
	oneUnit, everyUnit := key("bu-a-dashboard", "bu-a"), key("platform-scraper", "*")
	for _, c := range []struct {
		name, auth, scope string
		want              int
	}{
		{"a read key of one unit", oneUnit, "", 404},
		{"a read key of every unit", everyUnit, "", 200},
		{"a read key of every unit narrowed to one", everyUnit, "bu-a", 404},
		{"the bootstrap token", scopeToken, "", 200},
	} {
		req := httptest.NewRequest(http.MethodGet, app.MetricsPath, nil)
		req.Header.Set("Authorization", "Bearer "+c.auth)
		if c.scope != "" {
			req.Header.Set(httpapi.HeaderBusinessUnits, c.scope)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != c.want {
			t.Errorf("GET /metrics with %s: %d %.300s, want %d", c.name, rec.Code, rec.Body, c.want)
		}
	}
	// A deployment that names its units (AUTOMATION_API_BUSINESS_UNITS): the bootstrap token
	// sees all of them and reads the scrape; a key of one of them does not.
	named := apptest.Open(t, map[string]string{"AUTOMATION_API_TOKEN": scopeToken, "OTEL_METRICS_EXPORTER": "prometheus",
		"AUTOMATION_API_BUSINESS_UNITS": "bu-a,bu-b"}, time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC), app.Options{Seed: 7})
	one, err := named.Keys.Create(ctx, apikey.CreateParams{Name: "bu-a-dashboard", Roles: []httpapi.Role{httpapi.RoleRead}, Units: "bu-a", Operator: "test"})
	if err != nil {
		t.Fatal(err)
	}
	for auth, want := range map[string]int{scopeToken: 200, one.Secret: 404} {
		req := httptest.NewRequest(http.MethodGet, app.MetricsPath, nil)
		req.Header.Set("Authorization", "Bearer "+auth)
		rec := httptest.NewRecorder()
		named.ListenerHandler(false).ServeHTTP(rec, req)
		if rec.Code != want {
			t.Errorf("a deployment of bu-a,bu-b: GET /metrics: %d, want %d", rec.Code, want)
		}
	}
}
