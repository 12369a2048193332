package acceptance_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shopspring/decimal"

	"github.com/automation-platform/automation/shared/acceptance"
	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/delivery/fcmsim"
	"github.com/automation-platform/automation/shared/events"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/simhttp/simhttptest"
	"github.com/automation-platform/automation/shared/store"
)

// The loyalty use cases (docs/loyalty.md), each driven through POST /api/events of a
// running embedded app and checked on what left the product: the messages on each topic
// (events and tracking as their consumers acknowledged them — the attribute engine's trigger
// events among them, each with its deterministic id —, noti and the source route as the relay
// published them), the deliveries, the campaign actions, the in-app inbox read back over GET
// /api/inbox, and the attributes and rankings read over GET /api/attributes. Every use case
// also runs redelivered and reordered (useCase.variant) with the same expected outcome. The
// use cases without attributes are the rows of useCases; the counter use cases are built by
// uc01 … uc12 (their steps are many).

const (
	registryFile = "../../testdata/registry/loyalty.json"
	scenarioFile = "../../testdata/scenarios/loyalty.json"
	functionsDir = "../../functions"
)

func start(t *testing.T, at string) *acceptance.Harness {
	t.Helper()
	h, err := acceptance.Start(context.Background(), acceptance.Options{Dir: t.TempDir(), Start: ts(at), Scenario: scenarioFile,
		Registry: registryFile, FunctionsDir: functionsDir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	return h
}

func ts(s string) time.Time {
	v, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return v
}

// ev is a CloudEvent of the member app (or another source) for a customer.
func ev(id, typ, bu, customer, source string, data any) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"specversion": "1.0", "id": id, "source": source, "type": typ, "businessunitid": bu,
		"customerid": customer, "data": data})
	return b
}

// snapshot is an entity snapshot (the source route): entity type, entity guid, revision.
func snapshot(id, typ, bu, entityType, guid string, rev int, source string, data any) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"specversion": "1.0", "id": id, "source": source, "type": typ, "businessunitid": bu,
		"entitytype": entityType, "entityguid": guid, "revision": rev, "data": data})
	return b
}

func txn(id, bu, customer string, rev int, day, origin string) json.RawMessage {
	return snapshot(id, "Transaction_Completed", bu, "CustomerActivity", customer, rev, "/transaction-service",
		map[string]any{"customerId": customer, "transactionId": "T-" + id, "lastTransactionOn": day, "originChannel": origin})
}

// step is one request: a batch posted at an instant; want lists each result's status
// ("accepted", "filtered", "duplicate") for the plain run.
type step struct {
	at     string
	events []json.RawMessage
	want   []string
}

// wantDelivery is one delivery: its scheduler key, channel, recipient, instant (UTC) and
// rendered subject.
type wantDelivery struct{ key, channel, recipient, at, subject string }

type useCase struct {
	name        string
	start, till string
	steps       []step
	// routed: every gateway message, "topic/eventId" (an event-channel id as
	// "rem/{customer}") → how many times; nothing else may be routed.
	routed map[string]int
	// payloads checks the payload of a message an observed topic's consumer acknowledged, by "topic/eventId".
	payloads   map[string]func(p gateway.Payload) error
	deliveries []wantDelivery
	// inbox: "businessUnit/recipient" → the subjects of its messages, newest first.
	inbox map[string][]string
	// ordered: the use case's attributes follow the events' own order (a streak, a timer, a
	// flag, a list; docs/attributes.md: an older event never moves them backwards), so its
	// variant keeps the order of the steps (see variant).
	ordered bool
	// attributes: "businessUnit/ENTITYTYPE/entityId" → attribute code → value, as GET
	// /api/attributes answers at till (fmt.Sprint of the value); other attributes may exist.
	attributes map[string]map[string]string
	// top: "businessUnit/ENTITYTYPE/attribute" → the ranking GET /api/attributes/{type}
	// answers ("entityId=value", highest first).
	top map[string][]string
	// actions: every campaign command outcome, "campaignId actionKey status recipient".
	actions []string
	// devices: "businessUnit/customer" → the member app's device tokens, registered over
	// PUT /api/devices before the first step.
	devices map[string][]string
	// pushes: every message the simulated FCM accepted, "token title", sorted; each once.
	pushes []string
}

// The seeds' pushes on the member app (seed 003: notification-service sends a Firebase push),
// sent through the simulated FCM here. The shared registry and scenario keep them on the log,
// inbox and event channels because they are also the plain serve's files (docs/loyalty-in-ten-
// minutes.md) and the replay's golden scenario, which run without FCM (docs/channels.md#the-use-cases-on-fcm).
var (
	// pushActions: UC-01's OTT welcome message, a campaign action.
	pushActions = []string{"first-login-welcome/ott"}
	// pushEvents: UC-10's Voucher_Used notification, pushed besides the portal's inbox message.
	pushEvents = []string{"Voucher_Used"}
	// pushReminders: UC-13's dormant-customer offer, a push instead of the inbox message.
	pushReminders = []string{"1b3c5d7e-0a2b-4c6d-8e0f-1a3b5c7d9e01", "1b3c5d7e-0a2b-4c6d-8e0f-1a3b5c7d9e02"}
)

// variant is the use case redelivered and reordered: every event of every step in reverse
// order, each twice in one batch, at the last step's instant; then the same batch again a
// minute later (a redelivery: all duplicates). The outcome must be the same.
//
// An ordered use case keeps its steps and their order (each event carries its own time, and
// a streak, a timer or a list follows it: the engine never moves them back for an older
// event, so an older event applied late is dropped, not re-ordered): each event is sent
// twice in a row, then every event of the use case once more in reverse order a minute
// after the last step — late, out-of-order redeliveries that must change nothing.
func (uc useCase) variant() useCase {
	if uc.ordered {
		v := uc
		v.name += " redelivered and reordered"
		v.steps = nil
		var all []json.RawMessage
		for _, s := range uc.steps {
			var batch []json.RawMessage
			for _, e := range s.events {
				batch = append(batch, e, e)
			}
			all = append(all, s.events...)
			v.steps = append(v.steps, step{at: s.at, events: batch})
		}
		slices.Reverse(all)
		last := ts(uc.steps[len(uc.steps)-1].at)
		v.steps = append(v.steps, step{at: last.Add(time.Minute).Format(time.RFC3339), events: all})
		return v
	}
	var all []json.RawMessage
	for _, s := range uc.steps {
		all = append(all, s.events...)
	}
	slices.Reverse(all)
	var batch []json.RawMessage
	for _, e := range all {
		batch = append(batch, e, e)
	}
	last := ts(uc.steps[len(uc.steps)-1].at)
	v := uc
	v.name += " redelivered and reordered"
	v.steps = []step{{at: last.Format(time.RFC3339), events: batch}, {at: last.Add(time.Minute).Format(time.RFC3339), events: batch}}
	return v
}

// routedKey names a routed message in useCase.routed: "topic/eventId"; a reminder's event
// as "events/rem/{customer}"; an attribute engine trigger (its id is a hash) as
// "events/trigger:{event_name}@{entity_id}", names from the triggers the consumers received.
func routedKey(topic, eventID, session string, triggers map[string]string) string {
	if strings.HasPrefix(eventID, "rem-") {
		eventID = "rem/" + session
	}
	if name, ok := triggers[eventID]; ok {
		eventID = "trigger:" + name
	}
	return topic + "/" + eventID
}

// evAt is ev with the event's own time (the attribute engine's periods and order use it).
func evAt(id, typ, bu, customer, at string, data any) json.RawMessage {
	b, _ := json.Marshal(map[string]any{"specversion": "1.0", "id": id, "source": "/member-app", "type": typ, "businessunitid": bu,
		"customerid": customer, "time": at, "data": data})
	return b
}

func login(id, bu, customer, at, device string) json.RawMessage {
	return evAt(id, "Login", bu, customer, at, map[string]any{"channel": "APP", "deviceId": device})
}

// uc01: two logins at the same instant on two devices, another the next day; the welcome
// campaign of bu-hcm (triggered by First_Login_Reward) sends the in-app message and the OTT
// message.
func uc01() useCase {
	return useCase{
		name: "UC-01 first login", start: "2026-07-01T00:00:00Z", till: "2026-07-02T12:00:00Z", ordered: true,
		steps: []step{
			{at: "2026-07-01T02:00:00Z", events: []json.RawMessage{login("login-hcm7-a", "bu-hcm", "CUST-HCM-7", "2026-07-01T02:00:00Z", "DEV-A"),
				login("login-hcm7-b", "bu-hcm", "CUST-HCM-7", "2026-07-01T02:00:00Z", "DEV-B")}, want: []string{"accepted", "accepted"}},
			{at: "2026-07-02T02:00:00Z", events: []json.RawMessage{login("login-hcm7-c", "bu-hcm", "CUST-HCM-7", "2026-07-02T02:00:00Z", "DEV-A")}, want: []string{"accepted"}},
		},
		// Login is a COUNTER event (seed 003 section 3): tracking only, never events; the rule
		// engine hears the trigger.
		routed: map[string]int{"tracking/login-hcm7-a": 1, "tracking/login-hcm7-b": 1,
			"tracking/login-hcm7-c": 1, "events/trigger:First_Login_Reward@CUST-HCM-7": 1},
		payloads: map[string]func(p gateway.Payload) error{"tracking/login-hcm7-c": all(sourceEvent("Login", "CUST-HCM-7"), dataIs("deviceId", "DEV-A"))},
		actions:  []string{"first-login-welcome welcome SUCCEEDED CUST-HCM-7", "first-login-welcome ott SUCCEEDED CUST-HCM-7"},
		// The OTT message is a push to both of the member's devices, through FCM, once each.
		devices:    map[string][]string{"bu-hcm/CUST-HCM-7": {"fcm-hcm7-dev-a", "fcm-hcm7-dev-b"}},
		pushes:     []string{"fcm-hcm7-dev-a Welcome offer for CUST-HCM-7", "fcm-hcm7-dev-b Welcome offer for CUST-HCM-7"},
		inbox:      map[string][]string{"bu-hcm/CUST-HCM-7": {"Welcome to the club"}},
		attributes: map[string]map[string]string{"bu-hcm/CUSTOMER/CUST-HCM-7": {"first_login": "true", "login_streak": "2", "last_active": "2026-07-02T02:00:00Z"}},
	}
}

// uc02: Sydney (AEDT, +11) logins on every local day from 2026-11-20 to 2027-01-19 at 08:00
// local, except 11-22 at 23:30 and 11-23 at 00:30 (one UTC day, two Sydney days) and New
// Year's Day at 00:30; 11-21 has a second login (counted once). Day 7 (11-26) and day 30
// (12-19, reset) spend 800 of the year's 1,000 points; the next day 7 (12-26) would spend
// 1,200 and is refused by the cap; day 30 after the reset (2027-01-18) is in a new year.
func uc02() useCase {
	uc := useCase{name: "UC-02 daily login streak", start: "2026-11-19T00:00:00Z", till: "2027-01-19T12:00:00Z", ordered: true,
		routed: map[string]int{"events/trigger:First_Login_Reward@CUST-SYD-2": 1, "events/trigger:Login_Streak_7_Days@CUST-SYD-2": 1,
			"events/trigger:Login_Streak_30_Days@CUST-SYD-2": 2},
		attributes: map[string]map[string]string{"bu-syd/CUSTOMER/CUST-SYD-2": {"first_login": "true", "login_streak": "1", "cap:streak_points": "400"}}}
	sydney, _ := time.LoadLocation("Australia/Sydney")
	add := func(id string, local time.Time) {
		at := local.UTC().Format(time.RFC3339)
		uc.steps = append(uc.steps, step{at: at, events: []json.RawMessage{login(id, "bu-syd", "CUST-SYD-2", at, "DEV-A")}, want: []string{"accepted"}})
		uc.routed["tracking/"+id] = 1 // Login: tracking only (seed 003 section 3)
	}
	for d := time.Date(2026, 11, 20, 8, 0, 0, 0, sydney); d.Before(time.Date(2027, 1, 20, 0, 0, 0, 0, sydney)); d = d.AddDate(0, 0, 1) {
		local := d
		switch d.Format("01-02") {
		case "11-22":
			local = d.Add(15*time.Hour + 30*time.Minute)
		case "11-23", "01-01":
			local = d.Add(-7*time.Hour - 30*time.Minute)
		}
		add("login-syd2-"+d.Format("20060102"), local)
		if d.Format("01-02") == "11-21" {
			add("login-syd2-20261121-2", d.Add(12*time.Hour))
		}
	}
	return uc
}

// uc03: 52 distinct items and ITEM-05 again in the week of Monday 2026-07-06 (Vientiane), 11
// views a day; then ITEM-05 and ITEM-53 on Monday 2026-07-13.
func uc03() useCase {
	uc := useCase{name: "UC-03 view item", start: "2026-07-06T00:00:00Z", till: "2026-07-13T12:00:00Z", ordered: true,
		routed: map[string]int{"events/trigger:View_10_Items_Reward@CUST-VTE-3": 5}}
	var views []string
	for i := 1; i <= 52; i++ {
		views = append(views, fmt.Sprintf("ITEM-%02d", i))
	}
	views = append(views, "ITEM-05")
	view := func(n int, item string, at time.Time) json.RawMessage {
		id := fmt.Sprintf("view-vte3-%02d", n)
		uc.routed["tracking/"+id] = 1
		return evAt(id, "ViewItem", "bu-vte", "CUST-VTE-3", at.Format(time.RFC3339), map[string]any{"itemId": item})
	}
	for k := 0; k < len(views); k += 11 {
		day := time.Date(2026, 7, 6+k/11, 1, 0, 0, 0, time.UTC)
		var s step
		for j, item := range views[k:min(k+11, len(views))] {
			at := day.Add(time.Duration(j) * time.Minute)
			s.events, s.at = append(s.events, view(k+j+1, item, at)), at.Format(time.RFC3339)
			s.want = append(s.want, "accepted")
		}
		uc.steps = append(uc.steps, s)
	}
	monday := time.Date(2026, 7, 13, 1, 0, 0, 0, time.UTC)
	uc.steps = append(uc.steps, step{at: monday.Add(time.Minute).Format(time.RFC3339), events: []json.RawMessage{view(54, "ITEM-05", monday),
		view(55, "ITEM-53", monday.Add(time.Minute))}, want: []string{"accepted", "accepted"}})
	// Most recent first; ITEM-05 moved to the front; ITEM-01 to ITEM-03 fell out (50 kept).
	recent := []string{"ITEM-53", "ITEM-05"}
	for i := 52; i >= 4; i-- {
		if i != 5 {
			recent = append(recent, fmt.Sprintf("ITEM-%02d", i))
		}
	}
	uc.attributes = map[string]map[string]string{
		"bu-vte/CUSTOMER/CUST-VTE-3": {"weekly_view_count": "2", "recently_viewed": fmt.Sprint(recent)},
		"bu-vte/ITEM/ITEM-05":        {"item_view_count": "3"},
		"bu-vte/ITEM/ITEM-01":        {"item_view_count": "1"},
	}
	return uc
}

// uc05: the first login ever (07-01), 31 days later (08-01), 96 days later (11-05), the next day.
func uc05() useCase {
	uc := useCase{name: "UC-05 inactive account", start: "2026-07-01T00:00:00Z", till: "2026-11-07T00:00:00Z", ordered: true,
		routed:     map[string]int{"events/trigger:First_Login_Reward@CUST-VTE-5": 1, "events/trigger:Account_Reactivated@CUST-VTE-5": 1},
		attributes: map[string]map[string]string{"bu-vte/CUSTOMER/CUST-VTE-5": {"last_active": "2026-11-06T03:00:00Z", "first_login": "true"}}}
	for _, d := range []string{"2026-07-01", "2026-08-01", "2026-11-05", "2026-11-06"} {
		at, id := d+"T03:00:00Z", "login-vte5-"+strings.ReplaceAll(d, "-", "")
		uc.steps = append(uc.steps, step{at: at, events: []json.RawMessage{login(id, "bu-vte", "CUST-VTE-5", at, "DEV-A")}, want: []string{"accepted"}})
		uc.routed["tracking/"+id] = 1 // Login: tracking only (seed 003 section 3)
	}
	return uc
}

// uc12: six redemptions of three items by four customers.
func uc12() useCase {
	uc := useCase{name: "UC-12 most redeemed", start: "2026-07-01T00:00:00Z", till: "2026-07-02T00:00:00Z",
		routed:     map[string]int{},
		top:        map[string][]string{"bu-syd/ITEM/total_redeem_count": {"SKU-7=3", "SKU-3=2", "SKU-9=1"}},
		attributes: map[string]map[string]string{"bu-syd/ITEM/SKU-7": {"total_redeem_count": "3"}, "bu-syd/ITEM/SKU-3": {"total_redeem_count": "2"}}}
	for i, r := range [][2]string{{"SKU-7", "CUST-SYD-1"}, {"SKU-7", "CUST-SYD-3"}, {"SKU-3", "CUST-SYD-3"}, {"SKU-3", "CUST-SYD-4"}, {"SKU-7", "CUST-SYD-4"}, {"SKU-9", "CUST-SYD-1"}} {
		id, at := fmt.Sprintf("redeem-%d", i+1), fmt.Sprintf("2026-07-01T01:%02d:00Z", 21+i)
		uc.steps = append(uc.steps, step{at: at, events: []json.RawMessage{evAt(id, "Redeem_Item", "bu-syd", r[1], at,
			map[string]any{"itemId": r[0], "quantity": 1, "points": 500})}, want: []string{"accepted"}})
		uc.routed["events/"+id], uc.routed["tracking/"+id] = 1, 1
	}
	return uc
}

func dataIs(member string, want any) func(p gateway.Payload) error {
	return func(p gateway.Payload) error {
		var d map[string]any
		if err := json.Unmarshal(p.Data, &d); err != nil {
			return err
		}
		if fmt.Sprint(d[member]) != fmt.Sprint(want) {
			return fmt.Errorf("data.%s = %v, want %v", member, d[member], want)
		}
		return nil
	}
}

func all(checks ...func(p gateway.Payload) error) func(p gateway.Payload) error {
	return func(p gateway.Payload) error {
		for _, c := range checks {
			if err := c(p); err != nil {
				return err
			}
		}
		return nil
	}
}

func sourceEvent(typ, customer string) func(p gateway.Payload) error {
	return func(p gateway.Payload) error {
		if p.SourceEvent != typ || p.CustomerID != customer {
			return fmt.Errorf("source_event %q customer %q, want %q %q", p.SourceEvent, p.CustomerID, typ, customer)
		}
		return nil
	}
}

const (
	dormantVTE  = "reminder:1b3c5d7e-0a2b-4c6d-8e0f-1a3b5c7d9e01:CustomerActivity:CUST-VTE-1:lastTransactionOn:2026-07-20:-90"
	dormantSYD  = "reminder:1b3c5d7e-0a2b-4c6d-8e0f-1a3b5c7d9e02:CustomerActivity:CUST-SYD-1:lastTransactionOn:2026-07-06:-90"
	passwordHCM = "reminder:1b3c5d7e-0a2b-4c6d-8e0f-1a3b5c7d9e03:CustomerPassword:CUST-HCM-2:passwordExpiresOn:2026-07-20:7"
)

var useCases = []useCase{
	{
		name: "UC-04 transfer", start: "2026-07-01T00:00:00Z", till: "2026-07-02T00:00:00Z",
		steps: []step{{at: "2026-07-01T01:00:00Z", events: []json.RawMessage{ev("xfer-1", "Transfer_Balance", "bu-vte", "CUST-VTE-1", "/member-app",
			map[string]any{"fromCustomerId": "CUST-VTE-1", "toCustomerId": "CUST-VTE-2", "amount": 500})}, want: []string{"accepted"}}},
		routed:   map[string]int{"events/xfer-1": 1},
		payloads: map[string]func(p gateway.Payload) error{"events/xfer-1": all(sourceEvent("Transfer_Balance", "CUST-VTE-1"), dataIs("amount", 500), dataIs("toCustomerId", "CUST-VTE-2"))},
	},
	{
		name: "UC-06 welcome offer", start: "2026-07-01T00:00:00Z", till: "2026-07-02T00:00:00Z",
		steps: []step{{at: "2026-07-01T01:00:00Z", events: []json.RawMessage{ev("card-1", "Welcome_Offer", "bu-vte", "CUST-VTE-2", "/card-issuance",
			map[string]any{"cardId": "CARD-9001", "cardType": "GOLD"})}, want: []string{"accepted"}}},
		routed:   map[string]int{"events/card-1": 1},
		payloads: map[string]func(p gateway.Payload) error{"events/card-1": all(sourceEvent("Welcome_Offer", "CUST-VTE-2"), dataIs("cardId", "CARD-9001"))},
	},
	{
		name: "UC-07 profile completed", start: "2026-07-01T00:00:00Z", till: "2026-07-02T00:00:00Z",
		steps: []step{{at: "2026-07-01T01:00:00Z", events: []json.RawMessage{ev("profile-1", "Profile_Completed", "bu-syd", "CUST-SYD-1", "/profile-service",
			map[string]any{"completedOn": "2026-07-01"})}, want: []string{"accepted"}}},
		routed:   map[string]int{"events/profile-1": 1},
		payloads: map[string]func(p gateway.Payload) error{"events/profile-1": all(sourceEvent("Profile_Completed", "CUST-SYD-1"), dataIs("completedOn", "2026-07-01"))},
	},
	{
		// UC-08 DUAL: the voucher's Direct event, and the survey's flag set by the attribute engine.
		name: "UC-08 survey", start: "2026-07-01T00:00:00Z", till: "2026-07-02T00:00:00Z",
		steps: []step{{at: "2026-07-01T01:05:00Z", events: []json.RawMessage{ev("survey-1", "Survey_Completed", "bu-hcm", "CUST-HCM-1", "/member-app",
			map[string]any{"surveyId": "Q3_2026"})}, want: []string{"accepted"}}},
		routed:   map[string]int{"events/survey-1": 1, "tracking/survey-1": 1},
		payloads: map[string]func(p gateway.Payload) error{"events/survey-1": all(sourceEvent("Survey_Completed", "CUST-HCM-1"), dataIs("surveyId", "Q3_2026"))},
		// The app reads the flag and does not show survey Q3_2026 again.
		attributes: map[string]map[string]string{"bu-hcm/CUSTOMER/CUST-HCM-1": {"survey_Q3_2026_completed": "true"}},
	},
	{
		// UC-09 DUAL: the redemption for the rule engine and UC-12's counter instruction for
		// the attribute engine (the item's total_redeem_count).
		name: "UC-09 redeem", start: "2026-07-01T00:00:00Z", till: "2026-07-02T00:00:00Z",
		steps: []step{{at: "2026-07-01T01:05:00Z", events: []json.RawMessage{ev("redeem-1", "Redeem_Item", "bu-syd", "CUST-SYD-1", "/member-app",
			map[string]any{"itemId": "SKU-7", "quantity": 1, "points": 1200})}, want: []string{"accepted"}}},
		routed: map[string]int{"events/redeem-1": 1, "tracking/redeem-1": 1},
		payloads: map[string]func(p gateway.Payload) error{
			"events/redeem-1": all(sourceEvent("Redeem_Item", "CUST-SYD-1"), dataIs("points", 1200)),
			"tracking/redeem-1": func(p gateway.Payload) error {
				if len(p.Instructions) != 1 {
					return fmt.Errorf("instructions %+v", p.Instructions)
				}
				in := p.Instructions[0]
				if in.TargetEntityID != "SKU-7" || in.EntityType != "ITEM" || in.AttributeCode != "total_redeem_count" || in.Operation != "INCREMENT" {
					return fmt.Errorf("instruction %+v", in)
				}
				return nil
			},
		},
	},
	{
		name: "UC-10 voucher used", start: "2026-07-01T00:00:00Z", till: "2026-07-02T00:00:00Z",
		steps: []step{{at: "2026-07-01T01:10:00Z", events: []json.RawMessage{ev("scan-7781", "Voucher_Used", "bu-hcm", "CUST-HCM-1", "/merchant-app",
			map[string]any{"customerId": "CUST-HCM-1", "voucherCode": "VC-7781", "merchantName": "Pho 24 District 1"})}, want: []string{"accepted"}}},
		routed: map[string]int{"noti/scan-7781": 1},
		// The portal's message (the inbox) and the member app's push (seed 003 section 5.6:
		// notification-service pushes Voucher_Redeemed through Firebase), once each.
		deliveries: []wantDelivery{{gateway.UserMessageKey("/merchant-app", "scan-7781"), "inbox", "CUST-HCM-1", "", "Voucher VC-7781 used"},
			{gateway.UserMessageKey("/merchant-app", "scan-7781"), "push", "CUST-HCM-1", "", "Voucher VC-7781 used"}},
		inbox:   map[string][]string{"bu-hcm/CUST-HCM-1": {"Voucher VC-7781 used"}},
		devices: map[string][]string{"bu-hcm/CUST-HCM-1": {"fcm-hcm1-dev-a"}},
		pushes:  []string{"fcm-hcm1-dev-a Voucher VC-7781 used"},
	},
	{
		// 2026-07-20 − 7 days = 2026-07-13, 09:00 in Ho Chi Minh City (+07) = 02:00Z.
		name: "UC-11 password expiring", start: "2026-07-01T00:00:00Z", till: "2026-07-21T00:00:00Z",
		steps: []step{{at: "2026-07-01T01:15:00Z", events: []json.RawMessage{snapshot("pwd-1", "Password_Expiry.Upserted", "bu-hcm", "CustomerPassword", "CUST-HCM-2", 1, "/iam",
			map[string]any{"customerId": "CUST-HCM-2", "passwordExpiresOn": "2026-07-20"})}, want: []string{"accepted"}}},
		routed:     map[string]int{"domain-events/pwd-1": 1},
		deliveries: []wantDelivery{{passwordHCM, "inbox", "CUST-HCM-2", "2026-07-13T02:00:00Z", "Your password expires on 2026-07-20"}},
		inbox:      map[string][]string{"bu-hcm/CUST-HCM-2": {"Your password expires on 2026-07-20"}},
	},
	{
		// The last qualifying transaction in Vientiane (+07) is 2026-07-20: +90 days =
		// 2026-10-18 10:00 +07 = 03:00Z; the OLS transaction of 2026-08-01 does not count.
		// In Sydney: 2026-07-06 + 90 = 2026-10-04 09:00 AEDT (+11, the DST start day) = 2026-10-03T22:00Z.
		name: "UC-13 dormant 3 months", start: "2026-07-01T00:00:00Z", till: "2026-10-19T00:00:00Z",
		steps: []step{
			{at: "2026-07-02T03:00:00Z", events: []json.RawMessage{txn("txn-vte-1", "bu-vte", "CUST-VTE-1", 1, "2026-07-02", "BRANCH")}, want: []string{"accepted"}},
			{at: "2026-07-06T00:00:00Z", events: []json.RawMessage{txn("txn-syd-1", "bu-syd", "CUST-SYD-1", 1, "2026-07-06", "APP")}, want: []string{"accepted"}},
			{at: "2026-07-20T03:00:00Z", events: []json.RawMessage{txn("txn-vte-2", "bu-vte", "CUST-VTE-1", 2, "2026-07-20", "BRANCH")}, want: []string{"accepted"}},
			{at: "2026-08-01T03:00:00Z", events: []json.RawMessage{txn("txn-vte-3", "bu-vte", "CUST-VTE-1", 3, "2026-08-01", "OLS")}, want: []string{"filtered"}},
		},
		routed: map[string]int{"domain-events/txn-vte-1": 1, "domain-events/txn-syd-1": 1, "domain-events/txn-vte-2": 1,
			"events/rem/CUST-VTE-1": 1, "events/rem/CUST-SYD-1": 1},
		payloads: map[string]func(p gateway.Payload) error{
			"events/rem/CUST-VTE-1": all(sourceEvent("Dormant_User", "CUST-VTE-1"), dataIs("targetDate", "2026-07-20"), dataIs("offsetDays", -90),
				dataIs("localTime", "2026-10-18T10:00:00+07:00")),
			"events/rem/CUST-SYD-1": all(sourceEvent("Dormant_User", "CUST-SYD-1"), dataIs("targetDate", "2026-07-06"), dataIs("localTime", "2026-10-04T09:00:00+11:00")),
		},
		// The Dormant_User event for the rule engine (the offer), and the offer's push on the
		// member app (seed 003 UC-13: "Firebase Push / SMS"), no inbox message.
		deliveries: []wantDelivery{
			{dormantSYD, "event", "CUST-SYD-1", "2026-10-03T22:00:00Z", "We miss you"},
			{dormantSYD, "push", "CUST-SYD-1", "2026-10-03T22:00:00Z", "We miss you"},
			{dormantVTE, "event", "CUST-VTE-1", "2026-10-18T03:00:00Z", "We miss you"},
			{dormantVTE, "push", "CUST-VTE-1", "2026-10-18T03:00:00Z", "We miss you"},
		},
		inbox:   map[string][]string{"bu-vte/CUST-VTE-1": nil, "bu-syd/CUST-SYD-1": nil},
		devices: map[string][]string{"bu-vte/CUST-VTE-1": {"fcm-vte1-dev-a"}, "bu-syd/CUST-SYD-1": {"fcm-syd1-dev-a", "fcm-syd1-dev-b"}},
		pushes:  []string{"fcm-syd1-dev-a We miss you", "fcm-syd1-dev-b We miss you", "fcm-vte1-dev-a We miss you"},
	},
}

func TestLoyaltyUseCases(t *testing.T) {
	t.Parallel()
	for _, uc := range append(slices.Clone(useCases), uc01(), uc02(), uc03(), uc05(), uc12()) {
		for _, c := range []useCase{uc, uc.variant()} {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				run(t, c)
			})
		}
	}
}

func run(t *testing.T, uc useCase) {
	ctx := context.Background()
	fcm := simhttptest.Start(t, fcmsim.New, fcmsim.Config{})
	h, err := acceptance.Start(ctx, acceptance.Options{Dir: t.TempDir(), Start: ts(uc.start), Scenario: scenarioFile,
		Registry: registryFile, FunctionsDir: functionsDir, Push: fcm, PushActions: pushActions, PushEvents: pushEvents, PushReminders: pushReminders})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	for _, who := range slices.Sorted(maps.Keys(uc.devices)) {
		bu, customer, _ := strings.Cut(who, "/")
		for _, tok := range uc.devices[who] {
			res, err := h.Do(ctx, http.MethodPut, "/api/devices/"+customer+"/"+tok+"?businessUnitId="+bu, "application/json",
				[]byte(`{"platform":"android","app":"member-app"}`), nil)
			if err != nil || res.Status != http.StatusCreated {
				t.Fatalf("device %s %s: %d %s %v", who, tok, res.Status, res.Body, err)
			}
		}
	}
	for i, s := range uc.steps {
		if err := h.Advance(ctx, ts(s.at)); err != nil {
			t.Fatal(err)
		}
		res, err := h.Ingest(ctx, "", s.events...)
		if err != nil || res.Status != http.StatusOK || len(res.Results) != len(s.events) {
			t.Fatalf("step %d: %+v %v", i, res, err)
		}
		for j, r := range res.Results {
			got := r.Status
			if r.Filtered {
				got = "filtered"
			}
			if r.Status == gateway.StatusRejected || s.want != nil && got != s.want[j] {
				t.Fatalf("step %d event %d: %+v, want %s", i, j, r, s.want[j])
			}
		}
	}
	if err := h.Advance(ctx, ts(uc.till)); err != nil {
		t.Fatal(err)
	}
	// The attribute engine's triggers, by id; each id is TriggerID of its source event's
	// identity (source, id).
	triggers := map[string]string{}
	for _, m := range h.Messages() {
		if tr := m.Trigger; tr != nil {
			triggers[tr.EventID] = tr.EventName + "@" + tr.Metadata.EntityID
			want := attribute.TriggerID(events.Identity(tr.Metadata.OriginalTriggerEventSource, tr.Metadata.OriginalTriggerEventID), store.AttributeEntity{BusinessUnitID: tr.BusinessUnitID,
				EntityType: tr.Metadata.EntityType, EntityID: tr.Metadata.EntityID}, tr.Metadata.TriggerAttribute,
				decimal.RequireFromString(tr.Metadata.ThresholdReached.String()))
			if m.ID != want+":events" || m.SessionID != tr.CustomerID {
				t.Errorf("trigger %s (session %s), want the deterministic id %s:events", m.ID, m.SessionID, want)
			}
		}
	}
	// Messages: exactly the expected ones, each once.
	got := map[string]int{}
	for _, r := range h.Routed() {
		got[routedKey(r.Topic, r.EventID, r.SessionID, triggers)]++
	}
	if fmt.Sprint(got) != fmt.Sprint(uc.routed) {
		t.Errorf("routed\n got %v\nwant %v", got, uc.routed)
	}
	// What the consumers of events and tracking acknowledged: once each.
	received := map[string]int{}
	for _, m := range h.Messages() {
		if want := events.Identity(m.Payload.Source, m.Payload.EventID) + ":" + m.Topic; m.Trigger == nil && m.ID != want {
			t.Errorf("MessageId %s, want %s (the identity of source and id)", m.ID, want)
		}
		k := routedKey(m.Topic, m.EventID, m.SessionID, triggers)
		received[k]++
		if check := uc.payloads[k]; check != nil {
			if err := check(m.Payload); err != nil {
				t.Errorf("%s: %v", k, err)
			}
		}
	}
	for k, n := range uc.routed {
		if (strings.HasPrefix(k, "events/") || strings.HasPrefix(k, "tracking/")) && received[k] != n {
			t.Errorf("%s received %d times, want %d", k, received[k], n)
		}
	}
	for k := range uc.payloads {
		if received[k] == 0 {
			t.Errorf("%s: never received", k)
		}
	}
	// Deliveries: exactly the expected ones, at their instants.
	var gotD []string
	for _, d := range h.Deliveries() {
		key := d.SchedulerKey
		if strings.HasPrefix(key, "cx-") { // a campaign command "{executionId}:{index}:{actionKey}"
			key = "campaign" + key[strings.Index(key, ":"):]
		}
		gotD = append(gotD, fmt.Sprintf("%s %s %s %s %s", key, d.Channel, d.Recipient, d.At.Format(time.RFC3339), d.Subject))
	}
	var wantD []string
	for _, d := range uc.deliveries {
		at := d.at
		if at == "" { // delivered at once: at the ingest instant of the event
			for _, g := range h.Deliveries() {
				if g.SchedulerKey == d.key {
					at = g.At.Format(time.RFC3339)
				}
			}
		}
		wantD = append(wantD, fmt.Sprintf("%s %s %s %s %s", d.key, d.channel, d.recipient, at, d.subject))
	}
	slices.Sort(gotD)
	slices.Sort(wantD)
	if !slices.Equal(gotD, wantD) {
		t.Errorf("deliveries\n got %q\nwant %q", gotD, wantD)
	}
	if f := h.Failures(); len(f) > 0 {
		t.Errorf("delivery outcomes other than sent: %+v", f)
	}
	if p := h.Problems(); len(p) > 0 {
		t.Errorf("refused or dead-lettered inside the product: %q", p)
	}
	var gotA []string
	for _, a := range h.Actions() {
		gotA = append(gotA, fmt.Sprintf("%s %s %s %s", a.CampaignID, a.ActionKey, a.Status, a.RecipientID))
	}
	if !slices.Equal(gotA, uc.actions) {
		t.Errorf("campaign actions\n got %q\nwant %q", gotA, uc.actions)
	}
	// The pushes the simulated FCM accepted: exactly the expected ones, each once.
	var gotP []string
	for _, m := range fcm.Accepted() {
		gotP = append(gotP, m.Token+" "+m.Title)
	}
	slices.Sort(gotP)
	if !slices.Equal(gotP, uc.pushes) {
		t.Errorf("pushes at the simulated FCM\n got %q\nwant %q", gotP, uc.pushes)
	}
	// The attributes and rankings, read over the attribute API.
	for who, want := range uc.attributes {
		parts := strings.SplitN(who, "/", 3)
		attrs, err := h.Attributes(ctx, parts[0], parts[1], parts[2])
		if err != nil {
			t.Fatal(err)
		}
		for code, v := range want {
			if g, ok := attrs[code]; !ok || fmt.Sprint(g) != v {
				t.Errorf("%s %s = %v, want %s (all: %v)", who, code, g, v, attrs)
			}
		}
	}
	for what, want := range uc.top {
		parts := strings.SplitN(what, "/", 3)
		got, err := h.Top(ctx, parts[0], parts[1], parts[2], len(want))
		if err != nil || !slices.Equal(got, want) {
			t.Errorf("top %s: %q %v, want %q", what, got, err, want)
		}
	}
	// The in-app inbox, read back over its API.
	for who, subjects := range uc.inbox {
		bu, recipient, _ := strings.Cut(who, "/")
		if got := inboxSubjects(t, h, bu, recipient); !slices.Equal(got, subjects) {
			t.Errorf("inbox %s: %q, want %q", who, got, subjects)
		}
	}
}

func inboxSubjects(t *testing.T, h *acceptance.Harness, bu, recipient string) []string {
	t.Helper()
	res, err := h.Do(context.Background(), http.MethodGet, "/api/inbox/"+recipient+"?businessUnitId="+bu, "", nil, nil)
	if err != nil || res.Status != http.StatusOK {
		t.Fatalf("inbox %s/%s: %d %s %v", bu, recipient, res.Status, res.Body, err)
	}
	var page struct {
		Items []struct {
			Subject string `json:"subject"`
		} `json:"items"`
	}
	if err := json.Unmarshal(res.Body, &page); err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, m := range page.Items {
		out = append(out, m.Subject)
	}
	return out
}
