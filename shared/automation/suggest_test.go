package automation_test

import (
	"testing"

	"github.com/automation-platform/automation/shared/automation"
)

func TestClosest(t *testing.T) {
	t.Parallel()
	opts := []string{"points", "reason", "Asia/Ho_Chi_Minh", "amountMinor"}
	for _, c := range []struct{ in, want string }{
		{"point", "points"}, {"asia/ho_chi_minh", "Asia/Ho_Chi_Minh"}, {"amountMinr", "amountMinor"},
		{"reasn", "reason"}, {"x", ""}, {"completely-else", ""}, {"", ""},
	} {
		if got := automation.Closest(c.in, opts); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
