package gateway

import (
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// checkRefCycle refuses a compiled data schema in which a chain of keywords that apply to
// the same instance location ($ref, $dynamicRef, allOf, anyOf, oneOf, not, if/then/else,
// dependentSchemas) loops back on itself: the validator would report "reference cycle" for
// every event of the type (a broken definition blamed on the event), so it is refused when
// saved, naming the schema member where the loop closes. Recursion that descends into the
// data (properties, items, …) is not a cycle. url is the schema's resource URL.
func checkRefCycle(root *jsonschema.Schema, url string) error {
	// Every schema reachable from root, by any keyword.
	seen := map[*jsonschema.Schema]bool{}
	var all []*jsonschema.Schema
	stack := []*jsonschema.Schema{root}
	for len(stack) > 0 {
		s := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if s == nil || seen[s] {
			continue
		}
		seen[s] = true
		all = append(all, s)
		stack = append(stack, sameLocation(s)...)
		stack = append(stack, descending(s)...)
	}
	// Depth-first search over the same-location edges only: a back edge is a cycle.
	const (
		white = iota
		grey
		black
	)
	color := make(map[*jsonschema.Schema]int, len(all))
	var found *jsonschema.Schema
	var visit func(s *jsonschema.Schema) bool
	visit = func(s *jsonschema.Schema) bool {
		color[s] = grey
		for _, n := range sameLocation(s) {
			switch color[n] {
			case grey:
				found = n
				return true
			case white:
				if visit(n) {
					return true
				}
			}
		}
		color[s] = black
		return false
	}
	for _, s := range all {
		if color[s] == white && visit(s) {
			p := "/schema"
			if rest, ok := strings.CutPrefix(found.Location, url+"#"); ok {
				p += rest
			}
			return refuse(p, "not a usable JSON Schema: its references form a cycle that never descends into data (%s refers back to itself)", found.Location)
		}
	}
	return nil
}

// sameLocation are the subschemas a schema applies to the same instance location.
func sameLocation(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(ss ...*jsonschema.Schema) {
		for _, x := range ss {
			if x != nil {
				out = append(out, x)
			}
		}
	}
	add(s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else)
	if s.DynamicRef != nil {
		add(s.DynamicRef.Ref)
	}
	add(s.AllOf...)
	add(s.AnyOf...)
	add(s.OneOf...)
	for _, x := range s.DependentSchemas {
		add(x)
	}
	for _, v := range s.Dependencies {
		if x, ok := v.(*jsonschema.Schema); ok {
			add(x)
		}
	}
	return out
}

// descending are the subschemas a schema applies to members or items of the instance.
func descending(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(v any) {
		switch x := v.(type) {
		case *jsonschema.Schema:
			if x != nil {
				out = append(out, x)
			}
		case []*jsonschema.Schema:
			for _, y := range x {
				if y != nil {
					out = append(out, y)
				}
			}
		}
	}
	add(s.PropertyNames)
	for _, x := range s.Properties {
		add(x)
	}
	for _, x := range s.PatternProperties {
		add(x)
	}
	add(s.AdditionalProperties)
	add(s.UnevaluatedProperties)
	add(s.Contains)
	add(s.Items)
	add(s.AdditionalItems)
	add(s.PrefixItems)
	add(s.Items2020)
	add(s.UnevaluatedItems)
	add(s.ContentSchema)
	return out
}
