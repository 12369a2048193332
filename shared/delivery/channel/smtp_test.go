package channel_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"io"
	"net"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"

	"github.com/automation-platform/automation/shared/automation"
	"github.com/automation-platform/automation/shared/delivery"
	"github.com/automation-platform/automation/shared/delivery/channel"
	"github.com/automation-platform/automation/shared/delivery/channeltest"
)

// mailbox is a real SMTP server (github.com/emersion/go-smtp) on 127.0.0.1 that keeps what
// it accepts. Recipients starting "nobody@" get 550, "busy@" get 451; for recipients
// starting "slow@" the answer to the final "." comes only after slowAnswer: the message is
// kept first.
type mailbox struct {
	mu       sync.Mutex
	messages []received
	users    map[string]string // AUTH PLAIN users; nil: no AUTH offered
}

type received struct {
	from, to string
	data     string
	tls      bool
	user     string
}

type session struct {
	box      *mailbox
	conn     *smtp.Conn
	from, to string
	user     string
}

func (s *session) AuthMechanisms() []string {
	if s.box.users == nil {
		return nil
	}
	return []string{sasl.Plain}
}

func (s *session) Auth(mech string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(_, user, pass string) error {
		if s.box.users[user] != pass || pass == "" {
			return smtp.ErrAuthFailed
		}
		s.user = user
		return nil
	}), nil
}

func (s *session) Mail(from string, _ *smtp.MailOptions) error {
	if s.box.users != nil && s.user == "" {
		return smtp.ErrAuthRequired
	}
	s.from = from
	return nil
}

func (s *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	switch {
	case strings.HasPrefix(to, "nobody@"):
		return &smtp.SMTPError{Code: 550, EnhancedCode: smtp.EnhancedCode{5, 1, 1}, Message: "no such mailbox"}
	case strings.HasPrefix(to, "busy@"):
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	s.to = to
	return nil
}

func (s *session) Data(r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	_, tlsOn := s.conn.TLSConnectionState()
	s.box.mu.Lock()
	s.box.messages = append(s.box.messages, received{from: s.from, to: s.to, data: string(b), tls: tlsOn, user: s.user})
	s.box.mu.Unlock()
	if strings.HasPrefix(s.to, "slow@") {
		time.Sleep(slowAnswer)
	}
	return nil
}

func (s *session) Reset()        {}
func (s *session) Logout() error { return nil }

func (b *mailbox) got() []received {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]received(nil), b.messages...)
}

// testCert borrows httptest's certificate for 127.0.0.1 and a pool that trusts it.
func testCert(t *testing.T) (tls.Certificate, *x509.CertPool) {
	t.Helper()
	srv := httptest.NewUnstartedServer(nil)
	srv.StartTLS()
	defer srv.Close()
	pool := x509.NewCertPool()
	pool.AddCert(srv.Certificate())
	return srv.TLS.Certificates[0], pool
}

// startSMTP serves box on 127.0.0.1: STARTTLS offered when cert is given, or TLS from the
// first byte when implicit.
func startSMTP(t channeltest.TB, box *mailbox, cert *tls.Certificate, implicit bool) int {
	t.Helper()
	s := smtp.NewServer(smtp.BackendFunc(func(c *smtp.Conn) (smtp.Session, error) { return &session{box: box, conn: c}, nil }))
	s.Domain = "localhost"
	s.ReadTimeout, s.WriteTimeout = 10*time.Second, 10*time.Second
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	if cert != nil {
		s.TLSConfig = &tls.Config{Certificates: []tls.Certificate{*cert}, MinVersion: tls.VersionTLS12}
		if implicit {
			l = tls.NewListener(l, s.TLSConfig)
		}
	}
	go func() { _ = s.Serve(l) }()
	t.Cleanup(func() { _ = s.Close() })
	return l.Addr().(*net.TCPAddr).Port
}

func newSMTP(t *testing.T, port int, mut func(*channel.SMTPConfig)) *channel.SMTP {
	t.Helper()
	cfg := channel.SMTPConfig{Host: "127.0.0.1", Port: port, Security: channel.SMTPPlain, From: "Reminders <noreply@example.test>", Timeout: 3 * time.Second}
	if mut != nil {
		mut(&cfg)
	}
	c, err := channel.NewSMTP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mailMsg(to string) delivery.Message {
	m := msg(to)
	m.Channel = "email"
	m.Content = &delivery.Content{Subject: "Police check expires on 31 October", Text: "Hello Amelia", HTML: "<p>Hello <b>Amelia</b></p>", TemplateVersion: 1}
	return m
}

func TestSMTPSendsWithTLSOffAndOn(t *testing.T) {
	t.Parallel()
	cert, pool := testCert(t)
	cases := []struct {
		name      string
		security  channel.SMTPSecurity
		serverTLS bool
		implicit  bool
		wantTLS   bool
	}{
		{"plain", channel.SMTPPlain, false, false, false},
		{"starttls", channel.SMTPStartTLS, true, false, true},
		{"opportunistic with STARTTLS offered", channel.SMTPOpportunistic, true, false, true},
		{"opportunistic without STARTTLS", channel.SMTPOpportunistic, false, false, false},
		{"implicit tls", channel.SMTPImplicitTLS, true, true, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			box := &mailbox{}
			var c *tls.Certificate
			if tc.serverTLS {
				c = &cert
			}
			port := startSMTP(t, box, c, tc.implicit)
			ch := newSMTP(t, port, func(cfg *channel.SMTPConfig) {
				cfg.Security = tc.security
				cfg.TLSConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
			})
			m := mailMsg("amelia.nguyen@example.test")
			ref, err := ch.Send(context.Background(), m)
			if err != nil || ref == "" {
				t.Fatalf("send: %q %v", ref, err)
			}
			got := box.got()
			if len(got) != 1 || got[0].tls != tc.wantTLS || got[0].to != "amelia.nguyen@example.test" || got[0].from != "noreply@example.test" {
				t.Fatalf("received %+v", got)
			}
			d := got[0].data
			for _, want := range []string{"Subject: Police check expires on 31 October", "Message-ID: <" + m.DeliveryKey + "@automation.invalid>",
				"X-Automation-Delivery: " + m.DeliveryKey, "text/plain", "text/html", "Hello Amelia"} {
				if !strings.Contains(d, want) {
					t.Errorf("message lacks %q:\n%s", want, d)
				}
			}
		})
	}
}

func TestSMTPStartTLSRequiredButNotOfferedIsNotSent(t *testing.T) {
	t.Parallel()
	box := &mailbox{}
	port := startSMTP(t, box, nil, false)
	ch := newSMTP(t, port, func(cfg *channel.SMTPConfig) { cfg.Security = channel.SMTPStartTLS })
	_, err := ch.Send(context.Background(), mailMsg("a@example.test"))
	if err == nil || automation.IntentOf(err) != automation.IntentRetry || len(box.got()) != 0 {
		t.Fatalf("%v (%s), received %d", err, automation.IntentOf(err), len(box.got()))
	}
}

func TestSMTPAuthOverStartTLS(t *testing.T) {
	t.Parallel()
	cert, pool := testCert(t)
	box := &mailbox{users: map[string]string{"relay": "s3cret"}}
	port := startSMTP(t, box, &cert, false)
	withAuth := func(pass string) *channel.SMTP {
		return newSMTP(t, port, func(cfg *channel.SMTPConfig) {
			cfg.Security, cfg.TLSConfig = channel.SMTPStartTLS, &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
			cfg.Username, cfg.Password = "relay", pass
		})
	}
	if _, err := withAuth("s3cret").Send(context.Background(), mailMsg("a@example.test")); err != nil {
		t.Fatal(err)
	}
	if got := box.got(); len(got) != 1 || got[0].user != "relay" || !got[0].tls {
		t.Fatalf("%+v", got)
	}
	if _, err := withAuth("wrong").Send(context.Background(), mailMsg("a@example.test")); err == nil || len(box.got()) != 1 {
		t.Fatalf("wrong password: %v", err)
	}
}

func TestSMTPClassifiesFailures(t *testing.T) {
	t.Parallel()
	box := &mailbox{}
	port := startSMTP(t, box, nil, false)
	ch := newSMTP(t, port, nil)
	if _, err := ch.Send(context.Background(), mailMsg("nobody@example.test")); automation.IntentOf(err) != automation.IntentPermanent || !strings.Contains(err.Error(), "550") {
		t.Fatalf("550: %v (%s)", err, automation.IntentOf(err))
	}
	if _, err := ch.Send(context.Background(), mailMsg("busy@example.test")); err == nil || automation.IntentOf(err) != automation.IntentRetry {
		t.Fatalf("451: %v (%s)", err, automation.IntentOf(err))
	}
	if len(box.got()) != 0 {
		t.Fatal("a rejected recipient received mail")
	}
	// Nobody listening: not delivered, retry.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	dead := l.Addr().(*net.TCPAddr).Port
	l.Close()
	if _, err := newSMTP(t, dead, nil).Send(context.Background(), mailMsg("a@example.test")); err == nil || automation.IntentOf(err) != automation.IntentRetry {
		t.Fatalf("refused: %v (%s)", err, automation.IntentOf(err))
	}
}

func TestEmailAddressValidation(t *testing.T) {
	t.Parallel()
	for addr, ok := range map[string]bool{
		"amelia.nguyen@example.test":     true,
		"a+tag@sub.example.com":          true,
		"root@localhost":                 true,
		"Amelia <a@example.test>":        false,
		"not-an-address":                 false,
		"a@":                             false,
		"a@example":                      false,
		"a@example.test, b@example.test": false,
		"https://hooks.example.test/":    false,
		"":                               false,
		strings.Repeat("a", 250) + "@example.test": false,
	} {
		if err := channel.ValidateEmail(addr); (err == nil) != ok {
			t.Errorf("%q: %v, want ok=%v", addr, err, ok)
		}
	}
	ch, _ := channel.NewSMTP(channel.SMTPConfig{Host: "127.0.0.1", Port: 1, From: "noreply@example.test"})
	if _, err := ch.Send(context.Background(), mailMsg("not-an-address")); automation.IntentOf(err) != automation.IntentPermanent {
		t.Fatalf("bad address: %v", err)
	}
	for name, cfg := range map[string]channel.SMTPConfig{
		"no host":   {From: "a@example.test"},
		"bad from":  {Host: "h", From: "nope"},
		"bad mode":  {Host: "h", From: "a@example.test", Security: "ssl3"},
		"half auth": {Host: "h", From: "a@example.test", Username: "u"},
	} {
		if _, err := channel.NewSMTP(cfg); err == nil {
			t.Errorf("%s accepted", name)
		}
	}
}
