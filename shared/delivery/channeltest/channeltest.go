package channeltest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
)

// TB is the part of *testing.T the suite uses. Fatalf and Skipf must stop the calling
// goroutine (testing.T calls runtime.Goexit).
type TB interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
	Logf(format string, args ...any)
	Cleanup(func())
	Context() context.Context
}

var _ TB = (*testing.T)(nil)

// Behaviour is what the provider behind a recipient does with a message.
type Behaviour int

// Provider behaviours. A harness maps each to a recipient address (a URL path, a mailbox).
const (
	// Accept: the provider takes the message and answers success.
	Accept Behaviour = iota
	// Refuse: the provider refuses the message for good (webhook 410, SMTP 550).
	Refuse
	// ApplyWithoutAnswer: the provider takes the message but does not answer within the
	// channel's timeout (the harness configures the channel with a short one, under a
	// second, and the provider to wait longer).
	ApplyWithoutAnswer
	// Invalid: an address the channel's ValidateRecipient must reject.
	Invalid
)

func (b Behaviour) String() string {
	switch b {
	case Accept:
		return "Accept"
	case Refuse:
		return "Refuse"
	case ApplyWithoutAnswer:
		return "ApplyWithoutAnswer"
	case Invalid:
		return "Invalid"
	}
	return fmt.Sprintf("Behaviour(%d)", int(b))
}

// Recipients are a harness's addresses, one per behaviour; For answers Harness.Recipient
// from them, so a harness whose provider needs no set-up per behaviour only lists them.
type Recipients struct {
	Accept, Refuse, ApplyWithoutAnswer, Invalid string
}

// Fixed is the part of a Harness that is the same for every behaviour: the channel, the
// capabilities it declares and its four addresses. A harness whose recipients need no set-up
// per behaviour embeds it and writes only Received.
type Fixed struct {
	Ch    delivery.Channel
	Caps  Capabilities
	Addrs Recipients
}

// Channel implements Harness.
func (f Fixed) Channel() delivery.Channel { return f.Ch }

// Capabilities implements Harness.
func (f Fixed) Capabilities() Capabilities { return f.Caps }

// Recipient implements Harness: the address of Addrs for b.
func (f Fixed) Recipient(b Behaviour) string { return f.Addrs.For(b) }

// For returns the address whose provider behaves as b (Invalid for Invalid and any other
// value).
func (r Recipients) For(b Behaviour) string {
	switch b {
	case Accept:
		return r.Accept
	case Refuse:
		return r.Refuse
	case ApplyWithoutAnswer:
		return r.ApplyWithoutAnswer
	}
	return r.Invalid
}

// Capabilities declare what the channel and its provider can show. Every opt-out is a
// reason, not a bare flag: the zero value claims every capability, so a new channel is held
// to the whole contract until its harness says, in words, why a case does not apply.
type Capabilities struct {
	// IdempotencyKey names where the channel carries its idempotency key to the provider
	// (e.g. "Idempotency-Key header", "Message-ID header"); Received.IdempotencyKey holds its
	// value. Exactly one of IdempotencyKey and NoIdempotencyKey is set.
	IdempotencyKey string
	// NoIdempotencyKey says why the channel carries no idempotency key. Such a channel must
	// not declare Traits.Idempotent.
	NoIdempotencyKey string
	// NoProviderFailures, when set, says why the channel cannot fail on the provider side;
	// the suite then skips PermanentFailure and TimeoutIsUnknown with this reason. Empty:
	// Recipient must serve Refuse and ApplyWithoutAnswer.
	NoProviderFailures string
	// NoAttachmentContent, when set, says why the provider side cannot show the files of a
	// channel that accepts attachments; the suite then checks only that the message is sent.
	NoAttachmentContent string
	// IdempotencyKeyOf, when set, is how the channel derives its idempotency key from the
	// delivery key when the provider fixes the key's form (ACS: a GUID). The suite then
	// checks that the provider got exactly IdempotencyKeyOf(deliveryKey), instead of a key
	// that contains the delivery key.
	IdempotencyKeyOf func(deliveryKey string) string
	// NoSubject, when set, says why the provider side has no subject (an SMS); the suite
	// then checks the text only.
	NoSubject string
}

// Received is one message as the provider got it.
type Received struct {
	DeliveryKey    string // the delivery key the message carried (body, header or line)
	IdempotencyKey string // where Capabilities.IdempotencyKey says; "" when absent
	Subject        string
	Text           string // the plain-text body (decoded)
	Attachments    []delivery.Attachment
}

// Harness is what the suite needs from one channel. Each call of the constructor passed to
// Run returns a fresh channel and a provider that has received nothing; the harness
// registers its own cleanup with t.
type Harness interface {
	Channel() delivery.Channel
	Capabilities() Capabilities
	// Recipient returns an address whose provider behaves as b.
	Recipient(b Behaviour) string
	// Received returns what the provider got so far, oldest first (each request, including
	// repeats of the same delivery key). It fails t if the provider's record is unreadable.
	Received() []Received
}

// Case is one conformance check.
type Case struct {
	Name string
	Run  func(t TB, h Harness)
}

// Cases returns the suite's cases in order.
func Cases() []Case {
	return []Case{
		{"Declared", testDeclared},
		{"Sent", testSent},
		{"InvalidRecipient", testInvalidRecipient},
		{"NeedsContent", testNeedsContent},
		{"PermanentFailure", testPermanentFailure},
		{"TimeoutIsUnknown", testTimeoutIsUnknown},
		{"IdempotencyKey", testIdempotencyKey},
		{"Attachments", testAttachments},
	}
}

// Run runs the conformance suite, each case in a parallel subtest with a fresh harness.
func Run(t *testing.T, newHarness func(t TB) Harness) {
	t.Helper()
	for _, c := range Cases() {
		t.Run(c.Name, func(t *testing.T) {
			t.Parallel()
			c.Run(t, newHarness(t))
		})
	}
}

// sendBound bounds one Send: a channel that hangs past its own timeout fails the case
// instead of the whole test binary.
const sendBound = 20 * time.Second

// message returns the suite's message with delivery key key.
func message(key, recipient string) delivery.Message {
	payload := `{"staffName":"Amelia Nguyen","expiresOn":"2026-10-31"}`
	return delivery.Message{
		DeliveryKey:    key,
		SchedulerKey:   "reminder:channeltest:" + key,
		BusinessUnitID: "bu-channeltest",
		Channel:        "channeltest",
		Recipient:      recipient,
		Template:       "police-check-expiry",
		PayloadJSON:    payload,
		Payload:        json.RawMessage(payload),
		Content: &delivery.Content{Subject: "Police check expires on 31 October", Text: "Hello Amelia, your police check expires on 31 October.",
			HTML: "<p>Hello Amelia, your police check expires on <b>31 October</b>.</p>", TemplateVersion: 2},
		SentOn: time.Date(2026, 10, 1, 9, 0, 0, 0, time.UTC),
	}
}

// Preparer is implemented by a harness whose channel needs content of its own kind beyond
// the suite's subject and text (a WhatsApp template reference): Prepare adds it to every
// message the suite sends, keeping a nil Content nil.
type Preparer interface {
	Prepare(m delivery.Message) delivery.Message
}

func send(t TB, h Harness, m delivery.Message) (string, error) {
	t.Helper()
	ch := h.Channel()
	if p, ok := h.(Preparer); ok {
		m = p.Prepare(m)
	}
	ctx, cancel := context.WithTimeout(t.Context(), sendBound)
	defer cancel()
	type result struct {
		ref string
		err error
	}
	done := make(chan result, 1)
	go func() {
		ref, err := ch.Send(ctx, m)
		done <- result{ref, err}
	}()
	select {
	case r := <-done:
		return r.ref, r.err
	case <-time.After(sendBound + 5*time.Second):
		t.Fatalf("Send(%s) did not return within %s, ignoring its context", m.DeliveryKey, sendBound)
		return "", nil
	}
}

// wantKind fails t unless err is classified kind.
func wantKind(t TB, what string, err error, kind automation.Intent) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: Send returned nil, want a %s error", what, kind)
		return
	}
	if got := automation.IntentOf(err); got != kind {
		t.Errorf("%s: Send returned %v, classified %s, want %s", what, err, got, kind)
	}
}

func keysOf(rs []Received) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.DeliveryKey
	}
	return out
}

func testDeclared(t TB, h Harness) {
	c := h.Capabilities()
	switch {
	case c.IdempotencyKey == "" && c.NoIdempotencyKey == "":
		t.Errorf("Capabilities declare neither where the idempotency key travels (IdempotencyKey) nor why there is none (NoIdempotencyKey)")
	case c.IdempotencyKey != "" && c.NoIdempotencyKey != "":
		t.Errorf("Capabilities declare both IdempotencyKey %q and NoIdempotencyKey %q", c.IdempotencyKey, c.NoIdempotencyKey)
	}
	if h.Channel().Traits().Idempotent && c.IdempotencyKey == "" {
		t.Errorf("Traits say Idempotent, but the channel carries no idempotency key for the provider to deduplicate by")
	}
	if c.NoAttachmentContent != "" && !h.Channel().Traits().Attachments {
		t.Errorf("Capabilities explain NoAttachmentContent for a channel whose Traits do not accept attachments")
	}
}

func testSent(t TB, h Harness) {
	ch := h.Channel()
	to := h.Recipient(Accept)
	if err := ch.ValidateRecipient(to); err != nil {
		t.Fatalf("ValidateRecipient(%q) of the accepting recipient: %v", to, err)
	}
	m := message("dlv_channeltest_sent", to)
	ref, err := send(t, h, m)
	if err != nil {
		t.Fatalf("Send: %v (%s), want sent", err, automation.IntentOf(err))
	}
	if ref == "" {
		t.Errorf("Send returned an empty provider reference")
	}
	got := h.Received()
	if len(got) != 1 {
		t.Fatalf("the provider got %d messages %v, want 1", len(got), keysOf(got))
	}
	r := got[0]
	if r.DeliveryKey != m.DeliveryKey {
		t.Errorf("the provider got delivery key %q, want %q", r.DeliveryKey, m.DeliveryKey)
	}
	if r.Subject != m.Content.Subject && h.Capabilities().NoSubject == "" {
		t.Errorf("the provider got subject %q, want %q", r.Subject, m.Content.Subject)
	}
	if !strings.Contains(r.Text, m.Content.Text) {
		t.Errorf("the provider got text %q, want it to contain %q", r.Text, m.Content.Text)
	}
}

func testInvalidRecipient(t TB, h Harness) {
	ch := h.Channel()
	to := h.Recipient(Invalid)
	if err := ch.ValidateRecipient(to); err == nil {
		t.Errorf("ValidateRecipient(%q) accepted the invalid recipient", to)
	}
	_, err := send(t, h, message("dlv_channeltest_invalid", to))
	wantKind(t, fmt.Sprintf("invalid recipient %q", to), err, automation.IntentPermanent)
	if got := h.Received(); len(got) != 0 {
		t.Errorf("the provider got %v for an invalid recipient", keysOf(got))
	}
}

func testNeedsContent(t TB, h Harness) {
	ch := h.Channel()
	if !ch.Traits().NeedsContent {
		t.Skipf("the channel's Traits do not say NeedsContent: it sends messages without a rendered template")
	}
	m := message("dlv_channeltest_nocontent", h.Recipient(Accept))
	m.Content = nil
	_, err := send(t, h, m)
	wantKind(t, "no rendered content", err, automation.IntentPermanent)
	if got := h.Received(); len(got) != 0 {
		t.Errorf("the provider got %v without content", keysOf(got))
	}
}

func testPermanentFailure(t TB, h Harness) {
	if why := h.Capabilities().NoProviderFailures; why != "" {
		t.Skipf("provider-side failure does not apply: %s", why)
	}
	_, err := send(t, h, message("dlv_channeltest_refused", h.Recipient(Refuse)))
	wantKind(t, "a provider that refuses for good", err, automation.IntentPermanent)
}

func testTimeoutIsUnknown(t TB, h Harness) {
	if why := h.Capabilities().NoProviderFailures; why != "" {
		t.Skipf("provider-side timeout does not apply: %s", why)
	}
	m := message("dlv_channeltest_timeout", h.Recipient(ApplyWithoutAnswer))
	_, err := send(t, h, m)
	wantKind(t, "a provider that applies the message but does not answer in time", err, automation.IntentUnknown)
	if got := h.Received(); !slices.Contains(keysOf(got), m.DeliveryKey) {
		t.Errorf("the provider got %v, want %s: the harness's provider must apply the message before it stops answering", keysOf(got), m.DeliveryKey)
	}
}

func testIdempotencyKey(t TB, h Harness) {
	c := h.Capabilities()
	if c.IdempotencyKey == "" {
		t.Skipf("the channel carries no idempotency key: %s", c.NoIdempotencyKey)
	}
	to := h.Recipient(Accept)
	first := message("dlv_channeltest_idem_a", to)
	other := message("dlv_channeltest_idem_b", to)
	for i, m := range []delivery.Message{first, first, other} {
		if _, err := send(t, h, m); err != nil {
			t.Fatalf("send %d (%s): %v", i+1, m.DeliveryKey, err)
		}
	}
	got := h.Received()
	if len(got) != 3 {
		t.Fatalf("the provider got %d requests %v, want 3 (the channel must send a repeat, the provider deduplicates)", len(got), keysOf(got))
	}
	a, again, b := got[0].IdempotencyKey, got[1].IdempotencyKey, got[2].IdempotencyKey
	carries := func(key, deliveryKey string) bool {
		if c.IdempotencyKeyOf != nil {
			return key == c.IdempotencyKeyOf(deliveryKey)
		}
		return strings.Contains(key, deliveryKey)
	}
	if a == "" || !carries(a, first.DeliveryKey) {
		t.Errorf("%s of %s is %q, want it to carry the delivery key", c.IdempotencyKey, first.DeliveryKey, a)
	}
	if again != a {
		t.Errorf("%s changed between two sends of %s: %q then %q", c.IdempotencyKey, first.DeliveryKey, a, again)
	}
	if b == a || !carries(b, other.DeliveryKey) {
		t.Errorf("%s of another delivery key %s is %q (first was %q)", c.IdempotencyKey, other.DeliveryKey, b, a)
	}
}

func testAttachments(t TB, h Harness) {
	ch := h.Channel()
	m := message("dlv_channeltest_attachment", h.Recipient(Accept))
	file := delivery.Attachment{FileName: "automation-activity-2027-03-22.csv", ContentType: "text/csv",
		Data: []byte("businessUnitId,sent\nbu-syd,12\nbu-hcm,\"7\"\n")}
	m.Attachments = []delivery.Attachment{file}
	_, err := send(t, h, m)
	if !ch.Traits().Attachments {
		wantKind(t, "an attachment on a channel that does not declare attachments", err, automation.IntentPermanent)
		if got := h.Received(); len(got) != 0 {
			t.Errorf("the provider got %v: the channel dropped the attachment instead of refusing the message", keysOf(got))
		}
		return
	}
	if err != nil {
		t.Fatalf("Send with an attachment: %v (%s)", err, automation.IntentOf(err))
	}
	got := h.Received()
	if len(got) != 1 {
		t.Fatalf("the provider got %d messages, want 1", len(got))
	}
	if why := h.Capabilities().NoAttachmentContent; why != "" {
		t.Skipf("sent; the attachment's content is not checked: %s", why)
	}
	if !strings.Contains(got[0].Text, m.Content.Text) {
		t.Errorf("with an attachment the provider got text %q, want it to contain %q", got[0].Text, m.Content.Text)
	}
	if len(got[0].Attachments) != 1 {
		t.Fatalf("the provider got %d attachments, want 1", len(got[0].Attachments))
	}
	a := got[0].Attachments[0]
	if a.FileName != file.FileName || a.ContentType != file.ContentType || !bytes.Equal(a.Data, file.Data) {
		t.Errorf("the provider got attachment %q (%s, %q), want %q (%s, %q)", a.FileName, a.ContentType, a.Data, file.FileName, file.ContentType, file.Data)
	}
}
