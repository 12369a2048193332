package channel

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
)

// Webhook request headers. The signature is HMAC-SHA256, keyed with the shared secret, over
// the bytes TimestampHeader + "." + the request body; SignatureHeader carries
// "v1=" + its lower-case hex. Receivers recompute it, compare in constant time and reject a
// timestamp more than a few minutes away from their clock (replays).
//
// The same requests are also signed as the Standard Webhooks specification does
// (https://www.standardwebhooks.com, docs/channels.md#standard-webhooks), so a receiver can
// verify them with that specification's libraries: StandardIDHeader carries the delivery
// key (the same on every retry), StandardTimestampHeader the Unix seconds, and
// StandardSignatureHeader "v1,<base64 HMAC-SHA256 over id.timestamp.body>" once per signing
// secret (space-separated during a rotation). The receiver's secret is
// StandardSecret(secret) ("whsec_" + base64 of the key bytes). The X-Automation-* headers
// stay during the transition.
const (
	SignatureHeader   = "X-Automation-Signature"
	TimestampHeader   = "X-Automation-Timestamp" // Unix seconds (UTC) when the request was signed
	IdempotencyHeader = "Idempotency-Key"        // the delivery key: the same for every retry
	DeliveryHeader    = "X-Automation-Delivery"  // the delivery key again, for receivers' logs

	StandardIDHeader        = "webhook-id"
	StandardTimestampHeader = "webhook-timestamp"
	StandardSignatureHeader = "webhook-signature"
)

// StandardSecret is the Standard Webhooks form of a signing key, which receivers configure
// in their library: "whsec_" + base64(key).
func StandardSecret(key []byte) string { return "whsec_" + base64.StdEncoding.EncodeToString(key) }

// ParseStandardSecret reads a "whsec_…" secret (the prefix is optional) into key bytes.
func ParseStandardSecret(s string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(s, "whsec_"))
	if err != nil || len(k) == 0 {
		return nil, errors.New("webhook: a Standard Webhooks secret is whsec_ and base64")
	}
	return k, nil
}

// StandardSign returns the webhook-signature value for body with message id and timestamp
// (Unix seconds), one "v1,<base64>" entry per key, space-separated, in the keys' order.
func StandardSign(keys [][]byte, id, timestamp string, body []byte) string {
	var parts []string
	for _, k := range keys {
		m := hmac.New(sha256.New, k)
		m.Write([]byte(id + "." + timestamp + "."))
		m.Write(body)
		parts = append(parts, "v1,"+base64.StdEncoding.EncodeToString(m.Sum(nil)))
	}
	return strings.Join(parts, " ")
}

// WebhookBody is the JSON body POSTed to the recipient URL.
type WebhookBody struct {
	DeliveryKey    string          `json:"deliveryKey"`
	SchedulerKey   string          `json:"schedulerKey"`
	BusinessUnitID string          `json:"businessUnitId"`
	Template       string          `json:"template"`
	Subject        string          `json:"subject"`
	Text           string          `json:"text,omitempty"`
	HTML           string          `json:"html,omitempty"`
	Payload        json.RawMessage `json:"payload,omitempty"`
	SentOn         time.Time       `json:"sentOn"`
}

// WebhookConfig configures the webhook channel.
type WebhookConfig struct {
	// Secret is the HMAC-SHA256 key shared with the receivers (at least 16 bytes).
	Secret []byte
	// PreviousSecrets are keys being rotated out: requests are signed with Secret and each
	// of them in webhook-signature (Standard Webhooks), so receivers not yet given the new
	// secret keep verifying. The X-Automation-Signature header uses Secret only.
	PreviousSecrets [][]byte
	// Timeout bounds one request, connection to response headers (default 10 s).
	Timeout time.Duration
	// Idempotent declares that receivers deduplicate by Idempotency-Key, so the dispatcher
	// may resend after an UNKNOWN outcome. False: an UNKNOWN outcome goes to manual
	// resolution, and the HTTP client never replays a request it wrote (see Send).
	Idempotent bool
	// AllowLocalHTTP accepts http://localhost, http://127.0.0.1 and http://[::1] URLs (local
	// mode only); every other URL must be https.
	AllowLocalHTTP bool
	// AllowPrivateNetworks lets webhooks reach non-public addresses (receivers inside the
	// VNet). False (the default outside local mode): a URL that resolves to a loopback,
	// private, link-local, CGNAT, unspecified or multicast address is a permanent failure
	// (ErrAddressNotAllowed), checked on the address actually dialled. Local mode
	// (AllowLocalHTTP) allows them.
	AllowPrivateNetworks bool
	// Client, when set, is used for requests (its Transport, e.g. a test CA; no address
	// guard is added to it); its Timeout and redirect policy are replaced.
	Client *http.Client
	// Clock signs the timestamp (default: the dispatcher's SentOn of the message).
	Clock automation.Clock
}

// Webhook is the "webhook" channel: an HTTPS POST of the rendered message to the recipient
// URL. 2xx = sent (provider reference: the X-Request-Id answer header, else the delivery key);
// 408, 425 and 429 = not processed, retry; any other 4xx = permanent failure; 3xx = permanent
// (redirects are not followed); 5xx, or a failure after the request was written (timeout,
// reset) = UNKNOWN; a failure before it was written (DNS, refused, TLS) = retry. A message
// with attachments is a permanent failure (the channel sends none).
type Webhook struct {
	cfg    WebhookConfig
	client *http.Client
}

var _ delivery.Channel = (*Webhook)(nil)

// NewWebhook validates cfg and returns the channel.
func NewWebhook(cfg WebhookConfig) (*Webhook, error) {
	if len(cfg.Secret) < 16 {
		return nil, errors.New("webhook: the signing secret must be at least 16 bytes")
	}
	for _, p := range cfg.PreviousSecrets {
		if len(p) < 16 {
			return nil, errors.New("webhook: a previous signing secret must be at least 16 bytes")
		}
	}
	var err error
	if cfg.Timeout, err = requestTimeout("webhook", cfg.Timeout); err != nil {
		return nil, err
	}
	c := sendClient(cfg.Client, cfg.Timeout)
	if cfg.Client == nil && !cfg.AllowPrivateNetworks && !cfg.AllowLocalHTTP {
		c.Transport = guardedTransport()
	}
	return &Webhook{cfg: cfg, client: c}, nil
}

// Traits implements delivery.Channel.
func (w *Webhook) Traits() delivery.Traits {
	return delivery.Traits{Idempotent: w.cfg.Idempotent, NeedsContent: true}
}

// ValidateRecipient implements delivery.Channel: an absolute https URL with a host, a port
// (if any) in 1..65535 and no user information (http only to localhost in local mode), at
// most 2000 characters.
func (w *Webhook) ValidateRecipient(addr string) error {
	return ValidateWebhookURL(addr, w.cfg.AllowLocalHTTP)
}

// ValidateWebhookURL checks a webhook URL (see Webhook.ValidateRecipient).
func ValidateWebhookURL(addr string, allowLocalHTTP bool) error {
	if len(addr) > 2000 {
		return errors.New("webhook URL longer than 2000 characters")
	}
	u, err := url.Parse(addr)
	if err != nil {
		return fmt.Errorf("webhook URL does not parse: %w", err)
	}
	if u.Host == "" || u.Hostname() == "" || !u.IsAbs() {
		return fmt.Errorf("webhook URL %q is not an absolute URL with a host", addr)
	}
	if u.User != nil {
		return errors.New("webhook URL must not carry user information")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.Atoi(p); err != nil || n < 1 || n > 65535 {
			return fmt.Errorf("webhook URL %q: port %s outside 1..65535", host(addr), p)
		}
	}
	switch u.Scheme {
	case "https":
		return nil
	case "http":
		if allowLocalHTTP && isLoopbackHost(u.Hostname()) {
			return nil
		}
		if allowLocalHTTP {
			return fmt.Errorf("webhook URL %q: http is allowed only to localhost in local mode", addr)
		}
		return fmt.Errorf("webhook URL %q must use https", addr)
	default:
		return fmt.Errorf("webhook URL %q must use https", addr)
	}
}

func isLoopbackHost(h string) bool {
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

// Sign returns the SignatureHeader value for body signed at timestamp (Unix seconds).
func Sign(secret []byte, timestamp string, body []byte) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(timestamp))
	m.Write([]byte("."))
	m.Write(body)
	return "v1=" + hex.EncodeToString(m.Sum(nil))
}

// Verify checks a request's signature (for receivers and tests): sig must equal
// Sign(secret, timestamp, body), compared in constant time.
func Verify(secret []byte, timestamp, sig string, body []byte) bool {
	return hmac.Equal([]byte(sig), []byte(Sign(secret, timestamp, body)))
}

// Send implements delivery.Channel.
func (w *Webhook) Send(ctx context.Context, m delivery.Message) (string, error) {
	// Traits do not say Attachments: sending the body alone would drop the file silently.
	if err := refuseUnsendable("webhook", m, w.ValidateRecipient(m.Recipient), "the webhook channel sends none"); err != nil {
		return "", err
	}
	body, err := json.Marshal(WebhookBody{DeliveryKey: m.DeliveryKey, SchedulerKey: m.SchedulerKey, BusinessUnitID: m.BusinessUnitID,
		Template: m.Template, Subject: m.Content.Subject, Text: m.Content.Text, HTML: m.Content.HTML, Payload: m.Payload, SentOn: m.SentOn.UTC()})
	if err != nil {
		return "", automation.Permanent(err)
	}
	signedAt := m.SentOn
	if w.cfg.Clock != nil {
		signedAt = w.cfg.Clock.Now()
	}
	ts := strconv.FormatInt(signedAt.Unix(), 10)
	ctx, wrote := watchWrite(ctx)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, m.Recipient, bytes.NewReader(body))
	if err != nil {
		return "", automation.Permanent(err)
	}
	if !w.cfg.Idempotent {
		// net/http replays a request that carries an Idempotency-Key header (and can rewind
		// its body) on a new connection when a kept-alive one breaks after it was written:
		// a second delivery to a receiver that does not deduplicate. Without GetBody the
		// client never replays a written body; the dispatcher decides instead.
		req.GetBody = nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", "automation-webhook/1")
	req.Header.Set(IdempotencyHeader, m.DeliveryKey)
	req.Header.Set(DeliveryHeader, m.DeliveryKey)
	req.Header.Set(TimestampHeader, ts)
	req.Header.Set(SignatureHeader, Sign(w.cfg.Secret, ts, body))
	req.Header.Set(StandardIDHeader, m.DeliveryKey)
	req.Header.Set(StandardTimestampHeader, ts)
	req.Header.Set(StandardSignatureHeader, StandardSign(append([][]byte{w.cfg.Secret}, w.cfg.PreviousSecrets...), m.DeliveryKey, ts, body))
	resp, err := w.client.Do(req)
	if err != nil {
		if wrote.Load() {
			return "", automation.Unknown(fmt.Errorf("webhook %s: no answer after the request was sent: %w", host(m.Recipient), err))
		}
		if errors.Is(err, ErrAddressNotAllowed) {
			return "", automation.Permanent(fmt.Errorf("webhook %s: %w", host(m.Recipient), err))
		}
		return "", fmt.Errorf("webhook %s: request not sent: %w", host(m.Recipient), err)
	}
	defer resp.Body.Close()
	snippet, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	status := fmt.Sprintf("webhook %s answered %s", host(m.Recipient), resp.Status)
	if s := strings.TrimSpace(string(snippet)); s != "" {
		status += ": " + s
	}
	switch c := resp.StatusCode; {
	case c >= 200 && c < 300:
		if ref := resp.Header.Get("X-Request-Id"); ref != "" {
			return ref, nil
		}
		return m.DeliveryKey, nil
	case c == http.StatusRequestTimeout || c == http.StatusTooEarly || c == http.StatusTooManyRequests:
		return "", errors.New(status)
	case c >= 500:
		return "", automation.Unknown(errors.New(status))
	default:
		return "", automation.Permanent(errors.New(status))
	}
}

// host names the receiver in errors without the path or query (which may hold tokens).
func host(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Scheme + "://" + u.Host
	}
	return "(unparsable URL)"
}
