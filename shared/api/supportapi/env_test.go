package supportapi_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/httpapi/openapitest"
	"github.com/automation-platform/automation/shared/store"
)

// env is a whole runtime (app.Open on SQLite and local trace) whose Functions router serves
// the support routes, with two business units and a police-check setting in each.
type env struct {
	rt    *app.Runtime
	clock *automation.ManualClock
	apptest.Sources
}

const (
	settingSyd = "0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f"
	settingNyc = "2c4e6a8b-0d1f-4e3a-8b5c-7d9f1b3d5e7a"
	guidA      = "3b2d6f0e-1a4c-4d8e-9b7a-2c5e8f1a3d6b" // bu-syd
	guidB      = "3c5e7a9c-1e3a-4c5e-9a7c-9e1a3c5e7a9c" // bu-nyc
)

var start = time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC)

func newEnv(t *testing.T, vars map[string]string) *env {
	t.Helper()
	e := &env{clock: automation.NewManualClock(start)}
	e.rt = apptest.Open(t, vars, start, app.Options{Clock: e.clock, Seed: 3})
	e.Sources = apptest.Sources{RT: e.rt, EntityType: "PoliceVetting"}
	apptest.PoliceChecks(t, e.rt, start, apptest.PoliceCheck{Unit: apptest.Sydney, SettingGuid: settingSyd, SendLocalTime: "09:00"},
		apptest.PoliceCheck{Unit: apptest.NewYork, SettingGuid: settingNyc, SendLocalTime: "01:30"})
	return e
}

// event processes one PoliceVetting event at the clock's now.
func (e *env) event(t *testing.T, id, bu, guid string, rev int, expires string) {
	t.Helper()
	apptest.Dispatch(t, e.rt, fmt.Sprintf(`{"specversion":"1.0","id":%q,"source":"/hr","type":"PoliceVetting.Upserted","businessunitid":%q,
	  "entitytype":"PoliceVetting","entityguid":%q,"revision":%d,"data":{"expiresOn":%q,"staffEmail":"amelia.nguyen@example.test","isActive":true}}`,
		id, bu, guid, rev, expires))
}

// poll runs the due-work poller at instant at.
func (e *env) poll(t *testing.T, at time.Time) {
	t.Helper()
	e.clock.Set(at)
	if _, err := e.rt.Poller.RunOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The batch's trace rows (the row's attempts) are written in the background.
	if err := e.rt.Poller.Flush(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// hold puts row r on support hold as the poller would after its last attempt, with a
// diagnostics blob that names a recipient (the API must mask it).
func (e *env) hold(t *testing.T, r automation.SchedulerRow) automation.SchedulerRow {
	t.Helper()
	ctx := context.Background()
	rows, err := e.rt.Store.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: r.ScheduledOn, Lease: time.Minute, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rows {
		blob := ""
		if c.ID == r.ID {
			blob = "scheduler/" + c.Guid + "/001.json"
			if err := e.rt.Trace.PutBlob(ctx, blob, []byte(`{"error":"smtp 550 for amelia.nguyen@example.test","attempt":1}`)); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.rt.Store.SchedulerFail(ctx, store.SchedulerFailParams{ID: c.ID, Token: c.Version, Now: r.ScheduledOn,
			FailureReasonCode: automation.ReasonHandlerError, Hold: c.ID == r.ID, NextRetryOn: r.ScheduledOn.Add(time.Hour), TraceBlobName: blob}); err != nil {
			t.Fatal(err)
		}
	}
	return e.Row(t, r.ID)
}

// resp is one answer of the runtime, with the problem reader.
type resp struct{ openapitest.Recorded }

func (r resp) problem(t *testing.T) httpapi.Problem {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); ct != httpapi.ProblemContentType {
		t.Fatalf("content type %q, want problem+json; body %s", ct, r.Body)
	}
	var p httpapi.Problem
	r.JSON(t, &p)
	return p
}

// call sends a request through the runtime's Functions router (as serve and the Functions
// host do). Headers are "Name: value" strings.
func (e *env) call(t *testing.T, method, path, body string, headers ...string) resp {
	t.Helper()
	rec := httptest.NewRecorder()
	e.rt.Functions.ServeHTTP(rec, openapitest.Request(method, path, body, headers...))
	return resp{openapitest.Recorded{Code: rec.Code, Header: rec.Header(), Body: bytes.Clone(rec.Body.Bytes())}}
}

const operator = "X-Automation-Operator: ops.jane"

func ifMatch(v int64) string { return fmt.Sprintf("If-Match: %q", fmt.Sprint(v)) }
