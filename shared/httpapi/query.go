package httpapi

import (
	"maps"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// Query reads a request's query string strictly: Check rejects parameters the route does not
// know and repeated ones, and the getters return CodeMalformed errors naming the parameter.
type Query struct{ v url.Values }

// NewQuery wraps v.
func NewQuery(v url.Values) Query { return Query{v: v} }

// Check returns a CodeMalformed error listing parameters not in allowed, or given twice.
func (q Query) Check(allowed ...string) error {
	var errs []error
	names := slices.AppendSeq(make([]string, 0, len(q.v)), maps.Keys(q.v)) // one allocation a request
	slices.Sort(names)
	for _, name := range names {
		switch {
		case !slices.Contains(allowed, name):
			errs = append(errs, &automation.Error{Code: automation.CodeMalformed, Field: name,
				Message: "unknown query parameter; known: " + strings.Join(allowed, ", ")})
		case len(q.v[name]) > 1:
			errs = append(errs, &automation.Error{Code: automation.CodeMalformed, Field: name, Message: "given more than once"})
		}
	}
	return automation.JoinFields(automation.CodeMalformed, errs...)
}

// String returns the parameter's value ("" when absent).
func (q Query) String(name string) string { return q.v.Get(name) }

// Bool returns the parameter as a boolean ("true"/"false"); nil when absent.
func (q Query) Bool(name string) (*bool, error) {
	s, ok := q.get(name)
	if !ok {
		return nil, nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil || (s != "true" && s != "false") {
		return nil, &automation.Error{Code: automation.CodeMalformed, Field: name, Message: "must be true or false"}
	}
	return &b, nil
}

// Int returns the parameter as an integer in [min, max]; def when absent.
func (q Query) Int(name string, def, min, max int) (int, error) {
	s, ok := q.get(name)
	if !ok {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < min || n > max {
		return 0, &automation.Error{Code: automation.CodeMalformed, Field: name,
			Message: "must be an integer from " + strconv.Itoa(min) + " to " + strconv.Itoa(max)}
	}
	return n, nil
}

// Time returns the parameter as an RFC 3339 instant, converted to UTC; nil when absent.
func (q Query) Time(name string) (*time.Time, error) {
	s, ok := q.get(name)
	if !ok {
		return nil, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return nil, &automation.Error{Code: automation.CodeMalformed, Field: name,
			Message: "must be an RFC 3339 instant such as 2026-11-30T09:00:00Z"}
	}
	t = t.UTC()
	return &t, nil
}

func (q Query) get(name string) (string, bool) {
	if _, ok := q.v[name]; !ok {
		return "", false
	}
	return q.v.Get(name), true
}
