package automation

import (
	"slices"
	"sort"
	"strings"
)

// Scope is the set of business units a caller may see: every API, service and store read
// of tenant data takes one. It is the single definition of tenant isolation: a resource
// of a business unit outside the scope is "not found", never "forbidden", so ids cannot be
// probed. The zero Scope sees none (fail closed); build one with AllBusinessUnits,
// BusinessUnits or ParseScope. A Scope is a value: safe to copy and to share.
type Scope struct {
	all   bool
	units []string // sorted, unique; nil when all
}

// AllBusinessUnits is the scope that sees every business unit (internal callers: handlers,
// sweeps, replay set-up, and an API whose caller is not narrowed).
func AllBusinessUnits() Scope { return Scope{all: true} }

// BusinessUnits returns the scope of exactly ids ("*" among them means all); ids are
// trimmed, empty ones ignored, duplicates dropped. O(n log n): a header of many ids
// costs no more than sorting them. No ids (or only empty ones) is the scope of none.
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

// ParseScope parses a comma-separated list of business-unit ids, or "*" (the form of the
// X-Automation-Business-Units header and of the *_BUSINESS_UNITS settings). "" is none.
func ParseScope(list string) Scope { return BusinessUnits(strings.Split(list, ",")...) }

// All reports whether the scope sees every business unit.
func (s Scope) All() bool { return s.all }

// Units returns the ids the scope sees, sorted (a copy); nil when All (or none).
func (s Scope) Units() []string { return slices.Clone(s.units) }

// Allows reports whether the scope sees business unit id. O(log n).
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

// String is "*" or the sorted ids joined by commas ("" for none). Stable: it is part of
// Idempotency-Key scopes.
func (s Scope) String() string {
	if s.all {
		return "*"
	}
	return strings.Join(s.units, ",")
}
