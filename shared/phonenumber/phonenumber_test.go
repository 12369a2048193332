package phonenumber_test

import (
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/phonenumber"
)

// Issue 38's bad input: an invalid phone number, an unknown country code; each answer says
// which, and names the number.
func TestValidate(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ n, want string }{
		{"+61412345678", ""}, {"+84912345678", ""}, {"+14155552671", ""}, {"+8562055512345", ""},
		{"0412345678", "not E.164"}, {"+61 412 345 678", "not E.164"}, {"+1234", "not E.164"}, {"", "not E.164"},
		{"+6141234567890123", "not E.164"}, {"61412345678", "not E.164"}, {"+0412345678", "not E.164"},
		{"+999123456789", "unknown country code"}, {"+2891234567", "unknown country code"},
		{"+8001234567", "not a possible number length"}, // +800 is international freephone: 8 digits
	} {
		err := phonenumber.Validate(c.n)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%q: %v", c.n, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `"`+c.n+`"`)):
			t.Errorf("%q: %v, want %q naming the number", c.n, err, c.want)
		}
	}
}
