package events_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
)

// CloudEvents 1.0 section 3.1.1: attribute names are lower-case a-z and 0-9, at most 20
// characters; any other name is refused, naming it.
func TestAttributeNames(t *testing.T) {
	base := `{"specversion":"1.0","id":"e1","source":"/app","type":"Login",%s"data":{}}`
	for name, ok := range map[string]bool{"customerid": true, "x1": true, strings.Repeat("a", 20): true,
		strings.Repeat("a", 21): false, "customerId": false, "customer_id": false, "é": false, "a-b": false, "": false} {
		raw := strings.Replace(base, "%s", `"`+name+`":"v",`, 1)
		_, err := events.ParseEnvelope([]byte(raw))
		if ok != (err == nil) {
			t.Errorf("%q: %v", name, err)
		}
		if !ok && err != nil {
			var ae *automation.Error
			if name != "" && (!errors.As(err, &ae) || ae.Field != name) {
				t.Errorf("%q: the refusal names %v", name, err)
			}
		}
	}
}
