package supportapi_test

import (
	"strings"
	"testing"
)

// TestOutOfScopeAnswersExactlyLikeUnknown proves ids cannot be probed (docs/api-conventions.md#business-unit-scope,
// issue 7 "an out-of-scope id answers 404, not 403"): for every support route, asking for a
// resource of another business unit answers the same status and the same problem (apart
// from the id echoed back) as asking for one that does not exist.
func TestOutOfScopeAnswersExactlyLikeUnknown(t *testing.T) {
	t.Parallel()
	e := seeded(t, nil)
	syd := e.RowsOf(t, guidA)[0]
	scope := "X-Automation-Business-Units: bu-nyc" // guidA and its rows are in bu-syd
	const unknownGuid = "00000000-0000-4000-8000-000000000000"
	cases := []struct {
		name                string
		method, other, none string // the path of an out-of-scope resource, and of a missing one
		body                string
		otherID, noneID     string // the id each answer may echo
	}{
		{"explain", "GET", "/api/support/explain?sourceType=PoliceVetting&sourceGuid=" + guidA,
			"/api/support/explain?sourceType=PoliceVetting&sourceGuid=" + unknownGuid, "", guidA, unknownGuid},
		{"row by guid", "GET", "/api/support/scheduler-rows/" + syd.Guid, "/api/support/scheduler-rows/" + unknownGuid, "", syd.Guid, unknownGuid},
		{"row by id", "GET", "/api/support/scheduler-rows/1", "/api/support/scheduler-rows/999999", "", "1", "999999"},
		{"find by business unit", "GET", "/api/support/scheduler-rows?businessUnitId=bu-syd", "/api/support/scheduler-rows?businessUnitId=bu-zzz", "", "bu-syd", "bu-zzz"},
		{"metrics of a business unit", "GET", "/api/support/metrics?businessUnitId=bu-syd", "/api/support/metrics?businessUnitId=bu-zzz", "", "bu-syd", "bu-zzz"},
		{"cancel", "POST", "/api/support/scheduler-rows/1/cancel", "/api/support/scheduler-rows/999999/cancel", `{"reason":"x"}`, "1", "999999"},
		{"paced release", "POST", "/api/support/releases", "/api/support/releases", `{"filter":{"businessUnitId":"bu-syd"},"reason":"x"}`, "bu-syd", "bu-syd"},
	}
	for _, c := range cases {
		other := e.call(t, c.method, c.other, c.body, scope, operator, ifMatch(1))
		none := e.call(t, c.method, c.none, strings.ReplaceAll(c.body, "bu-syd", "bu-zzz"), scope, operator, ifMatch(1))
		if other.Code != 404 || none.Code != 404 {
			t.Errorf("%s: out of scope %d, unknown %d; both must be 404", c.name, other.Code, none.Code)
			continue
		}
		po, pn := other.problem(t), none.problem(t)
		po.Detail = strings.ReplaceAll(po.Detail, c.otherID, "ID")
		pn.Detail = strings.ReplaceAll(strings.ReplaceAll(pn.Detail, c.noneID, "ID"), "bu-zzz", "ID")
		po.Instance, pn.Instance = "", ""
		if po.Detail != pn.Detail || po.Title != pn.Title || po.Code != pn.Code || len(po.Errors) != len(pn.Errors) {
			t.Errorf("%s: an out-of-scope resource can be told from a missing one:\n out of scope: %+v\n unknown:      %+v", c.name, po, pn)
		}
	}
}
