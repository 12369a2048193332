package console

import (
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// A refused member is named once: the detail that only repeats it is dropped (issue 35:
// "the doubled 422 message"); a detail that says more is kept.
func TestPageProblemNamesAMemberOnce(t *testing.T) {
	t.Parallel()
	p := pageProblem(httpapi.ProblemOf(automation.Invalid("operator", "is required")))
	if p.Status != 422 || p.Detail != "" || len(p.Fields) != 1 || p.Fields[0].Field != "operator" || p.Fields[0].Message != "is required" {
		t.Fatalf("one member: %+v", p)
	}
	p = pageProblem(httpapi.ProblemOf(automation.Errorf(automation.CodeConflict, "the campaign is already PAUSED")))
	if p.Detail != "the campaign is already PAUSED" {
		t.Fatalf("a detail of its own was dropped: %+v", p)
	}
}

// The overview says "every business unit", never "*"; a finished execution has no next
// action.
func TestWordingOfScopeAndNextAction(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   []string
		want string
	}{{[]string{"*"}, "every business unit"}, {nil, "every business unit"}, {[]string{"bu-a", "bu-b"}, "bu-a, bu-b"}} {
		if got := unitsText(c.in); got != c.want || strings.Contains(got, "*") {
			t.Fatalf("unitsText(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := nextActionText(store.ExecutionCompleted, 1); got != "none (COMPLETED)" {
		t.Fatalf("completed: %q", got)
	}
	if got := nextActionText(store.ExecutionRunning, 1); got != "action 1" {
		t.Fatalf("running: %q", got)
	}
}
