package console

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channel"
	"github.com/automation-platform/automation/shared/store"
)

// TemplateStore is what the template pages read.
type TemplateStore interface {
	store.TemplateListStore
	NotificationTemplateGet(ctx context.Context, key, businessUnitID string) (store.NotificationTemplate, error)
}

// TemplateTestSend sends the draft-free, stored template key of a business unit, rendered
// with payloadJSON, to one recipient on one channel, and returns what the channel answered
// (a provider reference or a note). The console offers the test-send form only when
// TemplateOptions.TestSend is set: the hook for the templates service's test send (issue
// "Channels"), which is not on main yet.
type TemplateTestSend func(ctx context.Context, businessUnitID, key, channel, recipient, payloadJSON, operator string) (string, error)

// TemplateOptions tune the template pages.
type TemplateOptions struct {
	TestSend TemplateTestSend // nil: no test-send form
}

// templateVersionsShown bounds the versions listed per key and unit.
const templateVersionsShown = 20

// TemplatePages are the notification template pages (docs/channels.md#templates,
// docs/console.md#templates): "templates" lists, for a business unit, every template key it
// may send — the unit's override or else the platform default, the latest version of each
// (the first 100 rows) — and, for ?key=, the version in force, the versions of the unit's
// override and of the default (the newest 20 each), an edit form for the unit's override
// and a preview form. The form edits every kind (docs/channels.md#template-kinds): message,
// push (subject the title, text the body, and data templates as a JSON object), sms (text)
// and whatsapp (the provider template's name, language and parameter templates, one a
// line), built into the kind's Extra as the templates API builds it; a member of another
// kind is 422 naming it ("data", "whatsApp"), as are Compile's ("data.gcm.x",
// "whatsApp.language", "html" on an sms). POST "templates" saves a new version of the unit's override through
// delivery.Templates.Save, the templates API's service (the same checks; CreatedBy is the
// operator: the audit), guarded by the override's version as the page showed it (0: none
// yet): a version saved since answers 412 with the template as it is now; a template that
// does not parse 422 naming the part, the draft kept; no operator 422. POST
// "template-preview" (a hidden page, read role like the API's preview) renders the draft in
// the form with the sample payload on the server and writes nothing, so the preview works
// without JavaScript; a field the payload lacks is 422 naming it ("payload.points"); an sms
// draft's preview adds its length as an SMS (channel.SMSSegments), as the API's preview does.
func TemplatePages(templates *delivery.Templates, st TemplateStore, opts TemplateOptions) []Page {
	tp := templatePages{templates: templates, st: st, opts: opts}
	return []Page{
		{Path: "templates", Title: "Templates", Render: tp.get, Post: tp.save},
		{Path: "template-preview", Title: "Template preview", Hidden: true, Render: tp.get, Post: tp.preview},
	}
}

type templatePages struct {
	templates *delivery.Templates
	st        TemplateStore
	opts      TemplateOptions
}

type templatesPage struct {
	BusinessUnitID, Key string
	Picker              template.HTML
	Operator            string
	CSRFField           template.HTML
	Loaded              bool
	TestSend            bool
	List                []store.NotificationTemplate
	InForce             *store.NotificationTemplate
	Overrides           []store.NotificationTemplate
	Defaults            []store.NotificationTemplate
	OverrideVersion     int64 // the unit's latest override version, 0 when none
	Draft               store.NotificationTemplate
	// The draft's kind-specific members as the form shows them (from Draft.Extra or the
	// post): a push template's data templates as a JSON object, a WhatsApp template's
	// name, language and parameter templates (one a line).
	PushData, WhatsAppName, WhatsAppLanguage, WhatsAppParameters string
	Payload                                                      string
	Preview                                                      *delivery.Content
	// SMS is the previewed text's length as an SMS (encoding, units, segments: each segment
	// is billed) for an sms template, as the templates API's preview answers; nil otherwise.
	SMS     *channel.SMSLength
	Notice  string
	Problem *problem
}

// templateKinds are the kinds the editor offers (delivery.Kinds), for its select.
var templateKinds = delivery.Kinds

// formExtra fills the form's kind members from the draft's stored Extra (a stored Extra
// was checked by delivery.Compile when it was saved, so it decodes).
func (d *templatesPage) formExtra() {
	switch d.Draft.Kind {
	case delivery.KindPush:
		var x delivery.PushExtra
		if d.Draft.Extra != "" && json.Unmarshal([]byte(d.Draft.Extra), &x) == nil && len(x.Data) > 0 {
			b, _ := json.MarshalIndent(x.Data, "", "  ")
			d.PushData = string(b)
		}
	case delivery.KindWhatsApp:
		var x delivery.WhatsAppExtra
		if json.Unmarshal([]byte(d.Draft.Extra), &x) == nil {
			d.WhatsAppName, d.WhatsAppLanguage, d.WhatsAppParameters = x.Name, x.Language, strings.Join(x.Parameters, "\n")
		}
	}
}

func (tp templatePages) get(r *http.Request, pc PageCall) (template.HTML, error) {
	q := r.URL.Query()
	return tp.render(r, pc, templatesPage{BusinessUnitID: strings.TrimSpace(q.Get("businessUnitId")), Key: strings.TrimSpace(q.Get("key"))})
}

func (tp templatePages) render(r *http.Request, pc PageCall, d templatesPage) (template.HTML, error) {
	d.CSRFField, d.Operator, d.TestSend = pc.CSRFField, pc.Caller.Operator, tp.opts.TestSend != nil
	picker, chosen, err := pc.chosenUnit(r.Context(), "tp-bu", d.BusinessUnitID)
	d.Picker = picker
	if err != nil || !chosen {
		return orError(templateTemplates, "templates", d, err)
	}
	ctx := r.Context()
	if d.List, err = tp.st.NotificationTemplateList(ctx, d.BusinessUnitID, "", 100); err != nil {
		return "", err
	}
	if d.Key != "" {
		if len(d.Key) > 200 {
			return "", automation.Invalid("key", "is at most 200 characters")
		}
		if t, err := tp.st.NotificationTemplateGet(ctx, d.Key, d.BusinessUnitID); err == nil {
			d.InForce = &t
		} else if !errors.Is(err, store.ErrNotFound) {
			return "", err
		}
		if d.Overrides, err = tp.st.NotificationTemplateVersions(ctx, d.Key, d.BusinessUnitID, templateVersionsShown); err != nil {
			return "", err
		}
		if d.Defaults, err = tp.st.NotificationTemplateVersions(ctx, d.Key, "", templateVersionsShown); err != nil {
			return "", err
		}
		if len(d.Overrides) > 0 {
			d.OverrideVersion = d.Overrides[0].Version
		}
		if d.Draft.Key == "" && d.InForce != nil {
			d.Draft = *d.InForce
			d.formExtra()
		}
		if d.Draft.Kind == "" {
			d.Draft.Kind = delivery.KindMessage
		}
		if d.Payload == "" {
			d.Payload = "{}"
		}
	}
	d.Loaded = true
	return execute(templateTemplates, "templates", d)
}

// draftOf reads the form's template and sample payload.
func draftOf(r *http.Request) (templatesPage, error) {
	f := r.PostForm
	d := templatesPage{BusinessUnitID: strings.TrimSpace(f.Get("businessUnitId")), Key: strings.TrimSpace(f.Get("key")), Payload: f.Get("payload")}
	if d.BusinessUnitID == "" {
		return d, automation.Invalid("businessUnitId", "is required")
	}
	if d.Key == "" {
		return d, automation.Invalid("key", "is required")
	}
	d.Draft = store.NotificationTemplate{Key: d.Key, BusinessUnitID: d.BusinessUnitID, Kind: strings.TrimSpace(f.Get("kind")), Subject: f.Get("subject"), Text: f.Get("text"), HTML: f.Get("html")}
	if d.Draft.Kind == "" {
		d.Draft.Kind = delivery.KindMessage
	}
	d.PushData, d.WhatsAppName, d.WhatsAppLanguage, d.WhatsAppParameters = f.Get("data"), strings.TrimSpace(f.Get("whatsAppName")),
		strings.TrimSpace(f.Get("whatsAppLanguage")), f.Get("whatsAppParameters")
	extra, err := d.extra()
	d.Draft.Extra = extra
	return d, err
}

// scopedDraft is draftOf for a post that acts on the draft (save, test send, preview). err
// ends the post before the page is drawn: the draft's error when the form names no unit or
// no key, NotFound for a unit outside the caller's scope (inScope). Otherwise derr is the
// draft's own error (a member of another kind), shown on the page with the draft kept.
func scopedDraft(r *http.Request, pc PageCall) (d templatesPage, derr, err error) {
	d, derr = draftOf(r)
	if d.BusinessUnitID == "" || d.Key == "" {
		return d, derr, derr
	}
	return d, derr, inScope(pc, d.BusinessUnitID)
}

// samplePayload is the posted sample payload, "{}" when blank (the templates API's preview
// renders an absent payload as the empty object too).
func (d templatesPage) samplePayload() string {
	if strings.TrimSpace(d.Payload) == "" {
		return "{}"
	}
	return d.Payload
}

// extra is the draft's Extra from the form's kind members, in the templates API's shape
// (delivery.PushExtra, delivery.WhatsAppExtra). A member of another kind is refused by its
// name, as the API refuses it, never dropped: data (push), whatsApp.name, whatsApp.language,
// whatsApp.parameters (whatsapp). Blank parameter lines are skipped. delivery.Compile (in
// Save and in the preview) checks the rest (data.{name}, whatsApp.parameters[i]).
func (d *templatesPage) extra() (string, error) {
	kind := d.Draft.Kind
	hasData := strings.TrimSpace(d.PushData) != ""
	hasWhatsApp := d.WhatsAppName != "" || d.WhatsAppLanguage != "" || strings.TrimSpace(d.WhatsAppParameters) != ""
	if hasData && kind != delivery.KindPush {
		return "", automation.Invalid("data", "only a push template has data members (kind is %q)", kind)
	}
	if hasWhatsApp && kind != delivery.KindWhatsApp {
		return "", automation.Invalid("whatsApp", "only a whatsapp template names a provider template (kind is %q)", kind)
	}
	var x any
	switch {
	case kind == delivery.KindPush && hasData:
		var data map[string]string
		dec := json.NewDecoder(strings.NewReader(d.PushData))
		if err := dec.Decode(&data); err != nil || dec.More() {
			return "", automation.Invalid("data", "must be one JSON object of strings, member name to template ({\"screen\":\"{{.screen}}\"})")
		}
		x = delivery.PushExtra{Data: data}
	case kind == delivery.KindWhatsApp:
		w := delivery.WhatsAppExtra{Name: d.WhatsAppName, Language: d.WhatsAppLanguage}
		for _, line := range strings.Split(d.WhatsAppParameters, "\n") {
			if line = strings.TrimRight(line, "\r"); strings.TrimSpace(line) != "" {
				w.Parameters = append(w.Parameters, line)
			}
		}
		x = w
	default:
		return "", nil
	}
	b, err := json.Marshal(x)
	if err != nil {
		return "", automation.Invalid("template", "the kind's members do not encode: %v", err)
	}
	return string(b), nil
}

func (tp templatePages) refused(r *http.Request, pc PageCall, d templatesPage, p *problem) (template.HTML, error) {
	d.Problem = p
	body, err := tp.render(r, pc, d)
	if err != nil {
		return "", err
	}
	return "", &Refused{Status: p.Status, Body: body}
}

func (tp templatePages) save(r *http.Request, pc PageCall) (template.HTML, error) {
	d, derr, err := scopedDraft(r, pc)
	if err != nil {
		return "", err
	}
	f := r.PostForm
	if f.Get("action") == "test-send" {
		return tp.testSend(r, pc, d)
	}
	var expected int64
	if v := strings.TrimSpace(f.Get("version")); v != "0" {
		if expected, err = formVersion(v, "template"); err != nil {
			return "", err
		}
	}
	if derr != nil {
		return tp.refused(r, pc, d, problemOf(derr))
	}
	op := pageOperator(r, pc)
	if err := needOperator(op); err != nil {
		return tp.refused(r, pc, d, problemOf(err))
	}
	t := d.Draft
	t.CreatedBy = op
	saved, err := tp.templates.Save(r.Context(), t, &expected)
	if err == nil {
		return tp.render(r, pc, templatesPage{BusinessUnitID: d.BusinessUnitID, Key: d.Key,
			Notice: fmt.Sprintf("%s for %s: version %d saved by %s.", saved.Key, saved.BusinessUnitID, saved.Version, saved.CreatedBy)})
	}
	if errors.Is(err, store.ErrConflict) {
		now := "has a version"
		if vs, verr := tp.st.NotificationTemplateVersions(r.Context(), d.Key, d.BusinessUnitID, 1); verr == nil && len(vs) > 0 {
			now = fmt.Sprintf("is at version %d (by %s)", vs[0].Version, vs[0].CreatedBy)
		}
		d.Draft = store.NotificationTemplate{} // show the version in force
		return tp.refused(r, pc, d, &problem{Status: http.StatusPreconditionFailed, Title: "The template changed since you loaded it",
			Detail: fmt.Sprintf("You edited version %d; the unit's template %s now. Nothing was saved; the template below is as it is now.", expected, now)})
	}
	return tp.refused(r, pc, d, problemOf(err))
}

// testSend calls TemplateOptions.TestSend with the stored template (not the draft).
func (tp templatePages) testSend(r *http.Request, pc PageCall, d templatesPage) (template.HTML, error) {
	if tp.opts.TestSend == nil {
		return "", automation.Errorf(automation.CodeNotFound, "this console has no test send")
	}
	f := r.PostForm
	op := pageOperator(r, pc)
	if err := needOperator(op); err != nil {
		return tp.refused(r, pc, d, problemOf(err))
	}
	payload := d.samplePayload()
	ch, to := strings.TrimSpace(f.Get("channel")), strings.TrimSpace(f.Get("recipient"))
	note, err := tp.opts.TestSend(r.Context(), d.BusinessUnitID, d.Key, ch, to, payload, op)
	if err != nil {
		return tp.refused(r, pc, d, problemOf(err))
	}
	d.Draft = store.NotificationTemplate{}
	d.Notice = fmt.Sprintf("Test send of %s to %s on %s by %s: %s", d.Key, to, ch, op, note)
	return tp.render(r, pc, d)
}

func (tp templatePages) preview(r *http.Request, pc PageCall) (template.HTML, error) {
	d, derr, err := scopedDraft(r, pc)
	if err != nil {
		return "", err
	}
	if derr != nil {
		return tp.refused(r, pc, d, problemOf(derr))
	}
	c, err := delivery.Compile(d.Draft)
	if err != nil {
		return tp.refused(r, pc, d, problemOf(err))
	}
	payload := d.samplePayload()
	data, err := delivery.RenderData(delivery.Message{DeliveryKey: "preview", BusinessUnitID: d.BusinessUnitID, Channel: "preview", Recipient: "preview",
		Template: d.Key, PayloadJSON: payload})
	if err != nil {
		return tp.refused(r, pc, d, problemOf(automation.Invalid("payload", "must be a JSON object")))
	}
	content, err := c.Render(data)
	var re *delivery.RenderError
	if errors.As(err, &re) {
		if re.Field != "" {
			err = automation.Invalid("payload."+re.Field, "the draft (%s) needs this field; the sample payload has none", re.Part)
		} else {
			err = automation.Invalid("payload", "the draft (%s) does not render: %v", re.Part, re.Err)
		}
	}
	if err != nil {
		return tp.refused(r, pc, d, problemOf(err))
	}
	d.Preview = &content
	if content.Kind == delivery.KindSMS {
		l := channel.SMSSegments(content.Text)
		d.SMS = &l
	}
	d.Notice = "Preview of the draft below (nothing was saved)."
	return tp.render(r, pc, d)
}

// templateHref is the page of one key of a unit.
func templateHref(bu, key string) string {
	return Base + "/templates?" + url.Values{"businessUnitId": {bu}, "key": {key}}.Encode()
}

var templateTemplates = template.Must(template.New("templates").Funcs(funcs).Funcs(template.FuncMap{"templateHref": templateHref, "templateKinds": func() []string { return templateKinds }}).Parse(`{{define "templates"}}
<form method="get" action="/api/console/templates" class="filters" aria-label="Templates">
<div>{{.Picker}}</div>
<div><label for="tp-key">Template key (optional)</label><input id="tp-key" name="key" value="{{.Key}}" maxlength="200"></div>
<div><button type="submit">Show</button></div></form>
{{with .Problem}}<div class="alert error" role="alert" id="template-problem"><h2>{{.Title}} ({{.Status}})</h2>{{with .Detail}}<p>{{.}}</p>{{end}}{{if .Fields}}<ul>{{range .Fields}}<li>{{.Field}}: {{.Message}}</li>{{end}}</ul>{{end}}</div>{{end}}
{{with .Notice}}<div class="alert notice" role="status" id="template-notice">{{.}}</div>{{end}}
{{if .Loaded}}<div class="scroll"><table id="template-list"><caption>Templates {{.BusinessUnitID}} may send (latest versions; the unit's override wins over the default)</caption>
<thead><tr><th scope="col">Key</th><th scope="col">Kind</th><th scope="col">Whose</th><th scope="col">Version</th><th scope="col">Subject</th><th scope="col">Saved by</th><th scope="col">Saved (UTC)</th></tr></thead>
<tbody>{{range .List}}<tr><th scope="row"><a href="{{templateHref $.BusinessUnitID .Key}}">{{.Key}}</a></th><td>{{or .Kind "message"}}</td><td>{{if .BusinessUnitID}}override of {{.BusinessUnitID}}{{else}}platform default{{end}}</td><td>{{.Version}}</td><td>{{.Subject}}</td><td>{{.CreatedBy}}</td><td>{{when .CreatedOn}}</td></tr>
{{else}}<tr><td colspan="7">No templates.</td></tr>{{end}}</tbody></table></div>
{{if .Key}}<h2 id="template">{{.Key}} for {{.BusinessUnitID}}</h2>
<p id="template-in-force">{{with .InForce}}In force: {{if .BusinessUnitID}}the unit's override{{else}}the platform default{{end}}, version {{.Version}}.{{else}}Not stored for this unit nor as a default: saving creates the unit's override.{{end}}</p>
<form method="post" action="/api/console/templates" class="card" id="template-edit">{{.CSRFField}}
<input type="hidden" name="businessUnitId" value="{{.BusinessUnitID}}"><input type="hidden" name="key" value="{{.Key}}"><input type="hidden" name="version" value="{{.OverrideVersion}}">
<label for="te-kind">Kind</label><select id="te-kind" name="kind" aria-describedby="te-kind-help">{{range templateKinds}}<option{{if eq . $.Draft.Kind}} selected{{end}}>{{.}}</option>{{end}}</select>
<p class="help" id="te-kind-help">message: subject, text and HTML (e-mail, webhook, inbox). push: subject is the title, text the body, plus data templates. sms: text only. whatsapp: an approved provider template (name, language, parameters); no subject, text or HTML. A part the kind does not have is refused by its name.</p>
<label for="te-subject">Subject (push: the title)</label><input id="te-subject" name="subject" value="{{.Draft.Subject}}">
<label for="te-text">Text (push: the body)</label><textarea id="te-text" name="text" rows="6" spellcheck="false">{{.Draft.Text}}</textarea>
<label for="te-html">HTML</label><textarea id="te-html" name="html" rows="6" spellcheck="false">{{.Draft.HTML}}</textarea>
<fieldset><legend>Push only</legend><label for="te-data">Data templates (a JSON object: member name to template)</label><textarea id="te-data" name="data" rows="3" spellcheck="false">{{.PushData}}</textarea></fieldset>
<fieldset><legend>WhatsApp only</legend><label for="te-wa-name">Provider template name</label><input id="te-wa-name" name="whatsAppName" value="{{.WhatsAppName}}" maxlength="512">
<label for="te-wa-lang">Language (vi, en_US)</label><input id="te-wa-lang" name="whatsAppLanguage" value="{{.WhatsAppLanguage}}" maxlength="10">
<label for="te-wa-params">Parameter templates (one a line: {{"{{"}}1{{"}}"}}, {{"{{"}}2{{"}}"}}, …)</label><textarea id="te-wa-params" name="whatsAppParameters" rows="3" spellcheck="false">{{.WhatsAppParameters}}</textarea></fieldset>
<label for="te-payload">Sample payload (JSON, for the preview)</label><textarea id="te-payload" name="payload" rows="4" spellcheck="false">{{.Payload}}</textarea>
<label for="te-op">Operator</label><input id="te-op" name="operator" value="{{.Operator}}"{{if .Operator}} readonly{{end}}>
<button type="submit" formaction="/api/console/template-preview" id="template-preview-button">Preview</button>
<button type="submit">Save as the unit's version {{.OverrideVersion}} + 1</button></form>
{{with .Preview}}<section class="card" id="template-preview" aria-label="Preview"><h3>Preview ({{.Kind}})</h3><dl class="kv">{{if ne .Kind "whatsapp"}}{{if ne .Kind "sms"}}<dt>Subject</dt><dd id="preview-subject">{{.Subject}}</dd>{{end}}<dt>Text</dt><dd><pre id="preview-text">{{.Text}}</pre></dd>{{if and (eq .Kind "sms") $.SMS}}<dt>Length as SMS</dt><dd id="preview-sms">{{$.SMS.Segments}} segment(s), {{$.SMS.Units}} {{if eq $.SMS.Encoding "GSM-7"}}septets{{else}}units{{end}} of {{$.SMS.Encoding}} (each segment is billed)</dd>{{end}}{{if eq .Kind "message"}}<dt>HTML (as source)</dt><dd><pre id="preview-html">{{.HTML}}</pre></dd>{{end}}{{end}}
{{range $k, $v := .Data}}<dt>data.{{$k}}</dt><dd class="preview-data">{{$v}}</dd>{{end}}
{{with .WhatsApp}}<dt>WhatsApp template</dt><dd id="preview-whatsapp">{{.Name}} ({{.Language}})</dd>{{with .Values}}<dt>Parameters, in order</dt><dd><ol id="preview-parameters">{{range .}}<li>{{.}}</li>{{end}}</ol></dd>{{end}}{{end}}</dl></section>{{end}}
{{if .TestSend}}<form method="post" action="/api/console/templates" class="card" id="template-test-send"><h3>Test send (the stored version in force)</h3>{{.CSRFField}}
<input type="hidden" name="action" value="test-send"><input type="hidden" name="businessUnitId" value="{{.BusinessUnitID}}"><input type="hidden" name="key" value="{{.Key}}">
<label for="ts-channel">Channel</label><input id="ts-channel" name="channel" required>
<label for="ts-to">Recipient</label><input id="ts-to" name="recipient" required maxlength="320">
<label for="ts-payload">Payload (JSON)</label><textarea id="ts-payload" name="payload" rows="3" spellcheck="false">{{.Payload}}</textarea>
<label for="ts-op">Operator</label><input id="ts-op" name="operator" value="{{.Operator}}"{{if .Operator}} readonly{{end}} required>
<button type="submit">Send a test</button></form>{{end}}
<div class="scroll"><table id="template-overrides"><caption>Versions of {{.BusinessUnitID}}'s override (the newest 20)</caption>
<thead><tr><th scope="col">Version</th><th scope="col">Subject</th><th scope="col">Saved by</th><th scope="col">Saved (UTC)</th></tr></thead>
<tbody>{{range .Overrides}}<tr><td>{{.Version}}</td><td>{{if .Deleted}}<strong>deleted</strong> (the unit sends the default){{else}}{{.Subject}}{{end}}</td><td>{{.CreatedBy}}</td><td>{{when .CreatedOn}}</td></tr>{{else}}<tr><td colspan="4">None: the unit sends the default.</td></tr>{{end}}</tbody></table></div>
<div class="scroll"><table id="template-defaults"><caption>Versions of the platform default (the newest 20)</caption>
<thead><tr><th scope="col">Version</th><th scope="col">Subject</th><th scope="col">Saved by</th><th scope="col">Saved (UTC)</th></tr></thead>
<tbody>{{range .Defaults}}<tr><td>{{.Version}}</td><td>{{if .Deleted}}<strong>deleted</strong>{{else}}{{.Subject}}{{end}}</td><td>{{.CreatedBy}}</td><td>{{when .CreatedOn}}</td></tr>{{else}}<tr><td colspan="4">None.</td></tr>{{end}}</tbody></table></div>{{end}}{{end}}{{end}}`))
