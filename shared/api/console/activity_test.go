package console_test

import (
	"context"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/store"
)

var feedIDRE = regexp.MustCompile(`<li id="([^"]+)" class="(event|execution|delivery|inbox)"><time>([^<]+)</time>`)

// TestRecipientActivityFeed: a customer's accepted events, campaign executions and inbox
// messages (40 entries) come in one feed, newest first, 25 a page; following "Older activity"
// shows every entry exactly once, in time order across the pages; another customer's and
// another unit's entries never appear; another unit's scope is 404 and a cursor of another
// recipient 400.
func TestRecipientActivityFeed(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	saveCampaign(t, e, "bu-syd", "welcome")
	for i := range 40 {
		at := now.Add(time.Duration(i) * time.Minute)
		switch i % 3 {
		case 0:
			if _, err := e.rt.Store.GatewayEventAccept(ctx, store.GatewayEventAcceptParams{Now: at, Events: []store.GatewayEvent{
				{Source: "pos", ID: fmt.Sprintf("ev-%02d", i), Type: "Purchase", BusinessUnitID: "bu-syd", CustomerID: "ann", RegistryVersion: 1, Routes: "DIRECT"}}}); err != nil {
				t.Fatal(err)
			}
		case 1:
			exe := fmt.Sprintf("exe-%02d", i)
			if _, err := e.rt.Store.CampaignStart(ctx, store.CampaignStartParams{
				Execution: store.CampaignExecution{ExecutionID: exe, BusinessUnitID: "bu-syd", CampaignID: "welcome", RunID: "run-1", RecipientID: "ann",
					SourceEventID: "evt-" + exe, LocalDate: "2026-10-05", DefinitionJSON: `{}`},
				Command: store.CampaignCommand{CommandID: exe + ":0:greet", EffectKey: "ce-" + exe, ExecutionID: exe, BusinessUnitID: "bu-syd", CampaignID: "welcome",
					RecipientID: "ann", ActionKey: "greet", ActionType: "NOTIFICATION_LOG", Provider: "log", LocalDate: "2026-10-05"}, Now: at}); err != nil {
				t.Fatal(err)
			}
		default:
			if _, err := e.rt.Store.InboxInsert(ctx, store.InboxInsertParams{BusinessUnitID: "bu-syd", RecipientID: "ann", DeliveryKey: fmt.Sprintf("dk-%02d", i),
				Template: "points", Subject: fmt.Sprintf("Points %d", i), Text: "t", Now: at}); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Noise: another customer, and ann in another unit.
	if _, err := e.rt.Store.InboxInsert(ctx, store.InboxInsertParams{BusinessUnitID: "bu-syd", RecipientID: "bob", DeliveryKey: "dk-bob", Template: "points", Subject: "Bob's", Now: now}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.rt.Store.InboxInsert(ctx, store.InboxInsertParams{BusinessUnitID: "bu-nyc", RecipientID: "ann", DeliveryKey: "dk-nyc", Template: "points", Subject: "NYC", Now: now}); err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var last time.Time
	path := "/api/console/activity?businessUnitId=bu-syd&recipientId=ann"
	var firstCursor string
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatal("more pages than 40 entries need")
		}
		body, doc := e.page(t, path, "", 200)
		labelled(t, doc)
		if strings.Contains(body, "dk-bob") || strings.Contains(body, "dk-nyc") {
			t.Fatalf("another recipient's or unit's entry: %.4000s", body)
		}
		ms := feedIDRE.FindAllStringSubmatch(body, -1)
		if pages == 0 && len(ms) != 25 {
			t.Fatalf("first page has %d entries, want 25", len(ms))
		}
		for _, m := range ms {
			if seen[m[1]] {
				t.Fatalf("%s shown twice", m[1])
			}
			seen[m[1]] = true
			on, err := time.Parse("2006-01-02 15:04:05Z", m[3])
			if err != nil {
				t.Fatal(err)
			}
			if !last.IsZero() && on.After(last) {
				t.Fatalf("%s at %s comes after an older entry (%s)", m[1], on, last)
			}
			last = on
		}
		path = ""
		if n := find(doc, "id", "activity-next"); n != nil {
			u, _ := url.Parse(attr(n, "href"))
			path = u.RequestURI()
			if firstCursor == "" {
				firstCursor = u.Query().Get("cursor")
			}
		}
	}
	if len(seen) != 40 || !seen["event-ev-00"] || !seen["execution-exe-01"] || !seen["inbox-dk-02"] || !seen["event-ev-39"] {
		t.Fatalf("the feed showed %d entries, want 40: %v", len(seen), seen)
	}
	e.page(t, "/api/console/activity?businessUnitId=bu-syd&recipientId=ann", "bu-nyc", 404)
	e.page(t, "/api/console/activity?businessUnitId=bu-syd&recipientId=bob&cursor="+url.QueryEscape(firstCursor), "", 400)
}
