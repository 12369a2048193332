package supportapi_test

import (
	"context"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/api/supportapi"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/support"
)

// seeded: source A (bu-syd) has 3 pending rows, source B (bu-nyc) 3 pending rows.
func seeded(t *testing.T, vars map[string]string) *env {
	t.Helper()
	e := newEnv(t, vars)
	e.event(t, "evt-a1", "bu-syd", guidA, 1, "2026-10-31")
	e.event(t, "evt-b1", "bu-nyc", guidB, 1, "2026-11-08")
	return e
}

func TestFind(t *testing.T) {
	t.Parallel()
	e := seeded(t, nil)
	var page supportapi.FindResponse
	r := e.call(t, "GET", "/api/support/scheduler-rows?limit=4", "")
	if r.Code != 200 {
		t.Fatalf("%d %s", r.Code, r.Body)
	}
	r.JSON(t, &page)
	if len(page.Rows) != 4 || page.Order != support.OrderNewest || page.NextCursor == "" || page.Rows[0].ID < page.Rows[1].ID {
		t.Fatalf("first page %+v", page)
	}
	// The next page continues after the cursor; together they hold all 6 rows once.
	seen := map[int64]bool{}
	for _, row := range page.Rows {
		seen[row.ID] = true
	}
	r = e.call(t, "GET", "/api/support/scheduler-rows?limit=4&cursor="+url.QueryEscape(page.NextCursor), "")
	var next supportapi.FindResponse
	r.JSON(t, &next)
	for _, row := range next.Rows {
		seen[row.ID] = true
	}
	if len(next.Rows) != 2 || next.NextCursor != "" || len(seen) != 6 {
		t.Fatalf("second page %+v (seen %d)", next, len(seen))
	}
	// Filters: source, business unit + status, on hold, schedule range (schedule order).
	r = e.call(t, "GET", "/api/support/scheduler-rows?sourceType=PoliceVetting&sourceGuid="+guidA, "")
	page = supportapi.FindResponse{}
	r.JSON(t, &page)
	if len(page.Rows) != 3 || page.Rows[0].SourceGuid != guidA || page.Rows[0].ScheduledLocal == "" || !strings.Contains(page.Rows[0].History.Summary, "pending") {
		t.Fatalf("by source %+v", page)
	}
	r = e.call(t, "GET", "/api/support/scheduler-rows?businessUnitId=bu-nyc&status=Pending", "")
	page = supportapi.FindResponse{}
	r.JSON(t, &page)
	if len(page.Rows) != 3 || page.Rows[0].BusinessUnitID != "bu-nyc" {
		t.Fatalf("by business unit and status %+v", page)
	}
	// 2026-10-09 (bu-nyc 30 d), 10-23 and 10-30 (bu-syd 7 d, 0 d), 11-01 (bu-nyc 7 d); paged by 3.
	r = e.call(t, "GET", "/api/support/scheduler-rows?scheduledFrom=2026-10-01T00:00:00Z&scheduledTo=2026-11-02T00:00:00Z&limit=3", "")
	page = supportapi.FindResponse{}
	r.JSON(t, &page)
	if page.Order != support.OrderScheduledOn || len(page.Rows) != 3 || page.NextCursor == "" ||
		!page.Rows[0].ScheduledOn.Before(page.Rows[1].ScheduledOn) || !page.Rows[1].ScheduledOn.Before(page.Rows[2].ScheduledOn) {
		t.Fatalf("by range %+v", page)
	}
	r = e.call(t, "GET", "/api/support/scheduler-rows?scheduledFrom=2026-10-01T00:00:00Z&scheduledTo=2026-11-02T00:00:00Z&limit=3&cursor="+url.QueryEscape(page.NextCursor), "")
	next = supportapi.FindResponse{}
	r.JSON(t, &next)
	if len(next.Rows) != 1 || next.NextCursor != "" || !next.Rows[0].ScheduledOn.After(page.Rows[2].ScheduledOn) {
		t.Fatalf("range, second page %+v", next)
	}
	e.hold(t, e.RowsOf(t, guidA)[1])
	r = e.call(t, "GET", "/api/support/scheduler-rows?onHold=true", "")
	page = supportapi.FindResponse{}
	r.JSON(t, &page)
	if len(page.Rows) != 1 || !page.Rows[0].OnHold || !strings.Contains(page.Rows[0].History.Summary, "on support hold") {
		t.Fatalf("on hold %+v", page)
	}
}

func TestFindBadInput(t *testing.T) {
	t.Parallel()
	e := seeded(t, nil)
	first := e.call(t, "GET", "/api/support/scheduler-rows?limit=1&businessUnitId=bu-syd", "")
	var page supportapi.FindResponse
	first.JSON(t, &page)
	cases := []struct {
		name, query, field string
		status             int
	}{
		{"unknown filter", "customer=1", "customer", 400},
		{"repeated filter", "status=Pending&status=Failed", "status", 400},
		{"unknown status", "status=Sent", "status", 400},
		{"onHold not boolean", "onHold=yes", "onHold", 400},
		{"not an instant", "scheduledFrom=2026-10-01", "scheduledFrom", 400},
		{"empty range", "scheduledFrom=2026-10-02T00:00:00Z&scheduledTo=2026-10-01T00:00:00Z", "scheduledTo", 400},
		{"source guid alone", "sourceGuid=" + guidA, "sourceGuid", 400},
		{"limit too large", "limit=501", "limit", 400},
		{"limit zero", "limit=0", "limit", 400},
		{"malformed cursor", "cursor=not-a-cursor!", "cursor", 400},
		{"empty cursor", "cursor=", "cursor", 400},
		{"cursor of other filters", "businessUnitId=bu-nyc&cursor=" + url.QueryEscape(page.NextCursor), "cursor", 400},
		{"business unit outside the scope", "businessUnitId=bu-nyc", "", 404},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := e.call(t, "GET", "/api/support/scheduler-rows?"+c.query, "", "X-Automation-Business-Units: bu-syd")
			p := r.problem(t)
			if r.Code != c.status || p.Status != c.status {
				t.Fatalf("%d %+v", r.Code, p)
			}
			if c.field != "" && (len(p.Errors) == 0 || p.Errors[0].Field != c.field) {
				t.Fatalf("problem does not name %s: %+v", c.field, p)
			}
		})
	}
}

func TestFindIsScopedToBusinessUnits(t *testing.T) {
	t.Parallel()
	e := seeded(t, map[string]string{"AUTOMATION_API_BUSINESS_UNITS": "bu-syd,bu-nyc"})
	count := func(headers ...string) int {
		r := e.call(t, "GET", "/api/support/scheduler-rows", "", headers...)
		var page supportapi.FindResponse
		r.JSON(t, &page)
		for _, row := range page.Rows {
			if len(headers) > 0 && !strings.Contains(headers[0], row.BusinessUnitID) {
				t.Fatalf("row of %s shown to %q", row.BusinessUnitID, headers)
			}
		}
		return len(page.Rows)
	}
	if n := count(); n != 6 {
		t.Fatalf("configured scope sees %d", n)
	}
	if n := count("X-Automation-Business-Units: bu-nyc"); n != 3 {
		t.Fatalf("narrowed scope sees %d", n)
	}
	if n := count("X-Automation-Business-Units: bu-mel"); n != 0 {
		t.Fatalf("a scope with no known unit sees %d", n)
	}
	// The header cannot widen the configured scope.
	e2 := seeded(t, map[string]string{"AUTOMATION_API_BUSINESS_UNITS": "bu-nyc"})
	r := e2.call(t, "GET", "/api/support/scheduler-rows", "", "X-Automation-Business-Units: *")
	var page supportapi.FindResponse
	r.JSON(t, &page)
	if len(page.Rows) != 3 {
		t.Fatalf("header widened the scope: %d rows", len(page.Rows))
	}
}

func TestGetRow(t *testing.T) {
	t.Parallel()
	e := seeded(t, nil)
	rows := e.RowsOf(t, guidA)
	// Complete the 30-day row through the poller: a trace row and a delivery.
	e.poll(t, rows[0].ScheduledOn)
	held := e.hold(t, rows[1])
	r := e.call(t, "GET", fmt.Sprintf("/api/support/scheduler-rows/%d", rows[0].ID), "")
	var d support.Detail
	r.JSON(t, &d)
	if r.Code != 200 || r.Header.Get("ETag") != fmt.Sprintf(`"%d"`, d.Row.Version) || d.Row.Status != "Completed" ||
		len(d.Attempts) != 1 || d.Attempts[0].Outcome != "Completed" || len(d.Deliveries) != 1 || d.Deliveries[0].Recipient != "a***@example.test" {
		t.Fatalf("completed row: %d %s", r.Code, r.Body)
	}
	// By Guid, and the diagnostics blob of a held row, masked.
	r = e.call(t, "GET", "/api/support/scheduler-rows/"+strings.ToUpper(held.Guid), "")
	r.JSON(t, &d)
	if r.Code != 200 || d.Row.ID != held.ID || d.Diagnostics == nil || !strings.Contains(string(d.Diagnostics.JSON), "a***@example.test") ||
		strings.Contains(string(r.Body), "amelia.nguyen@") {
		t.Fatalf("held row: %d %s", r.Code, r.Body)
	}
	cases := []struct {
		name, path string
		status     int
		headers    []string
	}{
		{"not an id", "/api/support/scheduler-rows/abc", 400, nil},
		{"unknown id", "/api/support/scheduler-rows/99999", 404, nil},
		{"unknown guid", "/api/support/scheduler-rows/" + store.RowGuid("nope"), 404, nil},
		{"unknown query parameter", fmt.Sprintf("/api/support/scheduler-rows/%d?verbose=1", rows[0].ID), 400, nil},
		{"another business unit's row", fmt.Sprintf("/api/support/scheduler-rows/%d", rows[0].ID), 404, []string{"X-Automation-Business-Units: bu-nyc"}},
	}
	for _, c := range cases {
		r := e.call(t, "GET", c.path, "", c.headers...)
		if p := r.problem(t); r.Code != c.status {
			t.Errorf("%s: %d %+v", c.name, r.Code, p)
		}
	}
	// Out of scope and unknown answer alike: nothing tells them apart.
	a := e.call(t, "GET", fmt.Sprintf("/api/support/scheduler-rows/%d", rows[0].ID), "", "X-Automation-Business-Units: bu-nyc").problem(t)
	b := e.call(t, "GET", "/api/support/scheduler-rows/99999", "", "X-Automation-Business-Units: bu-nyc").problem(t)
	if a.Title != b.Title || a.Code != b.Code || strings.Contains(a.Detail, "bu-syd") {
		t.Fatalf("out of scope %+v vs unknown %+v", a, b)
	}
}

// TestActs walks release, retry and cancel: the happy paths, and every refusal leaves the
// row, the audit and the trace as they were.
func TestActs(t *testing.T) {
	t.Parallel()
	e := seeded(t, nil)
	ctx := context.Background()
	rowsA := e.RowsOf(t, guidA)
	held := e.hold(t, rowsA[1]) // rowsA[0] gets a backoff (Pending, NextRetryOn) from hold()
	path := func(id int64, action string) string {
		return fmt.Sprintf("/api/support/scheduler-rows/%d/%s", id, action)
	}
	reason := `{"reason":"SMTP provider fixed"}`

	bad := []struct {
		name, action, body string
		id                 int64
		headers            []string
		status             int
		code               string
	}{
		{"no operator", "release", reason, held.ID, []string{ifMatch(held.Version)}, 400, "Malformed"},
		{"no If-Match", "release", reason, held.ID, []string{operator}, 428, "PreconditionRequired"},
		{"weak If-Match", "release", reason, held.ID, []string{operator, `If-Match: W/"3"`}, 400, "Malformed"},
		{"stale If-Match", "release", reason, held.ID, []string{operator, ifMatch(held.Version - 1)}, 412, "PreconditionFailed"},
		{"no reason", "release", `{"reason":"  "}`, held.ID, []string{operator, ifMatch(held.Version)}, 422, "InvalidInput"},
		{"no body", "release", "", held.ID, []string{operator, ifMatch(held.Version)}, 400, "Malformed"},
		{"unknown body field", "release", `{"reason":"x","force":true}`, held.ID, []string{operator, ifMatch(held.Version)}, 400, "Malformed"},
		{"unknown query parameter", "release?force=1", reason, held.ID, []string{operator, ifMatch(held.Version)}, 400, "Malformed"},
		{"another business unit", "release", reason, held.ID, []string{operator, ifMatch(held.Version), "X-Automation-Business-Units: bu-nyc"}, 404, "NotFound"},
		{"unknown row", "release", reason, 99999, []string{operator, ifMatch(1)}, 404, "NotFound"},
		{"release a row not on hold", "release", reason, rowsA[2].ID, []string{operator, ifMatch(rowsA[2].Version)}, 409, "Conflict"},
		{"retry a row waiting for its time", "retry", reason, rowsA[2].ID, []string{operator, ifMatch(rowsA[2].Version)}, 409, "Conflict"},
	}
	for _, c := range bad {
		var before automation.SchedulerRow
		if c.id != 99999 {
			before = e.Row(t, c.id)
		}
		r := e.call(t, "POST", path(c.id, c.action), c.body, c.headers...)
		p := r.problem(t)
		if r.Code != c.status || p.Code != c.code {
			t.Errorf("%s: %d %+v", c.name, r.Code, p)
		}
		if c.id == 99999 {
			continue
		}
		after := e.Row(t, c.id)
		audit, _ := e.rt.Store.SupportAuditList(ctx, []int64{c.id}, 10)
		if after.Version != before.Version || len(audit) != 0 {
			t.Errorf("%s changed the row (v%d→v%d) or the audit (%d)", c.name, before.Version, after.Version, len(audit))
		}
	}

	// Release: 200, new ETag, audit + trace row; the row runs again.
	r := e.call(t, "POST", path(held.ID, "release"), reason, operator, ifMatch(held.Version))
	var res support.ActResult
	r.JSON(t, &res)
	if r.Code != 200 || res.Row.OnHold || res.Row.Status != "Pending" || res.AuditID == 0 || r.Header.Get("ETag") != fmt.Sprintf(`"%d"`, held.Version+1) {
		t.Fatalf("release: %d %s", r.Code, r.Body)
	}
	recs, _ := e.rt.Trace.JobsByKey(ctx, held.SchedulerKey)
	if len(recs) != 1 || recs[0].Outcome != support.OutcomeSupportReleased || strings.Contains(recs[0].Message, "ops.jane") {
		t.Fatalf("release trace %+v", recs)
	}
	// The same request again (old ETag): 412, not a second release.
	if r := e.call(t, "POST", path(held.ID, "release"), reason, operator, ifMatch(held.Version)); r.Code != 412 {
		t.Fatalf("replayed release: %d %s", r.Code, r.Body)
	}

	// Retry now: the row in backoff becomes due now.
	backoff := e.Row(t, rowsA[0].ID)
	if backoff.NextRetryOn == nil {
		t.Fatalf("setup: %+v", backoff)
	}
	r = e.call(t, "POST", path(backoff.ID, "retry"), reason, operator, ifMatch(backoff.Version))
	r.JSON(t, &res)
	if r.Code != 200 || res.Action != string(store.SupportRetryNow) || res.Row.NextRetryOn != nil || res.RetryRow != nil {
		t.Fatalf("retry now: %d %s", r.Code, r.Body)
	}

	// Cancel a pending row; then it cannot be cancelled or released again (409).
	p := e.Row(t, rowsA[2].ID)
	r = e.call(t, "POST", path(p.ID, "cancel"), `{"reason":"staff member left"}`, operator, ifMatch(p.Version))
	r.JSON(t, &res)
	if r.Code != 200 || res.Row.Status != "Cancelled" || res.Row.ReasonCode != string(automation.ReasonSupportCancelled) {
		t.Fatalf("cancel: %d %s", r.Code, r.Body)
	}
	if r := e.call(t, "POST", path(p.ID, "cancel"), reason, operator, ifMatch(p.Version+1)); r.Code != 409 {
		t.Fatalf("second cancel: %d %s", r.Code, r.Body)
	}
	// The same event arriving again leaves the cancel in place.
	e.event(t, "evt-a1-redelivered", "bu-syd", guidA, 2, "2026-10-31")
	if got := e.Row(t, p.ID); got.Status != automation.StatusCancelled {
		t.Fatalf("an unchanged source reactivated a cancelled row: %s", got.Status)
	}
}

// TestRetryCompletedRowSendsUnderASupportRetryKey: a completed row is re-sent through the
// pipeline as a new row; the original delivery key is never reused.
func TestRetryCompletedRowSendsUnderASupportRetryKey(t *testing.T) {
	t.Parallel()
	e := seeded(t, nil)
	ctx := context.Background()
	orig := e.RowsOf(t, guidA)[0]
	e.poll(t, orig.ScheduledOn)
	done := e.Row(t, orig.ID)
	if done.Status != automation.StatusCompleted {
		t.Fatalf("setup: %s", done.Status)
	}
	first, _ := e.rt.Store.SupportNotificationList(ctx, done.SchedulerKey, 10)
	e.clock.Set(done.ScheduledOn.Add(72 * time.Hour)) // long after: the retry row is not "too late"
	r := e.call(t, "POST", fmt.Sprintf("/api/support/scheduler-rows/%d/retry", done.ID), `{"reason":"she never got it"}`, operator, ifMatch(done.Version))
	var res support.ActResult
	r.JSON(t, &res)
	if r.Code != 200 || res.Action != string(store.SupportRetry) || res.RetryRow == nil ||
		res.RetryRow.SchedulerKey != automation.SupportRetryKey(done.SchedulerKey, done.Version) || res.Row.Status != "Completed" {
		t.Fatalf("retry: %d %s", r.Code, r.Body)
	}
	e.poll(t, e.clock.Now())
	retry, err := e.rt.Store.SchedulerGetByKey(ctx, res.RetryRow.SchedulerKey)
	if err != nil || retry.Status != automation.StatusCompleted {
		t.Fatalf("retry row after a poll: %+v %v", retry, err)
	}
	second, _ := e.rt.Store.SupportNotificationList(ctx, retry.SchedulerKey, 10)
	if len(first) != 1 || len(second) != 1 || first[0].DeliveryKey == second[0].DeliveryKey || first[0].Recipient != second[0].Recipient {
		t.Fatalf("deliveries: original %+v, retry %+v", first, second)
	}
	// Retrying again with the ETag from before is refused (the original's Version moved on).
	if r := e.call(t, "POST", fmt.Sprintf("/api/support/scheduler-rows/%d/retry", done.ID), `{"reason":"double click"}`, operator, ifMatch(done.Version)); r.Code != 412 {
		t.Fatalf("double retry: %d %s", r.Code, r.Body)
	}
}

func TestReleases(t *testing.T) {
	t.Parallel()
	e := seeded(t, map[string]string{"AUTOMATION_SUPPORT_MAX_RELEASE_PER_MINUTE": "120"})
	a, b := e.hold(t, e.RowsOf(t, guidA)[1]), e.hold(t, e.RowsOf(t, guidB)[1])
	bad := []struct {
		name, body string
		headers    []string
		status     int
		field      string
	}{
		{"no filter", `{"reason":"r"}`, []string{operator}, 422, "filter"},
		{"empty filter", `{"filter":{},"reason":"r","ratePerMinute":10}`, []string{operator}, 422, "filter"},
		{"rate above the maximum", `{"filter":{"businessUnitId":"bu-syd"},"reason":"r","ratePerMinute":121}`, []string{operator}, 422, "ratePerMinute"},
		{"batch too large", `{"filter":{"businessUnitId":"bu-syd"},"reason":"r","batchSize":1000}`, []string{operator}, 422, "batchSize"},
		// 0 was silently read as the default (60 rows per minute): given, a count is at least 1.
		{"rate zero", `{"filter":{"businessUnitId":"bu-syd"},"reason":"r","ratePerMinute":0}`, []string{operator}, 422, "ratePerMinute"},
		{"batch zero", `{"filter":{"businessUnitId":"bu-syd"},"reason":"r","batchSize":0}`, []string{operator}, 422, "batchSize"},
		{"max rows zero", `{"filter":{"businessUnitId":"bu-syd"},"reason":"r","maxRows":0}`, []string{operator}, 422, "maxRows"},
		{"rate negative", `{"filter":{"businessUnitId":"bu-syd"},"reason":"r","ratePerMinute":-5}`, []string{operator}, 422, "ratePerMinute"},
		// failureReasonCode took any text (and matched nothing): it must be a failure code.
		{"unknown failure reason", `{"filter":{"failureReasonCode":"Timeout"},"reason":"r"}`, []string{operator}, 422, "filter.failureReasonCode"},
		{"failure reason in another case", `{"filter":{"failureReasonCode":"handlererror"},"reason":"r"}`, []string{operator}, 422, "filter.failureReasonCode"},
		{"not a failure reason", `{"filter":{"failureReasonCode":"TooLate"},"reason":"r"}`, []string{operator}, 422, "filter.failureReasonCode"},
		{"lone surrogate", `{"filter":{"businessUnitId":"bu-syd"},"reason":"r\ud800"}`, []string{operator}, 400, ""},
		{"unknown filter", `{"filter":{"customer":"x"},"reason":"r"}`, []string{operator}, 400, "customer"},
		{"not an instant", `{"filter":{"scheduledFrom":"yesterday"},"reason":"r"}`, []string{operator}, 400, ""},
		{"no operator", `{"filter":{"businessUnitId":"bu-syd"},"reason":"r"}`, nil, 400, "X-Automation-Operator"},
		{"no reason", `{"filter":{"businessUnitId":"bu-syd"}}`, []string{operator}, 422, "reason"},
		{"business unit outside the scope", `{"filter":{"businessUnitId":"bu-syd"},"reason":"r"}`, []string{operator, "X-Automation-Business-Units: bu-nyc"}, 404, ""},
	}
	for _, c := range bad {
		r := e.call(t, "POST", "/api/support/releases", c.body, c.headers...)
		p := r.problem(t)
		found := c.field == ""
		for _, f := range p.Errors {
			found = found || f.Field == c.field
		}
		if r.Code != c.status || !found {
			t.Errorf("%s: %d %+v", c.name, r.Code, p)
		}
	}
	if e.Row(t, a.ID).Version != a.Version || e.Row(t, b.ID).Version != b.Version {
		t.Fatal("a refused release changed a row")
	}
	// A scoped caller's release by reason touches only its business unit.
	r := e.call(t, "POST", "/api/support/releases", `{"filter":{"failureReasonCode":"HandlerError"},"reason":"outage over","ratePerMinute":60,"batchSize":1}`,
		operator, "X-Automation-Business-Units: bu-nyc")
	var res support.ReleaseResult
	r.JSON(t, &res)
	if r.Code != 200 || res.Released != 1 || res.Rows[0].ID != b.ID || e.Row(t, a.ID).IsOnSupportHold != true || e.Row(t, b.ID).IsOnSupportHold {
		t.Fatalf("scoped release: %d %s", r.Code, r.Body)
	}
}

func TestExplainAndMetricsBadInputAndScope(t *testing.T) {
	t.Parallel()
	e := seeded(t, nil)
	cases := []struct {
		name, path string
		headers    []string
		status     int
	}{
		{"explain without a guid", "/api/support/explain?sourceType=PoliceVetting", nil, 400},
		{"explain with an unknown parameter", "/api/support/explain?sourceType=PoliceVetting&sourceGuid=" + guidA + "&deep=1", nil, 400},
		{"explain an unknown source", "/api/support/explain?sourceType=PoliceVetting&sourceGuid=00000000-0000-4000-8000-000000000000", nil, 404},
		{"explain another business unit's source", "/api/support/explain?sourceType=PoliceVetting&sourceGuid=" + guidA, []string{"X-Automation-Business-Units: bu-nyc"}, 404},
		{"metrics with an unknown parameter", "/api/support/metrics?verbose=true", nil, 400},
		{"metrics of a business unit outside the scope", "/api/support/metrics?businessUnitId=bu-syd", []string{"X-Automation-Business-Units: bu-nyc"}, 404},
	}
	for _, c := range cases {
		r := e.call(t, "GET", c.path, "", c.headers...)
		if p := r.problem(t); r.Code != c.status {
			t.Errorf("%s: %d %+v", c.name, r.Code, p)
		}
	}
	r := e.call(t, "GET", "/api/support/explain?sourceType=PoliceVetting&sourceGuid="+guidA, "")
	var x support.Explanation
	r.JSON(t, &x)
	if r.Code != 200 || len(x.Settings) != 1 || len(x.Settings[0].Occurrences) != 3 || x.Settings[0].Occurrences[0].Outcome != "Waiting" {
		t.Fatalf("explain: %d %s", r.Code, r.Body)
	}
}

func TestMetrics(t *testing.T) {
	t.Parallel()
	e := seeded(t, nil)
	rows := e.RowsOf(t, guidA)
	e.poll(t, rows[0].ScheduledOn) // the 30-day reminder completes: one unsent outbox message
	e.hold(t, rows[1])             // the 7-day one fails on hold
	e.clock.Set(rows[1].ScheduledOn.Add(time.Minute))
	var m support.Metrics
	r := e.call(t, "GET", "/api/support/metrics", "")
	r.JSON(t, &m)
	if r.Code != 200 || m.OnHold != 1 || m.OnHoldByReason["HandlerError"] != 1 || m.Failed != 1 || m.PendingDueNow != 0 ||
		m.OutboxUnsent == nil || *m.OutboxUnsent != 1 || m.OutboxOldestAgeSeconds == nil || m.UnknownDeliveries != 0 || m.BusinessUnits[0] != "*" {
		t.Fatalf("metrics: %d %s", r.Code, r.Body)
	}
	r = e.call(t, "GET", "/api/support/metrics", "", "X-Automation-Business-Units: bu-nyc")
	m = support.Metrics{}
	r.JSON(t, &m)
	if r.Code != 200 || m.OnHold != 0 || m.OutboxUnsent != nil || len(m.BusinessUnits) != 1 || m.BusinessUnits[0] != "bu-nyc" {
		t.Fatalf("scoped metrics: %d %s", r.Code, r.Body)
	}
	r = e.call(t, "GET", "/api/support/metrics?businessUnitId=bu-syd", "")
	m = support.Metrics{}
	r.JSON(t, &m)
	if r.Code != 200 || m.OnHold != 1 || m.OutboxUnsent != nil {
		t.Fatalf("one business unit: %d %s", r.Code, r.Body)
	}
}

func TestBearerToken(t *testing.T) {
	t.Parallel()
	e := seeded(t, map[string]string{"AUTOMATION_API_TOKEN": "s3cret"})
	if r := e.call(t, "GET", "/api/support/metrics", ""); r.Code != 401 {
		t.Fatalf("no token: %d", r.Code)
	}
	if r := e.call(t, "GET", "/api/support/metrics", "", "Authorization: Bearer wrong"); r.Code != 401 {
		t.Fatalf("wrong token: %d", r.Code)
	}
	if r := e.call(t, "GET", "/api/support/metrics", "", "Authorization: Bearer s3cret"); r.Code != 200 {
		t.Fatalf("token: %d %s", r.Code, r.Body)
	}
}

// TestRunNow: run now makes a Pending row waiting for its time due at once — audited, traced,
// guarded by If-Match (412 on a stale version, 428 without) — and is refused (409) for a row
// on hold, a row already due and an ended row; a refusal changes neither row nor audit.
func TestRunNow(t *testing.T) {
	t.Parallel()
	e := seeded(t, nil)
	ctx := context.Background()
	rowsA := e.RowsOf(t, guidA)
	held := e.hold(t, rowsA[1])
	waiting := e.Row(t, rowsA[2].ID)
	if !waiting.ScheduledOn.After(e.clock.Now()) || waiting.IsOnSupportHold || waiting.Status != automation.StatusPending {
		t.Fatalf("setup: %+v", waiting)
	}
	path := func(id int64) string { return fmt.Sprintf("/api/support/scheduler-rows/%d/run-now", id) }
	reason := `{"reason":"customer asked for it today"}`
	for _, c := range []struct {
		name    string
		id      int64
		headers []string
		status  int
		code    string
	}{
		{"no If-Match", waiting.ID, []string{operator}, 428, "PreconditionRequired"},
		{"stale If-Match", waiting.ID, []string{operator, ifMatch(waiting.Version - 1)}, 412, "PreconditionFailed"},
		{"no operator", waiting.ID, []string{ifMatch(waiting.Version)}, 400, "Malformed"},
		{"another business unit", waiting.ID, []string{operator, ifMatch(waiting.Version), "X-Automation-Business-Units: bu-nyc"}, 404, "NotFound"},
		{"on hold", held.ID, []string{operator, ifMatch(held.Version)}, 409, "Conflict"},
	} {
		before := e.Row(t, c.id)
		r := e.call(t, "POST", path(c.id), reason, c.headers...)
		if p := r.problem(t); r.Code != c.status || p.Code != c.code {
			t.Errorf("%s: %d %+v", c.name, r.Code, p)
		}
		after := e.Row(t, c.id)
		audit, _ := e.rt.Store.SupportAuditList(ctx, []int64{c.id}, 10)
		if after.Version != before.Version || !after.ScheduledOn.Equal(before.ScheduledOn) || len(audit) != 0 {
			t.Errorf("%s changed the row (v%d→v%d) or the audit (%d)", c.name, before.Version, after.Version, len(audit))
		}
	}
	r := e.call(t, "POST", path(waiting.ID), reason, operator, ifMatch(waiting.Version))
	var res support.ActResult
	r.JSON(t, &res)
	now := e.clock.Now().UTC().Truncate(time.Millisecond)
	if r.Code != 200 || res.Action != string(store.SupportRunNow) || res.Row.Status != "Pending" || res.AuditID == 0 ||
		!res.Row.ScheduledOn.Equal(now) || r.Header.Get("ETag") != fmt.Sprintf(`"%d"`, waiting.Version+1) {
		t.Fatalf("run now: %d %s", r.Code, r.Body)
	}
	audit, _ := e.rt.Store.SupportAuditList(ctx, []int64{waiting.ID}, 10)
	if len(audit) != 1 || audit[0].Action != store.SupportRunNow || audit[0].Operator != "ops.jane" {
		t.Fatalf("audit %+v", audit)
	}
	recs, _ := e.rt.Trace.JobsByKey(ctx, waiting.SchedulerKey)
	if len(recs) != 1 || recs[0].Outcome != support.OutcomeSupportRunNow {
		t.Fatalf("trace %+v", recs)
	}
	// Now it is due: a second run now (fresh version) is a conflict, not a no-op write.
	if r := e.call(t, "POST", path(waiting.ID), reason, operator, ifMatch(waiting.Version+1)); r.Code != 409 {
		t.Fatalf("run now of a due row: %d %s", r.Code, r.Body)
	}
	// The old version again: 412, never a second run.
	if r := e.call(t, "POST", path(waiting.ID), reason, operator, ifMatch(waiting.Version)); r.Code != 412 {
		t.Fatalf("replayed run now: %d %s", r.Code, r.Body)
	}
}
