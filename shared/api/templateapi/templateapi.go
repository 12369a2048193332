package templateapi

import (
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

// Registrar is where routes go: funchost.Router.RegisterHTTP (or an http.ServeMux's Handle).
type Registrar interface {
	RegisterHTTP(pattern string, h http.Handler)
}

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
func Register(reg Registrar, api *httpapi.API, d Deps) {
	h := handlers{d: d}
	reg.RegisterHTTP("GET "+PathTemplate, api.Handler(h.get))
	reg.RegisterHTTP("PUT "+PathTemplate, api.Handler(h.put))
	reg.RegisterHTTP("POST "+PathPreview, api.Handler(h.preview))
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

func (h handlers) scoped(r *http.Request, extra ...string) (string, error) {
	q := httpapi.NewQuery(r.URL.Query())
	if err := q.Check(append([]string{"businessUnitId"}, extra...)...); err != nil {
		return "", err
	}
	bu := q.String("businessUnitId")
	if err := httpapi.RequireUnit(r, bu); err != nil {
		return "", err
	}
	if h.d.Units != nil {
		if _, err := h.d.Units.BusinessUnitGet(r.Context(), bu); errors.Is(err, store.ErrNotFound) {
			return "", automation.Errorf(automation.CodeNotFound, "business unit %q not found", bu)
		} else if err != nil {
			return "", err
		}
	}
	return bu, nil
}

func (h handlers) get(w http.ResponseWriter, r *http.Request) error {
	bu, err := h.scoped(r)
	if err != nil {
		return err
	}
	key := r.PathValue("key")
	t, err := h.d.Store.NotificationTemplateGet(r.Context(), key, bu)
	if errors.Is(err, store.ErrNotFound) {
		return automation.Errorf(automation.CodeNotFound, "template %q is stored neither for %s nor as the default", key, bu)
	}
	if err != nil {
		return err
	}
	v := view(t, bu)
	if v.Override {
		httpapi.SetETag(w, t.Version)
	}
	httpapi.WriteJSON(w, http.StatusOK, v)
	return nil
}

func (h handlers) put(w http.ResponseWriter, r *http.Request) error {
	bu, err := h.scoped(r)
	if err != nil {
		return err
	}
	op, err := httpapi.RequireOperator(r, "template change")
	if err != nil {
		return err
	}
	ifMatch, given, err := httpapi.IfMatch(r, false)
	if err != nil {
		return err
	}
	var b Body
	if err := httpapi.DecodeJSON(r, &b); err != nil {
		return err
	}
	expected := int64(0) // no If-Match: the unit has no version yet
	if given {
		expected = ifMatch
	}
	t, err := h.d.Templates.Save(r.Context(), store.NotificationTemplate{Key: r.PathValue("key"), BusinessUnitID: bu,
		Subject: b.Subject, Text: b.Text, HTML: b.HTML, CreatedBy: op}, &expected)
	if errors.Is(err, store.ErrConflict) {
		if given {
			return &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match", Message: "the unit's template has a newer version: read it again"}
		}
		return &automation.Error{Code: automation.CodePreconditionFailed, Field: "If-Match", Message: "the unit has a version of this template: send If-Match with its ETag"}
	}
	if err != nil {
		return err
	}
	status := http.StatusOK
	if t.Version == 1 {
		status = http.StatusCreated
	}
	httpapi.SetETag(w, t.Version)
	httpapi.WriteJSON(w, status, view(t, bu))
	return nil
}

func (h handlers) preview(w http.ResponseWriter, r *http.Request) error {
	bu, err := h.scoped(r, "channel")
	if err != nil {
		return err
	}
	ch := r.URL.Query().Get("channel")
	if ch != "" && ch != channel.SMSChannelName {
		return automation.Invalid("channel", "only sms adds a measure to the preview, got %q", ch)
	}
	var req PreviewRequest
	if err := httpapi.DecodeJSON(r, &req); err != nil {
		return err
	}
	key := r.PathValue("key")
	c, err := h.d.Templates.Get(r.Context(), key, bu)
	if errors.Is(err, store.ErrNotFound) {
		return automation.Errorf(automation.CodeNotFound, "template %q is stored neither for %s nor as the default", key, bu)
	}
	if err != nil {
		return err
	}
	payload := string(req.Payload)
	if payload == "" {
		payload = "{}"
	}
	data, err := delivery.RenderData(delivery.Message{DeliveryKey: "preview", BusinessUnitID: bu, Channel: "preview", Recipient: "preview",
		Template: key, PayloadJSON: payload})
	if err != nil {
		return automation.Invalid("payload", "must be a JSON object")
	}
	content, err := c.Render(data)
	var re *delivery.RenderError
	if errors.As(err, &re) {
		if re.Field != "" {
			return automation.Invalid("payload."+re.Field, "template %q v%d (%s) needs this field; the payload has none", key, re.Version, re.Part)
		}
		return automation.Invalid("payload", "template %q v%d (%s) does not render: %v", key, re.Version, re.Part, re.Err)
	}
	if err != nil {
		return err
	}
	out := Preview{Subject: content.Subject, Text: content.Text, HTML: content.HTML, Version: content.TemplateVersion}
	if ch == channel.SMSChannelName {
		l := channel.SMSSegments(content.Text)
		out.SMS = &l
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}
