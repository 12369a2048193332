package replay

// Delivery inputs of a scenario (issue 5): templates seeded at start, channel faults as
// timed inputs, and the replay's channels - the real log channel writing delivery lines, and
// the real webhook channel posting through an in-memory transport to a receiver that
// verifies the signature, deduplicates by Idempotency-Key and records what it received
// (no network).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptrace"
	"sort"
	"sync"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/acssim"
	"github.com/automation-platform/automation/shared/delivery/channel"
	"github.com/automation-platform/automation/shared/funchost"
	"github.com/automation-platform/automation/shared/gateway"
	"github.com/automation-platform/automation/shared/inbox"
	"github.com/automation-platform/automation/shared/reminder"
	"github.com/automation-platform/automation/shared/store"
)

// Template is a scenario template (seeded as version 1 before the run, by "scenario").
type Template struct {
	Key            string `json:"key"`
	BusinessUnitID string `json:"businessUnitId,omitempty"` // "" = the default for every unit
	Subject        string `json:"subject"`
	Text           string `json:"text,omitempty"`
	HTML           string `json:"html,omitempty"`
}

// ChannelFault makes a channel fail from the input's at until Until (exclusive).
type ChannelFault struct {
	Channel string    `json:"channel"` // "log", "webhook" or "sms"
	Mode    string    `json:"mode"`    // "fail": nothing arrives; "timeout": it arrives, the answer is lost; "lost": the request left, nothing arrives, no answer
	Until   time.Time `json:"until"`
}

// Fault modes.
const (
	FaultFail    = "fail"
	FaultTimeout = "timeout"
	// FaultLost: the request left but never arrived and no answer came (a timeout with the
	// effect not applied): the sender cannot tell it from FaultTimeout.
	FaultLost = "lost"
)

// parseTemplates validates the scenario's templates (each must compile) and returns them.
func parseTemplates(raws []json.RawMessage, buIDs map[string]bool, bad func(string, ...any)) []Template {
	var out []Template
	seen := map[string]bool{}
	for i, raw := range raws {
		var t Template
		if err := strictDecode(raw, &t); err != nil {
			bad("templates[%d]: %v", i, err)
			continue
		}
		if t.BusinessUnitID != "" && !buIDs[t.BusinessUnitID] {
			bad("templates[%d].businessUnitId: unknown business unit %q", i, t.BusinessUnitID)
		}
		id := t.Key + "\x00" + t.BusinessUnitID
		if seen[id] {
			bad("templates[%d]: key %q for business unit %q is a duplicate", i, t.Key, t.BusinessUnitID)
		}
		seen[id] = true
		if _, err := delivery.Compile(store.NotificationTemplate{Key: t.Key, BusinessUnitID: t.BusinessUnitID, Subject: t.Subject, Text: t.Text, HTML: t.HTML}); err != nil {
			for _, e := range unjoin(err) {
				var ae *automation.Error
				if errors.As(e, &ae) && ae.Field != "" {
					bad("templates[%d].%s: %s", i, ae.Field, ae.Message)
				} else {
					bad("templates[%d]: %v", i, e)
				}
			}
			continue
		}
		out = append(out, t)
	}
	return out
}

// parseFault validates one channelFault input.
func parseFault(i int, raw json.RawMessage, at time.Time, bad func(string, ...any)) *ChannelFault {
	var f struct {
		Channel string `json:"channel"`
		Mode    string `json:"mode"`
		Until   string `json:"until"`
	}
	if err := strictDecode(raw, &f); err != nil {
		bad("inputs[%d].channelFault: %v", i, err)
		return nil
	}
	var out ChannelFault
	ok := true
	if !Channels[f.Channel] {
		bad("inputs[%d].channelFault.channel: unknown channel %q (log, webhook or sms)", i, f.Channel)
		ok = false
	}
	if f.Mode != FaultFail && f.Mode != FaultTimeout && f.Mode != FaultLost {
		bad("inputs[%d].channelFault.mode must be %q, %q or %q, got %q", i, FaultFail, FaultTimeout, FaultLost, f.Mode)
		ok = false
	}
	until, err := time.Parse(time.RFC3339, f.Until)
	if err != nil {
		bad("inputs[%d].channelFault.until %q is not RFC 3339", i, f.Until)
		ok = false
	} else if !at.IsZero() && !until.After(at) {
		bad("inputs[%d].channelFault.until must be after at", i)
		ok = false
	}
	if !ok {
		return nil
	}
	out.Channel, out.Mode, out.Until = f.Channel, f.Mode, until.UTC()
	return &out
}

// FaultLine is a "fault" output line: a channel fault input took effect.
type FaultLine struct {
	Kind    string `json:"kind"` // "fault"
	At      string `json:"at"`
	Input   int    `json:"input"`
	Channel string `json:"channel"`
	Mode    string `json:"mode"`
	Until   string `json:"until"`
}

// OutcomeLine is a "retry", "unknown" or "failed" output line (a delivery attempt that did
// not end as sent; resolution says what happens next: retry, lookup, manual, hold), or a
// "sent" line when an attempt after the first was acknowledged (a webhook retried with the
// same Idempotency-Key is delivered once: its delivery line came with the first attempt).
type OutcomeLine struct {
	Kind          string `json:"kind"`
	At            string `json:"at"`
	SchedulerKey  string `json:"schedulerKey"`
	Channel       string `json:"channel"`
	Recipient     string `json:"recipient"`
	Attempt       int    `json:"attempt"`
	Resolution    string `json:"resolution,omitempty"`
	NextAttemptOn string `json:"nextAttemptOn,omitempty"`
	Error         string `json:"error"`
}

// faults is the set of active channel faults, by channel.
type faults struct {
	mu    sync.Mutex
	clock automation.Clock
	by    map[string]ChannelFault
}

func (f *faults) set(cf ChannelFault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.by == nil {
		f.by = map[string]ChannelFault{}
	}
	f.by[cf.Channel] = cf
}

// active returns the fault mode of channel now ("" = none).
func (f *faults) active(channel string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	cf, ok := f.by[channel]
	if !ok || !f.clock.Now().Before(cf.Until) {
		return ""
	}
	return cf.Mode
}

// errSimulatedTimeout is what a "timeout" fault produces after the provider got the message.
var errSimulatedTimeout = errors.New("simulated timeout: no answer after the message was handed over")

// faultyLog wraps the real log channel with the log faults.
type faultyLog struct {
	*delivery.LogChannel
	f *faults
}

func (c faultyLog) Send(ctx context.Context, m delivery.Message) (string, error) {
	switch c.f.active("log") {
	case FaultFail:
		return "", errors.New("simulated failure: the log sink refused the line")
	case FaultTimeout:
		if _, err := c.LogChannel.Send(ctx, m); err != nil {
			return "", err
		}
		return "", automation.Unknown(errSimulatedTimeout)
	case FaultLost:
		return "", automation.Unknown(errSimulatedTimeout)
	}
	return c.LogChannel.Send(ctx, m)
}

// replaySecret signs the replay's webhook requests (the in-memory receiver verifies them).
var replaySecret = []byte("replay-webhook-signing-secret")

// WebhookReceipt is what the replay's webhook receiver recorded for one Idempotency-Key:
// the delivery key of the first body that carried it, how many requests with the key
// arrived (a resend after a lost answer carries the same key) and how many of them it
// applied (at most 1: the receiver applies a key once, as an idempotent receiver does).
type WebhookReceipt struct {
	IdempotencyKey string
	DeliveryKey    string
	Requests       int
	Applied        int
}

// WebhookObserver is implemented by a Driver that checks the receiver's side of the
// replay's webhook (the simulator's webhook invariant): before the first process starts it
// gets a function that returns the receipts so far, sorted by Idempotency-Key.
type WebhookObserver interface {
	Webhooks(receipts func() []WebhookReceipt)
}

// webhookReceiver is the far side of the replay's webhook. It verifies the signature and
// accepts a well-formed delivery (a signed JSON body with a deliveryKey, and an
// Idempotency-Key header); it deduplicates by the Idempotency-Key header alone, as a real
// receiver does (it cannot know that two keys name one delivery), writes one delivery line
// per key it applies, and records every request that arrived (WebhookReceipt). It lives as
// long as the run: a process restart on the sending side does not reset it.
type webhookReceiver struct {
	r *runner
	f *faults

	mu       sync.Mutex
	receipts map[string]*WebhookReceipt // by Idempotency-Key
}

// Receipts returns the receipts so far, sorted by Idempotency-Key.
func (w *webhookReceiver) Receipts() []WebhookReceipt {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]WebhookReceipt, 0, len(w.receipts))
	for _, rc := range w.receipts {
		out = append(out, *rc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].IdempotencyKey < out[j].IdempotencyKey })
	return out
}

// RoundTrip implements http.RoundTripper: the request never leaves the process. It reports
// WroteRequest to the client trace as a real transport does, so the channel classifies a
// timeout after the request the way it would on the network.
func (w *webhookReceiver) RoundTrip(req *http.Request) (*http.Response, error) {
	mode, body, err := w.f.send("webhook", req)
	if err != nil {
		return nil, err
	}
	answer := func(code int, msg string) *http.Response {
		return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
			Header: http.Header{"Content-Type": {"text/plain"}}, Body: io.NopCloser(bytes.NewReader([]byte(msg))), Request: req}
	}
	if !channel.Verify(replaySecret, req.Header.Get(channel.TimestampHeader), req.Header.Get(channel.SignatureHeader), body) {
		return answer(http.StatusUnauthorized, "bad signature"), nil
	}
	var b channel.WebhookBody
	if err := json.Unmarshal(body, &b); err != nil || b.DeliveryKey == "" {
		return answer(http.StatusBadRequest, "body is not a delivery"), nil
	}
	key := req.Header.Get(channel.IdempotencyHeader)
	if key == "" {
		return answer(http.StatusBadRequest, "Idempotency-Key header is required"), nil
	}
	w.mu.Lock()
	rc := w.receipts[key]
	if rc == nil {
		rc = &WebhookReceipt{IdempotencyKey: key, DeliveryKey: b.DeliveryKey}
		w.receipts[key] = rc
	}
	rc.Requests++
	apply := rc.Applied == 0
	if apply {
		rc.Applied++
	}
	w.mu.Unlock()
	if apply {
		var p reminder.Payload
		_ = json.Unmarshal(b.Payload, &p)
		if err := w.r.writeDelivery(delivery.Message{DeliveryKey: b.DeliveryKey, SchedulerKey: b.SchedulerKey, BusinessUnitID: b.BusinessUnitID,
			Channel: "webhook", Recipient: req.URL.String(), Template: b.Template, PayloadJSON: string(b.Payload), SentOn: b.SentOn,
			Content: &delivery.Content{Subject: b.Subject, Text: b.Text, HTML: b.HTML}}); err != nil {
			return nil, err
		}
	}
	if mode == FaultTimeout {
		return nil, errSimulatedTimeout
	}
	return answer(http.StatusOK, "ok"), nil
}

// send is the client's side of an in-process request on channel ch's faults: fail (refused
// before the request is written), lost (written, never arriving: a timeout to the caller).
// Otherwise it reads the request's body, reports WroteRequest to the client trace as a real
// transport does (so the channel classifies a later timeout as after the request), and
// returns the active mode for the receiving side (FaultTimeout: taken, the answer lost).
func (f *faults) send(ch string, req *http.Request) (string, []byte, error) {
	mode := f.active(ch)
	if mode == FaultFail {
		return mode, nil, errors.New("simulated failure: connection refused")
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		return mode, nil, err
	}
	if tr := httptrace.ContextClientTrace(req.Context()); tr != nil && tr.WroteRequest != nil {
		tr.WroteRequest(httptrace.WroteRequestInfo{})
	}
	if mode == FaultLost {
		return mode, nil, errSimulatedTimeout
	}
	return mode, body, nil
}

// SMSObserver is implemented by a Driver that checks the simulated ACS's side of the
// replay's sms channel: before the first process starts it gets a function that returns
// every SMS request that reached ACS so far (repeats included; Sent marks the one that sent).
type SMSObserver interface {
	SMS(requests func() []acssim.Request)
}

// smsHost is the replay's ACS resource host (never dialled: smsTransport serves it).
const smsHost = "acs.replay.invalid"

// smsTransport carries the sms channel's requests to the simulated ACS in the process,
// with the "sms" channel faults: fail (refused before the request is written), lost (the
// request is written and never arrives) and timeout (ACS takes it, the answer is lost).
type smsTransport struct {
	f   *faults
	acs *acssim.Server
}

// RoundTrip implements http.RoundTripper.
func (t smsTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	mode, body, err := t.f.send("sms", req)
	if err != nil {
		return nil, err
	}
	in := req.Clone(req.Context())
	in.Body = io.NopCloser(bytes.NewReader(body))
	in.Host = req.URL.Host
	in.RequestURI = req.URL.RequestURI()
	rec := &funchost.Reply{} // the smallest http.ResponseWriter (no httptest outside tests)
	t.acs.Handler().ServeHTTP(rec, in)
	if mode == FaultTimeout {
		return nil, errSimulatedTimeout
	}
	code := rec.Status()
	return &http.Response{StatusCode: code, Status: fmt.Sprintf("%d %s", code, http.StatusText(code)), Proto: "HTTP/1.1", ProtoMajor: 1,
		ProtoMinor: 1, Header: rec.Header(), Body: io.NopCloser(bytes.NewReader(rec.Body())), Request: req}, nil
}

// channels builds the replay's channels on the runner's output.
func (r *runner) channels() (map[string]delivery.Channel, error) {
	r.faults = &faults{clock: r.clock}
	logCh := faultyLog{LogChannel: &delivery.LogChannel{W: lineWriter{r}, Line: r.deliveryLine}, f: r.faults}
	r.webhook = &webhookReceiver{r: r, f: r.faults, receipts: map[string]*WebhookReceipt{}}
	wh, err := channel.NewWebhook(channel.WebhookConfig{Secret: replaySecret, Idempotent: true, Clock: r.clock,
		Client: &http.Client{Transport: r.webhook}})
	if err != nil {
		return nil, err
	}
	acs, err := acssim.New(acssim.Config{Clock: r.clock})
	if err != nil {
		return nil, err
	}
	r.acs = acs
	sms, err := channel.NewSMS(channel.SMSConfig{ConnectionString: acs.ConnectionString("https://" + smsHost), From: "+18005550100",
		Clock: r.clock, Client: &http.Client{Transport: smsTransport{f: r.faults, acs: acs}}})
	if err != nil {
		return nil, err
	}
	return map[string]delivery.Channel{"log": logCh, "webhook": wh, channel.SMSChannelName: sms}, nil
}

// lineWriter counts the delivery lines the log channel writes to the replay output.
type lineWriter struct{ r *runner }

func (w lineWriter) Write(p []byte) (int, error) {
	w.r.deliveries++
	return w.r.out.Write(p)
}

// deliveryLine is the log channel's line format in a replay: the "delivery" line, with the
// rendered subject and text when the template exists.
func (r *runner) deliveryLine(m delivery.Message) any {
	var p reminder.Payload
	_ = json.Unmarshal([]byte(m.PayloadJSON), &p)
	l := DeliveryLine{Kind: "delivery", At: m.SentOn.UTC().Format(time.RFC3339), SchedulerKey: m.SchedulerKey,
		BusinessUnitID: m.BusinessUnitID, ScheduledOn: p.ScheduledOn, LocalTime: p.LocalTime, Channel: m.Channel,
		Recipient: m.Recipient, Template: m.Template}
	if m.Content != nil {
		l.Subject, l.Text = m.Content.Subject, m.Content.Text
	}
	return l
}

// writeDelivery writes the delivery line of m (the webhook receiver's side).
func (r *runner) writeDelivery(m delivery.Message) error {
	r.deliveries++
	return r.enc.Encode(r.deliveryLine(m))
}

// outcome writes the line of a dispatch outcome that is not "sent".
func (r *runner) outcome(o delivery.Outcome) {
	kind := ""
	switch o.Status {
	case store.NotificationQueued:
		kind = "retry"
	case store.NotificationUnknown:
		kind, r.unknown = "unknown", r.unknown+1
	case store.NotificationFailed:
		kind, r.failed = "failed", r.failed+1
	case store.NotificationSkipped:
		kind = "skipped" // the recipient opted out: error says which preference
	case store.NotificationSent:
		if o.Job.Channel == inbox.ChannelName || o.Job.Channel == gateway.EventChannelName || o.Job.Channel == channel.SMSChannelName {
			// The product's own channels (the in-app inbox, the event channel into the
			// gateway) and the sms channel (the simulated ACS knows the text, not the
			// occurrence) have no replay stand-in that writes lines: their delivery line is
			// written from the outcome, once per sent delivery.
			r.deliveries++
			m := delivery.Message{DeliveryKey: o.Job.DeliveryKey, SchedulerKey: o.Job.SchedulerKey, BusinessUnitID: o.Job.BusinessUnitID,
				Channel: o.Job.Channel, Recipient: o.Job.Recipient, Template: o.Job.Template, PayloadJSON: o.Job.PayloadJSON, Content: o.Content, SentOn: o.At}
			if err := r.enc.Encode(r.deliveryLine(m)); err != nil && r.err == nil {
				r.err = err
			}
		}
		if o.Job.AttemptCount < 2 {
			return // the delivery line says it all
		}
		kind = "sent" // after a retry or a take-over: acknowledged on this attempt
	default:
		return
	}
	l := OutcomeLine{Kind: kind, At: o.At.UTC().Format(time.RFC3339), SchedulerKey: o.Job.SchedulerKey, Channel: o.Job.Channel,
		Recipient: o.Job.Recipient, Attempt: o.Job.AttemptCount, Resolution: string(o.Resolution), Error: o.Error}
	if o.NextAttemptOn != nil {
		l.NextAttemptOn = o.NextAttemptOn.UTC().Format(time.RFC3339)
	}
	if err := r.enc.Encode(l); err != nil && r.err == nil {
		r.err = err
	}
}

// seedTemplates stores the scenario's templates as version 1.
func (r *runner) seedTemplates(ctx context.Context) error {
	for _, t := range r.sc.templates {
		if _, err := r.e.Templates.Save(ctx, store.NotificationTemplate{Key: t.Key, BusinessUnitID: t.BusinessUnitID, Subject: t.Subject,
			Text: t.Text, HTML: t.HTML, CreatedBy: "scenario"}, nil); err != nil {
			return fmt.Errorf("scenario template %q: %w", t.Key, err)
		}
	}
	return nil
}

// ParsedTemplates returns the scenario's validated templates (serve -seed stores them).
func (sc *Scenario) ParsedTemplates() []Template { return sc.templates }
