package channel

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"time"

	"github.com/google/uuid"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/phonenumber"
)

// SMSChannelName is the SMS channel's name in deliveries and campaign actions.
const SMSChannelName = "sms"

// ACSSMSAPIVersion is the ACS SMS REST API version the channel speaks.
const ACSSMSAPIVersion = "2021-03-07"

// MaxSMSTextLength bounds one message's text in characters (ACS splits long texts into
// segments and bills each; docs/channels.md#sms).
const MaxSMSTextLength = 2048

// repeatabilityNamespace is the UUIDv5 namespace of repeatabilityRequestId.
var repeatabilityNamespace = uuid.MustParse("0b3f6a8e-2c1d-5e4f-8a9b-7c6d5e4f3a2b")

// RepeatabilityRequestID is the ACS repeatabilityRequestId of a delivery: the UUIDv5 of its
// delivery key (ACS requires a GUID), so every attempt of one delivery carries the same id.
func RepeatabilityRequestID(deliveryKey string) string {
	return uuid.NewSHA1(repeatabilityNamespace, []byte(deliveryKey)).String()
}

// ValidatePhoneNumber checks an E.164 number ("+" and 7 to 15 digits, no spaces) whose
// country calling code exists and whose length is possible for that country: the one rule
// of shared/phonenumber (github.com/nyaruka/phonenumbers, Google's libphonenumber metadata).
func ValidatePhoneNumber(n string) error { return phonenumber.Validate(n) }

// SMSConfig configures the SMS channel.
type SMSConfig struct {
	// ConnectionString is the ACS resource's ("endpoint=…;accesskey=…").
	ConnectionString string
	// From is the sender: an E.164 number or a short code the resource owns.
	From string
	// Timeout bounds one request (default 10 s).
	Timeout time.Duration
	// Client, when set, carries the requests; its Timeout is replaced.
	Client *http.Client
	// Clock signs the requests (x-ms-date; default automation.SystemClock).
	Clock automation.Clock
}

// repeatabilityFirstSent is the ACS repeatabilityFirstSent of a delivery (the SMS body's
// member, the WhatsApp header): the delivery's CreatedOn, else its SentOn, in RFC 1123 GMT
// (http.TimeFormat), the same on every attempt of the delivery.
func repeatabilityFirstSent(m delivery.Message) string {
	first := m.CreatedOn
	if first.IsZero() {
		first = m.SentOn
	}
	return first.UTC().Format(http.TimeFormat)
}

// SMS is the "sms" channel: ACS SMS, POST {endpoint}/sms?api-version=2021-03-07, signed with
// the access key (ACSSign). Each message carries repeatabilityRequestId =
// RepeatabilityRequestID(delivery key) and repeatabilityFirstSent = the delivery's
// CreatedOn (else its SentOn), so ACS deduplicates a resend: the channel is Idempotent, and
// an UNKNOWN outcome (a timeout, a 5xx, a lost answer) is resent with the same id.
// Answers: 202 with the recipient successful = sent (reference: the messageId); the
// recipient refused (invalid or blocked number, 4xx) = permanent; repeatabilityResult
// "rejected" (the id is known with another request, or past ACS's window) = UNKNOWN;
// 429 = retry after Retry-After; 401/403 = retry (nothing sent: fix the key); other 4xx =
// permanent; 5xx or no answer after the request was written = UNKNOWN.
type SMS struct {
	cfg SMSConfig
	acs acsClient
}

var _ delivery.Channel = (*SMS)(nil)

// NewSMS validates cfg and returns the channel.
func NewSMS(cfg SMSConfig) (*SMS, error) {
	acs, timeout, err := newACSClient(SMSChannelName, cfg.ConnectionString, cfg.Timeout, cfg.Client, cfg.Clock)
	if err != nil {
		return nil, err
	}
	if err := ValidatePhoneNumber(cfg.From); err != nil && !regexp.MustCompile(`^[0-9]{5,6}$`).MatchString(cfg.From) {
		return nil, fmt.Errorf("sms: from: %w (or a 5 or 6 digit short code)", err)
	}
	cfg.Timeout, cfg.Clock = timeout, acs.clock
	return &SMS{cfg: cfg, acs: acs}, nil
}

// Traits implements delivery.Channel: ACS deduplicates by repeatabilityRequestId.
func (s *SMS) Traits() delivery.Traits {
	return delivery.Traits{Idempotent: true, NeedsContent: true, TemplateKinds: []string{delivery.KindSMS, delivery.KindMessage}}
}

// ValidateRecipient implements delivery.Channel: an E.164 number (ValidatePhoneNumber).
func (s *SMS) ValidateRecipient(addr string) error { return ValidatePhoneNumber(addr) }

// SMSRequest is the ACS send body.
type SMSRequest struct {
	From           string         `json:"from"`
	SMSRecipients  []SMSRecipient `json:"smsRecipients"`
	Message        string         `json:"message"`
	SMSSendOptions struct {
		EnableDeliveryReport bool   `json:"enableDeliveryReport"`
		Tag                  string `json:"tag,omitempty"`
	} `json:"smsSendOptions"`
}

// SMSRecipient is one recipient of SMSRequest.
type SMSRecipient struct {
	To                     string `json:"to"`
	RepeatabilityRequestID string `json:"repeatabilityRequestId,omitempty"`
	RepeatabilityFirstSent string `json:"repeatabilityFirstSent,omitempty"` // RFC 1123, GMT
}

// SMSSendResult is one recipient's answer.
type SMSSendResult struct {
	To                  string  `json:"to"`
	MessageID           string  `json:"messageId,omitempty"`
	HTTPStatusCode      int     `json:"httpStatusCode"`
	RepeatabilityResult string  `json:"repeatabilityResult,omitempty"` // accepted | rejected
	Successful          bool    `json:"successful"`
	ErrorMessage        *string `json:"errorMessage,omitempty"`
}

// SMSResponse is the ACS answer body.
type SMSResponse struct {
	Value []SMSSendResult `json:"value"`
}

// Send implements delivery.Channel.
func (s *SMS) Send(ctx context.Context, m delivery.Message) (string, error) {
	if err := s.ValidateRecipient(m.Recipient); err != nil {
		return "", automation.Permanent(err)
	}
	if m.Content == nil || m.Content.Text == "" {
		return "", automation.Permanent(fmt.Errorf("sms: message %s has no rendered text", m.DeliveryKey))
	}
	if len(m.Attachments) > 0 {
		return "", automation.Permanent(fmt.Errorf("sms: message %s carries %d attachment(s); SMS sends none", m.DeliveryKey, len(m.Attachments)))
	}
	if n := len([]rune(m.Content.Text)); n > MaxSMSTextLength {
		return "", automation.Permanent(fmt.Errorf("sms: message %s is %d characters, over %d", m.DeliveryKey, n, MaxSMSTextLength))
	}
	body := SMSRequest{From: s.cfg.From, Message: m.Content.Text, SMSRecipients: []SMSRecipient{{To: m.Recipient,
		RepeatabilityRequestID: RepeatabilityRequestID(m.DeliveryKey), RepeatabilityFirstSent: repeatabilityFirstSent(m)}}}
	body.SMSSendOptions.EnableDeliveryReport = true
	body.SMSSendOptions.Tag = m.DeliveryKey
	raw, err := json.Marshal(body)
	if err != nil {
		return "", automation.Permanent(err)
	}
	ans, err := s.acs.post(ctx, "/sms?api-version="+ACSSMSAPIVersion, raw, nil)
	if err != nil {
		return "", err
	}
	if c := ans.Code; c != http.StatusAccepted && c != http.StatusOK {
		return "", s.acs.refusal(ans)
	}
	var out SMSResponse
	if err := json.Unmarshal(ans.Body, &out); err != nil || len(out.Value) != 1 {
		return "", automation.Unknown(fmt.Errorf("%s: not one recipient result", ans.Status))
	}
	r := out.Value[0]
	switch {
	case r.RepeatabilityResult == "rejected":
		return "", automation.Unknown(fmt.Errorf("%s: ACS rejected the repeatability id (another request has it, or it is past ACS's window)", ans.Status))
	case r.Successful && r.MessageID != "":
		return r.MessageID, nil
	case r.HTTPStatusCode >= 400 && r.HTTPStatusCode < 500:
		return "", automation.Permanent(errors.New(ans.Status))
	}
	return "", automation.Unknown(errors.New(ans.Status))
}
