package settingsapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/settingsapi"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

type env struct {
	t     *testing.T
	st    store.Store
	clock *automation.ManualClock
	svc   *reminder.Service
	srv   *httptest.Server
	doc   *openapitest.Doc
}

func newEnv(t *testing.T) *env {
	t.Helper()
	st := sqlitetest.Open(t)
	e := &env{t: t, st: st, clock: automation.NewManualClock(time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC))}
	e.svc = &reminder.Service{Store: st, Clock: e.clock}
	admin := &reminder.Admin{Store: st, Clock: e.clock, Service: e.svc, Channels: map[string]bool{"log": true}}
	api := httpapi.New(httpapi.Options{Idempotency: st, Clock: e.clock})
	router := funchost.NewRouter(nil)
	settingsapi.Register(router, api, admin)
	e.srv = httptest.NewServer(router)
	t.Cleanup(e.srv.Close)
	e.doc = openapitest.Load(t, settingsapi.OpenAPI())
	return e
}

type answer struct {
	status int
	header http.Header
	body   []byte
}

func (a answer) json(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(a.body, &m); err != nil {
		t.Fatalf("not JSON: %s", a.body)
	}
	return m
}

// problemFields returns the field names of a problem's errors.
func (a answer) problemFields(t *testing.T) []string {
	t.Helper()
	var p httpapi.Problem
	if err := json.Unmarshal(a.body, &p); err != nil {
		t.Fatalf("not a problem: %s", a.body)
	}
	var out []string
	for _, f := range p.Errors {
		out = append(out, f.Field)
	}
	return out
}

// call makes a real HTTP request and checks request and response against openapi.yaml.
func (e *env) call(method, path, body string, headers ...string) answer {
	e.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, e.srv.URL+path, rd)
	if err != nil {
		e.t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	// Validate against the document: the request (path, query, headers, body) and the answer.
	vreq, _ := http.NewRequest(method, path, strings.NewReader(body))
	vreq.Header = req.Header.Clone()
	e.doc.Validate(e.t, vreq, openapitest.Answer(vreq, resp.StatusCode, resp.Header, b))
	return answer{status: resp.StatusCode, header: resp.Header, body: b}
}

// recorder captures the patterns Register adds.
type recorder struct{ patterns []string }

func (r *recorder) RegisterHTTP(pattern string, _ http.Handler) {
	r.patterns = append(r.patterns, pattern)
}

// The OpenAPI document is valid OpenAPI 3.1 and describes exactly the registered routes.
func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	t.Parallel()
	doc := openapitest.Load(t, settingsapi.OpenAPI())
	doc.CheckDocument(t)
	rec := &recorder{}
	settingsapi.Register(rec, httpapi.New(httpapi.Options{}), &reminder.Admin{})
	doc.CheckRoutes(t, "the router", rec.patterns)
	sort.Strings(rec.patterns)
	var listed []string
	for _, r := range settingsapi.Routes {
		listed = append(listed, r.Method+" "+r.Path)
	}
	sort.Strings(listed)
	if strings.Join(listed, "\n") != strings.Join(rec.patterns, "\n") {
		t.Fatalf("Routes and Register differ")
	}
}

const buBody = `{"id":"bu-syd","name":"Sydney","timeZone":"AUS Eastern Standard Time","roles":{"managers":["lee@example.test"]}}`

func settingBody(extra string) string {
	return `{"businessUnitId":"bu-syd","name":"Police check expiry","sourceType":"PoliceVetting","triggerType":"DateBased",
	  "triggerKey":"expiresOn","offsetsDays":[30,7,0],"sendLocalTime":"09:00","template":"police-vetting-expiry",
	  "channels":["log"],"recipients":{"field":"staffEmail"}` + extra + `}`
}

func TestBusinessUnitsAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.call("POST", "/api/business-units", buBody)
	m := a.json(t)
	if a.status != 201 || a.header.Get("ETag") != `"1"` || a.header.Get("Location") != "/api/business-units/bu-syd" ||
		m["timeZone"] != "Australia/Sydney" || m["timeZoneGiven"] != "AUS Eastern Standard Time" {
		t.Fatalf("create: %d %v %s", a.status, a.header, a.body)
	}
	if a := e.call("POST", "/api/business-units", buBody); a.status != 409 {
		t.Fatalf("duplicate: %d %s", a.status, a.body)
	}
	e.call("POST", "/api/business-units", `{"id":"bu-nyc","name":"New York","timeZone":"America/New_York"}`)
	if a := e.call("GET", "/api/business-units/bu-syd", ""); a.status != 200 || a.header.Get("ETag") != `"1"` {
		t.Fatalf("get: %d %s", a.status, a.body)
	}
	// Paging by id.
	a = e.call("GET", "/api/business-units?limit=1", "")
	m = a.json(t)
	cursor, _ := m["nextCursor"].(string)
	if a.status != 200 || len(m["items"].([]any)) != 1 || cursor == "" {
		t.Fatalf("page 1: %s", a.body)
	}
	a = e.call("GET", "/api/business-units?limit=1&cursor="+cursor, "")
	if items := a.json(t)["items"].([]any); len(items) != 1 || items[0].(map[string]any)["id"] != "bu-syd" {
		t.Fatalf("page 2: %s", a.body)
	}
	// Scope: another tenant sees neither the unit nor its place in the list.
	if a := e.call("GET", "/api/business-units/bu-syd", "", httpapi.HeaderBusinessUnits, "bu-nyc"); a.status != 404 {
		t.Fatalf("out of scope: %d", a.status)
	}
	if a := e.call("GET", "/api/business-units", "", httpapi.HeaderBusinessUnits, "bu-nyc"); len(a.json(t)["items"].([]any)) != 1 {
		t.Fatalf("scoped list: %s", a.body)
	}
	// Replace: If-Match required and checked.
	upd := `{"name":"Sydney CBD","timeZone":"Australia/Sydney"}`
	if a := e.call("PUT", "/api/business-units/bu-syd", upd); a.status != 428 {
		t.Fatalf("no If-Match: %d", a.status)
	}
	if a := e.call("PUT", "/api/business-units/bu-syd", upd, "If-Match", `"9"`); a.status != 412 {
		t.Fatalf("stale If-Match: %d", a.status)
	}
	a = e.call("PUT", "/api/business-units/bu-syd", upd, "If-Match", `"1"`)
	if m := a.json(t); a.status != 200 || a.header.Get("ETag") != `"2"` || m["name"] != "Sydney CBD" || m["timeZoneGiven"] != nil {
		t.Fatalf("replace: %d %s", a.status, a.body)
	}
	if a := e.call("GET", "/api/business-units/bu-mel", ""); a.status != 404 {
		t.Fatalf("unknown: %d", a.status)
	}
}

func TestReminderSettingsAPI(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.call("POST", "/api/business-units", buBody)
	// Create with an Idempotency-Key: the guid derives from it; a retry gets the same answer.
	a := e.call("POST", "/api/reminder-settings", settingBody(""), httpapi.HeaderIdempotencyKey, "create-1")
	m := a.json(t)
	guid, _ := m["guid"].(string)
	if a.status != 201 || guid == "" || a.header.Get("ETag") != `"1"` || m["isActive"] != true || m["version"] != float64(1) {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	again := e.call("POST", "/api/reminder-settings", settingBody(""), httpapi.HeaderIdempotencyKey, "create-1")
	if again.status != 201 || !bytes.Equal(again.body, a.body) || again.header.Get(httpapi.HeaderIdempotentReplayed) != "true" {
		t.Fatalf("replay: %d %s", again.status, again.body)
	}
	if other := e.call("POST", "/api/reminder-settings", settingBody(`,"maxLatenessHours":24`), httpapi.HeaderIdempotencyKey, "create-1"); other.status != 422 {
		t.Fatalf("same key, other body: %d %s", other.status, other.body)
	}
	// An event schedules three rows.
	raw := `{"specversion":"1.0","id":"evt-1","source":"/hr","type":"PoliceVetting.Upserted","businessunitid":"bu-syd",
	  "entitytype":"PoliceVetting","entityguid":"e-1","revision":1,"data":{"expiresOn":"2026-10-31","staffEmail":"a@example.test"}}`
	ev, err := events.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Process(context.Background(), ev); err != nil {
		t.Fatal(err)
	}
	// Read, then replace the send time: rows are updated in place.
	if a := e.call("GET", "/api/reminder-settings/"+guid, ""); a.status != 200 || a.header.Get("ETag") != `"1"` {
		t.Fatalf("get: %d %s", a.status, a.body)
	}
	put := strings.Replace(settingBody(""), `"09:00"`, `"08:30"`, 1)
	a = e.call("PUT", "/api/reminder-settings/"+guid, put, "If-Match", `"1"`)
	m = a.json(t)
	prop, _ := m["propagation"].(map[string]any)
	if a.status != 200 || a.header.Get("ETag") != `"2"` || prop["status"] != "Complete" || prop["rowsUpdatedInPlace"] != float64(3) {
		t.Fatalf("put: %d %s", a.status, a.body)
	}
	if a := e.call("PUT", "/api/reminder-settings/"+guid, put, "If-Match", `"1"`); a.status != 412 {
		t.Fatalf("stale put: %d", a.status)
	}
	// A second setting; list with filters and paging.
	e.call("POST", "/api/reminder-settings", strings.Replace(settingBody(""), `"PoliceVetting"`, `"FirstAid"`, 1))
	a = e.call("GET", "/api/reminder-settings?businessUnitId=bu-syd&limit=1", "")
	m = a.json(t)
	cursor, _ := m["nextCursor"].(string)
	if a.status != 200 || len(m["items"].([]any)) != 1 || cursor == "" {
		t.Fatalf("list page 1: %s", a.body)
	}
	if a := e.call("GET", "/api/reminder-settings?businessUnitId=bu-syd&limit=1&cursor="+cursor, ""); len(a.json(t)["items"].([]any)) != 1 {
		t.Fatalf("list page 2: %s", a.body)
	}
	if a := e.call("GET", "/api/reminder-settings?sourceType=FirstAid&limit=1&cursor="+cursor, ""); a.status != 400 {
		t.Fatalf("cursor with other filters: %d", a.status)
	}
	if a := e.call("GET", "/api/reminder-settings?sourceType=PoliceVetting&active=true", ""); len(a.json(t)["items"].([]any)) != 1 {
		t.Fatalf("filtered: %s", a.body)
	}
	if a := e.call("GET", "/api/reminder-settings?colour=red", ""); a.status != 400 {
		t.Fatalf("unknown query parameter: %d", a.status)
	}
	// Deactivate: pending rows deactivated.
	if a := e.call("POST", "/api/reminder-settings/"+guid+"/deactivate", ""); a.status != 428 {
		t.Fatalf("deactivate without If-Match: %d", a.status)
	}
	a = e.call("POST", "/api/reminder-settings/"+guid+"/deactivate", "", "If-Match", `"2"`)
	m = a.json(t)
	prop, _ = m["propagation"].(map[string]any)
	if a.status != 200 || m["isActive"] != false || prop["rowsDeactivated"] != float64(3) {
		t.Fatalf("deactivate: %d %s", a.status, a.body)
	}
	counts, _ := e.st.SchedulerCountByStatus(context.Background())
	if counts[automation.StatusDeactivated] != 3 || counts[automation.StatusPending] != 0 {
		t.Fatalf("rows %v", counts)
	}
	// Another tenant: 404 for the setting, nothing in its list.
	if a := e.call("GET", "/api/reminder-settings/"+guid, "", httpapi.HeaderBusinessUnits, "bu-nyc"); a.status != 404 {
		t.Fatalf("out of scope: %d", a.status)
	}
	if a := e.call("GET", "/api/reminder-settings", "", httpapi.HeaderBusinessUnits, "bu-nyc"); len(a.json(t)["items"].([]any)) != 0 {
		t.Fatalf("out-of-scope list: %s", a.body)
	}
}

// The bad-input table of the issue: invalid settings answer 400/422 with field errors and
// store nothing; a stale If-Match answers 412; an unknown or out-of-scope business unit 404.
func TestBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.call("POST", "/api/business-units", buBody)
	created := e.call("POST", "/api/reminder-settings", settingBody(""))
	guid := created.json(t)["guid"].(string)
	threshold := `{"businessUnitId":"bu-syd","name":"Full class","sourceType":"ClassSession","triggerType":"ThresholdCondition",
	  "triggerKey":"booking","threshold":{"levels":[80],"firingPolicy":"OncePerThreshold"},"template":"t","channels":["log"],"recipients":{"fixed":["ops@example.test"]}}`
	cases := []struct {
		name, method, path, body string
		headers                  []string
		status                   int
		fields                   []string
	}{
		{"offset more than ten years after", "POST", "/api/reminder-settings", strings.Replace(settingBody(""), "[30,7,0]", "[30,-3651]", 1), nil, 422, []string{"offsetsDays[1]"}},
		{"duplicate offsets", "POST", "/api/reminder-settings", strings.Replace(settingBody(""), "[30,7,0]", "[7,7]", 1), nil, 422, []string{"offsetsDays[1]"}},
		{"25:00", "POST", "/api/reminder-settings", strings.Replace(settingBody(""), `"09:00"`, `"25:00"`, 1), nil, 422, []string{"sendLocalTime"}},
		{"empty channels", "POST", "/api/reminder-settings", strings.Replace(settingBody(""), `["log"]`, `[]`, 1), nil, 422, []string{"channels"}},
		{"unknown channel", "POST", "/api/reminder-settings", strings.Replace(settingBody(""), `["log"]`, `["pigeon"]`, 1), nil, 422, []string{"channels[0]"}},
		{"threshold without metric", "POST", "/api/reminder-settings", threshold, nil, 422, []string{"threshold.metric"}},
		{"several problems at once", "POST", "/api/reminder-settings", strings.NewReplacer("[30,7,0]", "[-3651]", `["log"]`, `[]`, `"09:00"`, `"25:00"`).Replace(settingBody("")), nil, 422, []string{"sendLocalTime", "offsetsDays[0]", "channels"}},
		{"unknown field", "POST", "/api/reminder-settings", settingBody(`,"colour":"red"`), nil, 400, []string{"colour"}},
		{"wrong type", "POST", "/api/reminder-settings", strings.Replace(settingBody(""), "[30,7,0]", `"30"`, 1), nil, 400, []string{"offsetsDays"}},
		{"not JSON", "POST", "/api/reminder-settings", `{"name":`, nil, 400, nil},
		{"null body", "POST", "/api/reminder-settings", `null`, nil, 400, nil},
		{"array body", "POST", "/api/reminder-settings", `[1]`, nil, 400, nil},
		{"unknown business unit", "POST", "/api/reminder-settings", strings.Replace(settingBody(""), "bu-syd", "bu-mel", 1), nil, 404, nil},
		{"out-of-scope business unit", "POST", "/api/reminder-settings", settingBody(""), []string{httpapi.HeaderBusinessUnits, "bu-nyc"}, 404, nil},
		{"unknown zone", "POST", "/api/business-units", `{"id":"bu-mars","name":"Mars","timeZone":"Mars/Olympus_Mons"}`, nil, 422, []string{"timeZone"}},
		{"stale If-Match", "PUT", "/api/reminder-settings/" + guid, strings.Replace(settingBody(""), "[30,7,0]", "[1]", 1), []string{"If-Match", `"7"`}, 412, []string{"If-Match"}},
		{"malformed If-Match", "PUT", "/api/reminder-settings/" + guid, settingBody(""), []string{"If-Match", "*"}, 400, []string{"If-Match"}},
		{"change of business unit", "PUT", "/api/reminder-settings/" + guid, strings.Replace(settingBody(""), "bu-syd", "bu-nyc", 1), []string{"If-Match", `"1"`}, 422, []string{"businessUnitId"}},
		{"unknown setting", "GET", "/api/reminder-settings/00000000-0000-4000-8000-000000000000", "", nil, 404, nil},
	}
	before, _ := e.st.ReminderSettingList(context.Background(), store.ReminderSettingListParams{Scope: automation.AllBusinessUnits(), Limit: 100})
	for _, c := range cases {
		a := e.call(c.method, c.path, c.body, c.headers...)
		if a.status != c.status || a.header.Get("Content-Type") != httpapi.ProblemContentType {
			t.Errorf("%s: %d %s, want %d problem", c.name, a.status, a.body, c.status)
			continue
		}
		if got := a.problemFields(t); fmt.Sprint(got) != fmt.Sprint(c.fields) && c.fields != nil {
			t.Errorf("%s: fields %v, want %v (%s)", c.name, got, c.fields, a.body)
		}
	}
	after, _ := e.st.ReminderSettingList(context.Background(), store.ReminderSettingListParams{Scope: automation.AllBusinessUnits(), Limit: 100})
	if len(after) != len(before) || after[0].Version != 1 {
		t.Fatalf("bad input stored something: %d → %d settings, version %d", len(before), len(after), after[0].Version)
	}
	if _, err := e.st.BusinessUnitGet(context.Background(), "bu-mars"); err == nil {
		t.Fatal("an invalid business unit was stored")
	}
}

// A setting whose template cannot be rendered yet is accepted with `warnings` (a forward
// reference: templates and settings are saved by separate calls, in either order); the answer
// matches the document. Without a warning the member is absent.
func TestSettingWriteAnswersWithTemplateWarnings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	st := e.st
	admin := &reminder.Admin{Store: st, Clock: e.clock, Service: e.svc, Channels: map[string]bool{"log": true},
		TemplateWarning: func(_ context.Context, bu, key string, _ []string) (string, error) {
			if key == "police-vetting-expiry" {
				return `template "` + key + `" does not exist for business unit "` + bu + `"`, nil
			}
			return "", nil
		}}
	router := funchost.NewRouter(nil)
	settingsapi.Register(router, httpapi.New(httpapi.Options{Idempotency: st, Clock: e.clock}), admin)
	srv := httptest.NewServer(router)
	t.Cleanup(srv.Close)
	e.srv = srv
	e.call("POST", "/api/business-units", buBody)
	a := e.call("POST", "/api/reminder-settings", settingBody(""))
	m := a.json(t)
	if a.status != 201 || fmt.Sprint(m["warnings"]) != `[template "police-vetting-expiry" does not exist for business unit "bu-syd"]` {
		t.Fatalf("create: %d %s", a.status, a.body)
	}
	ok := e.call("POST", "/api/reminder-settings", strings.Replace(settingBody(""), "police-vetting-expiry", "stored-template", 1))
	if ok.status != 201 || ok.json(t)["warnings"] != nil {
		t.Fatalf("create with a stored template: %d %s", ok.status, ok.body)
	}
}
