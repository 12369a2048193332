package channel_test

import (
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/acssim"
	"github.com/automation-platform/automation/shared/delivery/channel"
	"github.com/automation-platform/automation/shared/delivery/channeltest"
	"github.com/automation-platform/automation/shared/simhttp/simhttptest"
)

const waChannel = "7c4f1e52-3a6b-4c8d-9e0f-1a2b3c4d5e6f"

func startWhatsApp(t channeltest.TB, timeout time.Duration, clock automation.Clock) (*acssim.Server, *channel.WhatsApp) {
	t.Helper()
	sim := simhttptest.Start(t, acssim.New, acssim.Config{Refused: []string{smsRefused}, Clock: clock, ChannelRegistrationID: waChannel,
		WhatsAppTemplates: map[string]int{"points_earned": 2, "otp_code": 1}})
	ch, err := channel.NewWhatsApp(channel.WhatsAppConfig{ConnectionString: sim.ConnectionString(sim.URL()), ChannelRegistrationID: waChannel,
		Timeout: timeout, Clock: clock})
	if err != nil {
		t.Fatalf("NewWhatsApp: %v", err)
	}
	return sim, ch
}

// waHarness prepares each suite message as the points_earned template with the subject
// and text as its two values, and maps the repeatability id back to the delivery key.
type waHarness struct {
	t    channeltest.TB
	sim  *acssim.Server
	ch   *channel.WhatsApp
	mu   sync.Mutex
	keys map[string]string // repeatability id → delivery key
}

func newWAHarness(t channeltest.TB) *waHarness {
	sim, ch := startWhatsApp(t, 300*time.Millisecond, automation.NewManualClock(time.Date(2026, 10, 1, 9, 0, 30, 0, time.UTC)))
	return &waHarness{t: t, sim: sim, ch: ch, keys: map[string]string{}}
}

func (h *waHarness) Prepare(m delivery.Message) delivery.Message {
	h.mu.Lock()
	h.keys[channel.RepeatabilityRequestID(m.DeliveryKey)] = m.DeliveryKey
	h.mu.Unlock()
	if m.Content != nil {
		c := *m.Content
		c.WhatsApp = &delivery.WhatsAppTemplate{Name: "points_earned", Language: "en_US", Values: []string{c.Subject, c.Text}}
		m.Content = &c
	}
	return m
}

func (h *waHarness) Channel() delivery.Channel { return h.ch }

func (h *waHarness) Capabilities() channeltest.Capabilities {
	return channeltest.Capabilities{IdempotencyKey: "Repeatability-Request-ID header (a UUIDv5 of the delivery key)",
		IdempotencyKeyOf: channel.RepeatabilityRequestID}
}

func (h *waHarness) Recipient(b channeltest.Behaviour) string {
	return acsRecipient(h.t, h.sim, b, "+999123456789")
}

func (h *waHarness) Received() []channeltest.Received {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []channeltest.Received
	for _, r := range h.sim.WhatsAppRequests() {
		rc := channeltest.Received{DeliveryKey: h.keys[r.RequestID], IdempotencyKey: r.RequestID}
		if len(r.Values) == 2 {
			rc.Subject, rc.Text = r.Values[0], r.Values[1]
		}
		out = append(out, rc)
	}
	return out
}

func TestWhatsAppConformance(t *testing.T) {
	t.Parallel()
	channeltest.Run(t, func(t channeltest.TB) channeltest.Harness { return newWAHarness(t) })
}

func waMessage(key string, tpl *delivery.WhatsAppTemplate) delivery.Message {
	now := time.Now().UTC()
	return delivery.Message{DeliveryKey: key, BusinessUnitID: "bu-1", Channel: "whatsapp", Recipient: smsOK, Template: "otp",
		Content: &delivery.Content{WhatsApp: tpl}, SentOn: now, CreatedOn: now.Add(-time.Minute)}
}

// A resend after a lost answer is deduplicated by Repeatability-Request-ID; an unknown
// template, a missing one and a wrong value count are permanent; a first-sent outside the
// window is UNKNOWN.
func TestWhatsAppOutcomes(t *testing.T) {
	t.Parallel()
	sim, ch := startWhatsApp(t, 300*time.Millisecond, automation.SystemClock{})
	otp := &delivery.WhatsAppTemplate{Name: "otp_code", Language: "en", Values: []string{"123456"}}
	if err := sim.SetFaults(acssim.Faults{Mode: acssim.ModeLoseAnswer}); err != nil {
		t.Fatal(err)
	}
	m := waMessage("dlv_wa_1", otp)
	if _, err := ch.Send(t.Context(), m); automation.IntentOf(err) != automation.IntentUnknown {
		t.Fatalf("lost answer: %v", err)
	}
	if err := sim.SetFaults(acssim.Faults{}); err != nil {
		t.Fatal(err)
	}
	ref, err := ch.Send(t.Context(), m)
	if err != nil || ref == "" {
		t.Fatalf("resend: %q %v", ref, err)
	}
	if sent := sim.WhatsAppSent(); len(sent) != 1 || sent[0].MessageID != ref || sent[0].Values[0] != "123456" {
		t.Fatalf("sent %+v, want one message (%s)", sent, ref)
	}
	for name, tpl := range map[string]*delivery.WhatsAppTemplate{
		"unknown template": {Name: "not_approved", Language: "en"},
		"wrong count":      {Name: "points_earned", Language: "en", Values: []string{"1"}},
		"no template":      nil,
		"bad name":         {Name: "Points Earned", Language: "en"},
	} {
		_, err := ch.Send(t.Context(), waMessage("dlv_wa_"+strings.ReplaceAll(name, " ", "_"), tpl))
		if !automation.IsPermanent(err) {
			t.Errorf("%s: %v, want permanent", name, err)
		}
	}
	old := waMessage("dlv_wa_old", otp)
	old.CreatedOn = time.Now().UTC().Add(-25 * time.Hour)
	if _, err := ch.Send(t.Context(), old); automation.IntentOf(err) != automation.IntentUnknown {
		t.Errorf("first-sent outside the window: %v, want UNKNOWN", err)
	}
	if n := len(sim.WhatsAppSent()); n != 1 {
		t.Errorf("sent %d, want 1", n)
	}
}

// NOTIFICATION_WHATSAPP as a campaign action names the approved template and its values.
func TestWhatsAppAsCampaignAction(t *testing.T) {
	t.Parallel()
	sim, ch := startWhatsApp(t, time.Second, automation.SystemClock{})
	p := &campaign.ChannelProvider{Name: channel.WhatsAppChannelName, Channel: ch, Clock: automation.SystemClock{}}
	params := json.RawMessage(`{"whatsappTemplate":"points_earned","language":"vi","values":["Linh","120"],"recipient":"` + smsOK + `"}`)
	cat, err := campaign.NewCatalog(campaign.BuiltinActionTypes(), nil)
	if err != nil {
		t.Fatalf("catalog: %v", err)
	}
	if !cat.Known("NOTIFICATION_WHATSAPP") {
		t.Fatal("NOTIFICATION_WHATSAPP is not a built-in action type")
	}
	if _, err := p.Call(t.Context(), campaign.Call{CommandID: "cx-2:0:wa", EffectKey: "cx-2:0:wa:eff", BusinessUnitID: "bu-1", CampaignID: "c2",
		RecipientID: "cust-1", ActionType: "NOTIFICATION_WHATSAPP", Params: params}); err != nil {
		t.Fatalf("Call: %v", err)
	}
	if sent := sim.WhatsAppSent(); len(sent) != 1 || sent[0].Template != "points_earned" || sent[0].Values[1] != "120" {
		t.Fatalf("sent %+v", sent)
	}
}
