package automation_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
)

// TestScope is the one table of tenant isolation: how a scope is built and what it sees.
// Every API, service and store read takes an automation.Scope, so these rows are the rule.
func TestScope(t *testing.T) {
	t.Parallel()
	ab := automation.BusinessUnits("bu-a", "bu-b")
	cases := []struct {
		name    string
		scope   automation.Scope
		all     bool
		units   []string // Units()
		str     string   // String()
		allows  []string
		refuses []string
	}{
		{"all", automation.AllBusinessUnits(), true, nil, "*", []string{"bu-a", "bu-zzz", ""}, nil},
		{"zero sees none", automation.Scope{}, false, nil, "", nil, []string{"bu-a", "", "*"}},
		{"no ids sees none", automation.BusinessUnits(), false, nil, "", nil, []string{"bu-a", ""}},
		{"exact ids", automation.BusinessUnits("bu-b", "bu-a"), false, []string{"bu-a", "bu-b"}, "bu-a,bu-b",
			[]string{"bu-a", "bu-b"}, []string{"bu-c", "bu", "bu-a ", "BU-A", "", "*"}},
		{"star means all", automation.ParseScope("*"), true, nil, "*", []string{"bu-x"}, nil},
		{"star among ids means all", automation.BusinessUnits("bu-a", " * "), true, nil, "*", []string{"bu-x"}, nil},
		{"whitespace and empty ids ignored", automation.ParseScope(" bu-b, bu-a,, ,"), false, []string{"bu-a", "bu-b"}, "bu-a,bu-b",
			[]string{"bu-a", "bu-b"}, []string{"", " bu-a"}},
		{"empty list sees none", automation.ParseScope(""), false, nil, "", nil, []string{"", "x"}},
		{"only separators sees none", automation.ParseScope(" , ,"), false, nil, "", nil, []string{""}},
		{"duplicates dropped", automation.ParseScope("bu-b,bu-a,bu-b,bu-a"), false, []string{"bu-a", "bu-b"}, "bu-a,bu-b",
			[]string{"bu-a", "bu-b"}, []string{"bu-c"}},
		{"all ∩ set = set", automation.AllBusinessUnits().Intersect(ab), false, []string{"bu-a", "bu-b"}, "bu-a,bu-b",
			[]string{"bu-a", "bu-b"}, []string{"bu-c"}},
		{"set ∩ all = set", ab.Intersect(automation.AllBusinessUnits()), false, []string{"bu-a", "bu-b"}, "bu-a,bu-b",
			[]string{"bu-a", "bu-b"}, []string{"bu-c"}},
		{"all ∩ all = all", automation.AllBusinessUnits().Intersect(automation.AllBusinessUnits()), true, nil, "*", []string{"bu-q"}, nil},
		{"set ∩ set", ab.Intersect(automation.ParseScope("bu-b,bu-c")), false, []string{"bu-b"}, "bu-b",
			[]string{"bu-b"}, []string{"bu-a", "bu-c"}},
		{"disjoint sets see none", ab.Intersect(automation.BusinessUnits("bu-c")), false, nil, "", nil, []string{"bu-a", "bu-b", "bu-c"}},
		{"all ∩ zero sees none", automation.AllBusinessUnits().Intersect(automation.Scope{}), false, nil, "", nil, []string{"bu-a"}},
		{"zero ∩ all sees none", automation.Scope{}.Intersect(automation.AllBusinessUnits()), false, nil, "", nil, []string{"bu-a"}},
		{"set ∩ zero sees none", ab.Intersect(automation.Scope{}), false, nil, "", nil, []string{"bu-a", "bu-b"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := c.scope.All(); got != c.all {
				t.Errorf("All() = %v, want %v", got, c.all)
			}
			if got := c.scope.Units(); !slices.Equal(got, c.units) || (c.units == nil && got != nil) {
				t.Errorf("Units() = %#v, want %#v", got, c.units)
			}
			if got := c.scope.String(); got != c.str {
				t.Errorf("String() = %q, want %q", got, c.str)
			}
			for _, id := range c.allows {
				if !c.scope.Allows(id) {
					t.Errorf("Allows(%q) = false, want true", id)
				}
			}
			for _, id := range c.refuses {
				if c.scope.Allows(id) {
					t.Errorf("Allows(%q) = true, want false", id)
				}
			}
		})
	}
	// Units is a copy: changing it does not widen the scope.
	u := ab.Units()
	u[0] = "bu-z"
	if ab.Allows("bu-z") || !ab.Allows("bu-a") {
		t.Error("Units() shares the scope's slice")
	}
}

// A scope list of many distinct ids was once deduplicated with a linear search per id
// (quadratic): 1 MiB of ids (the net/http header limit) cost tens of seconds of CPU per
// request. This is a complexity guard, not a benchmark: linearithmic parsing of 200,000 ids
// takes well under a second even with the race detector; the quadratic one took minutes.
func TestParseScopeOfManyIdsIsLinearithmic(t *testing.T) {
	t.Parallel()
	ids := make([]string, 200_000)
	for i := range ids {
		ids[i] = fmt.Sprintf("bu-%06d", len(ids)-i)
	}
	ids = append(ids, "bu-000007", "", " bu-000009 ")
	done := make(chan automation.Scope, 1)
	go func() { done <- automation.ParseScope(strings.Join(ids, ",")) }()
	select {
	case s := <-done:
		units := s.Units()
		if len(units) != 200_000 || units[0] != "bu-000001" || units[len(units)-1] != "bu-200000" || !s.Allows("bu-000009") || s.Allows("") {
			t.Fatalf("parsed %d units (%v … %v)", len(units), units[:1], units[len(units)-1:])
		}
	case <-time.After(20 * time.Second):
		t.Fatal("parsing 200,000 business-unit ids did not finish in 20 s: quadratic de-duplication")
	}
}
