package channel

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
	"unicode"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/google"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/store"
)

// PushChannelName is the push channel's name in deliveries and campaign actions.
const PushChannelName = "push"

// FCMScope is the OAuth scope the push channel asks for.
const FCMScope = "https://www.googleapis.com/auth/firebase.messaging"

// FCM data keys the push channel sets on every message (docs/channels.md#push): the app
// drops a message whose DataDeliveryKey it has shown already.
const (
	DataDeliveryKey = "deliveryKey"
	DataTemplate    = "template"
)

// PushDevices is what the push channel needs from the device registry.
type PushDevices interface {
	PushDeviceList(ctx context.Context, businessUnitID, customerID string) ([]store.PushDevice, error)
	PushDeviceRetire(ctx context.Context, p store.PushDeviceRetireParams) (store.PushDevice, error)
}

var _ PushDevices = (store.PushDeviceStore)(nil)

// FCMConfig configures the push channel.
type FCMConfig struct {
	// CredentialsJSON is a Google service-account key file (type "service_account"); its
	// token_uri is where access tokens come from, its project_id the default ProjectID.
	CredentialsJSON []byte
	// ProjectID is the Firebase project (default: the key file's project_id).
	ProjectID string
	// Endpoint is the FCM base URL (default https://fcm.googleapis.com; the simulator's URL
	// in tests and local runs).
	Endpoint string
	// Timeout bounds one send to one device, connection to answer (default 10 s).
	Timeout time.Duration
	// Devices is the device registry (required).
	Devices PushDevices
	// Client, when set, carries the requests (token and send); its Timeout is replaced.
	Client *http.Client
	// Clock stamps retirements (default automation.SystemClock).
	Clock automation.Clock
}

// FCM is the "push" channel: Firebase Cloud Messaging HTTP v1. The recipient is a customer
// id; the message fans out to the customer's active devices in the registry, one
// messages:send per token. See docs/channels.md#push for the outcome table; in short:
//
//   - accepted by at least one device and no device left unsure or to retry: sent (the
//     provider reference lists the message names);
//   - a device answered UNREGISTERED, or INVALID_ARGUMENT naming message.token: the token
//     is retired in the registry (only on that definite answer), the others go on;
//   - a device answered 429 or 503 (UNAVAILABLE) and none is unsure: retry after the
//     longest Retry-After (automation.RetryAfter); the retry sends to every device again,
//     and the app drops the repeat by its data.deliveryKey (FCM has no idempotency key);
//   - a device timed out after the request was written, lost the answer or answered 500:
//     UNKNOWN (it may have been shown; resending could show it twice);
//   - no active device, or every device refused for good: permanent.
type FCM struct {
	cfg     FCMConfig
	client  *http.Client
	project string
	tokens  *resettableTokens
}

// resettableTokens is a ReuseTokenSource that can be dropped: after FCM refuses an access
// token (401, e.g. the key was rotated or the token revoked) the next request fetches a new
// one instead of reusing the refused token until it expires.
type resettableTokens struct {
	newSource func() oauth2.TokenSource
	cur       atomic.Pointer[oauth2.TokenSource]
}

func (r *resettableTokens) Token() (*oauth2.Token, error) { return (*r.cur.Load()).Token() }

func (r *resettableTokens) reset() {
	s := r.newSource()
	r.cur.Store(&s)
}

var _ delivery.Channel = (*FCM)(nil)

// NewFCM validates cfg, reads the key file with golang.org/x/oauth2/google and returns the
// channel. Access tokens are fetched on first use and reused until they expire.
func NewFCM(cfg FCMConfig) (*FCM, error) {
	if cfg.Devices == nil {
		return nil, errors.New("fcm: a device registry is required")
	}
	var err error
	if cfg.Timeout, err = requestTimeout("fcm", cfg.Timeout); err != nil {
		return nil, err
	}
	if cfg.Endpoint == "" {
		cfg.Endpoint = "https://fcm.googleapis.com"
	}
	cfg.Endpoint = strings.TrimRight(cfg.Endpoint, "/")
	if cfg.Clock == nil {
		cfg.Clock = automation.SystemClock{}
	}
	jwt, err := google.JWTConfigFromJSON(cfg.CredentialsJSON, FCMScope)
	if err != nil {
		return nil, fmt.Errorf("fcm: service-account credentials: %w", err)
	}
	var file struct {
		ProjectID string `json:"project_id"`
	}
	_ = json.Unmarshal(cfg.CredentialsJSON, &file)
	project := cmp.Or(cfg.ProjectID, file.ProjectID)
	if project == "" {
		return nil, errors.New("fcm: no project id (neither ProjectID nor the key file's project_id)")
	}
	base := sendClient(cfg.Client, cfg.Timeout)
	// The token source fetches with base; the send client adds the bearer token to each
	// request. The context only carries the client (oauth2.HTTPClient), it is never cancelled.
	tctx := context.WithValue(context.Background(), oauth2.HTTPClient, base)
	ts := &resettableTokens{newSource: func() oauth2.TokenSource { return oauth2.ReuseTokenSource(nil, jwt.TokenSource(tctx)) }}
	ts.reset()
	client := &http.Client{Transport: &oauth2.Transport{Source: ts, Base: base.Transport}, Timeout: cfg.Timeout,
		CheckRedirect: base.CheckRedirect}
	return &FCM{cfg: cfg, client: client, project: project, tokens: ts}, nil
}

// Traits implements delivery.Channel: not idempotent (FCM has no idempotency key), and the
// rendered template gives the notification's title and body.
func (f *FCM) Traits() delivery.Traits {
	return delivery.Traits{NeedsContent: true, TemplateKinds: []string{delivery.KindPush, delivery.KindMessage}}
}

// MaxCustomerIDLength bounds a push recipient (a customer id).
const MaxCustomerIDLength = 200

// ValidateRecipient implements delivery.Channel: the recipient is a customer id of 1..200
// characters without spaces or control characters.
func (f *FCM) ValidateRecipient(addr string) error { return ValidateCustomerID(addr) }

// ValidateCustomerID checks a customer id used as a push recipient (and in the device
// registry's path).
func ValidateCustomerID(id string) error {
	if id == "" {
		return errors.New("customer id is empty")
	}
	if len(id) > MaxCustomerIDLength {
		return fmt.Errorf("customer id longer than %d bytes", MaxCustomerIDLength)
	}
	for _, r := range id {
		if unicode.IsSpace(r) || unicode.IsControl(r) || r == '/' {
			return fmt.Errorf("customer id %q contains a space, control character or '/'", id)
		}
	}
	return nil
}

// ValidatePushToken checks an FCM registration token before it is stored: 1..store.MaxPushTokenBytes (4000) bytes of
// the characters FCM tokens use (letters, digits, '_', '-', ':').
func ValidatePushToken(tok string) error {
	if tok == "" {
		return errors.New("token is empty")
	}
	if len(tok) > store.MaxPushTokenBytes {
		return fmt.Errorf("token is %d bytes, over FCM's bound of %d", len(tok), store.MaxPushTokenBytes)
	}
	for _, r := range tok {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == ':') {
			return fmt.Errorf("token contains %q; FCM tokens use letters, digits, '_', '-' and ':'", r)
		}
	}
	return nil
}

// fcmMessage is the HTTP v1 message (https://firebase.google.com/docs/reference/fcm/rest/v1/projects.messages).
type fcmMessage struct {
	Token        string            `json:"token"`
	Notification *fcmNotification  `json:"notification,omitempty"`
	Data         map[string]string `json:"data"`
	Android      fcmAndroid        `json:"android"`
	APNS         fcmAPNS           `json:"apns"`
}

type fcmNotification struct {
	Title string `json:"title,omitempty"`
	Body  string `json:"body,omitempty"`
}

type fcmAndroid struct {
	CollapseKey string `json:"collapse_key"`
}

type fcmAPNS struct {
	Headers map[string]string `json:"headers"`
}

// CollapseID is the delivery key as an APNs collapse id (at most 64 bytes): the key itself
// when it fits, else "dk-" and the hex of its SHA-256's first 30 bytes.
func CollapseID(deliveryKey string) string {
	if len(deliveryKey) <= 64 {
		return deliveryKey
	}
	sum := sha256.Sum256([]byte(deliveryKey))
	return "dk-" + hex.EncodeToString(sum[:30])
}

// pushData is the data map: the payload's top-level string, number and boolean members as
// strings (FCM data values are strings), then a push template's rendered data members
// (Content.Data), then the delivery key and the template, which win.
func pushData(m delivery.Message) map[string]string {
	data := map[string]string{}
	var payload map[string]json.RawMessage
	if len(m.Payload) > 0 && json.Unmarshal(m.Payload, &payload) == nil {
		for k, raw := range payload {
			if delivery.PushDataKeyReserved(k) {
				continue // reserved by FCM, or set below
			}
			var s string
			if json.Unmarshal(raw, &s) == nil {
				data[k] = s
				continue
			}
			if t := strings.TrimSpace(string(raw)); t != "" && t[0] != '{' && t[0] != '[' && t != "null" {
				data[k] = t
			}
		}
	}
	if m.Content != nil {
		for k, v := range m.Content.Data {
			data[k] = v
		}
	}
	data[DataDeliveryKey] = m.DeliveryKey
	data[DataTemplate] = m.Template
	return data
}

// deviceOutcome is one device's answer.
type deviceOutcome int

const (
	outcomeSent deviceOutcome = iota
	outcomeRetired
	outcomeRefused
	outcomeRetry
	outcomeUnknown
)

// Send implements delivery.Channel.
func (f *FCM) Send(ctx context.Context, m delivery.Message) (string, error) {
	if err := refuseUnsendable("fcm", m, f.ValidateRecipient(m.Recipient), "push sends none"); err != nil {
		return "", err
	}
	devices, err := f.cfg.Devices.PushDeviceList(ctx, m.BusinessUnitID, m.Recipient)
	if err != nil {
		return "", fmt.Errorf("fcm: devices of %s: %w", m.Recipient, err)
	}
	if len(devices) == 0 {
		return "", automation.Permanent(fmt.Errorf("fcm: customer %s has no registered device", m.Recipient))
	}
	text := m.Content.Text
	var reached, retired, problems []string
	var retryAfter time.Duration
	counts := map[deviceOutcome]int{}
	for _, d := range devices {
		ref, outcome, after, err := f.sendOne(ctx, m, d.Token, text)
		counts[outcome]++
		switch outcome {
		case outcomeSent:
			reached = append(reached, ref+" to "+maskToken(d.Token))
			continue
		case outcomeRetired:
			_, rerr := f.cfg.Devices.PushDeviceRetire(ctx, store.PushDeviceRetireParams{BusinessUnitID: m.BusinessUnitID,
				CustomerID: m.Recipient, Token: d.Token, Reason: ref, Now: f.cfg.Clock.Now().UTC()})
			if rerr != nil && !errors.Is(rerr, store.ErrNotFound) {
				// Not retired: the next send asks FCM again and gets the same answer.
				problems = append(problems, fmt.Sprintf("retiring %s: %v", maskToken(d.Token), rerr))
			} else {
				retired = append(retired, "retired "+maskToken(d.Token)+" ("+ref+")")
			}
		case outcomeRetry:
			retryAfter = max(retryAfter, after)
		}
		problems = append(problems, fmt.Sprintf("%s: %v", maskToken(d.Token), err))
	}
	summary := strings.Join(problems, "; ")
	switch {
	case counts[outcomeUnknown] > 0:
		return "", automation.Unknown(fmt.Errorf("fcm: %d of %d device(s) may have got %s: %s", counts[outcomeUnknown], len(devices), m.DeliveryKey, summary))
	case counts[outcomeRetry] > 0:
		return "", automation.RetryAfter(retryAfter, fmt.Errorf("fcm: %d of %d device(s) not reached, retry: %s", counts[outcomeRetry], len(devices), summary))
	case len(reached) > 0:
		return pushReference(reached, retired), nil
	}
	return "", automation.Permanent(fmt.Errorf("fcm: no device of customer %s took %s: %s", m.Recipient, m.DeliveryKey, summary))
}

// pushReference is a sent push's provider reference (the support and console views show it):
// each device reached as "<FCM message name> to <masked token>", then each token this send
// retired as "retired <masked token> (<FCM error code>)", joined by "; " and cut to
// store.MaxProviderReference characters (ending in "…" when cut).
func pushReference(reached, retired []string) string {
	ref := strings.Join(append(reached, retired...), "; ")
	if r := []rune(ref); len(r) > store.MaxProviderReference {
		ref = string(r[:store.MaxProviderReference-1]) + "…"
	}
	return ref
}

// maskToken shows a token's first and last 6 characters (logs, errors).
func maskToken(tok string) string {
	if len(tok) <= 16 {
		return "token …" + tok[len(tok)/2:]
	}
	return "token " + tok[:6] + "…" + tok[len(tok)-6:]
}

// sendOne sends to one token. For outcomeRetired ref is the FCM error code that retired it.
func (f *FCM) sendOne(ctx context.Context, m delivery.Message, token, text string) (ref string, outcome deviceOutcome, after time.Duration, err error) {
	body, err := json.Marshal(struct {
		Message fcmMessage `json:"message"`
	}{fcmMessage{Token: token, Notification: &fcmNotification{Title: m.Content.Subject, Body: text}, Data: pushData(m),
		Android: fcmAndroid{CollapseKey: m.DeliveryKey}, APNS: fcmAPNS{Headers: map[string]string{"apns-collapse-id": CollapseID(m.DeliveryKey)}}}})
	if err != nil {
		return "", outcomeRefused, 0, err
	}
	ctx, wrote := watchWrite(ctx)
	url := f.cfg.Endpoint + "/v1/projects/" + f.project + "/messages:send"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return "", outcomeRefused, 0, err
	}
	req.GetBody = nil // never replayed by net/http: FCM does not deduplicate
	req.Header.Set("Content-Type", "application/json; charset=UTF-8")
	resp, err := f.client.Do(req)
	if err != nil {
		var re *oauth2.RetrieveError
		switch {
		case errors.As(err, &re):
			// No access token: nothing was sent. Bad credentials stay a retry (deliveries
			// wait for the fix instead of failing for good).
			return "", outcomeRetry, 0, fmt.Errorf("access token: %w", err)
		case wrote.Load():
			return "", outcomeUnknown, 0, fmt.Errorf("no answer after the request was sent: %w", err)
		}
		return "", outcomeRetry, 0, fmt.Errorf("request not sent: %w", err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode == http.StatusOK {
		var ok struct {
			Name string `json:"name"`
		}
		if json.Unmarshal(raw, &ok) != nil || ok.Name == "" {
			return "", outcomeUnknown, 0, fmt.Errorf("answered 200 without a message name: %.200s", raw)
		}
		return ok.Name, outcomeSent, 0, nil
	}
	code, field, msg := fcmErrorOf(raw)
	desc := fmt.Errorf("answered %s %s: %s", resp.Status, code, msg)
	retryAfter := parseRetryAfter(resp.Header.Get("Retry-After"), f.cfg.Clock.Now())
	switch {
	case code == "UNREGISTERED":
		return code, outcomeRetired, 0, desc
	case code == "INVALID_ARGUMENT" && field == "message.token":
		return code, outcomeRetired, 0, desc
	case resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode == http.StatusServiceUnavailable || code == "UNAVAILABLE" || code == "QUOTA_EXCEEDED":
		return "", outcomeRetry, retryAfter, desc
	case resp.StatusCode == http.StatusUnauthorized:
		f.tokens.reset() // the token was refused: nothing sent; the retry fetches a new one
		return "", outcomeRetry, 0, desc
	case resp.StatusCode >= 500:
		return "", outcomeUnknown, 0, desc
	}
	return "", outcomeRefused, 0, desc
}

// fcmErrorOf reads a google.rpc.Status answer: the FcmError errorCode (else the status),
// the first BadRequest field violation, and the message.
func fcmErrorOf(raw []byte) (code, field, msg string) {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Status  string `json:"status"`
			Details []struct {
				Type            string `json:"@type"`
				ErrorCode       string `json:"errorCode"`
				FieldViolations []struct {
					Field string `json:"field"`
				} `json:"fieldViolations"`
			} `json:"details"`
		} `json:"error"`
	}
	if json.Unmarshal(raw, &e) != nil {
		return "", "", fmt.Sprintf("%.200s", raw)
	}
	code = e.Error.Status
	for _, d := range e.Error.Details {
		if strings.HasSuffix(d.Type, "google.firebase.fcm.v1.FcmError") && d.ErrorCode != "" {
			code = d.ErrorCode
		}
		if strings.HasSuffix(d.Type, "google.rpc.BadRequest") && len(d.FieldViolations) > 0 && field == "" {
			field = d.FieldViolations[0].Field
		}
	}
	return code, field, e.Error.Message
}

// parseRetryAfter reads Retry-After as seconds or an HTTP date (RFC 9110 section 10.2.3); 0 when
// absent or unreadable. Bounded to an hour.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	var d time.Duration
	if n, err := strconv.Atoi(v); err == nil {
		d = time.Duration(n) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	}
	return min(max(d, 0), time.Hour)
}
