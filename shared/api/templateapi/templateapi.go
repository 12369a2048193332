package templateapi

import (
	"context"
	_ "embed" // openapi.yaml
	"encoding/json"
	"errors"
	"net/http"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channel"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of these routes (YAML); a test checks it against
// the router in both directions and validates real calls with it.
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

// Route patterns (the TemplatesApi function's route templates/{*path}).
const (
	PathTemplate = "/api/templates/{key}"
	PathPreview  = "/api/templates/{key}/preview"
	PathTestSend = "/api/templates/{key}/test-send"
)

// Deps are what the routes use.
type Deps struct {
	Templates *delivery.Templates
	Store     delivery.TemplateStore
	// Units, when set, is where a business unit is looked up (404 when not stored).
	Units businessunit.Reader
	// TestSender queues test sends (nil: the route answers 503).
	TestSender *delivery.TestSender
}

// Register adds the template routes to reg.
func Register(reg httpapi.Registrar, api *httpapi.API, d Deps) {
	httpapi.Mount(reg, api, Routes(d)...)
}

// Routes declares the template routes over d (Deps{}: the declarations only, for checks).
// Each reads ?businessUnitId= (required, in scope, stored: unitStored).
func Routes(d Deps) []httpapi.Route {
	h := handlers{d: d}
	return []httpapi.Route{
		// The ETag names the unit's own version only (set in get): the default is not the
		// unit's to change with If-Match.
		httpapi.Endpoint[struct{}, Template]{Method: "GET", Path: PathTemplate, Unit: httpapi.UnitQuery, UnitCheck: h.unitStored, Call: h.get},
		// If-Match is optional: without it the unit must have no version yet (412 otherwise).
		httpapi.Endpoint[Body, Template]{Method: "PUT", Path: PathTemplate, Unit: httpapi.UnitQuery, UnitCheck: h.unitStored,
			IfMatch: httpapi.IfMatchOptional, Operator: "template change", Body: httpapi.BodyRequired, Also: []int{http.StatusCreated},
			ETag: func(t Template) int64 { return t.Version }, Call: h.put},
		// DELETE stores a tombstone version (the audit: who and when); the unit renders the
		// default again. If-Match is the unit's live version.
		httpapi.Endpoint[struct{}, struct{}]{Method: "DELETE", Path: PathTemplate, Unit: httpapi.UnitQuery, UnitCheck: h.unitStored,
			IfMatch: httpapi.IfMatchRequired, Operator: "template delete", Status: http.StatusNoContent, Call: h.delete},
		// A test send is a real delivery, marked as a test (docs/channels.md#test-send).
		httpapi.Endpoint[TestSendRequest, delivery.TestSendResult]{Method: "POST", Path: PathTestSend, Unit: httpapi.UnitQuery, UnitCheck: h.unitStored,
			Operator: "test send", Body: httpapi.BodyRequired, Status: http.StatusAccepted, Call: h.testSend},
		httpapi.Endpoint[PreviewRequest, Preview]{Method: "POST", Path: PathPreview, Unit: httpapi.UnitQuery, UnitCheck: h.unitStored,
			Query: []string{"channel"}, Body: httpapi.BodyRequired, Call: h.preview},
	}
}

type handlers struct{ d Deps }

// Template is a stored version as the API shows it. Kind is "message", "push", "sms" or
// "whatsapp" (docs/channels.md#template-kinds); Data only for push, WhatsApp only for
// whatsapp.
type Template struct {
	Key            string `json:"key"`
	BusinessUnitID string `json:"businessUnitId"` // "" for the platform default
	Override       bool   `json:"override"`       // the unit's own version
	Version        int64  `json:"version"`
	Content
	WhatsApp  *delivery.WhatsAppExtra `json:"whatsApp,omitempty"`
	CreatedBy string                  `json:"createdBy"`
	CreatedOn time.Time               `json:"createdOn"`
}

// Content is a template's members that a stored version, a PUT body and a preview share,
// in this order: kind ("message", "push", "sms" or "whatsapp"), subject, text, html, and
// data (a push template's data members; absent for the other kinds). Each type that embeds
// it adds its own whatsApp member (the provider template stored, or the one rendered).
type Content struct {
	Kind    string            `json:"kind"`
	Subject string            `json:"subject"`
	Text    string            `json:"text"`
	HTML    string            `json:"html"`
	Data    map[string]string `json:"data,omitempty"`
}

func view(t store.NotificationTemplate, bu string) Template {
	v := Template{Key: t.Key, BusinessUnitID: t.BusinessUnitID, Override: t.BusinessUnitID == bu && bu != "", Version: t.Version,
		Content: Content{Kind: t.Kind, Subject: t.Subject, Text: t.Text, HTML: t.HTML}, CreatedBy: t.CreatedBy, CreatedOn: t.CreatedOn}
	if v.Kind == "" {
		v.Kind = delivery.KindMessage
	}
	// Extra was checked by Compile at save: a stored one decodes.
	switch v.Kind {
	case delivery.KindPush:
		var x delivery.PushExtra
		if t.Extra != "" && json.Unmarshal([]byte(t.Extra), &x) == nil {
			v.Data = x.Data
		}
	case delivery.KindWhatsApp:
		var x delivery.WhatsAppExtra
		if json.Unmarshal([]byte(t.Extra), &x) == nil {
			v.WhatsApp = &x
		}
	}
	return v
}

// Body is the PUT body. Kind "" is "message". Data (push) and WhatsApp (whatsapp) belong to
// their kind only: given with another kind they are refused (422 naming them).
type Body struct {
	Content
	WhatsApp *delivery.WhatsAppExtra `json:"whatsApp"`
}

// extra returns the stored Extra of b's kind.
func (b Body) extra() (string, error) {
	kind := b.Kind
	if kind == "" {
		kind = delivery.KindMessage
	}
	if b.Data != nil && kind != delivery.KindPush {
		return "", automation.Invalid("data", "only a push template has data members (kind is %q)", kind)
	}
	if b.WhatsApp != nil && kind != delivery.KindWhatsApp {
		return "", automation.Invalid("whatsApp", "only a whatsapp template names a provider template (kind is %q)", kind)
	}
	var x any
	switch {
	case kind == delivery.KindPush && b.Data != nil:
		x = delivery.PushExtra{Data: b.Data}
	case kind == delivery.KindWhatsApp && b.WhatsApp != nil:
		x = b.WhatsApp
	default:
		return "", nil
	}
	raw, err := json.Marshal(x)
	return string(raw), err
}

// TestSendRequest is the test-send body: one recipient on one channel, and the sample
// payload the template renders with.
type TestSendRequest struct {
	Channel   string          `json:"channel"`
	Recipient string          `json:"recipient"`
	Payload   json.RawMessage `json:"payload"`
}

// testSend queues one test delivery: 202 with its delivery key.
func (h handlers) testSend(ctx context.Context, in *httpapi.In[TestSendRequest]) (delivery.TestSendResult, error) {
	if h.d.TestSender == nil {
		return delivery.TestSendResult{}, automation.Errorf(automation.CodeUnavailable, "test sends are not configured here")
	}
	b := in.Body
	return h.d.TestSender.Send(ctx, delivery.TestSendRequest{BusinessUnitID: in.Unit, Template: in.Path("key"), Channel: b.Channel,
		Recipient: b.Recipient, Payload: b.Payload, Operator: in.Operator})
}

// PreviewRequest is the preview body.
type PreviewRequest struct {
	Payload json.RawMessage `json:"payload"`
}

// Preview is the preview answer. SMS is the rendered text's length as an SMS (encoding,
// units, segments), with ?channel=sms or for an sms template; Data a push template's
// rendered data; WhatsApp a whatsapp template's name, language and rendered values.
type Preview struct {
	Content
	WhatsApp *delivery.WhatsAppTemplate `json:"whatsApp,omitempty"`
	Version  int64                      `json:"version"`
	SMS      *channel.SMSLength         `json:"sms,omitempty"`
}

// unitStored answers 404 for a business unit that is not stored (as for one outside the
// caller's scope) when Deps.Units is set.
func (h handlers) unitStored(ctx context.Context, bu string) error {
	return httpapi.UnitStored(ctx, h.d.Units, bu)
}

// get answers the unit's version, else the default; an ETag only for the unit's own.
func (h handlers) get(ctx context.Context, in *httpapi.In[struct{}]) (Template, error) {
	bu, key := in.Unit, in.Path("key")
	t, err := h.d.Store.NotificationTemplateGet(ctx, key, bu)
	if errors.Is(err, store.ErrNotFound) {
		return Template{}, automation.Errorf(automation.CodeNotFound, "template %q is stored neither for %s nor as the default", key, bu)
	}
	if err != nil {
		return Template{}, err
	}
	v := view(t, bu)
	if v.Override {
		in.Header.Set("ETag", httpapi.ETag(t.Version))
	}
	return v, nil
}

// put saves a new version of the unit's template: 201 for its first live one (also the
// first after a delete), 200 after.
func (h handlers) put(ctx context.Context, in *httpapi.In[Body]) (Template, error) {
	b, given := in.Body, in.VersionGiven
	expected := int64(0) // no If-Match: the unit has no version yet
	if given {
		expected = in.Version
	}
	extra, err := b.extra()
	if err != nil {
		return Template{}, err
	}
	t, err := h.d.Templates.Save(ctx, store.NotificationTemplate{Key: in.Path("key"), BusinessUnitID: in.Unit, Kind: b.Kind,
		Subject: b.Subject, Text: b.Text, HTML: b.HTML, Extra: extra, CreatedBy: in.Operator}, &expected)
	if errors.Is(err, store.ErrConflict) {
		if given {
			return Template{}, &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match", Message: "the unit's template has a newer version: read it again"}
		}
		return Template{}, &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match", Message: "the unit has a version of this template: send If-Match with its ETag"}
	}
	if err != nil {
		return Template{}, err
	}
	if expected == 0 { // the unit's first live version (after a delete too)
		in.Status = http.StatusCreated
	}
	return view(t, in.Unit), nil
}

// delete stores a tombstone as the unit's next version: 404 when the unit has no live
// version of its own (the default is not the unit's to delete), 412 when If-Match is not
// the live version.
func (h handlers) delete(ctx context.Context, in *httpapi.In[struct{}]) (struct{}, error) {
	key := in.Path("key")
	_, err := h.d.Templates.Delete(ctx, key, in.Unit, in.Operator, &in.Version)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return struct{}{}, automation.Errorf(automation.CodeNotFound, "template %q has no version of %s's own to delete", key, in.Unit)
	case errors.Is(err, store.ErrConflict):
		return struct{}{}, &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match", Message: "the unit's template has another live version: read it again"}
	}
	return struct{}{}, err
}

// preview renders the template the unit would send with the payload; ?channel=sms adds
// the SMS measure.
func (h handlers) preview(ctx context.Context, in *httpapi.In[PreviewRequest]) (Preview, error) {
	bu, req := in.Unit, in.Body
	ch := in.Query.String("channel")
	if ch != "" && ch != channel.SMSChannelName {
		return Preview{}, automation.Invalid("channel", "only sms adds a measure to the preview, got %q", ch)
	}
	key := in.Path("key")
	c, err := h.d.Templates.Get(ctx, key, bu)
	if errors.Is(err, store.ErrNotFound) {
		return Preview{}, automation.Errorf(automation.CodeNotFound, "template %q is stored neither for %s nor as the default", key, bu)
	}
	if err != nil {
		return Preview{}, err
	}
	payload := string(req.Payload)
	if payload == "" {
		payload = "{}"
	}
	data, err := delivery.RenderData(delivery.Message{DeliveryKey: "preview", BusinessUnitID: bu, Channel: "preview", Recipient: "preview",
		Template: key, PayloadJSON: payload})
	if err != nil {
		return Preview{}, automation.Invalid("payload", "must be a JSON object")
	}
	content, err := c.Render(data)
	var re *delivery.RenderError
	if errors.As(err, &re) {
		if re.Field != "" {
			return Preview{}, automation.Invalid("payload."+re.Field, "template %q v%d (%s) needs this field; the payload has none", key, re.Version, re.Part)
		}
		return Preview{}, automation.Invalid("payload", "template %q v%d (%s) does not render: %v", key, re.Version, re.Part, re.Err)
	}
	if err != nil {
		return Preview{}, err
	}
	out := Preview{Content: Content{Kind: c.Kind, Subject: content.Subject, Text: content.Text, HTML: content.HTML, Data: content.Data},
		WhatsApp: content.WhatsApp, Version: content.TemplateVersion}
	if ch == channel.SMSChannelName || c.Kind == delivery.KindSMS {
		l := channel.SMSSegments(content.Text)
		out.SMS = &l
	}
	return out, nil
}
