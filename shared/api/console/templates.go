package console

import (
	"fmt"
	"html/template"
	"strings"
	"time"
)

// pageNames are the templates under templates/, each rendered inside layout.html.
var pageNames = []string{"error", "login", "overview", "rows", "row", "releases", "watch", "unknown", "reports", "extension"}

var funcs = template.FuncMap{
	// when writes an instant as UTC, to the second ("2026-10-03 16:30:00Z").
	"when": func(t any) string {
		switch v := t.(type) {
		case time.Time:
			if v.IsZero() {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04:05Z")
		case *time.Time:
			if v == nil {
				return ""
			}
			return v.UTC().Format("2006-01-02 15:04:05Z")
		}
		return fmt.Sprint(t)
	},
	// age writes seconds as a short duration ("3h 4m", "42s").
	"age": func(s *int64) string {
		if s == nil {
			return "—"
		}
		return ageLabel(*s)
	},
	"deref": func(p *int) int {
		if p == nil {
			return 0
		}
		return *p
	},
	"lower": strings.ToLower,
	// units writes the business units figures cover: "every business unit" for the scope
	// of every unit (automation.Scope's "*", which no operator should have to decode), else
	// the ids joined by ", ".
	"units": unitsText,
	// nextAction writes a campaign execution's next action: "action 2" while it runs, "none
	// (COMPLETED)" once it ended (its CurrentIndex then points past the chain, which read
	// as "Next action 1" on a finished execution).
	"nextAction": nextActionText,
	// zone writes a time-zone id with a line-break opportunity after each slash
	// ("Australia/<wbr>Sydney"), so a narrow card breaks it there and never inside a word.
	"zone": func(id string) template.HTML {
		parts := strings.Split(id, "/")
		for i, p := range parts {
			parts[i] = template.HTMLEscapeString(p)
		}
		return template.HTML(strings.Join(parts, "/<wbr>"))
	},
	// dict makes a map of name/value pairs, the argument of a shared block.
	"dict": func(kv ...any) map[string]any {
		m := make(map[string]any, len(kv)/2)
		for i := 0; i+1 < len(kv); i += 2 {
			m[fmt.Sprint(kv[i])] = kv[i+1]
		}
		return m
	},
	// picker is the business-unit picker of a built-in page's form: the units of the page
	// ($, a *pageData), the control's id, the unit selected, and whether one is required.
	"picker": func(p *pageData, id, selected string, required bool) unitPicker {
		return unitPicker{ID: id, Name: "businessUnitId", Selected: selected, Required: required, Units: p.Units, More: p.UnitsMore}
	},
	// list makes a slice of its arguments (a select's options).
	"list": func(v ...string) []string { return v },
	"isCurrent": func(current, path string) bool {
		if path == "/" {
			return current == "/"
		}
		return current == path || strings.HasPrefix(current, path+"/")
	},
}

// nextActionText is the "nextAction" template function (status: store.ExecutionStatus).
func nextActionText(status any, index int) string {
	if st := fmt.Sprint(status); st != "RUNNING" {
		return "none (" + st + ")"
	}
	return fmt.Sprintf("action %d", index)
}

// unitsText is the "units" template function.
func unitsText(ids []string) string {
	if len(ids) == 0 || (len(ids) == 1 && ids[0] == "*") {
		return "every business unit"
	}
	return strings.Join(ids, ", ")
}

func parsePages() map[string]*template.Template {
	out := map[string]*template.Template{}
	for _, n := range pageNames {
		t := template.Must(template.New(n).Funcs(funcs).ParseFS(assets, "templates/layout.html", "templates/"+n+".html"))
		out[n] = template.Must(t.Parse(unitPickerHTML))
	}
	return out
}
