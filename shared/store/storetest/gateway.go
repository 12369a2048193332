package storetest

import (
	"context"
	"errors"
	"testing"
	"time"

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
