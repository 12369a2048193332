package channel_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/campaign"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channel"
	"github.com/automation-platform/automation/shared/delivery/channeltest"
	"github.com/automation-platform/automation/shared/delivery/fcmsim"
	"github.com/automation-platform/automation/shared/simhttp/simhttptest"
	"github.com/automation-platform/automation/shared/store"
)

// memDevices is an in-memory device registry: customer → active tokens, and the
// retirements it was asked for.
type memDevices struct {
	mu      sync.Mutex
	active  map[string][]string
	retired map[string]string // token → reason
}

func newMemDevices() *memDevices {
	return &memDevices{active: map[string][]string{}, retired: map[string]string{}}
}

// devicesOf is a device registry holding customer's tokens.
func devicesOf(customer string, tokens ...string) *memDevices {
	d := newMemDevices()
	d.add(customer, tokens...)
	return d
}

func (d *memDevices) add(customer string, tokens ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.active[customer] = append(d.active[customer], tokens...)
}

func (d *memDevices) PushDeviceList(_ context.Context, bu, customer string) ([]store.PushDevice, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []store.PushDevice
	for _, tok := range d.active[customer] {
		out = append(out, store.PushDevice{BusinessUnitID: bu, CustomerID: customer, Token: tok, Platform: store.PlatformAndroid})
	}
	return out, nil
}

func (d *memDevices) PushDeviceRetire(_ context.Context, p store.PushDeviceRetireParams) (store.PushDevice, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	toks := d.active[p.CustomerID]
	i := slices.Index(toks, p.Token)
	if i < 0 {
		return store.PushDevice{}, store.ErrNotFound
	}
	d.active[p.CustomerID] = slices.Delete(toks, i, i+1)
	d.retired[p.Token] = p.Reason
	return store.PushDevice{Token: p.Token, RetiredReason: p.Reason}, nil
}

func (d *memDevices) retiredReason(tok string) string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.retired[tok]
}

// startFCM starts a simulator for t and returns it with a channel (timeout 1 s) on it. The
// timeout covers the OAuth token's fetch as well as the send, so it leaves room for a loaded
// 2-core machine (300 ms did not, at load 15); every fault that must time out holds its
// answer 2–3 s, and ModeSlow's 100 ms stays well within it.
func startFCM(t channeltest.TB, devices channel.PushDevices) (*fcmsim.Server, *channel.FCM) {
	t.Helper()
	sim := simhttptest.Start(t, fcmsim.New, fcmsim.Config{})
	ch, err := channel.NewFCM(channel.FCMConfig{CredentialsJSON: sim.ServiceAccountJSON(sim.URL()), Endpoint: sim.URL(),
		Timeout: time.Second, Devices: devices})
	if err != nil {
		t.Fatalf("NewFCM: %v", err)
	}
	return sim, ch
}

// fcmHarness: "cust-accept" has one accepting device, "cust-refuse" one whose token FCM
// answers UNREGISTERED, "cust-slow" one whose send is accepted and answered after 3 s.
type fcmHarness struct {
	channeltest.Fixed
	sim *fcmsim.Server
}

func newFCMHarness(t channeltest.TB) *fcmHarness {
	devices := devicesOf("cust-accept", "tok-accept-1")
	devices.add("cust-refuse", "tok-gone-1")
	devices.add("cust-slow", "tok-slow-1")
	sim, ch := startFCM(t, devices)
	if err := sim.SetFaults(fcmsim.Faults{Delay: slowAnswer.String(), Tokens: map[string]string{
		"tok-gone-1": fcmsim.ModeUnregistered, "tok-slow-1": fcmsim.ModeTimeout}}); err != nil {
		t.Fatalf("faults: %v", err)
	}
	return &fcmHarness{sim: sim, Fixed: channeltest.Fixed{Ch: ch,
		Caps:  channeltest.Capabilities{NoIdempotencyKey: "FCM HTTP v1 has no idempotency key; the delivery key travels in data.deliveryKey and the collapse keys so the app drops a repeat"},
		Addrs: channeltest.Recipients{Accept: "cust-accept", Refuse: "cust-refuse", ApplyWithoutAnswer: "cust-slow", Invalid: "not a customer id"}}}
}

func (h *fcmHarness) Received() []channeltest.Received {
	var out []channeltest.Received
	for _, m := range h.sim.Accepted() {
		out = append(out, channeltest.Received{DeliveryKey: m.Data[channel.DataDeliveryKey], Subject: m.Title, Text: m.Body})
	}
	return out
}

func TestFCMConformance(t *testing.T) {
	t.Parallel()
	channeltest.Run(t, func(t channeltest.TB) channeltest.Harness { return newFCMHarness(t) })
}

func pushMessage(key, customer string) delivery.Message {
	payload := `{"memberName":"Linh","points":120,"tier":"gold","nested":{"a":1},"from":"x"}`
	return delivery.Message{DeliveryKey: key, SchedulerKey: "s:" + key, BusinessUnitID: "bu-1", Channel: "push", Recipient: customer,
		Template: "points-earned", PayloadJSON: payload, Payload: json.RawMessage(payload),
		Content: &delivery.Content{Subject: "You earned 120 points", Text: "Hi Linh, 120 points are yours."}}
}

// A push fans out to every device; the delivery key travels as data.deliveryKey,
// android.collapse_key and apns-collapse-id; payload scalars become string data.
func TestFCMFanOutAndKeyMapping(t *testing.T) {
	t.Parallel()
	devices := devicesOf("cust-1", "tok-a", "tok-b")
	sim, ch := startFCM(t, devices)
	ref, err := ch.Send(t.Context(), pushMessage("dlv_fan", "cust-1"))
	if err != nil {
		t.Fatalf("Send: %v", err)
	}
	got := sim.Accepted()
	if len(got) != 2 || got[0].Token != "tok-a" || got[1].Token != "tok-b" {
		t.Fatalf("accepted %+v, want one message per device", got)
	}
	if !strings.Contains(ref, got[0].Name) || !strings.Contains(ref, got[1].Name) {
		t.Errorf("provider reference %q does not name both messages", ref)
	}
	m := got[0]
	if m.CollapseKey != "dlv_fan" || m.APNSCollapse != "dlv_fan" || m.Data["deliveryKey"] != "dlv_fan" || m.Data["template"] != "points-earned" {
		t.Errorf("key mapping: %+v", m)
	}
	if m.Data["points"] != "120" || m.Data["memberName"] != "Linh" {
		t.Errorf("data %v, want payload scalars as strings", m.Data)
	}
	if _, ok := m.Data["nested"]; ok {
		t.Errorf("data %v carries an object member", m.Data)
	}
	if _, ok := m.Data["from"]; ok {
		t.Errorf("data %v carries FCM's reserved key from", m.Data)
	}
	if st := sim.Stats(); st.Tokens != 1 {
		t.Errorf("%d access tokens fetched for two sends, want 1 (reused)", st.Tokens)
	}
	// A push template's rendered data members join the data, over the payload's, under
	// the delivery key and template.
	withData := pushMessage("dlv_data", "cust-1")
	withData.Content.Kind, withData.Content.Data = delivery.KindPush, map[string]string{"screen": "points", "points": "from the template"}
	if _, err := ch.Send(t.Context(), withData); err != nil {
		t.Fatal(err)
	}
	got = sim.Accepted()
	if m := got[len(got)-1]; m.Data["screen"] != "points" || m.Data["points"] != "from the template" || m.Data["deliveryKey"] != "dlv_data" {
		t.Errorf("template data: %v", m.Data)
	}
	long := strings.Repeat("k", 100)
	if id := channel.CollapseID(long); len(id) > 64 || id == channel.CollapseID(long+"x") {
		t.Errorf("CollapseID of a long key = %q", id)
	}
}

// UNREGISTERED and INVALID_ARGUMENT on message.token retire that token only; the other
// device still gets the message.
func TestFCMRetiresOnlyOnADefiniteAnswer(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{fcmsim.ModeUnregistered, fcmsim.ModeInvalidToken} {
		devices := newMemDevices()
		live, dead := "fcm-live-0123456789-abcdef", "fcm-dead-0123456789-uvwxyz"
		devices.add("cust-1", live, dead)
		sim, ch := startFCM(t, devices)
		if err := sim.SetFaults(fcmsim.Faults{Tokens: map[string]string{dead: mode}}); err != nil {
			t.Fatal(err)
		}
		ref, err := ch.Send(t.Context(), pushMessage("dlv_retire", "cust-1"))
		if err != nil {
			t.Fatalf("%s: Send: %v, want sent to the live device", mode, err)
		}
		// The reference names the device reached and the retired token, both masked (the
		// support and console delivery views show it).
		code := map[string]string{fcmsim.ModeUnregistered: "UNREGISTERED", fcmsim.ModeInvalidToken: "INVALID_ARGUMENT"}[mode]
		want := sim.Accepted()[0].Name + " to token fcm-li…abcdef; retired token fcm-de…uvwxyz (" + code + ")"
		if ref != want || strings.Contains(ref, live) || strings.Contains(ref, dead) {
			t.Errorf("%s: provider reference %q, want %q (tokens masked)", mode, ref, want)
		}
		if r := devices.retiredReason(dead); r == "" {
			t.Errorf("%s: the token was not retired", mode)
		}
		if r := devices.retiredReason(live); r != "" {
			t.Errorf("%s: the live token was retired (%s)", mode, r)
		}
	}
	// No answer, a 500 or a 429 retire nothing.
	for _, mode := range []string{fcmsim.ModeInternal, fcmsim.ModeLoseAnswer, fcmsim.ModeRateLimit, fcmsim.ModeUnavailable, fcmsim.ModeTimeout} {
		devices := devicesOf("cust-1", "tok-1")
		sim, ch := startFCM(t, devices)
		if err := sim.SetFaults(fcmsim.Faults{Mode: mode, Delay: "2s"}); err != nil {
			t.Fatal(err)
		}
		if _, err := ch.Send(t.Context(), pushMessage("dlv_keep", "cust-1")); err == nil {
			t.Errorf("%s: Send succeeded", mode)
		}
		if r := devices.retiredReason("tok-1"); r != "" {
			t.Errorf("%s retired the token (%s)", mode, r)
		}
	}
}

// The outcome of each fault switch.
func TestFCMFaultOutcomes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		mode     string
		intent   automation.Intent
		accepted int
		after    time.Duration
	}{
		{fcmsim.ModeSlow, automation.IntentNone, 1, 0}, // 100 ms: within the 1 s timeout
		{fcmsim.ModeTimeout, automation.IntentUnknown, 1, 0},
		{fcmsim.ModeLoseAnswer, automation.IntentUnknown, 1, 0},
		{fcmsim.ModeInternal, automation.IntentUnknown, 0, 0},
		{fcmsim.ModeRateLimit, automation.IntentRetryAfter, 0, 7 * time.Second},
		{fcmsim.ModeUnavailable, automation.IntentRetryAfter, 0, 7 * time.Second},
		{fcmsim.ModeUnregistered, automation.IntentPermanent, 0, 0},
	}
	for _, c := range cases {
		t.Run(c.mode, func(t *testing.T) {
			t.Parallel()
			devices := devicesOf("cust-1", "tok-1")
			sim, ch := startFCM(t, devices)
			delay := "2s"
			if c.mode == fcmsim.ModeSlow {
				delay = "100ms"
			}
			if err := sim.SetFaults(fcmsim.Faults{Mode: c.mode, Delay: delay, RetryAfter: 7}); err != nil {
				t.Fatal(err)
			}
			_, err := ch.Send(t.Context(), pushMessage("dlv_fault", "cust-1"))
			if got := automation.IntentOf(err); got != c.intent {
				t.Fatalf("intent %s (%v), want %s", got, err, c.intent)
			}
			if d, ok := automation.RetryAfterOf(err); c.after > 0 && (!ok || d != c.after) {
				t.Errorf("retry after %v, want %v", d, c.after)
			}
			if n := len(sim.Accepted()); n != c.accepted {
				t.Errorf("accepted %d, want %d", n, c.accepted)
			}
		})
	}
}

// A customer without devices is a permanent failure that names why.
func TestFCMNoDevice(t *testing.T) {
	t.Parallel()
	_, ch := startFCM(t, newMemDevices())
	_, err := ch.Send(t.Context(), pushMessage("dlv_none", "cust-none"))
	if !automation.IsPermanent(err) || !strings.Contains(err.Error(), "no registered device") {
		t.Fatalf("Send = %v, want permanent: no registered device", err)
	}
}

// The simulator checks the auth as Google does: a key it did not issue gets no token, and
// the send is not made (a retry, nothing accepted); a send without a token is 401.
func TestFCMAuthIsChecked(t *testing.T) {
	t.Parallel()
	devices := devicesOf("cust-1", "tok-1")
	sim, _ := startFCM(t, devices)
	other, err := fcmsim.New(fcmsim.Config{ProjectID: sim.ProjectID()})
	if err != nil {
		t.Fatal(err)
	}
	forged, err := channel.NewFCM(channel.FCMConfig{CredentialsJSON: other.ServiceAccountJSON(sim.URL()), Endpoint: sim.URL(),
		Timeout: time.Second, Devices: devices})
	if err != nil {
		t.Fatal(err)
	}
	_, err = forged.Send(t.Context(), pushMessage("dlv_forged", "cust-1"))
	if err == nil || automation.IntentOf(err) != automation.IntentRetryAfter && automation.IntentOf(err) != automation.IntentRetry {
		t.Fatalf("forged key: %v (%s), want a retry", err, automation.IntentOf(err))
	}
	if st := sim.Stats(); st.Refused != 1 || st.Tokens != 0 || len(sim.Accepted()) != 0 {
		t.Errorf("stats %+v, accepted %d: want the assertion refused and nothing sent", st, len(sim.Accepted()))
	}
	if devices.retiredReason("tok-1") != "" {
		t.Errorf("an auth failure retired the token")
	}
	if _, err := channel.NewFCM(channel.FCMConfig{CredentialsJSON: []byte(`{"type":"authorized_user"}`), Devices: devices}); err == nil {
		t.Errorf("NewFCM accepted a key file that is not a service account")
	}
}

func TestValidatePushToken(t *testing.T) {
	t.Parallel()
	for tok, ok := range map[string]bool{"fGx1:APA91bH-abc_def": true, "": false, "has space": false, strings.Repeat("a", store.MaxPushTokenBytes+1): false,
		strings.Repeat("a", store.MaxPushTokenBytes): true, "tok/../x": false} {
		if err := channel.ValidatePushToken(tok); (err == nil) != ok {
			t.Errorf("ValidatePushToken(%.20q) = %v, want ok=%v", tok, err, ok)
		}
	}
}

// NOTIFICATION_PUSH as a campaign action: the push channel serves it as a provider; the
// command's effect key is the delivery key the app dedupes by.
func TestFCMAsCampaignAction(t *testing.T) {
	t.Parallel()
	devices := devicesOf("cust-7", "tok-7")
	sim, ch := startFCM(t, devices)
	p := &campaign.ChannelProvider{Name: channel.PushChannelName, Channel: ch, Clock: automation.NewManualClock(time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC))}
	if !p.Serves("NOTIFICATION_PUSH") {
		t.Fatal("the channel provider does not serve NOTIFICATION_PUSH")
	}
	res, err := p.Call(t.Context(), campaign.Call{CommandID: "cx-1:0:push", EffectKey: "cx-1:0:push:eff", BusinessUnitID: "bu-1", CampaignID: "c1",
		RecipientID: "cust-7", ActionType: "NOTIFICATION_PUSH", Params: json.RawMessage(`{"subject":"Points","text":"120 points are yours"}`)})
	if err != nil || res.Reference == "" {
		t.Fatalf("Call: %+v %v", res, err)
	}
	got := sim.Accepted()
	if len(got) != 1 || got[0].Data["deliveryKey"] != "cx-1:0:push:eff" || got[0].Title != "Points" || got[0].Body != "120 points are yours" {
		t.Fatalf("accepted %+v", got)
	}
}

// After FCM refuses the access token (401), the send is a retry and the next one fetches a
// new token instead of reusing the refused one until it expires.
func TestFCMRefetchesARefusedToken(t *testing.T) {
	t.Parallel()
	devices := devicesOf("cust-1", "tok-1")
	sim, ch := startFCM(t, devices)
	if _, err := ch.Send(t.Context(), pushMessage("dlv_tok_1", "cust-1")); err != nil {
		t.Fatal(err)
	}
	sim.RevokeTokens()
	if _, err := ch.Send(t.Context(), pushMessage("dlv_tok_2", "cust-1")); err == nil || !strings.Contains(err.Error(), "401") ||
		(automation.IntentOf(err) != automation.IntentRetry && automation.IntentOf(err) != automation.IntentRetryAfter) {
		t.Fatalf("with a revoked token: %v (%s), want a 401 retry", err, automation.IntentOf(err))
	}
	if _, err := ch.Send(t.Context(), pushMessage("dlv_tok_2", "cust-1")); err != nil {
		t.Fatalf("the retry: %v", err)
	}
	if st := sim.Stats(); st.Tokens != 2 || st.Unauthorized != 1 {
		t.Errorf("stats %+v, want a second token after the 401", st)
	}
	if devices.retiredReason("tok-1") != "" {
		t.Error("a 401 retired the token")
	}
}
