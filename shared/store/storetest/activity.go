package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

// testRecipientActivity: a customer's accepted events, newest first, paged by the cursor
// (an instant and an event id: events of one instant are not lost at a page's end), scoped
// to the business unit and the customer.
func testRecipientActivity(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
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

// testTemplateList: the latest version of each key of a unit and of the defaults, by key
// (the default first), paged by key; one key's versions newest first.
func testTemplateList(t *testing.T, open Opener) {
	s := fresh(t, open)
	ctx := context.Background()
	save := func(key, bu, subject string) {
		t.Helper()
		if _, err := s.NotificationTemplateSave(ctx, store.NotificationTemplateSaveParams{Template: store.NotificationTemplate{Key: key, BusinessUnitID: bu,
			Subject: subject, Text: subject, CreatedBy: "jane"}, Now: T0}); err != nil {
			t.Fatal(err)
		}
	}
	save("points", "", "d1")
	save("points", "", "d2")
	save("points", "bu-1", "o1")
	save("points", "bu-2", "other unit")
	save("welcome", "", "w1")
	rows := func(ts []store.NotificationTemplate) string {
		var out []string
		for _, x := range ts {
			out = append(out, fmt.Sprintf("%s/%s/v%d/%s", x.Key, x.BusinessUnitID, x.Version, x.Subject))
		}
		return fmt.Sprint(out)
	}
	l, err := s.NotificationTemplateList(ctx, "bu-1", "", 10)
	if err != nil || rows(l) != "[points//v2/d2 points/bu-1/v1/o1 welcome//v1/w1]" {
		t.Fatalf("list = %s, %v", rows(l), err)
	}
	if l, _ := s.NotificationTemplateList(ctx, "bu-1", "points", 10); rows(l) != "[welcome//v1/w1]" {
		t.Fatalf("after points = %s", rows(l))
	}
	if v, _ := s.NotificationTemplateVersions(ctx, "points", "", 10); rows(v) != "[points//v2/d2 points//v1/d1]" {
		t.Fatalf("versions = %s", rows(v))
	}
	if v, _ := s.NotificationTemplateVersions(ctx, "points", "bu-3", 10); len(v) != 0 {
		t.Fatalf("bu-3's versions = %s", rows(v))
	}
	// Kinds and tombstones (migration 0059) come back with every row: a push default is
	// listed as push, and a unit whose override was deleted lists the default it sends
	// again; its versions keep the tombstone.
	if _, err := s.NotificationTemplateSave(ctx, store.NotificationTemplateSaveParams{Template: store.NotificationTemplate{Key: "alert", Kind: "push",
		Subject: "a1", Text: "body", Extra: `{"screen":"home"}`, CreatedBy: "jane"}, Now: T0}); err != nil {
		t.Fatal(err)
	}
	one := int64(1)
	if _, err := s.NotificationTemplateSave(ctx, store.NotificationTemplateSaveParams{Template: store.NotificationTemplate{Key: "points", BusinessUnitID: "bu-1",
		Deleted: true, CreatedBy: "ops"}, ExpectedVersion: &one, Now: T0}); err != nil {
		t.Fatal(err)
	}
	l, err = s.NotificationTemplateList(ctx, "bu-1", "", 10)
	if err != nil || rows(l) != "[alert//v1/a1 points//v2/d2 welcome//v1/w1]" {
		t.Fatalf("list after the push default and bu-1's delete = %s, %v", rows(l), err)
	}
	if l[0].Kind != "push" || l[0].Extra != `{"screen":"home"}` || l[1].Kind != "message" || l[1].Deleted {
		t.Fatalf("listed kinds: %+v", l[:2])
	}
	if v, _ := s.NotificationTemplateVersions(ctx, "points", "bu-1", 10); len(v) != 2 || !v[0].Deleted || v[0].CreatedBy != "ops" || v[1].Deleted || v[1].Subject != "o1" {
		t.Fatalf("bu-1's versions after the delete = %+v", v)
	}
}
