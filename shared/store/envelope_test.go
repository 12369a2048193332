package store

import (
	"strings"
	"testing"
	"time"
)

func TestEnvelopeRoundTrip(t *testing.T) {
	msgs := []OutboxMessage{
		{MessageID: "a:r2", Destination: "delivery-facts", SessionID: "a\"<>\u2028", Body: []byte(`{"x":1}`)},
		{MessageID: "b:r2", Destination: "delivery-facts", Body: []byte(` [1, "two"] `)},
	}
	env, err := NewEnvelope(msgs)
	if err != nil {
		t.Fatal(err)
	}
	if !env.Envelope || env.Destination != "delivery-facts" || env.SessionID != "" || env.MessageID != "envelope:a:r2+1" {
		t.Fatalf("envelope %+v", env)
	}
	env.ID, env.Attempts, env.ClaimToken, env.CreatedOn = 7, 2, "tok", time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)
	items, err := env.Items()
	if err != nil || len(items) != 2 {
		t.Fatalf("items %+v %v", items, err)
	}
	for i, m := range items {
		if m.MessageID != msgs[i].MessageID || m.SessionID != msgs[i].SessionID || m.Destination == "" || m.Destination != "delivery-facts" ||
			m.ID != 7 || m.Attempts != 2 || m.ClaimToken != "tok" || !m.CreatedOn.Equal(env.CreatedOn) || m.Envelope {
			t.Fatalf("item %d: %+v", i, m)
		}
	}
	// A body is kept byte for byte.
	if string(items[0].Body) != `{"x":1}` || string(items[1].Body) != `[1, "two"]` {
		t.Fatalf("bodies %s %s", items[0].Body, items[1].Body)
	}
	plain := OutboxMessage{ID: 3, MessageID: "m", Destination: "q", Body: []byte("not json")}
	if items, err := plain.Items(); err != nil || len(items) != 1 || items[0].MessageID != "m" || string(items[0].Body) != "not json" {
		t.Fatalf("a plain row: %+v %v", items, err)
	}
}

func TestNewEnvelopeRefuses(t *testing.T) {
	ok := func(id string) OutboxMessage {
		return OutboxMessage{MessageID: id, Destination: "f", Body: []byte("{}")}
	}
	many := make([]OutboxMessage, MaxBatch+1)
	for i := range many {
		many[i] = ok("m")
	}
	nested, _ := NewEnvelope([]OutboxMessage{ok("a"), ok("b")})
	for name, tc := range map[string]struct {
		msgs []OutboxMessage
		want string
	}{
		"one message":      {[]OutboxMessage{ok("a")}, "1 messages"},
		"none":             {nil, "0 messages"},
		"over the bound":   {many, "1001 messages"},
		"two destinations": {[]OutboxMessage{ok("a"), {MessageID: "b", Destination: "g", Body: []byte("{}")}}, `goes to "g"`},
		"an envelope":      {[]OutboxMessage{ok("a"), nested}, "is an envelope"},
		"no MessageId":     {[]OutboxMessage{ok("a"), ok("")}, "has no MessageId"},
		"a repeated one":   {[]OutboxMessage{ok("a"), ok("a")}, "twice"},
		"a body not JSON":  {[]OutboxMessage{ok("a"), {MessageID: "b", Destination: "f", Body: []byte("{")}}, "not JSON"},
		"an empty body":    {[]OutboxMessage{ok("a"), {MessageID: "b", Destination: "f"}}, "not JSON"},
	} {
		if _, err := NewEnvelope(tc.msgs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}

func TestItemsRefusesADamagedEnvelope(t *testing.T) {
	for _, body := range []string{``, `{}`, `[]`, `[{"body":{}}]`, `[{"messageId":"a","body":{}},`, `"x"`,
		`[{"messageId":"a","body":{}},{"messageId":"b"}]`} {
		m := OutboxMessage{MessageID: "envelope:x", Destination: "f", Body: []byte(body), Envelope: true}
		if items, err := m.Items(); err == nil {
			t.Errorf("body %q: %+v, want an error", body, items)
		}
	}
}
