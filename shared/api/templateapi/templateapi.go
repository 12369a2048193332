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
)

// Deps are what the routes use.
type Deps struct {
	Templates *delivery.Templates
	Store     delivery.TemplateStore
	// Units, when set, is where a business unit is looked up (404 when not stored).
	Units businessunit.Reader
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
		httpapi.Endpoint[PreviewRequest, Preview]{Method: "POST", Path: PathPreview, Unit: httpapi.UnitQuery, UnitCheck: h.unitStored,
			Query: []string{"channel"}, Body: httpapi.BodyRequired, Call: h.preview},
	}
}

type handlers struct{ d Deps }

// Template is a stored version as the API shows it.
type Template struct {
	Key            string    `json:"key"`
	BusinessUnitID string    `json:"businessUnitId"` // "" for the platform default
	Override       bool      `json:"override"`       // the unit's own version
	Version        int64     `json:"version"`
	Subject        string    `json:"subject"`
	Text           string    `json:"text"`
	HTML           string    `json:"html"`
	CreatedBy      string    `json:"createdBy"`
	CreatedOn      time.Time `json:"createdOn"`
}

func view(t store.NotificationTemplate, bu string) Template {
	return Template{Key: t.Key, BusinessUnitID: t.BusinessUnitID, Override: t.BusinessUnitID == bu && bu != "", Version: t.Version,
		Subject: t.Subject, Text: t.Text, HTML: t.HTML, CreatedBy: t.CreatedBy, CreatedOn: t.CreatedOn}
}

// Body is the PUT body.
type Body struct {
	Subject string `json:"subject"`
	Text    string `json:"text"`
	HTML    string `json:"html"`
}

// PreviewRequest is the preview body.
type PreviewRequest struct {
	Payload json.RawMessage `json:"payload"`
}

// Preview is the preview answer. SMS is the rendered text's length as an SMS (encoding,
// units, segments), with ?channel=sms.
type Preview struct {
	Subject string             `json:"subject"`
	Text    string             `json:"text"`
	HTML    string             `json:"html"`
	Version int64              `json:"version"`
	SMS     *channel.SMSLength `json:"sms,omitempty"`
}

// unitStored answers 404 for a business unit that is not stored (as for one outside the
// caller's scope) when Deps.Units is set.
func (h handlers) unitStored(ctx context.Context, bu string) error {
	if h.d.Units == nil {
		return nil
	}
	if _, err := h.d.Units.BusinessUnitGet(ctx, bu); errors.Is(err, store.ErrNotFound) {
		return automation.Errorf(automation.CodeNotFound, "business unit %q not found", bu)
	} else if err != nil {
		return err
	}
	return nil
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

// put saves a new version of the unit's template: 201 for its first, 200 after.
func (h handlers) put(ctx context.Context, in *httpapi.In[Body]) (Template, error) {
	b, given := in.Body, in.VersionGiven
	expected := int64(0) // no If-Match: the unit has no version yet
	if given {
		expected = in.Version
	}
	t, err := h.d.Templates.Save(ctx, store.NotificationTemplate{Key: in.Path("key"), BusinessUnitID: in.Unit,
		Subject: b.Subject, Text: b.Text, HTML: b.HTML, CreatedBy: in.Operator}, &expected)
	if errors.Is(err, store.ErrConflict) {
		if given {
			return Template{}, &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match", Message: "the unit's template has a newer version: read it again"}
		}
		return Template{}, &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match", Message: "the unit has a version of this template: send If-Match with its ETag"}
	}
	if err != nil {
		return Template{}, err
	}
	if t.Version == 1 {
		in.Status = http.StatusCreated
	}
	return view(t, in.Unit), nil
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
	out := Preview{Subject: content.Subject, Text: content.Text, HTML: content.HTML, Version: content.TemplateVersion}
	if ch == channel.SMSChannelName {
		l := channel.SMSSegments(content.Text)
		out.SMS = &l
	}
	return out, nil
}
