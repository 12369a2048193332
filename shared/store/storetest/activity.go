package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// testRecipientActivity: a recipient's deliveries and a customer's accepted events, newest
// first, paged by their cursors, scoped to the business unit and the recipient.
func testRecipientActivity(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	mk := func(key, bu, to string) store.NotificationRequest {
		r := req(key, bu)
		r.Recipient = to
		return r
	}
	queueJobs(t, s, 1, mk("d1", "bu-1", "ann@example.test"), mk("d2", "bu-1", "bob@example.test"), mk("d3", "bu-2", "ann@example.test"), mk("d4", "bu-1", "ann@example.test"))
	keys := func(js []store.NotificationJob) string {
		var out []string
		for _, j := range js {
			out = append(out, j.DeliveryKey)
		}
		return fmt.Sprint(out)
	}
	first, err := s.NotificationListByRecipient(ctx, "bu-1", "ann@example.test", 0, 1)
	if err != nil || keys(first) != "[d4]" {
		t.Fatalf("ann's newest = %s, %v", keys(first), err)
	}
	if l, _ := s.NotificationListByRecipient(ctx, "bu-1", "ann@example.test", first[0].ID, 10); keys(l) != "[d1]" {
		t.Fatalf("ann's older = %s", keys(l))
	}
	if l, _ := s.NotificationListByRecipient(ctx, "bu-2", "ann@example.test", 0, 10); keys(l) != "[d3]" {
		t.Fatalf("ann in bu-2 = %s", keys(l))
	}
	ev := func(id, customer string) store.GatewayEvent {
		return store.GatewayEvent{Source: "pos", ID: id, Type: "Purchase", BusinessUnitID: "bu-1", CustomerID: customer, RegistryVersion: 1, Routes: "DIRECT"}
	}
	for i, e := range []store.GatewayEvent{ev("e1", "ann"), ev("e2", "bob"), ev("e3", "ann"), ev("e4", "ann")} {
		at := T0.Add(time.Duration(i/3) * time.Minute) // e1..e3 in one instant, e4 a minute later
		if _, err := s.GatewayEventAccept(ctx, store.GatewayEventAcceptParams{Now: at, Events: []store.GatewayEvent{e}}); err != nil {
			t.Fatal(err)
		}
	}
	ids := func(es []store.GatewayEventRecord) string {
		var out []string
		for _, e := range es {
			out = append(out, e.ID)
		}
		return fmt.Sprint(out)
	}
	page, err := s.GatewayEventListByCustomer(ctx, store.GatewayEventListParams{BusinessUnitID: "bu-1", CustomerID: "ann", Limit: 2})
	if err != nil || ids(page) != "[e4 e3]" || page[0].Type != "Purchase" || !page[0].AcceptedOn.Equal(T0.Add(time.Minute)) {
		t.Fatalf("ann's events = %s %+v, %v", ids(page), page, err)
	}
	last := page[1]
	if l, _ := s.GatewayEventListByCustomer(ctx, store.GatewayEventListParams{BusinessUnitID: "bu-1", CustomerID: "ann", BeforeOn: last.AcceptedOn,
		BeforeEventID: last.ID, Limit: 2}); ids(l) != "[e1]" {
		t.Fatalf("ann's older events (e1 in e3's instant) = %s", ids(l))
	}
	if l, _ := s.GatewayEventListByCustomer(ctx, store.GatewayEventListParams{BusinessUnitID: "bu-2", CustomerID: "ann", Limit: 2}); len(l) != 0 {
		t.Fatalf("ann in bu-2 = %s", ids(l))
	}
}
