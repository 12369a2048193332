package channel_test

import (
	"context"
	"net/mail"
	"strings"
	"testing"
)

// A marketing e-mail carries RFC 8058's two headers: List-Unsubscribe with the https link
// (in angle brackets) and List-Unsubscribe-Post: List-Unsubscribe=One-Click; a message
// without a link (transactional) carries neither.
func TestSMTPListUnsubscribeHeaders(t *testing.T) {
	t.Parallel()
	box := &mailbox{}
	ch := newSMTP(t, startSMTP(t, box, nil, false), nil)
	link := "https://automation.example.test/api/unsubscribe?token=" + strings.Repeat("eyJ1IjoiYnUtMSJ9", 12) + ".c2lnbmF0dXJlLW9mLXRoZS10b2tlbi0zMi1ieXRlcy1sb25nLQ"
	m := mailMsg("linh@example.test")
	m.ListUnsubscribe = link
	if _, err := ch.Send(context.Background(), m); err != nil {
		t.Fatal(err)
	}
	plain := mailMsg("tom@example.test")
	if _, err := ch.Send(context.Background(), plain); err != nil {
		t.Fatal(err)
	}
	got := box.got()
	if len(got) != 2 {
		t.Fatalf("%d messages", len(got))
	}
	parsed, err := mail.ReadMessage(strings.NewReader(got[0].data))
	if err != nil {
		t.Fatal(err)
	}
	if h := parsed.Header.Get("List-Unsubscribe"); h != "<"+link+">" {
		t.Errorf("List-Unsubscribe = %q, want <%s>", h, link)
	}
	if h := parsed.Header.Get("List-Unsubscribe-Post"); h != "List-Unsubscribe=One-Click" {
		t.Errorf("List-Unsubscribe-Post = %q", h)
	}
	other, err := mail.ReadMessage(strings.NewReader(got[1].data))
	if err != nil {
		t.Fatal(err)
	}
	if other.Header.Get("List-Unsubscribe") != "" || other.Header.Get("List-Unsubscribe-Post") != "" {
		t.Errorf("a message without a link carries the headers: %v", other.Header)
	}
}
