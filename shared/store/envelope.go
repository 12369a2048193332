package store

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
)

// EnvelopeItem is one message of an outbox envelope (OutboxMessage.Envelope), as it is
// stored in the envelope's Body: its MessageId, its SessionId ("" for none) and its body,
// which must be JSON (a delivery fact is).
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
// the JSON array of their EnvelopeItems. A transaction writes it in place of msgs (one row,
// one relay lease and one mark instead of len(msgs)); docs/performance.md, "Facts in
// envelopes". Errors: fewer than 2 or more than MaxBatch messages, messages to more than one
// destination, an envelope among them, an empty or repeated MessageID, or a body that is
// not JSON.
func NewEnvelope(msgs []OutboxMessage) (OutboxMessage, error) {
	if len(msgs) < 2 || len(msgs) > MaxBatch {
		return OutboxMessage{}, fmt.Errorf("outbox envelope: %d messages, want 2 to %d", len(msgs), MaxBatch)
	}
	// The array is written here rather than by json.Marshal of []EnvelopeItem, which would
	// scan and copy every body a second time to compact it (a body is checked once, by
	// json.Valid, and kept byte for byte).
	size := 2
	for _, m := range msgs {
		size += len(m.Body) + len(m.MessageID) + len(m.SessionID) + 48
	}
	body := make([]byte, 0, size)
	body = append(body, '[')
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
		case !json.Valid(m.Body):
			return OutboxMessage{}, fmt.Errorf("outbox envelope: message %s: the body is not JSON", m.MessageID)
		}
		seen[m.MessageID] = true
		if i > 0 {
			body = append(body, ',')
		}
		id, err := json.Marshal(m.MessageID)
		if err != nil {
			return OutboxMessage{}, fmt.Errorf("outbox envelope: %w", err)
		}
		body = append(append(body, `{"messageId":`...), id...)
		if m.SessionID != "" {
			sid, err := json.Marshal(m.SessionID)
			if err != nil {
				return OutboxMessage{}, fmt.Errorf("outbox envelope: %w", err)
			}
			body = append(append(body, `,"sessionId":`...), sid...)
		}
		body = append(append(append(body, `,"body":`...), m.Body...), '}')
	}
	body = append(body, ']')
	return OutboxMessage{MessageID: envelopePrefix + msgs[0].MessageID + "+" + strconv.Itoa(len(msgs)-1),
		Destination: msgs[0].Destination, Body: body, Envelope: true}, nil
}

// Items returns the messages row m carries, in order: m itself when it is not an envelope;
// else one message per EnvelopeItem, each with the row's ID, Destination, CreatedOn,
// Attempts and ClaimToken and the item's MessageID, SessionID and Body. Errors: an envelope
// whose Body is not a JSON array of items each with a MessageId and a body.
func (m OutboxMessage) Items() ([]OutboxMessage, error) {
	if !m.Envelope {
		return []OutboxMessage{m}, nil
	}
	var items []EnvelopeItem
	if err := json.Unmarshal(m.Body, &items); err != nil {
		return nil, fmt.Errorf("outbox envelope %s: %w", m.MessageID, err)
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("outbox envelope %s: %w", m.MessageID, errors.New("no messages"))
	}
	out := make([]OutboxMessage, len(items))
	for i, it := range items {
		if it.MessageID == "" {
			return nil, fmt.Errorf("outbox envelope %s: item %d has no MessageId", m.MessageID, i)
		}
		if len(it.Body) == 0 {
			// NewEnvelope writes every item's body (JSON); a missing one is a damaged row,
			// kept for repair rather than published as an empty message.
			return nil, fmt.Errorf("outbox envelope %s: item %s has no body", m.MessageID, it.MessageID)
		}
		out[i] = OutboxMessage{ID: m.ID, MessageID: it.MessageID, Destination: m.Destination, SessionID: it.SessionID,
			Body: []byte(it.Body), CreatedOn: m.CreatedOn, PublishedOn: m.PublishedOn, Attempts: m.Attempts, ClaimToken: m.ClaimToken}
	}
	return out, nil
}
