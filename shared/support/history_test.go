package support_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/metricscount"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/support"
)

// TestSamplerOnAFakeClock: the sampler writes one sample per business unit plus the platform
// row, stamped with the whole minute, at most once per Every however often the timer fires;
// samples older than the retention are purged by a later run; and the history a caller reads
// is its own units' only (bu-a's token never sees bu-b's held rows), with outbox figures for
// a caller that sees every unit.
func TestSamplerOnAFakeClock(t *testing.T) {
	t.Parallel()
	e := newEnv(t, support.Config{})
	ctx := context.Background()
	for _, bu := range []string{"bu-a", "bu-b"} {
		e.unit(t, store.BusinessUnit{ID: bu, Name: bu, TimeZoneID: "UTC"})
	}
	e.held(t, 0, 3, "bu-a")
	e.held(t, 100, 5, "bu-b")
	s := &support.Sampler{Service: e.svc, Retention: 3 * time.Hour}
	e.clock.Set(t0.Add(20 * time.Second))
	res, err := s.RunOnce(ctx)
	if err != nil || res.Samples != 3 || res.Skipped {
		t.Fatalf("first run: %+v %v", res, err)
	}
	// The timer fires every few seconds: nothing more until a minute has passed.
	e.clock.Set(t0.Add(50 * time.Second))
	if res, err = s.RunOnce(ctx); err != nil || !res.Skipped || res.Samples != 0 {
		t.Fatalf("within the minute: %+v %v", res, err)
	}
	// Four hours of minutes; the retention (3 h) keeps the last 180 minutes.
	for m := 1; m <= 240; m++ {
		e.clock.Set(t0.Add(time.Duration(m)*time.Minute + 20*time.Second))
		if res, err = s.RunOnce(ctx); err != nil || res.Samples != 3 {
			t.Fatalf("minute %d: %+v %v", m, res, err)
		}
	}
	// Minute 240 (at 20 s past) purged the sample of minute 60, now more than 3 h old.
	if res.Purged != 3 {
		t.Fatalf("last run purged %d samples, want 3 (one minute of 3 rows)", res.Purged)
	}
	a, err := e.svc.MetricsHistory(ctx, automation.BusinessUnits("bu-a"), "", 24)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.Points) != 180 || a.Platform || !a.Points[0].On.Equal(t0.Add(61*time.Minute)) || !a.Points[179].On.Equal(t0.Add(240*time.Minute)) {
		t.Fatalf("bu-a history: %d points, %s..%s, platform %v", len(a.Points), a.Points[0].On, a.Points[len(a.Points)-1].On, a.Platform)
	}
	for _, p := range a.Points {
		if p.OnHold != 3 || p.OutboxUnsent != nil {
			t.Fatalf("bu-a point %+v: want its 3 held rows and no outbox figures", p)
		}
	}
	// Scope: bu-a's caller asking for bu-b is refused like an unknown unit.
	if _, err := e.svc.MetricsHistory(ctx, automation.BusinessUnits("bu-a"), "bu-b", 1); automation.CodeOf(err) != automation.CodeNotFound {
		t.Fatalf("bu-b through bu-a's scope: %v", err)
	}
	all, err := e.svc.MetricsHistory(ctx, automation.AllBusinessUnits(), "", 1)
	if err != nil || !all.Platform || len(all.Points) != 60 || all.Points[0].OnHold != 8 || all.Points[0].OutboxUnsent == nil {
		t.Fatalf("platform history: %+v %v", all, err)
	}
	b, err := e.svc.MetricsHistory(ctx, automation.AllBusinessUnits(), "bu-b", 1)
	if err != nil || b.Platform || b.Points[0].OnHold != 5 {
		t.Fatalf("bu-b history: %+v %v", b, err)
	}
	if _, err := e.svc.MetricsHistory(ctx, automation.AllBusinessUnits(), "", 25); automation.CodeOf(err) != automation.CodeInvalidInput {
		t.Fatalf("25 hours: %v", err)
	}
}

// countSource is a CountSource whose drains answer the counts given and record what comes back.
type countSource struct {
	next     []store.MetricsCount
	restored []store.MetricsCount
}

func (c *countSource) DrainCounts(at time.Time) []store.MetricsCount {
	out := c.next
	c.next = nil
	for i := range out {
		out[i].MinuteOn = at
	}
	return out
}

func (c *countSource) RestoreCounts(cs []store.MetricsCount) { c.restored = append(c.restored, cs...) }

// TestSamplerPersistsCounts: a run adds its sources' counts to MetricsCount (IngestThroughput
// reads them); counts the store refuses go back to their source, the run fails and is not
// remembered, so the next timer tick tries again (nothing lost, nothing added twice).
func TestSamplerPersistsCounts(t *testing.T) {
	t.Parallel()
	e := newEnv(t, support.Config{})
	ctx := context.Background()
	src := &countSource{next: []store.MetricsCount{{Flow: store.FlowIngest, BusinessUnitID: "bu-a", Label: "ViewItem", Outcome: "accepted", N: 4}}}
	s := &support.Sampler{Service: e.svc, Counters: []support.CountSource{nil, src}}
	e.clock.Set(t0.Add(20 * time.Second))
	if res, err := s.RunOnce(ctx); err != nil || res.Counts != 1 {
		t.Fatalf("first run: %+v %v", res, err)
	}
	tp, err := e.svc.IngestThroughput(ctx, automation.AllBusinessUnits(), "", 1)
	if err != nil || tp.Sent != 4 || tp.Failed != 0 {
		t.Fatalf("ingest throughput: %+v %v", tp, err)
	}
	if a, err := e.svc.IngestThroughput(ctx, automation.BusinessUnits("bu-b"), "", 1); err != nil || a.Sent != 0 {
		t.Fatalf("bu-b's ingest: %+v %v", a, err)
	}
	// A count the store refuses (N 0): the whole batch goes back, the run is not remembered.
	bad := []store.MetricsCount{{Flow: store.FlowIngest, BusinessUnitID: "bu-a", Label: "ViewItem", Outcome: "rejected", N: 2}, {Flow: store.FlowIngest, Outcome: "accepted"}}
	src.next = bad
	e.clock.Set(t0.Add(80 * time.Second))
	if _, err := s.RunOnce(ctx); err == nil {
		t.Fatal("a refused count: no error")
	}
	if len(src.restored) != 2 || src.restored[0].N != 2 {
		t.Fatalf("restored %+v, want both counts of the refused batch", src.restored)
	}
	if res, err := s.RunOnce(ctx); err != nil || res.Skipped {
		t.Fatalf("the run after a failure: %+v %v (a failed run is not remembered)", res, err)
	}
	if tp, _ := e.svc.IngestThroughput(ctx, automation.AllBusinessUnits(), "", 1); tp.Sent != 4 || tp.Failed != 0 {
		t.Fatalf("after the refused batch: %+v, want nothing of it written", tp)
	}
}

// A trigger whose instruction names an event longer than MetricsCount's Label column (the
// registry does not bound trigger_event) is counted, but its label does not fit the table:
// on SQL Server the whole batch failed ("would be truncated"), went back to its source, and
// failed again every minute, so no trigger count was ever persisted again, and the sources
// after it (the report runs) were never flushed either. The label is counted under "" (as
// an unregistered event type is), and every count is persisted.
func TestSamplerOverLongLabelDoesNotPoisonTheFlush(t *testing.T) {
	t.Parallel()
	e := newEnv(t, support.Config{})
	ctx := context.Background()
	trg, rep := metricscount.New(metricscount.FlowTrigger), metricscount.New(metricscount.FlowReport)
	trg.Add("bu-a", strings.Repeat("T", store.MaxMetricsCountLabel+1), metricscount.OutcomeFired, 2)
	trg.Add("bu-a", "Visit_2", metricscount.OutcomeFired, 3)
	rep.Add("bu-a", "DAILY", metricscount.OutcomeDelivered, 1)
	s := &support.Sampler{Service: e.svc, Counters: []support.CountSource{trg, rep}}
	e.clock.Set(t0.Add(20 * time.Second))
	for range 2 {
		if _, err := s.FlushCounts(ctx); err != nil {
			t.Errorf("flush: %v", err)
		}
	}
	all := automation.AllBusinessUnits()
	if tp, err := e.svc.TriggerThroughput(ctx, all, "", 1); err != nil || tp.Sent != 5 {
		t.Errorf("triggers persisted: %+v %v, want 5 (the over-long name's 2 and Visit_2's 3)", tp.Sent, err)
	}
	if tp, err := e.svc.ReportThroughput(ctx, all, "", 1); err != nil || tp.Sent != 1 {
		t.Errorf("report runs persisted: %+v %v, want 1", tp.Sent, err)
	}
	if trg.Len() != 0 || rep.Len() != 0 {
		t.Errorf("pending after the flushes: triggers %d, reports %d, want none", trg.Len(), rep.Len())
	}
}

// One source's refused batch goes back to that source and fails the flush, but does not
// hold back the sources after it: their counts are persisted in the same flush.
func TestSamplerOneRefusedSourceDoesNotHoldBackTheOthers(t *testing.T) {
	t.Parallel()
	e := newEnv(t, support.Config{})
	ctx := context.Background()
	bad := &countSource{next: []store.MetricsCount{{Flow: store.FlowIngest, BusinessUnitID: "bu-a", Label: "ViewItem", Outcome: "accepted"}}}
	rep := metricscount.New(metricscount.FlowReport)
	rep.Add("bu-a", "DAILY", metricscount.OutcomeDelivered, 1)
	s := &support.Sampler{Service: e.svc, Counters: []support.CountSource{bad, rep}}
	e.clock.Set(t0.Add(20 * time.Second))
	if _, err := s.FlushCounts(ctx); err == nil {
		t.Error("a refused count: no error")
	}
	if len(bad.restored) != 1 {
		t.Errorf("restored %+v, want the refused count back in its source", bad.restored)
	}
	if tp, err := e.svc.ReportThroughput(ctx, automation.AllBusinessUnits(), "", 1); err != nil || tp.Sent != 1 || rep.Len() != 0 {
		t.Errorf("report runs persisted: %d %v, pending %d; want 1 persisted, none pending", tp.Sent, err, rep.Len())
	}
}

// ambiguousStore commits a MetricsCountAdd and then answers an error, once: the connection
// dropped after COMMIT reached the server, so the caller cannot tell the flush was written.
type ambiguousStore struct {
	store.Store
	drop int // answers still to drop
}

func (a *ambiguousStore) MetricsCountAdd(ctx context.Context, flushID string, counts []store.MetricsCount) error {
	if err := a.Store.MetricsCountAdd(ctx, flushID, counts); err != nil {
		return err
	}
	if a.drop > 0 {
		a.drop--
		return errors.New("read tcp 127.0.0.1:1433: connection reset by peer (after COMMIT)")
	}
	return nil
}

// TestSamplerAmbiguousCommitAddsOnce (issue 38 item 5): a flush whose commit succeeded but
// whose answer was lost fails the run; the next run sends the same batch with the same flush
// id, which the store's flush ledger absorbs. Each count is persisted once, not twice (before
// the flush id, the failed batch went back to its source and was added again).
func TestSamplerAmbiguousCommitAddsOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, support.Config{})
	ctx := context.Background()
	amb := &ambiguousStore{Store: e.st, drop: 1}
	svc, err := support.New(amb, e.tr, e.clock, support.Config{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	rep := metricscount.New(metricscount.FlowReport)
	rep.Add("bu-a", "DAILY", metricscount.OutcomeDelivered, 3)
	s := &support.Sampler{Service: svc, Counters: []support.CountSource{rep}}
	e.clock.Set(t0.Add(20 * time.Second))
	if _, err := s.FlushCounts(ctx); err == nil {
		t.Fatal("the lost answer: no error")
	}
	// Counted meanwhile: drained by the next flush, after the kept batch.
	rep.Add("bu-a", "DAILY", metricscount.OutcomeDelivered, 1)
	if _, err := s.FlushCounts(ctx); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if tp, err := e.svc.ReportThroughput(ctx, automation.AllBusinessUnits(), "", 1); err != nil || tp.Sent != 4 || rep.Len() != 0 {
		t.Fatalf("report runs persisted: %d %v, pending %d; want 4 (3 once, then 1), none pending", tp.Sent, err, rep.Len())
	}
	// Another lost answer while a batch is kept: the run fails before draining anything new.
	amb.drop = 1
	rep.Add("bu-a", "DAILY", metricscount.OutcomeFailed, 2)
	if _, err := s.FlushCounts(ctx); err == nil {
		t.Fatal("the second lost answer: no error")
	}
	amb.drop = 0
	rep.Add("bu-a", "DAILY", metricscount.OutcomeFailed, 5)
	if _, err := s.FlushCounts(ctx); err != nil {
		t.Fatal(err)
	}
	if tp, err := e.svc.ReportThroughput(ctx, automation.AllBusinessUnits(), "", 1); err != nil || tp.Sent != 4 || tp.Failed != 7 {
		t.Fatalf("after the second lost answer: %+v %v; want 4 delivered, 7 failed", tp, err)
	}
}
