package channel_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channel"
	"github.com/automation-platform/automation/shared/delivery/channeltest"
)

// slowAnswer is how long a provider that applies a message waits before answering: well
// past the harnesses' channel timeouts, so the channel gives up first.
const slowAnswer = 3 * time.Second

func TestWebhookConformance(t *testing.T) {
	t.Parallel()
	for _, idempotent := range []bool{true, false} {
		t.Run(fmt.Sprintf("idempotent=%v", idempotent), func(t *testing.T) {
			t.Parallel()
			channeltest.Run(t, func(t channeltest.TB) channeltest.Harness { return newWebhookHarness(t, idempotent) })
		})
	}
}

func TestSMTPConformance(t *testing.T) {
	t.Parallel()
	channeltest.Run(t, func(t channeltest.TB) channeltest.Harness { return newSMTPHarness(t) })
}

// webhookHarness is an HTTPS receiver (httptest TLS) that checks each request's signature
// and records it; the URL path chooses its behaviour: /refuse answers 410 Gone, /slow
// records the request and drops the connection unanswered after slowAnswer (or when the
// client gives up first).
type webhookHarness struct {
	channeltest.Fixed
	t   channeltest.TB
	srv *httptest.Server
	mu  sync.Mutex
	got []channeltest.Received
}

func newWebhookHarness(t channeltest.TB, idempotent bool) *webhookHarness {
	h := &webhookHarness{t: t}
	h.srv = httptest.NewTLSServer(http.HandlerFunc(h.serve))
	t.Cleanup(h.srv.Close)
	ch, err := channel.NewWebhook(channel.WebhookConfig{Secret: secret, Timeout: 300 * time.Millisecond, Idempotent: idempotent, Client: h.srv.Client()})
	if err != nil {
		t.Fatalf("NewWebhook: %v", err)
	}
	h.Fixed = channeltest.Fixed{Ch: ch, Caps: channeltest.Capabilities{IdempotencyKey: channel.IdempotencyHeader + " header"},
		Addrs: channeltest.Recipients{Accept: h.srv.URL + "/hooks/reminders?token=abc", Refuse: h.srv.URL + "/refuse", ApplyWithoutAnswer: h.srv.URL + "/slow",
			Invalid: strings.Replace(h.srv.URL, "https://", "ftp://", 1) + "/hook"}}
	return h
}

func (h *webhookHarness) serve(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	if !channel.Verify(secret, r.Header.Get(channel.TimestampHeader), r.Header.Get(channel.SignatureHeader), body) {
		http.Error(w, "bad signature", http.StatusUnauthorized)
		return
	}
	var b channel.WebhookBody
	if err := json.Unmarshal(body, &b); err != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	h.mu.Lock()
	h.got = append(h.got, channeltest.Received{DeliveryKey: b.DeliveryKey, IdempotencyKey: r.Header.Get(channel.IdempotencyHeader), Subject: b.Subject, Text: b.Text})
	h.mu.Unlock()
	switch r.URL.Path {
	case "/refuse":
		http.Error(w, "this hook was removed", http.StatusGone)
	case "/slow":
		// Applied, never answered: the connection is dropped without a status line, even
		// when the request's context ends early (returning normally would answer 200).
		select {
		case <-time.After(slowAnswer):
		case <-r.Context().Done():
		}
		panic(http.ErrAbortHandler)
	default:
		w.Header().Set("X-Request-Id", "rcv-"+b.DeliveryKey)
	}
}

func (h *webhookHarness) Received() []channeltest.Received {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]channeltest.Received(nil), h.got...)
}

// smtpHarness is the go-smtp mailbox on 127.0.0.1 (plain, as a local relay) with the
// channel's command timeout at 500 ms: "nobody@" is refused with 550 and "slow@" is kept
// but answered only after slowAnswer.
type smtpHarness struct {
	channeltest.Fixed
	t   channeltest.TB
	box *mailbox
}

func newSMTPHarness(t channeltest.TB) *smtpHarness {
	h := &smtpHarness{t: t, box: &mailbox{}}
	port := startSMTP(t, h.box, nil, false)
	ch, err := channel.NewSMTP(channel.SMTPConfig{Host: "127.0.0.1", Port: port, Security: channel.SMTPPlain, From: "Reminders <noreply@example.test>",
		Timeout: 500 * time.Millisecond})
	if err != nil {
		t.Fatalf("NewSMTP: %v", err)
	}
	h.Fixed = channeltest.Fixed{Ch: ch, Caps: channeltest.Capabilities{IdempotencyKey: "Message-ID header"},
		Addrs: channeltest.Recipients{Accept: "amelia.nguyen@example.test", Refuse: "nobody@example.test", ApplyWithoutAnswer: "slow@example.test", Invalid: "Amelia <amelia.nguyen@example.test>"}}
	return h
}

func (h *smtpHarness) Received() []channeltest.Received {
	var out []channeltest.Received
	for _, m := range h.box.got() {
		r, err := parseMail(m.data)
		if err != nil {
			h.t.Fatalf("received mail: %v\n%s", err, m.data)
		}
		out = append(out, r)
	}
	return out
}

// parseMail reads a received message with net/mail and mime/multipart: the subject, the
// Message-ID, the X-Automation-Delivery header, the text/plain body and the attachments.
func parseMail(data string) (channeltest.Received, error) {
	msg, err := mail.ReadMessage(strings.NewReader(data))
	if err != nil {
		return channeltest.Received{}, err
	}
	var dec mime.WordDecoder
	subject, err := dec.DecodeHeader(msg.Header.Get("Subject"))
	if err != nil {
		return channeltest.Received{}, fmt.Errorf("subject: %w", err)
	}
	r := channeltest.Received{DeliveryKey: msg.Header.Get("X-Automation-Delivery"), IdempotencyKey: msg.Header.Get("Message-ID"), Subject: subject}
	err = walkPart(&r, msg.Header.Get("Content-Type"), msg.Header.Get("Content-Disposition"), msg.Header.Get("Content-Transfer-Encoding"), msg.Body)
	return r, err
}

func walkPart(r *channeltest.Received, contentType, disposition, encoding string, body io.Reader) error {
	mt, params, err := mime.ParseMediaType(contentType)
	if err != nil {
		return fmt.Errorf("content type %q: %w", contentType, err)
	}
	if strings.HasPrefix(mt, "multipart/") {
		mr := multipart.NewReader(body, params["boundary"])
		for {
			p, err := mr.NextPart() // decodes quoted-printable itself
			if err == io.EOF {
				return nil
			}
			if err != nil {
				return err
			}
			if err := walkPart(r, p.Header.Get("Content-Type"), p.Header.Get("Content-Disposition"), p.Header.Get("Content-Transfer-Encoding"), p); err != nil {
				return err
			}
		}
	}
	switch strings.ToLower(encoding) {
	case "base64":
		body = base64.NewDecoder(base64.StdEncoding, body)
	case "quoted-printable":
		body = quotedprintable.NewReader(body)
	}
	b, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	if d, dp, err := mime.ParseMediaType(disposition); err == nil && d == "attachment" {
		r.Attachments = append(r.Attachments, delivery.Attachment{FileName: dp["filename"], ContentType: mt, Data: b})
		return nil
	}
	if mt == "text/plain" {
		r.Text += string(bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")))
	}
	return nil
}
