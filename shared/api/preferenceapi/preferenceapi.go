package preferenceapi

import (
	"context"
	_ "embed" // openapi.yaml
	"encoding/json"
	"fmt"
	"html"
	"net/http"
	"strings"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/businessunit"
	"github.com/automation-platform/automation/shared/delivery/channel"
	"github.com/automation-platform/automation/shared/httpapi"
	"github.com/automation-platform/automation/shared/preference"
)

//go:embed openapi.yaml
var openAPI []byte

// OpenAPI returns the OpenAPI 3.1 document of these routes (YAML); a test checks it against
// the router in both directions and validates real calls with it.
func OpenAPI() []byte { return append([]byte(nil), openAPI...) }

// Route patterns (the PreferencesApi function's route preferences/{*path}; the Unsubscribe
// function's route unsubscribe).
const (
	PathRecipient   = "/api/preferences/recipients/{recipientId}"
	PathQuietHours  = "/api/preferences/quiet-hours"
	PathSMSInbound  = "/api/preferences/sms-inbound"
	PathUnsubscribe = "/api/unsubscribe"
)

// MaxInboundEvents bounds the Event Grid events one inbound request carries (Event Grid's
// maxEventsPerBatch is at most 5,000; the subscription should use a small batch).
const MaxInboundEvents = 100

// Deps are what the routes use.
type Deps struct {
	Service *preference.Service
	// Units, when set, is where a business unit is looked up: one that does not exist
	// answers 404 (as one outside the caller's scope). nil: not checked.
	Units businessunit.Reader
	// Charge, when set, counts the inbound webhook's Event Grid events against its
	// credential's ingest quota (quota.Quotas.ChargeIngest: the API key the event
	// subscription sends, the same bucket as its POST /api/events) once decoded and before
	// anything is written; its error (429 with Retry-After, which Event Grid retries later)
	// refuses the whole delivery.
	Charge func(ctx context.Context, events int) error
}

// Register adds the preference routes to reg (through api: bearer, scope, problems) and
// the one-click unsubscribe route, which carries its own credential (the signed token) and
// is served without api's guard.
func Register(reg httpapi.Registrar, api *httpapi.API, d Deps) {
	httpapi.Mount(reg, api, Routes(d)...)
	RegisterUnsubscribe(reg, d)
}

// Routes declares the guarded routes over d (Deps{}: the declarations only, for checks).
func Routes(d Deps) []httpapi.Route {
	h := handlers{d: d}
	return []httpapi.Route{
		httpapi.Endpoint[struct{}, preference.View]{Method: "GET", Path: PathRecipient, Unit: httpapi.UnitQuery, UnitCheck: h.unitStored, Call: h.get},
		httpapi.Endpoint[preference.Change, preference.View]{Method: "PUT", Path: PathRecipient, Unit: httpapi.UnitQuery, UnitCheck: h.unitStored,
			Operator: "preference change", Body: httpapi.BodyRequired, Call: h.put},
		httpapi.Endpoint[struct{}, preference.QuietHoursView]{Method: "GET", Path: PathQuietHours, Unit: httpapi.UnitQuery, UnitCheck: h.unitStored, Call: h.getUnit},
		httpapi.Endpoint[preference.QuietHoursInput, preference.QuietHoursView]{Method: "PUT", Path: PathQuietHours, Unit: httpapi.UnitQuery, UnitCheck: h.unitStored,
			Operator: "quiet-hours change", Body: httpapi.BodyRequired, Call: h.putUnit},
		httpapi.Endpoint[struct{}, struct{}]{Method: "DELETE", Path: PathQuietHours, Unit: httpapi.UnitQuery, UnitCheck: h.unitStored,
			Operator: "quiet-hours removal", Status: http.StatusNoContent, Call: h.deleteUnit},
		httpapi.Raw{Method: "POST", Path: PathSMSInbound, Body: true, Handler: h.smsInbound},
	}
}

type handlers struct{ d Deps }

func (h handlers) unitStored(ctx context.Context, bu string) error {
	return httpapi.UnitStored(ctx, h.d.Units, bu)
}

func (h handlers) get(ctx context.Context, in *httpapi.In[struct{}]) (preference.View, error) {
	return h.d.Service.Get(ctx, in.Unit, in.Request.PathValue("recipientId"))
}

func (h handlers) put(ctx context.Context, in *httpapi.In[preference.Change]) (preference.View, error) {
	return h.d.Service.Set(ctx, in.Unit, in.Request.PathValue("recipientId"), in.Operator, preference.SourceAPI, in.Body)
}

func (h handlers) getUnit(ctx context.Context, in *httpapi.In[struct{}]) (preference.QuietHoursView, error) {
	return h.d.Service.UnitQuietHours(ctx, in.Unit)
}

func (h handlers) putUnit(ctx context.Context, in *httpapi.In[preference.QuietHoursInput]) (preference.QuietHoursView, error) {
	return h.d.Service.SetUnitQuietHours(ctx, in.Unit, in.Operator, in.Body)
}

func (h handlers) deleteUnit(ctx context.Context, in *httpapi.In[struct{}]) (struct{}, error) {
	return struct{}{}, h.d.Service.DeleteUnitQuietHours(ctx, in.Unit, httpapi.CallerFrom(ctx).Operator)
}

// Event Grid event types (Event Grid schema).
const (
	EventSubscriptionValidation = "Microsoft.EventGrid.SubscriptionValidationEvent"
	EventSMSReceived            = "Microsoft.Communication.SMSReceived"
)

// gridEvent is one event of the Event Grid schema; members we do not read are ignored
// (Event Grid may add some).
type gridEvent struct {
	ID        string          `json:"id"`
	EventType string          `json:"eventType"`
	Data      json.RawMessage `json:"data"`
}

// smsReceived is AcsSmsReceivedEventData: from and to are E.164 numbers.
type smsReceived struct {
	MessageID string `json:"messageId"`
	From      string `json:"from"`
	To        string `json:"to"`
	Message   string `json:"message"`
}

// InboundResult is the answer to SMSReceived events.
type InboundResult struct {
	OptedOut int `json:"optedOut"` // STOP messages applied (again: still counted, changes nothing)
	Ignored  int `json:"ignored"`  // other texts, other event types, a sender that is not E.164
}

// OptOutKeywords are the texts that opt a number out of SMS marketing: the industry's
// standard opt-out words (CTIA's list), matched on the whole trimmed text, any case.
var OptOutKeywords = []string{"STOP", "STOPALL", "UNSUBSCRIBE", "CANCEL", "END", "QUIT", "OPTOUT"}

// IsOptOut reports whether an inbound SMS text is an opt-out keyword.
func IsOptOut(text string) bool {
	t := strings.ToUpper(strings.Join(strings.Fields(text), ""))
	for _, k := range OptOutKeywords {
		if t == k {
			return true
		}
	}
	return false
}

// smsInbound serves Event Grid's webhook delivery of ACS's SMSReceived events for one unit.
// It is authenticated like every guarded route: the event subscription sends the API key
// (role ingest) as its Authorization delivery property (docs/channels.md#inbound-stop).
// Every event of a delivery counts against that key's ingest quota (Deps.Charge), all or
// none: a flood of inbound texts slows that webhook alone.
func (h handlers) smsInbound(w http.ResponseWriter, r *http.Request) error {
	bu, err := httpapi.QueryUnit(r, h.unitStored)
	if err != nil {
		return err
	}
	body, err := httpapi.ReadBody(r)
	if err != nil {
		return err
	}
	var events []gridEvent
	if err := json.Unmarshal(body, &events); err != nil {
		return automation.Errorf(automation.CodeMalformed, "the body is not an array of Event Grid events: %v", err)
	}
	if len(events) == 0 || len(events) > MaxInboundEvents {
		return automation.Invalid("events", "want 1..%d events, got %d", MaxInboundEvents, len(events))
	}
	if h.d.Charge != nil {
		if err := h.d.Charge(r.Context(), len(events)); err != nil {
			return err
		}
	}
	for _, ev := range events {
		if ev.EventType == EventSubscriptionValidation {
			var v struct {
				ValidationCode string `json:"validationCode"`
			}
			if json.Unmarshal(ev.Data, &v) != nil || v.ValidationCode == "" {
				return automation.Invalid("data.validationCode", "is required in a subscription validation event")
			}
			httpapi.WriteJSON(w, http.StatusOK, map[string]string{"validationResponse": v.ValidationCode})
			return nil
		}
	}
	// Who made the change is the webhook's credential (its key: "key:acs-inbound"), not the
	// sender: the sender is the subject (the recipient opted out). A caller that names nobody
	// (the bootstrap token without X-Automation-Operator) is recorded as the source.
	by := httpapi.CallerFrom(r.Context()).Operator
	if by == "" {
		by = preference.SourceSMSStop
	}
	var res InboundResult
	for _, ev := range events {
		var d smsReceived
		if ev.EventType != EventSMSReceived || json.Unmarshal(ev.Data, &d) != nil || !IsOptOut(d.Message) || channel.ValidatePhoneNumber(d.From) != nil {
			res.Ignored++
			continue
		}
		if err := h.d.Service.OptOut(r.Context(), bu, d.From, "sms", "", preference.SourceSMSStop, by); err != nil {
			return err // Event Grid retries the batch; the opt-outs already applied are idempotent
		}
		res.OptedOut++
	}
	httpapi.WriteJSON(w, http.StatusOK, res)
	return nil
}

// RegisterUnsubscribe adds GET and POST /api/unsubscribe: the token in the query is the
// only credential. A token that does not verify, or no secret configured, is 404 and
// writes nothing.
func RegisterUnsubscribe(reg httpapi.Registrar, d Deps) {
	reg.RegisterHTTP("GET "+PathUnsubscribe, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { unsubscribe(w, r, d, false) }))
	reg.RegisterHTTP("POST "+PathUnsubscribe, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { unsubscribe(w, r, d, true) }))
}

// maxUnsubscribeBody bounds the one-click POST's form body.
const maxUnsubscribeBody = 4 << 10

func unsubscribe(w http.ResponseWriter, r *http.Request, d Deps, post bool) {
	q := r.URL.Query()
	var u preference.Unsubscribe
	err := automation.Errorf(automation.CodeNotFound, "unknown unsubscribe link")
	if d.Service != nil && len(d.Service.UnsubscribeSecret) > 0 && len(q["token"]) == 1 && len(q) == 1 {
		if pu, perr := preference.ParseUnsubscribeToken(d.Service.UnsubscribeSecret, q.Get("token")); perr == nil {
			u, err = pu, nil
		}
	}
	if err != nil {
		httpapi.WriteError(w, r, nil, err)
		return
	}
	w.Header().Set("Cache-Control", "no-store")
	if !post {
		// A GET (a person's click, or a mail scanner following links) changes nothing:
		// it shows the form whose POST is the one-click request.
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Unsubscribe</title></head><body>`+
			`<form method="post" action="%s"><input type="hidden" name="List-Unsubscribe" value="One-Click">`+
			`<p>Stop %s messages to %s?</p><button type="submit">Unsubscribe</button></form></body></html>`,
			html.EscapeString(PathUnsubscribe+"?"+r.URL.RawQuery), html.EscapeString(categoryText(u)), html.EscapeString(u.RecipientID))
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxUnsubscribeBody)
	if err := r.ParseForm(); err != nil || r.PostForm.Get("List-Unsubscribe") != "One-Click" {
		httpapi.WriteError(w, r, nil, automation.Invalid("List-Unsubscribe", "the body must be the form List-Unsubscribe=One-Click (RFC 8058)"))
		return
	}
	if err := d.Service.OptOut(r.Context(), u.BusinessUnitID, u.RecipientID, u.Channel, u.Category, preference.SourceListUnsubscribe, "recipient"); err != nil {
		httpapi.WriteError(w, r, nil, err)
		return
	}
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	fmt.Fprintf(w, "Unsubscribed: no more %s messages to %s.\n", categoryText(u), u.RecipientID)
}

func categoryText(u preference.Unsubscribe) string {
	if u.Category == "" {
		return "marketing " + u.Channel
	}
	return u.Category + " " + u.Channel
}
