package delivery

import (
	"context"
	"encoding/json"
	"io"
	"sync"
)

// LogChannel is the local "log" channel: it writes one JSON line per message to W. Its
// provider reference is the delivery key.
type LogChannel struct {
	mu sync.Mutex
	W  io.Writer
}

var _ Channel = (*LogChannel)(nil)

// Send writes m as a JSON line.
func (c *LogChannel) Send(_ context.Context, m Message) (string, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.W.Write(append(b, '\n')); err != nil {
		return "", err
	}
	return m.DeliveryKey, nil
}

// FuncChannel adapts a function to Channel (the replay output uses it).
type FuncChannel func(ctx context.Context, m Message) (string, error)

// Send calls f.
func (f FuncChannel) Send(ctx context.Context, m Message) (string, error) { return f(ctx, m) }
