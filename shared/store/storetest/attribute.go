package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// runAttribute checks store.AttributeStore (docs/attributes.md#store).
func runAttribute(t *testing.T, open Opener) {
	runCases(t, open, attributeCases)
}

var (
	cust = store.AttributeEntity{BusinessUnitID: "bu-1", EntityType: "CUSTOMER", EntityID: "CUST-1"}
	item = store.AttributeEntity{BusinessUnitID: "bu-1", EntityType: "ITEM", EntityID: "SKU-1"}
)

// incr is a Decide that adds 1 to e's "count" (stored as an integer text), and writes one
// outbox message named after the event when the new value is want.
func incr(e store.AttributeEntity, eventID string, trigger int) func(map[store.AttributeEntity]map[string]store.AttributeRow) (store.AttributeDecision, error) {
	return func(rows map[store.AttributeEntity]map[string]store.AttributeRow) (store.AttributeDecision, error) {
		r, ok := rows[e]["count"]
		n := 0
		if ok {
			n, _ = strconv.Atoi(r.ValueText)
		} else {
			r = store.AttributeRow{AttributeEntity: e, AttributeCode: "count", ValueType: "number"}
		}
		n++
		r.ValueText, r.OrderKey, r.LastEventOn = strconv.Itoa(n), fmt.Sprintf("%08d", n), T0
		d := store.AttributeDecision{Rows: []store.AttributeRow{r}}
		if n == trigger {
			d.Outbox = append(d.Outbox, store.OutboxMessage{MessageID: "trigger:" + eventID, Destination: "events", Body: []byte(`{}`)})
		}
		return d, nil
	}
}

func apply(t *testing.T, s store.Store, eventID string, es []store.AttributeEntity, decide func(map[store.AttributeEntity]map[string]store.AttributeRow) (store.AttributeDecision, error)) (store.AttributeApplyOutcome, error) {
	t.Helper()
	return s.AttributeApply(context.Background(), store.AttributeApplyParams{Now: T0, EventID: eventID, Entities: es, Decide: decide})
}

func countOf(t *testing.T, s store.Store, e store.AttributeEntity) (string, int64) {
	t.Helper()
	rows, err := s.AttributeList(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.AttributeCode == "count" {
			return r.ValueText, r.Version
		}
	}
	return "", 0
}

func testAttributeApply(t *testing.T, open Opener) {
	s := fresh(t, open)
	decide := func(rows map[store.AttributeEntity]map[string]store.AttributeRow) (store.AttributeDecision, error) {
		d, _ := incr(cust, "e1", 1)(rows)
		d.Deltas = []store.AttributeDelta{{AttributeEntity: item, AttributeCode: "views", Micros: 1_000_000}}
		return d, nil
	}
	out, err := apply(t, s, "e1", []store.AttributeEntity{cust, item}, decide)
	if err != nil || out != store.AttributeApplied {
		t.Fatalf("apply: %v %v", out, err)
	}
	if v, ver := countOf(t, s, cust); v != "1" || ver != 1 {
		t.Fatalf("count = %q v%d", v, ver)
	}
	sums, err := s.AttributeDeltaSums(context.Background(), item)
	if err != nil || sums["views"] != 1_000_000 {
		t.Fatalf("sums = %v %v", sums, err)
	}
	m, err := s.OutboxListUnpublished(context.Background(), store.OutboxListParams{Limit: 10})
	if err != nil || len(m) != 1 || m[0].MessageID != "trigger:e1" {
		t.Fatalf("outbox = %+v %v", m, err)
	}
	if _, err := apply(t, s, "e2", []store.AttributeEntity{cust}, incr(cust, "e2", 0)); err != nil {
		t.Fatal(err)
	}
	if v, ver := countOf(t, s, cust); v != "2" || ver != 2 {
		t.Fatalf("count = %q v%d, want 2 v2 (Version bumps on every write)", v, ver)
	}
}

func testAttributeRedelivery(t *testing.T, open Opener) {
	s := fresh(t, open)
	for i := 0; i < 3; i++ {
		out, err := apply(t, s, "e1", []store.AttributeEntity{cust}, incr(cust, "e1", 1))
		want := store.AttributeApplied
		if i > 0 {
			want = store.AttributeDuplicate
		}
		if err != nil || out != want {
			t.Fatalf("delivery %d: %v %v, want %v", i, out, err, want)
		}
	}
	if v, _ := countOf(t, s, cust); v != "1" {
		t.Fatalf("count = %q after 3 deliveries of one event", v)
	}
	// The same event for another entity is not a duplicate of it.
	other := store.AttributeEntity{BusinessUnitID: "bu-2", EntityType: "CUSTOMER", EntityID: "CUST-1"}
	if out, err := apply(t, s, "e1", []store.AttributeEntity{other}, incr(other, "e1", 0)); err != nil || out != store.AttributeApplied {
		t.Fatalf("other business unit: %v %v", out, err)
	}
}

// The ledger purge deletes only rows processed before the cut, at most limit per call; a
// redelivery of a kept id stays a duplicate, one of a purged id is applied again.
func testAttributeProcessedPurge(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	at := func(id string, now time.Time) store.AttributeApplyOutcome {
		t.Helper()
		out, err := s.AttributeApply(ctx, store.AttributeApplyParams{Now: now, EventID: id, Entities: []store.AttributeEntity{cust}, Decide: incr(cust, id, 0)})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	for i := range 3 {
		at(fmt.Sprintf("old-%d", i), T0)
	}
	at("new", T0.Add(time.Hour))
	if _, err := s.AttributeProcessedPurge(ctx, T0.Add(time.Minute), 0); err == nil {
		t.Fatal("limit 0 accepted")
	}
	if n, err := s.AttributeProcessedPurge(ctx, T0.Add(time.Minute), 2); err != nil || n != 2 {
		t.Fatalf("first batch = %d, %v, want 2", n, err)
	}
	if n, err := s.AttributeProcessedPurge(ctx, T0.Add(time.Minute), 2); err != nil || n != 1 {
		t.Fatalf("second batch = %d, %v, want 1", n, err)
	}
	if n, err := s.AttributeProcessedPurge(ctx, T0.Add(time.Minute), 2); err != nil || n != 0 {
		t.Fatalf("third batch = %d, %v, want 0", n, err)
	}
	if out := at("new", T0.Add(2*time.Hour)); out != store.AttributeDuplicate {
		t.Fatalf("a kept id redelivered: %v, want a duplicate", out)
	}
	if out := at("old-0", T0.Add(2*time.Hour)); out != store.AttributeApplied {
		t.Fatalf("a purged id redelivered: %v, want applied", out)
	}
}

func testAttributeStale(t *testing.T, open Opener) {
	s := fresh(t, open)
	if _, err := apply(t, s, "e1", []store.AttributeEntity{cust}, incr(cust, "e1", 0)); err != nil {
		t.Fatal(err)
	}
	stale := func(rows map[store.AttributeEntity]map[string]store.AttributeRow) (store.AttributeDecision, error) {
		r := rows[cust]["count"]
		r.Version = 7 // not what is stored
		r.ValueText = "99"
		return store.AttributeDecision{Rows: []store.AttributeRow{r}, Outbox: []store.OutboxMessage{{MessageID: "x", Destination: "events", Body: []byte(`{}`)}}}, nil
	}
	if _, err := apply(t, s, "e2", []store.AttributeEntity{cust}, stale); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("stale version: %v, want ErrLeaseLost", err)
	}
	insertExisting := func(map[store.AttributeEntity]map[string]store.AttributeRow) (store.AttributeDecision, error) {
		return store.AttributeDecision{Rows: []store.AttributeRow{{AttributeEntity: cust, AttributeCode: "count", ValueType: "number", ValueText: "5", LastEventOn: T0}}}, nil
	}
	if _, err := apply(t, s, "e3", []store.AttributeEntity{cust}, insertExisting); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("insert over an existing row: %v, want ErrLeaseLost", err)
	}
	if v, _ := countOf(t, s, cust); v != "1" {
		t.Fatalf("count = %q", v)
	}
	// Nothing of the refused events was kept: not their processed rows either.
	if out, err := apply(t, s, "e2", []store.AttributeEntity{cust}, incr(cust, "e2", 0)); err != nil || out != store.AttributeApplied {
		t.Fatalf("e2 again: %v %v", out, err)
	}
	if m, _ := s.OutboxListUnpublished(context.Background(), store.OutboxListParams{Limit: 10}); len(m) != 0 {
		t.Fatalf("outbox of a refused event kept: %+v", m)
	}
}

func testAttributeDecideError(t *testing.T, open Opener) {
	s := fresh(t, open)
	bad := automation.Invalid("attribute count", "does not fit")
	_, err := apply(t, s, "e1", []store.AttributeEntity{cust, item}, func(map[store.AttributeEntity]map[string]store.AttributeRow) (store.AttributeDecision, error) {
		return store.AttributeDecision{}, bad
	})
	if !errors.Is(err, bad) {
		t.Fatalf("err = %v", err)
	}
	if out, err := apply(t, s, "e1", []store.AttributeEntity{cust}, incr(cust, "e1", 0)); err != nil || out != store.AttributeApplied {
		t.Fatalf("after a refused attempt the event applies: %v %v", out, err)
	}
}

func testAttributeFlush(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	for i := 0; i < 5; i++ {
		e := item
		if i == 4 {
			e.EntityID = "SKU-2"
		}
		if _, err := apply(t, s, fmt.Sprint("v", i), []store.AttributeEntity{e}, func(map[store.AttributeEntity]map[string]store.AttributeRow) (store.AttributeDecision, error) {
			return store.AttributeDecision{Deltas: []store.AttributeDelta{{AttributeEntity: e, AttributeCode: "views", Micros: 1_500_000}}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	fold := func(old string, micros int64) (string, string, error) {
		n := int64(0)
		if old != "" {
			n, _ = strconv.ParseInt(old, 10, 64)
		}
		n += micros
		return strconv.FormatInt(n, 10), fmt.Sprintf("%020d", n), nil
	}
	// A fold that fails rolls the whole batch back: nothing folded, nothing deleted.
	if _, err := s.AttributeFlushDeltas(ctx, T0, 10, func(string, int64) (string, string, error) { return "", "", errors.New("crash") }); err == nil {
		t.Fatal("failing fold: no error")
	}
	if sums, _ := s.AttributeDeltaSums(ctx, item); sums["views"] != 6_000_000 {
		t.Fatalf("after a failed flush sums = %v", sums)
	}
	r, err := s.AttributeFlushDeltas(ctx, T0, 3, fold)
	if err != nil || r.Deltas != 3 || r.Counters != 1 {
		t.Fatalf("first batch: %+v %v", r, err)
	}
	sums, _ := s.AttributeDeltaSums(ctx, item)
	if v, _ := valueOf(t, s, item, "views"); v != "4500000" || sums["views"] != 1_500_000 {
		t.Fatalf("after one batch: row %q, unfolded %v (row + unfolded must be the total)", v, sums)
	}
	r, err = s.AttributeFlushDeltas(ctx, T0, 10, fold)
	if err != nil || r.Deltas != 2 || r.Counters != 2 {
		t.Fatalf("second batch: %+v %v", r, err)
	}
	if r, err = s.AttributeFlushDeltas(ctx, T0, 10, fold); err != nil || r.Deltas != 0 {
		t.Fatalf("nothing left: %+v %v", r, err)
	}
	if v, ver := valueOf(t, s, item, "views"); v != "6000000" || ver != 2 {
		t.Fatalf("folded = %q v%d", v, ver)
	}
	if _, err := s.AttributeFlushDeltas(ctx, T0, store.MaxBatch+1, fold); err == nil {
		t.Fatal("unbounded flush accepted")
	}
}

func valueOf(t *testing.T, s store.Store, e store.AttributeEntity, code string) (string, int64) {
	t.Helper()
	rows, err := s.AttributeList(context.Background(), e)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rows {
		if r.AttributeCode == code {
			return r.ValueText, r.Version
		}
	}
	return "", 0
}

func testAttributeTop(t *testing.T, open Opener) {
	s := fresh(t, open)
	for i, n := range []int{3, 10, 7, 1} {
		e := store.AttributeEntity{BusinessUnitID: "bu-1", EntityType: "ITEM", EntityID: fmt.Sprint("SKU-", i)}
		row := store.AttributeRow{AttributeEntity: e, AttributeCode: "redeemed", ValueType: "number", ValueText: strconv.Itoa(n), OrderKey: fmt.Sprintf("%08d", n), LastEventOn: T0}
		other := row
		other.BusinessUnitID = "bu-2"
		other.OrderKey = "99999999"
		if _, err := apply(t, s, fmt.Sprint("r", i), []store.AttributeEntity{e, other.AttributeEntity}, func(map[store.AttributeEntity]map[string]store.AttributeRow) (store.AttributeDecision, error) {
			return store.AttributeDecision{Rows: []store.AttributeRow{row, other}}, nil
		}); err != nil {
			t.Fatal(err)
		}
	}
	top, err := s.AttributeTop(context.Background(), store.AttributeTopParams{BusinessUnitID: "bu-1", EntityType: "ITEM", AttributeCode: "redeemed", Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range top {
		got = append(got, r.EntityID+"="+r.ValueText)
	}
	if fmt.Sprint(got) != "[SKU-1=10 SKU-2=7 SKU-0=3]" {
		t.Fatalf("top = %v", got)
	}
}

// Concurrent events on one entity: each either applies or reports ErrLeaseLost (to be run
// again); with retries every one lands exactly once.
func testAttributeConcurrent(t *testing.T, open Opener) {
	s := fresh(t, open)
	const n = 8
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			id := fmt.Sprint("c", i)
			for attempt := 0; attempt < 20; attempt++ {
				_, err := s.AttributeApply(context.Background(), store.AttributeApplyParams{Now: T0.Add(time.Duration(i)), EventID: id,
					Entities: []store.AttributeEntity{cust}, Decide: incr(cust, id, 0)})
				if errors.Is(err, store.ErrLeaseLost) {
					continue
				}
				errs <- err
				return
			}
			errs <- fmt.Errorf("%s: still losing after 20 attempts", id)
		}(i)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := countOf(t, s, cust); v != strconv.Itoa(n) {
		t.Fatalf("count = %q, want %d", v, n)
	}
}

// AttributeApplyBatch applies its events in order, each seeing the ones before it, a repeated
// event a Duplicate; any event's error rolls the whole batch back, a partly processed event
// (its later entity processed it, its first not) included.
func testAttributeApplyBatch(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	p := func(id string, es []store.AttributeEntity, decide func(map[store.AttributeEntity]map[string]store.AttributeRow) (store.AttributeDecision, error)) store.AttributeApplyParams {
		return store.AttributeApplyParams{Now: T0, EventID: id, Entities: es, Decide: decide}
	}
	one := []store.AttributeEntity{cust}
	outs, err := s.AttributeApplyBatch(ctx, []store.AttributeApplyParams{p("b1", one, incr(cust, "b1", 0)), p("b2", one, incr(cust, "b2", 2)), p("b1", one, incr(cust, "b1", 0))})
	if err != nil || len(outs) != 3 || outs[0] != store.AttributeApplied || outs[1] != store.AttributeApplied || outs[2] != store.AttributeDuplicate {
		t.Fatalf("batch: %v %v, want Applied, Applied, Duplicate", outs, err)
	}
	if v, ver := countOf(t, s, cust); v != "2" || ver != 2 {
		t.Fatalf("count = %q v%d, want 2 v2 (b2 saw b1's write; b1 again wrote nothing)", v, ver)
	}
	if m, err := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10}); err != nil || len(m) != 1 || m[0].MessageID != "trigger:b2" {
		t.Fatalf("outbox = %+v %v", m, err)
	}
	boom := errors.New("decide refused")
	for _, c := range []struct {
		name string
		last store.AttributeApplyParams
	}{
		{"decide error", p("b4", one, func(map[store.AttributeEntity]map[string]store.AttributeRow) (store.AttributeDecision, error) {
			return store.AttributeDecision{}, boom
		})},
		// b1 was processed by cust, not by item: item's processed row is inserted first.
		{"partly processed", p("b1", []store.AttributeEntity{item, cust}, incr(item, "b1", 0))},
	} {
		_, err := s.AttributeApplyBatch(ctx, []store.AttributeApplyParams{p("b3", one, incr(cust, "b3", 3)), c.last})
		if err == nil {
			t.Fatalf("%s: the batch committed", c.name)
		}
		if v, ver := countOf(t, s, cust); v != "2" || ver != 2 {
			t.Fatalf("%s: count = %q v%d, want 2 v2 (b3 rolled back with its batch)", c.name, v, ver)
		}
		if v, _ := countOf(t, s, item); v != "" {
			t.Fatalf("%s: item count = %q, want none", c.name, v)
		}
		if m, _ := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 10}); len(m) != 1 {
			t.Fatalf("%s: %d outbox rows, want b2's one", c.name, len(m))
		}
	}
	// b3 was rolled back, not recorded as processed: it applies now.
	if out, err := apply(t, s, "b3", one, incr(cust, "b3", 0)); err != nil || out != store.AttributeApplied {
		t.Fatalf("b3 after its batch rolled back: %v %v", out, err)
	}
	if _, err := s.AttributeApplyBatch(ctx, nil); err == nil {
		t.Fatal("an empty batch is an error")
	}
}
