package console

import (
	"bytes"
	"context"
	"html/template"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// UnitLister lists business units: store.LifecycleStore's BusinessUnitList (the store).
type UnitLister interface {
	BusinessUnitList(ctx context.Context, p store.BusinessUnitListParams) ([]store.BusinessUnitRecord, error)
}

// MaxPickerUnits bounds the units a picker lists (one page of the store, by id). A caller
// who sees more gets a text box with the first MaxPickerUnits as suggestions (a datalist),
// so no unit becomes unreachable.
const MaxPickerUnits = 200

// unitPicker is the business-unit control of a form (docs/console.md#business-units): a
// <select> of the units the caller's scope sees (id and name), so nobody types an id and
// nobody is offered a unit they may not use; "all you may see" first unless one is
// required. More units than MaxPickerUnits: a text box with those as suggestions.
type unitPicker struct {
	ID, Name, Selected string
	Required           bool
	Units              []unitOption
	More               bool // more units than listed: a text box with suggestions
}

type unitOption struct {
	ID, Name string
}

// pickerUnits reads the units scope sees for a picker (nil lister: none, and the picker is a
// text box).
func pickerUnits(ctx context.Context, l UnitLister, scope automation.Scope) ([]unitOption, bool, error) {
	if l == nil {
		return nil, true, nil
	}
	us, err := l.BusinessUnitList(ctx, store.BusinessUnitListParams{Scope: scope, Limit: MaxPickerUnits + 1})
	if err != nil {
		return nil, false, err
	}
	more := len(us) > MaxPickerUnits
	us = us[:min(len(us), MaxPickerUnits)]
	out := make([]unitOption, 0, len(us))
	for _, u := range us {
		out = append(out, unitOption{ID: u.ID, Name: u.Name})
	}
	return out, more, nil
}

var unitPickerTemplate = template.Must(template.New("unitPicker").Parse(unitPickerHTML))

// unitPickerHTML is the picker's markup, also the "unitPicker" block of the built-in pages
// (templates/units.html holds the same text).
const unitPickerHTML = `{{define "unitPicker"}}<label for="{{.ID}}">Business unit</label>
{{if .More}}<input id="{{.ID}}" name="{{.Name}}" value="{{.Selected}}" list="{{.ID}}-list" autocomplete="off"{{if .Required}} required{{else}} placeholder="all you may see"{{end}}>
<datalist id="{{.ID}}-list">{{range .Units}}<option value="{{.ID}}">{{.Name}}</option>{{end}}</datalist>
{{else}}<select id="{{.ID}}" name="{{.Name}}"{{if .Required}} required{{end}}>
{{if .Required}}<option value="">Choose a business unit</option>{{else}}<option value="">All you may see</option>{{end}}
{{range .Units}}<option value="{{.ID}}"{{if eq .ID $.Selected}} selected{{end}}>{{.Name}} ({{.ID}})</option>{{end}}
</select>{{end}}{{end}}`

// UnitSelect renders the business-unit picker for a Page's form: a <select> named
// businessUnitId with id, of the units the caller sees, selected pre-selected. Errors: the
// store's.
func (pc PageCall) UnitSelect(ctx context.Context, id, selected string, required bool) (template.HTML, error) {
	p, err := pc.picker(ctx, id, selected, required)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := unitPickerTemplate.ExecuteTemplate(&b, "unitPicker", p); err != nil {
		return "", err
	}
	return template.HTML(b.String()), nil
}

// chosenUnit renders a page's required unit picker (id, bu selected) and says whether the
// page has a unit to show: false when none is chosen yet (the page is its picker). Errors:
// a unit outside the caller's scope is 404 like an unknown one (inScope); the store's.
func (pc PageCall) chosenUnit(ctx context.Context, id, bu string) (template.HTML, bool, error) {
	picker, err := pc.UnitSelect(ctx, id, bu, true)
	if err != nil || bu == "" {
		return picker, false, err
	}
	return picker, true, inScope(pc, bu)
}

func (pc PageCall) picker(ctx context.Context, id, selected string, required bool) (unitPicker, error) {
	units, more, err := pickerUnits(ctx, pc.units, pc.Caller.Scope)
	if err != nil {
		return unitPicker{}, err
	}
	return unitPicker{ID: id, Name: "businessUnitId", Selected: selected, Required: required, Units: units, More: more}, nil
}

// picker is the picker of a built-in page.
func (c *Console) picker(ctx context.Context, x *call, id, selected string, required bool) (unitPicker, error) {
	return PageCall{Caller: x.caller, units: c.deps.Units}.picker(ctx, id, selected, required)
}
