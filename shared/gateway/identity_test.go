package gateway_test

import (
	"bytes"
	"context"
	"encoding/json"
	"sort"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/gateway"
)

// from is ce with another CloudEvents source.
func from(source string, r events.Raw) events.Raw {
	r.JSON = bytes.Replace(r.JSON, []byte(`"source":"/app"`), []byte(`"source":`+mustJSON(source)), 1)
	return r
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// Dedupe is per (source, id) (CloudEvents: "source + id" identifies an event): two producers
// that both send id "1" are both accepted, on every route, each under its own outbox
// MessageId derived from (source, id); a redelivery of either is a duplicate that writes
// nothing. Kills the mutant "the dedupe key drops source".
func TestSameIDFromTwoSourcesIsAcceptedOnEveryRoute(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	batch := []events.Raw{
		ce("1", "Login", `{"channel":"APP"}`),
		from("/pos", ce("1", "Login", `{"channel":"APP"}`)),
		ce("2", "ViewItem", `{"itemId":"SKU-1"}`),
		from("/pos", ce("2", "ViewItem", `{"itemId":"SKU-1"}`)),
		ce("3", "Redeem_Item", `{"email":"x@example.test","originChannel":"APP"}`),
		from("/pos", ce("3", "Redeem_Item", `{"email":"x@example.test","originChannel":"APP"}`)),
	}
	res, err := e.svc.Ingest(ctx, automation.AllBusinessUnits(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Status != gateway.StatusAccepted {
			t.Fatalf("event %d: %+v, want accepted", i, r)
		}
	}
	var got []string
	for _, m := range e.outbox(t) {
		var p gateway.Payload
		if err := json.Unmarshal(m.Body, &p); err != nil {
			t.Fatal(err)
		}
		if m.MessageID != events.Identity(p.Source, p.EventID)+":"+p.Route {
			t.Errorf("MessageId %s, want the identity of (%s, %s) and %s", m.MessageID, p.Source, p.EventID, p.Route)
		}
		got = append(got, p.Route+" "+p.Source+" "+p.EventID)
	}
	sort.Strings(got)
	want := []string{"events /app 1", "events /pos 1", "noti /app 3", "noti /pos 3", "tracking /app 1", "tracking /app 2", "tracking /pos 1", "tracking /pos 2"}
	if mustJSON(got) != mustJSON(want) {
		t.Fatalf("routed %v\nwant %v", got, want)
	}
	// A redelivery of each is a duplicate and writes nothing.
	res, err = e.svc.Ingest(ctx, automation.AllBusinessUnits(), batch)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range res {
		if r.Status != gateway.StatusDuplicate {
			t.Fatalf("redelivered event %d: %+v, want duplicate", i, r)
		}
	}
	if n := len(e.outbox(t)); n != len(want) {
		t.Fatalf("%d outbox rows after the redelivery, want %d", n, len(want))
	}
	// The noti route's SchedulerKey separates the sources too.
	if gateway.UserMessageKey("/app", "3") == gateway.UserMessageKey("/pos", "3") {
		t.Fatal("UserMessageKey ignores the source")
	}
}

// EventNames: the registry's types and the trigger events its counter instructions emit,
// sorted, once each (what a campaign may be triggered by).
func TestRegistryEventNames(t *testing.T) {
	e := newEnv(t)
	reg, err := e.admin.Cache.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"Account_Reactivated", "Login", "Login_Streak_30_Days", "Login_Streak_7_Days", "Redeem_Item", "ViewItem", "View_10_Items_Reward"}
	if got := reg.EventNames(); mustJSON(got) != mustJSON(want) {
		t.Fatalf("EventNames %v, want %v", got, want)
	}
}
