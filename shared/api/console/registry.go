package console

import (
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"strconv"
	"strings"

	"github.com/kylelemons/godebug/diff"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/store"
)

// RegistryPages is the event registry page (docs/gateway.md#the-registry,
// docs/console.md#registry): the event types (latest version, operator, class); for
// ?eventType= every version with its definition, an edit form holding the latest one, a
// rollback form per earlier version, and the diff between two versions (?from=&to=, line by
// line of the indented definitions); a form to create an event type.
//
// POST saves through gateway.Admin.Save, the registry API's service (the same checks, the
// operator recorded on the version, the cache invalidated):
//
//	action=check     eventType, definition: the checker alone (the schema compiled, the
//	                 class and routes checked); nothing is saved
//	action=create    eventType, definition, operator         (the type must not exist)
//	action=save      eventType, version, definition, operator
//	action=rollback  eventType, version, toVersion, operator (saves toVersion's definition
//	                 as the next version)
//
// The version is the latest as the page showed it (the API's If-Match): a type saved since
// answers 412 with the registry as it is now; a definition the checker refuses 422 naming
// the member (a JSON Pointer) with the posted text kept in the form; an existing type
// (create) 409; no version 428. The registry is platform-wide: a caller that does not see
// every business unit is told so and shown nothing of it; its POST is 404 (as the registry
// API answers it).
func RegistryPages(admin *gateway.Admin) []Page {
	rp := registryPages{admin: admin}
	return []Page{{Path: "registry", Title: "Event registry", Render: rp.get, Post: rp.post}}
}

type registryPages struct{ admin *gateway.Admin }

func (rp registryPages) get(r *http.Request, pc PageCall) (template.HTML, error) {
	q := r.URL.Query()
	d := registryPage{EventType: strings.TrimSpace(q.Get("eventType"))}
	from, to := strings.TrimSpace(q.Get("from")), strings.TrimSpace(q.Get("to"))
	if from != "" || to != "" {
		var err error
		if d.DiffFrom, err = strconv.ParseInt(from, 10, 64); err != nil || d.DiffFrom < 1 {
			return "", automation.Invalid("from", "must be a version number")
		}
		if d.DiffTo, err = strconv.ParseInt(to, 10, 64); err != nil || d.DiffTo < 1 {
			return "", automation.Invalid("to", "must be a version number")
		}
	}
	return rp.render(r, pc, d)
}

func (rp registryPages) render(r *http.Request, pc PageCall, d registryPage) (template.HTML, error) {
	d.Platform, d.CSRFField, d.Operator = pc.Caller.Scope.All(), pc.CSRFField, pc.Caller.Operator
	if !d.Platform {
		return execute(registryTemplates, "registry", d)
	}
	ctx := r.Context()
	es, err := rp.admin.Store.EventRegistryListLatest(ctx)
	if err != nil {
		return "", err
	}
	for _, e := range es {
		d.Types = append(d.Types, registryEntryOf(e))
	}
	if d.EventType != "" && !d.Creating {
		vs, err := rp.admin.Store.EventRegistryListVersions(ctx, d.EventType)
		if err != nil {
			return "", err
		}
		if len(vs) == 0 {
			return "", automation.Errorf(automation.CodeNotFound, "event type %q not found", d.EventType)
		}
		for i := len(vs) - 1; i >= 0; i-- { // newest first
			d.Versions = append(d.Versions, registryEntryOf(vs[i]))
		}
		d.Latest = d.Versions[0]
		if d.Draft == "" {
			d.Draft = d.Latest.Definition
		}
		if d.DiffFrom > 0 {
			a, b := d.version(d.DiffFrom), d.version(d.DiffTo)
			if a == nil || b == nil {
				return "", automation.Invalid("from", "%s has versions 1..%d", d.EventType, d.Latest.Version)
			}
			d.Diff = diffLines(a.Definition, b.Definition)
		}
	}
	return execute(registryTemplates, "registry", d)
}

func (rp registryPages) post(r *http.Request, pc PageCall) (template.HTML, error) {
	if !pc.Caller.Scope.All() {
		return "", automation.Errorf(automation.CodeNotFound, "the event registry is platform-wide")
	}
	f := r.PostForm
	action, eventType, op := f.Get("action"), strings.TrimSpace(f.Get("eventType")), pageOperator(r, pc)
	d := registryPage{EventType: eventType, Draft: f.Get("definition")}
	var expected int64
	var def []byte
	switch action {
	case "check":
		// The checker alone (the same one Save runs first): nothing is saved.
		d.Creating = f.Get("version") == ""
		c, err := rp.admin.Checker.CheckDefinition([]byte(d.Draft))
		var ref *gateway.Refusal
		if errors.As(err, &ref) {
			err = ref.AsAutomation()
		}
		if err == nil {
			d.Notice = fmt.Sprintf("The definition of %s is valid (class %s). Nothing was saved.", c.EventType, c.Class)
			if d.Creating {
				d.EventType, d.NewType = "", eventType
			}
			return rp.render(r, pc, d)
		}
		p := problemOf(err)
		if d.Creating {
			d.EventType, d.NewType = "", eventType
		}
		d.Problem = p
		body, rerr := rp.render(r, pc, d)
		if rerr != nil {
			return "", rerr
		}
		return "", &Refused{Status: p.Status, Body: body}
	case "create":
		d.Creating, def = true, []byte(d.Draft)
	case "save", "rollback":
		v, err := formVersion(f.Get("version"), "event type")
		if err != nil {
			return "", err
		}
		expected, def = v, []byte(d.Draft)
		if action == "rollback" {
			to, err := strconv.ParseInt(strings.TrimSpace(f.Get("toVersion")), 10, 64)
			if err != nil || to < 1 {
				return "", automation.Invalid("toVersion", "must be the version to roll back to")
			}
			old, err := rp.admin.Store.EventRegistryGet(r.Context(), store.EventRegistryGetParams{EventType: eventType, Version: to})
			if err != nil {
				return "", err
			}
			def, d.Draft = []byte(old.DefinitionJSON), ""
		}
	default:
		return "", automation.Invalid("action", "must be create, save or rollback, not %q", action)
	}
	if eventType == "" {
		return "", automation.Invalid("eventType", "is required")
	}
	var err error
	if op == "" {
		err = automation.Invalid("operator", "is required (the version records who saved it)")
	}
	var e store.EventRegistryEntry
	if err == nil {
		e, err = rp.admin.Save(r.Context(), gateway.SaveParams{EventType: eventType, ExpectedVersion: expected, Definition: def, Operator: op})
	}
	if err == nil {
		d = registryPage{EventType: e.EventType, Notice: fmt.Sprintf("%s version %d saved by %s (%s).", e.EventType, e.Version, e.Operator, action)}
		return rp.render(r, pc, d)
	}
	if errors.Is(err, store.ErrNotFound) || automation.CodeOf(err) == automation.CodeNotFound {
		return "", err
	}
	d.Problem = problemOf(err)
	switch {
	case isStale(err):
		d.Draft = "" // show the version in force; the refused text is in the message
		d.Problem = &problem{Status: http.StatusPreconditionFailed, Title: "The event type changed since you loaded it",
			Detail: fmt.Sprintf("You edited version %d; %s. Nothing was saved; the registry below is as it is now.", expected, httpProblemDetail(err))}
	case errors.Is(err, store.ErrConflict):
		d.Problem = &problem{Status: http.StatusConflict, Title: "The event type exists", Detail: fmt.Sprintf("%s is registered already: edit it instead. Nothing was saved.", eventType)}
		d.Creating, d.Draft = false, ""
	}
	if d.Creating && d.Problem.Status != http.StatusConflict {
		d.EventType = "" // nothing is stored under it yet: the create form shows the draft
		d.NewType = eventType
	}
	body, rerr := rp.render(r, pc, d)
	if rerr != nil {
		return "", rerr
	}
	return "", &Refused{Status: d.Problem.Status, Body: body}
}

func httpProblemDetail(err error) string { return problemOf(err).Detail }

// diffLines is the line diff of a and b: each line with "+", "-" or " ".
func diffLines(a, b string) []diffLine {
	var out []diffLine
	for _, c := range diff.DiffChunks(strings.Split(a, "\n"), strings.Split(b, "\n")) {
		for _, l := range c.Deleted {
			out = append(out, diffLine{"-", l})
		}
		for _, l := range c.Added {
			out = append(out, diffLine{"+", l})
		}
		for _, l := range c.Equal {
			out = append(out, diffLine{" ", l})
		}
	}
	return out
}

type diffLine struct{ Op, Text string }

type registryPage struct {
	EventType        string
	NewType          string // the create form's type after a refusal
	Platform         bool
	Creating         bool
	Operator         string
	CSRFField        template.HTML
	Types            []registryEntry
	Versions         []registryEntry
	Latest           registryEntry
	Draft            string // the edit form's text
	DiffFrom, DiffTo int64
	Diff             []diffLine
	Notice           string
	Problem          *problem
}

func (d *registryPage) version(v int64) *registryEntry {
	for i := range d.Versions {
		if d.Versions[i].Version == v {
			return &d.Versions[i]
		}
	}
	return nil
}

type registryEntry struct {
	store.EventRegistryEntry
	Class      string
	Definition string // indented JSON
}

func registryEntryOf(e store.EventRegistryEntry) registryEntry {
	out := registryEntry{EventRegistryEntry: e}
	var head struct {
		Class string `json:"class"`
	}
	_ = json.Unmarshal([]byte(e.DefinitionJSON), &head)
	out.Class = head.Class
	var v any
	if json.Unmarshal([]byte(e.DefinitionJSON), &v) == nil {
		b, _ := json.MarshalIndent(v, "", "  ")
		out.Definition = string(b)
	}
	return out
}

var registryTemplates = template.Must(template.New("registry").Funcs(funcs).Parse(`{{define "registry"}}
{{if not .Platform}}<p class="note" id="registry-scope">The event registry is platform-wide: it is shown to callers who see every business unit.</p>{{else}}
{{with .Problem}}<div class="alert error" role="alert" id="registry-problem"><h2>{{.Title}} ({{.Status}})</h2>{{with .Detail}}<p>{{.}}</p>{{end}}{{if .Fields}}<ul>{{range .Fields}}<li>{{.Field}}: {{.Message}}</li>{{end}}</ul>{{end}}</div>{{end}}
{{with .Notice}}<div class="alert notice" role="status" id="registry-notice">{{.}}</div>{{end}}
<div class="scroll"><table id="registry-types"><caption>Event types (latest version)</caption>
<thead><tr><th scope="col">Event type</th><th scope="col">Class</th><th scope="col">Version</th><th scope="col">Saved by</th><th scope="col">Saved (UTC)</th></tr></thead>
<tbody>{{range .Types}}<tr><th scope="row"><a href="/api/console/registry?eventType={{.EventType}}">{{.EventType}}</a></th><td>{{.Class}}</td><td>{{.Version}}</td><td>{{.Operator}}</td><td>{{when .CreatedOn}}</td></tr>
{{else}}<tr><td colspan="5">No event types: import a registry file (serve -registry) or use the registry API.</td></tr>{{end}}</tbody></table></div>
{{if .Versions}}<h2 id="edit">Edit {{.EventType}} (version {{.Latest.Version}})</h2>
<form method="post" action="/api/console/registry" class="card" id="registry-edit">{{.CSRFField}}
<input type="hidden" name="eventType" value="{{.EventType}}"><input type="hidden" name="version" value="{{.Latest.Version}}">
<label for="rg-def">Definition (JSON; checked on save: the schema, the class, the routes)</label><textarea id="rg-def" name="definition" rows="16" required spellcheck="false">{{.Draft}}</textarea>
<label for="rg-op">Operator</label><input id="rg-op" name="operator" value="{{.Operator}}"{{if .Operator}} readonly{{end}} required>
<button type="submit" name="action" value="check" id="registry-check">Check</button> <button type="submit" name="action" value="save">Save as version {{.Latest.Version}} + 1</button></form>
{{if gt (len .Versions) 1}}<form method="get" action="/api/console/registry" class="filters" aria-label="Compare versions" id="registry-diff-form"><input type="hidden" name="eventType" value="{{.EventType}}">
<div><label for="rg-from">From version</label><input id="rg-from" name="from" inputmode="numeric" value="{{if .DiffFrom}}{{.DiffFrom}}{{else}}{{(index .Versions 1).Version}}{{end}}" required></div>
<div><label for="rg-to">To version</label><input id="rg-to" name="to" inputmode="numeric" value="{{if .DiffTo}}{{.DiffTo}}{{else}}{{.Latest.Version}}{{end}}" required></div>
<div><button type="submit">Compare</button></div></form>{{end}}
{{if .Diff}}<h2 id="diff">Version {{.DiffFrom}} → {{.DiffTo}}</h2><pre class="json diff" id="registry-diff">{{range .Diff}}<span class="{{if eq .Op "+"}}added{{else if eq .Op "-"}}deleted{{else}}same{{end}}">{{.Op}} {{.Text}}</span>
{{end}}</pre>{{end}}
<h2 id="versions">{{.EventType}}: every version, newest first</h2>
{{range .Versions}}<details{{if eq .Version $.Latest.Version}} open{{end}}><summary>Version {{.Version}} · {{.Operator}} · {{when .CreatedOn}}</summary><pre class="json">{{.Definition}}</pre>
{{if ne .Version $.Latest.Version}}<form method="post" action="/api/console/registry" id="rollback-{{.Version}}">{{$.CSRFField}}
<input type="hidden" name="action" value="rollback"><input type="hidden" name="eventType" value="{{.EventType}}"><input type="hidden" name="version" value="{{$.Latest.Version}}"><input type="hidden" name="toVersion" value="{{.Version}}">
<label for="rb-op-{{.Version}}">Operator</label><input id="rb-op-{{.Version}}" name="operator" value="{{$.Operator}}"{{if $.Operator}} readonly{{end}} required>
<button type="submit">Roll back to version {{.Version}}</button></form>{{end}}</details>{{end}}{{end}}
<h2 id="create">Register an event type</h2>
<form method="post" action="/api/console/registry" class="card" id="registry-create">{{.CSRFField}}
<label for="rc-type">Event type</label><input id="rc-type" name="eventType" value="{{.NewType}}" required maxlength="200">
<label for="rc-def">Definition (JSON)</label><textarea id="rc-def" name="definition" rows="10" required spellcheck="false">{{if .NewType}}{{.Draft}}{{end}}</textarea>
<label for="rc-op">Operator</label><input id="rc-op" name="operator" value="{{.Operator}}"{{if .Operator}} readonly{{end}} required>
<button type="submit" name="action" value="check">Check</button> <button type="submit" name="action" value="create">Register</button></form>{{end}}{{end}}`))
