package console

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/store"
)

// ActivityStore is what a recipient's activity feed reads.
type ActivityStore interface {
	store.RecipientActivityStore
	store.AttributeStore
	InboxList(ctx context.Context, p store.InboxListParams) ([]store.InboxMessage, error)
	CampaignExecutionListByRecipient(ctx context.Context, businessUnitID, recipientID string, beforeID int64, limit int) ([]store.CampaignExecution, error)
	// CampaignCommandsOf and NotificationGetByKey find the deliveries of the page's
	// executions and inbox messages (a seek on UQ_CampaignCommand_Step, one on the unique
	// DeliveryKey): read-only, no index of its own on NotificationJob.
	CampaignCommandsOf(ctx context.Context, executionID string) ([]store.CampaignCommand, error)
	NotificationGetByKey(ctx context.Context, deliveryKey string) (store.NotificationJob, error)
}

// activityPerPage is how many entries the activity feed shows at once.
const activityPerPage = 25

// ActivityPages is a recipient's activity (docs/console.md#recipient-activity): for a business unit
// and a customer or staff recipient (?businessUnitId=&recipientId=&entityType=CUSTOMER|STAFF),
// their attribute values now (attribute.Read) and one feed, newest first, of their accepted
// events (the triggers: GatewayEvent by customer), campaign executions (each links to its
// history: the commands, fees and deliveries it caused) and inbox messages, 25 a page. The
// one ?cursor= carries a position in each of the three sources (each read newest first by its
// own key), so a page merges the next entries of all three, newest first with each source
// kept in its key's order, and nothing is skipped or shown twice across pages.
//
// Deliveries: NotificationJob has no index by recipient (one would cost every delivery
// insert a random-key entry, docs/performance.md), so the feed reaches a recipient's
// deliveries through what caused them: each execution on the page lists the deliveries its
// commands caused (its commands by UQ_CampaignCommand_Step; a command's delivery is the
// NotificationJob of its effect key when there is one, else, for a NOTIFICATION_* action,
// the command itself: a campaign sends its messages through the channel directly), and each
// inbox message shows its delivery and its body.
// The cost is read-only and bounded by the page: at most 25 command reads and one point
// read per command or message, nothing on the delivery path. A delivery caused by neither (a
// reminder, a report, a test send) is not in the feed. Read-only; a business unit outside
// the caller's scope answers 404.
func ActivityPages(st ActivityStore, clock automation.Clock) []Page {
	return []Page{{Path: "activity", Title: "Recipient activity", Render: func(r *http.Request, pc PageCall) (template.HTML, error) {
		q := r.URL.Query()
		d := activityPage{BusinessUnitID: strings.TrimSpace(q.Get("businessUnitId")), RecipientID: strings.TrimSpace(q.Get("recipientId")),
			EntityType: strings.TrimSpace(q.Get("entityType"))}
		if d.EntityType == "" {
			d.EntityType = "CUSTOMER"
		}
		var err error
		if d.Picker, err = pc.UnitSelect(r.Context(), "ac-bu", d.BusinessUnitID, true); err != nil {
			return "", err
		}
		if d.BusinessUnitID == "" || d.RecipientID == "" {
			return execute(activityTemplates, "activity", d)
		}
		if err := inScope(pc, d.BusinessUnitID); err != nil {
			return "", err
		}
		if d.EntityType != "CUSTOMER" && d.EntityType != "STAFF" {
			return "", automation.Invalid("entityType", "must be CUSTOMER or STAFF, not %q", d.EntityType)
		}
		if len(d.RecipientID) > 200 {
			return "", automation.Invalid("recipientId", "is at most 200 characters")
		}
		ctx := r.Context()
		d.AsOf = clock.Now().UTC()
		views, err := attribute.Read(ctx, st, store.AttributeEntity{BusinessUnitID: d.BusinessUnitID, EntityType: d.EntityType, EntityID: d.RecipientID}, d.AsOf)
		if err != nil {
			return "", err
		}
		for _, v := range views {
			d.Attributes = append(d.Attributes, attributeRow{View: v, Value: valueText(v.Value)})
		}
		cq := "console-activity:" + d.BusinessUnitID + ":" + d.RecipientID
		var pos activityCursor
		if c := strings.TrimSpace(q.Get("cursor")); c != "" {
			if err := httpapi.DecodeCursor(c, cq, &pos); err != nil {
				return "", err
			}
			d.Paged = true
		}
		next, more, err := d.feed(ctx, st, pos)
		if err != nil {
			return "", err
		}
		if err := d.deliveries(ctx, st); err != nil {
			return "", err
		}
		if more {
			cur, err := httpapi.EncodeCursor(cq, next)
			if err != nil {
				return "", err
			}
			d.Next = Base + "/activity?" + url.Values{"businessUnitId": {d.BusinessUnitID}, "recipientId": {d.RecipientID}, "entityType": {d.EntityType}, "cursor": {cur}}.Encode()
		}
		d.Loaded = true
		return execute(activityTemplates, "activity", d)
	}}}
}

// activityCursor is where each source of the feed stands: below these keys (0 / zero: from
// the newest); Done marks a source read to its end.
type activityCursor struct {
	Inbox      int64     `json:"i,omitempty"`
	Executions int64     `json:"x,omitempty"`
	EventOn    time.Time `json:"eo,omitzero"`
	EventID    string    `json:"ei,omitempty"`
	Done       []string  `json:"done,omitempty"`
}

// activityEntry is one line of the feed.
type activityEntry struct {
	On     time.Time
	Kind   string // event, execution, inbox
	Anchor string // the element id other pages link to ("inbox-{deliveryKey}")
	Title  string
	Detail string
	Href   string
	// Deliveries are the deliveries the entry caused (an execution's commands' or an inbox
	// message's), filled for the page's entries only.
	Deliveries []activityDelivery
	// Body is an inbox message's body (its text, else its HTML as source).
	Body string
	// advance moves the cursor past this entry.
	advance func(c *activityCursor)
	// executionID or deliveryKey: what the deliveries are read by.
	executionID, deliveryKey string
}

// activityDelivery is one delivery in the feed: the NotificationJob as support needs it
// ("why didn't she get her points?").
type activityDelivery struct {
	Anchor, DeliveryKey, Channel, Status, Template string
	Action                                         string // the campaign action that caused it ("" for an inbox message)
	SentOn                                         *time.Time
	LastError, ProviderRef                         string
}

// deliveries fills the page's entries' deliveries and bodies (see ActivityPages for the
// cost). A delivery of another business unit is never shown.
func (d *activityPage) deliveries(ctx context.Context, st ActivityStore) error {
	one := func(key, action string) (*activityDelivery, error) {
		j, err := st.NotificationGetByKey(ctx, key)
		if errors.Is(err, store.ErrNotFound) || (err == nil && j.BusinessUnitID != d.BusinessUnitID) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		return &activityDelivery{Anchor: "delivery-" + j.DeliveryKey, DeliveryKey: j.DeliveryKey, Channel: j.Channel, Status: string(j.Status),
			Template: j.Template, Action: action, SentOn: j.SentOn, LastError: j.LastError}, nil
	}
	for i := range d.Entries {
		e := &d.Entries[i]
		switch {
		case e.executionID != "":
			cs, err := st.CampaignCommandsOf(ctx, e.executionID)
			if err != nil {
				return err
			}
			for _, c := range cs {
				if c.EffectKey == "" || c.BusinessUnitID != d.BusinessUnitID {
					continue
				}
				action := fmt.Sprintf("action %d · %s", c.ActionIndex, c.ActionKey)
				dl, err := one(c.EffectKey, action)
				if err != nil {
					return err
				}
				if dl == nil && strings.HasPrefix(c.ActionType, "NOTIFICATION_") {
					// A campaign's message is sent by its command through the channel
					// (campaign.ChannelProvider): the command is the delivery, its effect
					// key the delivery key; no NotificationJob is written for it.
					dl = &activityDelivery{Anchor: "delivery-" + c.EffectKey, DeliveryKey: c.EffectKey, Channel: c.Provider, Status: string(c.Status),
						Template: c.ActionType, Action: action, LastError: c.LastError, ProviderRef: c.ProviderRef}
					if c.Status == store.CommandSucceeded {
						on := c.UpdatedOn
						dl.SentOn = &on
					}
				}
				if dl != nil {
					e.Deliveries = append(e.Deliveries, *dl)
				}
			}
		case e.deliveryKey != "":
			dl, err := one(e.deliveryKey, "")
			if err != nil {
				return err
			}
			if dl != nil {
				e.Deliveries = append(e.Deliveries, *dl)
			}
		}
	}
	return nil
}

// feed reads the next page of every source below pos, merges them newest first and returns
// the page, the cursor after it and whether anything is left.
func (d *activityPage) feed(ctx context.Context, st ActivityStore, pos activityCursor) (activityCursor, bool, error) {
	n := activityPerPage + 1
	bu, who := d.BusinessUnitID, d.RecipientID
	type source struct {
		name    string
		entries []activityEntry
	}
	var sources []source
	if !slices.Contains(pos.Done, "event") {
		es, err := st.GatewayEventListByCustomer(ctx, store.GatewayEventListParams{BusinessUnitID: bu, CustomerID: who, BeforeOn: pos.EventOn, BeforeEventID: pos.EventID, Limit: n})
		if err != nil {
			return pos, false, err
		}
		s := source{name: "event"}
		for _, e := range es {
			s.entries = append(s.entries, activityEntry{On: e.AcceptedOn, Kind: "event", Anchor: "event-" + e.ID, Title: "Event " + e.Type + " accepted",
				Detail:  fmt.Sprintf("%s/%s, registry v%d, routed %s", e.Source, e.ID, e.RegistryVersion, e.Routes),
				advance: func(c *activityCursor) { c.EventOn, c.EventID = e.AcceptedOn, e.ID }})
		}
		sources = append(sources, s)
	}
	if !slices.Contains(pos.Done, "execution") {
		xs, err := st.CampaignExecutionListByRecipient(ctx, bu, who, pos.Executions, n)
		if err != nil {
			return pos, false, err
		}
		s := source{name: "execution"}
		for _, x := range xs {
			s.entries = append(s.entries, activityEntry{On: x.CreatedOn, Kind: "execution", Anchor: "execution-" + x.ExecutionID,
				Title: fmt.Sprintf("Campaign %s: execution %s", x.CampaignID, x.Status), Detail: fmt.Sprintf("%s, next action: %s, source event %s", x.ExecutionID, nextActionText(x.Status, x.CurrentIndex), x.SourceEventID),
				Href:    Base + "/campaigns?" + url.Values{"businessUnitId": {bu}, "campaignId": {x.CampaignID}, "executionId": {x.ExecutionID}}.Encode() + "#execution",
				advance: func(c *activityCursor) { c.Executions = x.ID }, executionID: x.ExecutionID})
		}
		sources = append(sources, s)
	}
	if !slices.Contains(pos.Done, "inbox") {
		before := pos.Inbox
		ms, err := st.InboxList(ctx, store.InboxListParams{BusinessUnitID: bu, RecipientID: who, State: store.InboxAll, BeforeSeq: before, Limit: n})
		if err != nil {
			return pos, false, err
		}
		s := source{name: "inbox"}
		for _, m := range ms {
			state := "unread"
			if m.ReadOn != nil {
				state = "read " + m.ReadOn.UTC().Format("2006-01-02 15:04:05Z")
			}
			s.entries = append(s.entries, activityEntry{On: m.CreatedOn, Kind: "inbox", Anchor: "inbox-" + m.DeliveryKey, Title: "Inbox message: " + m.Subject,
				Detail: fmt.Sprintf("#%d, %s, delivery %s", m.Seq, state, m.DeliveryKey), advance: func(c *activityCursor) { c.Inbox = m.Seq },
				Body: cmp.Or(m.Text, m.HTML), deliveryKey: m.DeliveryKey})
		}
		sources = append(sources, s)
	}
	// A merge of the sources, each kept in its own order (the order its cursor follows),
	// taking the newest head each time; within one instant, the cause before its effect
	// reads bottom-up. Not a sort of all entries: a source's key (an inbox message's Seq, an
	// execution's id) need not follow its instant (two writers stamp, then commit in the
	// other order), and a page that took a source's entries out of that order moved the
	// cursor past entries it did not show (TestRecipientActivityFeedSeqOutOfTimeOrder).
	rank := map[string]int{"inbox": 0, "execution": 1, "event": 2}
	newer := func(a, b activityEntry) bool {
		if c := a.On.Compare(b.On); c != 0 {
			return c > 0
		}
		return rank[a.Kind] < rank[b.Kind]
	}
	heads := make([]int, len(sources))
	d.Entries = nil
	for len(d.Entries) < activityPerPage {
		best := -1
		for i, s := range sources {
			if heads[i] < len(s.entries) && (best < 0 || newer(s.entries[heads[i]], sources[best].entries[heads[best]])) {
				best = i
			}
		}
		if best < 0 {
			break
		}
		d.Entries = append(d.Entries, sources[best].entries[heads[best]])
		heads[best]++
	}
	next := pos
	next.Done = slices.Clone(pos.Done)
	taken := map[string]int{}
	for _, e := range d.Entries {
		e.advance(&next)
		taken[e.Kind]++
	}
	more := false
	for _, s := range sources {
		if taken[s.name] == len(s.entries) && len(s.entries) < n {
			next.Done = append(next.Done, s.name) // read to its end and all shown
			continue
		}
		more = true
	}
	return next, more, nil
}

type activityPage struct {
	BusinessUnitID, RecipientID, EntityType string
	Picker                                  template.HTML
	Loaded, Paged                           bool
	AsOf                                    time.Time
	Attributes                              []attributeRow
	Entries                                 []activityEntry
	Next                                    string
}

var activityTemplates = template.Must(template.New("activity").Funcs(funcs).Parse(`{{define "activity"}}
<form method="get" action="/api/console/activity" class="filters" aria-label="Recipient">
<div>{{.Picker}}</div>
<div><label for="ac-type">Recipient type</label><select id="ac-type" name="entityType"><option{{if eq .EntityType "CUSTOMER"}} selected{{end}}>CUSTOMER</option><option{{if eq .EntityType "STAFF"}} selected{{end}}>STAFF</option></select></div>
<div><label for="ac-id">Recipient id</label><input id="ac-id" name="recipientId" value="{{.RecipientID}}" required maxlength="200"></div>
<div><button type="submit">Show</button></div></form>
{{if .Loaded}}<div class="scroll"><table id="activity-attributes"><caption>Attribute values of {{.EntityType}} {{.RecipientID}} in {{.BusinessUnitID}}, as of {{when .AsOf}}</caption>
<thead><tr><th scope="col">Attribute</th><th scope="col">Value</th><th scope="col">Last event (UTC)</th></tr></thead>
<tbody>{{range .Attributes}}<tr><th scope="row">{{.Code}}</th><td>{{.Value}}</td><td>{{when .LastEventOn}}</td></tr>
{{else}}<tr><td colspan="3">No attributes.</td></tr>{{end}}</tbody></table></div>
<h2 id="feed">Activity, newest first{{if .Paged}} (an older page){{end}}</h2>
<ol class="timeline" id="activity-feed">{{range .Entries}}<li id="{{.Anchor}}" class="{{.Kind}}"><time>{{when .On}}</time> <strong>{{.Title}}</strong> — {{.Detail}}{{with .Href}} · <a href="{{.}}">open</a>{{end}}
{{with .Deliveries}}<ul class="deliveries">{{range .}}<li id="{{.Anchor}}">Delivery <span class="key">{{.DeliveryKey}}</span> on {{.Channel}} ({{.Template}}{{with .Action}}, {{.}}{{end}}): <strong>{{.Status}}</strong>{{with .SentOn}}, sent {{when .}}{{end}}{{with .ProviderRef}}, provider reference {{.}}{{end}}{{with .LastError}}, last error: {{.}}{{end}}</li>{{end}}</ul>{{end}}
{{with .Body}}<details><summary>Message body</summary><pre class="body">{{.}}</pre></details>{{end}}</li>
{{else}}<li>Nothing{{if .Paged}} older{{end}} for {{.RecipientID}} in {{.BusinessUnitID}}.</li>{{end}}</ol>
{{with .Next}}<p><a href="{{.}}" rel="next" id="activity-next">Older activity</a></p>{{end}}{{end}}{{end}}`))
