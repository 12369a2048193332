package app_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/automation-platform/automation/shared/api/eventsapi"
	"github.com/automation-platform/automation/shared/events"
)

// A full batch (500 events) whose data is well under the per-event bound is more than the
// router's default 4 MiB: the ingest route's own bound (eventsapi.MaxBodyBytes) must be the
// one that applies, so the batch is accepted rather than refused 413 as too large.
func TestEventIngestFullBatchOverRouterDefaultBody(t *testing.T) {
	e := openGateway(t, t.TempDir())
	e.seedRegistry(t)
	pad := strings.Repeat("x", 10<<10)
	evs := make([]map[string]any, events.MaxBatchEvents)
	for i := range evs {
		evs[i] = map[string]any{"specversion": "1.0", "id": fmt.Sprintf("big-%d", i), "source": "/mobile-app", "type": "Login",
			"businessunitid": "bu-1", "customerid": "CUST-001", "data": map[string]string{"channel": "app", "pad": pad}}
	}
	body, _ := json.Marshal(evs)
	if len(body) <= 4<<20 || len(body) > eventsapi.MaxBodyBytes {
		t.Fatalf("body of %d bytes does not exercise the bound", len(body))
	}
	res, err := http.Post(e.srv.URL+eventsapi.Path, events.ContentTypeBatch, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var out eventsapi.Response
	_ = json.NewDecoder(res.Body).Decode(&out)
	if res.StatusCode != http.StatusOK || len(out.Results) != events.MaxBatchEvents || out.Results[499].Status != "accepted" {
		t.Fatalf("status %d, %d results", res.StatusCode, len(out.Results))
	}
}
