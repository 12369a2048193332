package app_test

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/store"
)

// A business unit that does not exist answers 404 on the delivery support lookups and the
// support metrics, as on the find, the inbox and the attributes (issue 33: a typo in
// businessUnitId must not look like an empty, healthy unit); a unit that exists answers 200.
// The dead-letter list is the exception: its dead letters may name a unit not created yet
// (that is often why they are dead), so it lists them whether the unit exists or not.
func TestSupportLookupsOfAnUnknownUnitAre404(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := apptest.Open(t, nil, time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC), app.Options{Seed: 7})
	if err := rt.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: "bu-syd", Name: "Sydney", TimeZoneID: "Australia/Sydney"}); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/api/support/deliveries/unknown?businessUnitId=",
		"/api/support/deliveries/held?businessUnitId=",
		"/api/support/metrics?businessUnitId=",
		"/api/support/scheduler-rows?businessUnitId=",
	} {
		for bu, want := range map[string]int{"bu-syd": 200, "bu-sdy": 404} {
			rec := httptest.NewRecorder()
			rt.Functions.ServeHTTP(rec, httptest.NewRequest("GET", path+bu, nil))
			if rec.Code != want {
				t.Errorf("GET %s%s: %d, want %d (%s)", path, bu, rec.Code, want, rec.Body)
			}
		}
	}
	rec := httptest.NewRecorder()
	rt.Functions.ServeHTTP(rec, httptest.NewRequest("GET", "/api/support/deliveries/counts?businessUnitId=bu-sdy&from=2026-09-01&to=2026-09-30", nil))
	if rec.Code != 404 {
		t.Errorf("counts of an unknown unit: %d, want 404", rec.Code)
	}
}
