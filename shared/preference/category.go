package preference

import (
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/strictjson"
)

// Category is a kind of message a recipient can opt out of.
type Category struct {
	Name string `json:"name"`
	// Transactional categories (service messages the recipient needs: a password expiry,
	// an order) are not subject to marketing opt-out and pass quiet hours.
	Transactional bool `json:"transactional"`
	// Templates are the template keys whose deliveries are of this category, when the
	// payload does not name one.
	Templates []string `json:"templates,omitempty"`
}

// Registry is the known set of categories. The zero Registry is DefaultRegistry's.
type Registry struct {
	Categories []Category `json:"categories"`
	// Default is the category of a delivery that names none and whose template no category
	// lists ("marketing" by default: a message nobody classified is held to the stricter
	// rule, not sent past an opt-out).
	Default string `json:"default"`
}

// DefaultRegistry: marketing and loyalty (subject to opt-out and quiet hours), service and
// security (transactional; seed 001's password-expiry reminder is "service"). Default
// "marketing".
func DefaultRegistry() Registry {
	return Registry{Default: "marketing", Categories: []Category{
		{Name: "marketing"},
		{Name: "loyalty"},
		{Name: "service", Transactional: true, Templates: []string{"password-expiry"}},
		{Name: "security", Transactional: true},
	}}
}

var categoryName = regexp.MustCompile(`^[a-z][a-z0-9-]{0,39}$`)

// ParseRegistry reads a registry from JSON (AUTOMATION_NOTIFICATION_CATEGORIES): unknown
// members refused, names lower-case letters, digits and '-' (at most 40), unique, the
// default one of them, a template key in one category only. Errors name the member.
func ParseRegistry(b []byte) (Registry, error) {
	var r Registry
	if err := strictjson.Decode(b, &r); err != nil {
		return Registry{}, automation.Invalid("categories", "not a category registry: %v", err)
	}
	return r, r.Validate()
}

// Validate checks r (see ParseRegistry).
func (r Registry) Validate() error {
	var errs []error
	names, tpl := map[string]bool{}, map[string]string{}
	if len(r.Categories) == 0 || len(r.Categories) > 50 {
		errs = append(errs, automation.Invalid("categories", "want 1..50 categories, got %d", len(r.Categories)))
	}
	for i, c := range r.Categories {
		f := fmt.Sprintf("categories[%d]", i)
		if !categoryName.MatchString(c.Name) {
			errs = append(errs, automation.Invalid(f+".name", "%q is not a category name (a-z, 0-9, '-', at most 40)", c.Name))
		}
		if names[c.Name] {
			errs = append(errs, automation.Invalid(f+".name", "%q twice", c.Name))
		}
		names[c.Name] = true
		for j, t := range c.Templates {
			if prev, ok := tpl[t]; ok {
				errs = append(errs, automation.Invalid(fmt.Sprintf("%s.templates[%d]", f, j), "template %q is already in category %q", t, prev))
			}
			tpl[t] = c.Name
		}
	}
	if !names[r.Default] {
		errs = append(errs, automation.Invalid("default", "%q is not one of the categories", r.Default))
	}
	return automation.InvalidFields(errs...)
}

func (r Registry) orDefault() Registry {
	if len(r.Categories) == 0 {
		return DefaultRegistry()
	}
	return r
}

// Lookup returns the category named name.
func (r Registry) Lookup(name string) (Category, bool) {
	for _, c := range r.orDefault().Categories {
		if c.Name == name {
			return c, true
		}
	}
	return Category{}, false
}

// Names returns the category names, sorted.
func (r Registry) Names() []string {
	var out []string
	for _, c := range r.orDefault().Categories {
		out = append(out, c.Name)
	}
	sort.Strings(out)
	return out
}

// Of returns the category of a delivery of template whose payload is payloadJSON: the
// payload's top-level "category" string when it names a known category, else the category
// that lists the template, else the default. A payload naming an unknown category gets the
// default (the stricter rule) and ok false, so the caller can say so.
func (r Registry) Of(template, payloadJSON string) (c Category, ok bool) {
	r = r.orDefault()
	ok = true
	if strings.Contains(payloadJSON, `"category"`) {
		var p struct {
			Category *string `json:"category"`
		}
		if json.Unmarshal([]byte(payloadJSON), &p) == nil && p.Category != nil {
			if c, found := r.Lookup(*p.Category); found {
				return c, true
			}
			ok = false
		}
	}
	if ok {
		for _, c := range r.Categories {
			for _, t := range c.Templates {
				if t == template {
					return c, true
				}
			}
		}
	}
	c, _ = r.Lookup(r.Default)
	return c, ok
}
