package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"regexp"
	"strings"
	"sync"
	texttemplate "text/template"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// Template limits (bytes per part), so one template cannot bloat every message.
const (
	MaxSubjectBytes = 1000
	MaxBodyBytes    = 256 << 10
)

// Template parts.
const (
	PartSubject = "subject"
	PartText    = "text"
	PartHTML    = "html"
)

var templateKeyRE = regexp.MustCompile(`^[A-Za-z0-9._~@+/-]{1,200}$`)

// Compiled is a parsed template version, ready to render. Safe for concurrent use.
type Compiled struct {
	Key            string
	BusinessUnitID string
	Version        int64
	subject, text  *texttemplate.Template
	html           *htmltemplate.Template
}

// Compile parses the parts of t (text/template for subject and text, html/template for
// HTML, all with missingkey=error). Errors are automation.Invalid naming the part
// ("subject", "text", "html", or "template" when both bodies are empty).
func Compile(t store.NotificationTemplate) (*Compiled, error) {
	var errs []error
	if !templateKeyRE.MatchString(t.Key) {
		errs = append(errs, automation.Invalid("key", "must be 1..200 letters, digits or ._~@+/-, got %q", t.Key))
	}
	if strings.TrimSpace(t.Text) == "" && strings.TrimSpace(t.HTML) == "" {
		errs = append(errs, automation.Invalid("template", "needs a text or an html body"))
	}
	if len(t.Subject) > MaxSubjectBytes {
		errs = append(errs, automation.Invalid(PartSubject, "longer than %d bytes", MaxSubjectBytes))
	}
	if len(t.Text) > MaxBodyBytes || len(t.HTML) > MaxBodyBytes {
		errs = append(errs, automation.Invalid("template", "a body is longer than %d bytes", MaxBodyBytes))
	}
	c := &Compiled{Key: t.Key, BusinessUnitID: t.BusinessUnitID, Version: t.Version}
	var err error
	if c.subject, err = texttemplate.New(PartSubject).Option("missingkey=error").Parse(t.Subject); err != nil {
		errs = append(errs, automation.Invalid(PartSubject, "does not parse: %s", parseMessage(err)))
	}
	if t.Text != "" {
		if c.text, err = texttemplate.New(PartText).Option("missingkey=error").Parse(t.Text); err != nil {
			errs = append(errs, automation.Invalid(PartText, "does not parse: %s", parseMessage(err)))
		}
	}
	if t.HTML != "" {
		if c.html, err = htmltemplate.New(PartHTML).Option("missingkey=error").Parse(t.HTML); err != nil {
			errs = append(errs, automation.Invalid(PartHTML, "does not parse: %s", parseMessage(err)))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

func parseMessage(err error) string { return strings.TrimPrefix(err.Error(), "template: ") }

// RenderError is a template that could not be rendered with the data at hand. Field is the
// missing field's path in the render data (e.g. "source.staffName") when that was the cause.
type RenderError struct {
	Template string
	Version  int64
	Part     string
	Field    string
	Err      error
}

func (e *RenderError) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("template %q v%d %s: missing field %q", e.Template, e.Version, e.Part, e.Field)
	}
	return fmt.Sprintf("template %q v%d %s: %v", e.Template, e.Version, e.Part, e.Err)
}

func (e *RenderError) Unwrap() error { return e.Err }

// missingKeyRE finds the field in text/template's missingkey=error message:
// `… executing "text" at <.source.staffName>: map has no entry for key "staffName"`.
var missingKeyRE = regexp.MustCompile(`at <\.?([^>]*)>: map has no entry for key "([^"]*)"`)

// Render renders every part with data. data is normally the JSON object of the render data
// (see RenderData): JSON nulls count as missing, so a null field is an error too, not a blank.
func (c *Compiled) Render(data map[string]any) (Content, error) {
	data = dropNulls(data)
	out := Content{TemplateVersion: c.Version}
	run := func(part string, exec func(*bytes.Buffer) error) (string, error) {
		var b bytes.Buffer
		if err := exec(&b); err != nil {
			re := &RenderError{Template: c.Key, Version: c.Version, Part: part, Err: err}
			if m := missingKeyRE.FindStringSubmatch(err.Error()); m != nil {
				re.Field = m[1]
				if re.Field == "" || strings.ContainsAny(re.Field, " ()") {
					re.Field = m[2]
				}
			}
			return "", re
		}
		return b.String(), nil
	}
	var err error
	if out.Subject, err = run(PartSubject, func(b *bytes.Buffer) error { return c.subject.Execute(b, data) }); err != nil {
		return Content{}, err
	}
	out.Subject = strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(out.Subject, "\r", " "), "\n", " "))
	if c.text != nil {
		if out.Text, err = run(PartText, func(b *bytes.Buffer) error { return c.text.Execute(b, data) }); err != nil {
			return Content{}, err
		}
	}
	if c.html != nil {
		if out.HTML, err = run(PartHTML, func(b *bytes.Buffer) error { return c.html.Execute(b, data) }); err != nil {
			return Content{}, err
		}
	}
	return out, nil
}

func dropNulls(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		switch x := v.(type) {
		case nil:
			continue
		case map[string]any:
			out[k] = dropNulls(x)
		default:
			out[k] = v
		}
	}
	return out
}

// RenderData builds the data a template renders with: the job's payload object (for a
// reminder: settingName, targetDate, offsetDays, scheduledOn, localTime, timeZoneId and
// source, the source snapshot's fields) plus recipient, channel, deliveryKey, schedulerKey,
// businessUnitId and template. A payload that is not a JSON object is an error.
func RenderData(m Message) (map[string]any, error) {
	data := map[string]any{}
	if strings.TrimSpace(m.PayloadJSON) != "" && m.PayloadJSON != "null" {
		dec := json.NewDecoder(strings.NewReader(m.PayloadJSON))
		dec.UseNumber()
		if err := dec.Decode(&data); err != nil {
			return nil, fmt.Errorf("payload of %s is not a JSON object: %w", m.DeliveryKey, err)
		}
	}
	for k, v := range map[string]string{"recipient": m.Recipient, "channel": m.Channel, "deliveryKey": m.DeliveryKey,
		"schedulerKey": m.SchedulerKey, "businessUnitId": m.BusinessUnitID, "template": m.Template} {
		data[k] = v
	}
	return data, nil
}

// TemplateStore is what Templates needs from SQL.
type TemplateStore interface {
	NotificationTemplateSave(ctx context.Context, p store.NotificationTemplateSaveParams) (store.NotificationTemplate, error)
	NotificationTemplateGet(ctx context.Context, key, businessUnitID string) (store.NotificationTemplate, error)
}

// Templates saves and loads templates, keeping compiled versions in a bounded cache (a
// stored version never changes, so (key, business unit, version) identifies it).
type Templates struct {
	Store TemplateStore
	Clock automation.Clock

	mu    sync.Mutex
	cache map[string]*Compiled
}

// maxCachedTemplates bounds the compiled-template cache (cleared when full).
const maxCachedTemplates = 512

// Save validates t (Compile) and stores it as the next version of (Key, BusinessUnitID).
// expectedVersion, when non-nil, guards against a concurrent edit (store.ErrConflict).
// Errors: automation.Invalid (nothing stored) for a template that does not parse, a bad
// key or a missing CreatedBy.
func (ts *Templates) Save(ctx context.Context, t store.NotificationTemplate, expectedVersion *int64) (store.NotificationTemplate, error) {
	if _, err := Compile(t); err != nil {
		return store.NotificationTemplate{}, err
	}
	if strings.TrimSpace(t.CreatedBy) == "" {
		return store.NotificationTemplate{}, automation.Invalid("createdBy", "is required (the operator saving the template)")
	}
	if t.BusinessUnitID != "" && !templateKeyRE.MatchString(t.BusinessUnitID) {
		return store.NotificationTemplate{}, automation.Invalid("businessUnitId", "is not a business unit id: %q", t.BusinessUnitID)
	}
	return ts.Store.NotificationTemplateSave(ctx, store.NotificationTemplateSaveParams{Template: t, ExpectedVersion: expectedVersion, Now: ts.Clock.Now()})
}

// Get returns the compiled latest version of key for the business unit (its override, else
// the default); store.ErrNotFound when neither exists.
func (ts *Templates) Get(ctx context.Context, key, businessUnitID string) (*Compiled, error) {
	t, err := ts.Store.NotificationTemplateGet(ctx, key, businessUnitID)
	if err != nil {
		return nil, err
	}
	id := fmt.Sprintf("%s\x00%s\x00%d", t.Key, t.BusinessUnitID, t.Version)
	ts.mu.Lock()
	c, ok := ts.cache[id]
	ts.mu.Unlock()
	if ok {
		return c, nil
	}
	c, err = Compile(t)
	if err != nil {
		return nil, fmt.Errorf("stored template %q v%d: %w", t.Key, t.Version, err)
	}
	ts.mu.Lock()
	if ts.cache == nil || len(ts.cache) >= maxCachedTemplates {
		ts.cache = map[string]*Compiled{}
	}
	ts.cache[id] = c
	ts.mu.Unlock()
	return c, nil
}
