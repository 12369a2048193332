package app_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/logsink"
	"github.com/automation-platform/automation/shared/store"
)

// A delivery whose channel needs a template the unit does not have (a reminder setting saved
// with a warning, a forward reference) waits Failed on support hold, and no sweep sends it;
// once the template is saved, support releases it through the API
// (POST /api/support/deliveries/{deliveryKey}/release), and it is sent exactly once. A
// second release, a release of another unit's delivery, and a stale version change nothing.
func TestDeliveryHeldForAMissingTemplateIsReleasedAndSentOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var hits atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.WriteHeader(http.StatusOK)
	}))
	t.Cleanup(srv.Close)
	env := map[string]string{"AUTOMATION_DATA_DIR": t.TempDir(), "AUTOMATION_WEBHOOK_SECRET": "0123456789abcdef0123"}
	cfg, err := config.Load(func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	clock := automation.NewManualClock(time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC))
	rt, err := app.Open(ctx, cfg, app.Options{Clock: clock, LogOutput: &logsink.Buffer{}, Seed: 7})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { rt.Close() })
	if _, err := rt.LocalHost("../../functions", cfg, false, nil); err != nil {
		t.Fatal(err)
	}
	for _, bu := range []string{"bu-syd", "bu-other"} {
		if err := rt.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: bu, Name: bu, TimeZoneID: "Australia/Sydney"}); err != nil {
			t.Fatal(err)
		}
	}
	upsertPoliceCheckSetting(t, rt, "0", "webhook", "hookUrl", clock.Now())
	hook := strings.Replace(srv.URL, "127.0.0.1", "localhost", 1) + "/hook"
	raw, _ := json.Marshal(map[string]any{"specversion": "1.0", "id": "evt-1", "source": "/hr", "type": "PoliceVetting.Upserted",
		"businessunitid": "bu-syd", "entitytype": "PoliceVetting", "entityguid": "3b2d6f0e-1a4c-4d8e-9b7a-000000000001", "revision": 1,
		"data": map[string]any{"expiresOn": "2026-10-01", "hookUrl": hook}})
	ev, err := events.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if err := rt.Events.Dispatch(ctx, ev); err != nil {
		t.Fatal(err)
	}
	clock.Set(time.Date(2026, 9, 30, 23, 0, 0, 0, time.UTC))
	tick := func() {
		t.Helper()
		if _, err := rt.Tick(ctx); err != nil {
			t.Fatal(err)
		}
	}
	tick()
	// Support finds it among the unit's held deliveries.
	req := httptest.NewRequest(http.MethodGet, "/api/support/deliveries/held?businessUnitId=bu-syd", nil)
	hrec := httptest.NewRecorder()
	rt.Functions.ServeHTTP(hrec, req)
	var held struct {
		Items []struct {
			DeliveryKey string `json:"deliveryKey"`
			LastError   string `json:"lastError"`
		} `json:"items"`
	}
	if err := json.Unmarshal(hrec.Body.Bytes(), &held); err != nil || hrec.Code != http.StatusOK || len(held.Items) != 1 ||
		!strings.Contains(held.Items[0].LastError, "police-vetting-expiry") {
		t.Fatalf("held deliveries: %d %s", hrec.Code, hrec.Body)
	}
	key := held.Items[0].DeliveryKey
	j, err := rt.Store.NotificationGetByKey(ctx, key)
	if err != nil {
		t.Fatal(err)
	}
	if j.Status != store.NotificationFailed || !j.IsOnSupportHold || hits.Load() != 0 {
		t.Fatalf("job %s hold %v (%s), %d sends: want Failed on hold, nothing sent", j.Status, j.IsOnSupportHold, j.LastError, hits.Load())
	}
	clock.Advance(24 * time.Hour)
	tick()
	if hits.Load() != 0 {
		t.Fatal("a held delivery was sent before its release")
	}
	if _, err := rt.Templates.Save(ctx, store.NotificationTemplate{Key: "police-vetting-expiry", BusinessUnitID: "bu-syd",
		Subject: "Police check", Text: "Your police check expires soon", CreatedBy: "jane"}, nil); err != nil {
		t.Fatal(err)
	}
	release := func(bu string, version int64) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, "/api/support/deliveries/"+key+"/release",
			strings.NewReader(`{"businessUnitId":"`+bu+`","reason":"template saved"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Automation-Operator", "jane")
		req.Header.Set("If-Match", fmt.Sprintf(`"%d"`, version))
		rec := httptest.NewRecorder()
		rt.Functions.ServeHTTP(rec, req)
		return rec
	}
	if r := release("bu-other", j.Version); r.Code != http.StatusNotFound {
		t.Fatalf("release under another unit: %d %s", r.Code, r.Body)
	}
	if r := release("bu-syd", j.Version-1); r.Code != http.StatusPreconditionFailed {
		t.Fatalf("release with a stale version: %d %s", r.Code, r.Body)
	}
	if hits.Load() != 0 {
		t.Fatal("a refused release sent the delivery")
	}
	r := release("bu-syd", j.Version)
	if r.Code != http.StatusOK {
		t.Fatalf("release: %d %s", r.Code, r.Body)
	}
	if r2 := release("bu-syd", j.Version+1); r2.Code != http.StatusConflict {
		t.Fatalf("a second release: %d %s", r2.Code, r2.Body)
	}
	for range 3 {
		tick()
		clock.Advance(time.Hour)
	}
	if n := hits.Load(); n != 1 {
		j, _ := rt.Store.NotificationGetByKey(ctx, key)
		t.Fatalf("the released delivery was sent %d times, want once (job %s hold %v: %s)", n, j.Status, j.IsOnSupportHold, j.LastError)
	}
	if j, _ := rt.Store.NotificationGetByKey(ctx, key); j.Status != store.NotificationSent || j.IsOnSupportHold {
		t.Fatalf("job %s hold %v (%s), want Sent", j.Status, j.IsOnSupportHold, j.LastError)
	}
}
