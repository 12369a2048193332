package httpapi

import (
	"context"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Header names read by Caller.
const (
	// HeaderBusinessUnits narrows the business units a request may see: a comma-separated
	// list of ids, or "*". Set by the front door in Azure (strip it from client requests
	// there); a local caller may set it to look as a narrower tenant.
	HeaderBusinessUnits = "X-Automation-Business-Units"
	// HeaderOperator names the person acting, for audits, when App Service authentication
	// (X-MS-CLIENT-PRINCIPAL-NAME) is not in front.
	HeaderOperator       = "X-Automation-Operator"
	headerPrincipalName  = "X-MS-CLIENT-PRINCIPAL-NAME"
	maxOperatorNameBytes = 200
)

// Scope is the set of business units a caller may see. The zero Scope sees none.
type Scope struct {
	all   bool
	units []string // sorted, unique; nil when all
}

// AllBusinessUnits is the scope that sees every business unit.
func AllBusinessUnits() Scope { return Scope{all: true} }

// BusinessUnits returns the scope of exactly ids ("*" among them means all); ids are
// trimmed, empty ones ignored, duplicates dropped. O(n log n): a header of many ids
// costs no more than sorting them.
func BusinessUnits(ids ...string) Scope {
	var s Scope
	for _, id := range ids {
		id = strings.TrimSpace(id)
		switch {
		case id == "*":
			return AllBusinessUnits()
		case id != "":
			s.units = append(s.units, id)
		}
	}
	sort.Strings(s.units)
	s.units = slices.Compact(s.units)
	return s
}

// ParseScope parses a comma-separated list of business-unit ids, or "*".
func ParseScope(list string) Scope { return BusinessUnits(strings.Split(list, ",")...) }

// All reports whether the scope sees every business unit.
func (s Scope) All() bool { return s.all }

// Units returns the ids the scope sees, sorted; nil when All (or none).
func (s Scope) Units() []string { return slices.Clone(s.units) }

// Allows reports whether the scope sees business unit id.
func (s Scope) Allows(id string) bool {
	if s.all {
		return true
	}
	_, found := slices.BinarySearch(s.units, id)
	return found
}

// Intersect returns the business units both scopes see.
func (s Scope) Intersect(o Scope) Scope {
	switch {
	case s.all:
		return o
	case o.all:
		return s
	}
	var out Scope
	for _, id := range s.units {
		if o.Allows(id) {
			out.units = append(out.units, id)
		}
	}
	return out
}

// String is "*" or the sorted ids joined by commas (stable: used in idempotency scopes).
func (s Scope) String() string {
	if s.all {
		return "*"
	}
	return strings.Join(s.units, ",")
}

// Caller is who makes a request: the business units they may see and their name for audits.
type Caller struct {
	Scope    Scope
	Operator string // "" when nobody named themselves
}

type callerKey struct{}

// WithCaller returns ctx carrying c.
func WithCaller(ctx context.Context, c Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

// CallerFrom returns the Caller of a request handled through API.Handler. Without one the
// caller sees nothing (fail closed).
func CallerFrom(ctx context.Context) Caller {
	c, _ := ctx.Value(callerKey{}).(Caller)
	return c
}

// operatorName cleans a header value for audit records: trimmed, control characters and
// bidirectional-text controls (which can make an audit line display as another name)
// removed, at most maxOperatorNameBytes.
func operatorName(v string) string {
	v = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return -1
		}
		return r
	}, strings.TrimSpace(v))
	if len(v) > maxOperatorNameBytes {
		v = strings.ToValidUTF8(v[:maxOperatorNameBytes], "")
	}
	return v
}
