package app_test

import (
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/app"
)

// auditEntry is what one write route records about who made it (issue 37, item 7: "every
// write records the principal as its operator"; docs/security.md#audit). Exactly one of:
//   - where: the table.column that holds "key:<name> / <X-Automation-Operator>" after a valid
//     write by an API key (checked here);
//   - none: the write is not an operator action; what it records instead, and why;
//   - elsewhere: a valid write needs state this table does not build (a dead letter, an
//     UNKNOWN delivery, a platform-wide caller, a console session); the column the code
//     passes the caller's operator to, and the test that writes it;
//   - gap: an operator write that records nobody today (docs/security.md#audit lists them);
//     the write is made here and must still record nobody, so a fix moves the entry to where.
type auditEntry struct {
	where, none, elsewhere, gap string
	// setup, when set, makes the route's write valid first (as the bootstrap token).
	setup func(t *testing.T, e *scopeEnv)
}

// consoleSession is why a console write is not made by this table: the console takes no API
// key as a bearer (keys sign in through its form, docs/security.md#console); a page's
// operator is the session's principal (console.pageOperator: httpapi.API.CallerAs), the
// form's operator field read-only beside it.
const consoleSession = "console session: the page passes the session's principal (pageOperator) to "

// platformWide: this deployment is capped to bu-a,bu-c, so no caller sees every unit.
const platformWide = "platform-wide (this deployment is capped to bu-a,bu-c: no caller sees every unit); "

// auditRoutes lists every write route (every pattern routeRoles declares that is not a GET).
// TestEveryWriteRecordsThePrincipal fails on a write route missing here.
var auditRoutes = map[string]auditEntry{
	// Not operator actions.
	app.LocalEventsPath:                                {none: "event ingest (the hot path): GatewayEvent keeps the event, not the credential; the key's per-key quota and the ingest metrics are the record"},
	"POST /api/events":                                 {none: "event ingest (the hot path): GatewayEvent keeps the event, not the credential; the key's per-key quota and the ingest metrics are the record"},
	"PUT /api/devices/{customerId}/{token}":            {none: "the domain app registers its member's push device (ingest role, like events): the device row names the customer, the subject"},
	"DELETE /api/devices/{customerId}/{token}":         {none: "the domain app unregisters its member's push device (ingest role): the row is deactivated"},
	"POST /api/unsubscribe":                            {none: "the recipient's own signed link: RecipientPreference.ChangedBy = \"recipient\", Source list-unsubscribe"},
	"POST /api/inbox/{recipientId}/messages/{id}/read": {none: "the recipient reading their inbox (a recipient token, or the member app's read key): the message's ReadOn"},
	"POST /api/templates/{key}/preview":                {none: "renders, writes nothing"},
	"POST /api/console/template-preview":               {none: "renders, writes nothing"},
	"POST /api/console/login":                          {none: "starts a session: ConsoleSession.Principal names who signed in (TestConsoleSessionOfAnAPIKeyEndsWhenTheKeyIsRevokedOrRotatedOut)"},
	"POST /api/console/logout":                         {none: "ends the caller's own session: ConsoleSession.EndedOn and EndReason"},

	// Recorded, checked here.
	"PUT /api/preferences/recipients/{recipientId}":                {where: "RecipientPreference.ChangedBy"},
	"PUT /api/preferences/quiet-hours":                             {where: "QuietHours.ChangedBy"},
	"POST /api/preferences/sms-inbound":                            {where: "RecipientPreference.ChangedBy"}, // the webhook's key; the sender is the RecipientId
	"PUT /api/templates/{key}":                                     {where: "NotificationTemplate.CreatedBy"},
	"POST /api/support/scheduler-rows/{id}/cancel":                 {where: "SupportAudit.Operator"},
	"POST /api/support/scheduler-rows/{id}/run-now":                {where: "SupportAudit.Operator"},
	"PUT /api/budgets/campaigns/{campaignId}":                      {where: "BudgetAudit.Operator"},
	"PUT /api/budgets/price-policies/{actionType}":                 {where: "BudgetAudit.Operator"},
	"POST /api/report-subscriptions/{guid}/runs":                   {where: "ReportRun.RequestedBy"},
	"PUT /api/report-runs/rollout/business-units/{businessUnitId}": {where: "ReportRollout.UpdatedBy"},
	"PUT /api/report-runs/rollout/subscriptions/{guid}":            {where: "ReportRollout.UpdatedBy"},
	"PUT /api/campaigns/{campaignId}":                              {where: "CampaignAudit.Operator"}, // Action SAVE
	"POST /api/campaigns/{campaignId}/rerun":                       {where: "CampaignAudit.Operator"}, // Action RERUN
	"POST /api/report-subscriptions":                               {where: "ReportSubscription.UpdatedBy"},
	"PUT /api/report-subscriptions/{guid}":                         {where: "ReportSubscription.UpdatedBy"},
	"DELETE /api/report-subscriptions/{guid}":                      {where: "ReportSubscription.UpdatedBy"},
	"POST /api/business-units":                                     {where: "BusinessUnit.UpdatedBy"},
	"PUT /api/business-units/{id}":                                 {where: "BusinessUnit.UpdatedBy"},
	"POST /api/reminder-settings":                                  {where: "ReminderSetting.UpdatedBy"},
	"PUT /api/reminder-settings/{guid}":                            {where: "ReminderSetting.UpdatedBy"},
	"POST /api/reminder-settings/{guid}/deactivate":                {where: "ReminderSetting.UpdatedBy"},

	// Recorded, written by other tests (the state a valid write needs is not in this table).
	"POST /api/support/scheduler-rows/{id}/release":                            {elsewhere: "SupportAudit.Operator (support.ActRequest, as cancel); a row on support hold"},
	"POST /api/support/scheduler-rows/{id}/retry":                              {elsewhere: "SupportAudit.Operator (support.ActRequest, as cancel); a failed row"},
	"POST /api/support/releases":                                               {elsewhere: "SupportAudit.Operator per released row (support.BulkRelease); rows on support hold"},
	"POST /api/support/dead-letters/requeue":                                   {elsewhere: "DeadLetterAudit.Operator; a dead letter"},
	"POST /api/support/dead-letters/requeue-many":                              {elsewhere: "DeadLetterAudit.Operator; dead letters"},
	"POST /api/support/dead-letters/discard":                                   {elsewhere: "DeadLetterAudit.Operator; a dead letter"},
	"POST /api/support/deliveries/unknown/{deliveryKey}/resolve":               {elsewhere: "NotificationJob.ResolvedBy and SupportAudit; an UNKNOWN delivery"},
	"POST /api/support/deliveries/{deliveryKey}/release":                       {elsewhere: "SupportAudit.Operator; a held delivery"},
	"POST /api/budgets/campaigns/{campaignId}/resume":                          {elsewhere: "BudgetAudit.Operator; a budget paused by its limit"},
	"POST /api/budgets/fees/unknown/{orderId}/resolve":                         {elsewhere: "FeeTransfer.ResolvedBy; a fee in UNKNOWN"},
	"POST /api/campaigns/{campaignId}/unknown-commands/{commandId}/resolve":    {elsewhere: "the command's resolution operator; an UNKNOWN command"},
	"DELETE /api/templates/{key}":                                              {elsewhere: "NotificationTemplate.CreatedBy of the deletion's version; a unit's own template"},
	"POST /api/templates/{key}/test-send":                                      {elsewhere: "the test delivery's operator; a stored template"},
	"POST /api/report-subscriptions/{guid}/automation-runs/{runKeyHash}/retry": {elsewhere: "the retried run's operator; a failed automation run"},
	"POST /api/report-runs/ownership/delivery-created":                         {elsewhere: "ReportRunOwnership; an acquired run (an owner's step, not a person's: the owner version is the record)"},
	"POST /api/report-runs/ownership/release":                                  {elsewhere: "ReportRunOwnership; an acquired run (an owner's step, not a person's: the owner version is the record)"},
	"POST /api/event-registry/types":                                           {elsewhere: platformWide + "EventRegistry.Operator"},
	"PUT /api/event-registry/types/{eventType}":                                {elsewhere: platformWide + "EventRegistry.Operator"},
	"POST /api/event-registry/import":                                          {elsewhere: platformWide + "EventRegistry.Operator of each imported version"},
	"POST /api/keys":                                                           {elsewhere: platformWide + "ApiKey.CreatedBy"},
	"POST /api/keys/{prefix}/revoke":                                           {elsewhere: platformWide + "ApiKey.RevokedBy"},
	"POST /api/keys/{prefix}/rotate":                                           {elsewhere: platformWide + "ApiKey.CreatedBy of the new key"},
	"POST /api/console-sessions/end":                                           {elsewhere: platformWide + "ConsoleSession.EndReason"},
	"POST /api/console/rows/{id}/{action}":                                     {elsewhere: consoleSession + "SupportAudit.Operator"},
	"POST /api/console/releases":                                               {elsewhere: consoleSession + "SupportAudit.Operator"},
	"POST /api/console/unknown/{deliveryKey}/resolve":                          {elsewhere: consoleSession + "NotificationJob.ResolvedBy"},
	"POST /api/console/registry":                                               {elsewhere: consoleSession + "EventRegistry.Operator"},
	"POST /api/console/campaigns":                                              {elsewhere: consoleSession + "the command's resolution operator"},
	"POST /api/console/campaign-status":                                        {elsewhere: consoleSession + "CampaignAudit.Operator (PAUSE, RESUME, STOP; CREATE and SAVE through campaign.Admin.SaveBy: TestConsoleCampaignSaveRecordsThePrincipal)"},
	"POST /api/console/budgets":                                                {elsewhere: consoleSession + "BudgetAudit.Operator"},
	"POST /api/console/templates":                                              {elsewhere: consoleSession + "NotificationTemplate.CreatedBy"},
	"POST /api/console/fees":                                                   {elsewhere: consoleSession + "FeeTransfer.ResolvedBy"},
	"POST /api/console/dead-letters":                                           {elsewhere: consoleSession + "DeadLetterAudit.Operator"},

	// Recorded in OperatorAudit (migration 0078), in the write's transaction: the delete
	// removes the row that held who wrote it; acquire's owner version names no principal.
	"DELETE /api/report-runs/rollout/business-units/{businessUnitId}": {where: "OperatorAudit.Operator"},
	"DELETE /api/report-runs/rollout/subscriptions/{guid}":            {where: "OperatorAudit.Operator"},
	"DELETE /api/preferences/quiet-hours":                             {where: "OperatorAudit.Operator", setup: putQuietHours},
	"POST /api/report-runs/ownership/acquire":                         {where: "OperatorAudit.Operator"},
}

// putQuietHours stores bu-a's quiet hours (as the bootstrap token), so a DELETE has one.
func putQuietHours(t *testing.T, e *scopeEnv) {
	t.Helper()
	rec := e.do(routeRequest{method: "PUT", path: "/api/preferences/quiet-hours?businessUnitId=" + e.a.bu, body: `{"start":"21:00","end":"08:00"}`,
		headers: []string{op, "seed"}}, "Bearer "+scopeToken)
	if rec.Code != 200 {
		t.Fatalf("seed quiet hours: %d %s", rec.Code, rec.Body)
	}
}

// TestEveryWriteRecordsThePrincipal walks every write route (issue 37, item 7): a valid
// write by the narrowest API key whose role allows it, with X-Automation-Operator:
// asked-by-jane, leaves in the entry's column a new value that is the key's principal, the
// stated text following as the reason ("key:admin key / asked-by-jane"). A gap's write
// still records nobody (a fix moves it to where). docs/security.md#audit.
func TestEveryWriteRecordsThePrincipal(t *testing.T) {
	table := routeTable()
	for _, p := range app.RoutePatterns() {
		if strings.HasPrefix(p, "GET ") {
			continue
		}
		a, ok := auditRoutes[p]
		if !ok {
			t.Errorf("write route %q is not in auditRoutes: say where it records its principal", p)
			continue
		}
		if n := btoi(a.where != "") + btoi(a.none != "") + btoi(a.elsewhere != "") + btoi(a.gap != ""); n != 1 {
			t.Errorf("auditRoutes[%q]: want exactly one of where, none, elsewhere, gap", p)
			continue
		}
		if a.where == "" && a.gap == "" {
			continue
		}
		t.Run(strings.NewReplacer("/", "_", " ", "_").Replace(p), func(t *testing.T) {
			e := newScopeEnv(t)
			need, _ := app.RouteRole(p)
			var key string
			for _, kp := range keyPrincipals {
				if !kp.revoked && kp.units == "bu-a,bu-c" && kp.role.Includes(need) {
					key = kp.name
					break
				}
			}
			if a.setup != nil {
				a.setup(t, e)
			}
			r := table[p].req(e.a)
			r.headers = append(slices.Clone(r.headers), op, "asked-by-jane")
			before := e.cells(t)
			rec := e.do(r, e.keys[key])
			if rec.Code/100 != 2 {
				t.Fatalf("%s %s as %s: %d %s, want a write", r.method, r.path, key, rec.Code, rec.Body)
			}
			want := "key:" + key + " / asked-by-jane"
			var found []string
			for c := range e.cells(t) {
				if !before[c] && strings.HasPrefix(c.value, "key:"+key) {
					found = append(found, c.where+" = "+c.value)
				}
			}
			sort.Strings(found)
			switch {
			case a.gap != "" && len(found) > 0:
				t.Errorf("%s now records the principal (%v): move it from gap to where", p, found)
			case a.gap != "":
				t.Logf("gap, records nobody: %s", a.gap)
			case !slices.Contains(found, a.where+" = "+want):
				t.Errorf("%s %s as %s (%d): %s is not %q; the principal is in %v", r.method, r.path, key, rec.Code, a.where, want, found)
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

type cell struct{ where, value string }

func (e *scopeEnv) cells(t *testing.T) map[cell]bool {
	t.Helper()
	out := map[cell]bool{}
	e.eachRow(t, "", func(tbl string, cols []string, vals []any) {
		for i, v := range vals {
			var s string
			switch v := v.(type) {
			case string:
				s = v
			case []byte:
				s = string(v)
			default:
				continue
			}
			out[cell{tbl + "." + cols[i], s}] = true
		}
	})
	return out
}
