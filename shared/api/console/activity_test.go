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

// TestRecipientActivityDeliveries: the feed shows a recipient's deliveries (issue 35: it read
// none) through what caused them, without reading NotificationJob by recipient: an
// execution lists the delivery its command caused (the command's effect key is the
// delivery key; without a NotificationJob, the NOTIFICATION_* command itself) with channel,
// status and error, an inbox message shows its delivery and its body; a delivery of another
// unit under the same key is never shown.
func TestRecipientActivityDeliveries(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	saveCampaign(t, e, "bu-syd", "welcome")
	for i, exe := range []string{"exe-a", "exe-b"} {
		if _, err := e.rt.Store.CampaignStart(ctx, store.CampaignStartParams{
			Execution: store.CampaignExecution{ExecutionID: exe, BusinessUnitID: "bu-syd", CampaignID: "welcome", RunID: "run-1", RecipientID: "ann",
				SourceEventID: "evt-" + exe, LocalDate: "2026-10-05", DefinitionJSON: `{}`},
			Command: store.CampaignCommand{CommandID: exe + ":0:greet", EffectKey: "ce-" + exe, ExecutionID: exe, BusinessUnitID: "bu-syd", CampaignID: "welcome",
				RecipientID: "ann", ActionKey: "greet", ActionType: "NOTIFICATION_LOG", Provider: "log", LocalDate: "2026-10-05"}, Now: now.Add(time.Duration(i) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.rt.Store.InboxInsert(ctx, store.InboxInsertParams{BusinessUnitID: "bu-syd", RecipientID: "ann", DeliveryKey: "ce-inbox-1",
		Template: "points", Subject: "Points", Text: "You have 120 points, Ann.", Now: now.Add(3 * time.Minute)}); err != nil {
		t.Fatal(err)
	}
	// The deliveries: exe-a's sent on log, the inbox message's sent, and under exe-b's effect
	// key a delivery of bu-nyc (failed), which bu-syd's feed must not show.
	req := func(key, bu, channel string) store.NotificationRequest {
		return store.NotificationRequest{DeliveryKey: key, BusinessUnitID: bu, Channel: channel, Recipient: "ann",
			Template: "points", LocalDate: "2026-10-05", PayloadJSON: "{}"}
	}
	e.completeFixtureRow(t, "feed", now.Add(-time.Hour), req("ce-exe-a", "bu-syd", "log"), req("ce-exe-b", "bu-nyc", "sms"), req("ce-inbox-1", "bu-syd", "inbox"))
	finish := func(key string, st store.NotificationStatus, msg string) {
		t.Helper()
		cl, err := e.rt.Store.NotificationClaim(ctx, store.NotificationClaimParams{DeliveryKey: key, Now: now, Lease: time.Minute})
		if err != nil || !cl.Claimed {
			t.Fatalf("claim %s: %+v %v", key, cl, err)
		}
		if err := e.rt.Store.NotificationFinish(ctx, store.NotificationFinishParams{ID: cl.Job.ID, Token: cl.Job.Version, Now: now, Status: st, Error: msg}); err != nil {
			t.Fatal(err)
		}
	}
	finish("ce-exe-a", store.NotificationSent, "")
	finish("ce-exe-b", store.NotificationFailed, "550 no such user")
	finish("ce-inbox-1", store.NotificationSent, "")
	body, doc := e.page(t, "/api/console/activity?businessUnitId=bu-syd&recipientId=ann", "", 200)
	labelled(t, doc)
	exeA := body[strings.Index(body, `id="execution-exe-a"`):]
	exeA = exeA[:strings.Index(exeA, "</li>\n")]
	for _, want := range []string{`<li id="delivery-ce-exe-a">Delivery <span class="key">ce-exe-a</span> on log (points, action 0 · greet): <strong>Sent</strong>, sent 2026-10-05`} {
		if !strings.Contains(exeA, want) {
			t.Fatalf("exe-a's entry lacks %q: %s", want, exeA)
		}
	}
	// exe-b's delivery is its command (a campaign sends through the channel itself), not
	// bu-nyc's job under the same key.
	exeB := body[strings.Index(body, `id="execution-exe-b"`):]
	exeB = exeB[:strings.Index(exeB, "</li>\n")]
	if strings.Contains(body, "550 no such user") || strings.Contains(body, "on sms") ||
		!strings.Contains(exeB, `<li id="delivery-ce-exe-b">Delivery <span class="key">ce-exe-b</span> on log (NOTIFICATION_LOG, action 0 · greet): <strong>QUEUED</strong>`) {
		t.Fatalf("exe-b's delivery (its command, not another unit's job): %s", exeB)
	}
	inbox := body[strings.Index(body, `id="inbox-ce-inbox-1"`):]
	for _, want := range []string{`<li id="delivery-ce-inbox-1">Delivery <span class="key">ce-inbox-1</span> on inbox (points): <strong>Sent</strong>`,
		`<summary>Message body</summary><pre class="body">You have 120 points, Ann.</pre>`} {
		if !strings.Contains(inbox, want) {
			t.Fatalf("the inbox entry lacks %q: %.3000s", want, inbox)
		}
	}
}

// TestRecipientActivityFeedSeqOutOfTimeOrder: an inbox message's Seq (the feed's cursor in
// the inbox) need not follow its CreatedOn: two deliveries stamp their instants, then commit
// in the other order, or an instance's clock lags. Here the newest Seq has the oldest
// instant. Every entry is still shown exactly once across the pages (the page took a
// source's entries out of the source's order, and the cursor, the last one taken, then
// skipped some or showed some twice).
func TestRecipientActivityFeedSeqOutOfTimeOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	insert := func(key string, at time.Time) {
		t.Helper()
		if _, err := e.rt.Store.InboxInsert(ctx, store.InboxInsertParams{BusinessUnitID: "bu-syd", RecipientID: "ann", DeliveryKey: key,
			Template: "points", Subject: key, Text: "t", Now: at}); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 30 {
		insert(fmt.Sprintf("dk-%02d", i), now.Add(time.Duration(i+1)*time.Minute))
	}
	insert("dk-late", now) // the highest Seq, the oldest instant
	seen := map[string]int{}
	path := "/api/console/activity?businessUnitId=bu-syd&recipientId=ann"
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatalf("more pages than 31 entries need: %v", seen)
		}
		body, doc := e.page(t, path, "", 200)
		for _, m := range feedIDRE.FindAllStringSubmatch(body, -1) {
			seen[m[1]]++
		}
		path = ""
		if n := find(doc, "id", "activity-next"); n != nil {
			u, _ := url.Parse(attr(n, "href"))
			path = u.RequestURI()
		}
	}
	bad := []string{}
	for i := range 30 {
		if k := fmt.Sprintf("inbox-dk-%02d", i); seen[k] != 1 {
			bad = append(bad, fmt.Sprintf("%s ×%d", k, seen[k]))
		}
	}
	if seen["inbox-dk-late"] != 1 {
		bad = append(bad, fmt.Sprintf("inbox-dk-late ×%d", seen["inbox-dk-late"]))
	}
	if len(bad) > 0 {
		t.Fatalf("entries not shown exactly once across the pages: %v", bad)
	}
}

// TestRecipientActivityHostileContent: an inbox message's subject and body (text or HTML)
// and a recipient id are the sender's or the caller's text, shown escaped: no markup of
// theirs reaches the page, and an id with odd characters round-trips through the form and
// the next-page link.
func TestRecipientActivityHostileContent(t *testing.T) {
	t.Parallel()
	e := newEnv(t, nil)
	ctx := context.Background()
	who := `ann"><script>alert(1)</script>&é`
	if _, err := e.rt.Store.InboxInsert(ctx, store.InboxInsertParams{BusinessUnitID: "bu-syd", RecipientID: who, DeliveryKey: "dk-x1",
		Template: "points", Subject: `<img src=x onerror=alert(2)>`, HTML: `<p onclick="alert(3)">Hi</p><script>alert(4)</script>`, Now: now}); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		if _, err := e.rt.Store.InboxInsert(ctx, store.InboxInsertParams{BusinessUnitID: "bu-syd", RecipientID: who, DeliveryKey: fmt.Sprintf("dk-%02d", i),
			Template: "points", Subject: "s", Text: "</pre><script>alert(5)</script>", Now: now.Add(time.Duration(i+1) * time.Minute)}); err != nil {
			t.Fatal(err)
		}
	}
	path := "/api/console/activity?" + url.Values{"businessUnitId": {"bu-syd"}, "recipientId": {who}}.Encode()
	shown := 0
	for pages := 0; path != ""; pages++ {
		if pages > 3 {
			t.Fatal("more pages than 31 entries need")
		}
		body, doc := e.page(t, path, "", 200)
		for _, bad := range []string{"<script>alert", "<img src=x", `<p onclick`, `"><script>`} {
			if strings.Contains(body, bad) {
				t.Fatalf("unescaped %q on the page: %.3000s", bad, body)
			}
		}
		shown += len(feedIDRE.FindAllStringSubmatch(body, -1))
		path = ""
		if n := find(doc, "id", "activity-next"); n != nil {
			u, _ := url.Parse(attr(n, "href"))
			if got := u.Query().Get("recipientId"); got != who {
				t.Fatalf("the next page's recipient %q, want %q", got, who)
			}
			path = u.RequestURI()
		} else if !strings.Contains(body, "&lt;img src=x onerror=alert(2)&gt;") || !strings.Contains(body, "&lt;p onclick=&#34;alert(3)&#34;&gt;Hi&lt;/p&gt;") {
			t.Fatalf("the last page lacks the escaped subject or HTML body: %.3000s", body)
		}
	}
	if shown != 31 {
		t.Fatalf("%d entries shown, want 31", shown)
	}
}
