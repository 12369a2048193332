package preferenceapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/preferenceapi"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
	"github.com/automation-platform/automation/shared/preference"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

var t0 = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

var secret = []byte("an unsubscribe secret of 32 bytes!")

const op = "X-Automation-Operator: jane"

// newEnv serves the routes to a caller who sees bu-1 and bu-2; bu-2 is not stored.
func newEnv(t *testing.T) (*funchost.Router, store.Store, *preference.Service) {
	t.Helper()
	st := sqlitetest.Open(t)
	if err := st.BusinessUnitUpsert(context.Background(), store.BusinessUnit{ID: "bu-1", Name: "Unit", TimeZoneID: "Australia/Sydney"}); err != nil {
		t.Fatal(err)
	}
	clock := automation.NewManualClock(t0)
	scope := automation.ParseScope("bu-1,bu-2")
	api := httpapi.New(httpapi.Options{BusinessUnits: &scope, Idempotency: st, Clock: clock})
	svc := &preference.Service{Store: st, Clock: clock, UnsubscribeURL: "https://automation.example.test/api/unsubscribe", UnsubscribeSecret: secret}
	r := funchost.NewRouter(nil)
	preferenceapi.Register(r, api, preferenceapi.Deps{Service: svc, Units: st})
	return r, st, svc
}

func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	t.Parallel()
	doc := openapitest.LoadFile(t, "openapi.yaml")
	apptest.CheckRegistered(t, doc, func(r *funchost.Router, api *httpapi.API) { preferenceapi.Register(r, api, preferenceapi.Deps{}) }, "/api/preferences/quiet-hours", "get", "post")
	openapitest.CheckEndpoints(t, doc, httpapi.Metas(preferenceapi.Routes(preferenceapi.Deps{})))
}

// TestPreferencesAPIMatchesOpenAPI makes real calls — set, get, idempotent repeat, bad input
// naming each member, the unit's window with bad ends and zone, out of scope — checks each
// status and validates request and answer against openapi.yaml.
func TestPreferencesAPIMatchesOpenAPI(t *testing.T) {
	t.Parallel()
	r, st, _ := newEnv(t)
	doc := openapitest.LoadFile(t, "openapi.yaml")
	ctx := context.Background()
	call := openapitest.Client{Doc: doc, Handler: r}.Expecting(t)
	const rcpt = "/api/preferences/recipients/Linh@Example.test?businessUnitId=bu-1"
	body := `{"preferences":[{"channel":"email","category":"marketing","optedIn":false},{"channel":"sms","category":"loyalty","optedIn":true}],
		"quietHours":{"start":"22:00","end":"07:00","timeZoneId":"Asia/Ho_Chi_Minh"}}`
	var v preference.View
	if err := json.Unmarshal(call(200, "PUT", rcpt, body, op).Body, &v); err != nil || len(v.Preferences) != 2 || v.RecipientID != "linh@example.test" ||
		v.Preferences[0].OptedIn || v.Preferences[0].Source != "api" || v.Preferences[0].ChangedBy != "jane" || v.QuietHours == nil || v.QuietHours.End != "07:00" {
		t.Fatalf("after PUT %+v %v", v, err)
	}
	again := call(200, "PUT", rcpt, body, op)
	var v2 preference.View
	_ = json.Unmarshal(again.Body, &v2)
	if v2.Preferences[0].Version != 1 {
		t.Fatalf("the same PUT again changed the row: %+v", v2.Preferences[0])
	}
	call(200, "GET", rcpt, "")
	call(400, "PUT", rcpt, body) // no operator
	call(400, "GET", rcpt+"&extra=1", "")
	// Bad input: every member named, nothing stored.
	rec := call(422, "PUT", "/api/preferences/recipients/tom@example.test?businessUnitId=bu-1",
		`{"preferences":[{"channel":"fax","category":"spam","optedIn":false},{"channel":"email","category":"service","optedIn":false}],
		  "quietHours":{"start":"21:00","end":"21:00","timeZoneId":"Mars/Olympus_Mons"}}`, op)
	for _, member := range []string{"preferences[0].channel", "preferences[0].category", "preferences[1].optedIn", "quietHours.end", "quietHours.timeZoneId"} {
		if !strings.Contains(string(rec.Body), `"field":"`+member+`"`) {
			t.Errorf("422 does not name %s: %s", member, rec.Body)
		}
	}
	if l, _ := st.PreferenceList(ctx, "bu-1", "tom@example.test"); len(l) != 0 {
		t.Fatalf("a refused PUT stored %+v", l)
	}
	// The unit's window.
	call(404, "GET", "/api/preferences/quiet-hours?businessUnitId=bu-1", "")
	rec = call(422, "PUT", "/api/preferences/quiet-hours?businessUnitId=bu-1", `{"start":"08:00","end":"08:00","timeZoneId":"Nowhere/Town"}`, op)
	// The window is the whole body here, so the members are named without a prefix.
	for _, member := range []string{"end", "timeZoneId"} {
		if !strings.Contains(string(rec.Body), `"field":"`+member+`"`) {
			t.Errorf("422 does not name %s: %s", member, rec.Body)
		}
	}
	call(404, "GET", "/api/preferences/quiet-hours?businessUnitId=bu-1", "")
	call(200, "PUT", "/api/preferences/quiet-hours?businessUnitId=bu-1", `{"start":"21:00","end":"08:00"}`, op)
	call(200, "GET", "/api/preferences/quiet-hours?businessUnitId=bu-1", "")
	call(204, "DELETE", "/api/preferences/quiet-hours?businessUnitId=bu-1", "", op)
	call(404, "DELETE", "/api/preferences/quiet-hours?businessUnitId=bu-1", "", op)
	// Out of scope, or not stored: 404, nothing written.
	call(404, "PUT", "/api/preferences/recipients/a@example.test?businessUnitId=bu-2", body, op)
	call(404, "PUT", "/api/preferences/recipients/a@example.test?businessUnitId=bu-9", body, op)
	call(404, "PUT", "/api/preferences/quiet-hours?businessUnitId=bu-2", `{"start":"21:00","end":"08:00"}`, op)
	if l, _ := st.PreferenceList(ctx, "bu-2", "a@example.test"); len(l) != 0 {
		t.Fatalf("bu-2 has %+v", l)
	}
}

func stopEvent(from, text string) string {
	return `{"id":"e-` + from + `","topic":"/subscriptions/x/resourceGroups/rg/providers/Microsoft.Communication/communicationServices/acs",
	  "subject":"/phonenumber/` + from + `","eventType":"Microsoft.Communication.SMSReceived","eventTime":"2026-10-01T09:00:00Z",
	  "dataVersion":"1.0","metadataVersion":"1",
	  "data":{"messageId":"m-1","from":"` + from + `","to":"+61480000000","message":"` + text + `","receivedTimestamp":"2026-10-01T09:00:00Z","segmentCount":1}}`
}

// The inbound STOP webhook: the handshake is answered with the code; STOP (any case, spaces)
// opts the number out of SMS marketing, idempotently; other texts, other events and a
// sender that is not E.164 are ignored; transactional SMS still passes.
func TestInboundStopOptsTheNumberOut(t *testing.T) {
	t.Parallel()
	r, st, svc := newEnv(t)
	doc := openapitest.LoadFile(t, "openapi.yaml")
	ctx := context.Background()
	const path = "/api/preferences/sms-inbound?businessUnitId=bu-1"
	rec := doc.Call(t, r, "POST", path, `[{"id":"v1","topic":"t","subject":"","eventType":"Microsoft.EventGrid.SubscriptionValidationEvent",
		"eventTime":"2026-10-01T09:00:00Z","metadataVersion":"1","dataVersion":"1",
		"data":{"validationCode":"512d38b6-c7b8-40c8-89fe-f46f9e9622b6","validationUrl":"https://rp-eastus2.eventgrid.azure.net/x"}}]`)
	if rec.Code != 200 || !strings.Contains(string(rec.Body), `"validationResponse":"512d38b6-c7b8-40c8-89fe-f46f9e9622b6"`) {
		t.Fatalf("handshake: %d %s", rec.Code, rec.Body)
	}
	batch := "[" + strings.Join([]string{stopEvent("+61412345678", " stop "), stopEvent("+61412345679", "Stop sending me the promos"),
		stopEvent("0412345678", "STOP"), `{"id":"x","eventType":"Microsoft.Communication.SMSDeliveryReportReceived","data":{}}`}, ",") + "]"
	rec = doc.Call(t, r, "POST", path, batch)
	var res preferenceapi.InboundResult
	if err := json.Unmarshal(rec.Body, &res); rec.Code != 200 || err != nil || res.OptedOut != 1 || res.Ignored != 3 {
		t.Fatalf("STOP batch: %d %s", rec.Code, rec.Body)
	}
	l, _ := st.PreferenceList(ctx, "bu-1", "+61412345678")
	if len(l) != 2 || l[0].Channel != "sms" || l[0].OptedIn || l[0].Source != "sms-stop" || l[0].ChangedBy != "sms-stop" {
		// ChangedBy is who changed it (the webhook's caller; with no credential named, the
		// source), never the sender, who is the subject (docs/security.md#audit).
		t.Fatalf("after STOP: %+v (want marketing and loyalty on sms opted out, changed by the webhook)", l)
	}
	if rec := doc.Call(t, r, "POST", path, batch); rec.Code != 200 {
		t.Fatalf("the same batch again (Event Grid's retry): %d %s", rec.Code, rec.Body)
	}
	if l2, _ := st.PreferenceList(ctx, "bu-1", "+61412345678"); l2[0] != l[0] {
		t.Fatalf("a repeated STOP changed the row: %+v", l2[0])
	}
	now := t0.Add(time.Hour)
	for _, c := range []struct {
		payload string
		skip    bool
	}{{`{}`, true}, {`{"category":"loyalty"}`, true}, {`{"category":"security"}`, false}} {
		d, err := svc.Check(ctx, store.NotificationJob{BusinessUnitID: "bu-1", Channel: "sms", Recipient: "+61412345678", Template: "t", PayloadJSON: c.payload}, now)
		if err != nil || d.Skip != c.skip {
			t.Errorf("SMS %s after STOP: %+v %v, want skip %v", c.payload, d, err, c.skip)
		}
	}
	for _, bad := range []struct {
		body string
		code int
	}{{`{"not":"an array"}`, 400}, {`[]`, 422}} {
		if rec := doc.Call(t, r, "POST", path, bad.body); rec.Code != bad.code {
			t.Errorf("%s: %d %s, want %d", bad.body, rec.Code, rec.Body, bad.code)
		}
	}
	if rec := doc.Call(t, r, "POST", "/api/preferences/sms-inbound?businessUnitId=bu-2", batch); rec.Code != 404 {
		t.Errorf("out of scope: %d", rec.Code)
	}
}

// One-click unsubscribe (RFC 8058): GET shows the form and changes nothing; the POST of
// List-Unsubscribe=One-Click opts out what the token names, idempotently; a token that is
// not ours, or a tampered one, is 404 and writes nothing.
func TestOneClickUnsubscribe(t *testing.T) {
	t.Parallel()
	r, st, svc := newEnv(t)
	ctx := context.Background()
	job := store.NotificationJob{BusinessUnitID: "bu-1", Channel: "email", Recipient: "Linh@example.test", Template: "points-earned", PayloadJSON: `{"category":"loyalty"}`}
	d, err := svc.Check(ctx, job, t0)
	if err != nil || !strings.HasPrefix(d.ListUnsubscribe, "https://automation.example.test/api/unsubscribe?token=") {
		t.Fatalf("a marketing e-mail's decision: %+v %v", d, err)
	}
	if d, _ := svc.Check(ctx, store.NotificationJob{BusinessUnitID: "bu-1", Channel: "email", Recipient: "a@example.test", Template: "password-expiry", PayloadJSON: "{}"}, t0); d.ListUnsubscribe != "" {
		t.Fatalf("a transactional e-mail carries a link: %+v", d)
	}
	u, _ := url.Parse(d.ListUnsubscribe)
	path := u.RequestURI()
	serve := func(method, path, body string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(method, path, strings.NewReader(body))
		if body != "" {
			req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		}
		rec := httptest.NewRecorder()
		r.ServeHTTP(rec, req)
		return rec
	}
	if rec := serve("GET", path, ""); rec.Code != 200 || !strings.Contains(rec.Body.String(), `name="List-Unsubscribe" value="One-Click"`) {
		t.Fatalf("GET: %d %s", rec.Code, rec.Body)
	}
	if l, _ := st.PreferenceList(ctx, "bu-1", "linh@example.test"); len(l) != 0 {
		t.Fatalf("a GET wrote %+v", l)
	}
	if rec := serve("POST", path, "something=else"); rec.Code != 422 {
		t.Fatalf("POST without the one-click body: %d %s", rec.Code, rec.Body)
	}
	tampered := strings.Replace(path, "token=", "token=x", 1)
	for _, p := range []string{tampered, "/api/unsubscribe", "/api/unsubscribe?token=abc.def", path + "&x=1"} {
		if rec := serve("POST", p, "List-Unsubscribe=One-Click"); rec.Code != 404 {
			t.Errorf("POST %s: %d, want 404", p, rec.Code)
		}
	}
	if l, _ := st.PreferenceList(ctx, "bu-1", "linh@example.test"); len(l) != 0 {
		t.Fatalf("a refused POST wrote %+v", l)
	}
	for i := 0; i < 2; i++ { // idempotent
		if rec := serve("POST", path, "List-Unsubscribe=One-Click"); rec.Code != 200 {
			t.Fatalf("POST %d: %d %s", i, rec.Code, rec.Body)
		}
	}
	l, _ := st.PreferenceList(ctx, "bu-1", "linh@example.test")
	if len(l) != 1 || l[0].Category != "loyalty" || l[0].OptedIn || l[0].Source != "list-unsubscribe" || l[0].Version != 1 {
		t.Fatalf("after the one-click POST: %+v", l)
	}
	if d, _ := svc.Check(ctx, job, t0); !d.Skip {
		t.Fatalf("the loyalty e-mail after unsubscribing: %+v", d)
	}
	if d, _ := svc.Check(ctx, store.NotificationJob{BusinessUnitID: "bu-1", Channel: "email", Recipient: "linh@example.test", Template: "x", PayloadJSON: `{"category":"marketing"}`}, t0); d.Skip {
		t.Fatalf("another marketing category after a loyalty unsubscribe: %+v", d)
	}
	_ = http.StatusOK
}

// The inbound webhook charges its delivery's events (all of them, the handshake's too) to
// Deps.Charge once decoded and bounded, before anything is written: a refusal answers its
// error and opts nobody out.
func TestInboundChargesEveryEventBeforeWriting(t *testing.T) {
	t.Parallel()
	st := sqlitetest.Open(t)
	clock := automation.NewManualClock(t0)
	scope := automation.ParseScope("bu-1")
	var charged []int
	refuse := false
	r := funchost.NewRouter(nil)
	preferenceapi.Register(r, httpapi.New(httpapi.Options{BusinessUnits: &scope, Clock: clock}), preferenceapi.Deps{
		Service: &preference.Service{Store: st, Clock: clock},
		Charge: func(_ context.Context, n int) error {
			charged = append(charged, n)
			if refuse {
				return httpapi.TooMany(3*time.Second, "quota used up")
			}
			return nil
		}})
	doc := openapitest.LoadFile(t, "openapi.yaml")
	const path = "/api/preferences/sms-inbound?businessUnitId=bu-1"
	two := "[" + stopEvent("+61412345678", "STOP") + "," + stopEvent("+61412345679", "hello") + "]"
	if rec := doc.Call(t, r, "POST", path, two); rec.Code != 200 || fmt.Sprint(charged) != "[2]" {
		t.Fatalf("a delivery of 2: %d %s, charged %v", rec.Code, rec.Body, charged)
	}
	if rec := doc.Call(t, r, "POST", path, `[]`); rec.Code != 422 || fmt.Sprint(charged) != "[2]" {
		t.Fatalf("an empty delivery: %d, charged %v (nothing to charge)", rec.Code, charged)
	}
	refuse = true
	rec := doc.Call(t, r, "POST", path, "["+stopEvent("+61412345670", "STOP")+"]")
	if rec.Code != 429 || rec.Header.Get("Retry-After") != "3" {
		t.Fatalf("a refused delivery: %d %v %s", rec.Code, rec.Header, rec.Body)
	}
	if l, _ := st.PreferenceList(context.Background(), "bu-1", "+61412345670"); len(l) != 0 {
		t.Fatalf("a refused delivery wrote %+v", l)
	}
}
