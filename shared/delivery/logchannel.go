package delivery

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"sync"

	"github.com/automation-platform/automation/shared/automation"
)

// LogChannel is the local "log" channel: it writes one JSON line per message to W (the
// Message itself, or what Line returns). Its provider reference is the delivery key. A
// line cannot be taken back, so it is not idempotent; it needs no template (it writes the
// payload, and the rendered content when the template exists).
type LogChannel struct {
	mu sync.Mutex
	W  io.Writer
	// Line, when set, chooses what is written for m (e.g. the replay's delivery line).
	Line func(m Message) any
}

var _ Channel = (*LogChannel)(nil)

// Traits implements Channel: the log line names no attachment content, but accepts them
// (so local runs show deliveries that carry files).
// Every template kind is accepted: the line shows what was rendered.
func (c *LogChannel) Traits() Traits { return Traits{Attachments: true, TemplateKinds: Kinds} }

// ValidateRecipient implements Channel: any non-empty recipient.
func (c *LogChannel) ValidateRecipient(addr string) error {
	if addr == "" {
		return errors.New("empty recipient")
	}
	return nil
}

// Send writes m as a JSON line. An invalid recipient is a permanent failure, as on every
// channel (the dispatcher checks it first; this is the channel's own guard).
func (c *LogChannel) Send(_ context.Context, m Message) (string, error) {
	if err := c.ValidateRecipient(m.Recipient); err != nil {
		return "", automation.Permanent(err)
	}
	var v any = m
	if c.Line != nil {
		v = c.Line(m)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return "", automation.Permanent(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.W.Write(append(b, '\n')); err != nil {
		return "", err
	}
	return m.DeliveryKey, nil
}
