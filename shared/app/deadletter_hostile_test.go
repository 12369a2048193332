package app_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/app/apptest"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/store"
)

// The dead-letter API under attack (hostile review of issue 33): a limit beyond the page
// bound and a tampered or borrowed cursor are refused, a caller of one unit neither lists
// nor requeues another unit's dead letters, and two concurrent requeues of one dead letter
// put it back once.
func TestDeadLetterAPIUnderAttack(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rt := apptest.Open(t, nil, time.Date(2026, 9, 2, 1, 0, 0, 0, time.UTC), app.Options{Seed: 7})
	for _, bu := range []string{"bu-a", "bu-b"} {
		if err := rt.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: bu, Name: bu, TimeZoneID: "UTC"}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 3 {
		for _, bu := range []string{"bu-a", "bu-b"} {
			rt.Memory.RecordDeadLetter(bus.Message{ID: bu + "-" + string(rune('0'+i)), Destination: "tracking",
				Body: []byte(`{"business_unit_id":"` + bu + `"}`)}, "refused")
		}
	}
	call := func(method, path, body string, headers ...string) *httptest.ResponseRecorder {
		return serveJSON(rt.Functions, method, path, body, headers...)
	}
	type page struct {
		Items []struct {
			ID             string `json:"id"`
			BusinessUnitID string `json:"businessUnitId"`
		} `json:"items"`
		NextCursor string `json:"nextCursor"`
	}
	list := func(query string, headers ...string) (int, page) {
		rec := call("GET", "/api/support/dead-letters"+query, "", headers...)
		var p page
		_ = json.Unmarshal(rec.Body.Bytes(), &p)
		return rec.Code, p
	}
	for _, q := range []string{"?limit=100000", "?limit=0", "?limit=-1", "?cursor=AAAA", "?cursor=" + strings.Repeat("x", 5000)} {
		if code, _ := list(q); code/100 != 4 {
			t.Errorf("GET %s: %d, want a 4xx", q, code)
		}
	}
	code, p := list("?businessUnitId=bu-a&limit=1")
	if code != 200 || len(p.Items) != 1 || p.NextCursor == "" {
		t.Fatalf("bu-a page 1: %d %+v", code, p)
	}
	if code, _ := list("?businessUnitId=bu-b&limit=1&cursor=" + p.NextCursor); code/100 != 4 {
		t.Errorf("bu-a's cursor reused for bu-b: %d, want a 4xx", code)
	}
	if code, got := list("", "X-Automation-Business-Units", "bu-b"); code != 200 || len(got.Items) != 3 {
		t.Fatalf("bu-b's caller: %d %+v", code, got)
	} else {
		for _, it := range got.Items {
			if it.BusinessUnitID != "bu-b" {
				t.Fatalf("bu-b's caller sees %+v", it)
			}
		}
	}
	if code, _ := list("?businessUnitId=bu-a", "X-Automation-Business-Units", "bu-b"); code != 404 {
		t.Errorf("bu-b's caller asking for bu-a: %d, want 404", code)
	}
	target := p.Items[0].ID
	if rec := call("POST", "/api/support/dead-letters/requeue", `{"id":"`+target+`","reason":"fixed"}`,
		"X-Automation-Operator", "eve", "X-Automation-Business-Units", "bu-b"); rec.Code != 404 {
		t.Errorf("bu-b's caller requeueing bu-a's dead letter: %d %s", rec.Code, rec.Body)
	}
	var wg sync.WaitGroup
	codes := make([]int, 8)
	for i := range codes {
		wg.Go(func() {
			codes[i] = call("POST", "/api/support/dead-letters/requeue", `{"id":"`+target+`","reason":"fixed"}`, "X-Automation-Operator", "jane").Code
		})
	}
	wg.Wait()
	ok := 0
	for _, c := range codes {
		switch c {
		case 200:
			ok++
		case 404:
		default:
			t.Errorf("a concurrent requeue answered %d", c)
		}
	}
	if ok != 1 || rt.Memory.Len("tracking") != 1 {
		t.Fatalf("%d requeues succeeded, %d messages back on the route; want one of each (codes %v)", ok, rt.Memory.Len("tracking"), codes)
	}
}
