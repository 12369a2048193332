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
	if string(items[0].Body) != `{"x":1}` || string(items[1].Body) != ` [1, "two"] ` {
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
		"an empty body":    {[]OutboxMessage{ok("a"), {MessageID: "b", Destination: "f"}}, "has no body"},
	} {
		if _, err := NewEnvelope(tc.msgs); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", name, err, tc.want)
		}
	}
}

// A body need not be JSON, and the framing characters inside one are only bytes: a body
// that looks like more netstrings comes back whole, as one item.
func TestEnvelopeBodiesAreOpaque(t *testing.T) {
	msgs := []OutboxMessage{
		{MessageID: "1:x,", Destination: "q", Body: []byte("{")},
		{MessageID: "b", Destination: "q", SessionID: "s,:", Body: []byte("1:a,0:,1:b,")},
		{MessageID: "c", Destination: "q", Body: []byte{0, 0xff, ',', ':'}},
	}
	env, err := NewEnvelope(msgs)
	if err != nil {
		t.Fatal(err)
	}
	items, err := env.Items()
	if err != nil || len(items) != 3 {
		t.Fatalf("items %+v %v", items, err)
	}
	for i, m := range items {
		if m.MessageID != msgs[i].MessageID || m.SessionID != msgs[i].SessionID || string(m.Body) != string(msgs[i].Body) {
			t.Errorf("item %d: %+v, want %+v", i, m, msgs[i])
		}
	}
	// An item's Body cannot grow into the next item's bytes.
	if cap(items[0].Body) != len(items[0].Body) {
		t.Errorf("item 0's Body has capacity %d past its %d bytes", cap(items[0].Body), len(items[0].Body))
	}
}

// Rows written before the framed format (a JSON array of EnvelopeItem) still read.
func TestItemsReadsTheFirstFormat(t *testing.T) {
	m := OutboxMessage{ID: 4, MessageID: "envelope:a+1", Destination: "f", Envelope: true,
		Body: []byte(`[{"messageId":"a","sessionId":"s","body":{"x":1}},{"messageId":"b","body":[2]}]`)}
	items, err := m.Items()
	if err != nil || len(items) != 2 || items[0].MessageID != "a" || items[0].SessionID != "s" || string(items[0].Body) != `{"x":1}` ||
		items[1].MessageID != "b" || items[1].SessionID != "" || string(items[1].Body) != `[2]` || items[1].ID != 4 {
		t.Fatalf("items %+v %v", items, err)
	}
}

func TestItemsRefusesADamagedEnvelope(t *testing.T) {
	for _, body := range []string{``, `{}`, `[]`, `[{"body":{}}]`, `[{"messageId":"a","body":{}},`, `"x"`,
		`[{"messageId":"a","body":{}},{"messageId":"b"}]`,
		// framed: cut short, bad lengths, missing fields, empty id or body, trailing bytes
		`1:a,0:,2:{}`, `1:a,0:,2:{},1:b`, `1:a,0:,3:{},`, `1:a,0:,1:{},`, `x:a,0:,2:{},`, `-1:a,0:,2:{},`, `:a,0:,2:{},`,
		`99999999999:a,0:,2:{},`, `9999999999:a,`, `1:a,0:,`, `0:,0:,2:{},`, `1:a,0:,0:,`, `1:a,0:,2:{},x`, `1:a;0:,2:{},`} {
		m := OutboxMessage{MessageID: "envelope:x", Destination: "f", Body: []byte(body), Envelope: true}
		if items, err := m.Items(); err == nil {
			t.Errorf("body %q: %+v, want an error", body, items)
		}
	}
}
