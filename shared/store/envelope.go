package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// EnvelopeItem is one message of an outbox envelope written in the first format, a JSON
// array of {messageId, sessionId, body} (migration 0027). NewEnvelope no longer writes it;
// Items still reads it, so rows written before the framed format are published as they
// were.
type EnvelopeItem struct {
	MessageID string          `json:"messageId"`
	SessionID string          `json:"sessionId,omitempty"`
	Body      json.RawMessage `json:"body"`
}

// envelopePrefix starts every envelope row's MessageId.
const envelopePrefix = "envelope:"

// NewEnvelope returns the one outbox row that carries msgs, in order: Envelope true, the
// messages' Destination, MessageID "envelope:{first MessageID}+{len(msgs)-1}" (unique
// while the first message's MessageId is: a fact's is written once), no SessionID, and Body
// the messages framed as netstrings: per message, in order, three of them - MessageId,
// SessionId ("" for none) and body - each "{length in bytes, decimal}:{bytes},". A body is
// kept byte for byte and need not be JSON; nothing in it is scanned or escaped, so writing
// and reading an envelope cost a copy, not a parse (docs/performance.md, "Framed
// envelopes"). A transaction writes the row in place of msgs (one row, one relay lease and
// one mark instead of len(msgs)); docs/performance.md, "Facts in envelopes". Errors: fewer
// than 2 or more than MaxBatch messages, messages to more than one destination, an envelope
// among them, an empty or repeated MessageID, or an empty body.
func NewEnvelope(msgs []OutboxMessage) (OutboxMessage, error) {
	if len(msgs) < 2 || len(msgs) > MaxBatch {
		return OutboxMessage{}, fmt.Errorf("outbox envelope: %d messages, want 2 to %d", len(msgs), MaxBatch)
	}
	size := 0
	for _, m := range msgs {
		size += len(m.Body) + len(m.MessageID) + len(m.SessionID) + 3*(maxLengthDigits+2)
	}
	body := make([]byte, 0, size)
	seen := make(map[string]bool, len(msgs))
	for i, m := range msgs {
		switch {
		case seen[m.MessageID]:
			return OutboxMessage{}, fmt.Errorf("outbox envelope: message %s twice", m.MessageID)
		case m.Envelope:
			return OutboxMessage{}, fmt.Errorf("outbox envelope: message %s is an envelope", m.MessageID)
		case m.Destination != msgs[0].Destination:
			return OutboxMessage{}, fmt.Errorf("outbox envelope: message %s goes to %q, not %q", m.MessageID, m.Destination, msgs[0].Destination)
		case m.MessageID == "":
			return OutboxMessage{}, fmt.Errorf("outbox envelope: message %d has no MessageId", i)
		case len(m.Body) == 0:
			return OutboxMessage{}, fmt.Errorf("outbox envelope: message %s has no body", m.MessageID)
		}
		seen[m.MessageID] = true
		body = appendNetstring(body, m.MessageID)
		body = appendNetstring(body, m.SessionID)
		body = appendNetstring(body, m.Body)
	}
	return OutboxMessage{MessageID: envelopePrefix + msgs[0].MessageID + "+" + strconv.Itoa(len(msgs)-1),
		Destination: msgs[0].Destination, Body: body, Envelope: true}, nil
}

// maxLengthDigits bounds the decimal length of one netstring of an envelope: 10 digits,
// past any Body the outbox holds (SQL Server's varbinary(max) ends at 2^31-1 bytes).
const maxLengthDigits = 10

// appendNetstring appends v to b as one netstring: "{len(v)}:{v},".
func appendNetstring[T string | []byte](b []byte, v T) []byte {
	b = strconv.AppendInt(b, int64(len(v)), 10)
	b = append(b, ':')
	b = append(b, v...)
	return append(b, ',')
}

// nextNetstring reads the netstring at the start of b and returns its bytes (a sub-slice
// of b, capped at its end) and the rest of b. Errors: no length of 1 to maxLengthDigits
// digits (and no leading zero), no ':', a length past the end of b, or no ',' after the bytes.
func nextNetstring(b []byte) (v, rest []byte, err error) {
	colon := bytes.IndexByte(b[:min(len(b), maxLengthDigits+1)], ':')
	if colon < 1 {
		return nil, nil, errors.New("a netstring without a length")
	}
	if colon > 1 && b[0] == '0' {
		return nil, nil, fmt.Errorf("a netstring length %q with a leading zero", b[:colon])
	}
	n := 0
	for _, c := range b[:colon] {
		if c < '0' || c > '9' {
			return nil, nil, fmt.Errorf("a netstring length %q", b[:colon])
		}
		n = n*10 + int(c-'0')
		if n > len(b) {
			// Checked at each digit, so n never grows past len(b)*10+9: no overflow of a
			// 32-bit int either.
			return nil, nil, fmt.Errorf("a netstring length %q past the %d bytes left", b[:colon], len(b))
		}
	}
	end := colon + 1 + n
	if end >= len(b) || b[end] != ',' {
		return nil, nil, fmt.Errorf("a netstring of %d bytes cut short", n)
	}
	return b[colon+1 : end : end], b[end+1:], nil
}

// envelopeCount returns the number of messages an envelope's MessageID names
// ("envelope:{first MessageID}+{n-1}", NewEnvelope), and false for a MessageID not of that
// form.
func envelopeCount(id string) (int, bool) {
	i := strings.LastIndexByte(id, '+')
	if !strings.HasPrefix(id, envelopePrefix) || i < len(envelopePrefix) {
		return 0, false
	}
	n, err := strconv.Atoi(id[i+1:])
	if err != nil || n < 1 || n >= MaxBatch {
		return 0, false
	}
	return n + 1, true
}

// Items returns the messages row m carries, in order: m itself when it is not an envelope;
// else one message per item, each with the row's ID, Destination, CreatedOn, PublishedOn,
// Attempts and ClaimToken and the item's MessageID, SessionID and Body. A Body shares m's
// Body (no copy). An envelope is read in either format: framed (NewEnvelope) or the first
// one, a JSON array of EnvelopeItem (its Body starts with '['). Errors: an envelope with no
// items or not as many as its MessageID names, an item without a MessageId or a body, or
// a Body in neither format, cut short or with bytes after its last item; such a row is
// damaged and is kept for repair, never published in part.
func (m OutboxMessage) Items() ([]OutboxMessage, error) {
	if !m.Envelope {
		return []OutboxMessage{m}, nil
	}
	item := func(id, session string, body []byte) OutboxMessage {
		return OutboxMessage{ID: m.ID, MessageID: id, Destination: m.Destination, SessionID: session, Body: body,
			CreatedOn: m.CreatedOn, PublishedOn: m.PublishedOn, Attempts: m.Attempts, ClaimToken: m.ClaimToken, TraceParent: m.TraceParent}
	}
	var out []OutboxMessage
	if len(m.Body) > 0 && m.Body[0] == '[' {
		var items []EnvelopeItem
		if err := json.Unmarshal(m.Body, &items); err != nil {
			return nil, fmt.Errorf("outbox envelope %s: %w", m.MessageID, err)
		}
		out = make([]OutboxMessage, len(items))
		for i, it := range items {
			out[i] = item(it.MessageID, it.SessionID, it.Body)
		}
	} else {
		for rest := m.Body; len(rest) > 0; {
			var f [3][]byte
			for k := range f {
				var err error
				if f[k], rest, err = nextNetstring(rest); err != nil {
					return nil, fmt.Errorf("outbox envelope %s: item %d: %w", m.MessageID, len(out), err)
				}
			}
			out = append(out, item(string(f[0]), string(f[1]), f[2]))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("outbox envelope %s: %w", m.MessageID, errors.New("no messages"))
	}
	// A framed body has no terminator: one cut right after an item reads as whole items.
	// The row's MessageId names how many it carries (NewEnvelope).
	if n, ok := envelopeCount(m.MessageID); ok && n != len(out) {
		return nil, fmt.Errorf("outbox envelope %s: %d items, want %d", m.MessageID, len(out), n)
	}
	for i, it := range out {
		if it.MessageID == "" {
			return nil, fmt.Errorf("outbox envelope %s: item %d has no MessageId", m.MessageID, i)
		}
		if len(it.Body) == 0 {
			// NewEnvelope writes every item's body; a missing one is a damaged row, kept for
			// repair rather than published as an empty message.
			return nil, fmt.Errorf("outbox envelope %s: item %s has no body", m.MessageID, it.MessageID)
		}
	}
	return out, nil
}
