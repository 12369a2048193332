package app_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// serveJSON sends method path with body to h in-process and returns what h answered: the
// body goes as application/json unless it is "", then headers (name, value pairs) are set.
func serveJSON(h http.Handler, method, path, body string, headers ...string) *httptest.ResponseRecorder {
	req := httptest.NewRequest(method, path, strings.NewReader(body))
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	return rec
}

// seedUnits creates the business units ids (time zone UTC) through h as the bearer of token,
// each answered 201.
func seedUnits(t *testing.T, h http.Handler, token string, ids ...string) {
	t.Helper()
	for _, bu := range ids {
		if rec := serveJSON(h, "POST", "/api/business-units", `{"id":"`+bu+`","name":"U","timeZone":"UTC"}`, "Authorization", "Bearer "+token); rec.Code != http.StatusCreated {
			t.Fatalf("seed %s: %d %s", bu, rec.Code, rec.Body)
		}
	}
}

// do sends an HTTP request the way the host forwards it (original path, /api prefix)
// through the Functions router that both the custom handler and serve use.
func (e *fnEnv) do(t *testing.T, method, path, body string, headers ...string) (int, http.Header, map[string]any) {
	t.Helper()
	rec := serveJSON(e.rt.Functions, method, path, body, headers...)
	var m map[string]any
	_ = json.Unmarshal(rec.Body.Bytes(), &m)
	return rec.Code, rec.Header(), m
}

// The settings API is wired into the Functions router (custom handler and serve), and a
// settings change reaches the rows an event created; the Reconciliation function answers the
// host's timer payload.
func TestSettingsAPIAndReconciliationThroughTheRouter(t *testing.T) {
	t.Parallel()
	e := newFnEnv(t, nil)
	ctx := context.Background()
	if code, _ := e.post(t, topology.DomainEventHandler, fixture(t, "DomainEventHandler_event.json")); code != 200 {
		t.Fatal(code)
	}
	// newFnEnv stored the setting directly (version 1); read it through the API.
	code, hdr, m := e.do(t, "GET", "/api/reminder-settings/0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f", "")
	if code != 200 || hdr.Get("ETag") != `"1"` || m["sendLocalTime"] != "09:00" {
		t.Fatalf("get: %d %v", code, m)
	}
	m["sendLocalTime"] = "10:00" // the GET answer sent back with one change (read-only fields ignored)
	body, _ := json.Marshal(m)
	code, hdr, m = e.do(t, "PUT", "/api/reminder-settings/0f8f6b1e-5d7a-4c41-9d0e-6b1c2a3d4e5f", string(body), "If-Match", `"1"`)
	if prop, _ := m["propagation"].(map[string]any); code != 200 || hdr.Get("ETag") != `"2"` || prop["rowsUpdatedInPlace"] != float64(3) {
		t.Fatalf("put: %d %v", code, m)
	}
	rows, _ := e.rt.Store.SchedulerListBySource(ctx, store.SchedulerListParams{SourceEntityType: "PoliceVetting", SourceEntityGuid: "3b2d6f0e-1a4c-4d8e-9b7a-2c5e8f1a3d6b", Limit: 10})
	for _, r := range rows {
		if r.ScheduledLocalTime != "10:00" || r.Status != automation.StatusPending {
			t.Fatalf("row %s %s %s", r.SchedulerKey, r.ScheduledLocalTime, r.Status)
		}
	}
	if code, _, _ := e.do(t, "POST", "/api/business-units", `{"id":"bu-hcm","name":"HCMC","timeZone":"SE Asia Standard Time"}`); code != 201 {
		t.Fatalf("create business unit: %d", code)
	}
	if code, _, m := e.do(t, "GET", "/api/business-units/bu-hcm", ""); code != 200 || m["timeZone"] != "Asia/Bangkok" {
		t.Fatalf("business unit: %d %v", code, m)
	}
	// The Reconciliation timer.
	e.clock.Set(time.Date(2026, 9, 2, 1, 15, 0, 0, time.UTC))
	code, body2 := e.post(t, topology.Reconciliation, fixture(t, "Reconciliation_timer.json"))
	rv, _ := body2["ReturnValue"].(map[string]any)
	if code != 200 || rv["complete"] != true {
		t.Fatalf("Reconciliation: %d %v", code, body2)
	}
	// A malformed timer payload is acknowledged without retry; a store failure is retried.
	if code, _ := e.post(t, topology.Reconciliation, bytes.ReplaceAll(fixture(t, "Reconciliation_timer.json"), []byte(`"timer"`), []byte(`"clock"`))); code != 200 {
		t.Fatalf("malformed timer: %d", code)
	}
	e.rt.Store.Close()
	if code, _ := e.post(t, topology.Reconciliation, fixture(t, "Reconciliation_timer.json")); code/100 == 2 {
		t.Fatalf("store failure acknowledged: %d", code)
	}
}
