package acceptance

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/api/campaignapi"
	"github.com/automation-platform/automation/shared/api/eventsapi"
	"github.com/automation-platform/automation/shared/api/registryapi"
	"github.com/automation-platform/automation/shared/app"
	"github.com/automation-platform/automation/shared/attribute"
	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/bus"
	"github.com/automation-platform/automation/shared/config"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channel"
	"github.com/automation-platform/automation/shared/delivery/fcmsim"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/inbox"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/replay"
	"github.com/automation-platform/automation/shared/store"
	"github.com/automation-platform/automation/shared/topology"
)

// Options configure Start.
type Options struct {
	// Dir is the run's data directory (SQLite database and trace); it must exist.
	Dir string
	// Start is the manual clock's first instant (UTC).
	Start time.Time
	// Scenario is a scenario file whose businessUnits, reminderSettings and templates are
	// seeded (its inputs are not: the test sends its own over HTTP).
	Scenario string
	// Registry is an event registry file imported through POST /api/event-registry/import.
	Registry string
	// FunctionsDir holds the function folders (*/function.json) of the local host.
	FunctionsDir string
	// Log receives the runtime's logs (nil: discarded).
	Log *slog.Logger
	// Observed are the topics whose messages the harness records (Messages). It never
	// replaces a consumer: a topic's handler subscribed by the functions (TrackingProcessor
	// on tracking, CampaignDispatch on events) runs first and the message is recorded once
	// that consumer acknowledged it; a topic no function consumes (the rule/points engine's
	// part of events belongs to another team) is acknowledged by the harness. Nil:
	// DefaultObserved.
	Observed []string
	// Env holds further settings, as the environment would give them (the OTEL_* variables
	// of a traced run, say).
	Env map[string]string
	// Push, when set, is the simulated FCM the push channel sends to (its service-account
	// key and URL become AUTOMATION_FCM_CREDENTIALS and AUTOMATION_FCM_ENDPOINT).
	Push *fcmsim.Server
	// PushActions names the scenario's campaign actions ("campaignId/actionKey") that the
	// seeds send as a push on the member app (the "OTT" message of UC-01): they are saved as
	// NOTIFICATION_PUSH actions of the "push" channel provider, their parameters kept. The
	// scenario itself keeps them on the log channel, because the replay runs it without an
	// FCM simulator. Needs Push.
	PushActions []string
	// PushEvents names the registry's event types whose notification the seeds also send as
	// a push on the member app (UC-10's Voucher_Used: seed 003 has notification-service push
	// it through Firebase besides showing it on the portal): "push" is added to the
	// notification's channels of the imported registry. Needs Push.
	PushEvents []string
	// PushReminders names the scenario's reminder settings (by guid) whose in-app message the
	// seeds send as a push (UC-13's dormant-customer offer: "Firebase Push / SMS" in seed
	// 003): their "inbox" channel becomes "push". Needs Push.
	PushReminders []string
}

// DefaultObserved: the events topic (the rule/points engine's and the campaign
// dispatcher's) and the attribute engine's tracking topic.
var DefaultObserved = []string{topology.EventsTopic, topology.TrackingTopic}

// Message is one message an observed topic's consumer acknowledged, with its body decoded:
// Payload when it is the gateway's fat payload (source_event set), Trigger when it is a
// trigger event of the attribute engine (event_name set).
type Message struct {
	Topic string
	ID    string // the broker MessageId, "{events.Identity(source, id)}:{route}" ("{triggerId}:events")
	// EventID is the event's own id: the fat payload's or the trigger's event_id.
	EventID   string
	SessionID string
	Body      []byte
	Payload   gateway.Payload
	Trigger   *attribute.TriggerEvent
}

// Delivery is one delivery the product sent: a NotificationJob recorded Sent.
type Delivery struct {
	At             time.Time
	SchedulerKey   string
	BusinessUnitID string
	Channel        string
	Recipient      string
	Template       string
	Subject        string
	Text           string
}

// Harness is a running embedded app with its HTTP server (see the package doc).
type Harness struct {
	Runtime *app.Runtime
	Clock   *automation.ManualClock
	// URL is the server's base URL, "http://127.0.0.1:{port}".
	URL    string
	server *http.Server
	client *http.Client

	mu         sync.Mutex
	messages   []Message
	routed     []gateway.Routed
	deliveries []Delivery
	failures   []delivery.Outcome
	actions    []store.CampaignCommand
	refused    []string
}

// Start opens the runtime on o.Dir, seeds it and serves it. Errors: a configuration,
// scenario or registry file the product refuses, a listener that cannot bind.
func Start(ctx context.Context, o Options) (*Harness, error) {
	env := maps.Clone(o.Env)
	if o.Push != nil {
		if env == nil {
			env = map[string]string{}
		}
		env["AUTOMATION_FCM_CREDENTIALS"], env["AUTOMATION_FCM_ENDPOINT"] = string(o.Push.ServiceAccountJSON(o.Push.URL())), o.Push.URL()
	} else if len(o.PushActions) > 0 || len(o.PushEvents) > 0 || len(o.PushReminders) > 0 {
		return nil, fmt.Errorf("acceptance: PushActions, PushEvents or PushReminders without a Push simulator")
	}
	cfg, err := config.Load(func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return map[string]string{"AUTOMATION_DATA_DIR": o.Dir, "AUTOMATION_API_BUSINESS_UNITS": "*"}[k]
	})
	if err != nil {
		return nil, err
	}
	h := &Harness{Clock: automation.NewManualClock(o.Start.UTC()), client: &http.Client{Timeout: 30 * time.Second}}
	log := o.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	h.Runtime, err = app.Open(ctx, cfg, app.Options{Clock: h.Clock, Seed: 1, Log: log, OnRouted: h.onRouted, OnOutcome: h.onOutcome,
		OnCampaignAction: h.onAction, OnAttributeRefused: h.onRefused, CampaignSweepParallel: 1})
	if err != nil {
		return nil, err
	}
	if _, err := h.Runtime.LocalHost(o.FunctionsDir, cfg, false, log); err != nil {
		h.Runtime.Close()
		return nil, err
	}
	observed := o.Observed
	if observed == nil {
		observed = DefaultObserved
	}
	for _, topic := range observed {
		if bh, most := h.Runtime.Memory.BatchHandler(topic); bh != nil {
			h.Runtime.Memory.SubscribeBatch(topic, most, h.observeBatch(bh))
			continue
		}
		h.Runtime.Memory.Subscribe(topic, h.observe(h.Runtime.Memory.Handler(topic)))
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		h.Runtime.Close()
		return nil, err
	}
	h.URL = "http://" + ln.Addr().String()
	h.server = &http.Server{Handler: h.Runtime.ListenerHandler(false), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = h.server.Serve(ln) }()
	if err := h.seed(ctx, o); err != nil {
		h.Close()
		return nil, err
	}
	return h, nil
}

// Close shuts the server down and closes the runtime.
func (h *Harness) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err := h.server.Shutdown(ctx)
	if errors.Is(err, context.DeadlineExceeded) {
		err = h.server.Close()
	}
	return errors.Join(err, h.Runtime.Close())
}

func (h *Harness) seed(ctx context.Context, o Options) error {
	// The registry first: a campaign may only be triggered by an event type it knows
	// (campaign.Admin.KnownTriggers).
	if o.Registry != "" {
		raw, err := os.ReadFile(o.Registry)
		if err != nil {
			return err
		}
		if raw, err = pushEvents(raw, o.PushEvents); err != nil {
			return fmt.Errorf("registry %s: %w", o.Registry, err)
		}
		res, err := h.Do(ctx, http.MethodPost, registryapi.Prefix+"/import", "application/json", raw, map[string]string{httpapi.HeaderOperator: "acceptance"})
		if err != nil {
			return err
		}
		if res.Status != http.StatusOK {
			return fmt.Errorf("registry import answered %d: %s", res.Status, res.Body)
		}
	}
	if o.Scenario != "" {
		sc, err := replay.ParseFile(o.Scenario)
		if err != nil {
			return err
		}
		rt := h.Runtime
		for _, bu := range sc.BusinessUnits {
			if err := rt.Store.BusinessUnitUpsert(ctx, store.BusinessUnit{ID: bu.ID, Name: bu.Name, TimeZoneID: bu.TimeZone}); err != nil {
				return err
			}
		}
		for _, set := range sc.Settings() {
			if slices.Contains(o.PushReminders, set.Guid) {
				set.Channels = slices.Clone(set.Channels)
				for i, ch := range set.Channels {
					if ch == inbox.ChannelName {
						set.Channels[i] = channel.PushChannelName
					}
				}
			}
			rec, err := reminder.SettingRecord(set, 1, h.Clock.Now())
			if err != nil {
				return err
			}
			if err := rt.Store.ReminderSettingUpsert(ctx, rec); err != nil {
				return err
			}
		}
		for _, t := range sc.ParsedTemplates() {
			if _, err := rt.Templates.Save(ctx, store.NotificationTemplate{Key: t.Key, BusinessUnitID: t.BusinessUnitID, Subject: t.Subject,
				Text: t.Text, HTML: t.HTML, CreatedBy: "acceptance:" + filepath.Base(o.Scenario)}, nil); err != nil {
				return fmt.Errorf("template %q: %w", t.Key, err)
			}
		}
		for i, in := range sc.Inputs {
			if len(in.Campaign) > 0 {
				raw, err := pushActions(in.Campaign, o.PushActions)
				if err != nil {
					return fmt.Errorf("inputs[%d].campaign: %w", i, err)
				}
				if err := h.putCampaign(ctx, raw); err != nil {
					return fmt.Errorf("inputs[%d].campaign: %w", i, err)
				}
			}
		}
	}
	return nil
}

// pushActions rewrites the actions of campaign raw named in push ("campaignId/actionKey")
// as NOTIFICATION_PUSH actions of the "push" provider, their other members kept.
func pushActions(raw json.RawMessage, push []string) (json.RawMessage, error) {
	if len(push) == 0 {
		return raw, nil
	}
	var c struct {
		CampaignID string           `json:"campaignId"`
		Actions    []map[string]any `json:"actions"`
	}
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, err
	}
	changed := false
	for _, a := range c.Actions {
		if slices.Contains(push, c.CampaignID+"/"+fmt.Sprint(a["key"])) {
			a["type"], a["provider"], changed = "NOTIFICATION_PUSH", "push", true
		}
	}
	if !changed {
		return raw, nil
	}
	var body map[string]any
	if err := json.Unmarshal(raw, &body); err != nil {
		return nil, err
	}
	body["actions"] = c.Actions
	return json.Marshal(body)
}

// pushEvents adds the "push" channel to the notification of each event type of registry
// file raw named in types; every other member is kept. An event type named but not in the
// file, or without a notification, is an error (a renamed type must not silently stop
// pushing).
func pushEvents(raw []byte, types []string) ([]byte, error) {
	if len(types) == 0 {
		return raw, nil
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, err
	}
	defs, _ := doc["events"].([]any)
	done := map[string]bool{}
	for _, d := range defs {
		def, _ := d.(map[string]any)
		typ, _ := def["eventType"].(string)
		if !slices.Contains(types, typ) {
			continue
		}
		n, _ := def["notification"].(map[string]any)
		chans, _ := n["channels"].([]any)
		if n == nil {
			return nil, fmt.Errorf("event type %s has no notification to push", typ)
		}
		if !slices.Contains(chans, any(channel.PushChannelName)) {
			n["channels"] = append(chans, channel.PushChannelName)
		}
		done[typ] = true
	}
	for _, typ := range types {
		if !done[typ] {
			return nil, fmt.Errorf("event type %s is not in the registry", typ)
		}
	}
	return json.Marshal(doc)
}

// putCampaign saves a scenario's campaign ({"campaignId": …, definition}) through PUT
// /api/campaigns/{campaignId}, as an operator creating it.
func (h *Harness) putCampaign(ctx context.Context, raw json.RawMessage) error {
	var body map[string]json.RawMessage
	if err := json.Unmarshal(raw, &body); err != nil {
		return err
	}
	var id string
	if err := json.Unmarshal(body["campaignId"], &id); err != nil || id == "" {
		return fmt.Errorf("a campaign needs a campaignId")
	}
	delete(body, "campaignId")
	b, _ := json.Marshal(body)
	res, err := h.Do(ctx, http.MethodPut, campaignapi.Prefix+"/"+url.PathEscape(id), "application/json", b, map[string]string{httpapi.HeaderOperator: "acceptance"})
	if err != nil {
		return err
	}
	if res.Status != http.StatusCreated && res.Status != http.StatusOK {
		return fmt.Errorf("campaign %s answered %d: %s", id, res.Status, res.Body)
	}
	return nil
}

// Attributes reads an entity's attributes over GET /api/attributes/{entityType}/{entityId}
// at the clock's instant: attribute code → value as the API shows it (a json.Number, a
// bool, an instant as text, a list as []any). Errors: a transport error or an answer
// other than 200.
func (h *Harness) Attributes(ctx context.Context, businessUnitID, entityType, entityID string) (map[string]any, error) {
	var page struct {
		Attributes []struct {
			Code  string `json:"attribute"`
			Value any    `json:"value"`
		} `json:"attributes"`
	}
	if err := h.getJSON(ctx, "/api/attributes/"+url.PathEscape(entityType)+"/"+url.PathEscape(entityID)+"?businessUnitId="+url.QueryEscape(businessUnitID),
		"attributes "+entityType+"/"+entityID, &page); err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, a := range page.Attributes {
		out[a.Code] = a.Value
	}
	return out, nil
}

// Top reads the top n entities of a type by a number attribute over GET
// /api/attributes/{entityType}?attribute=…&top=n, as "entityId=value" highest first.
func (h *Harness) Top(ctx context.Context, businessUnitID, entityType, attributeCode string, n int) ([]string, error) {
	var page struct {
		Items []struct {
			EntityID string      `json:"entityId"`
			Value    json.Number `json:"value"`
		} `json:"items"`
	}
	if err := h.getJSON(ctx, fmt.Sprintf("/api/attributes/%s?businessUnitId=%s&attribute=%s&top=%d", url.PathEscape(entityType),
		url.QueryEscape(businessUnitID), url.QueryEscape(attributeCode), n), "top "+entityType+" by "+attributeCode, &page); err != nil {
		return nil, err
	}
	var out []string
	for _, it := range page.Items {
		out = append(out, it.EntityID+"="+it.Value.String())
	}
	return out, nil
}

// getJSON GETs path and decodes its 200 answer into page (numbers as json.Number where page
// leaves the type open). Errors: a transport error, "<what>: <status> <body>" for an answer
// other than 200, or a body that does not decode.
func (h *Harness) getJSON(ctx context.Context, path, what string, page any) error {
	res, err := h.Do(ctx, http.MethodGet, path, "", nil, nil)
	if err != nil {
		return err
	}
	if res.Status != http.StatusOK {
		return fmt.Errorf("%s: %d %s", what, res.Status, res.Body)
	}
	dec := json.NewDecoder(bytes.NewReader(res.Body))
	dec.UseNumber()
	return dec.Decode(page)
}

// observe wraps a topic's consumer: next (when there is one) handles the message first and
// its error goes back to the bus (redelivery, dead letter) with nothing recorded; once the
// message is acknowledged, it is recorded.
func (h *Harness) observe(next bus.Handler) bus.Handler {
	return func(ctx context.Context, m bus.Message) error {
		if next != nil {
			if err := next(ctx, m); err != nil {
				return err
			}
		}
		h.record(m)
		return nil
	}
}

// observeBatch is observe for a batch consumer (TrackingProcessor on tracking): the batch's
// messages are recorded, in order, once the consumer acknowledged the batch.
func (h *Harness) observeBatch(next bus.BatchHandler) bus.BatchHandler {
	return func(ctx context.Context, ms []bus.Message) error {
		if err := next(ctx, ms); err != nil {
			return err
		}
		for _, m := range ms {
			h.record(m)
		}
		return nil
	}
}

func (h *Harness) record(m bus.Message) {
	rec := Message{Topic: m.Destination, ID: m.ID, SessionID: m.SessionID, Body: append([]byte(nil), m.Body...)}
	var head struct {
		EventID     string `json:"event_id"`
		SourceEvent string `json:"source_event"`
		EventName   string `json:"event_name"`
	}
	_ = json.Unmarshal(m.Body, &head)
	rec.EventID = head.EventID
	switch {
	case head.SourceEvent != "":
		_ = json.Unmarshal(m.Body, &rec.Payload)
	case head.EventName != "":
		var t attribute.TriggerEvent
		if json.Unmarshal(m.Body, &t) == nil {
			rec.Trigger = &t
		}
	}
	record(h, &h.messages, rec)
}

// Messages returns what the observed topics' consumers acknowledged, in order.
func (h *Harness) Messages() []Message { return snapshot(h, &h.messages) }

func (h *Harness) onRouted(r gateway.Routed) { record(h, &h.routed, r) }

func (h *Harness) onOutcome(o delivery.Outcome) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if o.Status != store.NotificationSent {
		h.failures = append(h.failures, o)
		return
	}
	d := Delivery{At: o.At.UTC(), SchedulerKey: o.Job.SchedulerKey, BusinessUnitID: o.Job.BusinessUnitID, Channel: o.Job.Channel,
		Recipient: o.Job.Recipient, Template: o.Job.Template}
	if o.Content != nil {
		d.Subject, d.Text = o.Content.Subject, o.Content.Text
	}
	h.deliveries = append(h.deliveries, d)
}

func (h *Harness) onAction(c store.CampaignCommand) { record(h, &h.actions, c) }

func (h *Harness) onRefused(eventID string, err error) {
	record(h, &h.refused, eventID+": "+err.Error())
}

// Actions returns every campaign command outcome the worker recorded, in order.
func (h *Harness) Actions() []store.CampaignCommand { return snapshot(h, &h.actions) }

// Problems returns what went wrong inside the product without an HTTP answer to show it:
// tracking messages the attribute engine refused ("{eventId}: {reason}") and messages the
// in-process bus dead-lettered ("dead-letter {destination} {id}: {reason}").
func (h *Harness) Problems() []string {
	out := snapshot(h, &h.refused)
	for _, d := range h.Runtime.Memory.DeadLetters() {
		out = append(out, fmt.Sprintf("dead-letter %s %s: %s", d.Message.Destination, d.Message.ID, d.Reason))
	}
	return out
}

// Routed returns every gateway message published so far, in publication order.
func (h *Harness) Routed() []gateway.Routed { return snapshot(h, &h.routed) }

// Deliveries returns every delivery sent so far, in order.
func (h *Harness) Deliveries() []Delivery { return snapshot(h, &h.deliveries) }

// Failures returns every delivery outcome that was not "sent" (retry, unknown, failed).
func (h *Harness) Failures() []delivery.Outcome { return snapshot(h, &h.failures) }

// record appends v to *list under h.mu (the consumers' callbacks run concurrently).
func record[T any](h *Harness, list *[]T, v T) {
	h.mu.Lock()
	defer h.mu.Unlock()
	*list = append(*list, v)
}

// snapshot is a copy of *list taken under h.mu: the caller may keep it while the run goes on.
func snapshot[T any](h *Harness, list *[]T) []T {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]T(nil), *list...)
}

// Response is an HTTP answer.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Do sends one request to the server.
func (h *Harness) Do(ctx context.Context, method, path, contentType string, body []byte, header map[string]string) (Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, h.URL+path, bytes.NewReader(body))
	if err != nil {
		return Response{}, err
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := h.client.Do(req)
	if err != nil {
		return Response{}, err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	return Response{Status: res.StatusCode, Header: res.Header, Body: b}, err
}

// IngestResult is the answer of POST /api/events for a batch.
type IngestResult struct {
	Status   int
	Replayed bool // Idempotent-Replayed: the stored answer of the same Idempotency-Key
	Results  []gateway.Result
}

// Ingest posts events as one batch (application/cloudevents-batch+json) to POST
// /api/events, with Idempotency-Key when idempotencyKey is set, and then runs the pipeline
// at the current instant (the relay publishes what was accepted, the bus delivers it).
func (h *Harness) Ingest(ctx context.Context, idempotencyKey string, events ...json.RawMessage) (IngestResult, error) {
	body, err := json.Marshal(events)
	if err != nil {
		return IngestResult{}, err
	}
	var hdr map[string]string
	if idempotencyKey != "" {
		hdr = map[string]string{httpapi.HeaderIdempotencyKey: idempotencyKey}
	}
	res, err := h.Do(ctx, http.MethodPost, eventsapi.Path, "application/cloudevents-batch+json", body, hdr)
	if err != nil {
		return IngestResult{}, err
	}
	out := IngestResult{Status: res.Status, Replayed: res.Header.Get(httpapi.HeaderIdempotentReplayed) == "true"}
	if res.Status == http.StatusOK {
		var r eventsapi.Response
		if err := json.Unmarshal(res.Body, &r); err != nil {
			return out, fmt.Errorf("ingest answer: %w: %s", err, res.Body)
		}
		out.Results = r.Results
	}
	if _, err := h.Runtime.Tick(ctx); err != nil {
		return out, err
	}
	return out, nil
}

// Advance moves the clock to t, running the pipeline (Runtime.Tick) at every instant at
// which a scheduler row or a delivery is due on the way, and at t. Errors: t before now, a
// tick that failed, or work that stays due after maxAdvanceSteps ticks.
func (h *Harness) Advance(ctx context.Context, t time.Time) error {
	now := h.Clock.Now()
	if t.Before(now) {
		return fmt.Errorf("acceptance: Advance to %s is before now %s", t.Format(time.RFC3339), now.Format(time.RFC3339))
	}
	for i := 0; i < maxAdvanceSteps; i++ {
		wake, err := h.nextWake(ctx)
		if err != nil {
			return err
		}
		if wake == nil || wake.After(t) {
			h.Clock.Set(t)
			_, err := h.Runtime.Tick(ctx)
			return err
		}
		at := *wake
		if !at.After(now) {
			// Work due now that one tick did not take (held back by a lease, say): look again a second later.
			at = now.Add(time.Second)
			if at.After(t) {
				h.Clock.Set(t)
				_, err := h.Runtime.Tick(ctx)
				return err
			}
		}
		now = at
		h.Clock.Set(now)
		if _, err := h.Runtime.Tick(ctx); err != nil {
			return err
		}
	}
	return fmt.Errorf("acceptance: work still due after %d ticks", maxAdvanceSteps)
}

// maxAdvanceSteps bounds the ticks of one Advance.
const maxAdvanceSteps = 100_000

func (h *Harness) nextWake(ctx context.Context) (*time.Time, error) {
	wake, err := h.Runtime.Store.SchedulerNextWakeUp(ctx)
	if err != nil {
		return nil, err
	}
	dw, err := h.Runtime.Store.NotificationNextWakeUp(ctx)
	if err != nil {
		return nil, err
	}
	if dw != nil && (wake == nil || dw.Before(*wake)) {
		wake = dw
	}
	return wake, nil
}

// RoutedCounts counts the routed messages by "topic/eventId".
func RoutedCounts(rs []gateway.Routed) map[string]int {
	out := map[string]int{}
	for _, r := range rs {
		out[r.Topic+"/"+r.EventID]++
	}
	return out
}
