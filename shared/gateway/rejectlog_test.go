package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/gateway"
)

// The gateway logs each rejected event at INFO with its type, pointer and reason, at most
// RejectionsLoggedPerMinute a type a minute: a flood of 100 bad events of made-up types
// writes the limit's lines and one "not logged" line, and the next minute logs again.
func TestRejectionsAreLoggedBoundedPerTypePerMinute(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	svc, clock := rejectService(t, slog.New(slog.NewJSONHandler(&buf, nil)))
	raws := make([]events.Raw, 100)
	for i := range raws {
		raws[i] = events.Raw{JSON: []byte(fmt.Sprintf(`{"specversion":"1.0","id":"e-%d","type":"MadeUp%d","source":"/x","businessunitid":"bu-1","data":{}}`, i, i))}
	}
	if _, err := svc.Ingest(context.Background(), automation.AllBusinessUnits(), raws); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != gateway.RejectionsLoggedPerMinute+1 {
		t.Fatalf("%d lines for 100 rejections, want %d: %s", len(lines), gateway.RejectionsLoggedPerMinute+1, buf.String())
	}
	if !strings.Contains(lines[0], `"level":"INFO"`) || !strings.Contains(lines[0], `"type":"MadeUp0"`) || !strings.Contains(lines[0], `"pointer":"/type"`) ||
		!strings.Contains(lines[0], `"reason":`) || !strings.Contains(lines[len(lines)-1], "not logged") {
		t.Fatalf("lines %s", buf.String())
	}
	buf.Reset()
	clock.Advance(time.Minute)
	if _, err := svc.Ingest(context.Background(), automation.AllBusinessUnits(), raws[:1]); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "event rejected"); n != 1 {
		t.Fatalf("the next minute logged %d rejections, want 1", n)
	}
}

func rejectService(t *testing.T, log *slog.Logger) (*gateway.Service, *automation.ManualClock) {
	e := newEnv(t)
	e.svc.Log = log
	return e.svc, e.clock
}
