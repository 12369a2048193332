package delivery_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// applyRecorder records each DeliveryFactApply call's facts and fails while fail is set.
type applyRecorder struct {
	calls [][]string // event ids per call
	fail  error
}

func (a *applyRecorder) DeliveryFactApply(_ context.Context, facts []store.DeliveryFact, _ time.Time) (store.DeliveryFactApplyResult, error) {
	var ids []string
	for _, f := range facts {
		ids = append(ids, f.EventID)
	}
	a.calls = append(a.calls, ids)
	return store.DeliveryFactApplyResult{Applied: len(facts)}, a.fail
}

func factMsg(key string, rev int64) bus.Message {
	id := store.FactEventID(key, rev)
	return bus.Message{ID: id, Body: []byte(fmt.Sprintf(`{"eventId":%q,"commandId":%q,"businessUnitId":"bu-1","status":"Sent","revision":%d,"occurredOn":"2026-10-01T00:00:00Z"}`, id, key, rev))}
}

// HandleBatch applies a batch's well-formed facts in one DeliveryFactApply, in the
// messages' order (two facts of one command included); a malformed fact is Permanent
// alone; a failed apply is every well-formed fact's error, retryable.
func TestProjectorHandleBatch(t *testing.T) {
	t.Parallel()
	clock := automation.NewManualClock(time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC))
	rec := &applyRecorder{}
	p := &delivery.Projector{Store: rec, Clock: clock}
	msgs := []bus.Message{factMsg("a", 2), {ID: "bad", Body: []byte(`{"eventId":7}`)}, factMsg("a", 3), factMsg("b", 2)}
	errs := p.HandleBatch(context.Background(), msgs)
	if errs[0] != nil || !automation.IsPermanent(errs[1]) || errs[2] != nil || errs[3] != nil {
		t.Fatalf("errs %v", errs)
	}
	if fmt.Sprint(rec.calls) != "[[a:r2 a:r3 b:r2]]" {
		t.Fatalf("applies %v, want one of the three facts in order", rec.calls)
	}
	rec.fail, rec.calls = errors.New("disk I/O error"), nil
	errs = p.HandleBatch(context.Background(), msgs)
	for i, err := range errs {
		if i == 1 {
			if !automation.IsPermanent(err) {
				t.Fatalf("the malformed fact: %v", err)
			}
			continue
		}
		if err == nil || automation.IsPermanent(err) {
			t.Fatalf("message %d after a failed apply: %v, want the store's error", i, err)
		}
	}
}
