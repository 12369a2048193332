package channel

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net/mail"
	"strings"
	"time"

	gomail "github.com/wneessen/go-mail"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
)

// SMTPSecurity is how the SMTP connection is protected.
type SMTPSecurity string

// SMTP security modes.
const (
	SMTPPlain         SMTPSecurity = "none"          // no TLS (local relays and tests only)
	SMTPStartTLS      SMTPSecurity = "starttls"      // STARTTLS required; fail if the server lacks it
	SMTPOpportunistic SMTPSecurity = "opportunistic" // STARTTLS when offered, else plain
	SMTPImplicitTLS   SMTPSecurity = "tls"           // TLS from the first byte (SMTPS, port 465)
)

// SMTPConfig configures the "email" channel.
type SMTPConfig struct {
	Host     string
	Port     int          // default 587 (465 for SMTPImplicitTLS)
	Security SMTPSecurity // default SMTPStartTLS
	// TLSConfig, when set, is used for STARTTLS and implicit TLS (e.g. a private CA); its
	// ServerName defaults to Host.
	TLSConfig *tls.Config
	// Username and Password enable SMTP AUTH (PLAIN or LOGIN, whichever the server offers,
	// only over TLS unless Security is SMTPPlain).
	Username, Password string
	// From is the sender address (net/mail syntax, e.g. "Reminders <noreply@example.test>").
	From string
	// Timeout bounds connecting and each command (default 30 s).
	Timeout time.Duration
	// HELO is the name announced to the server (default "localhost").
	HELO string
	// MessageIDDomain is the right-hand side of Message-ID <deliveryKey@domain> (default
	// "automation.invalid"): the same delivery always carries the same Message-ID, so mail
	// systems that deduplicate by it see a resend as the same message.
	MessageIDDomain string
}

// SMTP is the "email" channel: one connection per message through go-mail. It is not
// idempotent (SMTP has no idempotency key). Outcomes: the server accepted the data = sent
// (provider reference: its final answer, usually the queue id); a 5xx answer = permanent
// failure; a 4xx answer, or a failure before the message data was complete (connect, TLS,
// AUTH, MAIL, RCPT, DATA, writing) = not delivered, retry; no answer after the final "." =
// UNKNOWN (the server may have queued it).
type SMTP struct {
	cfg  SMTPConfig
	from *mail.Address
}

var _ delivery.Channel = (*SMTP)(nil)

// NewSMTP validates cfg and returns the channel.
func NewSMTP(cfg SMTPConfig) (*SMTP, error) {
	if cfg.Host == "" {
		return nil, errors.New("smtp: Host is required")
	}
	switch cfg.Security {
	case "":
		cfg.Security = SMTPStartTLS
	case SMTPPlain, SMTPStartTLS, SMTPOpportunistic, SMTPImplicitTLS:
	default:
		return nil, fmt.Errorf("smtp: Security %q is not none, starttls, opportunistic or tls", cfg.Security)
	}
	if cfg.Port == 0 {
		cfg.Port = 587
		if cfg.Security == SMTPImplicitTLS {
			cfg.Port = 465
		}
	}
	if cfg.Port < 1 || cfg.Port > 65535 {
		return nil, fmt.Errorf("smtp: port %d outside 1..65535", cfg.Port)
	}
	from, err := mail.ParseAddress(cfg.From)
	if err != nil {
		return nil, fmt.Errorf("smtp: From %q: %w", cfg.From, err)
	}
	if cfg.Timeout == 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.HELO == "" {
		cfg.HELO = "localhost"
	}
	if cfg.MessageIDDomain == "" {
		cfg.MessageIDDomain = "automation.invalid"
	}
	if (cfg.Username == "") != (cfg.Password == "") {
		return nil, errors.New("smtp: Username and Password go together")
	}
	return &SMTP{cfg: cfg, from: from}, nil
}

// Traits implements delivery.Channel.
func (s *SMTP) Traits() delivery.Traits {
	return delivery.Traits{NeedsContent: true, Attachments: true}
}

// ValidateRecipient implements delivery.Channel: one bare RFC 5322 address (net/mail), no
// display name, no group, at most 254 characters.
func (s *SMTP) ValidateRecipient(addr string) error { return ValidateEmail(addr) }

// ValidateEmail checks one bare e-mail address (see SMTP.ValidateRecipient).
func ValidateEmail(addr string) error {
	if len(addr) > 254 {
		return errors.New("e-mail address longer than 254 characters")
	}
	a, err := mail.ParseAddress(addr)
	if err != nil {
		return fmt.Errorf("not an e-mail address: %w", err)
	}
	if a.Name != "" || a.Address != strings.TrimSpace(addr) {
		return errors.New("want a bare address like name@example.com, without a display name")
	}
	at := strings.LastIndexByte(a.Address, '@')
	if at < 1 || !strings.Contains(a.Address[at+1:], ".") && a.Address[at+1:] != "localhost" {
		return fmt.Errorf("e-mail address needs a domain, got %q", a.Address[at:])
	}
	return nil
}

func (s *SMTP) client() (*gomail.Client, error) {
	opts := []gomail.Option{gomail.WithPort(s.cfg.Port), gomail.WithTimeout(s.cfg.Timeout), gomail.WithHELO(s.cfg.HELO), gomail.WithoutRset()}
	tc := s.cfg.TLSConfig
	if tc == nil {
		tc = &tls.Config{MinVersion: tls.VersionTLS12}
	} else {
		tc = tc.Clone()
	}
	if tc.ServerName == "" {
		tc.ServerName = s.cfg.Host
	}
	switch s.cfg.Security {
	case SMTPPlain:
		opts = append(opts, gomail.WithTLSPolicy(gomail.NoTLS))
	case SMTPStartTLS:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSMandatory), gomail.WithTLSConfig(tc))
	case SMTPOpportunistic:
		opts = append(opts, gomail.WithTLSPolicy(gomail.TLSOpportunistic), gomail.WithTLSConfig(tc))
	case SMTPImplicitTLS:
		opts = append(opts, gomail.WithSSL(), gomail.WithTLSConfig(tc))
	}
	if s.cfg.Username != "" {
		opts = append(opts, gomail.WithSMTPAuth(gomail.SMTPAuthAutoDiscover), gomail.WithUsername(s.cfg.Username), gomail.WithPassword(s.cfg.Password))
	}
	return gomail.NewClient(s.cfg.Host, opts...)
}

// Send implements delivery.Channel.
func (s *SMTP) Send(ctx context.Context, m delivery.Message) (string, error) {
	if err := ValidateEmail(m.Recipient); err != nil {
		return "", automation.Permanent(err)
	}
	if m.Content == nil || (m.Content.Text == "" && m.Content.HTML == "") {
		return "", automation.Permanent(fmt.Errorf("smtp: message %s has no rendered body", m.DeliveryKey))
	}
	msg := gomail.NewMsg()
	if err := msg.From(s.from.String()); err != nil {
		return "", automation.Permanent(fmt.Errorf("smtp: From: %w", err))
	}
	if err := msg.To(m.Recipient); err != nil {
		return "", automation.Permanent(fmt.Errorf("smtp: To: %w", err))
	}
	msg.Subject(m.Content.Subject)
	msg.SetMessageIDWithValue(m.DeliveryKey + "@" + s.cfg.MessageIDDomain)
	msg.SetDateWithValue(m.SentOn.UTC())
	msg.SetGenHeader("X-Automation-Delivery", m.DeliveryKey)
	if m.ListUnsubscribe != "" {
		// RFC 8058 one-click unsubscribe (docs/channels.md#one-click-unsubscribe): the
		// https link carries a signed token; a POST of List-Unsubscribe=One-Click to it opts
		// the recipient out. The relay's DKIM signature must cover both headers.
		msg.SetGenHeader("List-Unsubscribe", "<"+m.ListUnsubscribe+">")
		msg.SetGenHeader("List-Unsubscribe-Post", "List-Unsubscribe=One-Click")
	}
	for _, att := range m.Attachments {
		if err := msg.AttachReader(att.FileName, bytes.NewReader(att.Data), gomail.WithFileContentType(gomail.ContentType(att.ContentType))); err != nil {
			return "", automation.Permanent(fmt.Errorf("smtp: attachment %s: %w", att.FileName, err))
		}
	}
	switch {
	case m.Content.Text != "" && m.Content.HTML != "":
		msg.SetBodyString(gomail.TypeTextPlain, m.Content.Text)
		msg.AddAlternativeString(gomail.TypeTextHTML, m.Content.HTML)
	case m.Content.Text != "":
		msg.SetBodyString(gomail.TypeTextPlain, m.Content.Text)
	default:
		msg.SetBodyString(gomail.TypeTextHTML, m.Content.HTML)
	}
	c, err := s.client()
	if err != nil {
		return "", automation.Permanent(fmt.Errorf("smtp: client: %w", err))
	}
	sc, err := c.DialToSMTPClientWithContext(ctx)
	if err != nil {
		return "", fmt.Errorf("smtp %s:%d: connect: %w", s.cfg.Host, s.cfg.Port, err)
	}
	// The QUIT after an accepted message changes nothing about its delivery: its error is
	// ignored.
	defer func() { _ = c.CloseWithSMTPClient(sc) }()
	if err := c.SendWithSMTPClient(sc, msg); err != nil {
		return "", classifySMTP(s.cfg.Host, err)
	}
	ref := strings.TrimSpace(msg.ServerResponse())
	if ref == "" {
		ref = "<" + m.DeliveryKey + "@" + s.cfg.MessageIDDomain + ">"
	}
	return ref, nil
}

// classifySMTP maps a go-mail send error to the delivery error kinds.
func classifySMTP(host string, err error) error {
	wrapped := fmt.Errorf("smtp %s: %w", host, err)
	var se *gomail.SendError
	if !errors.As(err, &se) {
		return wrapped // before any SMTP exchange: not delivered
	}
	code := se.ErrorCode()
	switch {
	case code >= 500:
		return automation.Permanent(wrapped)
	case code >= 400:
		return wrapped
	case se.Reason == gomail.ErrSMTPDataClose:
		// No answer to the final ".": the server may have queued the message.
		return automation.Unknown(wrapped)
	default:
		return wrapped
	}
}
