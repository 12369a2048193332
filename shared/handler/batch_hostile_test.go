package handler

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
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

// steppingService is an idempotent service whose every chunk takes perChunk of the clock
// and whose chunk number backAt (from 1) then sets the clock back by back (an NTP step of
// the wall clock); chunks records each chunk's size.
type steppingService struct {
	clock    *automation.ManualClock
	perChunk time.Duration
	backAt   int
	back     time.Duration
	chunks   []int
}

func (s *steppingService) handle(_ context.Context, msgs []bus.Message) []error {
	s.clock.Advance(s.perChunk)
	s.chunks = append(s.chunks, len(msgs))
	if len(s.chunks) == s.backAt {
		s.clock.Set(s.clock.Now().Add(-s.back))
	}
	return make([]error, len(msgs))
}

// A Clock that steps back mid-batch (an NTP correction) still reaches the batch's deadline:
// the deadline was began+BatchDeadline by Clock readings, so after a step back of an hour
// every later reading was before it and every chunk started, and growChunk, given a
// negative time taken, grew the next chunk to the whole rest. Found by a hostile review:
// time passed is the Clock's forward movement summed between readings, so the step costs
// at most the chunk it fell in (three chunks of 50 s start within a 90 s deadline, not
// four) and chunks grow by the time really measured.
func TestBatchDeadlineHoldsWhenTheClockStepsBack(t *testing.T) {
	t.Parallel()
	for _, dest := range []string{topology.NotificationDispatchQueue, topology.DeliveryFactsTopic, topology.TrackingTopic} {
		clock := automation.NewManualClock(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC))
		svc := &steppingService{clock: clock, perChunk: 50 * time.Second, backAt: 2, back: time.Hour}
		d := Deps{Clock: clock, Log: slog.New(slog.DiscardHandler), BatchDeadline: 90 * time.Second}
		_, err := d.batchInvocation(context.Background(), hostBatch(t, topology.MaxMessageBatchSize), dest, "batch", svc.handle)
		if !errors.Is(err, ErrBatchDeadline) {
			t.Errorf("%s: %v, want ErrBatchDeadline: the clock stepped back, the deadline must still come", dest, err)
		}
		if want := []int{BatchChunk, BatchChunk, BatchChunk}; fmt.Sprint(svc.chunks) != fmt.Sprint(want) {
			t.Errorf("%s: chunks %v, want %v (the step costs at most the chunk it fell in)", dest, svc.chunks, want)
		}
	}
}
