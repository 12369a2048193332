package acceptance_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/acceptance"
	"github.com/automation-platform/automation/shared/gateway"
)

var voucherScan = ev("scan-7781", "Voucher_Used", "bu-hcm", "CUST-HCM-1", "/merchant-app",
	map[string]any{"customerId": "CUST-HCM-1", "voucherCode": "VC-7781", "merchantName": "Pho 24 District 1"})

// UC-10 in real time: a customer's open inbox stream receives the message as soon as the
// scan's event is ingested (no clock advance); and the seed's "ghost timeout": the scan
// API's answer is lost, its retry with the same Idempotency-Key gets the stored answer
// (Idempotent-Replayed), and the customer still has one message. The same key with another
// body is refused and changes nothing.
func TestUC10VoucherUsedRealTimeAndGhostTimeout(t *testing.T) {
	t.Parallel()
	ctx, h, got := startWatching(t, "2026-07-01T01:10:00Z", 20*time.Second, "CUST-HCM-1", 4)
	first, err := h.Ingest(ctx, "scan-7781-attempt-1", voucherScan)
	if err != nil || first.Status != http.StatusOK || first.Replayed || first.Results[0].Status != gateway.StatusAccepted {
		t.Fatalf("scan: %+v %v", first, err)
	}
	select {
	case data := <-got:
		var m struct {
			Subject, Text, RecipientID string
		}
		if err := json.Unmarshal([]byte(data), &m); err != nil || m.Subject != "Voucher VC-7781 used" || m.RecipientID != "CUST-HCM-1" ||
			m.Text != "Your voucher VC-7781 was used at Pho 24 District 1." {
			t.Fatalf("streamed %s %v", data, err)
		}
	case <-ctx.Done():
		t.Fatal("the inbox stream received nothing")
	}
	// The answer was lost on the way back: the retry carries the same key and body.
	retry, err := h.Ingest(ctx, "scan-7781-attempt-1", voucherScan)
	if err != nil || retry.Status != http.StatusOK || !retry.Replayed || !reflect.DeepEqual(retry.Results, first.Results) {
		t.Fatalf("retry: %+v %v, want the stored answer %+v", retry, err, first.Results)
	}
	// Without the key the gateway's ledger still answers "duplicate" and routes nothing.
	again, err := h.Ingest(ctx, "", voucherScan)
	if err != nil || again.Results[0].Status != gateway.StatusDuplicate {
		t.Fatalf("again: %+v %v", again, err)
	}
	other, err := h.Ingest(ctx, "scan-7781-attempt-1", ev("scan-7782", "Voucher_Used", "bu-hcm", "CUST-HCM-1", "/merchant-app",
		map[string]any{"customerId": "CUST-HCM-1", "voucherCode": "VC-7782", "merchantName": "Pho 24"}))
	if err != nil || other.Status != http.StatusUnprocessableEntity {
		t.Fatalf("same key, other body: %+v %v", other, err)
	}
	if err := h.Advance(ctx, ts("2026-07-02T00:00:00Z")); err != nil {
		t.Fatal(err)
	}
	if d := h.Deliveries(); len(d) != 1 || d[0].Channel != "inbox" || d[0].SchedulerKey != gateway.UserMessageKey("/merchant-app", "scan-7781") {
		t.Fatalf("deliveries %+v", d)
	}
	if s := inboxSubjects(t, h, "bu-hcm", "CUST-HCM-1"); len(s) != 1 {
		t.Fatalf("inbox %q", s)
	}
	select {
	case data := <-got:
		t.Fatalf("a second streamed message: %s", data)
	default:
	}
}

// Bad input: each event is rejected on its own with the member and a clear reason, and
// nothing is routed or delivered and no attribute changes — a schema violation, a survey id
// an attribute code cannot hold, a transfer of zero and of a negative amount, a login from a
// device id with a space, a view of an item id with a space or without an item. A single structured event answers 422
// with a problem naming the member.
func TestLoyaltyBadInput(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	h := start(t, "2026-07-01T00:00:00Z")
	transfer := func(id string, amount any) json.RawMessage {
		return ev(id, "Transfer_Balance", "bu-vte", "CUST-VTE-1", "/member-app", map[string]any{"fromCustomerId": "CUST-VTE-1", "toCustomerId": "CUST-VTE-2", "amount": amount})
	}
	cases := []struct {
		event           json.RawMessage
		pointer, reason string
	}{
		{ev("profile-bad", "Profile_Completed", "bu-syd", "CUST-SYD-1", "/profile-service", map[string]any{"completedOn": "yesterday"}), "/data/completedOn", "does not match pattern"},
		{ev("welcome-bad", "Welcome_Offer", "bu-vte", "CUST-VTE-2", "/card-issuance", map[string]any{"cardId": "CARD-1"}), "/data/cardType", "missing"},
		{ev("survey-bad", "Survey_Completed", "bu-hcm", "CUST-HCM-1", "/member-app", map[string]any{"surveyId": "Q3 survey:2026!"}), "/data/surveyId", "does not match pattern"},
		{ev("survey-long", "Survey_Completed", "bu-hcm", "CUST-HCM-1", "/member-app", map[string]any{"surveyId": strings.Repeat("s", 41)}), "/data/surveyId", "does not match pattern"},
		{transfer("xfer-zero", 0), "/data/amount", "minimum: got 0, want 1"},
		{transfer("xfer-neg", -5), "/data/amount", "minimum: got -5, want 1"},
		{transfer("xfer-frac", 2.5), "/data/amount", "integer"},
		{login("login-bad", "bu-vte", "CUST-VTE-5", "2026-07-01T00:00:00Z", "DEV A"), "/data/deviceId", "does not match pattern"},
		{ev("view-bad", "ViewItem", "bu-vte", "CUST-VTE-3", "/member-app", map[string]any{"itemId": "ITEM 1"}), "/data/itemId", "does not match pattern"},
		{ev("view-none", "ViewItem", "bu-vte", "CUST-VTE-3", "/member-app", map[string]any{}), "/data/itemId", "missing"},
		{ev("dormant-forged", "Dormant_User", "bu-vte", "CUST-VTE-1", "/member-app", map[string]any{"targetDate": "2026-07-20", "offsetDays": 90, "sourceGuid": "CUST-VTE-1"}), "/data/offsetDays", "maximum"},
	}
	var batch []json.RawMessage
	for _, c := range cases {
		batch = append(batch, c.event)
	}
	res, err := h.Ingest(ctx, "", batch...)
	if err != nil || res.Status != http.StatusOK || len(res.Results) != len(cases) {
		t.Fatalf("%+v %v", res, err)
	}
	for i, c := range cases {
		r := res.Results[i]
		if r.Status != gateway.StatusRejected || r.Pointer != c.pointer || !strings.Contains(r.Reason, c.reason) {
			t.Errorf("event %d: %+v, want rejected at %s (%s)", i, r, c.pointer, c.reason)
		}
	}
	single, err := h.Do(ctx, http.MethodPost, "/api/events", "application/cloudevents+json", transfer("xfer-single", -1), nil)
	if err != nil || single.Status != http.StatusUnprocessableEntity || !strings.Contains(string(single.Body), "/data/amount") {
		t.Fatalf("single: %d %s %v", single.Status, single.Body, err)
	}
	if err := h.Advance(ctx, ts("2026-07-02T00:00:00Z")); err != nil {
		t.Fatal(err)
	}
	if r, m, d := h.Routed(), h.Messages(), h.Deliveries(); len(r)+len(m)+len(d) != 0 {
		t.Fatalf("routed %v, received %v, delivered %v", r, m, d)
	}
	// No attribute changed: the rejected survey, login and view set no flag and count nothing.
	for _, e := range [][2]string{{"bu-hcm", "CUST-HCM-1"}, {"bu-vte", "CUST-VTE-5"}, {"bu-vte", "CUST-VTE-3"}} {
		if attrs, err := h.Attributes(ctx, e[0], "CUSTOMER", e[1]); err != nil || len(attrs) != 0 {
			t.Errorf("%s/%s attributes %v %v, want none", e[0], e[1], attrs, err)
		}
	}
	if top, err := h.Top(ctx, "bu-vte", "ITEM", "item_view_count", 10); err != nil || len(top) != 0 {
		t.Errorf("item views %v %v, want none", top, err)
	}
}

// The shipped registry file testdata/registry/loyalty.json stays the loyalty scenario's
// registry input: shared/replay's TestRegistryFilesAreTheScenarios.

// UC-01 under real concurrency: four customers each log in on two devices at once — eight
// POST /api/events requests in flight together, each followed by its own pipeline run, so
// the attribute engine applies the two logins of a customer concurrently. SET_TRUE_ONCE
// emits exactly one First_Login_Reward per customer (the deterministic id of the login that
// won), the welcome campaign runs once per customer, and the open inbox stream of the first
// customer receives the welcome message once, at once.
func TestUC01FirstLoginTwoDevicesConcurrently(t *testing.T) {
	t.Parallel()
	ctx, h, streamed := startWatching(t, "2026-07-01T02:00:00Z", 60*time.Second, "CUST-HCM-60", 8)
	customers := []string{"CUST-HCM-60", "CUST-HCM-61", "CUST-HCM-62", "CUST-HCM-63"}
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for _, c := range customers {
		for _, device := range []string{"DEV-A", "DEV-B"} {
			wg.Go(func() {
				<-gate
				id := "login-" + c + "-" + device
				r, err := h.Ingest(ctx, "", login(id, "bu-hcm", c, "2026-07-01T02:00:00Z", device))
				if err != nil || r.Status != http.StatusOK || r.Results[0].Status != gateway.StatusAccepted {
					t.Errorf("%s: %+v %v", id, r, err)
				}
			})
		}
	}
	close(gate)
	wg.Wait()
	select {
	case data := <-streamed:
		if !strings.Contains(data, `"subject":"Welcome to the club"`) {
			t.Fatalf("streamed %s", data)
		}
	case <-ctx.Done():
		t.Fatal("the inbox stream received nothing")
	}
	if err := h.Advance(ctx, ts("2026-07-01T03:00:00Z")); err != nil {
		t.Fatal(err)
	}
	rewards := map[string][]string{}
	for _, m := range h.Messages() {
		if m.Trigger != nil {
			rewards[m.Trigger.CustomerID] = append(rewards[m.Trigger.CustomerID], m.Trigger.EventName+" from "+m.Trigger.Metadata.OriginalTriggerEventID)
		}
	}
	actions := map[string]int{}
	for _, a := range h.Actions() {
		actions[a.RecipientID+" "+a.ActionKey+" "+string(a.Status)]++
	}
	for _, c := range customers {
		if r := rewards[c]; len(r) != 1 || !strings.HasPrefix(r[0], "First_Login_Reward from login-"+c+"-DEV-") {
			t.Errorf("%s: triggers %q, want one First_Login_Reward", c, r)
		}
		if actions[c+" welcome SUCCEEDED"] != 1 || actions[c+" ott SUCCEEDED"] != 1 {
			t.Errorf("%s: campaign actions %v", c, actions)
		}
		if s := inboxSubjects(t, h, "bu-hcm", c); !slices.Equal(s, []string{"Welcome to the club"}) {
			t.Errorf("%s: inbox %q", c, s)
		}
		attrs, err := h.Attributes(ctx, "bu-hcm", "CUSTOMER", c)
		if err != nil || fmt.Sprint(attrs["first_login"]) != "true" || fmt.Sprint(attrs["login_streak"]) != "1" {
			t.Errorf("%s: attributes %v %v", c, attrs, err)
		}
	}
	if p := h.Problems(); len(p) > 0 {
		t.Errorf("refused or dead-lettered: %q", p)
	}
	select {
	case data := <-streamed:
		t.Fatalf("a second streamed message: %s", data)
	default:
	}
}

// startWatching starts the loyalty harness at at (start) with a context of timeout (ended
// with the test), and opens bu-hcm's recipient's inbox stream on it (openInboxStream,
// buffered for n).
func startWatching(t *testing.T, at string, timeout time.Duration, recipient string, n int) (context.Context, *acceptance.Harness, <-chan string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	t.Cleanup(cancel)
	h := start(t, at)
	return ctx, h, openInboxStream(ctx, t, h.URL, "bu-hcm", recipient, n)
}

// openInboxStream opens recipient's inbox stream in unit bu on the server at base (ctx bounds
// it; closed when the test ends), fails the test unless it is a 200 text/event-stream, and
// reads it in the background: each event's data (a "data: " line without the prefix) comes
// on the channel it returns, buffered for n, until the stream ends.
func openInboxStream(ctx context.Context, t *testing.T, base, bu, recipient string, n int) <-chan string {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/inbox/"+recipient+"/stream?businessUnitId="+bu, nil)
	res, err := http.DefaultClient.Do(req)
	if err != nil || res.StatusCode != http.StatusOK || !strings.HasPrefix(res.Header.Get("Content-Type"), "text/event-stream") {
		t.Fatalf("stream: %v %v", res, err)
	}
	t.Cleanup(func() { res.Body.Close() })
	out := make(chan string, n)
	go func() {
		sc := bufio.NewScanner(res.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				out <- data
			}
		}
	}()
	return out
}
