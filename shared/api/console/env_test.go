package console_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/trace"
)

const token = "console-test-token-7f3a"

// now is the runtime's clock in these tests: sources expire months later, so their rows wait.
var now = time.Date(2026, 10, 5, 9, 30, 0, 0, time.UTC)

// env is a whole runtime (app.Open on SQLite, local trace) served as `serve -token` serves it,
// with two business units, a police-check setting in each, three sources of bu-syd and one of
// bu-nyc, a row on support hold with a diagnostics blob, and three hours of deliveries.
type env struct {
	rt    *app.Runtime
	clock *automation.ManualClock
	srv   *httptest.Server
	db    *sql.DB
	held  automation.SchedulerRow // bu-syd, on support hold
	wait  automation.SchedulerRow // bu-syd, Pending, waiting for its time
	other automation.SchedulerRow // bu-nyc, Pending
	// sent, failed, unknown count the fixture's delivery outcomes (the chart's totals).
	sent, failed, unknown int
	cfg                   config.Config
	apptest.Sources
}

const (
	guidA = "3b2d6f0e-1a4c-4d8e-9b7a-2c5e8f1a3d6b"
	guidB = "4c3e7a1f-2b5d-4e9f-8c6b-3d4e5f6a7b8c"
	guidC = "5d4f8b2a-3c6e-4fa0-9d7c-4e5f6a7b8c9d"
	guidN = "6e5a9c3b-4d7f-4ab1-8e8d-5f6a7b8c9dae"
)

func newEnv(t *testing.T, vars map[string]string) *env {
	t.Helper()
	dir := t.TempDir()
	cfg, err := config.Load(func(k string) string {
		switch k {
		case "AUTOMATION_DATA_DIR":
			return dir
		case "AUTOMATION_API_TOKEN":
			if v, ok := vars[k]; ok {
				return v
			}
			return token
		}
		return vars[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	e := &env{clock: automation.NewManualClock(now.Add(-30 * 24 * time.Hour)), cfg: cfg}
	e.rt, err = app.Open(context.Background(), cfg, app.Options{Clock: e.clock, Seed: 5, LogOutput: io.Discard, Log: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.rt.Close() })
	e.db = e.rt.Store.(interface{ DB() *sql.DB }).DB()
	e.srv = httptest.NewServer(e.rt.ListenerHandler(false))
	t.Cleanup(e.srv.Close)
	e.Sources = apptest.Sources{RT: e.rt, EntityType: "PoliceVetting"}
	apptest.PoliceChecks(t, e.rt, e.clock.Now(), apptest.PoliceCheck{Unit: apptest.Sydney, SettingGuid: "0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e50", SendLocalTime: "09:00"},
		apptest.PoliceCheck{Unit: apptest.NewYork, SettingGuid: "0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e51", SendLocalTime: "09:00"})
	// bu-syd: A expires just after now (its 30-day row is due before now: held), B and C later.
	e.event(t, "evt-a", "bu-syd", guidA, "2026-10-30")
	e.event(t, "evt-b", "bu-syd", guidB, "2027-03-14")
	e.event(t, "evt-c", "bu-syd", guidC, "2027-04-02")
	e.event(t, "evt-n", "bu-nyc", guidN, "2027-03-20")
	rowsA := e.RowsOf(t, guidA)
	e.held = e.hold(t, rowsA[0])
	e.wait = e.RowsOf(t, guidB)[0]
	e.other = e.RowsOf(t, guidN)[0]
	e.deliveries(t)
	e.clock.Set(now)
	return e
}

func (e *env) event(t *testing.T, id, bu, guid, expires string) {
	t.Helper()
	apptest.Dispatch(t, e.rt, fmt.Sprintf(`{"specversion":"1.0","id":%q,"source":"/hr","type":"PoliceVetting.Upserted","businessunitid":%q,
	  "entitytype":"PoliceVetting","entityguid":%q,"revision":1,"data":{"expiresOn":%q,"staffName":"Amelia Nguyen","staffEmail":"amelia.nguyen@example.test"}}`,
		id, bu, guid, expires))
}

// hold puts r on support hold after a failed attempt, with a diagnostics blob and trace row.
func (e *env) hold(t *testing.T, r automation.SchedulerRow) automation.SchedulerRow {
	t.Helper()
	ctx := context.Background()
	rows, err := e.rt.Store.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: r.ScheduledOn, Lease: time.Minute, Limit: 100})
	if err != nil || len(rows) != 1 || rows[0].ID != r.ID {
		t.Fatalf("claim for the hold: %v %v", rows, err)
	}
	c := rows[0]
	blob := "scheduler/" + c.Guid + "/001.json"
	if err := e.rt.Trace.PutBlob(ctx, blob, []byte(`{"error":"smtp 550 mailbox unavailable for amelia.nguyen@example.test","attempt":1,"provider":"smtp.example.test"}`)); err != nil {
		t.Fatal(err)
	}
	if err := e.rt.Store.SchedulerFail(ctx, store.SchedulerFailParams{ID: c.ID, Token: c.Version, Now: r.ScheduledOn,
		FailureReasonCode: automation.ReasonHandlerError, Hold: true, TraceBlobName: blob}); err != nil {
		t.Fatal(err)
	}
	if err := trace.WriteJobs(ctx, e.rt.Trace, []trace.JobRecord{{SchedulerKey: c.SchedulerKey, RowGuid: c.Guid, RowID: c.ID,
		BusinessUnitID: c.BusinessUnitID, AutomationType: string(c.AutomationType), Attempt: 1, Version: c.Version, Outcome: trace.OutcomeHeld,
		ReasonCode: string(automation.ReasonHandlerError), Message: "smtp 550 mailbox unavailable; on support hold",
		StartedOn: r.ScheduledOn, FinishedOn: r.ScheduledOn.Add(2 * time.Second), TraceBlobName: blob}}); err != nil {
		t.Fatal(err)
	}
	return e.Row(t, r.ID)
}

// completeFixtureRow ensures, claims and completes one date-based reminder row of bu-syd due
// at on (scheduler key name+":fixture"), recording reqs as its deliveries (each under the
// row's SchedulerKey).
func (e *env) completeFixtureRow(t *testing.T, name string, on time.Time, reqs ...store.NotificationRequest) {
	t.Helper()
	ctx := context.Background()
	c := automation.Candidate{AutomationType: automation.TypeReminder, TriggerType: automation.TriggerDateBased,
		SchedulerKey: name + ":fixture", InputHash: automation.InputHash(name), SourceEntityType: "PoliceVetting",
		SourceEntityGuid: guidC, BusinessUnitID: "bu-syd", ScheduledOn: on, ScheduledLocalDate: "2026-10-05",
		ScheduledLocalTime: "09:00", TimeZoneID: "Australia/Sydney"}
	if _, err := e.rt.Store.SchedulerEnsure(ctx, store.SchedulerEnsureParams{Now: on, Candidates: []automation.Candidate{c}}); err != nil {
		t.Fatal(err)
	}
	rows, err := e.rt.Store.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: on, Lease: time.Minute, Limit: 10})
	if err != nil || len(rows) != 1 {
		t.Fatalf("claim: %v %v", rows, err)
	}
	for i := range reqs {
		reqs[i].SchedulerKey = c.SchedulerKey
	}
	if err := e.rt.Store.SchedulerComplete(ctx, store.SchedulerCompleteParams{ID: rows[0].ID, Token: rows[0].Version, Now: on, Deliveries: reqs}); err != nil {
		t.Fatal(err)
	}
}

// deliveries records three hours of delivery outcomes before now (sent, a few failed and
// UNKNOWN) for the overview's chart.
func (e *env) deliveries(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	// 1 to 5 deliveries a minute over the 180 minutes before now; every 23rd failed, every
	// 41st UNKNOWN.
	type at struct {
		key string
		on  time.Time
	}
	var reqs []store.NotificationRequest
	var ats []at
	for m := 0; m < 180; m++ {
		for k := 0; k < 1+(m*7)%5; k++ {
			key := fmt.Sprintf("dlv_chart_%03d", len(reqs))
			reqs = append(reqs, store.NotificationRequest{DeliveryKey: key, BusinessUnitID: "bu-syd",
				Channel: "log", Recipient: fmt.Sprintf("staff%03d@example.test", len(reqs)), Template: "t", LocalDate: "2026-10-05", PayloadJSON: "{}"})
			ats = append(ats, at{key, now.Add(-time.Duration(180-m)*time.Minute + time.Duration(10+k*7)*time.Second)})
		}
	}
	e.completeFixtureRow(t, "chart", now.Add(-4*time.Hour), reqs...)
	for i, a := range ats {
		cl, err := e.rt.Store.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: a.key, Now: a.on, Lease: time.Minute})
		if err != nil || !cl.Claimed {
			t.Fatalf("claim delivery %d: %+v %v", i, cl, err)
		}
		st, msg := store.NotificationSent, ""
		switch {
		case i%23 == 7:
			st, msg = store.NotificationFailed, "550 mailbox unavailable"
		case i%41 == 11:
			st, msg = store.NotificationUnknown, "timeout after the request was written"
		}
		switch st {
		case store.NotificationSent:
			e.sent++
		case store.NotificationFailed:
			e.failed++
		default:
			e.unknown++
		}
		if err := e.rt.Store.NotificationFinish(ctx, store.NotificationFinishParams{ID: cl.Job.ID, Token: cl.Job.Version, Now: a.on, Status: st, Error: msg}); err != nil {
			t.Fatal(err)
		}
	}
}

// client is an HTTP client that keeps cookies and does not follow redirects.
func client(t *testing.T) *http.Client {
	t.Helper()
	jar := newJar()
	return &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

func (e *env) url(path string) string { return e.srv.URL + path }

// form posts values to path with the headers given ("Name", "value" pairs).
func (e *env) form(t *testing.T, c *http.Client, path string, v url.Values, headers ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", e.url(path), strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return do(t, c, req)
}

// bearerPoster returns a poster of forms to path as a bearer caller (the API token), with
// the extra headers given ("Name", "value" pairs).
func (e *env) bearerPoster(t *testing.T, path string) func(v url.Values, extra ...string) (int, string) {
	return func(v url.Values, extra ...string) (int, string) {
		t.Helper()
		return e.form(t, http.DefaultClient, path, v, append([]string{"Authorization", "Bearer " + token}, extra...)...)
	}
}

// refusesOutOfScopeAndWithoutCSRF checks two refusals of form v posted to path: 404 for a
// bearer caller whose scope lacks the unit (X-Automation-Business-Units: bu-nyc), and 403 for
// a signed-in cookie session's post without its CSRF token.
func (e *env) refusesOutOfScopeAndWithoutCSRF(t *testing.T, path string, v url.Values) {
	t.Helper()
	if code, _ := e.bearerPoster(t, path)(v, "X-Automation-Business-Units", "bu-nyc"); code != 404 {
		t.Fatalf("out of scope: %d", code)
	}
	c := client(t)
	e.signIn(t, c)
	if code, _ := e.form(t, c, path, v); code != 403 {
		t.Fatalf("cookie session without CSRF: %d", code)
	}
}

func (e *env) get(t *testing.T, c *http.Client, path string, headers ...string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", e.url(path), nil)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	return do(t, c, req)
}

func do(t *testing.T, c *http.Client, req *http.Request) (int, string) {
	t.Helper()
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}
