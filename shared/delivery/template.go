package delivery

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	htmltemplate "html/template"
	"io"
	"regexp"
	"strings"
	"sync"
	texttemplate "text/template"
	"text/template/parse"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/strictjson"
)

// Template limits (bytes per part), so one template cannot bloat every message:
// MaxSubjectBytes and MaxBodyBytes bound the stored source, MaxRenderedBytes the output of
// one rendered part (a larger one is a RenderError, not memory exhausted).
const (
	MaxSubjectBytes  = 1000
	MaxBodyBytes     = 256 << 10
	MaxRenderedBytes = 1 << 20
)

// Template parts.
const (
	PartSubject = "subject"
	PartText    = "text"
	PartHTML    = "html"
)

var templateKeyRE = regexp.MustCompile(`^[A-Za-z0-9._~@+/-]{1,200}$`)

// Template kinds (docs/channels.md#template-kinds): which parts a template has and which
// channels send it (Traits.TemplateKinds).
const (
	KindMessage  = "message"  // subject, text, html: e-mail, webhook, inbox, and push or sms as plain text
	KindPush     = "push"     // title (Subject), body (Text) and data templates (Extra: PushExtra)
	KindSMS      = "sms"      // Text only
	KindWhatsApp = "whatsapp" // an approved provider template: name, language, parameter templates (Extra: WhatsAppExtra)
)

// Kinds lists the template kinds, for messages.
var Kinds = []string{KindMessage, KindPush, KindSMS, KindWhatsApp}

// Bounds of a kind's Extra (stored in nvarchar(4000) on SQL Server, UTF-16 code units).
const (
	MaxExtraChars         = 4000
	MaxPushDataMembers    = 20
	MaxWhatsAppParameters = 20
)

// PushExtra is a push template's Extra: data member name → template (text/template). The
// rendered values join the message's data (docs/channels.md#push). Names are 1..64 letters,
// digits, '_', '.' or '-', not FCM's reserved ones (from, notification, message_type,
// google…, gcm…) nor the channel's own deliveryKey and template.
type PushExtra struct {
	Data map[string]string `json:"data"`
}

// WhatsAppExtra is a WhatsApp template's Extra: the approved provider template's name
// (lower-case letters, digits, '_'), its language ("vi", "en_US") and one text/template per
// body parameter, in order ({{1}}, {{2}}, … on WhatsApp's side).
type WhatsAppExtra struct {
	Name       string   `json:"name"`
	Language   string   `json:"language"`
	Parameters []string `json:"parameters,omitempty"`
}

var (
	pushDataKeyRE  = regexp.MustCompile(`^[A-Za-z0-9_.-]{1,64}$`)
	waTemplateName = regexp.MustCompile(`^[a-z0-9_]{1,512}$`)
	waLanguage     = regexp.MustCompile(`^[a-z]{2,3}(_[A-Z]{2})?$`)
)

// PushDataKeyReserved reports whether FCM or the push channel owns the data member name k
// (case-insensitive for FCM's): such a member cannot come from a template or payload.
func PushDataKeyReserved(k string) bool {
	lk := strings.ToLower(k)
	return lk == "from" || lk == "notification" || lk == "message_type" || strings.HasPrefix(lk, "google") || strings.HasPrefix(lk, "gcm") ||
		k == "deliveryKey" || k == "template"
}

// ValidateWhatsAppReference checks a WhatsApp template's name (lower-case letters, digits,
// '_', at most 512) and language (a code like en or en_US).
func ValidateWhatsAppReference(name, language string) error {
	if !waTemplateName.MatchString(name) {
		return fmt.Errorf("WhatsApp template name %q: lower-case letters, digits and '_'", name)
	}
	if !waLanguage.MatchString(language) {
		return fmt.Errorf("WhatsApp template language %q: a code like en or en_US", language)
	}
	return nil
}

// Compiled is a parsed template version, ready to render. Safe for concurrent use.
type Compiled struct {
	Key            string
	BusinessUnitID string
	Version        int64
	Kind           string // one of Kinds
	subject, text  *texttemplate.Template
	html           *htmltemplate.Template
	data           map[string]*texttemplate.Template // push
	whatsApp       *WhatsAppExtra                    // whatsapp: name and language
	params         []*texttemplate.Template          // whatsapp
}

// Compile parses the parts of t (text/template for subject and text, html/template for
// HTML, all with missingkey=error). Errors are automation.Invalid naming the part
// ("subject", "text", "html", or "template" when both bodies are empty). Besides syntax
// errors a part is rejected when it could render without bound (see checkBounded) or, for
// HTML, when html/template cannot escape it (an attribute or script left open, branches
// ending in different contexts): html/template finds those only on first use, so Compile
// escapes the HTML part once here.
//
// The kind (t.Kind, "" meaning "message") decides the parts (docs/channels.md#template-kinds):
// message needs a text or an html body; push a title (subject) or a body (text), no html,
// and Extra a PushExtra; sms a text only; whatsapp no subject, text or html, and Extra a
// WhatsAppExtra. A part or member the kind does not have is refused by its name
// ("html", "data.gcm.x", "whatsApp.parameters[2]"), never ignored.
func Compile(t store.NotificationTemplate) (*Compiled, error) {
	var errs []error
	if !templateKeyRE.MatchString(t.Key) {
		errs = append(errs, automation.Invalid("key", "must be 1..200 letters, digits or ._~@+/-, got %q", t.Key))
	}
	kind := t.Kind
	if kind == "" {
		kind = KindMessage
	}
	switch kind {
	case KindMessage:
		if strings.TrimSpace(t.Text) == "" && strings.TrimSpace(t.HTML) == "" {
			errs = append(errs, automation.Invalid("template", "needs a text or an html body"))
		}
	case KindPush:
		if strings.TrimSpace(t.Subject) == "" && strings.TrimSpace(t.Text) == "" {
			errs = append(errs, automation.Invalid("template", "a push template needs a title (subject) or a body (text)"))
		}
		if t.HTML != "" {
			errs = append(errs, automation.Invalid(PartHTML, "a push template has no html part"))
		}
	case KindSMS:
		if strings.TrimSpace(t.Text) == "" {
			errs = append(errs, automation.Invalid(PartText, "an sms template needs a text"))
		}
		if t.Subject != "" {
			errs = append(errs, automation.Invalid(PartSubject, "an sms template has no subject"))
		}
		if t.HTML != "" {
			errs = append(errs, automation.Invalid(PartHTML, "an sms template has no html part"))
		}
	case KindWhatsApp:
		for part, v := range map[string]string{PartSubject: t.Subject, PartText: t.Text, PartHTML: t.HTML} {
			if v != "" {
				errs = append(errs, automation.Invalid(part, "a whatsapp template has no %s: WhatsApp sends the approved provider template named in whatsApp.name", part))
			}
		}
	default:
		errs = append(errs, automation.Invalid("kind", "must be one of %s, got %q", strings.Join(Kinds, ", "), t.Kind))
	}
	if (kind == KindMessage || kind == KindSMS) && t.Extra != "" {
		errs = append(errs, automation.Invalid("kind", "a %s template has no data or whatsApp member", kind))
	}
	if utf16Len(t.Extra) > MaxExtraChars {
		errs = append(errs, automation.Invalid("template", "the data or whatsApp members are longer than %d characters together", MaxExtraChars))
	}
	if len(t.Subject) > MaxSubjectBytes {
		errs = append(errs, automation.Invalid(PartSubject, "longer than %d bytes", MaxSubjectBytes))
	}
	if len(t.Text) > MaxBodyBytes || len(t.HTML) > MaxBodyBytes {
		errs = append(errs, automation.Invalid("template", "a body is longer than %d bytes", MaxBodyBytes))
	}
	c := &Compiled{Key: t.Key, BusinessUnitID: t.BusinessUnitID, Version: t.Version, Kind: kind}
	var err error
	switch kind {
	case KindPush:
		errs = append(errs, c.compilePush(t.Extra)...)
	case KindWhatsApp:
		errs = append(errs, c.compileWhatsApp(t.Extra)...)
	}
	if c.subject, err = texttemplate.New(PartSubject).Option("missingkey=error").Parse(t.Subject); err != nil {
		errs = append(errs, automation.Invalid(PartSubject, "does not parse: %s", parseMessage(err)))
	} else if err := checkBounded(c.subject.Tree, len(c.subject.Templates())); err != nil {
		errs = append(errs, automation.Invalid(PartSubject, "%v", err))
	}
	if t.Text != "" {
		if c.text, err = texttemplate.New(PartText).Option("missingkey=error").Parse(t.Text); err != nil {
			errs = append(errs, automation.Invalid(PartText, "does not parse: %s", parseMessage(err)))
		} else if err := checkBounded(c.text.Tree, len(c.text.Templates())); err != nil {
			errs = append(errs, automation.Invalid(PartText, "%v", err))
		}
	}
	if t.HTML != "" {
		if c.html, err = htmltemplate.New(PartHTML).Option("missingkey=error").Parse(t.HTML); err != nil {
			errs = append(errs, automation.Invalid(PartHTML, "does not parse: %s", parseMessage(err)))
		} else if err := checkBounded(c.html.Tree, len(c.html.Templates())); err != nil {
			errs = append(errs, automation.Invalid(PartHTML, "%v", err))
		} else if err := escapeHTML(c.html); err != nil {
			errs = append(errs, automation.Invalid(PartHTML, "cannot be escaped: %s", strings.TrimPrefix(err.Error(), "html/template:")))
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return c, nil
}

func parseMessage(err error) string { return strings.TrimPrefix(err.Error(), "template: ") }

// compileTextPart parses one text/template member named field (bounded as every part is).
func compileTextPart(field, src string) (*texttemplate.Template, error) {
	tp, err := texttemplate.New(field).Option("missingkey=error").Parse(src)
	if err != nil {
		return nil, automation.Invalid(field, "does not parse: %s", parseMessage(err))
	}
	if err := checkBounded(tp.Tree, len(tp.Templates())); err != nil {
		return nil, automation.Invalid(field, "%v", err)
	}
	return tp, nil
}

// decodeExtra decodes a kind's Extra strictly (strictjson.Decode: an unknown member is an
// error naming it).
func decodeExtra(extra string, into any) error {
	err := strictjson.Decode([]byte(extra), into)
	if errors.Is(err, strictjson.ErrTrailing) {
		return errors.New("more than one JSON value")
	}
	return err
}

func (c *Compiled) compilePush(extra string) []error {
	var x PushExtra
	if extra != "" {
		if err := decodeExtra(extra, &x); err != nil {
			return []error{automation.Invalid("data", "is not an object of strings: %v", err)}
		}
	}
	if len(x.Data) > MaxPushDataMembers {
		return []error{automation.Invalid("data", "has %d members, at most %d", len(x.Data), MaxPushDataMembers)}
	}
	var errs []error
	c.data = map[string]*texttemplate.Template{}
	for k, v := range x.Data {
		field := "data." + k
		switch {
		case !pushDataKeyRE.MatchString(k):
			errs = append(errs, automation.Invalid(field, "a data member's name is 1..64 letters, digits, '_', '.' or '-'"))
		case PushDataKeyReserved(k):
			errs = append(errs, automation.Invalid(field, "is reserved by FCM or the push channel (from, notification, message_type, google…, gcm…, deliveryKey, template)"))
		default:
			tp, err := compileTextPart(field, v)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			c.data[k] = tp
		}
	}
	return errs
}

func (c *Compiled) compileWhatsApp(extra string) []error {
	var x WhatsAppExtra
	if extra == "" {
		return []error{automation.Invalid("whatsApp", "is required for a whatsapp template: the approved template's name, language and parameters")}
	}
	if err := decodeExtra(extra, &x); err != nil {
		return []error{automation.Invalid("whatsApp", "is not {\"name\",\"language\",\"parameters\":[…]}: %v", err)}
	}
	var errs []error
	if !waTemplateName.MatchString(x.Name) {
		errs = append(errs, automation.Invalid("whatsApp.name", "must be the approved template's name: 1..512 lower-case letters, digits and '_', got %q", x.Name))
	}
	if !waLanguage.MatchString(x.Language) {
		errs = append(errs, automation.Invalid("whatsApp.language", "must be a language code like vi or en_US, got %q", x.Language))
	}
	if len(x.Parameters) > MaxWhatsAppParameters {
		errs = append(errs, automation.Invalid("whatsApp.parameters", "has %d parameters, at most %d", len(x.Parameters), MaxWhatsAppParameters))
		return errs
	}
	for i, p := range x.Parameters {
		field := fmt.Sprintf("whatsApp.parameters[%d]", i)
		if strings.TrimSpace(p) == "" {
			errs = append(errs, automation.Invalid(field, "is empty: WhatsApp refuses an empty parameter"))
			continue
		}
		tp, err := compileTextPart(field, p)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		c.params = append(c.params, tp)
	}
	c.whatsApp = &WhatsAppExtra{Name: x.Name, Language: x.Language}
	return errs
}

// checkBounded rejects the constructs that could make one render run without bound, even
// without output for the MaxRenderedBytes limit to stop: a {{range}} over a number (a
// literal, len, or a variable assigned one; the render data comes from JSON, which has no
// integers, so every other range is bounded by the payload), and {{define}}, {{block}} and
// {{template}} (templates calling each other can fan out exponentially). A message part is
// one template.
func checkBounded(tree *parse.Tree, templates int) error {
	if tree == nil || tree.Root == nil {
		return nil
	}
	if templates > 1 {
		return errors.New("{{define}} and {{block}} are not allowed: a part is one template")
	}
	walk := func(n parse.Node, visit func(parse.Node) error) error {
		var rec func(n parse.Node) error
		rec = func(n parse.Node) error {
			if n == nil {
				return nil
			}
			if err := visit(n); err != nil {
				return err
			}
			switch x := n.(type) {
			case *parse.ListNode:
				if x == nil {
					return nil
				}
				for _, c := range x.Nodes {
					if err := rec(c); err != nil {
						return err
					}
				}
			case *parse.IfNode:
				return errors.Join(rec(x.List), rec(x.ElseList))
			case *parse.RangeNode:
				return errors.Join(rec(x.List), rec(x.ElseList))
			case *parse.WithNode:
				return errors.Join(rec(x.List), rec(x.ElseList))
			}
			return nil
		}
		return rec(n)
	}
	// The declarations first: a variable that was ever given a number is numeric wherever it
	// is ranged over.
	numericVars := map[string]bool{}
	decls := func(n parse.Node) error {
		var p *parse.PipeNode
		switch x := n.(type) {
		case *parse.ActionNode:
			p = x.Pipe
		case *parse.IfNode:
			p = x.Pipe
		case *parse.WithNode:
			p = x.Pipe
		case *parse.RangeNode:
			p = x.Pipe
		}
		if p != nil && len(p.Decl) > 0 && numericPipe(p, numericVars) {
			for _, v := range p.Decl {
				numericVars[v.Ident[0]] = true
			}
		}
		return nil
	}
	// Declarations can chain ($a := 5, $b := $a): repeat until nothing changes.
	for before := -1; before != len(numericVars); {
		before = len(numericVars)
		_ = walk(tree.Root, decls)
	}
	ranges := func(n parse.Node) error {
		switch x := n.(type) {
		case *parse.TemplateNode:
			return fmt.Errorf("{{template %q}} is not allowed: a part is one template", x.Name)
		case *parse.RangeNode:
			if numericPipe(x.Pipe, numericVars) {
				return fmt.Errorf("line %d: {{range}} over a number is not allowed (range over the data's lists)", x.Line)
			}
		}
		return nil
	}
	return walk(tree.Root, ranges)
}

// numericPipe reports whether pipe may evaluate to an integer: its last command is a number,
// a call of len, a numeric variable, or such a pipeline in parentheses.
func numericPipe(p *parse.PipeNode, numericVars map[string]bool) bool {
	if p == nil || len(p.Cmds) == 0 {
		return false
	}
	for _, cmd := range p.Cmds {
		if len(cmd.Args) > 0 {
			if id, ok := cmd.Args[0].(*parse.IdentifierNode); ok && id.Ident == "len" {
				return true
			}
		}
	}
	last := p.Cmds[len(p.Cmds)-1]
	if len(last.Args) == 0 {
		return false
	}
	switch a := last.Args[0].(type) {
	case *parse.NumberNode:
		return true
	case *parse.VariableNode:
		return len(a.Ident) == 1 && numericVars[a.Ident[0]]
	case *parse.PipeNode:
		return numericPipe(a, numericVars)
	}
	return false
}

// escapeHTML makes html/template escape t now (it does so on first execution) and returns
// the escaping error, if any. The execution runs without data, so it stops at the first
// field; any error that is not html/template's own is not the template's fault.
func escapeHTML(t *htmltemplate.Template) error {
	err := t.Execute(&limitedWriter{w: io.Discard, max: MaxRenderedBytes}, nil)
	var he *htmltemplate.Error
	if errors.As(err, &he) {
		return err
	}
	return nil
}

// errRenderedTooLong stops a render whose part outgrew MaxRenderedBytes.
var errRenderedTooLong = fmt.Errorf("rendered output longer than %d bytes", MaxRenderedBytes)

// limitedWriter fails the write that would take the output past max bytes.
type limitedWriter struct {
	w   io.Writer
	n   int
	max int
}

func (l *limitedWriter) Write(p []byte) (int, error) {
	if l.n+len(p) > l.max {
		return 0, errRenderedTooLong
	}
	l.n += len(p)
	return l.w.Write(p)
}

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
// (see RenderData): JSON nulls count as missing at any depth, so a null field is an error
// too, not a blank, and a null list element is left out. A part longer than
// MaxRenderedBytes is a RenderError.
func (c *Compiled) Render(data map[string]any) (Content, error) {
	data = dropNulls(data)
	out := Content{TemplateVersion: c.Version}
	run := func(part string, exec func(io.Writer) error) (string, error) {
		var b bytes.Buffer
		if err := exec(&limitedWriter{w: &b, max: MaxRenderedBytes}); err != nil {
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
	if out.Subject, err = run(PartSubject, func(w io.Writer) error { return c.subject.Execute(w, data) }); err != nil {
		return Content{}, err
	}
	out.Subject = strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(out.Subject, "\r", " "), "\n", " "))
	if c.text != nil {
		if out.Text, err = run(PartText, func(w io.Writer) error { return c.text.Execute(w, data) }); err != nil {
			return Content{}, err
		}
	}
	if c.html != nil {
		if out.HTML, err = run(PartHTML, func(w io.Writer) error { return c.html.Execute(w, data) }); err != nil {
			return Content{}, err
		}
	}
	out.Kind = c.Kind
	if len(c.data) > 0 {
		out.Data = make(map[string]string, len(c.data))
		for k, tp := range c.data {
			v, err := run("data."+k, func(w io.Writer) error { return tp.Execute(w, data) })
			if err != nil {
				return Content{}, err
			}
			out.Data[k] = v
		}
	}
	if c.whatsApp != nil {
		wa := &WhatsAppTemplate{Name: c.whatsApp.Name, Language: c.whatsApp.Language}
		for i, tp := range c.params {
			v, err := run(fmt.Sprintf("whatsApp.parameters[%d]", i), func(w io.Writer) error { return tp.Execute(w, data) })
			if err != nil {
				return Content{}, err
			}
			if strings.TrimSpace(v) == "" {
				return Content{}, &RenderError{Template: c.Key, Version: c.Version, Part: fmt.Sprintf("whatsApp.parameters[%d]", i),
					Err: errors.New("renders empty: WhatsApp refuses an empty parameter")}
			}
			wa.Values = append(wa.Values, v)
		}
		out.WhatsApp = wa
	}
	return out, nil
}

func dropNulls(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		if v != nil {
			out[k] = dropNullsIn(v)
		}
	}
	return out
}

// dropNullsIn removes JSON nulls from v: map entries and list elements, at any depth.
func dropNullsIn(v any) any {
	switch x := v.(type) {
	case map[string]any:
		return dropNulls(x)
	case []any:
		out := make([]any, 0, len(x))
		for _, e := range x {
			if e != nil {
				out = append(out, dropNullsIn(e))
			}
		}
		return out
	}
	return v
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

// Column bounds of a template's identifiers (characters).
const (
	maxBusinessUnitID = 100
	maxCreatedBy      = 200
)

// Save validates t (Compile) and stores it as the next version of (Key, BusinessUnitID).
// expectedVersion, when non-nil, guards against a concurrent edit (store.ErrConflict).
// Errors: automation.Invalid (nothing stored) for a template that does not parse, a bad
// key or business unit id (at most 100 characters), a missing or over-long (200) CreatedBy.
func (ts *Templates) Save(ctx context.Context, t store.NotificationTemplate, expectedVersion *int64) (store.NotificationTemplate, error) {
	if t.Deleted {
		return store.NotificationTemplate{}, errors.New("Templates.Save: a tombstone is stored by Delete")
	}
	if _, err := Compile(t); err != nil {
		return store.NotificationTemplate{}, err
	}
	if strings.TrimSpace(t.CreatedBy) == "" {
		return store.NotificationTemplate{}, automation.Invalid("createdBy", "is required (the operator saving the template)")
	}
	if utf16Len(t.CreatedBy) > maxCreatedBy {
		return store.NotificationTemplate{}, automation.Invalid("createdBy", "is longer than %d characters", maxCreatedBy)
	}
	if t.BusinessUnitID != "" && (!templateKeyRE.MatchString(t.BusinessUnitID) || len(t.BusinessUnitID) > maxBusinessUnitID) {
		return store.NotificationTemplate{}, automation.Invalid("businessUnitId", "is not a business unit id (1..%d letters, digits or ._~@+/-): %q", maxBusinessUnitID, t.BusinessUnitID)
	}
	return ts.Store.NotificationTemplateSave(ctx, store.NotificationTemplateSaveParams{Template: t, ExpectedVersion: expectedVersion, Now: ts.Clock.Now()})
}

// Delete stores a tombstone as the unit's next version (docs/channels.md#deleting-a-template):
// from then on the unit's deliveries render the default (BusinessUnitID ""), or wait on
// support hold when there is none, until a version is saved again. The versions before it
// stay stored (a delivery's TemplateVersion still names what it rendered); queued
// deliveries render at their send, so they take the default. expectedVersion must be the
// unit's live version (store.ErrConflict otherwise); store.ErrNotFound when the unit has
// none. Errors: automation.Invalid naming "deletedBy" or "businessUnitId"; the default
// itself is deleted with BusinessUnitID "".
func (ts *Templates) Delete(ctx context.Context, key, businessUnitID, deletedBy string, expectedVersion *int64) (store.NotificationTemplate, error) {
	if !templateKeyRE.MatchString(key) {
		return store.NotificationTemplate{}, automation.Invalid("key", "must be 1..200 letters, digits or ._~@+/-, got %q", key)
	}
	if strings.TrimSpace(deletedBy) == "" {
		return store.NotificationTemplate{}, automation.Invalid("deletedBy", "is required (the operator deleting the template)")
	}
	if utf16Len(deletedBy) > maxCreatedBy {
		return store.NotificationTemplate{}, automation.Invalid("deletedBy", "is longer than %d characters", maxCreatedBy)
	}
	if businessUnitID != "" && (!templateKeyRE.MatchString(businessUnitID) || len(businessUnitID) > maxBusinessUnitID) {
		return store.NotificationTemplate{}, automation.Invalid("businessUnitId", "is not a business unit id (1..%d letters, digits or ._~@+/-): %q", maxBusinessUnitID, businessUnitID)
	}
	return ts.Store.NotificationTemplateSave(ctx, store.NotificationTemplateSaveParams{Template: store.NotificationTemplate{Key: key,
		BusinessUnitID: businessUnitID, Kind: KindMessage, CreatedBy: deletedBy, Deleted: true}, ExpectedVersion: expectedVersion, Now: ts.Clock.Now()})
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
