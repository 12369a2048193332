package handler

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/topology"
)

// A batch whose messages cannot be told apart (a Metadata array not as long as the bodies,
// bodies that are not a JSON array) was dead-lettered as one record without any body and
// answered as a permanent failure, so the host completed every message of the batch: up
// to MaxMessageBatchSize messages dropped at once. Found by a hostile review (issue 32):
// such a batch fails as a plain error, so the host abandons it and the broker brings each
// message again and, after MaxDeliveryCount, dead-letters each with its body; nothing is
// handled half.
func TestBatchThatCannotBeSplitIsNotAcknowledged(t *testing.T) {
	t.Parallel()
	clock := automation.NewManualClock(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC))
	d := Deps{Clock: clock, Log: slog.New(slog.DiscardHandler)}
	short := hostBatch(t, 3)
	short.Request.Metadata[funchost.MetaMessageIDArray] = json.RawMessage(`"[\"m0\",\"m1\"]"`)
	notArray := hostBatch(t, 2)
	notArray.Request.Data["message"] = json.RawMessage(`"[\"k0\", "`)
	for name, inv := range map[string]*funchost.Invocation{"short MessageIdArray": short, "bodies not an array": notArray} {
		svc := &slowService{clock: clock, applied: map[string]int{}}
		_, err := d.batchInvocation(context.Background(), inv, topology.NotificationDispatchQueue, "dispatch", svc.handle)
		if err == nil || automation.IsPermanent(err) {
			t.Errorf("%s: %v (intent %v), want a failure the host retries: a permanent answer completes every message", name, err, automation.IntentOf(err))
		}
		if svc.handled != 0 {
			t.Errorf("%s: %d messages handled, want none", name, svc.handled)
		}
	}
}
