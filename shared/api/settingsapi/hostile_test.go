package settingsapi_test

// Regression tests from the hostile review of the reminder lifecycle (issue 4). Each test
// failed before its fix.

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/httpapi"
)

// A create that collides with an existing setting of the caller's scope answers 409 without
// the store's internals (dialect, statement names) in the problem text; another tenant's guid
// answers 404 like an unknown setting (out of scope answers 404: the id cannot be probed).
func TestCreateConflictDoesNotLeakInternals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.call("POST", "/api/business-units", buBody)
	e.call("POST", "/api/business-units", `{"id":"bu-nyc","name":"New York","timeZone":"America/New_York"}`)
	nyc := strings.Replace(settingBody(""), "bu-syd", "bu-nyc", 1)
	guid := e.call("POST", "/api/reminder-settings", nyc).json(t)["guid"].(string)
	if o := e.call("POST", "/api/reminder-settings", settingBody(`,"guid":"`+guid+`"`), httpapi.HeaderBusinessUnits, "bu-syd"); o.status != 404 {
		t.Fatalf("another tenant's guid: %d %s", o.status, o.body)
	}
	a := e.call("POST", "/api/reminder-settings", strings.Replace(nyc, `{`, `{"guid":"`+guid+`",`, 1), httpapi.HeaderBusinessUnits, "bu-nyc")
	if a.status != 409 {
		t.Fatalf("%d %s", a.status, a.body)
	}
	for _, leak := range []string{"sqlite", "mssql", "ReminderSettingInsert", "store:"} {
		if strings.Contains(string(a.body), leak) {
			t.Errorf("the problem names %q: %s", leak, a.body)
		}
	}
	b := e.call("POST", "/api/business-units", buBody)
	if b.status != 409 || strings.Contains(string(b.body), "sqlite") || strings.Contains(string(b.body), "store:") {
		t.Fatalf("business unit conflict: %d %s", b.status, b.body)
	}
}

// Display names and template keys are bounded and printable: a 1 MiB name would be copied
// into every delivery's payload, a template key longer than a template key column cannot
// be stored with the delivery, and a control character in a name is bad input. A business
// unit's name is bounded in characters (its column is nvarchar(200)), not in UTF-8 bytes:
// a 175-character Vietnamese name (207 bytes) is fine.
func TestNamesAndTemplateKeysAreBounded(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.call("POST", "/api/business-units", buBody)
	long := strings.Repeat("x", 201)
	cases := []struct {
		name, body, field string
	}{
		{"name over 200 characters", strings.Replace(settingBody(""), `"Police check expiry"`, `"`+long+`"`, 1), "name"},
		{"name with a line break", strings.Replace(settingBody(""), `"Police check expiry"`, `"Police\r\nBcc: x@example.test"`, 1), "name"},
		{"template key over 200 characters", strings.Replace(settingBody(""), `"police-vetting-expiry"`, `"`+long+`"`, 1), "template"},
		{"template key with spaces", strings.Replace(settingBody(""), `"police-vetting-expiry"`, `"police vetting"`, 1), "template"},
	}
	for _, c := range cases {
		a := e.call("POST", "/api/reminder-settings", c.body)
		if a.status != 422 || !strings.Contains(strings.Join(a.problemFields(t), ","), c.field) {
			t.Errorf("%s: %d %s", c.name, a.status, a.body)
		}
	}
	vn := strings.TrimSpace(strings.Repeat("Trung tâm Hồ Chí Minh ", 8)) // 175 characters, 207 bytes
	if a := e.call("POST", "/api/business-units", `{"id":"bu-hcm","name":"`+vn+`","timeZone":"Asia/Ho_Chi_Minh"}`); a.status != 201 {
		t.Errorf("a 175-character name: %d %s", a.status, a.body)
	}
	if a := e.call("POST", "/api/business-units", `{"id":"bu-x","name":"a\u0000b","timeZone":"UTC"}`); a.status != 422 {
		t.Errorf("a name with NUL: %d %s", a.status, a.body)
	}
	if a := e.call("POST", "/api/business-units", `{"id":"bu-y","name":"`+strings.Repeat("ồ", 201)+`","timeZone":"UTC"}`); a.status != 422 {
		t.Errorf("a 201-character name: %d %s", a.status, a.body)
	}
}

// Business-unit ids may contain '/' (and '@', '+', '~'): the Location of a created unit is
// its escaped path, which a client can follow (it pointed at a route that does not exist).
func TestLocationOfAUnitWithASlashIsFollowable(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	a := e.call("POST", "/api/business-units", `{"id":"acme/syd+1","name":"Acme Sydney","timeZone":"Australia/Sydney"}`)
	loc := a.header.Get("Location")
	if a.status != 201 || loc != "/api/business-units/acme%2Fsyd+1" {
		t.Fatalf("%d Location %q", a.status, loc)
	}
	if g := e.call("GET", loc, ""); g.status != 200 || g.json(t)["id"] != "acme/syd+1" {
		t.Fatalf("GET %s: %d %s", loc, g.status, g.body)
	}
}

// Deactivate takes an optional body that must be {} when present; the check ran only when
// Content-Length was positive, so a chunked body (no Content-Length) with unknown fields
// was ignored and the setting deactivated (review of the HTTP layer).
func TestDeactivateRefusesAChunkedBodyWithUnknownFields(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.call("POST", "/api/business-units", buBody)
	guid := e.call("POST", "/api/reminder-settings", settingBody("")).json(t)["guid"].(string)
	send := func(body string) int {
		req, err := http.NewRequest("POST", e.srv.URL+"/api/reminder-settings/"+guid+"/deactivate", io.MultiReader(strings.NewReader(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("If-Match", `"1"`)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if len(resp.TransferEncoding) == 0 && resp.Request.ContentLength > 0 {
			t.Fatal("the request was not chunked")
		}
		return resp.StatusCode
	}
	if code := send(`{"reason":"x"}`); code != 400 {
		t.Fatalf("chunked body with an unknown field: %d, want 400", code)
	}
	if a := e.call("GET", "/api/reminder-settings/"+guid, ""); a.json(t)["isActive"] != true {
		t.Fatalf("the refused request deactivated the setting: %s", a.body)
	}
	if code := send(`{}`); code != 200 {
		t.Fatalf("chunked {}: %d", code)
	}
}
