package channeltest_test

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channeltest"
)

// recorder is a channeltest.TB that records instead of failing the real test, so a case can
// be run against a broken channel and its failure asserted. Fatalf and Skipf end the
// case's goroutine, as testing.T does.
type recorder struct {
	mu       sync.Mutex
	failed   bool
	skipped  bool
	logs     []string
	cleanups []func()
	ctx      context.Context
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recorder) Fatalf(format string, args ...any) { r.Errorf(format, args...); runtime.Goexit() }
func (r *recorder) Skipf(format string, args ...any) {
	r.mu.Lock()
	r.skipped = true
	r.logs = append(r.logs, "SKIP: "+fmt.Sprintf(format, args...))
	r.mu.Unlock()
	runtime.Goexit()
}
func (r *recorder) Logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}
func (r *recorder) Cleanup(f func())         { r.cleanups = append(r.cleanups, f) }
func (r *recorder) Context() context.Context { return r.ctx }

// runCase runs one case on a fresh fake harness built by newHarness, in its own goroutine.
func runCase(t *testing.T, c channeltest.Case, newHarness func(channeltest.TB) channeltest.Harness) *recorder {
	t.Helper()
	ctx, cancel := context.WithCancel(t.Context())
	r := &recorder{ctx: ctx}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c.Run(r, newHarness(r))
	}()
	<-done
	cancel()
	for i := len(r.cleanups) - 1; i >= 0; i-- {
		r.cleanups[i]()
	}
	return r
}

// fake is an in-memory channel and provider: "ok@" accepts, "refuse@" refuses for good,
// "slow@" keeps the message and does not answer; an address without "@" is invalid. With
// no defect it meets the whole contract; each defect breaks one rule.
type fake struct {
	traits  delivery.Traits
	caps    channeltest.Capabilities
	defect  string
	mu      sync.Mutex
	got     []channeltest.Received
	counter int
}

func (f *fake) Channel() delivery.Channel              { return f }
func (f *fake) Capabilities() channeltest.Capabilities { return f.caps }
func (f *fake) Traits() delivery.Traits                { return f.traits }
func (f *fake) Received() []channeltest.Received {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]channeltest.Received(nil), f.got...)
}

func (f *fake) Recipient(b channeltest.Behaviour) string {
	return channeltest.Recipients{Accept: "ok@example.test", Refuse: "refuse@example.test", ApplyWithoutAnswer: "slow@example.test", Invalid: "not-an-address"}.For(b)
}

func (f *fake) ValidateRecipient(addr string) error {
	if f.defect == "accepts-invalid" || strings.Contains(addr, "@") {
		return nil
	}
	return errors.New("not an address")
}

func (f *fake) Send(_ context.Context, m delivery.Message) (string, error) {
	if err := f.ValidateRecipient(m.Recipient); err != nil {
		return "", automation.Permanent(err)
	}
	if m.Content == nil && f.traits.NeedsContent && f.defect != "sends-without-content" {
		return "", automation.Permanent(errors.New("no content"))
	}
	if len(m.Attachments) > 0 && !f.traits.Attachments && f.defect != "drops-attachments" {
		return "", automation.Permanent(errors.New("no attachments here"))
	}
	r := channeltest.Received{DeliveryKey: m.DeliveryKey, IdempotencyKey: "<" + m.DeliveryKey + "@fake>"}
	if m.Content != nil {
		r.Subject, r.Text = m.Content.Subject, m.Content.Text
	}
	if f.traits.Attachments {
		for _, a := range m.Attachments {
			a.Data = append([]byte(nil), a.Data...)
			if f.defect == "corrupts-attachment" {
				a.Data = a.Data[1:]
			}
			r.Attachments = append(r.Attachments, a)
		}
	}
	f.mu.Lock()
	f.counter++
	switch f.defect {
	case "wrong-subject":
		r.Subject = "(no subject)"
	case "idempotency-key-per-request":
		r.IdempotencyKey = fmt.Sprintf("<%s-%d@fake>", m.DeliveryKey, f.counter)
	case "idempotency-key-constant":
		r.IdempotencyKey = "<fake>"
	}
	if !(strings.HasPrefix(m.Recipient, "slow@") && f.defect == "unknown-not-applied") {
		f.got = append(f.got, r)
	}
	if f.defect == "sends-twice" {
		f.got = append(f.got, r)
	}
	f.mu.Unlock()
	switch {
	case strings.HasPrefix(m.Recipient, "refuse@"):
		if f.defect == "refusal-is-transient" {
			return "", errors.New("550 no such mailbox")
		}
		return "", automation.Permanent(errors.New("550 no such mailbox"))
	case strings.HasPrefix(m.Recipient, "slow@"):
		if f.defect == "timeout-is-transient" {
			return "", errors.New("timeout")
		}
		return "", automation.Unknown(errors.New("timeout after the data was sent"))
	}
	if f.defect == "empty-reference" {
		return "", nil
	}
	return "ref-" + m.DeliveryKey, nil
}

func good() *fake {
	return &fake{traits: delivery.Traits{Idempotent: true, NeedsContent: true, Attachments: true}, caps: channeltest.Capabilities{IdempotencyKey: "fake header"}}
}

func TestEveryCaseCanFail(t *testing.T) {
	t.Parallel()
	noAttachments := func(f *fake) { f.traits.Attachments = false }
	cases := []struct {
		caseName string
		defect   string
		mut      func(*fake)
	}{
		{"Declared", "", func(f *fake) { f.caps = channeltest.Capabilities{} }},
		{"Declared", "", func(f *fake) { f.caps.NoIdempotencyKey = "both declared" }},
		{"Declared", "", func(f *fake) { f.caps = channeltest.Capabilities{NoIdempotencyKey: "claims none"} }},
		{"Declared", "", func(f *fake) { noAttachments(f); f.caps.NoAttachmentContent = "explains a capability it lacks" }},
		{"Sent", "empty-reference", nil},
		{"Sent", "wrong-subject", nil},
		{"Sent", "sends-twice", nil},
		{"InvalidRecipient", "accepts-invalid", nil},
		{"NeedsContent", "sends-without-content", nil},
		{"PermanentFailure", "refusal-is-transient", nil},
		{"TimeoutIsUnknown", "timeout-is-transient", nil},
		{"TimeoutIsUnknown", "unknown-not-applied", nil},
		{"IdempotencyKey", "idempotency-key-per-request", nil},
		{"IdempotencyKey", "idempotency-key-constant", nil},
		{"IdempotencyKey", "", func(f *fake) { f.caps.IdempotencyKeyOf = func(k string) string { return "derived:" + k } }},
		{"Sent", "wrong-subject", func(f *fake) { f.caps.IdempotencyKeyOf = func(k string) string { return "<" + k + "@fake>" } }},
		{"Attachments", "corrupts-attachment", nil},
		{"Attachments", "drops-attachments", noAttachments},
	}
	byName := map[string]channeltest.Case{}
	for _, c := range channeltest.Cases() {
		byName[c.Name] = c
	}
	proved := map[string]bool{}
	for _, tc := range cases {
		c, ok := byName[tc.caseName]
		if !ok {
			t.Fatalf("no case %q", tc.caseName)
		}
		proved[tc.caseName] = true
		r := runCase(t, c, func(channeltest.TB) channeltest.Harness {
			f := good()
			f.defect = tc.defect
			if tc.mut != nil {
				tc.mut(f)
			}
			return f
		})
		if !r.failed {
			t.Errorf("%s passed a channel with defect %q; logs %q", tc.caseName, tc.defect, r.logs)
		}
	}
	for name := range byName {
		if !proved[name] {
			t.Errorf("case %s has no broken channel proving it can fail", name)
		}
	}
}

func TestCorrectChannelsPass(t *testing.T) {
	t.Parallel()
	variants := map[string]func(*fake){
		"all capabilities":        nil,
		"no attachments":          func(f *fake) { f.traits.Attachments = false },
		"derived idempotency key": func(f *fake) { f.caps.IdempotencyKeyOf = func(k string) string { return "<" + k + "@fake>" } },
		"no subject": func(f *fake) {
			f.defect = "wrong-subject"
			f.caps.NoSubject = "fake: no subject"
		},
		"no idempotency key": func(f *fake) {
			f.traits.Idempotent = false
			f.caps = channeltest.Capabilities{NoIdempotencyKey: "fake: none"}
		},
	}
	for name, mut := range variants {
		for _, c := range channeltest.Cases() {
			r := runCase(t, c, func(channeltest.TB) channeltest.Harness {
				f := good()
				if mut != nil {
					mut(f)
				}
				return f
			})
			if r.failed {
				t.Errorf("%s: %s failed a correct channel: %q", name, c.Name, r.logs)
			}
			wantSkip := name == "no idempotency key" && c.Name == "IdempotencyKey"
			if r.skipped != wantSkip {
				t.Errorf("%s: %s skipped=%v, want %v (%q)", name, c.Name, r.skipped, wantSkip, r.logs)
			}
		}
	}
}

// A channel that declares it cannot fail on the provider side skips those cases, saying
// why, and still runs the rest.
func TestDeclaredOptOutsSkipWithTheirReason(t *testing.T) {
	t.Parallel()
	const why = "writes to a local file; nothing can refuse it"
	for _, c := range channeltest.Cases() {
		r := runCase(t, c, func(channeltest.TB) channeltest.Harness {
			f := good()
			f.caps.NoProviderFailures = why
			f.caps.NoAttachmentContent = "the file is not shown"
			return f
		})
		wantSkip := c.Name == "PermanentFailure" || c.Name == "TimeoutIsUnknown" || c.Name == "Attachments"
		if r.failed || r.skipped != wantSkip {
			t.Errorf("%s: failed=%v skipped=%v, want skipped=%v: %q", c.Name, r.failed, r.skipped, wantSkip, r.logs)
		}
		if c.Name == "PermanentFailure" && (len(r.logs) == 0 || !strings.Contains(r.logs[len(r.logs)-1], why)) {
			t.Errorf("%s skip does not give the declared reason: %q", c.Name, r.logs)
		}
	}
}
