package templateapi_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/templateapi"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channel"
	"github.com/automation-platform/automation/shared/delivery/fcmsim"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
	"github.com/automation-platform/automation/sql/sqlite/sqlitetest"
)

var t0 = time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC)

// newEnv registers the routes for a caller of bu-1 over a fresh store and a manual clock at
// t0; sender (nil: no test sends) builds the test sender over the same store, templates and
// clock.
func newEnv(t *testing.T, sender func(st store.Store, tpl *delivery.Templates, clock *automation.ManualClock) *delivery.TestSender) (*funchost.Router, store.Store, *delivery.Templates) {
	t.Helper()
	st := sqlitetest.Open(t)
	scope := automation.ParseScope("bu-1")
	clock := automation.NewManualClock(t0)
	api := httpapi.New(httpapi.Options{BusinessUnits: &scope, Idempotency: st, Clock: clock})
	r := funchost.NewRouter(nil)
	tpl := &delivery.Templates{Store: st, Clock: clock}
	deps := templateapi.Deps{Templates: tpl, Store: st}
	if sender != nil {
		deps.TestSender = sender(st, tpl, clock)
	}
	templateapi.Register(r, api, deps)
	return r, st, tpl
}

func TestOpenAPIDocumentMatchesRouter(t *testing.T) {
	t.Parallel()
	doc := openapitest.LoadFile(t, "openapi.yaml")
	apptest.CheckRegistered(t, doc, func(r *funchost.Router, api *httpapi.API) { templateapi.Register(r, api, templateapi.Deps{}) }, "/api/templates/{key}/preview", "post", "put")
}

// TestTemplateAPIMatchesOpenAPI: the default shows through; the unit's first version is
// created without If-Match and the next needs it; preview renders and names a missing
// field; out of scope nothing is written. Every exchange is validated against openapi.yaml.
func TestTemplateAPIMatchesOpenAPI(t *testing.T) {
	t.Parallel()
	r, st, tpl := newEnv(t, nil)
	doc := openapitest.LoadFile(t, "openapi.yaml")
	call := openapitest.Client{Doc: doc, Handler: r}.Expecting(t)
	const path = "/api/templates/police-check-expiry?businessUnitId=bu-1"
	call(404, "GET", path, "")
	if _, err := tpl.Save(context.Background(), store.NotificationTemplate{Key: "police-check-expiry", Subject: "Default {{.source.staffName}}",
		Text: "Expires {{.targetDate}}", CreatedBy: "seed"}, nil); err != nil {
		t.Fatal(err)
	}
	var got templateapi.Template
	rec := call(200, "GET", path, "")
	if err := json.Unmarshal(rec.Body, &got); err != nil || got.Override || got.BusinessUnitID != "" || rec.Header.Get("ETag") != "" {
		t.Fatalf("default: %+v %v etag %q", got, err, rec.Header.Get("ETag"))
	}
	op := "X-Automation-Operator: jane"
	body := `{"subject":"Hi {{.source.staffName}}","text":"Your check expires on {{.targetDate}}."}`
	call(400, "PUT", path, body) // no operator: not audited, refused
	rec = call(201, "PUT", path, body, op)
	if err := json.Unmarshal(rec.Body, &got); err != nil || !got.Override || got.Version != 1 || got.CreatedBy != "jane" || rec.Header.Get("ETag") != `"1"` {
		t.Fatalf("created: %+v %v", got, err)
	}
	call(412, "PUT", path, body, op)                  // a version exists: If-Match needed
	call(412, "PUT", path, body, op, `If-Match: "7"`) // stale
	call(200, "PUT", path, `{"subject":"Hello {{.source.staffName}}","text":"Expires {{.targetDate}}."}`, op, `If-Match: "1"`)
	rec = call(422, "PUT", path, `{"subject":"{{.broken","text":"x"}`, op, `If-Match: "2"`)
	if !strings.Contains(string(rec.Body), "subject") {
		t.Errorf("a subject that does not parse: %s", rec.Body)
	}
	rec = call(200, "GET", path, "")
	if err := json.Unmarshal(rec.Body, &got); err != nil || got.Version != 2 || !strings.HasPrefix(got.Subject, "Hello") || rec.Header.Get("ETag") != `"2"` {
		t.Fatalf("latest: %+v", got)
	}
	// Preview: rendered, and a missing field named.
	var pv templateapi.Preview
	rec = call(200, "POST", "/api/templates/police-check-expiry/preview?businessUnitId=bu-1",
		`{"payload":{"targetDate":"2026-10-31","source":{"staffName":"Amelia"}}}`)
	if err := json.Unmarshal(rec.Body, &pv); err != nil || pv.Subject != "Hello Amelia" || pv.Text != "Expires 2026-10-31." || pv.Version != 2 {
		t.Fatalf("preview: %+v %v", pv, err)
	}
	rec = call(200, "POST", "/api/templates/police-check-expiry/preview?businessUnitId=bu-1&channel=sms",
		`{"payload":{"targetDate":"2026-10-31","source":{"staffName":"Amelia"}}}`)
	if err := json.Unmarshal(rec.Body, &pv); err != nil || pv.SMS == nil || pv.SMS.Encoding != "GSM-7" || pv.SMS.Segments != 1 || pv.SMS.Units != len("Expires 2026-10-31.") {
		t.Fatalf("sms preview: %+v %v", pv.SMS, err)
	}
	call(422, "POST", "/api/templates/police-check-expiry/preview?businessUnitId=bu-1&channel=fax", `{"payload":{}}`)
	rec = call(422, "POST", "/api/templates/police-check-expiry/preview?businessUnitId=bu-1", `{"payload":{"targetDate":"2026-10-31"}}`)
	if !strings.Contains(string(rec.Body), `"field":"payload.source.staffName"`) && !strings.Contains(string(rec.Body), `"field":"payload.source"`) {
		t.Errorf("the missing field is not named: %s", rec.Body)
	}
	call(404, "POST", "/api/templates/unknown/preview?businessUnitId=bu-1", `{"payload":{}}`)
	// Out of scope: 404, nothing written.
	call(404, "GET", "/api/templates/police-check-expiry?businessUnitId=bu-2", "")
	call(404, "PUT", "/api/templates/police-check-expiry?businessUnitId=bu-2", body, op)
	if t2, err := st.NotificationTemplateGet(context.Background(), "police-check-expiry", "bu-2"); err != nil || t2.BusinessUnitID != "" {
		t.Fatalf("bu-2 got a version: %+v %v", t2, err)
	}
}

// TestTemplateKindsAndDeleteMatchOpenAPI: push, sms and whatsapp templates are saved and
// previewed with their members; bad members are 422 naming them; DELETE needs If-Match and
// an operator, stores a tombstone (the default shows through again, the history and the
// version numbers go on), and a second DELETE is 404.
func TestTemplateKindsAndDeleteMatchOpenAPI(t *testing.T) {
	t.Parallel()
	r, st, tpl := newEnv(t, nil)
	doc := openapitest.LoadFile(t, "openapi.yaml")
	call := openapitest.Client{Doc: doc, Handler: r}.Expecting(t)
	op := "X-Automation-Operator: jane"
	// Push: title, body and data; the preview renders the data.
	call(201, "PUT", "/api/templates/points?businessUnitId=bu-1",
		`{"kind":"push","subject":"{{.points}} points","text":"Thanks {{.name}}","data":{"screen":"points","points":"{{.points}}"}}`, op)
	var pv templateapi.Preview
	rec := call(200, "POST", "/api/templates/points/preview?businessUnitId=bu-1", `{"payload":{"points":120,"name":"Linh"}}`)
	if err := json.Unmarshal(rec.Body, &pv); err != nil || pv.Kind != "push" || pv.Subject != "120 points" || pv.Data["points"] != "120" || pv.Data["screen"] != "points" {
		t.Fatalf("push preview: %+v %v", pv, err)
	}
	var got templateapi.Template
	if err := json.Unmarshal(call(200, "GET", "/api/templates/points?businessUnitId=bu-1", "").Body, &got); err != nil || got.Kind != "push" || got.Data["points"] != "{{.points}}" {
		t.Fatalf("push read back: %+v %v", got, err)
	}
	// SMS: the preview always measures it (Vietnamese is UCS-2).
	call(201, "PUT", "/api/templates/otp?businessUnitId=bu-1", `{"kind":"sms","text":"Mã OTP của bạn là {{.code}}"}`, op)
	rec = call(200, "POST", "/api/templates/otp/preview?businessUnitId=bu-1", `{"payload":{"code":"123456"}}`)
	if err := json.Unmarshal(rec.Body, &pv); err != nil || pv.SMS == nil || pv.SMS.Encoding != "UCS-2" || pv.SMS.Segments != 1 {
		t.Fatalf("sms preview: %+v %v", pv, err)
	}
	// WhatsApp: the provider template and its rendered values.
	call(201, "PUT", "/api/templates/wa-points?businessUnitId=bu-1",
		`{"kind":"whatsapp","whatsApp":{"name":"points_earned","language":"vi","parameters":["{{.name}}","{{.points}}"]}}`, op)
	rec = call(200, "POST", "/api/templates/wa-points/preview?businessUnitId=bu-1", `{"payload":{"points":120,"name":"Linh"}}`)
	if err := json.Unmarshal(rec.Body, &pv); err != nil || pv.WhatsApp == nil || pv.WhatsApp.Name != "points_earned" || strings.Join(pv.WhatsApp.Values, ",") != "Linh,120" {
		t.Fatalf("whatsapp preview: %+v %v", pv, err)
	}
	// Bad members: 422 naming each, nothing stored.
	for body, field := range map[string]string{
		`{"kind":"fax","text":"x"}`:                                                        `"field":"kind"`,
		`{"kind":"sms","text":"x","subject":"s"}`:                                          `"field":"subject"`,
		`{"kind":"sms","text":"x","data":{"a":"b"}}`:                                       `"field":"data"`,
		`{"text":"x","whatsApp":{"name":"a","language":"vi"}}`:                             `"field":"whatsApp"`,
		`{"kind":"push","text":"x","data":{"google.c.a":"1"}}`:                             `"field":"data.google.c.a"`,
		`{"kind":"whatsapp","whatsApp":{"name":"Points Earned","language":"vi"}}`:          `"field":"whatsApp.name"`,
		`{"kind":"whatsapp","whatsApp":{"name":"p","language":"vi","parameters":["{{x"]}}`: `"field":"whatsApp.parameters[0]"`,
		`{"kind":"whatsapp"}`:                                                              `"field":"whatsApp"`,
	} {
		rec := call(422, "PUT", "/api/templates/bad?businessUnitId=bu-1", body, op)
		if !strings.Contains(string(rec.Body), field) {
			t.Errorf("%s: %s, want %s", body, rec.Body, field)
		}
	}
	if _, err := st.NotificationTemplateGet(context.Background(), "bad", "bu-1"); err == nil {
		t.Fatal("a refused template was stored")
	}
	// DELETE.
	if _, err := tpl.Save(context.Background(), store.NotificationTemplate{Key: "points", Kind: "push", Text: "default body", CreatedBy: "seed"}, nil); err != nil {
		t.Fatal(err)
	}
	const path = "/api/templates/points?businessUnitId=bu-1"
	call(428, "DELETE", path, "", op)
	call(400, "DELETE", path, "", `If-Match: "1"`) // no operator: not audited, refused
	call(412, "DELETE", path, "", op, `If-Match: "2"`)
	call(404, "DELETE", "/api/templates/points?businessUnitId=bu-2", "", op, `If-Match: "1"`) // out of scope
	call(204, "DELETE", path, "", op, `If-Match: "1"`)
	rec = call(200, "GET", path, "")
	if err := json.Unmarshal(rec.Body, &got); err != nil || got.Override || got.Text != "default body" || rec.Header.Get("ETag") != "" {
		t.Fatalf("after the delete the default shows: %+v %v", got, err)
	}
	call(404, "DELETE", path, "", op, `If-Match: "1"`) // nothing of the unit's own left
	// Saved again without If-Match: version 3 (the tombstone was 2), 201.
	rec = call(201, "PUT", path, `{"kind":"push","text":"again"}`, op)
	if err := json.Unmarshal(rec.Body, &got); err != nil || got.Version != 3 || !got.Override {
		t.Fatalf("saved after the delete: %+v %v", got, err)
	}
}

// TestTestSendQueuesOneMarkedDelivery: a test send is checked like a delivery (channel,
// recipient, kind, rendering: 422 naming each, nothing queued) and queues one real delivery
// whose record is marked as a test; the dispatcher sends it through the channel.
func TestTestSendQueuesOneMarkedDelivery(t *testing.T) {
	t.Parallel()
	var sent []delivery.Message
	var channels map[string]delivery.Channel
	var clock automation.Clock
	r, st, tpl := newEnv(t, func(st store.Store, tpl *delivery.Templates, c *automation.ManualClock) *delivery.TestSender {
		clock = c
		// sms and push for their recipients' checks only (nothing here sends on them).
		sms, err := channel.NewSMS(channel.SMSConfig{ConnectionString: "endpoint=https://acs.test.invalid/;accesskey=" + base64.StdEncoding.EncodeToString([]byte("test-key")),
			From: "+15550100", Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		fcm, err := fcmsim.New(fcmsim.Config{})
		if err != nil {
			t.Fatal(err)
		}
		push, err := channel.NewFCM(channel.FCMConfig{CredentialsJSON: fcm.ServiceAccountJSON("http://fcm.test.invalid"), Endpoint: "http://fcm.test.invalid", Devices: st, Clock: clock})
		if err != nil {
			t.Fatal(err)
		}
		channels = map[string]delivery.Channel{
			"log":   &delivery.LogChannel{W: io.Discard},
			"email": &mailChannel{sent: &sent},
			"sms":   sms,
			"push":  push,
		}
		return &delivery.TestSender{Store: st, Templates: tpl, Channels: channels, Clock: clock}
	})
	doc := openapitest.LoadFile(t, "openapi.yaml")
	call := openapitest.Client{Doc: doc, Handler: r}.Expecting(t)
	op := "X-Automation-Operator: jane"
	const path = "/api/templates/welcome/test-send?businessUnitId=bu-1"
	ok := `{"channel":"email","recipient":"linh@example.test","payload":{"name":"Linh"}}`
	call(404, "POST", path, ok, op) // no template yet
	call(201, "PUT", "/api/templates/welcome?businessUnitId=bu-1", `{"subject":"Hi {{.name}}","text":"Welcome, {{.name}}."}`, op)
	call(400, "POST", path, ok) // no operator
	for body, want := range map[string][]string{
		`{"channel":"fax","recipient":"x@example.test"}`:                   {`"field":"channel"`},
		`{"channel":"email","recipient":"not-an-address"}`:                 {`"field":"recipient"`},
		`{"channel":"email","recipient":""}`:                               {`"field":"recipient"`},
		`{"channel":"email","recipient":"a@example.test","payload":{}}`:    {`"field":"payload.name"`},
		`{"channel":"email","recipient":"a@example.test","payload":[1,2]}`: {`"field":"payload"`},
		// Issue 38's bad input: an invalid phone number, an unknown country code.
		`{"channel":"sms","recipient":"0412 345 678","payload":{"name":"Linh"}}`:  {`"field":"recipient"`, "not E.164"},
		`{"channel":"sms","recipient":"+999123456789","payload":{"name":"Linh"}}`: {`"field":"recipient"`, "unknown country code"},
		`{"channel":"push","recipient":"cust 1","payload":{"name":"Linh"}}`:       {`"field":"recipient"`},
	} {
		rec := call(422, "POST", path, body, op)
		for _, w := range want {
			if !strings.Contains(string(rec.Body), w) {
				t.Errorf("%s: %s, want %s", body, rec.Body, w)
			}
		}
	}
	call(404, "POST", "/api/templates/welcome/test-send?businessUnitId=bu-2", ok, op) // out of scope
	if n, err := st.OutboxLagGet(context.Background(), []string{topology.NotificationDispatchQueue}); err != nil || len(n) != 0 && n[0].Unpublished != 0 {
		t.Fatalf("something was queued by a refused test send: %+v %v", n, err)
	}
	var res delivery.TestSendResult
	rec := call(202, "POST", path, ok, op)
	if err := json.Unmarshal(rec.Body, &res); err != nil || !res.Test || !strings.HasPrefix(res.SchedulerKey, delivery.TestSendKeyPrefix) || res.TemplateVersion != 1 {
		t.Fatalf("test send: %+v %v", res, err)
	}
	job, err := st.NotificationGetByKey(context.Background(), res.DeliveryKey)
	if err != nil || job.Status != store.NotificationQueued || job.Recipient != "linh@example.test" || job.Channel != "email" || !delivery.IsTestSend(job.SchedulerKey) {
		t.Fatalf("the delivery record: %+v %v", job, err)
	}
	// The dispatcher sends it like any delivery.
	disp := &delivery.Dispatcher{Store: st, Templates: tpl, Channels: channels, Clock: clock, Lease: time.Minute}
	body, _ := json.Marshal(delivery.DispatchMessage{DeliveryKey: res.DeliveryKey})
	if err := disp.Handle(context.Background(), bus.Message{ID: res.DeliveryKey, Body: body}); err != nil {
		t.Fatal(err)
	}
	if len(sent) != 1 || sent[0].Content == nil || sent[0].Content.Subject != "Hi Linh" {
		t.Fatalf("sent %+v", sent)
	}
	// A second test send is another delivery.
	var again delivery.TestSendResult
	if err := json.Unmarshal(call(202, "POST", path, ok, op).Body, &again); err != nil || again.DeliveryKey == res.DeliveryKey {
		t.Fatalf("second test send: %+v %v", again, err)
	}
	// A whatsapp-kind template cannot go out on email: 422 naming the channel.
	call(201, "PUT", "/api/templates/wa?businessUnitId=bu-1", `{"kind":"whatsapp","whatsApp":{"name":"hello","language":"vi"}}`, op)
	if rec := call(422, "POST", "/api/templates/wa/test-send?businessUnitId=bu-1", ok, op); !strings.Contains(string(rec.Body), `"field":"channel"`) {
		t.Errorf("kind refused: %s", rec.Body)
	}
}

// mailChannel is an e-mail-like channel: content needed, an address with @, every send kept.
type mailChannel struct{ sent *[]delivery.Message }

func (c *mailChannel) Traits() delivery.Traits { return delivery.Traits{NeedsContent: true} }
func (c *mailChannel) ValidateRecipient(addr string) error {
	if !strings.Contains(addr, "@") {
		return errors.New("not an address")
	}
	return nil
}
func (c *mailChannel) Send(_ context.Context, m delivery.Message) (string, error) {
	*c.sent = append(*c.sent, m)
	return "ref-1", nil
}
