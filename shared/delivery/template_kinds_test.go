package delivery_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// TestTemplateKindsAreValidatedNamingTheMember: each kind's parts and members, and each
// refusal naming the member (docs/channels.md#template-kinds).
func TestTemplateKindsAreValidatedNamingTheMember(t *testing.T) {
	t.Parallel()
	base := func(kind string) store.NotificationTemplate {
		return store.NotificationTemplate{Key: "k", Kind: kind, CreatedBy: "ops"}
	}
	with := func(t store.NotificationTemplate, f func(*store.NotificationTemplate)) store.NotificationTemplate {
		f(&t)
		return t
	}
	ok := []store.NotificationTemplate{
		with(base(""), func(t *store.NotificationTemplate) { t.Text = "hi" }),
		with(base("message"), func(t *store.NotificationTemplate) { t.HTML = "<p>hi</p>" }),
		with(base("push"), func(t *store.NotificationTemplate) { t.Subject = "{{.points}} points" }),
		with(base("push"), func(t *store.NotificationTemplate) {
			t.Text = "body"
			t.Extra = `{"data":{"screen":"points","points":"{{.points}}","a.b-c_d":"x"}}`
		}),
		with(base("sms"), func(t *store.NotificationTemplate) { t.Text = "Mã OTP {{.code}}" }),
		with(base("whatsapp"), func(t *store.NotificationTemplate) {
			t.Extra = `{"name":"points_earned","language":"vi","parameters":["{{.name}}","{{.points}}"]}`
		}),
		with(base("whatsapp"), func(t *store.NotificationTemplate) { t.Extra = `{"name":"hello_world","language":"en_US"}` }),
	}
	for _, tp := range ok {
		if _, err := delivery.Compile(tp); err != nil {
			t.Errorf("%s %+v: %v", tp.Kind, tp, err)
		}
	}
	bad := []struct {
		tpl   store.NotificationTemplate
		field string
	}{
		{with(base("fax"), func(t *store.NotificationTemplate) { t.Text = "x" }), "kind"},
		{with(base("message"), func(t *store.NotificationTemplate) { t.Text = "x"; t.Extra = `{"data":{}}` }), "kind"},
		{base("push"), "template"},
		{with(base("push"), func(t *store.NotificationTemplate) { t.Text = "x"; t.HTML = "<p>" }), "html"},
		{with(base("push"), func(t *store.NotificationTemplate) { t.Text = "x"; t.Extra = `{"data":{"gcm.notification.x":"1"}}` }), "data.gcm.notification.x"},
		{with(base("push"), func(t *store.NotificationTemplate) { t.Text = "x"; t.Extra = `{"data":{"deliveryKey":"1"}}` }), "data.deliveryKey"},
		{with(base("push"), func(t *store.NotificationTemplate) { t.Text = "x"; t.Extra = `{"data":{"From":"1"}}` }), "data.From"},
		{with(base("push"), func(t *store.NotificationTemplate) { t.Text = "x"; t.Extra = `{"data":{"a b":"1"}}` }), "data.a b"},
		{with(base("push"), func(t *store.NotificationTemplate) { t.Text = "x"; t.Extra = `{"data":{"s":"{{.broken"}}` }), "data.s"},
		{with(base("push"), func(t *store.NotificationTemplate) { t.Text = "x"; t.Extra = `{"data":{"s":1}}` }), "data"},
		{with(base("push"), func(t *store.NotificationTemplate) { t.Text = "x"; t.Extra = `{"data":{},"extra":1}` }), "data"},
		{with(base("sms"), func(t *store.NotificationTemplate) {}), "text"},
		{with(base("sms"), func(t *store.NotificationTemplate) { t.Text = "x"; t.Subject = "s" }), "subject"},
		{with(base("sms"), func(t *store.NotificationTemplate) { t.Text = "x"; t.HTML = "<p>" }), "html"},
		{base("whatsapp"), "whatsApp"},
		{with(base("whatsapp"), func(t *store.NotificationTemplate) { t.Extra = `{"name":"Points","language":"vi"}` }), "whatsApp.name"},
		{with(base("whatsapp"), func(t *store.NotificationTemplate) { t.Extra = `{"name":"points","language":"vietnamese"}` }), "whatsApp.language"},
		{with(base("whatsapp"), func(t *store.NotificationTemplate) {
			t.Extra = `{"name":"points","language":"vi","parameters":["a"," "]}`
		}), "whatsApp.parameters[1]"},
		{with(base("whatsapp"), func(t *store.NotificationTemplate) {
			t.Extra = `{"name":"points","language":"vi","parameters":["a","{{range 5}}x{{end}}"]}`
		}), "whatsApp.parameters[1]"},
		{with(base("whatsapp"), func(t *store.NotificationTemplate) {
			t.Extra = `{"name":"points","language":"vi"}`
			t.Text = "free text"
		}), "text"},
		{with(base("whatsapp"), func(t *store.NotificationTemplate) {
			t.Extra = `{"name":"points","language":"vi","parameters":[` + strings.Repeat(`"a",`, 20) + `"a"]}`
		}), "whatsApp.parameters"},
		{with(base("push"), func(t *store.NotificationTemplate) {
			t.Text = "x"
			t.Extra = `{"data":{"big":"` + strings.Repeat("é", 4001) + `"}}`
		}), "template"},
	}
	for _, c := range bad {
		_, err := delivery.Compile(c.tpl)
		if err == nil {
			t.Errorf("%s %q: accepted, want an error naming %q", c.tpl.Kind, c.tpl.Extra, c.field)
			continue
		}
		if !hasField(err, c.field) {
			t.Errorf("%s %q: %v, want an error naming %q", c.tpl.Kind, c.tpl.Extra, err, c.field)
		}
	}
}

// hasField reports whether one of the joined errors is an automation.Error naming field.
func hasField(err error, field string) bool {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	for _, e := range errs {
		var ae *automation.Error
		if errors.As(e, &ae) && ae.Field == field {
			return true
		}
	}
	return false
}

// TestPushAndWhatsAppKindsRenderTheirMembers: a push template's data and a WhatsApp
// template's parameters render with the delivery's data, and reach the channel in Content.
func TestPushAndWhatsAppKindsRenderTheirMembers(t *testing.T) {
	t.Parallel()
	push, wa := &provider{}, &provider{}
	e := newEnv(t, map[string]delivery.Channel{
		"push":     &testChannel{p: push, traits: delivery.Traits{NeedsContent: true, TemplateKinds: []string{delivery.KindPush, delivery.KindMessage}}},
		"whatsapp": &testChannel{p: wa, traits: delivery.Traits{NeedsContent: true, TemplateKinds: []string{delivery.KindWhatsApp}}},
	})
	ctx := context.Background()
	if _, err := e.tpl.Save(ctx, store.NotificationTemplate{Key: "reminder", BusinessUnitID: "bu-1", Kind: delivery.KindPush, Subject: "{{.settingName}}",
		Text: "Due {{.targetDate}}", Extra: `{"data":{"screen":"reminders","date":"{{.targetDate}}"}}`, CreatedBy: "ops"}, nil); err != nil {
		t.Fatal(err)
	}
	e.queue(t, map[string]any{"settingName": "Police check", "targetDate": "2026-10-31"}, "push", "cust-1@app")
	e.pump(t)
	if push.deliveries() != 1 {
		t.Fatalf("push deliveries %d", push.deliveries())
	}
	c := push.got[0].Content
	if c.Kind != delivery.KindPush || c.Subject != "Police check" || c.Text != "Due 2026-10-31" || c.Data["screen"] != "reminders" || c.Data["date"] != "2026-10-31" {
		t.Fatalf("push content %+v", c)
	}
	// The same key as a WhatsApp template (another unit's): name, language, values in order.
	if _, err := e.tpl.Save(ctx, store.NotificationTemplate{Key: "reminder", Kind: delivery.KindWhatsApp,
		Extra: `{"name":"police_check_due","language":"en_US","parameters":["{{.settingName}}","{{.targetDate}}"]}`, CreatedBy: "ops"}, nil); err != nil {
		t.Fatal(err)
	}
	cp, err := e.tpl.Get(ctx, "reminder", "bu-2")
	if err != nil {
		t.Fatal(err)
	}
	got, err := cp.Render(map[string]any{"settingName": "Police check", "targetDate": "2026-10-31"})
	if err != nil || got.WhatsApp == nil || got.WhatsApp.Name != "police_check_due" || got.WhatsApp.Language != "en_US" ||
		strings.Join(got.WhatsApp.Values, "|") != "Police check|2026-10-31" {
		t.Fatalf("whatsapp content %+v %v", got.WhatsApp, err)
	}
	// A parameter whose field is missing names it.
	_, err = cp.Render(map[string]any{"settingName": "Police check"})
	var re *delivery.RenderError
	if !errors.As(err, &re) || re.Part != "whatsApp.parameters[1]" || re.Field != "targetDate" {
		t.Fatalf("missing field in a parameter: %v", err)
	}
}

// TestTemplateOfAnotherKindFailsBeforeSending: a delivery whose template is of a kind the
// channel does not send fails permanently, naming both, and reaches no provider.
func TestTemplateOfAnotherKindFailsBeforeSending(t *testing.T) {
	t.Parallel()
	wa, mail := &provider{}, &provider{}
	e := newEnv(t, map[string]delivery.Channel{
		"whatsapp": &testChannel{p: wa, traits: delivery.Traits{NeedsContent: true, TemplateKinds: []string{delivery.KindWhatsApp}}},
		"email":    contentChannel(mail),
	})
	ctx := context.Background()
	if _, err := e.tpl.Save(ctx, store.NotificationTemplate{Key: "reminder", Kind: delivery.KindSMS, Text: "Due {{.targetDate}}", CreatedBy: "ops"}, nil); err != nil {
		t.Fatal(err)
	}
	keys := e.queue(t, map[string]any{"targetDate": "2026-10-31"}, "whatsapp", "wa@example.test", "email", "a@example.test")
	e.pump(t)
	if wa.deliveries() != 0 || mail.deliveries() != 0 {
		t.Fatalf("sent: whatsapp %d, email %d", wa.deliveries(), mail.deliveries())
	}
	for _, k := range keys {
		j := e.job(t, k)
		if j.Status != store.NotificationFailed || j.IsOnSupportHold || !strings.Contains(j.LastError, "is a sms template") {
			t.Fatalf("job %+v: want Failed naming the kind", j)
		}
	}
}

// TestDeletedTemplateRendersTheDefaultOrHolds: after a unit's template is deleted, a queued
// delivery renders the default; with no default it waits on support hold; the delivery
// that rendered the deleted version keeps its version number.
func TestDeletedTemplateRendersTheDefaultOrHolds(t *testing.T) {
	t.Parallel()
	p := &provider{}
	e := newEnv(t, map[string]delivery.Channel{"email": contentChannel(p)})
	ctx := context.Background()
	save := func(bu, subject string) {
		t.Helper()
		if _, err := e.tpl.Save(ctx, store.NotificationTemplate{Key: "reminder", BusinessUnitID: bu, Subject: subject, Text: "x", CreatedBy: "ops"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	save("bu-1", "unit's own")
	first := e.queue(t, map[string]any{}, "email", "a@example.test")[0]
	e.pump(t)
	one := int64(1)
	if _, err := e.tpl.Delete(ctx, "reminder", "bu-1", "", &one); !hasField(err, "deletedBy") {
		t.Fatalf("delete without an operator: %v", err)
	}
	zero := int64(0)
	if _, err := e.tpl.Delete(ctx, "reminder", "bu-1", "eve", &zero); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("stale delete: %v", err)
	}
	tomb, err := e.tpl.Delete(ctx, "reminder", "bu-1", "eve", &one)
	if err != nil || tomb.Version != 2 || !tomb.Deleted || tomb.CreatedBy != "eve" {
		t.Fatalf("delete: %+v %v", tomb, err)
	}
	held := e.queue(t, map[string]any{}, "email", "b@example.test")[0]
	e.pump(t)
	if j := e.job(t, held); j.Status != store.NotificationFailed || !j.IsOnSupportHold {
		t.Fatalf("no default: %+v, want held", j)
	}
	save("", "the default")
	later := e.queue(t, map[string]any{}, "email", "c@example.test")[0]
	e.pump(t)
	if j := e.job(t, later); j.Status != store.NotificationSent || j.TemplateVersion != 1 {
		t.Fatalf("after the delete: %+v, want Sent with the default's v1", j)
	}
	if p.got[len(p.got)-1].Content.Subject != "the default" {
		t.Fatalf("rendered %+v", p.got[len(p.got)-1].Content)
	}
	if j := e.job(t, first); j.Status != store.NotificationSent || j.TemplateVersion != 1 {
		t.Fatalf("the delivery sent before the delete: %+v", j)
	}
}
