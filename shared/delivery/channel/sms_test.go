package channel_test

import (
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/acssim"
	"github.com/automation-platform/automation/shared/delivery/channel"
	"github.com/automation-platform/automation/shared/delivery/channeltest"
	"github.com/automation-platform/automation/shared/simhttp/simhttptest"
)

const (
	smsOK      = "+61412345678"
	smsRefused = "+61412000000"
	smsSlow    = "+84912345678"
)

// startACS starts a simulated ACS for t (refusing smsRefused) and an SMS channel on it
// with timeout.
func startACS(t channeltest.TB, timeout time.Duration) (*acssim.Server, *channel.SMS) {
	return startACSAt(t, timeout, automation.SystemClock{})
}

// startACSAt is startACS with both the simulator and the channel on clock.
func startACSAt(t channeltest.TB, timeout time.Duration, clock automation.Clock) (*acssim.Server, *channel.SMS) {
	t.Helper()
	sim := simhttptest.Start(t, acssim.New, acssim.Config{Refused: []string{smsRefused}, Clock: clock})
	ch, err := channel.NewSMS(channel.SMSConfig{ConnectionString: sim.ConnectionString(sim.URL()), From: "+18005550100", Timeout: timeout, Clock: clock})
	if err != nil {
		t.Fatalf("NewSMS: %v", err)
	}
	return sim, ch
}

// smsHarness: one server per case; the slow number's sends are answered after slowAnswer
// (the fault is server-wide, so the harness switches it on only when that recipient is
// asked for).
type smsHarness struct {
	t   channeltest.TB
	sim *acssim.Server
	ch  *channel.SMS
}

func newSMSHarness(t channeltest.TB) *smsHarness {
	// The suite's messages were sent on 1 October 2026 at 09:00 UTC: the simulator's and the
	// channel's clock stand there, so the repeatability window and x-ms-date hold.
	sim, ch := startACSAt(t, 300*time.Millisecond, automation.NewManualClock(time.Date(2026, 10, 1, 9, 0, 30, 0, time.UTC)))
	return &smsHarness{t: t, sim: sim, ch: ch}
}

func (h *smsHarness) Channel() delivery.Channel { return h.ch }

func (h *smsHarness) Capabilities() channeltest.Capabilities {
	return channeltest.Capabilities{IdempotencyKey: "repeatabilityRequestId (a UUIDv5 of the delivery key)",
		IdempotencyKeyOf: channel.RepeatabilityRequestID, NoSubject: "an SMS has text only"}
}

func (h *smsHarness) Recipient(b channeltest.Behaviour) string {
	return acsRecipient(h.t, h.sim, b, "0412 345 678")
}

// acsRecipient is the recipient of the simulated ACS that behaves as b (the SMS and the
// WhatsApp harnesses share the simulator's numbers); invalid is the harness's malformed
// number. The slow number switches the simulator's timeout fault on first.
func acsRecipient(t channeltest.TB, sim *acssim.Server, b channeltest.Behaviour, invalid string) string {
	if b == channeltest.ApplyWithoutAnswer {
		if err := sim.SetFaults(acssim.Faults{Mode: acssim.ModeTimeout, Delay: slowAnswer.String()}); err != nil {
			t.Fatalf("faults: %v", err)
		}
	}
	return channeltest.Recipients{Accept: smsOK, Refuse: smsRefused, ApplyWithoutAnswer: smsSlow, Invalid: invalid}.For(b)
}

func (h *smsHarness) Received() []channeltest.Received {
	var out []channeltest.Received
	for _, r := range h.sim.Requests() {
		out = append(out, channeltest.Received{DeliveryKey: r.Tag, IdempotencyKey: r.RequestID, Text: r.Message})
	}
	return out
}

func TestSMSConformance(t *testing.T) {
	t.Parallel()
	channeltest.Run(t, func(t channeltest.TB) channeltest.Harness { return newSMSHarness(t) })
}

func smsMessage(key, to string) delivery.Message {
	return delivery.Message{DeliveryKey: key, SchedulerKey: "s:" + key, BusinessUnitID: "bu-1", Channel: "sms", Recipient: to, Template: "otp",
		Content: &delivery.Content{Text: "Your code is 123456"}, SentOn: time.Now().UTC(), CreatedOn: time.Now().UTC().Add(-time.Minute)}
}

// A timeout after ACS took the message is UNKNOWN; the channel is idempotent, so the
// dispatcher resends it with the same repeatabilityRequestId and ACS sends nothing twice.
func TestSMSResendAfterTimeoutIsDeduplicated(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{acssim.ModeTimeout, acssim.ModeLoseAnswer} {
		sim, ch := startACS(t, 300*time.Millisecond)
		if err := sim.SetFaults(acssim.Faults{Mode: mode, Delay: "2s"}); err != nil {
			t.Fatal(err)
		}
		m := smsMessage("dlv_sms_timeout", smsOK)
		_, err := ch.Send(t.Context(), m)
		if automation.IntentOf(err) != automation.IntentUnknown || !ch.Traits().Idempotent {
			t.Fatalf("%s: %v (%s), want UNKNOWN on an idempotent channel", mode, err, automation.IntentOf(err))
		}
		if err := sim.SetFaults(acssim.Faults{}); err != nil {
			t.Fatal(err)
		}
		m.SentOn = m.SentOn.Add(time.Minute) // a later attempt; CreatedOn stays
		ref, err := ch.Send(t.Context(), m)
		if err != nil || ref == "" {
			t.Fatalf("%s: resend: %q %v", mode, ref, err)
		}
		sent := sim.Sent()
		if len(sent) != 1 || sent[0].MessageID != ref {
			t.Fatalf("%s: sent %+v, want the first message once, its id answered again (%s)", mode, sent, ref)
		}
		if st := sim.Stats(); st.Deduplicated != 1 {
			t.Errorf("%s: stats %+v", mode, st)
		}
	}
}

// The outcome of each fault switch, and of a refused number.
func TestSMSFaultOutcomes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		mode, to string
		intent   automation.Intent
		sent     int
	}{
		{acssim.ModeSlow, smsOK, automation.IntentNone, 1},
		{acssim.ModeRateLimit, smsOK, automation.IntentRetryAfter, 0},
		{acssim.ModeInternal, smsOK, automation.IntentUnknown, 0},
		{acssim.ModeNone, smsRefused, automation.IntentPermanent, 0},
	}
	for _, c := range cases {
		sim, ch := startACS(t, 500*time.Millisecond)
		if err := sim.SetFaults(acssim.Faults{Mode: c.mode, Delay: "100ms", RetryAfter: 9}); err != nil {
			t.Fatal(err)
		}
		_, err := ch.Send(t.Context(), smsMessage("dlv_sms_"+c.mode, c.to))
		if got := automation.IntentOf(err); got != c.intent {
			t.Errorf("%s %s: %s (%v), want %s", c.mode, c.to, got, err, c.intent)
		}
		if d, ok := automation.RetryAfterOf(err); c.intent == automation.IntentRetryAfter && (!ok || d != 9*time.Second) {
			t.Errorf("%s: retry after %v", c.mode, d)
		}
		if n := len(sim.Sent()); n != c.sent {
			t.Errorf("%s: sent %d, want %d", c.mode, n, c.sent)
		}
	}
}

// The simulator refuses a request signed with another key, and one whose body changed
// after signing; nothing is sent.
func TestSMSSimulatorChecksTheSignature(t *testing.T) {
	t.Parallel()
	sim, _ := startACS(t, time.Second)
	other, err := acssim.New(acssim.Config{})
	if err != nil {
		t.Fatal(err)
	}
	forged, err := channel.NewSMS(channel.SMSConfig{ConnectionString: other.ConnectionString(sim.URL()), From: "+18005550100", Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	_, err = forged.Send(t.Context(), smsMessage("dlv_forged", smsOK))
	if err == nil || automation.IntentOf(err) != automation.IntentRetry || !strings.Contains(err.Error(), "401") {
		t.Fatalf("forged key: %v (%s), want a 401 retry", err, automation.IntentOf(err))
	}
	if st := sim.Stats(); st.Unauthorized != 1 || st.Sent != 0 {
		t.Errorf("stats %+v", st)
	}
}

func TestValidatePhoneNumber(t *testing.T) {
	t.Parallel()
	for n, want := range map[string]string{
		"+61412345678": "", "+84912345678": "", "+14155552671": "",
		"0412345678": "not E.164", "+61 412 345 678": "not E.164", "+999123456789": "unknown country code",
		"+1234": "not E.164", "+6141234567890123": "not E.164", "": "not E.164",
	} {
		err := channel.ValidatePhoneNumber(n)
		switch {
		case want == "" && err != nil:
			t.Errorf("%q: %v", n, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%q: %v, want %q", n, err, want)
		}
	}
}

// ACS answers "rejected" for a known id with another number or text, and for a first-sent
// instant older than its window: the channel cannot tell what happened, so UNKNOWN.
func TestSMSRepeatabilityRejectedIsUnknown(t *testing.T) {
	t.Parallel()
	sim, ch := startACS(t, time.Second)
	m := smsMessage("dlv_sms_rej", smsOK)
	if _, err := ch.Send(t.Context(), m); err != nil {
		t.Fatal(err)
	}
	changed := m
	changed.Content = &delivery.Content{Text: "another text"}
	if _, err := ch.Send(t.Context(), changed); automation.IntentOf(err) != automation.IntentUnknown {
		t.Errorf("the same id with another text: %v", err)
	}
	old := smsMessage("dlv_sms_old", smsOK)
	old.CreatedOn = time.Now().UTC().Add(-25 * time.Hour)
	if _, err := ch.Send(t.Context(), old); automation.IntentOf(err) != automation.IntentUnknown {
		t.Errorf("a first-sent past the window: %v", err)
	}
	if n := len(sim.Sent()); n != 1 {
		t.Errorf("sent %d, want 1", n)
	}
}
