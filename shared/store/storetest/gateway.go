package storetest

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/store"
)

// RunGateway runs the event gateway's cases: registry versions (every one kept, guarded by
// the expected version), the stamp, and the (source, id) ledger with its outbox rows.
func RunGateway(t *testing.T, open Opener) {
	runCases(t, open, gatewayCases)
}

func testRegistryVersions(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	if n, err := s.EventRegistryStamp(ctx); err != nil || n != 0 {
		t.Fatalf("empty stamp = %d, %v", n, err)
	}
	save := func(typ string, expected int64, def string) (store.EventRegistryEntry, error) {
		return s.EventRegistrySave(ctx, store.EventRegistrySaveParams{EventType: typ, ExpectedVersion: expected, DefinitionJSON: def,
			Operator: "jane", Now: T0})
	}
	v1, err := save("Login", 0, `{"v":1}`)
	if err != nil || v1.Version != 1 || v1.Operator != "jane" || !v1.CreatedOn.Equal(T0) || v1.Seq <= 0 {
		t.Fatalf("first save: %+v %v", v1, err)
	}
	if _, err := save("Login", 0, `{"v":"again"}`); !errors.Is(err, store.ErrConflict) {
		t.Fatalf("creating an existing type: %v, want ErrConflict", err)
	}
	if _, err := save("Unknown", 3, `{}`); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("updating an unknown type: %v, want ErrNotFound", err)
	}
	v2, err := save("Login", 1, `{"v":2}`)
	if err != nil || v2.Version != 2 || v2.Seq <= v1.Seq {
		t.Fatalf("second save: %+v %v", v2, err)
	}
	if _, err := save("Login", 1, `{"v":"stale"}`); !errors.Is(err, store.ErrLeaseLost) {
		t.Fatalf("a stale expected version: %v, want ErrLeaseLost", err)
	}
	if _, err := save("ViewItem", 0, `{"v":"view"}`); err != nil {
		t.Fatal(err)
	}
	latest, err := s.EventRegistryListLatest(ctx)
	if err != nil || len(latest) != 2 || latest[0].EventType != "Login" || latest[0].Version != 2 || latest[1].EventType != "ViewItem" {
		t.Fatalf("latest: %+v %v", latest, err)
	}
	all, err := s.EventRegistryListVersions(ctx, "Login")
	if err != nil || len(all) != 2 || all[0].DefinitionJSON != `{"v":1}` || all[1].DefinitionJSON != `{"v":2}` {
		t.Fatalf("versions: %+v %v", all, err)
	}
	if g, err := s.EventRegistryGet(ctx, store.EventRegistryGetParams{EventType: "Login", Version: 1}); err != nil || g.DefinitionJSON != `{"v":1}` {
		t.Fatalf("get v1: %+v %v", g, err)
	}
	if g, err := s.EventRegistryGet(ctx, store.EventRegistryGetParams{EventType: "Login"}); err != nil || g.Version != 2 {
		t.Fatalf("get latest: %+v %v", g, err)
	}
	if _, err := s.EventRegistryGet(ctx, store.EventRegistryGetParams{EventType: "Login", Version: 9}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("get v9: %v", err)
	}
	if n, err := s.EventRegistryStamp(ctx); err != nil || n < v2.Seq {
		t.Fatalf("stamp %d, %v; want at least %d", n, err, v2.Seq)
	}
}

func gatewayEvent(source, id string, routes ...string) store.GatewayEvent {
	e := store.GatewayEvent{Source: source, ID: id, Type: "Login", BusinessUnitID: "bu-1", CustomerID: "CUST-1", RegistryVersion: 1}
	for _, r := range routes {
		e.Routes += r
		e.Outbox = append(e.Outbox, store.OutboxMessage{MessageID: id + ":" + r, Destination: r, SessionID: "CUST-1", Body: []byte(`{"r":"` + r + `"}`)})
	}
	return e
}

func testGatewayAcceptOnce(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	out, err := s.GatewayEventAccept(ctx, store.GatewayEventAcceptParams{Now: T0, Events: []store.GatewayEvent{
		gatewayEvent("/app", "e1", "events", "tracking"), gatewayEvent("/app", "e2", "noti"), gatewayEvent("/app", "e1", "events", "tracking")}})
	want := []store.GatewayAcceptOutcome{store.GatewayAccepted, store.GatewayAccepted, store.GatewayDuplicate}
	if err != nil || len(out) != 3 || out[0] != want[0] || out[1] != want[1] || out[2] != want[2] {
		t.Fatalf("accept: %v %v, want %v", out, err, want)
	}
	// Redelivery of the same events: duplicates, nothing new in the outbox.
	out, err = s.GatewayEventAccept(ctx, store.GatewayEventAcceptParams{Now: T0.Add(time.Minute), Events: []store.GatewayEvent{gatewayEvent("/app", "e2", "noti")}})
	if err != nil || out[0] != store.GatewayDuplicate {
		t.Fatalf("redelivery: %v %v", out, err)
	}
	msgs, err := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
	if err != nil || len(msgs) != 3 {
		t.Fatalf("outbox: %d rows, %v; want 3", len(msgs), err)
	}
	for _, m := range msgs {
		if m.SessionID != "CUST-1" || !m.CreatedOn.Equal(T0) {
			t.Errorf("outbox row %+v", m)
		}
	}
	lag, err := s.OutboxLagGet(ctx, []string{"events", "noti", "tracking", "nowhere"})
	if err != nil || len(lag) != 4 || lag[0].Unpublished != 1 || lag[0].OldestOn == nil || !lag[0].OldestOn.Equal(T0) || lag[3].Unpublished != 0 || lag[3].OldestOn != nil {
		t.Fatalf("lag: %+v %v", lag, err)
	}
	if err := s.OutboxMarkPublished(ctx, store.OutboxMarkPublishedParams{IDs: []int64{msgs[0].ID}, Now: T0}); err != nil {
		t.Fatal(err)
	}
	if lag, _ = s.OutboxLagGet(ctx, []string{msgs[0].Destination}); lag[0].Unpublished != 0 {
		t.Fatalf("a published row still lags: %+v", lag)
	}
}

// An event whose MessageId is already taken (another source used its id) writes nothing;
// the other events of the batch are accepted.
func testGatewayMessageIDTaken(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	if _, err := s.GatewayEventAccept(ctx, store.GatewayEventAcceptParams{Now: T0, Events: []store.GatewayEvent{gatewayEvent("/a", "same", "tracking")}}); err != nil {
		t.Fatal(err)
	}
	out, err := s.GatewayEventAccept(ctx, store.GatewayEventAcceptParams{Now: T0, Events: []store.GatewayEvent{
		gatewayEvent("/b", "same", "events", "tracking"), gatewayEvent("/b", "other", "events")}})
	if err != nil || out[0] != store.GatewayMessageIDTaken || out[1] != store.GatewayAccepted {
		t.Fatalf("accept: %v %v", out, err)
	}
	msgs, _ := s.OutboxListUnpublished(ctx, store.OutboxListParams{Limit: 100})
	if len(msgs) != 2 || msgs[0].MessageID != "same:tracking" || msgs[1].MessageID != "other:events" {
		t.Fatalf("outbox: %+v", msgs)
	}
	// The refused event left no ledger row: sent again (after the id clash is resolved) it is new, not a duplicate.
	out, err = s.GatewayEventAccept(ctx, store.GatewayEventAcceptParams{Now: T0, Events: []store.GatewayEvent{gatewayEvent("/b", "same", "noti")}})
	if err != nil || out[0] != store.GatewayAccepted {
		t.Fatalf("after the clash: %v %v", out, err)
	}
}

// testKeysDifferingByCase: identifiers are compared exactly, as Go compares them: two
// business units, customers, event ids, outbox destinations, idempotency keys or request
// hashes or failure reason codes that differ only by case are two
// (docs/conventions.md#sql-server-collation). On SQL Server before migration 0075,
// GatewayEvent.BusinessUnitId and CustomerId, Outbox.Destination, IdempotencyKey.RequestHash
// and AutomationScheduler.FailureReasonCode had the database's case-insensitive default
// collation: unit "bu-a" listed "BU-A"'s events (a cross-unit leak), the lag of "events"
// counted "EVENTS"'s rows, a request hash matched another differing by case, and a support
// release by reason code released the rows of its lower-case twin.
func testKeysDifferingByCase(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	ev := func(id, unit, customer, route string) store.GatewayEvent {
		return store.GatewayEvent{Source: "pos", ID: id, Type: "Purchase", BusinessUnitID: unit, CustomerID: customer, RegistryVersion: 1, Routes: route,
			Outbox: []store.OutboxMessage{{MessageID: id + ":" + route, Destination: route, SessionID: customer, Body: []byte(`{}`)}}}
	}
	out, err := s.GatewayEventAccept(ctx, store.GatewayEventAcceptParams{Now: T0, Events: []store.GatewayEvent{
		ev("e1", "bu-a", "cust", "events"), ev("e2", "BU-A", "cust", "EVENTS"), ev("e3", "bu-a", "CUST", "events"),
		ev("x", "bu-a", "cust", "events"), ev("X", "bu-a", "cust", "events")}})
	if err != nil || len(out) != 5 {
		t.Fatalf("accept: %v %v", out, err)
	}
	for i, o := range out {
		if o != store.GatewayAccepted {
			t.Errorf("event %d: %s, want Accepted (event ids x and X are two events)", i, o)
		}
	}
	list := func(unit, customer string) []string {
		t.Helper()
		es, err := s.GatewayEventListByCustomer(ctx, store.GatewayEventListParams{BusinessUnitID: unit, CustomerID: customer, Limit: 10})
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, e := range es {
			if e.BusinessUnitID != unit || e.CustomerID != customer {
				t.Errorf("list of %s/%s returned %s/%s's event %s", unit, customer, e.BusinessUnitID, e.CustomerID, e.ID)
			}
			ids = append(ids, e.ID)
		}
		sort.Strings(ids)
		return ids
	}
	for _, c := range []struct{ unit, customer, want string }{
		{"bu-a", "cust", "[X e1 x]"}, {"BU-A", "cust", "[e2]"}, {"bu-a", "CUST", "[e3]"}, {"BU-A", "CUST", "[]"}, {"Bu-A", "cust", "[]"},
	} {
		if got := fmt.Sprint(list(c.unit, c.customer)); got != c.want {
			t.Errorf("events of %s/%s = %s, want %s", c.unit, c.customer, got, c.want)
		}
	}
	lag, err := s.OutboxLagGet(ctx, []string{"events", "EVENTS", "Events"})
	if err != nil || len(lag) != 3 || lag[0].Unpublished != 4 || lag[1].Unpublished != 1 || lag[2].Unpublished != 0 {
		t.Fatalf("lag by destination: %+v %v; want events 4, EVENTS 1, Events 0", lag, err)
	}

	begin := func(key, hash string) store.IdempotencyBeginResult {
		t.Helper()
		r, err := s.IdempotencyBegin(ctx, store.IdempotencyBeginParams{Scope: "POST /api/x", Key: key, RequestHash: hash, Now: T0, Lease: time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	lower, upper := begin("key-a", "abc"), begin("KEY-A", "abc")
	if !lower.Started || !upper.Started {
		t.Fatalf("idempotency keys key-a and KEY-A: started %v and %v, want two records", lower.Started, upper.Started)
	}
	if err := s.IdempotencyComplete(ctx, store.IdempotencyCompleteParams{Scope: "POST /api/x", Key: "key-a", RequestHash: "ABC",
		LeaseExpiresOn: *lower.Record.LeaseExpiresOn, ResponseStatus: 201, ResponseBody: `{}`, Now: T0}); !errors.Is(err, store.ErrNotFound) {
		t.Fatalf("complete with the request hash ABC of a record hashed abc: %v, want ErrNotFound", err)
	}

	// A support release by failure reason code releases the rows of that code only.
	held := hold(t, s, supportCandidate(0, T0.Add(time.Hour), "bu-a"))
	other := automation.ReasonCode(strings.ToUpper(string(held.FailureReasonCode)))
	if other == held.FailureReasonCode {
		t.Fatalf("reason code %q has no upper-case twin", held.FailureReasonCode)
	}
	res, err := s.SupportSchedulerReleaseBatch(ctx, store.SupportReleaseBatchParams{Filter: store.SupportReleaseFilter{Scope: automation.AllBusinessUnits(),
		FailureReasonCode: other}, Limit: 10, Now: T0.Add(2 * time.Hour), Interval: time.Minute, Operator: "ops.jane", Reason: "case", BatchID: "rel-case"})
	if err != nil || len(res.Rows) != 0 {
		t.Fatalf("release of reason %s: %d rows %v; the held row's reason is %s", other, len(res.Rows), err, held.FailureReasonCode)
	}
	if r := get(t, s, held.SchedulerKey); !r.IsOnSupportHold {
		t.Fatalf("the row held for %s was released by a filter on %s", held.FailureReasonCode, other)
	}
}
