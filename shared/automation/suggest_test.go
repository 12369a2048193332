package automation_test

import (
	"testing"

	"github.com/automation-platform/automation/shared/automation"
)

func TestSuggest(t *testing.T) {
	t.Parallel()
	known := []string{"First_Login_Reward", "Login", "ViewItem", "Asia/Ho_Chi_Minh"}
	cases := []struct{ name, want string }{
		{"First_Login_Reward", ""},                   // known as it is
		{"first_login_reward", "First_Login_Reward"}, // case only
		{"First_Login_Rewad", "First_Login_Reward"},  // one edit
		{"Logn", "Login"},
		{"VeiwItem", "ViewItem"}, // two edits
		{"asia/ho_chi_minh", "Asia/Ho_Chi_Minh"},
		{"Checkout", ""}, // nothing close
		{"", ""},
	}
	for _, c := range cases {
		if got := automation.Suggest(c.name, known); got != c.want {
			t.Errorf("Suggest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
	if got := automation.DidYouMean("Logn", known); got != ` (did you mean "Login"?)` {
		t.Errorf("DidYouMean: %q", got)
	}
}

func TestSuggestMeantNames(t *testing.T) {
	t.Parallel()
	opts := []string{"points", "reason", "Asia/Ho_Chi_Minh", "amountMinor"}
	for _, c := range []struct{ in, want string }{
		{"point", "points"}, {"asia/ho_chi_minh", "Asia/Ho_Chi_Minh"}, {"amountMinr", "amountMinor"},
		{"reasn", "reason"}, {"x", ""}, {"completely-else", ""}, {"", ""},
	} {
		if got := automation.Suggest(c.in, opts); got != c.want {
			t.Errorf("Suggest(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
